// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=stale: a copy into a buffer just unmapped (use after
 * unmap), behind an IOMMU.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/jiffies.h>
#include <linux/wait.h>

#include "exercise.h"
#include "races.h"

static bool stale_arm;
module_param(stale_arm, bool, 0444);
MODULE_PARM_DESC(stale_arm,
		 "stale: arm the fault plan's rule fault_rule through dmalab-ioat's fault doorbell just before the unmap (with ats=on: a device-TLB that ignores the unmap's invalidation)");

/*
 * Use after unmap, a driver bug made on purpose: a copy into a buffer whose
 * DMA mapping was just removed.  The first copy leaves the buffer's
 * translation in the IOMMU's IOTLB.  Under strict flushing (iommu.strict=1)
 * the unmap's IOTLB invalidation has completed before dma_unmap_single()
 * returns, so the second copy faults at the IOMMU and the channel reports a
 * write error; under lazy flushing the invalidation is deferred and the copy
 * lands in the page through the stale IOTLB entry (dmalab-vtd's audit counts
 * it).  stale_expect says which the scenario boots into.
 *
 * With ATS (dmalab-ioat ats=on behind a unit with device-TLBs) the first copy
 * also leaves the translation in the device's own TLB, and strict flushing
 * invalidates that too before the unmap returns.  stale_arm arms a fault-plan
 * rule that makes the device ignore that one invalidation: the copy then
 * lands through its device-TLB, and ats-audit=on counts the stale hit.
 */
/*
 * The first copy, which leaves dst's translation in the IOTLB, then the driver
 * bug: dst's mapping removed, and a copy into it all the same.  *first says
 * whether the first copy was right; true when the second did what
 * stale_expect says (the caller unmaps src).
 */
static bool dlx_stale_copy(struct dlx_chan *c, dma_addr_t src_dma, dma_addr_t dst_dma,
			   bool *first)
{
	struct device *dev = c->chan->device->dev;
	struct dlx_bell bell = { };
	bool came, started, landed;

	if (stale_arm && !dlx_bell_open(c, &bell))
		return false;

	/*
	 * From the first copy to the start of the second, softirqs are off:
	 * the lazy flush queue's timer (a timer_list, run from the timer
	 * softirq) cannot flush the IOTLB between the first copy's
	 * translation and the second's, however long the host keeps this
	 * vCPU from running and wherever that timer stands (the exerciser's
	 * probe unmapped a page, and its 10 ms may still run), and on the
	 * one-CPU guest the scenarios boot nothing else can.  The first copy
	 * is polled, not waited for; dmalab-ioat translates the second inside
	 * the doorbell write (sync-start), so before softirqs are on again.
	 * Whether the entry survives is then this program's order, not the
	 * time anything took.
	 */
	local_bh_disable();
	came = dlx_copy_poll(c, dst_dma, src_dma, PAGE_SIZE, c->tmo_ms);
	*first = came && c->result == DMA_TRANS_NOERROR && c->dst[0] == 0xa5 &&
		 c->dst[PAGE_SIZE - 1] == 0xa5;
	if (!came) {
		local_bh_enable();
		c->abandoned = true;	/* never free what a copy may still reach */
		dlx_bell_close(&bell);
		return false;
	}
	if (stale_arm)
		dlx_bell_arm(&bell);
	dma_unmap_single(dev, dst_dma, PAGE_SIZE, DMA_FROM_DEVICE);
	memset(c->dst, 0, PAGE_SIZE);
	memset(c->src, 0x5a, PAGE_SIZE);
	dma_sync_single_for_device(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
	started = dlx_start_copy(c, dst_dma, src_dma, PAGE_SIZE);
	local_bh_enable();
	if (stale_arm) {
		pr_info("# %s: stale: rule %u injected %llu time(s) by the unmap\n",
			DLX_NAME, fault_rule, dlx_bell_injected(&bell));
		dlx_bell_close(&bell);
	}
	came = started && dlx_wait(c, c->tmo_ms);
	landed = c->dst[0] == 0x5a && c->dst[PAGE_SIZE - 1] == 0x5a;
	pr_info("# %s: stale: copy into unmapped %pad: %s, result %s, data %s\n",
		DLX_NAME, &dst_dma, came ? "called back" : "no callback",
		dlx_result_name(c->result),
		landed ? "landed in the page" : "not in the page");
	if (!came)
		c->abandoned = true;	/* never free what a copy may still reach */
	if (!strcmp(stale_expect, "lands"))
		return came && c->result == DMA_TRANS_NOERROR && landed;
	return came && c->result == DMA_TRANS_WRITE_FAILED && !landed;
}

void dlx_mode_stale(unsigned int n)
{
	static const char *const tests[] = {
		"copy-while-mapped", "copy-after-unmap", "copies-after"
	};
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	dma_addr_t src_dma, dst_dma;
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0);
	bool came, ok;

	dlx_ktap_plan(3);
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		dlx_ktap_not_ok_to(tests, 3, "no buffers");
		c->failures++;
		goto out;
	}
	memset(c->src, 0xa5, PAGE_SIZE);
	memset(c->dst, 0, PAGE_SIZE);
	if (!dlx_map_pair(c, PAGE_SIZE, &src_dma, &dst_dma)) {
		dlx_ktap_not_ok_to(tests, 3, "mapping failed");
		c->failures++;
		dlx_free_buffers(c);
		goto out;
	}

	came = false;
	ok = dlx_stale_copy(c, src_dma, dst_dma, &came);
	if (!came)
		c->failures++;
	dlx_ktap_result(came, "%s", tests[0]);
	if (!ok)
		c->failures++;
	dlx_ktap_result(ok, "%s # expected: %s", tests[1], stale_expect);
	dma_unmap_single(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
	/*
	 * The channel carries on (after ioatdma's error path under strict
	 * flushing); this also lets the driver retire the null descriptor its
	 * restart queued before the channel is released.  The copies wait for
	 * that error path to end (dlx_settle).
	 */
	ok = !c->abandoned && dlx_settle(c) && dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "%s", tests[2]);
	if (!c->abandoned)
		dlx_free_buffers(c);
out:
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}
