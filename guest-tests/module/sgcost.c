// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=copycost's last windows: where an IOMMU's unmaps can
 * share one invalidation.  copycost_sg_pages pages, each allocated on its
 * own, are mapped and unmapped copycost_sg_count times on the DMA engine's
 * device, two ways:
 *
 *   sg     one dma_map_sg() of a scatterlist of the pages, one dma_unmap_sg():
 *          behind an IOMMU the pages get one IOVA range, unmapped at once;
 *   pages  one dma_map_page() and one dma_unmap_page() per page.
 *
 * No DMA runs.  What the IOMMU did meanwhile is read from the unit itself:
 * with vtd_base (the remapping unit's register base, which /init takes from
 * /sys/class/iommu/dmar0/intel-iommu/address) the module reads the
 * invalidation queue's head register (IQH, how far the unit has processed the
 * queue) after every map and unmap, and counts the descriptors the unit
 * processed since the last reading by type, from the queue's memory (IQA says
 * where): invalidation waits (type 5), IOTLB invalidations (type 2, and type 6,
 * the PASID-based ones a unit in scalable mode is sent for first-stage tables),
 * the rest.
 * Between two readings fewer descriptors than the queue holds must pass (a
 * strict unmap submits two, a lazy flush two); the counts then are exact.
 * One "# bench-sg way=... pages=... unmaps=... busy_ns_per_unmap=...
 * descs=... waits=... iotlb_invs=... waits_per_kunmap=... cpus=..." line per
 * way: unmaps are dma_unmap_sg() calls (sg) or dma_unmap_page() calls
 * (pages), busy_ns_per_unmap the window's CPU time per unmap with its map,
 * waits_per_kunmap the waits per 1,000 unmaps.  Without vtd_base (no IOMMU)
 * the counts are 0 and descs=-1.
 */

#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "exercise.h"

static unsigned int copycost_sg_count = 200;
module_param(copycost_sg_count, uint, 0444);
MODULE_PARM_DESC(copycost_sg_count,
		 "copycost: maps and unmaps per scatter-gather way (0: none; default 200)");

static unsigned int copycost_sg_pages = 16;
module_param(copycost_sg_pages, uint, 0444);
MODULE_PARM_DESC(copycost_sg_pages, "copycost: pages per scatterlist (default 16)");

unsigned long vtd_base;
module_param(vtd_base, ulong, 0444);
MODULE_PARM_DESC(vtd_base, "physical address of the remapping unit's registers (0: none)");

unsigned int dlx_sgcost_windows;

#define DLX_IQH	0x80
#define DLX_IQA	0x90

struct dlx_queue {
	void __iomem *regs;
	const u64 *desc;	/* the queue, in the kernel's direct map */
	unsigned int entries, shift, words;	/* shift: IQH's index shift */
	unsigned int head;
	u64 descs, waits, iotlb;
};

static bool dlx_queue_open(struct dlx_queue *q)
{
	u64 iqa;

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

/* Counts the descriptors the unit processed since the last call, by type. */
static void dlx_queue_read(struct dlx_queue *q)
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

/* One way's window: copycost_sg_count maps and unmaps of the pages. */
static bool dlx_sg_window(struct dlx_chan *c, struct page **pages, bool sg)
{
	struct device *dev = c->chan->device->dev;
	unsigned int n = copycost_sg_pages, i, k, unmaps = 0;
	struct dlx_queue q = { };
	struct sg_table st;
	dma_addr_t *dma;
	u64 idle0, idle1, t0, wall_us, busy_us;
	bool ok = true, have_q;

	dma = kcalloc(n, sizeof(*dma), GFP_KERNEL);
	if (!dma || sg_alloc_table(&st, n, GFP_KERNEL)) {
		kfree(dma);
		return false;
	}
	have_q = dlx_queue_open(&q);
	dlx_profile_mark(true, DLX_PROF_ID(sg ? DLX_PROF_SG : DLX_PROF_SGPAGES, n));
	dlx_sgcost_windows++;
	idle0 = dlx_idle_us(false);
	t0 = ktime_get_ns();
	for (k = 0; ok && k < copycost_sg_count; k++) {
		if (sg) {
			struct scatterlist *s;

			for_each_sg(st.sgl, s, n, i)
				sg_set_page(s, pages[i], PAGE_SIZE, 0);
			ok = dma_map_sg(dev, st.sgl, n, DMA_TO_DEVICE) > 0;
			dlx_queue_read(&q);
			if (!ok)
				break;
			dma_unmap_sg(dev, st.sgl, n, DMA_TO_DEVICE);
			dlx_queue_read(&q);
			unmaps++;
			continue;
		}
		for (i = 0; i < n; i++) {
			dma[i] = dma_map_page(dev, pages[i], 0, PAGE_SIZE, DMA_TO_DEVICE);
			dlx_queue_read(&q);
			if (dma_mapping_error(dev, dma[i])) {
				ok = false;
				break;
			}
		}
		while (i--) {
			dma_unmap_page(dev, dma[i], PAGE_SIZE, DMA_TO_DEVICE);
			dlx_queue_read(&q);
			unmaps++;
		}
	}
	wall_us = div_u64(ktime_get_ns() - t0, NSEC_PER_USEC) * num_online_cpus();
	idle1 = dlx_idle_us(false);
	dlx_profile_mark(false, unmaps);
	busy_us = idle0 == U64_MAX || idle1 == U64_MAX ? 0 :
		  wall_us - min(idle1 - idle0, wall_us);
	pr_info("# bench-sg way=%s pages=%u unmaps=%u busy_ns_per_unmap=%llu descs=%lld waits=%llu iotlb_invs=%llu waits_per_kunmap=%llu cpus=%u\n",
		sg ? "sg" : "pages", n, unmaps, div64_u64(busy_us * 1000, max(unmaps, 1U)),
		have_q ? (s64)q.descs : -1LL, q.waits, q.iotlb,
		div64_u64(q.waits * 1000, max(unmaps, 1U)), num_online_cpus());
	if (q.regs)
		iounmap(q.regs);
	sg_free_table(&st);
	kfree(dma);
	return ok && unmaps;
}

/* The two ways, sg then pages; true when both ran (or none was asked for). */
bool dlx_sgcost(struct dlx_chan *c)
{
	unsigned int n = copycost_sg_pages, i;
	struct page **pages;
	bool ok;

	if (!copycost_sg_count)
		return true;
	if (!n || n > 256)
		return false;
	pages = kcalloc(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return false;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			break;
	}
	ok = i == n && dlx_sg_window(c, pages, true) && dlx_sg_window(c, pages, false);
	while (i--)
		__free_page(pages[i]);
	kfree(pages);
	return ok;
}
