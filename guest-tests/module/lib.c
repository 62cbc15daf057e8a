// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise: the helpers the modes share.  The PRNG and the poisoned
 * buffers, copies submitted and waited for, mapped buffer pairs, the verified
 * copies of random lengths (mode=memcpy's and every other mode's "copies"
 * tests), the per-channel and summary reports, ioatdma's channel registers,
 * the CPUs' idle time and the per-call statistics of the cost modes.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/wait.h>

#include "exercise.h"

/* splitmix64: small, good enough, deterministic across runs */
u64 dlx_next(u64 *state)
{
	u64 z;

	*state += 0x9e3779b97f4a7c15ULL;
	z = *state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform value in [0, n) for n > 0 (modulo bias is irrelevant here) */
u64 dlx_below(u64 *state, u64 n)
{
	u64 rem;

	div64_u64_rem(dlx_next(state), n, &rem);
	return rem;
}

void dlx_callback(void *param, const struct dmaengine_result *res)
{
	struct dlx_chan *c = param;

	c->result = res ? res->result : DMA_TRANS_NOERROR;
	complete(&c->done);
}

const char *dlx_result_name(enum dmaengine_tx_result r)
{
	switch (r) {
	case DMA_TRANS_NOERROR:
		return "noerror";
	case DMA_TRANS_READ_FAILED:
		return "read-failed";
	case DMA_TRANS_WRITE_FAILED:
		return "write-failed";
	case DMA_TRANS_ABORTED:
		return "aborted";
	}
	return "unknown";
}

/* Fill [off, off + len) of buf with a pattern derived from op_seed. */
void dlx_fill(u8 *buf, size_t buf_len, size_t off, size_t len,
	      u64 op_seed)
{
	size_t start = round_down(off, sizeof(u64));
	size_t end = min(round_up(off + len, sizeof(u64)), buf_len);
	u64 state = op_seed;
	u64 *p = (u64 *)(buf + start);
	size_t n = (end - start) / sizeof(u64);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = dlx_next(&state);
	/* buf_len is a multiple of 8, so nothing is left over */
}

/* Returns the index of the first byte in [from, to) that is not poison. */
long dlx_find_unpoisoned(const u8 *buf, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (buf[i] != DLX_POISON)
			return i;
	return -1;
}

void dlx_free_buffers(struct dlx_chan *c)
{
	if (c->abandoned)
		return;		/* the engine may still write into them */
	if (c->src_pages)
		__free_pages(c->src_pages, c->order);
	if (c->dst_pages)
		__free_pages(c->dst_pages, c->order);
	c->src_pages = NULL;
	c->dst_pages = NULL;
}

int dlx_alloc_buffers(struct dlx_chan *c)
{
	size_t want = max_t(size_t, 2 * (size_t)max_len, PAGE_SIZE);

	c->order = get_order(want);
	c->buf_len = PAGE_SIZE << c->order;
	c->src_pages = alloc_pages(GFP_KERNEL | __GFP_NOWARN, c->order);
	c->dst_pages = alloc_pages(GFP_KERNEL | __GFP_NOWARN, c->order);
	if (!c->src_pages || !c->dst_pages) {
		dlx_free_buffers(c);
		return -ENOMEM;
	}
	c->src = page_address(c->src_pages);
	c->dst = page_address(c->dst_pages);
	memset(c->src, 0, c->buf_len);
	memset(c->dst, DLX_POISON, c->buf_len);
	return 0;
}

/* ---- copies tracked by callback, several in flight (inflight-reset, bench) */

DECLARE_WAIT_QUEUE_HEAD(dlx_wq);
atomic_t dlx_callbacks = ATOMIC_INIT(0);
bool dlx_pinned;	/* something may still call back: never unload */

void dlx_op_callback(void *param, const struct dmaengine_result *res)
{
	struct dlx_op *op = param;

	op->result = res ? res->result : DMA_TRANS_NOERROR;
	/* publishes result; pairs with dlx_op_done() */
	smp_store_release(&op->done, true);
	atomic_inc(&dlx_callbacks);
	wake_up(&dlx_wq);
}

bool dlx_op_done(struct dlx_op *op)
{
	/* pairs with dlx_op_callback(): result is valid once done is */
	return smp_load_acquire(&op->done);
}

/* Prepares and submits the mapped op on its channel; the caller issues it. */
int dlx_op_submit(struct dlx_op *op)
{
	struct dma_async_tx_descriptor *tx;
	dma_cookie_t cookie;

	op->done = false;
	op->result = DMA_TRANS_NOERROR;
	tx = dmaengine_prep_dma_memcpy(op->c->chan, op->dst_dma, op->src_dma,
				       op->len,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx)
		return -ENOMEM;
	tx->callback_result = dlx_op_callback;
	tx->callback_param = op;
	cookie = dmaengine_submit(tx);
	return dma_submit_error(cookie) ? -EIO : 0;
}

/* Index of the first byte where a and b (n bytes, 8-byte aligned) differ, or -1. */
long dlx_compare(const u8 *a, const u8 *b, size_t n)
{
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;
	size_t i, words = n / sizeof(u64);

	for (i = 0; i < words; i++)
		if (x[i] != y[i])
			break;
	for (i *= sizeof(u64); i < n; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

/* ---- one copy at a time, completing c->done ---------------------------- */

dma_cookie_t dlx_submit_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
			     size_t len, const char **why)
{
	struct dma_async_tx_descriptor *tx;
	dma_cookie_t cookie;

	tx = dmaengine_prep_dma_memcpy(c->chan, dst, src, len,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx) {
		*why = "prep_dma_memcpy returned NULL";
		return -ENOMEM;
	}
	reinit_completion(&c->done);
	c->result = DMA_TRANS_NOERROR;
	tx->callback_result = dlx_callback;
	tx->callback_param = c;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		*why = "submit error";
		return cookie;
	}
	dma_async_issue_pending(c->chan);
	return cookie;
}

bool dlx_start_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		    size_t len)
{
	const char *why;

	return !dma_submit_error(dlx_submit_copy(c, dst, src, len, &why));
}

bool dlx_wait(struct dlx_chan *c, unsigned int ms)
{
	return wait_for_completion_timeout(&c->done, msecs_to_jiffies(ms)) != 0;
}

/*
 * One copy on channel c, its completion polled rather than waited for:
 * dmaengine's tx_status runs the driver's cleanup, which calls the copy back,
 * so it works with softirqs off.  False when it did not complete within ms.
 */
bool dlx_copy_poll(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len, unsigned int ms)
{
	u64 end = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	const char *why;
	dma_cookie_t cookie = dlx_submit_copy(c, dst, src, len, &why);

	if (dma_submit_error(cookie))
		return false;
	while (dma_async_is_tx_complete(c->chan, cookie, NULL, NULL) != DMA_COMPLETE) {
		if (ktime_get_ns() > end)
			return false;
		cpu_relax();
	}
	return completion_done(&c->done);
}

/*
 * Waits until the driver has finished with an error on channel c: ioat_eh
 * calls the failed descriptor back before it aborts what is queued, resets
 * and restarts the channel (drivers/dma/ioat/dma.c), so a copy submitted at
 * once could be aborted too.  An interrupt descriptor through dmaengine
 * that completes without error ran on the restarted channel: one the abort
 * took is submitted again, and then waits for the prep lock ioat_eh holds
 * until the restart is done.  False when none completed within tmo_ms.
 */
bool dlx_settle(struct dlx_chan *c)
{
	struct dma_async_tx_descriptor *tx;
	unsigned int tries;

	for (tries = 0; tries < 4; tries++) {
		tx = c->chan->device->device_prep_dma_interrupt(c->chan,
							       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
		if (!tx)
			return false;
		reinit_completion(&c->done);
		c->result = DMA_TRANS_NOERROR;
		tx->callback_result = dlx_callback;
		tx->callback_param = c;
		if (dma_submit_error(dmaengine_submit(tx)))
			return false;
		dma_async_issue_pending(c->chan);
		if (!dlx_wait(c, c->tmo_ms))
			return false;
		if (c->result == DMA_TRANS_NOERROR)
			return true;
	}
	return false;
}

/* One copy on channel c; false when no callback came within tmo_ms. */
bool dlx_copy_wait(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len)
{
	return dlx_start_copy(c, dst, src, len) && dlx_wait(c, c->tmo_ms);
}

/*
 * Maps len bytes at off in c->src and in c->dst for one copy; false, with
 * nothing left mapped, when either mapping fails.
 */
bool dlx_map_pair_at(struct dlx_chan *c, size_t off, size_t len, dma_addr_t *s,
		     dma_addr_t *d)
{
	struct device *dev = c->chan->device->dev;

	*s = dma_map_single(dev, c->src + off, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, *s))
		return false;
	*d = dma_map_single(dev, c->dst + off, len, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, *d)) {
		dma_unmap_single(dev, *s, len, DMA_TO_DEVICE);
		return false;
	}
	return true;
}

void dlx_unmap_pair(struct dlx_chan *c, size_t len, dma_addr_t s,
		    dma_addr_t d)
{
	struct device *dev = c->chan->device->dev;

	dma_unmap_single(dev, d, len, DMA_FROM_DEVICE);
	dma_unmap_single(dev, s, len, DMA_TO_DEVICE);
}

/*
 * BAR 0 of the PCI function behind c if its driver is `driver` (or either
 * dmalab engine's, ioatdma or idxd, for NULL), or NULL.
 */
void __iomem *dlx_bar0(struct dlx_chan *c, const char *driver)
{
	struct device *dev = c->chan->device->dev;
	const char *name = dev_is_pci(dev) && dev->driver ? dev->driver->name : "";
	void __iomem *bar;

	if (driver ? strcmp(name, driver) :
		     strcmp(name, "ioatdma") && strcmp(name, "idxd")) {
		pr_info("# %s: %s is not an %s channel\n", DLX_NAME, c->name,
			driver ? driver : "ioatdma or idxd");
		return NULL;
	}
	/* the driver has requested the BAR; a second mapping is fine for a test */
	bar = pci_iomap(to_pci_dev(dev), 0, 0);
	if (!bar)
		pr_info("# %s: cannot map BAR 0 of %s\n", DLX_NAME,
			pci_name(to_pci_dev(dev)));
	return bar;
}

/* The channel's register block in ioatdma's BAR 0, or NULL. */
void __iomem *dlx_ioat_map(struct dlx_chan *c, void __iomem **bar)
{
	*bar = dlx_bar0(c, "ioatdma");
	return *bar ? *bar + DLX_IOAT_CHAN_BASE(c->chan->chan_id) : NULL;
}

/* ---- the cost modes: CPU time and per-call samples ------------------- */

/*
 * Idle or (iowait) iowait time of all online CPUs in us, or U64_MAX where the
 * kernel keeps none.
 */
u64 dlx_idle_us(bool iowait)
{
	u64 sum = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		u64 t = iowait ? get_cpu_iowait_time_us(cpu, NULL) :
				 get_cpu_idle_time_us(cpu, NULL);

		if (t == (u64)-1)
			return U64_MAX;
		sum += t;
	}
	return sum;
}

/*
 * The kernel counts idle time in us only once its tick can stop (NO_HZ): not
 * before the clocksource is one that high-resolution timers can use, which
 * under TCG came after /init started (tsc-early, then tsc after its refined
 * calibration, about a second into the boot, a little before or after the
 * exerciser's first window depending on what the boot did).  Waits for that,
 * up to five seconds of the guest's clock; false if it never came.
 */
bool dlx_idle_ready(const char *mode)
{
	unsigned int waited = 0;

	while (dlx_idle_us(false) == U64_MAX) {
		if (waited >= 5000)
			return false;
		msleep(50);
		waited += 50;
	}
	if (waited)
		pr_info("# %s: %s: waited %u ms for the kernel's idle time in us\n",
			DLX_NAME, mode, waited);
	return true;
}

static int dlx_crew_thread(void *data)
{
	struct dlx_crew_member *m = data;
	struct dlx_crew *crew = m->crew;

	wait_for_completion(&crew->start);
	/* released by dlx_crew_stop() without a run: no work */
	if (READ_ONCE(crew->go)) {
		crew->work(crew->arg, m->k);
		if (atomic_dec_and_test(&crew->left))
			complete(&crew->done);
	}
	/* kthread_stop() ends the thread: it must not return before */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

bool dlx_crew_start(struct dlx_crew *crew, unsigned int n, const char *name,
		    void (*work)(void *arg, unsigned int k), void *arg)
{
	unsigned int cpu;

	crew->work = work;
	crew->arg = arg;
	crew->n = min_t(unsigned int, n, DLX_MAX_CREW);
	crew->started = 0;
	crew->go = false;
	init_completion(&crew->start);
	init_completion(&crew->done);
	atomic_set(&crew->left, crew->n);
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (crew->started == crew->n)
			break;
		crew->members[crew->started] = (struct dlx_crew_member){ crew, crew->started };
		t = kthread_create(dlx_crew_thread, &crew->members[crew->started], "dlx-%s/%u",
				   name, cpu);
		if (IS_ERR(t))
			break;
		kthread_bind(t, cpu);
		get_task_struct(t);
		wake_up_process(t);
		crew->tasks[crew->started++] = t;
	}
	if (crew->started == n)
		return true;
	pr_info("# %s: %s: %u of %u threads started\n", DLX_NAME, name, crew->started, n);
	return false;
}

u64 dlx_crew_run(struct dlx_crew *crew, u64 *wall_ns)
{
	u64 idle0 = dlx_idle_us(false), idle1, t0 = ktime_get_ns(), wall;

	WRITE_ONCE(crew->go, true);
	complete_all(&crew->start);
	wait_for_completion(&crew->done);
	*wall_ns = ktime_get_ns() - t0;
	idle1 = dlx_idle_us(false);
	if (idle0 == U64_MAX || idle1 == U64_MAX)
		return 0;
	wall = *wall_ns * num_online_cpus();
	return wall - min(wall, (idle1 - idle0) * NSEC_PER_USEC);
}

void dlx_crew_stop(struct dlx_crew *crew)
{
	/* members still waiting to be released (no run) go without working */
	complete_all(&crew->start);
	while (crew->started--) {
		kthread_stop(crew->tasks[crew->started]);
		put_task_struct(crew->tasks[crew->started]);
	}
	crew->started = 0;
}

static int dlx_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles of n samples (sorted here), the largest and their mean. */
void dlx_calls_stats(u32 *ns, unsigned int n, struct dlx_calls *st)
{
	u64 sum = 0;
	unsigned int i;

	sort(ns, n, sizeof(*ns), dlx_cmp_u32, NULL);
	for (i = 0; i < n; i++)
		sum += ns[i];
	st->p50 = ns[n / 2];
	st->p90 = ns[(u64)n * 90 / 100];
	st->p99 = ns[(u64)n * 99 / 100];
	st->max = ns[n - 1];
	st->mean = div_u64(sum, n);
}

/* The same as one "# TAG op=... size=..." bench line (xdpsync.c's too). */
void dlx_report_calls(const char *tag, const char *op, size_t size, u32 *ns, unsigned int n)
{
	struct dlx_calls st;

	dlx_calls_stats(ns, n, &st);
	pr_info("# %s op=%s size=%zu n=%u p50_ns=%u p90_ns=%u p99_ns=%u max_ns=%u mean_ns=%llu\n",
		tag, op, size, n, st.p50, st.p90, st.p99, st.max, st.mean);
}
