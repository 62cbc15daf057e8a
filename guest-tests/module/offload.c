// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=offload: NET_DMA's trade, a copy offloaded to the DMA
 * engine against the CPU's own (dmalab measure's offload study,
 * docs/offload.rst).  For each size it times, on channel 0 and the guest's
 * clock, offload_calls of each:
 *   cpu    memcpy() of the source buffer into the destination;
 *   sync   one offloaded copy the CPU waits for: both buffers mapped with
 *          dma_map_single(), the engine's memcpy submitted (no interrupt:
 *          nothing sleeps on it), dma_sync_wait() polling it to completion,
 *          both unmapped.  What a copy costs when its result is needed at
 *          once, as before a CPU copy that must land after it (NET_DMA's
 *          "synchronise before the CPU fallback");
 *   async  offload_batch such copies submitted back to back and waited for
 *          once, at the end, per copy: what the CPU pays when the copies
 *          overlap its other work (NET_DMA waited once per recvmsg()).
 * as "# bench-offload op=... size=... n=... p50_ns=..." lines (async: one
 * sample per batch, divided by the batch).  After each kind the destination
 * is compared with the source, so a copy that did not happen fails the size.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "exercise.h"

static unsigned int offload_calls = 500;
module_param(offload_calls, uint, 0444);
MODULE_PARM_DESC(offload_calls, "offload: copies timed per kind and size (default 500)");

static unsigned int offload_batch = 16;
module_param(offload_batch, uint, 0444);
MODULE_PARM_DESC(offload_batch, "offload: copies per batch of the async kind (default 16)");

#define DLX_OFFLOAD_MAX_CALLS	100000
#define DLX_OFFLOAD_MAX_BATCH	64

static const size_t dlx_offload_sizes[] = { 256, 1024, 4096, 16384, 65536 };

struct dlx_offload_map {
	dma_addr_t s, d;
};

/* Map the pair at off and submit the engine's copy of it; false if either fails. */
static bool dlx_offload_start(struct dlx_chan *c, size_t off, size_t len,
			      struct dlx_offload_map *m, dma_cookie_t *cookie)
{
	struct dma_async_tx_descriptor *tx;

	if (!dlx_map_pair_at(c, off, len, &m->s, &m->d))
		return false;
	tx = dmaengine_prep_dma_memcpy(c->chan, m->d, m->s, len, DMA_CTRL_ACK);
	if (tx) {
		*cookie = dmaengine_submit(tx);
		if (!dma_submit_error(*cookie))
			return true;
	}
	dlx_unmap_pair(c, len, m->s, m->d);
	return false;
}

/*
 * count copies of len bytes at consecutive offsets, submitted together and
 * polled to completion once; false (copies perhaps still in flight, so the
 * buffers stay mapped and are leaked) if one could not start or finish.
 */
static bool dlx_offload_batch(struct dlx_chan *c, size_t len, unsigned int count,
			      struct dlx_offload_map *maps)
{
	dma_cookie_t cookie = 0;
	unsigned int i, started = 0;
	bool ok = true;

	for (i = 0; i < count && ok; i++) {
		ok = dlx_offload_start(c, i * len, len, &maps[i], &cookie);
		if (ok)
			started++;
	}
	if (started && dma_sync_wait(c->chan, cookie) != DMA_COMPLETE) {
		c->abandoned = true;
		return false;
	}
	for (i = 0; i < started; i++)
		dlx_unmap_pair(c, len, maps[i].s, maps[i].d);
	return ok;
}

static const char *dlx_offload_kinds[] = { "cpu", "sync", "async" };

/* One kind at one size: its samples into ns[]; false if a copy went wrong. */
static bool dlx_offload_kind(struct dlx_chan *c, unsigned int kind, size_t len,
			     unsigned int calls, unsigned int batch, u32 *ns,
			     unsigned int *samples, struct dlx_offload_map *maps)
{
	size_t span = (kind == 2 ? batch : 1) * len;
	unsigned int i, n = kind == 2 ? max(calls / batch, 1u) : calls;
	u64 t0;

	memset(c->dst, DLX_POISON, span);
	for (i = 0; i < n; i++) {
		bool ok = true;

		t0 = ktime_get_ns();
		if (kind == 0)
			memcpy(c->dst, c->src, len);
		else
			ok = dlx_offload_batch(c, len, kind == 2 ? batch : 1, maps);
		ns[i] = kind == 2 ? dlx_elapsed(t0) / batch : dlx_elapsed(t0);
		if (!ok) {
			pr_info("# %s: offload: %s copy of %zu bytes failed after %u\n",
				DLX_NAME, dlx_offload_kinds[kind], len, i);
			return false;
		}
	}
	*samples = n;
	if (memcmp(c->dst, c->src, span)) {
		pr_info("# %s: offload: %s copies of %zu bytes: destination differs from source\n",
			DLX_NAME, dlx_offload_kinds[kind], len);
		return false;
	}
	return true;
}

/* mode=offload: the CPU's copy against the engine's, per size. */
void dlx_mode_offload(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	unsigned int calls = clamp(offload_calls, 10u, DLX_OFFLOAD_MAX_CALLS);
	unsigned int batch = clamp(offload_batch, 1u, DLX_OFFLOAD_MAX_BATCH);
	struct dlx_offload_map *maps = kcalloc(batch, sizeof(*maps), GFP_KERNEL);
	u32 *ns = vmalloc(array_size(calls, sizeof(u32)));
	unsigned int i, k, samples;
	bool ok;

	pr_info("1..%zu\n", ARRAY_SIZE(dlx_offload_sizes));
	ok = maps && ns && !dlx_alloc_buffers(c);
	if (ok)
		pr_info("# %s: offload: %s, %u copies per kind and size, batches of %u, guest clock (ktime_get_ns)\n",
			DLX_NAME, c->name, calls, batch);
	for (i = 0; i < ARRAY_SIZE(dlx_offload_sizes); i++) {
		size_t len = dlx_offload_sizes[i];
		bool done = ok && !c->abandoned && (size_t)batch * len <= c->buf_len;

		if (done)
			memset(c->src, 0x11 + i, (size_t)batch * len);
		for (k = 0; done && k < ARRAY_SIZE(dlx_offload_kinds); k++) {
			done = dlx_offload_kind(c, k, len, calls, batch, ns, &samples, maps);
			if (done)
				dlx_report_calls("bench-offload", dlx_offload_kinds[k], len, ns,
						 samples);
		}
		pr_info("%sok %u offload-%zu\n", done ? "" : "not ", i + 1, len);
		if (done) {
			c->ops += calls;
			c->bytes += (u64)calls * len;
		}
	}
	if (!c->abandoned && c->src)
		dlx_free_buffers(c);
	vfree(ns);
	kfree(maps);
}
