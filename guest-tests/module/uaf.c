// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=uaf: use after unmap, made deterministic by a fault plan
 * (races.c describes the scenarios).
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "exercise.h"
#include "race_uapi.h"
#include "races.h"

/* ---- mode=uaf -------------------------------------------------------- */

/*
 * The bug, with softirqs off (the caller's): the delayed copy (the plan holds
 * it) into d, whose mapping is removed and whose page gets a new owner before
 * the copy moves.  False when the copy could not start; *released says whether
 * the release ended its hold.
 */
static bool dlx_uaf_start(struct dlx_chan *c, struct dlx_bell *bell, dma_addr_t s,
			  dma_addr_t d, bool *released)
{
	struct device *dev = c->chan->device->dev;
	u64 before;

	dlx_fill(c->src, DLX_UAF_LEN, 0, DLX_UAF_LEN, 99);
	dma_sync_single_for_device(dev, s, DLX_UAF_LEN, DMA_TO_DEVICE);
	before = dlx_bell_injected(bell);
	dlx_bell_arm(bell);
	if (!dlx_start_copy(c, d, s, DLX_UAF_LEN)) {
		dma_unmap_single(dev, d, DLX_UAF_LEN, DMA_FROM_DEVICE);
		return false;
	}
	if (!dlx_bell_taken(bell, before, 1000))
		pr_info("# %s: uaf: the device had not taken the copy after 1 s\n", DLX_NAME);
	/* With dmalab-ioat's sync-start the copy moves inside the release. */
	dma_unmap_single(dev, d, DLX_UAF_LEN, DMA_FROM_DEVICE);
	memset(c->dst, DLX_NEW_OWNER, DLX_UAF_LEN);
	*released = dlx_bell_release(bell);
	return true;
}

/* The delayed copy's end, once softirqs are on: reports the test, name. */
static void dlx_uaf_finish(struct dlx_chan *c, struct dlx_bell *bell, u64 hits,
			   bool released, const char *name)
{
	bool lands = !strcmp(stale_expect, "lands");
	bool came, ok, intact, corrupted;

	came = dlx_wait(c, c->tmo_ms);
	hits = dlx_bell_injected(bell) - hits;
	intact = !memchr_inv(c->dst, DLX_NEW_OWNER, DLX_UAF_LEN);
	corrupted = !memcmp(c->dst, c->src, DLX_UAF_LEN);
	pr_info("# %s: uaf: copy %s, result %s; the reused page is %s; %llu fault(s) injected, the copy %s after the reuse\n",
		DLX_NAME, came ? "called back" : "never called back",
		dlx_result_name(c->result),
		intact ? "intact" : corrupted ? "overwritten by the stale DMA" :
		"partly overwritten", hits,
		released ? "released" : "NOT ended by the release (the plan needs \"until\": \"release\", and the copy must still be held)");
	if (!came)
		c->abandoned = true;
	if (lands)
		ok = came && c->result == DMA_TRANS_NOERROR && corrupted;
	else
		ok = came && c->result == DMA_TRANS_WRITE_FAILED && intact;
	ok = ok && hits == 1 && released;
	dlx_ktap_result(ok, "%s # expected: %s", name, stale_expect);
}

void dlx_mode_uaf(unsigned int n)
{
	static const char *const tests[] = {
		"copy-while-mapped", "delayed-copy-after-unmap", "copies-after"
	};
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	struct dlx_bell bell = { };
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0);
	dma_addr_t s, d;
	bool came, ok, started, released = false;
	u64 hits;

	dlx_ktap_plan(3);
	if (!dlx_race_setup(&c, 1, tests, 3))
		goto out;
	if (!dlx_bell_open(c, &bell)) {
		dlx_ktap_not_ok_to(tests, 3, "no fault doorbell");
		goto free;
	}
	dlx_fill(c->src, DLX_UAF_LEN, 0, DLX_UAF_LEN, 11);
	memset(c->dst, 0, DLX_UAF_LEN);
	if (!dlx_map_pair(c, DLX_UAF_LEN, &s, &d)) {
		dlx_ktap_not_ok_to(tests, 3, "mapping failed");
		goto close;
	}
	/*
	 * A first copy leaves the destination's translation in the IOTLB.
	 * From it to the release softirqs are off: the lazy flush queue's
	 * timer (10 ms, a timer_list run from the timer softirq, perhaps
	 * pending since the exerciser's probe unmapped a page) cannot flush
	 * the IOTLB before the held copy moves, however long the host keeps
	 * this vCPU from running, and on the one-CPU guest the scenarios boot
	 * no other CPU can run it either (race-uaf-lazy-6.12 on two CPUs once
	 * lost its stale entry to a flush; a flush between the first copy and
	 * a later interrupts-off section could take it too).  The first copy
	 * is polled, not waited for.
	 */
	hits = dlx_bell_injected(&bell);
	local_bh_disable();
	came = dlx_copy_poll(c, d, s, DLX_UAF_LEN, c->tmo_ms);
	ok = came && c->result == DMA_TRANS_NOERROR &&
	     !memcmp(c->dst, c->src, DLX_UAF_LEN);
	started = came && dlx_uaf_start(c, &bell, s, d, &released);
	local_bh_enable();
	dlx_ktap_result(ok, "%s", tests[0]);
	if (!came) {
		c->abandoned = true;
		dlx_ktap_not_ok_to(tests, 3, "no callback, channel abandoned");
		goto close;
	}
	if (started)
		dlx_uaf_finish(c, &bell, hits, released, tests[1]);
	else
		dlx_ktap_result(false, "%s # cannot start the copy", tests[1]);
	if (!c->abandoned)
		dma_unmap_single(dev, s, DLX_UAF_LEN, DMA_TO_DEVICE);
	/* As in mode=stale: after ioat_eh's restart (dlx_settle). */
	ok = !c->abandoned && dlx_settle(c) && dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "%s", tests[2]);
close:
	dlx_bell_close(&bell);
free:
	dlx_free_buffers(c);
out:
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}
