// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=recover: ioatdma's error path (a copy from unassigned bus space) and its
 * completion-timeout recovery (a channel suspended behind its back).
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

static unsigned int recover_ops = 20;
module_param(recover_ops, uint, 0444);
MODULE_PARM_DESC(recover_ops, "recover: verified copies in each of its copy phases (default 20)");

static unsigned int fast_timeout_ms = 150;
module_param(fast_timeout_ms, uint, 0444);
MODULE_PARM_DESC(fast_timeout_ms,
		 "recover: per-copy timeout after the error and the reset; must stay below ioatdma's completion_timeout (default 150)");

/* ---- mode=recover ---------------------------------------------------- */

/*
 * Unassigned bus space: no RAM, no BAR and (the scenario boots without an
 * IOMMU) no translation there, so reading it fails.
 */
#define DLX_BAD_DMA_ADDR	BIT_ULL(46)
#define DLX_ERR_LEN		4096
#define DLX_STALL_LEN		(64 * 1024)
#define DLX_RESET_WAIT_MS	5000

/*
 * Error path: a copy from unassigned bus space.  The channel halts with
 * CHANERR READ_DATA_ERR and raises its error interrupt; ioatdma's cleanup
 * (ioat_eh in drivers/dma/ioat/dma.c) completes the descriptor with
 * DMA_TRANS_READ_FAILED, resets the channel and restarts it.
 */
static bool dlx_read_error(struct dlx_chan *c)
{
	struct dma_chan *chan = c->chan;
	struct device *dev = chan->device->dev;
	const char *why;
	dma_addr_t dst_dma;
	dma_cookie_t cookie;
	unsigned long left;
	bool ok = false;
	long bad;
	u64 t0;

	memset(c->dst, DLX_POISON, c->buf_len);
	dst_dma = dma_map_single(dev, c->dst + DLX_GUARD, DLX_ERR_LEN,
				 DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dst_dma)) {
		pr_info("# %s: read-error: mapping dst failed\n", DLX_NAME);
		return false;
	}
	t0 = ktime_get_ns();
	cookie = dlx_submit_copy(c, dst_dma, DLX_BAD_DMA_ADDR, DLX_ERR_LEN, &why);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: read-error: %s (%d)\n", DLX_NAME, why, cookie);
		goto unmap;
	}
	left = wait_for_completion_timeout(&c->done,
					   msecs_to_jiffies(timeout_ms));
	if (!left) {
		/*
		 * ioatdma's timer finds the channel halted and reboots it
		 * without calling the failed descriptor back.  The device
		 * stopped at the read error: unmapping dst is safe.
		 */
		pr_info("# %s: read-error: copy from %#llx: no callback within %u ms\n",
			DLX_NAME, DLX_BAD_DMA_ADDR, timeout_ms);
		goto unmap;
	}
	pr_info("# %s: read-error: copy from %#llx: callback after %llu us, result %s\n",
		DLX_NAME, DLX_BAD_DMA_ADDR, div_u64(ktime_get_ns() - t0, 1000),
		dlx_result_name(c->result));
	ok = c->result == DMA_TRANS_READ_FAILED;
	if (!ok)
		pr_info("# %s: read-error: expected result read-failed\n",
			DLX_NAME);
unmap:
	dma_unmap_single(dev, dst_dma, DLX_ERR_LEN, DMA_FROM_DEVICE);
	/* nothing could be read, so nothing may have been written */
	bad = dlx_find_unpoisoned(c->dst, 0, c->buf_len);
	if (bad >= 0) {
		pr_info("# %s: read-error: destination written at offset %ld (0x%02x) although the source was unreadable\n",
			DLX_NAME, bad - DLX_GUARD, c->dst[bad]);
		memset(c->dst, DLX_POISON, c->buf_len);
		ok = false;
	}
	return ok;
}

/*
 * Waits for ioatdma's timer to reset the suspended channel (CHANSTS leaves
 * SUSPENDED) and checks that its recovery ran.  A channel still suspended
 * after DLX_RESET_WAIT_MS is abandoned.
 */
static bool dlx_stall_recovered(struct dlx_chan *c, void __iomem *regs, u64 sts, u64 t0,
				u64 chainaddr)
{
	unsigned long end = jiffies + msecs_to_jiffies(DLX_RESET_WAIT_MS);
	u64 chainaddr_after;
	bool ok = true;

	while ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED &&
	       time_before(jiffies, end)) {
		usleep_range(10000, 20000);
		sts = readq(regs + DLX_IOAT_CHANSTS);
	}
	if ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED) {
		pr_info("# %s: timeout-recovery: still SUSPENDED after %u ms: ioatdma did not reset the channel\n",
			DLX_NAME, DLX_RESET_WAIT_MS);
		c->abandoned = true;
		return false;
	}
	/*
	 * ioat_reboot_chan() resets the channel (CHANSTS leaves SUSPENDED) and
	 * then restarts it, writing CHAINADDR: wait for that write, not for a
	 * time.
	 */
	do {
		chainaddr_after = readq(regs + DLX_IOAT_CHAINADDR);
		if (chainaddr_after != chainaddr)
			break;
		usleep_range(1000, 2000);
	} while (time_before(jiffies, end));
	pr_info("# %s: %s: left SUSPENDED after %llu ms, CHANSTS %#llx, CHAINADDR %#llx -> %#llx; stalled copy %s\n",
		DLX_NAME, c->name, div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC),
		sts, chainaddr, chainaddr_after,
		completion_done(&c->done) ? dlx_result_name(c->result) :
					    "not called back");
	if (completion_done(&c->done)) {
		pr_info("# %s: timeout-recovery: the stalled copy was called back: the channel finished it, ioatdma did not reset it\n",
			DLX_NAME);
		ok = false;
	}
	if (chainaddr_after == chainaddr) {
		pr_info("# %s: timeout-recovery: CHAINADDR unchanged: ioatdma did not restart the channel\n",
			DLX_NAME);
		ok = false;
	}
	return ok;
}

/*
 * Timeout recovery: a copy stalls behind the driver's back.  The device is
 * booted with a latency (latency-ns), so the copy is still in flight when
 * its channel is suspended right after the submission.  CHANSTS then stays
 * SUSPENDED and the completion never comes; ioatdma's timer
 * (ioat_timer_event) sees no progress twice and resets and restarts the
 * channel ("Reset channel...").  Its ring moves past the stalled
 * descriptor without calling it back (ioat_abort_descs skips the one the
 * channel stopped at), so no callback is required.
 *
 * CHANSTS leaving SUSPENDED is not enough: a device that went on with the
 * copy by itself would leave it too.  The recovery must be seen to have run:
 * the stalled copy is never called back, and CHAINADDR has been rewritten
 * (__ioat_restart_chan points it at the ring's tail after the reset; the
 * engine itself never writes it).  The runner also requires ioatdma's
 * "Reset channel..." line.
 */
static bool dlx_stall(struct dlx_chan *c, void __iomem *regs)
{
	struct dma_chan *chan = c->chan;
	struct device *dev = chan->device->dev;
	const char *why;
	dma_addr_t src_dma, dst_dma;
	dma_cookie_t cookie;
	u64 sts, t0, chainaddr;
	bool ok = false;

	chainaddr = readq(regs + DLX_IOAT_CHAINADDR);
	src_dma = dma_map_single(dev, c->src, DLX_STALL_LEN, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, src_dma)) {
		pr_info("# %s: timeout-recovery: mapping src failed\n", DLX_NAME);
		return false;
	}
	dst_dma = dma_map_single(dev, c->dst, DLX_STALL_LEN, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dst_dma)) {
		dma_unmap_single(dev, src_dma, DLX_STALL_LEN, DMA_TO_DEVICE);
		pr_info("# %s: timeout-recovery: mapping dst failed\n", DLX_NAME);
		return false;
	}
	cookie = dlx_submit_copy(c, dst_dma, src_dma, DLX_STALL_LEN, &why);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: timeout-recovery: %s (%d)\n", DLX_NAME, why,
			cookie);
		goto unmap;
	}
	writeb(DLX_IOAT_CHANCMD_SUSPEND, regs + DLX_IOAT_CHANCMD);
	sts = readq(regs + DLX_IOAT_CHANSTS);
	t0 = ktime_get_ns();
	pr_info("# %s: %s: suspended with a %u byte copy in flight, CHANSTS %#llx\n",
		DLX_NAME, c->name, DLX_STALL_LEN, sts);
	if ((sts & DLX_IOAT_CHANSTS_STATE) != DLX_IOAT_CHANSTS_SUSPENDED) {
		pr_info("# %s: timeout-recovery: CHANSTS is not SUSPENDED\n",
			DLX_NAME);
		c->abandoned = true;
		return false;
	}
	if (completion_done(&c->done)) {
		/* done, but the channel is left suspended: use it no more */
		pr_info("# %s: timeout-recovery: the copy completed before the suspend (is latency-ns set?)\n",
			DLX_NAME);
		c->abandoned = true;
		goto unmap;
	}

	ok = dlx_stall_recovered(c, regs, sts, t0, chainaddr);
	if (c->abandoned)
		return false;	/* the copy may go on one day: leak its buffers */
unmap:
	/*
	 * The channel reset dropped the stalled descriptor in the engine and
	 * the driver's ring has moved past it: nothing will touch the buffers
	 * any more (in the failure above, the copy had completed).
	 */
	dma_unmap_single(dev, dst_dma, DLX_STALL_LEN, DMA_FROM_DEVICE);
	dma_unmap_single(dev, src_dma, DLX_STALL_LEN, DMA_TO_DEVICE);
	memset(c->dst, DLX_POISON, c->buf_len);
	return ok;
}

void dlx_mode_recover(unsigned int n)
{
	static const char *const tests[] = {
		"copies-before", "read-error", "copies-after-error",
		"timeout-recovery", "copies-after-reset"
	};
	struct dlx_chan *c = &dlx_chans[0];
	void __iomem *bar = NULL, *regs;
	u64 rng = dlx_chan_rng(0), start = ktime_get_ns();
	bool ok;

	dlx_ktap_plan(5);
	pr_info("# %s: recover on %s, %u copies per phase, %u ms per copy after the error and the reset\n",
		DLX_NAME, c->name, recover_ops, fast_timeout_ms);
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		pr_info("# %s: %s: cannot allocate 2 x %zu byte buffers\n",
			DLX_NAME, c->name, (size_t)PAGE_SIZE << c->order);
		c->failures++;
		dlx_ktap_result(false, "%s", tests[0]);
		dlx_ktap_not_ok_to(tests, 5, "no buffers");
		goto out;
	}

	/* a: the channel works */
	ok = dlx_copies(c, recover_ops, &rng);
	dlx_ktap_result(ok, "%s", tests[0]);

	/* b: error path */
	ok = !c->abandoned && dlx_read_error(c);
	if (!ok)
		c->failures++;
	dlx_ktap_result(ok, "%s", tests[1]);

	/*
	 * c: the channel works again after ioat_eh's reset and restart.  Each
	 * copy must complete within fast_timeout_ms, less than ioatdma's
	 * completion_timeout (200 ms): a completion that only arrives through
	 * the driver's timer-driven cleanup, because the channel does not
	 * interrupt any more, fails the copy.  They start once ioat_eh has
	 * restarted the channel (dlx_settle): it calls the failed copy back
	 * before it aborts what is queued.
	 */
	ok = !c->abandoned && dlx_settle(c);
	c->tmo_ms = fast_timeout_ms;
	ok = ok && dlx_copies(c, recover_ops, &rng);
	dlx_ktap_result(ok, "%s", tests[2]);

	/* d: timeout recovery */
	ok = false;
	if (!c->abandoned) {
		regs = dlx_ioat_map(c, &bar);
		ok = regs && dlx_stall(c, regs);
		if (bar)
			pci_iounmap(to_pci_dev(c->chan->device->dev), bar);
	}
	if (!ok)
		c->failures++;
	dlx_ktap_result(ok, "%s", tests[3]);

	/*
	 * e: after the timeout recovery the channel still completes copies
	 * by interrupt (the driver does not re-arm the channel's interrupt
	 * before the next completion), same fast_timeout_ms as in c.
	 */
	if (c->abandoned) {
		dlx_ktap_not_ok_to(tests, 5, "channel abandoned");
	} else {
		ok = dlx_copies(c, recover_ops, &rng);
		dlx_ktap_result(ok, "%s", tests[4]);
	}
	dlx_free_buffers(c);
out:
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}
