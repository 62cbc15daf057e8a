// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=inflight-reset: copies in flight on every channel when the machine resets.
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

static char *reset_by = "cf9";
module_param(reset_by, charp, 0444);
MODULE_PARM_DESC(reset_by, "inflight-reset: cf9 (the guest resets) or host (ask the host to)");

static unsigned int inflight_ops = 16;
module_param(inflight_ops, uint, 0444);
MODULE_PARM_DESC(inflight_ops, "inflight-reset: copies queued per channel (default 16)");

static unsigned int inflight_len = 64 * 1024;
module_param(inflight_len, uint, 0444);
MODULE_PARM_DESC(inflight_len, "inflight-reset: length of those copies (default 64 KiB)");

/* ---- mode=inflight-reset --------------------------------------------- */

#define DLX_HOST_RESET_WAIT_S	60

/* Waits (bounded) for ops to finish; false if some may still be running. */
static bool dlx_ops_drain(struct dlx_op *ops, unsigned int count)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	unsigned int i;

	for (i = 0; i < count; i++) {
		while (!dlx_op_done(&ops[i])) {
			if (time_after(jiffies, end))
				return false;
			usleep_range(1000, 2000);
		}
	}
	return true;
}

/* Copies may still be in flight: keep their buffers and channels. */
static void dlx_inflight_leak(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dlx_chans[i].abandoned = true;
}

/*
 * Maps inflight_ops copies of inflight_len on every channel: one source and
 * inflight_ops destinations each.  False, with the test reported not ok,
 * when something is missing.
 */
static bool dlx_inflight_map(struct dlx_op *ops, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		struct device *dev = c->chan->device->dev;

		if (dlx_alloc_buffers(c))
			return dlx_ktap_result(false, "inflight-reset # no buffers");
		if ((size_t)inflight_ops * inflight_len > c->buf_len)
			return dlx_ktap_result(false,
					       "inflight-reset # %u x %u bytes do not fit the %zu byte buffer",
					       inflight_ops, inflight_len, c->buf_len);
		dlx_fill(c->src, c->buf_len, 0, inflight_len, seed + i);
		for (j = 0; j < inflight_ops; j++) {
			struct dlx_op *op = &ops[i * inflight_ops + j];

			op->c = c;
			op->len = inflight_len;
			op->done = true;
			op->src_dma = dma_map_single(dev, c->src, inflight_len,
						     DMA_TO_DEVICE);
			op->dst_dma = dma_map_single(dev, c->dst + j * inflight_len,
						     inflight_len, DMA_FROM_DEVICE);
			if (dma_mapping_error(dev, op->src_dma) ||
			    dma_mapping_error(dev, op->dst_dma))
				return dlx_ktap_result(false, "inflight-reset # mapping failed");
		}
	}
	return true;
}

/* Submits and issues the count copies; false (test reported) when one is refused. */
static bool dlx_inflight_start(struct dlx_op *ops, unsigned int count, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		if (dlx_op_submit(&ops[i])) {
			ops[i].done = true;
			return dlx_ktap_result(false,
					       "inflight-reset # submitting copy %u failed", i);
		}
	}
	for (i = 0; i < n; i++)
		dma_async_issue_pending(dlx_chans[i].chan);
	return true;
}

/* Resets the machine through the ICH9 reset control port; returns if it did not. */
static void dlx_reset_cf9(struct dlx_op *ops, unsigned int count)
{
	unsigned int i, inflight;

	for (inflight = 0, i = 0; i < count; i++)
		inflight += !dlx_op_done(&ops[i]);
	pr_info("# %s: resetting with %u copies in flight\n", DLX_NAME,
		inflight);
#ifdef CONFIG_X86
	/* ICH9 reset control (RST_CNT): full reset, now */
	outb(0x06, 0xcf9);
	mdelay(2000);
	pr_info("# %s: error: the machine did not reset\n", DLX_NAME);
#else
	pr_info("# %s: error: reset_by=cf9 needs x86\n", DLX_NAME);
#endif
}

/* Keeps copies in flight until the host resets the machine; returns if it did not. */
static void dlx_wait_host_reset(struct dlx_op *ops, unsigned int count, unsigned int n)
{
	unsigned long end = jiffies + DLX_HOST_RESET_WAIT_S * HZ;
	unsigned int i;

	pr_info("DMALAB: reset-me\n");
	while (time_before(jiffies, end)) {
		for (i = 0; i < count; i++) {
			if (dlx_op_done(&ops[i]) && dlx_op_submit(&ops[i])) {
				ops[i].done = true;
				break;
			}
		}
		for (i = 0; i < n; i++)
			dma_async_issue_pending(dlx_chans[i].chan);
		usleep_range(1000, 2000);
	}
	pr_info("# %s: error: the host did not reset the machine within %u s\n",
		DLX_NAME, DLX_HOST_RESET_WAIT_S);
}

/* No reset came: the copies waited for and unmapped, or everything leaked. */
static void dlx_inflight_end(struct dlx_op *ops, unsigned int count, unsigned int n)
{
	unsigned int i;

	if (!dlx_ops_drain(ops, count)) {
		dlx_inflight_leak(n);
		return;
	}
	for (i = 0; i < count; i++) {
		struct device *dev = ops[i].c->chan->device->dev;

		dma_unmap_single(dev, ops[i].dst_dma, ops[i].len,
				 DMA_FROM_DEVICE);
		dma_unmap_single(dev, ops[i].src_dma, ops[i].len,
				 DMA_TO_DEVICE);
	}
	kfree(ops);
	for (i = 0; i < n; i++)
		dlx_free_buffers(&dlx_chans[i]);
}

void dlx_mode_inflight_reset(unsigned int n)
{
	bool host = !strcmp(reset_by, "host");
	unsigned int i, count, inflight;
	struct dlx_op *ops;
	bool ok = true;

	dlx_ktap_plan(n + 1);
	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];

		ok &= dlx_ktap_result(dlx_run_channel(c, i), "%s", c->name);
	}
	dlx_summary(0, n);
	if (!host && strcmp(reset_by, "cf9")) {
		dlx_ktap_result(false, "inflight-reset # unknown reset_by=%s", reset_by);
		return;
	}
	if (!ok) {
		dlx_ktap_result(false, "inflight-reset # a channel failed");
		return;
	}

	if (!inflight_len)
		inflight_len = 1;
	count = n * inflight_ops;
	ops = kcalloc(count, sizeof(*ops), GFP_KERNEL);
	if (!ops) {
		dlx_ktap_result(false, "inflight-reset # no memory");
		return;
	}
	if (!dlx_inflight_map(ops, n) || !dlx_inflight_start(ops, count, n)) {
		dlx_inflight_leak(n);
		return;
	}
	for (inflight = 0, i = 0; i < count; i++)
		inflight += !dlx_op_done(&ops[i]);
	dlx_ktap_result(inflight, "inflight-reset # %u of %u copies in flight",
			inflight, count);
	if (host)
		dlx_wait_host_reset(ops, count, n);
	else
		dlx_reset_cf9(ops, count);
	dlx_inflight_end(ops, count, n);
}
