// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=memcpy (the default): verified copies of random lengths and offsets on every
 * channel, the guest CPU's memcpy for comparison, and the summary; the copy
 * helpers races.c uses too.
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
	const char *why;
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
	cookie = dlx_submit_copy(c, dst_dma, src_dma, len, &why);
	if (dma_submit_error(cookie)) {
		pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: %s (%d)\n",
			DLX_NAME, c->name, idx, len, soff, doff, why, cookie);
		goto unmap_fail;
	}

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

u64 dlx_mbps_x10(u64 bytes, u64 ns)
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

bool dlx_run_channel(struct dlx_chan *c, unsigned int chan_idx)
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
void dlx_mode_memcpy(unsigned int n)
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
