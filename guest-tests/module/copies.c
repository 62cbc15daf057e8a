// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise: verified copies of random lengths and offsets into a
 * poisoned destination (mode=memcpy's, and the "copies" tests of the other
 * modes), and the per-channel and summary reports.
 */

#include <linux/kernel.h>
#include <linux/completion.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "exercise.h"

/* Copy length of op idx: op 0 is 1 byte, op 1 is max_len, then log-uniform. */
size_t dlx_pick_len(unsigned int idx, u64 *rng)
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

/* Where one verified copy goes, and its mappings. */
struct dlx_copy_at {
	unsigned int idx;	/* the channel's copy number */
	size_t len, soff, doff;
	dma_addr_t src_dma, dst_dma;
};

/* A diagnostic about the copy at: "# NAME: CHANNEL op=... dst_off=...: what" */
static __printf(3, 4) void dlx_copy_say(struct dlx_chan *c, const struct dlx_copy_at *at,
					const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("# %s: %s op=%u len=%zu src_off=%zu dst_off=%zu: %pV\n", DLX_NAME, c->name,
		at->idx, at->len, at->soff, at->doff, &vaf);
	va_end(args);
}

/*
 * Length and offsets of copy idx, aligned as the channel wants them; dst
 * keeps at least one guard byte on each side.
 */
static void dlx_place_copy(struct dlx_chan *c, unsigned int idx, u64 *rng,
			   struct dlx_copy_at *at)
{
	unsigned int align = 1U << c->chan->device->copy_align;

	at->idx = idx;
	at->len = dlx_pick_len(idx, rng);
	at->soff = dlx_below(rng, c->buf_len - at->len + 1);
	at->doff = 1 + dlx_below(rng, c->buf_len - at->len - 1);
	if (align > 1) {
		at->soff = round_down(at->soff, align);
		at->doff = round_up(at->doff, align);
		at->len = max_t(size_t, round_down(at->len, align), align);
		if (at->doff + at->len >= c->buf_len)
			at->doff -= align;
	}
}

static bool dlx_map_copy(struct dlx_chan *c, struct dlx_copy_at *at)
{
	struct device *dev = c->chan->device->dev;

	at->src_dma = dma_map_single(dev, c->src + at->soff, at->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, at->src_dma)) {
		dlx_copy_say(c, at, "mapping src failed");
		return false;
	}
	at->dst_dma = dma_map_single(dev, c->dst + at->doff, at->len, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, at->dst_dma)) {
		dma_unmap_single(dev, at->src_dma, at->len, DMA_TO_DEVICE);
		dlx_copy_say(c, at, "mapping dst failed");
		return false;
	}
	return true;
}

static void dlx_unmap_copy(struct dlx_chan *c, const struct dlx_copy_at *at)
{
	dlx_unmap_pair(c, at->len, at->src_dma, at->dst_dma);
}

/*
 * Runs the mapped copy and waits for it: 0 when its callback reported
 * success, -EIO otherwise (said why; c->abandoned when the copy may still be
 * running).  Counts the copy in c's statistics when it succeeded.
 */
static int dlx_run_copy(struct dlx_chan *c, const struct dlx_copy_at *at)
{
	const char *why;
	dma_cookie_t cookie;
	enum dma_status status;
	unsigned long left;
	u64 t0, t1;

	t0 = ktime_get_ns();
	cookie = dlx_submit_copy(c, at->dst_dma, at->src_dma, at->len, &why);
	if (dma_submit_error(cookie)) {
		dlx_copy_say(c, at, "%s (%d)", why, cookie);
		return -EIO;
	}
	left = wait_for_completion_timeout(&c->done, msecs_to_jiffies(c->tmo_ms));
	t1 = ktime_get_ns();
	status = dma_async_is_tx_complete(c->chan, cookie, NULL, NULL);
	/*
	 * A channel that completes out of order (DMA_COMPLETION_NO_ORDER: idxd)
	 * answers every cookie with DMA_OUT_OF_ORDER; its callback is the only
	 * word of a completion.
	 */
	if (status == DMA_OUT_OF_ORDER && left)
		status = DMA_COMPLETE;

	if (!left && status != DMA_COMPLETE) {
		dlx_copy_say(c, at, "timed out after %u ms (status=%d), abandoning channel",
			     c->tmo_ms, status);
		c->abandoned = true;
		return -EIO;
	}
	if (!left) {
		dlx_copy_say(c, at, "copy complete but no callback within %u ms", c->tmo_ms);
		return -EIO;
	}
	if (status != DMA_COMPLETE) {
		dlx_copy_say(c, at, "callback ran but status=%d", status);
		return -EIO;
	}
	if (c->result != DMA_TRANS_NOERROR) {
		dlx_copy_say(c, at, "transfer result %s", dlx_result_name(c->result));
		return -EIO;
	}
	if (pace_bandwidth || pace_latency_ns)
		dlx_check_pace(c, at->len, t1 - t0);
	c->ops++;
	c->bytes += at->len;
	c->dma_ns += t1 - t0;
	return 0;
}

/*
 * Checks the copied bytes and the guard bytes around them, then poisons the
 * destination's range again for the next copy: 0, or -EIO (said why).
 */
static int dlx_verify_copy(struct dlx_chan *c, const struct dlx_copy_at *at)
{
	size_t len = at->len, soff = at->soff, doff = at->doff;
	size_t g_lo = doff > DLX_GUARD ? doff - DLX_GUARD : 0;
	size_t g_hi = min_t(size_t, doff + len + DLX_GUARD, c->buf_len);
	int ret = -EIO;
	long bad;

	if (memcmp(c->dst + doff, c->src + soff, len)) {
		size_t i, first = len, nbad = 0;

		for (i = 0; i < len; i++) {
			if (c->dst[doff + i] != c->src[soff + i]) {
				if (first == len)
					first = i;
				nbad++;
			}
		}
		dlx_copy_say(c, at,
			     "data mismatch at byte %zu (expected 0x%02x got 0x%02x), %zu bad bytes",
			     first, c->src[soff + first], c->dst[doff + first], nbad);
		goto restore;
	}
	bad = dlx_find_unpoisoned(c->dst, g_lo, doff);
	if (bad < 0)
		bad = dlx_find_unpoisoned(c->dst, doff + len, g_hi);
	if (bad >= 0) {
		dlx_copy_say(c, at,
			     "guard byte at dst offset %ld overwritten (0x%02x), %ld bytes %s the range",
			     bad, c->dst[bad],
			     (size_t)bad < doff ? (long)(doff - bad) :
						  (long)(bad - (doff + len) + 1),
			     (size_t)bad < doff ? "before" : "after");
		goto restore;
	}
	ret = 0;
restore:
	memset(c->dst + g_lo, DLX_POISON, g_hi - g_lo);
	return ret;
}

/*
 * One verified copy.  Returns 0 on success, -EIO on a detected failure
 * (diagnostic already printed); sets c->abandoned when the copy could not
 * be confirmed finished.
 */
static int dlx_one_op(struct dlx_chan *c, unsigned int idx, u64 *rng)
{
	struct dlx_copy_at at;

	dlx_place_copy(c, idx, rng, &at);
	dlx_fill(c->src, c->buf_len, at.soff, at.len, dlx_next(rng));
	if (!dlx_map_copy(c, &at))
		return -EIO;
	if (dlx_run_copy(c, &at)) {
		if (c->abandoned)
			return -EIO;	/* leave it mapped: the copy may still land */
		dlx_unmap_copy(c, &at);
		memset(c->dst, DLX_POISON, c->buf_len);
		return -EIO;
	}
	dlx_unmap_copy(c, &at);
	return dlx_verify_copy(c, &at);
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
