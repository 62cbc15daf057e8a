// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=offload: NET_DMA's trade, copies offloaded to the
 * DMA engine against the CPU's own (dmalab measure's offload study,
 * docs/offload.rst), measured as the CPU's busy time, not only as elapsed
 * time.  For each size, on channel 0, offload_calls chunks of each kind:
 *   cpu      memcpy() of one chunk: the CPU's copy;
 *   wait     one chunk offloaded and waited for at once: both buffers mapped
 *            (dma_map_single), the engine's memcpy submitted without an
 *            interrupt, dma_sync_wait() polling it to completion, unmapped;
 *   overlap  a "read" of offload_batch + 1 chunks: offload_batch offloaded,
 *            the last of them with an interrupt, and meanwhile the CPU
 *            copies the remaining chunk itself, then sleeps until the
 *            interrupt says the engine is done: NET_DMA's overlap, with the
 *            CPU's copy free to land before the engine's;
 *   ordered  the same read, but the CPU polls the engine to completion
 *            (dma_sync_wait) before it copies its chunk: the synchronised
 *            fallback that kept the bytes in order (NET_DMA's fix).
 * Each kind runs as one window: its elapsed time (the guest's clock) and its
 * busy time (elapsed less the idle time the kernel counted,
 * get_cpu_idle_time_us, on every CPU: the submissions, the interrupt, the
 * cleanup, the wake-up and whatever else ran) are divided by the chunks
 * copied, and each iteration's elapsed time per chunk gives the percentiles:
 * "# bench-offload op=... size=... n=ITERATIONS chunks=... p50_ns=...
 * p90_ns=... p99_ns=... max_ns=... mean_ns=... elapsed_ns=... busy_ns=...
 * idle_us=... dma_copies=... cpus=..." (dma_copies: the chunks the engine
 * copied).
 * After each kind the destination is compared with
 * the source, so a copy that did not happen fails the size.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/vmalloc.h>

#include "exercise.h"

static unsigned int offload_calls = 500;
module_param(offload_calls, uint, 0444);
MODULE_PARM_DESC(offload_calls, "offload: chunks copied per kind and size (default 500)");

static unsigned int offload_batch = 16;
module_param(offload_batch, uint, 0444);
MODULE_PARM_DESC(offload_batch,
		 "offload: chunks offloaded per read of overlap and ordered (default 16)");

#define DLX_OFFLOAD_MAX_CALLS	100000
#define DLX_OFFLOAD_MAX_BATCH	64

static const size_t dlx_offload_sizes[] = { 256, 1024, 4096, 16384, 65536 };

enum { DLX_OFF_CPU, DLX_OFF_WAIT, DLX_OFF_OVERLAP, DLX_OFF_ORDERED, DLX_OFF_KINDS };
static const char *const dlx_offload_kinds[] = { "cpu", "wait", "overlap", "ordered" };

struct dlx_offload_map {
	dma_addr_t s, d;
};

static void dlx_offload_done(void *param)
{
	complete(param);
}

/*
 * Map the pair at off and submit the engine's copy of it, with an interrupt
 * that completes done when done is given; false if anything fails.
 */
static bool dlx_offload_start(struct dlx_chan *c, size_t off, size_t len,
			      struct dlx_offload_map *m, dma_cookie_t *cookie,
			      struct completion *done)
{
	struct dma_async_tx_descriptor *tx;

	if (!dlx_map_pair_at(c, off, len, &m->s, &m->d))
		return false;
	tx = dmaengine_prep_dma_memcpy(c->chan, m->d, m->s, len,
				       DMA_CTRL_ACK | (done ? DMA_PREP_INTERRUPT : 0));
	if (tx) {
		if (done) {
			tx->callback = dlx_offload_done;
			tx->callback_param = done;
		}
		*cookie = dmaengine_submit(tx);
		if (!dma_submit_error(*cookie))
			return true;
	}
	dlx_unmap_pair(c, len, m->s, m->d);
	return false;
}

/*
 * One iteration of a kind: its chunks of len bytes at consecutive offsets.
 * false if a copy could not start or finish (copies perhaps still in
 * flight: the buffers stay mapped and are leaked, the channel abandoned).
 */
static bool dlx_offload_once(struct dlx_chan *c, unsigned int kind, size_t len,
			     unsigned int batch, struct dlx_offload_map *maps)
{
	unsigned int i, count = kind == DLX_OFF_WAIT ? 1 : batch, started = 0;
	struct completion *done = &c->done;	/* not on the stack: a late callback */
	dma_cookie_t cookie = 0;
	bool ok = true;

	if (kind == DLX_OFF_CPU) {
		memcpy(c->dst, c->src, len);
		return true;
	}
	reinit_completion(done);
	for (i = 0; i < count && ok; i++) {
		bool last = i + 1 == count && kind == DLX_OFF_OVERLAP;

		ok = dlx_offload_start(c, i * len, len, &maps[i], &cookie, last ? done : NULL);
		if (ok)
			started++;
	}
	if (!started)
		return false;
	if (!ok && kind == DLX_OFF_OVERLAP)
		kind = DLX_OFF_ORDERED;	/* no interrupt to sleep on: poll */
	if (kind == DLX_OFF_OVERLAP) {
		dma_async_issue_pending(c->chan);
		memcpy(c->dst + count * len, c->src + count * len, len);
		if (!wait_for_completion_timeout(done, msecs_to_jiffies(c->tmo_ms)) ||
		    dma_async_is_tx_complete(c->chan, cookie, NULL, NULL) != DMA_COMPLETE) {
			c->abandoned = true;
			return false;
		}
	} else {
		if (dma_sync_wait(c->chan, cookie) != DMA_COMPLETE) {
			c->abandoned = true;
			return false;
		}
		if (kind == DLX_OFF_ORDERED)
			memcpy(c->dst + count * len, c->src + count * len, len);
	}
	for (i = 0; i < started; i++)
		dlx_unmap_pair(c, len, maps[i].s, maps[i].d);
	return ok;
}

/* Chunks one iteration of a kind copies. */
static unsigned int dlx_offload_chunks(unsigned int kind, unsigned int batch)
{
	return kind == DLX_OFF_OVERLAP || kind == DLX_OFF_ORDERED ? batch + 1 : 1;
}

/* One kind at one size, as one window; false if a copy went wrong. */
static bool dlx_offload_kind(struct dlx_chan *c, unsigned int kind, size_t len,
			     unsigned int calls, unsigned int batch, u32 *ns,
			     struct dlx_offload_map *maps)
{
	unsigned int per = dlx_offload_chunks(kind, batch);
	unsigned int i, n = max(calls / per, 1u);
	size_t span = per * len;
	u64 t0, start, wall, idle0, idle1, busy;
	struct dlx_calls st;

	memset(c->dst, DLX_POISON, span);
	idle0 = dlx_idle_us(false);
	start = ktime_get_ns();
	for (i = 0; i < n; i++) {
		t0 = ktime_get_ns();
		if (!dlx_offload_once(c, kind, len, batch, maps)) {
			pr_info("# %s: offload: %s copy of %zu bytes failed after %u\n",
				DLX_NAME, dlx_offload_kinds[kind], len, i);
			return false;
		}
		ns[i] = dlx_elapsed(t0) / per;
	}
	wall = ktime_get_ns() - start;
	idle1 = dlx_idle_us(false);
	if (memcmp(c->dst, c->src, span)) {
		pr_info("# %s: offload: %s copies of %zu bytes: destination differs from source\n",
			DLX_NAME, dlx_offload_kinds[kind], len);
		return false;
	}
	if (idle0 == U64_MAX || idle1 == U64_MAX) {
		pr_info("# %s: offload: no idle time from the kernel (no NO_HZ?)\n", DLX_NAME);
		return false;
	}
	wall *= num_online_cpus();
	busy = wall - min(wall, (idle1 - idle0) * NSEC_PER_USEC);
	dlx_calls_stats(ns, n, &st);
	pr_info("# bench-offload op=%s size=%zu n=%u chunks=%u p50_ns=%u p90_ns=%u p99_ns=%u max_ns=%u mean_ns=%llu elapsed_ns=%llu busy_ns=%llu idle_us=%llu dma_copies=%u cpus=%u\n",
		dlx_offload_kinds[kind], len, n, n * per, st.p50, st.p90, st.p99, st.max, st.mean,
		div_u64(wall, n * per), div_u64(busy, n * per), idle1 - idle0,
		kind == DLX_OFF_CPU ? 0 : n * (per - (kind != DLX_OFF_WAIT)),
		num_online_cpus());
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
	unsigned int i, k;
	bool ok;

	dlx_ktap_plan(ARRAY_SIZE(dlx_offload_sizes));
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	ok = maps && ns && !dlx_alloc_buffers(c);
	if (ok && !dlx_idle_ready("offload")) {
		pr_info("# %s: offload: no idle time from the kernel (no NO_HZ?)\n", DLX_NAME);
		ok = false;
	}
	if (ok)
		pr_info("# %s: offload: %s, %u chunks per kind and size, reads of %u offloaded + 1, guest clock (ktime_get_ns)\n",
			DLX_NAME, c->name, calls, batch);
	for (i = 0; i < ARRAY_SIZE(dlx_offload_sizes); i++) {
		size_t len = dlx_offload_sizes[i];
		bool done = ok && !c->abandoned && (size_t)(batch + 1) * len <= c->buf_len;

		if (done)
			memset(c->src, 0x11 + i, (size_t)(batch + 1) * len);
		for (k = 0; done && k < DLX_OFF_KINDS; k++)
			done = dlx_offload_kind(c, k, len, calls, batch, ns, maps);
		dlx_ktap_result(done, "offload-%zu", len);
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
