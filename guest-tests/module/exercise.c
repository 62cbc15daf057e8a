// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise - verified memcpy exerciser for dmaengine channels.
 *
 * On load it grabs every DMA_MEMCPY capable channel, runs the test that
 * mode= selects, prints the results as KTAP through printk and releases
 * the channels again.  The module stays loaded; init always returns 0 so
 * the host side judges the KTAP output.
 *
 * mode=memcpy (default): randomised, verified copies on each channel, one
 *	channel after the other.
 * mode=recover: on the first channel only, the driver's error path (a copy
 *	from unassigned bus space) and its completion-timeout recovery (a
 *	channel suspended behind its back), each followed by verified copies
 *	that must complete by interrupt.  I/OAT (ioatdma) specific.
 * mode=inflight-reset: verified copies on every channel, then a batch of
 *	copies on every channel left in flight while the machine resets:
 *	reset_by=cf9 writes the ICH9 reset control register (x86 only),
 *	reset_by=host prints "DMALAB: reset-me" and keeps copies in flight
 *	until the host resets the machine.
 * mode=bench: copy throughput for 16 KiB and 1 MiB copies on 1, 2 and 4
 *	channels in parallel, every copy verified, and the guest CPU's memcpy
 *	for comparison, as "# bench ..." KTAP diagnostic lines.
 * mode=hostile-ring: a guest that keeps one channel busy forever, behind the
 *	driver's back: a null descriptor that points at itself, and DMACOUNT
 *	pushed ahead every millisecond for hostile_ms, so the channel never
 *	catches up.  The guest must keep running meanwhile (its own sleeps
 *	return on time), and the channel must stop when told to.  I/OAT
 *	specific.
 * mode=stale: a copy into a buffer just unmapped (see dlx_mode_stale).
 * mode=order, fail, lostirq, cpuwrite, uaf, cow: races made reproducible by a fault
 *	plan (races.c).
 *
 * Part of the dmalab guest test harness.
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


static unsigned int iterations = 300;
module_param(iterations, uint, 0444);
MODULE_PARM_DESC(iterations, "verified copies per channel (default 300)");

unsigned int max_len = 1024 * 1024;
module_param(max_len, uint, 0444);
MODULE_PARM_DESC(max_len, "largest copy length in bytes (default 1 MiB)");

unsigned long long seed = 1;
module_param(seed, ullong, 0444);
MODULE_PARM_DESC(seed, "seed of the pseudo-random lengths/offsets/data");

unsigned int timeout_ms = 5000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "per-copy completion timeout in ms (default 5000)");

static unsigned int max_channels;
module_param(max_channels, uint, 0444);
MODULE_PARM_DESC(max_channels, "use at most this many channels (0 = all)");

static char *mode = "memcpy";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "memcpy (default), recover, inflight-reset, bench, hostile-ring, stale, or the races.c scenarios order, fail, lostirq, cpuwrite, uaf and cow");

static unsigned int recover_ops = 20;
module_param(recover_ops, uint, 0444);
MODULE_PARM_DESC(recover_ops, "recover: verified copies in each of its copy phases (default 20)");

static unsigned int fast_timeout_ms = 150;
module_param(fast_timeout_ms, uint, 0444);
MODULE_PARM_DESC(fast_timeout_ms,
		 "recover: per-copy timeout after the error and the reset; must stay below ioatdma's completion_timeout (default 150)");

static char *reset_by = "cf9";
module_param(reset_by, charp, 0444);
MODULE_PARM_DESC(reset_by, "inflight-reset: cf9 (the guest resets) or host (ask the host to)");

static unsigned int inflight_ops = 16;
module_param(inflight_ops, uint, 0444);
MODULE_PARM_DESC(inflight_ops, "inflight-reset: copies queued per channel (default 16)");

static unsigned int inflight_len = 64 * 1024;
module_param(inflight_len, uint, 0444);
MODULE_PARM_DESC(inflight_len, "inflight-reset: length of those copies (default 64 KiB)");

static unsigned int bench_depth = 8;
module_param(bench_depth, uint, 0444);
MODULE_PARM_DESC(bench_depth, "bench: copies each channel keeps queued (default 8)");

static unsigned int bench_ops_small = 400;
module_param(bench_ops_small, uint, 0444);
MODULE_PARM_DESC(bench_ops_small, "bench: 16 KiB copies per configuration (default 400)");

static unsigned int bench_ops_large = 100;
module_param(bench_ops_large, uint, 0444);
MODULE_PARM_DESC(bench_ops_large, "bench: 1 MiB copies per configuration (default 100)");

static unsigned long pace_bandwidth;
module_param(pace_bandwidth, ulong, 0444);
MODULE_PARM_DESC(pace_bandwidth,
		 "memcpy: the device's bandwidth= in bytes/s; every copy must then take at least pace_latency_ns + len / pace_bandwidth (0: not checked)");

static unsigned int pace_latency_ns;
module_param(pace_latency_ns, uint, 0444);
MODULE_PARM_DESC(pace_latency_ns, "memcpy: the device's latency-ns= (see pace_bandwidth)");

static unsigned int hostile_ms = 2000;
module_param(hostile_ms, uint, 0444);
MODULE_PARM_DESC(hostile_ms, "mode=hostile-ring: how long the ring runs (ms)");

char *stale_expect = "fault";
module_param(stale_expect, charp, 0444);
MODULE_PARM_DESC(stale_expect,
		 "stale: what a copy into an unmapped buffer does: fault (strict IOTLB flushing) or lands (lazy)");

/* splitmix64: small, good enough, deterministic across runs */
static u64 dlx_next(u64 *state)
{
	u64 z;

	*state += 0x9e3779b97f4a7c15ULL;
	z = *state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform value in [0, n) for n > 0 (modulo bias is irrelevant here) */
static u64 dlx_below(u64 *state, u64 n)
{
	u64 rem;

	div64_u64_rem(dlx_next(state), n, &rem);
	return rem;
}


struct dlx_chan dlx_chans[DLX_MAX_CHANNELS];

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
static long dlx_find_unpoisoned(const u8 *buf, size_t from, size_t to)
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


/*
 * One verified copy.  Returns 0 on success, -EIO on a detected failure
 * (diagnostic already printed); sets c->abandoned when the copy could not
 * be confirmed finished.
 */
/* Copy length of op idx: op 0 is 1 byte, op 1 is max_len, then log-uniform. */
static size_t dlx_pick_len(unsigned int idx, u64 *rng)
{
	size_t lo, hi;

	if (idx == 0)
		return 1;
	if (idx == 1)
		return max_len;
	lo = (size_t)1 << dlx_below(rng, fls(max_len));	/* max_len >= 1 */
	hi = min_t(size_t, 2 * lo - 1, max_len);
	return lo + dlx_below(rng, hi - lo + 1);
}

/*
 * With bandwidth= and latency-ns= the device completes a descriptor no earlier
 * than its modelled time: its data at bandwidth bytes per second, after the
 * one before it, then the latency.  A copy of len bytes (one descriptor or
 * ioatdma's split of it) therefore takes at least latency + len / bandwidth
 * from its submission to its callback, in the guest's clock (QEMU's virtual
 * clock).  2 % is left for the guest's clock calibration; a device that
 * ignored the properties would be many times faster.
 */
static void dlx_check_pace(struct dlx_chan *c, size_t len, u64 elapsed_ns)
{
	u64 modelled = pace_latency_ns, permille;

	if (pace_bandwidth)
		modelled += div64_u64((u64)len * NSEC_PER_SEC, pace_bandwidth);
	if (!modelled)
		return;
	permille = div64_u64(elapsed_ns * 1000, modelled);
	if (!c->paced_min_permille || permille < c->paced_min_permille)
		c->paced_min_permille = permille;
	if (permille < 980) {
		if (!c->paced_early)
			pr_info("# %s: %s: a %zu byte copy completed after %llu ns, before its modelled %llu ns\n",
				DLX_NAME, c->name, len, elapsed_ns, modelled);
		c->paced_early++;
	}
}

static int dlx_one_op(struct dlx_chan *c, unsigned int idx, u64 *rng)
{
	struct dma_chan *chan = c->chan;
	struct device *dev = chan->device->dev;
	unsigned int align = 1U << chan->device->copy_align;
	struct dma_async_tx_descriptor *tx;
	dma_addr_t src_dma, dst_dma;
	dma_cookie_t cookie;
	enum dma_status status;
	unsigned long left;
	size_t len, soff, doff, g_lo, g_hi;
	long bad;
	u64 op_seed, t0, t1;

	len = dlx_pick_len(idx, rng);
	/* dst keeps at least one guard byte on each side */
	soff = dlx_below(rng, c->buf_len - len + 1);
	doff = 1 + dlx_below(rng, c->buf_len - len - 1);
	if (align > 1) {
		soff = round_down(soff, align);
		doff = round_up(doff, align);
		len = max_t(size_t, round_down(len, align), align);
		if (doff + len >= c->buf_len)
			doff -= align;
	}
	op_seed = dlx_next(rng);

	dlx_fill(c->src, c->buf_len, soff, len, op_seed);

	src_dma = dma_map_single(dev, c->src + soff, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, src_dma)) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: mapping src failed\n",
			DLX_NAME, c->name, idx, len, soff, doff);
		return -EIO;
	}
	dst_dma = dma_map_single(dev, c->dst + doff, len, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dst_dma)) {
		dma_unmap_single(dev, src_dma, len, DMA_TO_DEVICE);
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: mapping dst failed\n",
			DLX_NAME, c->name, idx, len, soff, doff);
		return -EIO;
	}

	t0 = ktime_get_ns();
	tx = dmaengine_prep_dma_memcpy(chan, dst_dma, src_dma, len,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: prep_dma_memcpy returned NULL\n",
			DLX_NAME, c->name, idx, len, soff, doff);
		goto unmap_fail;
	}
	reinit_completion(&c->done);
	c->result = DMA_TRANS_NOERROR;
	tx->callback_result = dlx_callback;
	tx->callback_param = c;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: submit error %d\n",
			DLX_NAME, c->name, idx, len, soff, doff, cookie);
		goto unmap_fail;
	}
	dma_async_issue_pending(chan);

	left = wait_for_completion_timeout(&c->done,
					   msecs_to_jiffies(c->tmo_ms));
	t1 = ktime_get_ns();
	status = dma_async_is_tx_complete(chan, cookie, NULL, NULL);

	if (!left) {
		if (status != DMA_COMPLETE) {
			pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: timed out after %u ms (status=%d), abandoning channel\n",
				DLX_NAME, c->name, idx, len, soff, doff,
				c->tmo_ms, status);
			c->abandoned = true;
			return -EIO;
		}
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: copy complete but no callback within %u ms\n",
			DLX_NAME, c->name, idx, len, soff, doff, c->tmo_ms);
		goto unmap_fail;
	}
	if (status != DMA_COMPLETE) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: callback ran but status=%d\n",
			DLX_NAME, c->name, idx, len, soff, doff, status);
		goto unmap_fail;
	}
	if (c->result != DMA_TRANS_NOERROR) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: transfer result %s\n",
			DLX_NAME, c->name, idx, len, soff, doff,
			dlx_result_name(c->result));
		goto unmap_fail;
	}

	if (pace_bandwidth || pace_latency_ns)
		dlx_check_pace(c, len, t1 - t0);
	dma_unmap_single(dev, dst_dma, len, DMA_FROM_DEVICE);
	dma_unmap_single(dev, src_dma, len, DMA_TO_DEVICE);

	c->ops++;
	c->bytes += len;
	c->dma_ns += t1 - t0;

	g_lo = doff > DLX_GUARD ? doff - DLX_GUARD : 0;
	g_hi = min_t(size_t, doff + len + DLX_GUARD, c->buf_len);

	if (memcmp(c->dst + doff, c->src + soff, len)) {
		size_t i, first = len, nbad = 0;

		for (i = 0; i < len; i++) {
			if (c->dst[doff + i] != c->src[soff + i]) {
				if (first == len)
					first = i;
				nbad++;
			}
		}
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: data mismatch at byte %zu (expected 0x%02x got 0x%02x), %zu bad bytes\n",
			DLX_NAME, c->name, idx, len, soff, doff, first,
			c->src[soff + first], c->dst[doff + first], nbad);
		goto restore_fail;
	}
	bad = dlx_find_unpoisoned(c->dst, g_lo, doff);
	if (bad < 0)
		bad = dlx_find_unpoisoned(c->dst, doff + len, g_hi);
	if (bad >= 0) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: guard byte at dst offset %ld overwritten (0x%02x), %ld bytes %s the range\n",
			DLX_NAME, c->name, idx, len, soff, doff, bad,
			c->dst[bad],
			(size_t)bad < doff ? (long)(doff - bad) :
					     (long)(bad - (doff + len) + 1),
			(size_t)bad < doff ? "before" : "after");
		goto restore_fail;
	}
	/* restore the poison for the next op */
	memset(c->dst + g_lo, DLX_POISON, g_hi - g_lo);
	return 0;

restore_fail:
	memset(c->dst + g_lo, DLX_POISON, g_hi - g_lo);
	return -EIO;

unmap_fail:
	dma_unmap_single(dev, dst_dma, len, DMA_FROM_DEVICE);
	dma_unmap_single(dev, src_dma, len, DMA_TO_DEVICE);
	memset(c->dst, DLX_POISON, c->buf_len);
	return -EIO;
}

static u64 dlx_mbps_x10(u64 bytes, u64 ns)
{
	/* bytes/ns * 1000 = MB/s (10^6 bytes); keep one decimal */
	if (!ns)
		return 0;
	return div64_u64(bytes * 10000ULL, ns);
}

/*
 * count verified copies on c (buffers allocated), each waited for at most
 * c->tmo_ms.  True when all of them passed; stops early when a copy had to
 * be abandoned or after DLX_MAX_FAILS failures.
 */
bool dlx_copies(struct dlx_chan *c, unsigned int count, u64 *rng)
{
	unsigned int i, failed = 0, ops0 = c->ops;

	for (i = 0; i < count; i++) {
		if (dlx_one_op(c, c->seq++, rng)) {
			c->failures++;
			failed++;
			if (c->abandoned)
				break;
			if (failed >= DLX_MAX_FAILS) {
				pr_info("# %s: %s: giving up after %u failed copies\n",
					DLX_NAME, c->name, failed);
				break;
			}
		}
		cond_resched();
	}
	return c->ops - ops0 == count;
}

void dlx_chan_report(struct dlx_chan *c, u64 start)
{
	u64 mbps;
	u32 frac;

	c->wall_ns = ktime_get_ns() - start;
	mbps = div_u64_rem(dlx_mbps_x10(c->bytes, c->dma_ns), 10, &frac);
	pr_info("# %s: %s ops=%u bytes=%llu ns=%llu wall_ns=%llu MB/s=%llu.%u failures=%u\n",
		DLX_NAME, c->name, c->ops, c->bytes, c->dma_ns, c->wall_ns,
		mbps, frac, c->failures);
}

u64 dlx_chan_rng(unsigned int chan_idx)
{
	return seed ^ (0x5851f42d4c957f2dULL * (chan_idx + 1));
}

static bool dlx_run_channel(struct dlx_chan *c, unsigned int chan_idx)
{
	u64 rng = dlx_chan_rng(chan_idx);
	u64 start = ktime_get_ns();

	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		pr_info("# %s: %s: cannot allocate 2 x %zu byte buffers (order %u)\n",
			DLX_NAME, c->name, (size_t)PAGE_SIZE << c->order,
			c->order);
		c->failures++;
		goto report;
	}
	dlx_copies(c, iterations, &rng);
	dlx_free_buffers(c);
report:
	dlx_chan_report(c, start);
	return c->failures == 0 && c->ops == iterations;
}

/*
 * Baseline for the summary: the CPU copying lengths drawn the same way as the
 * channels' (iterations of them), between buffers of the same size, each copy
 * timed on its own like a DMA copy is.
 */
static void dlx_cpu_baseline(struct dlx_chan *c)
{
	u64 rng = seed ^ 0x5851f42d4c957f2dULL, t0, ns = 0, bytes = 0, mbps;
	size_t len, soff, doff;
	unsigned int i;
	u32 frac;

	if (dlx_alloc_buffers(c))
		return;
	for (i = 0; i < iterations; i++) {
		len = dlx_pick_len(i, &rng);
		soff = dlx_below(&rng, c->buf_len - len + 1);
		doff = dlx_below(&rng, c->buf_len - len + 1);
		t0 = ktime_get_ns();
		memcpy(c->dst + doff, c->src + soff, len);
		ns += ktime_get_ns() - t0;
		bytes += len;
		cond_resched();
	}
	dlx_free_buffers(c);
	mbps = div_u64_rem(dlx_mbps_x10(bytes, ns), 10, &frac);
	pr_info("# %s: cpu_memcpy ops=%u bytes=%llu ns=%llu MB/s=%llu.%u\n",
		DLX_NAME, iterations, bytes, ns, mbps, frac);
}

void dlx_summary(unsigned int first, unsigned int count)
{
	unsigned int i, ops = 0, fail = 0;
	u64 bytes = 0, ns = 0, mbps;
	u32 frac;

	for (i = first; i < first + count; i++) {
		ops += dlx_chans[i].ops;
		fail += dlx_chans[i].failures;
		bytes += dlx_chans[i].bytes;
		ns += dlx_chans[i].dma_ns;
	}
	mbps = div_u64_rem(dlx_mbps_x10(bytes, ns), 10, &frac);
	pr_info("# %s: summary channels=%u ops=%u bytes=%llu ns=%llu MB/s=%llu.%u failures=%u\n",
		DLX_NAME, count, ops, bytes, ns, mbps, frac, fail);
}

/* mode=memcpy: verified copies on each channel in turn. */
static void dlx_mode_memcpy(unsigned int n)
{
	unsigned int i;

	bool paced = pace_bandwidth || pace_latency_ns;
	unsigned int early = 0, ops = 0;
	u64 min_permille = 0;

	pr_info("1..%u\n", n + paced);
	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		bool ok = dlx_run_channel(c, i);

		pr_info("%sok %u %s\n", ok ? "" : "not ", i + 1, c->name);
		early += c->paced_early;
		ops += c->ops;
		if (c->paced_min_permille &&
		    (!min_permille || c->paced_min_permille < min_permille))
			min_permille = c->paced_min_permille;
	}
	if (paced) {
		pr_info("# %s: paced: %u copies, %u completed before latency + len / bandwidth (%u ns, %lu B/s); smallest elapsed / modelled %llu.%03llu\n",
			DLX_NAME, ops, early, pace_latency_ns, pace_bandwidth,
			div_u64(min_permille, 1000), min_permille % 1000);
		pr_info("%sok %u paced\n", ops && !early ? "" : "not ", n + 1);
	}
	dlx_summary(0, n);
	if (!dlx_chans[0].abandoned) {
		struct dlx_chan cpu = { .name = "cpu" };

		dlx_cpu_baseline(&cpu);
	}
}

/* ---- copies tracked by callback, several in flight (inflight-reset, bench) */

struct dlx_op {
	struct dlx_chan *c;
	dma_addr_t src_dma;
	dma_addr_t dst_dma;
	size_t len;
	bool done;
	enum dmaengine_tx_result result;
};

static DECLARE_WAIT_QUEUE_HEAD(dlx_wq);
static atomic_t dlx_callbacks = ATOMIC_INIT(0);
static bool dlx_pinned;	/* something may still call back: never unload */

static void dlx_op_callback(void *param, const struct dmaengine_result *res)
{
	struct dlx_op *op = param;

	op->result = res ? res->result : DMA_TRANS_NOERROR;
	/* publishes result; pairs with dlx_op_done() */
	smp_store_release(&op->done, true);
	atomic_inc(&dlx_callbacks);
	wake_up(&dlx_wq);
}

static bool dlx_op_done(struct dlx_op *op)
{
	/* pairs with dlx_op_callback(): result is valid once done is */
	return smp_load_acquire(&op->done);
}

/* Prepares and submits the mapped op on its channel; the caller issues it. */
static int dlx_op_submit(struct dlx_op *op)
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
static long dlx_compare(const u8 *a, const u8 *b, size_t n)
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

/* ---- mode=recover ---------------------------------------------------- */

/* I/OAT channel registers (drivers/dma/ioat/registers.h) */
#define DLX_IOAT_CHAN_BASE(id)		(0x80 * ((id) + 1))
#define DLX_IOAT_CHANCMD		0x04	/* 8 bit */
#define DLX_IOAT_CHANCMD_SUSPEND	0x04
#define DLX_IOAT_CHANSTS		0x08	/* 64 bit */
#define DLX_IOAT_CHANSTS_STATE		0x7
#define DLX_IOAT_CHANSTS_SUSPENDED	0x2
#define DLX_IOAT_CHAINADDR		0x10	/* 64 bit */

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
	struct dma_async_tx_descriptor *tx;
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
	tx = dmaengine_prep_dma_memcpy(chan, dst_dma, DLX_BAD_DMA_ADDR,
				       DLX_ERR_LEN,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx) {
		pr_info("# %s: read-error: prep_dma_memcpy returned NULL\n",
			DLX_NAME);
		goto unmap;
	}
	reinit_completion(&c->done);
	c->result = DMA_TRANS_NOERROR;
	tx->callback_result = dlx_callback;
	tx->callback_param = c;
	t0 = ktime_get_ns();
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: read-error: submit error %d\n", DLX_NAME, cookie);
		goto unmap;
	}
	dma_async_issue_pending(chan);
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
	struct dma_async_tx_descriptor *tx;
	dma_addr_t src_dma, dst_dma;
	dma_cookie_t cookie;
	unsigned long end;
	u64 sts, t0, chainaddr, chainaddr_after;
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
	tx = dmaengine_prep_dma_memcpy(chan, dst_dma, src_dma, DLX_STALL_LEN,
				       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx) {
		pr_info("# %s: timeout-recovery: prep_dma_memcpy returned NULL\n",
			DLX_NAME);
		goto unmap;
	}
	reinit_completion(&c->done);
	c->result = DMA_TRANS_NOERROR;
	tx->callback_result = dlx_callback;
	tx->callback_param = c;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: timeout-recovery: submit error %d\n", DLX_NAME,
			cookie);
		goto unmap;
	}
	dma_async_issue_pending(chan);
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

	end = jiffies + msecs_to_jiffies(DLX_RESET_WAIT_MS);
	while ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED &&
	       time_before(jiffies, end)) {
		usleep_range(10000, 20000);
		sts = readq(regs + DLX_IOAT_CHANSTS);
	}
	if ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED) {
		/* the copy may go on one day: leak its buffers */
		pr_info("# %s: timeout-recovery: still SUSPENDED after %u ms: ioatdma did not reset the channel\n",
			DLX_NAME, DLX_RESET_WAIT_MS);
		c->abandoned = true;
		return false;
	}
	/* ioat_reboot_chan() clears IOAT_CHAN_DOWN right after the restart */
	msleep(20);
	chainaddr_after = readq(regs + DLX_IOAT_CHAINADDR);
	pr_info("# %s: %s: left SUSPENDED after %llu ms, CHANSTS %#llx, CHAINADDR %#llx -> %#llx; stalled copy %s\n",
		DLX_NAME, c->name, div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC),
		sts, chainaddr, chainaddr_after,
		completion_done(&c->done) ? dlx_result_name(c->result) :
					    "not called back");
	ok = true;
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

/* The channel's register block in ioatdma's BAR 0, or NULL. */
void __iomem *dlx_ioat_map(struct dlx_chan *c, void __iomem **bar)
{
	struct device *dev = c->chan->device->dev;
	struct pci_dev *pdev;

	if (!dev_is_pci(dev) || !dev->driver ||
	    strcmp(dev->driver->name, "ioatdma")) {
		pr_info("# %s: %s is not an ioatdma channel\n", DLX_NAME,
			c->name);
		return NULL;
	}
	pdev = to_pci_dev(dev);
	/* ioatdma has requested the BAR; a second mapping is fine for a test */
	*bar = pci_iomap(pdev, 0, 0);
	if (!*bar) {
		pr_info("# %s: cannot map BAR 0 of %s\n", DLX_NAME,
			pci_name(pdev));
		return NULL;
	}
	return *bar + DLX_IOAT_CHAN_BASE(c->chan->chan_id);
}

static void dlx_mode_recover(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	void __iomem *bar = NULL, *regs;
	u64 rng = dlx_chan_rng(0), start = ktime_get_ns();
	bool ok;

	pr_info("1..5\n");
	pr_info("# %s: recover on %s, %u copies per phase, %u ms per copy after the error and the reset\n",
		DLX_NAME, c->name, recover_ops, fast_timeout_ms);
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		pr_info("# %s: %s: cannot allocate 2 x %zu byte buffers\n",
			DLX_NAME, c->name, (size_t)PAGE_SIZE << c->order);
		c->failures++;
		pr_info("not ok 1 copies-before\n");
		pr_info("not ok 2 read-error # no buffers\n");
		pr_info("not ok 3 copies-after-error # no buffers\n");
		pr_info("not ok 4 timeout-recovery # no buffers\n");
		pr_info("not ok 5 copies-after-reset # no buffers\n");
		goto out;
	}

	/* a: the channel works */
	ok = dlx_copies(c, recover_ops, &rng);
	pr_info("%sok 1 copies-before\n", ok ? "" : "not ");

	/* b: error path */
	ok = !c->abandoned && dlx_read_error(c);
	if (!ok)
		c->failures++;
	pr_info("%sok 2 read-error\n", ok ? "" : "not ");

	/*
	 * c: the channel works again after ioat_eh's reset and restart.  Each
	 * copy must complete within fast_timeout_ms, less than ioatdma's
	 * completion_timeout (200 ms): a completion that only arrives through
	 * the driver's timer-driven cleanup, because the channel does not
	 * interrupt any more, fails the copy.
	 */
	c->tmo_ms = fast_timeout_ms;
	ok = !c->abandoned && dlx_copies(c, recover_ops, &rng);
	pr_info("%sok 3 copies-after-error\n", ok ? "" : "not ");

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
	pr_info("%sok 4 timeout-recovery\n", ok ? "" : "not ");

	/*
	 * e: after the timeout recovery the channel still completes copies
	 * by interrupt (the driver does not re-arm the channel's interrupt
	 * before the next completion), same fast_timeout_ms as in c.
	 */
	if (c->abandoned) {
		pr_info("not ok 5 copies-after-reset # channel abandoned\n");
	} else {
		ok = dlx_copies(c, recover_ops, &rng);
		pr_info("%sok 5 copies-after-reset\n", ok ? "" : "not ");
	}
	dlx_free_buffers(c);
out:
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}

/* ---- mode=hostile-ring ------------------------------------------------ */

#define DLX_IOAT_DMACOUNT		0x06	/* 16 bit */
#define DLX_IOAT_CHANCMD_RESET		0x20
#define DLX_IOAT_NULL_DESC_CTL		0x20	/* null, no interrupt, no write-back */
#define DLX_IOAT_CHANSTS_ACTIVE		0x0

/* ---- mode=stale ------------------------------------------------------ */

bool dlx_start_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		    size_t len)
{
	struct dma_async_tx_descriptor *tx;

	tx = dmaengine_prep_dma_memcpy(c->chan, dst, src, len,
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
	return true;
}

/* One copy on channel c; false when no callback came within tmo_ms. */
bool dlx_copy_wait(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len)
{
	return dlx_start_copy(c, dst, src, len) &&
	       wait_for_completion_timeout(&c->done,
					   msecs_to_jiffies(c->tmo_ms)) != 0;
}

/*
 * Use after unmap, a driver bug made on purpose: a copy into a buffer whose
 * DMA mapping was just removed.  The first copy leaves the buffer's
 * translation in the IOMMU's IOTLB.  Under strict flushing (iommu.strict=1)
 * the unmap's IOTLB invalidation has completed before dma_unmap_single()
 * returns, so the second copy faults at the IOMMU and the channel reports a
 * write error; under lazy flushing the invalidation is deferred and the copy
 * lands in the page through the stale IOTLB entry (dmalab-vtd's audit counts
 * it).  stale_expect says which the scenario boots into.
 */
static void dlx_mode_stale(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	bool lands = !strcmp(stale_expect, "lands");
	dma_addr_t src_dma, dst_dma;
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0);
	bool came, landed, ok;

	pr_info("1..3\n");
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		pr_info("not ok 1 copy-while-mapped # no buffers\n");
		pr_info("not ok 2 copy-after-unmap # no buffers\n");
		pr_info("not ok 3 copies-after # no buffers\n");
		c->failures++;
		goto out;
	}
	memset(c->src, 0xa5, PAGE_SIZE);
	memset(c->dst, 0, PAGE_SIZE);
	src_dma = dma_map_single(dev, c->src, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, src_dma))
		goto nomap;
	dst_dma = dma_map_single(dev, c->dst, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dst_dma)) {
		dma_unmap_single(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
		goto nomap;
	}

	came = dlx_copy_wait(c, dst_dma, src_dma, PAGE_SIZE);
	ok = came && c->result == DMA_TRANS_NOERROR && c->dst[0] == 0xa5 &&
	     c->dst[PAGE_SIZE - 1] == 0xa5;
	if (!ok)
		c->failures++;
	pr_info("%sok 1 copy-while-mapped\n", ok ? "" : "not ");

	dma_unmap_single(dev, dst_dma, PAGE_SIZE, DMA_FROM_DEVICE);
	memset(c->dst, 0, PAGE_SIZE);
	memset(c->src, 0x5a, PAGE_SIZE);
	dma_sync_single_for_device(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
	came = dlx_copy_wait(c, dst_dma, src_dma, PAGE_SIZE);
	landed = c->dst[0] == 0x5a && c->dst[PAGE_SIZE - 1] == 0x5a;
	pr_info("# %s: stale: copy into unmapped %pad: %s, result %s, data %s\n",
		DLX_NAME, &dst_dma, came ? "called back" : "no callback",
		dlx_result_name(c->result),
		landed ? "landed in the page" : "not in the page");
	if (lands)
		ok = came && c->result == DMA_TRANS_NOERROR && landed;
	else
		ok = came && c->result == DMA_TRANS_WRITE_FAILED && !landed;
	if (!came)
		c->abandoned = true;	/* never free what a copy may still reach */
	if (!ok)
		c->failures++;
	pr_info("%sok 2 copy-after-unmap # expected: %s\n", ok ? "" : "not ",
		stale_expect);
	dma_unmap_single(dev, src_dma, PAGE_SIZE, DMA_TO_DEVICE);
	/*
	 * The channel carries on (after ioatdma's error path under strict
	 * flushing); this also lets the driver retire the null descriptor its
	 * restart queued before the channel is released.  ioat_eh calls the
	 * failed copy back before it aborts what is queued and restarts the
	 * channel (drivers/dma/ioat/dma.c), so a copy submitted at once could
	 * be aborted with it: give the error path time to finish first.
	 */
	msleep(50);
	ok = !c->abandoned && dlx_copies(c, 10, &rng);
	pr_info("%sok 3 copies-after\n", ok ? "" : "not ");
	if (!c->abandoned)
		dlx_free_buffers(c);
	goto out;
nomap:
	pr_info("not ok 1 copy-while-mapped # mapping failed\n");
	pr_info("not ok 2 copy-after-unmap # mapping failed\n");
	pr_info("not ok 3 copies-after # mapping failed\n");
	c->failures++;
	dlx_free_buffers(c);
out:
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}

static void dlx_mode_hostile_ring(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	void __iomem *bar = NULL, *regs;
	unsigned long start, end, late = 0;
	unsigned int writes = 0;
	dma_addr_t ring_dma;
	__le64 *ring;
	u64 sts;
	u16 count = 0;
	bool ok;

	pr_info("1..2\n");
	regs = dlx_ioat_map(c, &bar);
	ring = regs ? dma_alloc_coherent(dev, 64, &ring_dma, GFP_KERNEL) : NULL;
	if (!ring) {
		pr_info("not ok 1 ring-runs # no registers or descriptor memory\n");
		pr_info("not ok 2 channel-stops # skipped\n");
		goto out;
	}
	/* size 1, null, next = itself */
	memset(ring, 0, 64);
	ring[0] = cpu_to_le64(1 | (u64)DLX_IOAT_NULL_DESC_CTL << 32);
	ring[3] = cpu_to_le64(ring_dma);

	/* Stop the channel ioatdma left idle, point it at the ring, start it. */
	writeb(DLX_IOAT_CHANCMD_SUSPEND, regs + DLX_IOAT_CHANCMD);
	lo_hi_writeq(ring_dma, regs + DLX_IOAT_CHAINADDR);
	count = 0xfff0;
	writew(count, regs + DLX_IOAT_DMACOUNT);
	pr_info("# %s: %s: self-looping null descriptor at %pad, DMACOUNT pushed ahead every ms for %u ms\n",
		DLX_NAME, c->name, &ring_dma, hostile_ms);

	/*
	 * The guest goes on with its own work: every millisecond it sleeps,
	 * wakes up and pushes DMACOUNT further ahead.  A device that held
	 * QEMU (or this vCPU) would make the sleeps late.
	 */
	start = jiffies;
	end = start + msecs_to_jiffies(hostile_ms);
	while (time_before(jiffies, end)) {
		unsigned long t0 = jiffies;

		usleep_range(1000, 1100);
		if (jiffies - t0 > msecs_to_jiffies(100))
			late++;
		count += 0xfff0;
		writew(count, regs + DLX_IOAT_DMACOUNT);
		writes++;
	}
	sts = lo_hi_readq(regs + DLX_IOAT_CHANSTS);
	ok = writes > 0 && (sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_ACTIVE;
	pr_info("%sok 1 ring-runs # %u doorbells in %u ms, %lu sleeps over 100 ms late, CHANSTS %#llx\n",
		ok && !late ? "" : "not ", writes,
		jiffies_to_msecs(jiffies - start), late, (unsigned long long)sts);

	/* Told to stop, it stops at once; a reset hands it back to ioatdma. */
	writeb(DLX_IOAT_CHANCMD_SUSPEND, regs + DLX_IOAT_CHANCMD);
	sts = lo_hi_readq(regs + DLX_IOAT_CHANSTS);
	ok = (sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED;
	writeb(DLX_IOAT_CHANCMD_RESET, regs + DLX_IOAT_CHANCMD);
	pr_info("%sok 2 channel-stops # CHANSTS %#llx after SUSPEND\n",
		ok ? "" : "not ", (unsigned long long)sts);
	dma_free_coherent(dev, 64, ring, ring_dma);
out:
	if (bar)
		pci_iounmap(to_pci_dev(dev), bar);
}

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

static void dlx_mode_inflight_reset(unsigned int n)
{
	bool host = !strcmp(reset_by, "host");
	unsigned int i, j, count, inflight, test = n + 1;
	struct dlx_op *ops;
	unsigned long end;
	bool ok = true;

	pr_info("1..%u\n", n + 1);
	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		bool cok = dlx_run_channel(c, i);

		pr_info("%sok %u %s\n", cok ? "" : "not ", i + 1, c->name);
		ok &= cok;
	}
	dlx_summary(0, n);
	if (!host && strcmp(reset_by, "cf9")) {
		pr_info("not ok %u inflight-reset # unknown reset_by=%s\n", test,
			reset_by);
		return;
	}
	if (!ok) {
		pr_info("not ok %u inflight-reset # a channel failed\n",
			test);
		return;
	}

	if (!inflight_len)
		inflight_len = 1;
	count = n * inflight_ops;
	ops = kcalloc(count, sizeof(*ops), GFP_KERNEL);
	if (!ops) {
		pr_info("not ok %u inflight-reset # no memory\n", test);
		return;
	}
	/* per channel: one source of inflight_len, inflight_ops destinations */
	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		struct device *dev = c->chan->device->dev;

		if (dlx_alloc_buffers(c)) {
			pr_info("not ok %u inflight-reset # no buffers\n", test);
			goto leak;
		}
		if ((size_t)inflight_ops * inflight_len > c->buf_len) {
			pr_info("not ok %u inflight-reset # %u x %u bytes do not fit the %zu byte buffer\n",
				test, inflight_ops, inflight_len, c->buf_len);
			goto leak;
		}
		dlx_fill(c->src, c->buf_len, 0, inflight_len, seed + i);
		for (j = 0; j < inflight_ops; j++) {
			struct dlx_op *op = &ops[i * inflight_ops + j];

			op->c = c;
			op->len = inflight_len;
			op->done = true;
			op->src_dma = dma_map_single(dev, c->src, inflight_len,
						     DMA_TO_DEVICE);
			op->dst_dma = dma_map_single(dev,
						     c->dst + j * inflight_len,
						     inflight_len,
						     DMA_FROM_DEVICE);
			if (dma_mapping_error(dev, op->src_dma) ||
			    dma_mapping_error(dev, op->dst_dma)) {
				pr_info("not ok %u inflight-reset # mapping failed\n",
					test);
				goto leak;
			}
		}
	}
	for (i = 0; i < count; i++) {
		if (dlx_op_submit(&ops[i])) {
			ops[i].done = true;
			pr_info("not ok %u inflight-reset # submitting copy %u failed\n",
				test, i);
			goto leak;
		}
	}
	for (i = 0; i < n; i++)
		dma_async_issue_pending(dlx_chans[i].chan);
	for (inflight = 0, i = 0; i < count; i++)
		inflight += !dlx_op_done(&ops[i]);
	pr_info("%sok %u inflight-reset # %u of %u copies in flight\n",
		inflight ? "" : "not ", test, inflight, count);

	if (!host) {
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
		goto drain;
	}

	/* Keep copies in flight until the host resets the machine. */
	pr_info("DMALAB: reset-me\n");
	end = jiffies + DLX_HOST_RESET_WAIT_S * HZ;
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
drain:
	if (!dlx_ops_drain(ops, count))
		goto leak;
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
	return;
leak:
	/* copies may be in flight: keep their buffers and channels */
	for (i = 0; i < n; i++)
		dlx_chans[i].abandoned = true;
}

/* ---- mode=bench ------------------------------------------------------ */

#define DLX_BENCH_SRCS		4
#define DLX_BENCH_MAX_LEN	(1024 * 1024)

static u8 *dlx_bench_src[DLX_BENCH_SRCS];

static void dlx_rate_x10(u64 count, u64 ns, u64 *whole, u32 *frac)
{
	/* count per second, one decimal */
	*whole = div_u64_rem(ns ? div64_u64(count * 10 * NSEC_PER_SEC, ns) : 0,
			     10, frac);
}

/* One configuration of mode=bench and its buffers. */
struct dlx_bench {
	const char *name;
	unsigned int nch;	/* channels 0..nch-1 */
	unsigned int depth;	/* copies each keeps queued */
	size_t len;
	unsigned int total;
	struct page **dst;	/* a destination per copy */
	struct dlx_op *ops;
	unsigned int *fifo;	/* per channel: its queued copies, in order */
	unsigned int *qhead;
	unsigned int *qlen;
};

/*
 * Copies 0..count-1 of b, spread over its channels (each completes its
 * copies in order), until all have completed.  Counts them in *reaped and
 * the failed ones in *failed; -ETIMEDOUT when nothing completed for
 * timeout_ms (copies may still be in flight then).
 */
static int dlx_bench_pass(struct dlx_bench *b, unsigned int count,
			  unsigned int *reaped, unsigned int *failed)
{
	unsigned int next = 0, ch;

	*reaped = 0;
	*failed = 0;
	while (*reaped < next || (next < count && !*failed)) {
		int seen = atomic_read(&dlx_callbacks);
		bool progress = false;

		for (ch = 0; ch < b->nch; ch++) {
			struct dlx_chan *c = &dlx_chans[ch];
			struct device *dev = c->chan->device->dev;
			unsigned int *q = b->fifo + ch * b->depth;
			bool issue = false;

			while (b->qlen[ch]) {
				struct dlx_op *op = &b->ops[q[b->qhead[ch]]];

				if (!dlx_op_done(op))
					break;
				dma_unmap_single(dev, op->dst_dma, b->len,
						 DMA_FROM_DEVICE);
				dma_unmap_single(dev, op->src_dma, b->len,
						 DMA_TO_DEVICE);
				if (op->result != DMA_TRANS_NOERROR &&
				    (*failed)++ < 4)
					pr_info("# %s: %s: copy %ld on %s: result %s\n",
						DLX_NAME, b->name,
						(long)(op - b->ops), c->name,
						dlx_result_name(op->result));
				b->qhead[ch] = (b->qhead[ch] + 1) % b->depth;
				b->qlen[ch]--;
				(*reaped)++;
				progress = true;
			}
			while (b->qlen[ch] < b->depth && next < count &&
			       !*failed) {
				struct dlx_op *op = &b->ops[next];
				void *src = dlx_bench_src[next % DLX_BENCH_SRCS];
				void *dst = page_address(b->dst[next]);
				const char *why = NULL;

				op->c = c;
				op->len = b->len;
				op->src_dma = dma_map_single(dev, src, b->len,
							     DMA_TO_DEVICE);
				if (dma_mapping_error(dev, op->src_dma)) {
					why = "mapping src";
				} else {
					op->dst_dma = dma_map_single(dev, dst,
								     b->len,
								     DMA_FROM_DEVICE);
					if (dma_mapping_error(dev, op->dst_dma)) {
						dma_unmap_single(dev, op->src_dma,
								 b->len,
								 DMA_TO_DEVICE);
						why = "mapping dst";
					} else if (dlx_op_submit(op)) {
						dma_unmap_single(dev, op->dst_dma,
								 b->len,
								 DMA_FROM_DEVICE);
						dma_unmap_single(dev, op->src_dma,
								 b->len,
								 DMA_TO_DEVICE);
						why = "submitting";
					}
				}
				if (why) {
					pr_info("# %s: %s: copy %u: %s failed\n",
						DLX_NAME, b->name, next, why);
					(*failed)++;
					break;
				}
				q[(b->qhead[ch] + b->qlen[ch]) % b->depth] = next;
				b->qlen[ch]++;
				next++;
				issue = true;
			}
			if (issue)
				dma_async_issue_pending(c->chan);
		}
		if (progress || *reaped == next)
			continue;
		if (!wait_event_timeout(dlx_wq,
					atomic_read(&dlx_callbacks) != seen,
					msecs_to_jiffies(timeout_ms))) {
			pr_info("# %s: %s: no completion within %u ms, %u copies outstanding\n",
				DLX_NAME, b->name, timeout_ms, next - *reaped);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/*
 * One configuration: total copies of len bytes spread over nch channels,
 * each channel keeping bench_depth copies queued, after an untimed warm-up
 * round (the first mappings, IOMMU page tables and such).  Every copy has
 * its own poisoned destination, verified after the timed part.  Adds to the
 * first channel's statistics for the summary.
 */
static bool dlx_bench_config(unsigned int test, unsigned int nch, size_t len,
			     unsigned int total, bool cpu)
{
	struct dlx_bench b = {
		.nch = nch,
		.depth = max(bench_depth, 1U),
		.len = len,
		.total = total,
	};
	unsigned int order = get_order(len), reaped = 0, failed = 0, i, warm;
	u64 t0, ns, whole, mb;
	u32 frac, mfrac;
	bool ok = false;
	char name[32];

	snprintf(name, sizeof(name), "bench-%zuKiB-%uch", len / 1024, nch);
	b.name = name;
	b.dst = kcalloc(total, sizeof(*b.dst), GFP_KERNEL);
	b.ops = kcalloc(total, sizeof(*b.ops), GFP_KERNEL);
	b.fifo = kcalloc(nch * b.depth, sizeof(*b.fifo), GFP_KERNEL);
	b.qhead = kcalloc(nch, sizeof(*b.qhead), GFP_KERNEL);
	b.qlen = kcalloc(nch, sizeof(*b.qlen), GFP_KERNEL);
	if (!b.dst || !b.ops || !b.fifo || !b.qhead || !b.qlen) {
		pr_info("# %s: %s: no memory\n", DLX_NAME, name);
		goto out;
	}
	for (i = 0; i < total; i++) {
		b.dst[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		if (!b.dst[i]) {
			pr_info("# %s: %s: cannot allocate %u destinations of %zu bytes\n",
				DLX_NAME, name, total, len);
			goto out;
		}
	}

	warm = min(total, nch * b.depth);
	if (dlx_bench_pass(&b, warm, &reaped, &failed))
		goto stuck;
	if (failed)
		goto report;
	/* poison after the warm-up: a copy the timed round misses shows */
	for (i = 0; i < total; i++)
		memset(page_address(b.dst[i]), DLX_POISON, len);

	t0 = ktime_get_ns();
	if (dlx_bench_pass(&b, total, &reaped, &failed))
		goto stuck;
	ns = ktime_get_ns() - t0;

	/* verify every copy (after the timed part) */
	for (i = 0; i < reaped; i++) {
		const u8 *want = dlx_bench_src[i % DLX_BENCH_SRCS];
		const u8 *got = page_address(b.dst[i]);
		long bad;

		if (b.ops[i].result != DMA_TRANS_NOERROR)
			continue;
		bad = dlx_compare(got, want, len);
		if (bad >= 0 && failed++ < 4)
			pr_info("# %s: %s: copy %u on %s: data mismatch at byte %ld (expected 0x%02x got 0x%02x)\n",
				DLX_NAME, name, i, b.ops[i].c->name, bad,
				want[bad], got[bad]);
		cond_resched();
	}
	dlx_chans[0].ops += reaped - min(failed, reaped);
	dlx_chans[0].bytes += (u64)(reaped - min(failed, reaped)) * len;
	dlx_chans[0].dma_ns += ns;

	dlx_rate_x10(reaped, ns, &whole, &frac);
	mb = div_u64_rem(dlx_mbps_x10((u64)reaped * len, ns), 10, &mfrac);
	pr_info("# bench size=%zu channels=%u ops=%u ns=%llu ops_per_s=%llu.%u MB_per_s=%llu.%u\n",
		len, nch, reaped, ns, whole, frac, mb, mfrac);

	if (cpu) {
		/* the guest CPU copying the same lengths between the same buffers */
		t0 = ktime_get_ns();
		for (i = 0; i < total; i++)
			memcpy(page_address(b.dst[i]),
			       dlx_bench_src[i % DLX_BENCH_SRCS], len);
		ns = ktime_get_ns() - t0;
		dlx_rate_x10(total, ns, &whole, &frac);
		mb = div_u64_rem(dlx_mbps_x10((u64)total * len, ns), 10,
				 &mfrac);
		pr_info("# bench-cpu size=%zu ops=%u ns=%llu ops_per_s=%llu.%u MB_per_s=%llu.%u\n",
			len, total, ns, whole, frac, mb, mfrac);
	}
report:
	dlx_chans[0].failures += failed;
	ok = !failed && reaped == total;
	goto out;
stuck:
	/* copies may still land in dst or call back into ops: leak them */
	dlx_pinned = true;
	for (i = 0; i < nch; i++)
		dlx_chans[i].abandoned = true;
	dlx_chans[0].failures++;
	b.dst = NULL;
	b.ops = NULL;
out:
	if (b.dst) {
		for (i = 0; i < total; i++)
			if (b.dst[i])
				__free_pages(b.dst[i], order);
	}
	kfree(b.dst);
	kfree(b.ops);
	kfree(b.fifo);
	kfree(b.qhead);
	kfree(b.qlen);
	pr_info("%sok %u %s\n", ok ? "" : "not ", test, name);
	return ok;
}

static void dlx_mode_bench(unsigned int n)
{
	static const unsigned int nchans[] = { 1, 2, 4 };
	static const size_t sizes[] = { 16 * 1024, DLX_BENCH_MAX_LEN };
	unsigned int s, k, test = 0, i;
	u64 start = ktime_get_ns();

	pr_info("1..%zu\n", ARRAY_SIZE(sizes) * ARRAY_SIZE(nchans));
	pr_info("# %s: bench depth=%u ops_small=%u ops_large=%u\n", DLX_NAME,
		bench_depth, bench_ops_small, bench_ops_large);
	for (i = 0; i < DLX_BENCH_SRCS; i++) {
		struct page *p = alloc_pages(GFP_KERNEL | __GFP_NOWARN,
					     get_order(DLX_BENCH_MAX_LEN));

		if (!p) {
			pr_info("# %s: cannot allocate the bench sources\n",
				DLX_NAME);
			break;
		}
		dlx_bench_src[i] = page_address(p);
		/* a different pattern in each: a copy from the wrong one shows */
		dlx_fill(dlx_bench_src[i], DLX_BENCH_MAX_LEN, 0,
			 DLX_BENCH_MAX_LEN, seed * 31 + i);
	}
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		unsigned int total = s ? bench_ops_large : bench_ops_small;

		for (k = 0; k < ARRAY_SIZE(nchans); k++) {
			test++;
			if (i < DLX_BENCH_SRCS) {
				pr_info("not ok %u bench-%zuKiB-%uch # no sources\n",
					test, sizes[s] / 1024, nchans[k]);
			} else if (nchans[k] > n) {
				pr_info("ok %u bench-%zuKiB-%uch # SKIP only %u channel(s)\n",
					test, sizes[s] / 1024, nchans[k], n);
			} else if (dlx_chans[0].abandoned) {
				pr_info("not ok %u bench-%zuKiB-%uch # channels abandoned\n",
					test, sizes[s] / 1024, nchans[k]);
			} else {
				dlx_bench_config(test, nchans[k], sizes[s],
						 total, k == 0);
			}
		}
	}
	for (i = 0; i < DLX_BENCH_SRCS; i++) {
		if (dlx_bench_src[i] && !dlx_pinned)
			free_pages((unsigned long)dlx_bench_src[i],
				   get_order(DLX_BENCH_MAX_LEN));
		dlx_bench_src[i] = NULL;
	}
	dlx_chans[0].name = "bench";
	dlx_chan_report(&dlx_chans[0], start);
	dlx_summary(0, 1);
}

/*
 * What stands between the channels and memory: the IOMMU domain of the DMA
 * device, and where one mapped page lands.  Scenarios that are meant to run
 * behind an IOMMU require "translated": the bus address differs from the
 * physical one, so the verified copies can only have reached their buffers
 * through the IOMMU's translation (without it, the device would have read
 * and written at the IOVAs themselves).
 */
static void dlx_report_iommu(struct dma_chan *chan)
{
	struct device *dev = chan->device->dev;
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);
	const char *type = "none";
	dma_addr_t dma;
	void *page;

	if (dom) {
		switch (dom->type) {
		case IOMMU_DOMAIN_IDENTITY:
			type = "identity";
			break;
		case IOMMU_DOMAIN_DMA:
			type = "DMA";
			break;
		case IOMMU_DOMAIN_DMA_FQ:
			type = "DMA-FQ";
			break;
		case IOMMU_DOMAIN_UNMANAGED:
			type = "unmanaged";
			break;
		default:
			type = "other";
			break;
		}
	}
	page = (void *)__get_free_page(GFP_KERNEL);
	if (!page) {
		pr_info("# %s: iommu: domain %s, no page to probe\n", DLX_NAME,
			type);
		return;
	}
	dma = dma_map_single(dev, page, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		pr_info("# %s: iommu: domain %s, mapping a page failed\n",
			DLX_NAME, type);
	} else {
		pr_info("# %s: iommu: domain %s, phys %#llx maps to dma %#llx, %s\n",
			DLX_NAME, type, (u64)virt_to_phys(page), (u64)dma,
			dma == virt_to_phys(page) ? "identity" : "translated");
		dma_unmap_single(dev, dma, PAGE_SIZE, DMA_TO_DEVICE);
	}
	free_page((unsigned long)page);
}

/* This file's modes, ended by a NULL name (races.c has the others). */
static const struct dlx_mode dlx_modes[] = {
	{ "memcpy", dlx_mode_memcpy },
	{ "recover", dlx_mode_recover },
	{ "inflight-reset", dlx_mode_inflight_reset },
	{ "bench", dlx_mode_bench },
	{ "hostile-ring", dlx_mode_hostile_ring },
	{ "stale", dlx_mode_stale },
	{ NULL, NULL },
};

static const struct dlx_mode *dlx_find_mode(const char *name)
{
	const struct dlx_mode *tables[] = { dlx_modes, dlx_race_modes };
	const struct dlx_mode *m;
	unsigned int t;

	for (t = 0; t < ARRAY_SIZE(tables); t++)
		for (m = tables[t]; m->name; m++)
			if (!strcmp(m->name, name))
				return m;
	return NULL;
}

static int __init dlx_init(void)
{
	dma_cap_mask_t mask;
	unsigned int n = 0, i, limit = DLX_MAX_CHANNELS;
	const struct dlx_mode *found;
	bool leaked = false;

	if (max_channels && max_channels < limit)
		limit = max_channels;
	if (!max_len)
		max_len = 1;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	while (n < limit) {
		struct dma_chan *chan = dma_request_chan_by_mask(&mask);

		if (IS_ERR(chan))
			break;
		dlx_chans[n].chan = chan;
		dlx_chans[n].name = dma_chan_name(chan);
		n++;
	}

	pr_info("KTAP version 1\n");
	pr_info("# %s: mode=%s iterations=%u max_len=%u seed=%llu timeout_ms=%u channels=%u\n",
		DLX_NAME, mode, iterations, max_len, seed, timeout_ms, n);
	if (!n) {
		pr_info("1..1\n");
		pr_info("not ok 1 channels # no DMA_MEMCPY channel\n");
		return 0;
	}
	dlx_report_iommu(dlx_chans[0].chan);

	found = dlx_find_mode(mode);
	if (found) {
		found->run(n);
	} else {
		const struct dlx_mode *m;

		pr_info("1..1\n");
		pr_info("not ok 1 mode # unknown mode=%s\n", mode);
		pr_info("# %s: modes:", DLX_NAME);
		for (m = dlx_modes; m->name; m++)
			pr_cont(" %s", m->name);
		for (m = dlx_race_modes; m->name; m++)
			pr_cont(" %s", m->name);
		pr_cont("\n");
	}

	for (i = 0; i < n; i++) {
		if (dlx_chans[i].kept) {
			dlx_pinned = true;	/* its user comes later */
			continue;
		}
		if (dlx_chans[i].abandoned) {
			/* never release a channel with a copy in flight */
			leaked = true;
			continue;
		}
		dma_release_channel(dlx_chans[i].chan);
		dlx_chans[i].chan = NULL;
	}
	if (leaked || dlx_pinned) {
		/* a late callback must not find this module unloaded */
		__module_get(THIS_MODULE);
		if (leaked)
			pr_info("# %s: channel(s) abandoned after a timeout; module pinned\n",
				DLX_NAME);
	}
	return 0;
}

static void __exit dlx_exit(void)
{
}

module_init(dlx_init);
module_exit(dlx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dmalab: verified memcpy exerciser for dmaengine channels");
MODULE_AUTHOR("dmalab");
