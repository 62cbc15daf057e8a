// SPDX-License-Identifier: GPL-2.0
/*
 * What the cost modes count exactly in their windows, from the hardware's own
 * state rather than from timing:
 *
 *   the remapping unit's invalidation queue: with vtd_base (the unit's
 *   register base, which /init takes from
 *   /sys/class/iommu/dmar0/intel-iommu/address) dlx_queue_read() reads the
 *   queue's head register (IQH: how far the unit has processed the queue) and
 *   counts the descriptors processed since the last reading by type, from the
 *   queue's memory (IQA says where): invalidation waits (type 5), IOTLB
 *   invalidations (type 2, and type 6, the PASID-based ones a unit in
 *   scalable mode is sent for first-stage tables), and all of them.  Between
 *   two readings fewer descriptors than the queue holds must pass (the
 *   callers read often enough for that, each says how); the counts then are
 *   exact.  The unit is whichever VT-d unit the guest has: dmalab-vtd or
 *   QEMU's intel-iommu read the same.
 *
 * A device's interrupts are not counted here: Debian's kernels export none
 * of the kernel's interrupt counts to modules (kstat_irqs_cpu and
 * kstat_irqs_usr are not in their Module.symvers); /init reads
 * /proc/interrupts around the windows it runs itself.
 */

#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>

#include "exercise.h"

unsigned long vtd_base;
module_param(vtd_base, ulong, 0444);
MODULE_PARM_DESC(vtd_base, "physical address of the remapping unit's registers (0: none)");

#define DLX_IQH	0x80
#define DLX_IQA	0x90

bool dlx_queue_open(struct dlx_queue *q)
{
	u64 iqa;

	memset(q, 0, sizeof(*q));
	if (!vtd_base)
		return false;
	q->regs = ioremap(vtd_base, PAGE_SIZE);
	if (!q->regs)
		return false;
	iqa = lo_hi_readq(q->regs + DLX_IQA);
	/* IQA.DW (bit 11): 256-bit descriptors; QS (bits 2:0): 2^QS pages */
	q->words = iqa & BIT(11) ? 4 : 2;
	q->shift = iqa & BIT(11) ? 5 : 4;
	q->entries = (PAGE_SIZE << (iqa & 7)) / (q->words * 8);
	q->desc = phys_to_virt(iqa & ~0xfffULL);
	q->head = (readl(q->regs + DLX_IQH) >> q->shift) % q->entries;
	return true;
}

void dlx_queue_read(struct dlx_queue *q)
{
	unsigned int now;

	if (!q->regs)
		return;
	now = (readl(q->regs + DLX_IQH) >> q->shift) % q->entries;
	for (; q->head != now; q->head = (q->head + 1) % q->entries) {
		u64 lo = READ_ONCE(q->desc[q->head * q->words]);
		unsigned int type = (lo & 0xf) | ((lo >> 5) & 0x70);

		q->descs++;
		q->waits += type == 5;
		q->iotlb += type == 2 || type == 6;
	}
}

void dlx_queue_close(struct dlx_queue *q)
{
	if (q->regs)
		iounmap(q->regs);
	q->regs = NULL;
}
