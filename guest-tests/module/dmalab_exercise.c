// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise - verified memcpy exerciser for dmaengine channels.
 *
 * On load it grabs every DMA_MEMCPY capable channel, runs a number of
 * randomised, verified copies on each of them (one channel after the
 * other), prints the results as KTAP through printk and releases the
 * channels again.  The module stays loaded; init always returns 0 so the
 * host side judges the KTAP output.
 *
 * Part of the dmalab guest test harness.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/completion.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/jiffies.h>

#define DLX_NAME		"dmalab_exercise"
#define DLX_MAX_CHANNELS	64
#define DLX_GUARD		64	/* poison bytes checked on each side */
#define DLX_POISON		0xa5
#define DLX_MAX_FAILS		8	/* give up on a channel after this */

static unsigned int iterations = 300;
module_param(iterations, uint, 0444);
MODULE_PARM_DESC(iterations, "verified copies per channel (default 300)");

static unsigned int max_len = 1024 * 1024;
module_param(max_len, uint, 0444);
MODULE_PARM_DESC(max_len, "largest copy length in bytes (default 1 MiB)");

static unsigned long long seed = 1;
module_param(seed, ullong, 0444);
MODULE_PARM_DESC(seed, "seed of the pseudo-random lengths/offsets/data");

static unsigned int timeout_ms = 5000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "per-copy completion timeout in ms (default 5000)");

static unsigned int max_channels;
module_param(max_channels, uint, 0444);
MODULE_PARM_DESC(max_channels, "use at most this many channels (0 = all)");

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

struct dlx_chan {
	struct dma_chan *chan;
	const char *name;
	struct page *src_pages;
	struct page *dst_pages;
	u8 *src;
	u8 *dst;
	unsigned int order;
	size_t buf_len;

	/* completion state of the operation in flight */
	struct completion done;
	enum dmaengine_tx_result result;

	/* statistics */
	unsigned int ops;
	unsigned int failures;
	u64 bytes;
	u64 dma_ns;
	u64 wall_ns;
	bool abandoned;		/* a copy may still be in flight: leak */
};

static struct dlx_chan dlx_chans[DLX_MAX_CHANNELS];

static void dlx_callback(void *param, const struct dmaengine_result *res)
{
	struct dlx_chan *c = param;

	c->result = res ? res->result : DMA_TRANS_NOERROR;
	complete(&c->done);
}

static const char *dlx_result_name(enum dmaengine_tx_result r)
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
static void dlx_fill(u8 *buf, size_t buf_len, size_t off, size_t len,
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

static void dlx_free_buffers(struct dlx_chan *c)
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

static int dlx_alloc_buffers(struct dlx_chan *c)
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
					   msecs_to_jiffies(timeout_ms));
	t1 = ktime_get_ns();
	status = dma_async_is_tx_complete(chan, cookie, NULL, NULL);

	if (!left) {
		if (status != DMA_COMPLETE) {
			pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: timed out after %u ms (status=%d), abandoning channel\n",
				DLX_NAME, c->name, idx, len, soff, doff,
				timeout_ms, status);
			c->abandoned = true;
			return -EIO;
		}
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: copy complete but no callback within %u ms\n",
			DLX_NAME, c->name, idx, len, soff, doff, timeout_ms);
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

static bool dlx_run_channel(struct dlx_chan *c, unsigned int chan_idx)
{
	u64 rng = seed ^ (0x5851f42d4c957f2dULL * (chan_idx + 1));
	u64 start = ktime_get_ns();
	u64 mbps;
	u32 frac;
	unsigned int i;

	init_completion(&c->done);
	if (dlx_alloc_buffers(c)) {
		pr_info("# %s: %s: cannot allocate 2 x %zu byte buffers (order %u)\n",
			DLX_NAME, c->name, (size_t)PAGE_SIZE << c->order,
			c->order);
		c->failures++;
		goto report;
	}

	for (i = 0; i < iterations; i++) {
		if (dlx_one_op(c, i, &rng)) {
			c->failures++;
			if (c->abandoned)
				break;
			if (c->failures >= DLX_MAX_FAILS) {
				pr_info("# %s: %s: giving up after %u failed copies\n",
					DLX_NAME, c->name, c->failures);
				break;
			}
		}
		cond_resched();
	}
	dlx_free_buffers(c);
report:
	c->wall_ns = ktime_get_ns() - start;
	mbps = div_u64_rem(dlx_mbps_x10(c->bytes, c->dma_ns), 10, &frac);
	pr_info("# %s: %s ops=%u bytes=%llu ns=%llu wall_ns=%llu MB/s=%llu.%u failures=%u\n",
		DLX_NAME, c->name, c->ops, c->bytes, c->dma_ns, c->wall_ns,
		mbps, frac, c->failures);
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

static int __init dlx_init(void)
{
	dma_cap_mask_t mask;
	unsigned int n = 0, i, limit = DLX_MAX_CHANNELS;
	unsigned int tot_ops = 0, tot_fail = 0;
	u64 tot_bytes = 0, tot_ns = 0, mbps;
	u32 frac;
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
	pr_info("# %s: iterations=%u max_len=%u seed=%llu timeout_ms=%u channels=%u\n",
		DLX_NAME, iterations, max_len, seed, timeout_ms, n);
	if (!n) {
		pr_info("1..1\n");
		pr_info("not ok 1 channels # no DMA_MEMCPY channel\n");
		return 0;
	}
	pr_info("1..%u\n", n);

	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		bool ok = dlx_run_channel(c, i);

		pr_info("%sok %u %s\n", ok ? "" : "not ", i + 1, c->name);
		tot_ops += c->ops;
		tot_fail += c->failures;
		tot_bytes += c->bytes;
		tot_ns += c->dma_ns;
	}

	mbps = div_u64_rem(dlx_mbps_x10(tot_bytes, tot_ns), 10, &frac);
	pr_info("# %s: summary channels=%u ops=%u bytes=%llu ns=%llu MB/s=%llu.%u failures=%u\n",
		DLX_NAME, n, tot_ops, tot_bytes, tot_ns, mbps, frac, tot_fail);
	if (!dlx_chans[0].abandoned) {
		struct dlx_chan cpu = { .name = "cpu" };

		dlx_cpu_baseline(&cpu);
	}

	for (i = 0; i < n; i++) {
		if (dlx_chans[i].abandoned) {
			/* never release a channel with a copy in flight */
			leaked = true;
			continue;
		}
		dma_release_channel(dlx_chans[i].chan);
		dlx_chans[i].chan = NULL;
	}
	if (leaked) {
		/* a late callback must not find this module unloaded */
		__module_get(THIS_MODULE);
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
