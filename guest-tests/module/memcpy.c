// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=memcpy (the default): verified copies of random
 * lengths and offsets on every channel (copies.c), the guest CPU's memcpy
 * for comparison, and the summary.
 */

#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "exercise.h"

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

/* mode=memcpy: verified copies on each channel in turn. */
void dlx_mode_memcpy(unsigned int n)
{
	bool paced = pace_bandwidth || pace_latency_ns;
	unsigned int i, early = 0, ops = 0;
	u64 min_permille = 0;

	dlx_ktap_plan(n + paced);
	for (i = 0; i < n; i++) {
		struct dlx_chan *c = &dlx_chans[i];
		bool ok = dlx_run_channel(c, i);

		dlx_ktap_result(ok, "%s", c->name);
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
		dlx_ktap_result(ops && !early, "paced");
	}
	dlx_summary(0, n);
	if (!dlx_chans[0].abandoned) {
		struct dlx_chan cpu = { .name = "cpu" };

		dlx_cpu_baseline(&cpu);
	}
}
