// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=irfault: a bad interrupt remapping table entry behind
 * an IOMMU that remaps interrupts (dmalab-vtd,intremap=on).
 *
 * The module finds the entry (IRTE) that channel 0's MSI-X message names: the
 * message Linux wrote is in remappable format, its handle (and subhandle with
 * SHV) is the entry's index in the table IRTA points to (VT-d 5.1.2.2), and
 * vtd_base gives the unit's registers.  It has Linux rewrite that entry and
 * invalidate its interrupt entry cache slot by moving the interrupt to another
 * CPU (intel_ir_set_affinity -> modify_irte -> qi_flush_iec in
 * drivers/iommu/intel/irq_remapping.c), then sets a reserved bit of the entry
 * (bit 12 of the low qword) before the next interrupt reads it.  The next
 * copy's completion interrupt is blocked by the unit (fault reason 24h,
 * recorded, Linux logs it); the copy itself completes and ioatdma's timer
 * finds it (ioat_timer_event, "the missed cleanup case").  Moving the
 * interrupt back makes Linux rewrite the entry whole and flush it again; the
 * channel's interrupt, disarmed by the message the unit blocked and never
 * re-armed by the timer path, is re-armed as ioatdma's interrupt path does
 * (CHANCTRL), and copies complete by interrupt again.
 *
 * Result 3 says only that the copy completed, data right, with the entry bad;
 * that its interrupt was blocked is for the runner to check (the unit's
 * ir-faults counter and Linux's fault line): a module cannot read an irq's
 * count (kstat_irqs_cpu is not exported).
 */

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/irq.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/string.h>

#include "exercise.h"
#include "races.h"

/* VT-d registers and fields (VT-d spec 10.4.29, 9.10, 5.1.2.2) */
#define DLX_VTD_IRTA		0xb8
#define DLX_IRTA_S(v)		((v) & 0xf)	/* 2^(S+1) entries */
#define DLX_IRTA_ADDR(v)	((v) & ~0xfffULL)
#define DLX_IRTE_P		BIT_ULL(0)
#define DLX_IRTE_RSVD12		BIT_ULL(12)	/* reserved in remapped format */
#define DLX_MSI_IF		BIT(4)		/* remappable format */
#define DLX_MSI_SHV		BIT(3)

#define DLX_IOAT_CHANCTRL	0x00		/* 16 bit */
#define DLX_IOAT_CHANCTRL_RUN	0x001d		/* IOAT_CHANCTRL_RUN: re-arm, errors on */

static const char *const dlx_irfault_tests[] = {
	"copies-before", "irte-found", "copy-with-bad-irte",
	"copies-after"
};

/* The index the remappable message (address, data) names; false if compatibility format. */
static bool dlx_irte_index(const struct msi_msg *msg, u32 *index)
{
	u32 a = msg->address_lo;

	if (!(a & DLX_MSI_IF))
		return false;
	*index = ((a >> 5) & 0x7fff) | ((a >> 2) & 1) << 15;
	if (a & DLX_MSI_SHV)
		*index += msg->data & 0xffff;
	return true;
}

/* Moves irq to a CPU outside its effective affinity; Linux rewrites and flushes its IRTE. */
static int dlx_irq_move(unsigned int irq, unsigned int *to)
{
	struct irq_data *d = irq_get_irq_data(irq);
	const struct cpumask *now = d ? irq_data_get_effective_affinity_mask(d) : NULL;
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		if (now && cpumask_test_cpu(cpu, now))
			continue;
		*to = cpu;
		return irq_set_affinity(irq, cpumask_of(cpu));
	}
	return -ENODEV;
}

/*
 * The entry of the interrupt remapping table that the channel's irq goes
 * through, found from IRTA and the irq's MSI message, and checked to be the
 * channel's (present, its source ID); reports irte-found.  NULL, with the
 * tests up to the last reported, when there is none.
 */
static u64 *dlx_find_irte(struct dlx_chan *c, void __iomem *vtd, unsigned int irq,
			  u32 *index)
{
	struct pci_dev *pdev = to_pci_dev(c->chan->device->dev);
	u64 irta = lo_hi_readq(vtd + DLX_VTD_IRTA), lo, hi, *irte;
	unsigned int entries = 2U << DLX_IRTA_S(irta);
	struct msi_msg msg;
	bool ok;

	get_cached_msi_msg(irq, &msg);
	if (!dlx_irte_index(&msg, index) || *index >= entries) {
		pr_info("# %s: irfault: irq %u message %#x:%#x data %#x, IRTA %#llx: no remappable entry\n",
			DLX_NAME, irq, msg.address_hi, msg.address_lo, msg.data, irta);
		dlx_ktap_not_ok_to(dlx_irfault_tests, 4, "the MSI-X message is not remappable");
		return NULL;
	}
	irte = (u64 *)phys_to_virt(DLX_IRTA_ADDR(irta)) + 2 * *index;
	lo = READ_ONCE(irte[0]);
	hi = READ_ONCE(irte[1]);
	ok = (lo & DLX_IRTE_P) && (hi & 0xffff) == pci_dev_id(pdev);
	pr_info("# %s: irfault: %s irq %u message %#x data %#x: IRTE %u of %u at %#llx, %#llx:%#llx (SID %04llx, vector %#llx)\n",
		DLX_NAME, c->name, irq, msg.address_lo, msg.data, *index, entries,
		DLX_IRTA_ADDR(irta), hi, lo, hi & 0xffff, (lo >> 16) & 0xff);
	dlx_ktap_result(ok, "irte-found");
	if (!ok) {
		dlx_ktap_not_ok_to(dlx_irfault_tests, 4, "not the channel's entry");
		return NULL;
	}
	return irte;
}

/*
 * A copy whose completion interrupt goes through the entry made bad (a
 * reserved bit set): it must complete all the same; reports
 * copy-with-bad-irte.  False, with the tests up to the last reported, when
 * the copy could not be mapped.
 */
static bool dlx_bad_irte_copy(struct dlx_chan *c, u64 *irte, u32 index, unsigned int cpu0,
			      unsigned int cpu1)
{
	struct device *dev = c->chan->device->dev;
	dma_addr_t src_dma, dst_dma;
	bool ok, came, right;
	u64 lo, t0, ms;

	lo = READ_ONCE(irte[0]);
	WRITE_ONCE(irte[0], lo | DLX_IRTE_RSVD12);
	wmb();	/* the entry is bad before the device reads it */

	dlx_fill(c->src, PAGE_SIZE, 0, PAGE_SIZE, 29);
	memset(c->dst, 0, PAGE_SIZE);
	src_dma = dma_map_single(dev, c->src, PAGE_SIZE, DMA_TO_DEVICE);
	dst_dma = dma_map_single(dev, c->dst, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, src_dma) || dma_mapping_error(dev, dst_dma)) {
		WRITE_ONCE(irte[0], lo);
		dlx_ktap_not_ok_to(dlx_irfault_tests, 4, "mapping failed");
		c->failures++;
		return false;
	}
	t0 = ktime_get_ns();
	came = dlx_copy_wait(c, dst_dma, src_dma, PAGE_SIZE);
	ms = div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC);
	dma_unmap_single(dev, dst_dma, PAGE_SIZE, DMA_FROM_DEVICE);
	dma_unmap_single(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
	right = !memcmp(c->dst, c->src, PAGE_SIZE);
	pr_info("# %s: irfault: IRTE %u set to %#llx (irq on CPU %u, was %u); copy %s after %llu ms, result %s, data %s\n",
		DLX_NAME, index, lo | DLX_IRTE_RSVD12, cpu1, cpu0,
		came ? "called back" : "not called back", ms,
		dlx_result_name(c->result), right ? "right" : "wrong");
	ok = came && c->result == DMA_TRANS_NOERROR && right;
	if (!came)
		c->abandoned = true;
	if (!ok)
		c->failures++;
	dlx_ktap_result(ok, "copy-with-bad-irte");
	return true;
}

void dlx_mode_irfault(unsigned int n)
{
	const char *const *tests = dlx_irfault_tests;
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	void __iomem *vtd = NULL, *bar = NULL, *regs;
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0);
	unsigned int irq, cpu0, cpu1;
	u64 *irte;
	u32 index;
	bool ok;
	int err;

	dlx_ktap_plan(4);
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	regs = dlx_ioat_map(c, &bar);
	if (!regs || !vtd_base || num_online_cpus() < 2 || dlx_alloc_buffers(c)) {
		dlx_ktap_not_ok_to(tests, 4,
				   "needs dmalab-ioat, vtd_base, two CPUs and buffers");
		c->failures++;
		goto out;
	}
	ok = dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "copies-before");

	irq = pci_irq_vector(to_pci_dev(dev), c->chan->chan_id);
	vtd = ioremap(vtd_base, PAGE_SIZE);
	if (!vtd || (int)irq < 0) {
		dlx_ktap_not_ok_to(tests, 4, "no unit registers or no MSI-X vector");
		c->failures++;
		goto out_free;
	}
	irte = dlx_find_irte(c, vtd, irq, &index);
	if (!irte) {
		c->failures++;
		goto out_free;
	}

	/* Linux rewrites the entry and flushes its cache slot; then it goes bad. */
	cpu0 = cpumask_first(irq_data_get_effective_affinity_mask(irq_get_irq_data(irq)));
	err = dlx_irq_move(irq, &cpu1);
	if (err) {
		pr_info("# %s: irfault: moving irq %u off CPU %u: error %d\n", DLX_NAME,
			irq, cpu0, err);
		dlx_ktap_not_ok_to(tests, 4, "irq_set_affinity failed");
		c->failures++;
		goto out_free;
	}
	if (!dlx_bad_irte_copy(c, irte, index, cpu0, cpu1))
		goto out_free;

	/* Linux writes its own entry back (and flushes); the channel is re-armed. */
	err = irq_set_affinity(irq, cpumask_of(cpu0));
	pr_info("# %s: irfault: irq %u back to CPU %u: %d, IRTE %#llx:%#llx\n",
		DLX_NAME, irq, cpu0, err, READ_ONCE(irte[1]), READ_ONCE(irte[0]));
	writew(DLX_IOAT_CHANCTRL_RUN, regs + DLX_IOAT_CHANCTRL);
	/*
	 * By interrupt: each within fast_ms, below ioatdma's completion
	 * timeout, whose timer would complete a copy without one.
	 */
	c->tmo_ms = fast_ms;
	ok = !err && !c->abandoned && !(READ_ONCE(irte[0]) & DLX_IRTE_RSVD12) &&
	     dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "copies-after");
out_free:
	if (!c->abandoned)
		dlx_free_buffers(c);
out:
	if (vtd)
		iounmap(vtd);
	if (bar)
		pci_iounmap(to_pci_dev(dev), bar);
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}
