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
 *
 * A channel that completes out of order (DMA_COMPLETION_NO_ORDER: idxd, the
 * driver of Intel DSA) cannot be polled: its status answers every cookie
 * with DMA_OUT_OF_ORDER, and the driver hears of a copy's end only from its
 * interrupt (its irq thread reads the completion records; a descriptor that
 * asked for none is never reaped, and its slot in the WQ is lost).  There
 * every offloaded chunk asks for an interrupt and has a callback, and the
 * round is over when each callback has come; "wait" and "ordered" sleep
 * until then instead of polling, as the verified copies do (copies.c).  On
 * such a channel the CPU does not spin for the engine's time in any kind, so
 * their busy time is another thing than on an ordered channel: the line
 * says how the CPU learnt of the copies (dma_irqs, polls, sleeps below).
 *
 * Each kind runs as one window: its elapsed time (the guest's clock) and its
 * busy time (elapsed less the idle time the kernel counted,
 * get_cpu_idle_time_us, on every CPU: the submissions, the interrupt, the
 * cleanup, the wake-up and whatever else ran) are divided by the chunks
 * copied, and each iteration's elapsed time per chunk gives the percentiles:
 * "# bench-offload op=... size=... n=ITERATIONS chunks=... p50_ns=...
 * p90_ns=... p99_ns=... max_ns=... mean_ns=... elapsed_ns=... busy_ns=...
 * idle_us=... dma_copies=... cpus=... batch=... dma_irqs=... polls=...
 * sleeps=..." (dma_copies: the engine's copies whose completion the CPU saw
 * succeed: on an ordered channel those before a cookie found complete, on
 * an unordered one each callback that reported no error; dma_irqs: copies
 * submitted with an interrupt; polls: dma_sync_wait() calls; sleeps: waits
 * for a callback).
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

/* How the CPU learnt of one window's copies (the line's counts). */
struct dlx_offload_tally {
	unsigned int copied, irqs, polls, sleeps;
};

/*
 * A round on an unordered channel: callbacks still due (plus one while the
 * round is being submitted) and those that reported success.  Static, not on
 * the stack: a late callback after a timeout must find it.
 */
static struct dlx_offload_round {
	atomic_t left, ok;
	struct completion *done;
} dlx_round;

static void dlx_offload_done(void *param)
{
	complete(param);
}

static void dlx_offload_counted(void *param, const struct dmaengine_result *res)
{
	struct dlx_offload_round *r = param;

	if (res && res->result == DMA_TRANS_NOERROR)
		atomic_inc(&r->ok);
	if (atomic_dec_and_test(&r->left))
		complete(r->done);
}

/* Whether c completes out of order: only its callbacks tell a copy's end. */
static bool dlx_offload_unordered(struct dlx_chan *c)
{
	return dma_has_cap(DMA_COMPLETION_NO_ORDER, c->chan->device->cap_mask);
}

/*
 * Map the pair at off and submit the engine's copy of it: with an interrupt
 * that completes done when done is given, and on an unordered channel always,
 * counted in dlx_round; false if anything fails.
 */
static bool dlx_offload_start(struct dlx_chan *c, size_t off, size_t len,
			      struct dlx_offload_map *m, dma_cookie_t *cookie,
			      struct completion *done, struct dlx_offload_tally *t)
{
	bool counted = dlx_offload_unordered(c);
	struct dma_async_tx_descriptor *tx;
	bool irq = done || counted;

	if (!dlx_map_pair_at(c, off, len, &m->s, &m->d))
		return false;
	tx = dmaengine_prep_dma_memcpy(c->chan, m->d, m->s, len,
				       DMA_CTRL_ACK | (irq ? DMA_PREP_INTERRUPT : 0));
	if (tx) {
		if (counted) {
			tx->callback_result = dlx_offload_counted;
			tx->callback_param = &dlx_round;
			atomic_inc(&dlx_round.left);
		} else if (done) {
			tx->callback = dlx_offload_done;
			tx->callback_param = done;
		}
		*cookie = dmaengine_submit(tx);
		if (!dma_submit_error(*cookie)) {
			t->irqs += irq;
			return true;
		}
		if (counted)
			atomic_dec(&dlx_round.left);
	}
	dlx_unmap_pair(c, len, m->s, m->d);
	return false;
}

/*
 * The end of a round on an unordered channel: the submitter's hold dropped,
 * then a sleep until every started copy has called back; false (the channel
 * abandoned) when they did not within the time-out, or when one failed.
 */
static bool dlx_offload_round_wait(struct dlx_chan *c, unsigned int started,
				   struct dlx_offload_tally *t)
{
	if (atomic_dec_and_test(&dlx_round.left))
		complete(dlx_round.done);
	t->sleeps++;
	if (!wait_for_completion_timeout(dlx_round.done, msecs_to_jiffies(c->tmo_ms))) {
		c->abandoned = true;
		return false;
	}
	t->copied += atomic_read(&dlx_round.ok);
	return atomic_read(&dlx_round.ok) == started;
}

/*
 * One iteration of a kind: its chunks of len bytes at consecutive offsets.
 * false if a copy could not start or finish: its buffers unmapped when
 * every copy started has ended, else (copies perhaps still in flight) left
 * mapped and leaked, the channel abandoned.
 */
static bool dlx_offload_once(struct dlx_chan *c, unsigned int kind, size_t len,
			     unsigned int batch, struct dlx_offload_map *maps,
			     struct dlx_offload_tally *t)
{
	unsigned int i, count = kind == DLX_OFF_WAIT ? 1 : batch, started = 0;
	struct completion *done = &c->done;	/* not on the stack: a late callback */
	bool unordered = dlx_offload_unordered(c);
	dma_cookie_t cookie = 0;
	bool ok = true;

	if (kind == DLX_OFF_CPU) {
		memcpy(c->dst, c->src, len);
		return true;
	}
	reinit_completion(done);
	if (unordered) {
		atomic_set(&dlx_round.left, 1);
		atomic_set(&dlx_round.ok, 0);
		dlx_round.done = done;
	}
	for (i = 0; i < count && ok; i++) {
		bool last = i + 1 == count && kind == DLX_OFF_OVERLAP;

		ok = dlx_offload_start(c, i * len, len, &maps[i], &cookie, last ? done : NULL, t);
		if (ok)
			started++;
	}
	if (!started)
		return false;
	if (unordered) {
		/* every copy calls back: the CPU sleeps in each kind */
		dma_async_issue_pending(c->chan);
		if (kind == DLX_OFF_OVERLAP)
			memcpy(c->dst + count * len, c->src + count * len, len);
		if (!dlx_offload_round_wait(c, started, t)) {
			if (c->abandoned)
				return false;	/* copies perhaps in flight */
			ok = false;		/* all called back, one failed */
		} else if (kind == DLX_OFF_ORDERED) {
			memcpy(c->dst + count * len, c->src + count * len, len);
		}
	} else {
		if (!ok && kind == DLX_OFF_OVERLAP)
			kind = DLX_OFF_ORDERED;	/* no interrupt to sleep on: poll */
		if (kind == DLX_OFF_OVERLAP) {
			dma_async_issue_pending(c->chan);
			memcpy(c->dst + count * len, c->src + count * len, len);
			t->sleeps++;
			if (!wait_for_completion_timeout(done, msecs_to_jiffies(c->tmo_ms)) ||
			    dma_async_is_tx_complete(c->chan, cookie, NULL, NULL) != DMA_COMPLETE) {
				c->abandoned = true;
				return false;
			}
		} else {
			t->polls++;
			if (dma_sync_wait(c->chan, cookie) != DMA_COMPLETE) {
				c->abandoned = true;
				return false;
			}
			if (kind == DLX_OFF_ORDERED)
				memcpy(c->dst + count * len, c->src + count * len, len);
		}
		t->copied += started;	/* in order: all before the cookie are done */
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
	struct dlx_offload_tally t = {};
	size_t span = per * len;
	u64 t0, start, wall, idle0, idle1, busy;
	struct dlx_calls st;

	memset(c->dst, DLX_POISON, span);
	idle0 = dlx_idle_us(false);
	start = ktime_get_ns();
	for (i = 0; i < n; i++) {
		t0 = ktime_get_ns();
		if (!dlx_offload_once(c, kind, len, batch, maps, &t)) {
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
	pr_info("# bench-offload op=%s size=%zu n=%u chunks=%u p50_ns=%u p90_ns=%u p99_ns=%u max_ns=%u mean_ns=%llu elapsed_ns=%llu busy_ns=%llu idle_us=%llu dma_copies=%u cpus=%u batch=%u dma_irqs=%u polls=%u sleeps=%u\n",
		dlx_offload_kinds[kind], len, n, n * per, st.p50, st.p90, st.p99, st.max, st.mean,
		div_u64(wall, n * per), div_u64(busy, n * per), idle1 - idle0, t.copied,
		num_online_cpus(), batch, t.irqs, t.polls, t.sleeps);
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
		pr_info("# %s: offload: %s, %u chunks per kind and size, reads of %u offloaded + 1, guest clock (ktime_get_ns)%s\n",
			DLX_NAME, c->name, calls, batch,
			dlx_offload_unordered(c) ?
			", every copy with an interrupt: the channel completes out of order, wait and ordered sleep until the callbacks" : "");
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
