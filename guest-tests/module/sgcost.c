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
 * No DMA runs.  What the IOMMU did meanwhile is read from the unit itself
 * (counts.c: its invalidation queue, by descriptor type) after every map and
 * unmap: between two readings fewer descriptors than the queue holds pass (a
 * strict unmap submits two, a lazy flush two), so the counts are exact.
 * One "# bench-sg way=... pages=... unmaps=... busy_ns_per_unmap=...
 * descs=... waits=... iotlb_invs=... waits_per_kunmap=... cpus=..." line per
 * way: unmaps are dma_unmap_sg() calls (sg) or dma_unmap_page() calls
 * (pages), busy_ns_per_unmap the window's CPU time per unmap with its map,
 * waits_per_kunmap the waits per 1,000 unmaps.  Without vtd_base (no IOMMU)
 * the counts are 0 and descs=-1.
 */

#include <linux/dma-mapping.h>
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

unsigned int dlx_sgcost_windows;

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
	dlx_queue_close(&q);
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
