// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=bench: copy throughput for 16 KiB and 1 MiB copies on 1, 2 and 4 channels.
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

static unsigned int bench_depth = 8;
module_param(bench_depth, uint, 0444);
MODULE_PARM_DESC(bench_depth, "bench: copies each channel keeps queued (default 8)");

static unsigned int bench_ops_small = 400;
module_param(bench_ops_small, uint, 0444);
MODULE_PARM_DESC(bench_ops_small, "bench: 16 KiB copies per configuration (default 400)");

static unsigned int bench_ops_large = 100;
module_param(bench_ops_large, uint, 0444);
MODULE_PARM_DESC(bench_ops_large, "bench: 1 MiB copies per configuration (default 100)");

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

/* Unmaps channel ch's completed copies, in order; true when there were some. */
static bool dlx_bench_reap(struct dlx_bench *b, unsigned int ch, unsigned int *reaped,
			   unsigned int *failed)
{
	struct dlx_chan *c = &dlx_chans[ch];
	unsigned int *q = b->fifo + ch * b->depth;
	bool progress = false;

	while (b->qlen[ch]) {
		struct dlx_op *op = &b->ops[q[b->qhead[ch]]];

		if (!dlx_op_done(op))
			break;
		dlx_unmap_pair(c, b->len, op->src_dma, op->dst_dma);
		if (op->result != DMA_TRANS_NOERROR && (*failed)++ < 4)
			pr_info("# %s: %s: copy %ld on %s: result %s\n",
				DLX_NAME, b->name, (long)(op - b->ops), c->name,
				dlx_result_name(op->result));
		b->qhead[ch] = (b->qhead[ch] + 1) % b->depth;
		b->qlen[ch]--;
		(*reaped)++;
		progress = true;
	}
	return progress;
}

/* Maps and submits copy next on c; NULL, or the step that failed. */
static const char *dlx_bench_submit(struct dlx_bench *b, struct dlx_chan *c, unsigned int next)
{
	struct dlx_op *op = &b->ops[next];
	struct device *dev = c->chan->device->dev;
	void *src = dlx_bench_src[next % DLX_BENCH_SRCS];
	void *dst = page_address(b->dst[next]);

	op->c = c;
	op->len = b->len;
	op->src_dma = dma_map_single(dev, src, b->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, op->src_dma))
		return "mapping src";
	op->dst_dma = dma_map_single(dev, dst, b->len, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, op->dst_dma)) {
		dma_unmap_single(dev, op->src_dma, b->len, DMA_TO_DEVICE);
		return "mapping dst";
	}
	if (dlx_op_submit(op)) {
		dlx_unmap_pair(c, b->len, op->src_dma, op->dst_dma);
		return "submitting";
	}
	return NULL;
}

/*
 * Queues copies *next.. (below count) on channel ch until it has b->depth
 * queued, and issues them; stops at the first failure.
 */
static void dlx_bench_fill(struct dlx_bench *b, unsigned int ch, unsigned int count,
			   unsigned int *next, unsigned int *failed)
{
	struct dlx_chan *c = &dlx_chans[ch];
	unsigned int *q = b->fifo + ch * b->depth;
	bool issue = false;

	while (b->qlen[ch] < b->depth && *next < count && !*failed) {
		const char *why = dlx_bench_submit(b, c, *next);

		if (why) {
			pr_info("# %s: %s: copy %u: %s failed\n",
				DLX_NAME, b->name, *next, why);
			(*failed)++;
			break;
		}
		q[(b->qhead[ch] + b->qlen[ch]) % b->depth] = *next;
		b->qlen[ch]++;
		(*next)++;
		issue = true;
	}
	if (issue)
		dma_async_issue_pending(c->chan);
}

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
			progress |= dlx_bench_reap(b, ch, reaped, failed);
			dlx_bench_fill(b, ch, count, &next, failed);
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

/* b's arrays and destinations; false (said why) when memory is short. */
static bool dlx_bench_alloc(struct dlx_bench *b, unsigned int order)
{
	unsigned int i;

	b->dst = kcalloc(b->total, sizeof(*b->dst), GFP_KERNEL);
	b->ops = kcalloc(b->total, sizeof(*b->ops), GFP_KERNEL);
	b->fifo = kcalloc(b->nch * b->depth, sizeof(*b->fifo), GFP_KERNEL);
	b->qhead = kcalloc(b->nch, sizeof(*b->qhead), GFP_KERNEL);
	b->qlen = kcalloc(b->nch, sizeof(*b->qlen), GFP_KERNEL);
	if (!b->dst || !b->ops || !b->fifo || !b->qhead || !b->qlen) {
		pr_info("# %s: %s: no memory\n", DLX_NAME, b->name);
		return false;
	}
	for (i = 0; i < b->total; i++) {
		b->dst[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		if (!b->dst[i]) {
			pr_info("# %s: %s: cannot allocate %u destinations of %zu bytes\n",
				DLX_NAME, b->name, b->total, b->len);
			return false;
		}
	}
	return true;
}

/* Frees what dlx_bench_alloc() got (a stuck run has left dst and ops NULL). */
static void dlx_bench_free(struct dlx_bench *b, unsigned int order)
{
	unsigned int i;

	if (b->dst) {
		for (i = 0; i < b->total; i++)
			if (b->dst[i])
				__free_pages(b->dst[i], order);
	}
	kfree(b->dst);
	kfree(b->ops);
	kfree(b->fifo);
	kfree(b->qhead);
	kfree(b->qlen);
}

/* Checks the reaped copies' data; counts mismatches in *failed. */
static void dlx_bench_verify(struct dlx_bench *b, unsigned int reaped, unsigned int *failed)
{
	unsigned int i;

	for (i = 0; i < reaped; i++) {
		const u8 *want = dlx_bench_src[i % DLX_BENCH_SRCS];
		const u8 *got = page_address(b->dst[i]);
		long bad;

		if (b->ops[i].result != DMA_TRANS_NOERROR)
			continue;
		bad = dlx_compare(got, want, b->len);
		if (bad >= 0 && (*failed)++ < 4)
			pr_info("# %s: %s: copy %u on %s: data mismatch at byte %ld (expected 0x%02x got 0x%02x)\n",
				DLX_NAME, b->name, i, b->ops[i].c->name, bad,
				want[bad], got[bad]);
		cond_resched();
	}
}

/* "# bench[-cpu] ..." for count copies in ns (channels: 0 for the CPU's). */
static void dlx_bench_line(const struct dlx_bench *b, unsigned int channels, unsigned int count,
			   u64 ns)
{
	u64 whole, mb;
	u32 frac, mfrac;

	dlx_rate_x10(count, ns, &whole, &frac);
	mb = div_u64_rem(dlx_mbps_x10((u64)count * b->len, ns), 10, &mfrac);
	if (channels)
		pr_info("# bench size=%zu channels=%u ops=%u ns=%llu ops_per_s=%llu.%u MB_per_s=%llu.%u\n",
			b->len, channels, count, ns, whole, frac, mb, mfrac);
	else
		pr_info("# bench-cpu size=%zu ops=%u ns=%llu ops_per_s=%llu.%u MB_per_s=%llu.%u\n",
			b->len, count, ns, whole, frac, mb, mfrac);
}

/* The guest CPU copying the same lengths between the same buffers. */
static void dlx_bench_cpu(struct dlx_bench *b)
{
	unsigned int i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < b->total; i++)
		memcpy(page_address(b->dst[i]), dlx_bench_src[i % DLX_BENCH_SRCS], b->len);
	dlx_bench_line(b, 0, b->total, ktime_get_ns() - t0);
}

/*
 * One configuration: total copies of len bytes spread over nch channels,
 * each channel keeping bench_depth copies queued, after an untimed warm-up
 * round (the first mappings, IOMMU page tables and such).  Every copy has
 * its own poisoned destination, verified after the timed part.  Adds to the
 * first channel's statistics for the summary.
 */
static bool dlx_bench_config(unsigned int nch, size_t len,
			     unsigned int total, bool cpu)
{
	struct dlx_bench b = {
		.nch = nch,
		.depth = max(bench_depth, 1U),
		.len = len,
		.total = total,
	};
	unsigned int order = get_order(len), reaped = 0, failed = 0, i, good;
	bool ok = false;
	char name[32];
	u64 t0, ns;

	snprintf(name, sizeof(name), "bench-%zuKiB-%uch", len / 1024, nch);
	b.name = name;
	if (!dlx_bench_alloc(&b, order))
		goto out;

	if (dlx_bench_pass(&b, min(total, nch * b.depth), &reaped, &failed))
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

	dlx_bench_verify(&b, reaped, &failed);
	good = reaped - min(failed, reaped);
	dlx_chans[0].ops += good;
	dlx_chans[0].bytes += (u64)good * len;
	dlx_chans[0].dma_ns += ns;
	dlx_bench_line(&b, nch, reaped, ns);
	if (cpu)
		dlx_bench_cpu(&b);
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
	dlx_bench_free(&b, order);
	return dlx_ktap_result(ok, "%s", name);
}

void dlx_mode_bench(unsigned int n)
{
	static const unsigned int nchans[] = { 1, 2, 4 };
	static const size_t sizes[] = { 16 * 1024, DLX_BENCH_MAX_LEN };
	unsigned int s, k, i;
	u64 start = ktime_get_ns();

	dlx_ktap_plan(ARRAY_SIZE(sizes) * ARRAY_SIZE(nchans));
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
			if (i < DLX_BENCH_SRCS) {
				dlx_ktap_result(false, "bench-%zuKiB-%uch # no sources",
						sizes[s] / 1024, nchans[k]);
			} else if (nchans[k] > n) {
				dlx_ktap_result(true, "bench-%zuKiB-%uch # SKIP only %u channel(s)",
						sizes[s] / 1024, nchans[k], n);
			} else if (dlx_chans[0].abandoned) {
				dlx_ktap_result(false, "bench-%zuKiB-%uch # channels abandoned",
						sizes[s] / 1024, nchans[k]);
			} else {
				dlx_bench_config(nchans[k], sizes[s],
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
