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
 *	pushed ahead after each of hostile_ms 1 ms sleeps, so the channel
 *	never catches up.  The guest must keep running meanwhile (its sleeps
 *	return), and the channel must stop when told to.  I/OAT
 *	specific.
 * mode=stale: a copy into a buffer just unmapped (see dlx_mode_stale).
 * mode=bar-race: MMIO on one CPU while another changes QEMU's memory map
 *	(barrace.c).
 * mode=mapcost, copycost, offload: the cost studies of dmalab measure (the
 *	DMA API per call; mapped copies at a fixed rate; the engine's copy
 *	against the CPU's): mapcost.c, copycost.c, offload.c.
 * mode=raid: memcpy, interrupt, XOR, XOR_VAL, PQ, PQ_VAL and their 16-source
 *	forms, each verified, on every channel at once (raid.c).
 * mode=clock: nothing; the module stays loaded for cpu_us (init.sh's timed
 *	md writes, dmalab.scenario=mdcost).
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


unsigned int iterations = 300;
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
MODULE_PARM_DESC(mode,
		 "memcpy (default), recover, inflight-reset, bench, mapcost, copycost, offload, bar-race, hostile-ring, stale, or the races.c scenarios order, fail, lostirq, cpuwrite, uaf and cow");









unsigned long pace_bandwidth;
module_param(pace_bandwidth, ulong, 0444);
MODULE_PARM_DESC(pace_bandwidth,
		 "memcpy: the device's bandwidth= in bytes/s; every copy must then take at least pace_latency_ns + len / pace_bandwidth (0: not checked)");

unsigned int pace_latency_ns;
module_param(pace_latency_ns, uint, 0444);
MODULE_PARM_DESC(pace_latency_ns, "memcpy: the device's latency-ns= (see pace_bandwidth)");


char *stale_expect = "fault";
module_param(stale_expect, charp, 0444);
MODULE_PARM_DESC(stale_expect,
		 "stale: what a copy into an unmapped buffer does: fault (strict IOTLB flushing) or lands (lazy)");

static char *iommu_expect = "";
module_param(iommu_expect, charp, 0444);
MODULE_PARM_DESC(iommu_expect,
		 "what a mapped page's bus address must be before any mode runs: translated (an IOMMU domain maps it elsewhere), bounced (swiotlb: elsewhere without an IOMMU domain), identity, or empty (not checked)");


struct dlx_chan dlx_chans[DLX_MAX_CHANNELS];

/*
 * What stands between the channels and memory: the IOMMU domain of the DMA
 * device, and where one mapped page lands.  Scenarios that are meant to run
 * behind an IOMMU require "translated": the bus address differs from the
 * physical one, so the verified copies can only have reached their buffers
 * through the IOMMU's translation (without it, the device would have read
 * and written at the IOVAs themselves).
 */
static const char *dlx_report_iommu(struct dma_chan *chan)
{
	struct device *dev = chan->device->dev;
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);
	const char *type = "none", *seen = "unknown";
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
		return seen;
	}
	dma = dma_map_single(dev, page, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		pr_info("# %s: iommu: domain %s, mapping a page failed\n",
			DLX_NAME, type);
	} else {
		/*
		 * Without an IOMMU domain (or in an identity one) a bus address
		 * other than the page's own is a swiotlb bounce slot.
		 */
		if (dma == virt_to_phys(page))
			seen = "identity";
		else if (dom && dom->type != IOMMU_DOMAIN_IDENTITY)
			seen = "translated";
		else
			seen = "bounced";
		pr_info("# %s: iommu: domain %s, phys %#llx maps to dma %#llx, %s\n",
			DLX_NAME, type, (u64)virt_to_phys(page), (u64)dma, seen);
		dma_unmap_single(dev, dma, PAGE_SIZE, DMA_TO_DEVICE);
	}
	free_page((unsigned long)page);
	return seen;
}

/* This file's modes, ended by a NULL name (races.c has the others). */
static const struct dlx_mode dlx_modes[] = {
	{ "memcpy", dlx_mode_memcpy },
	{ "recover", dlx_mode_recover },
	{ "inflight-reset", dlx_mode_inflight_reset },
	{ "bench", dlx_mode_bench },
	{ "mapcost", dlx_mode_mapcost },
	{ "copycost", dlx_mode_copycost },
	{ "offload", dlx_mode_offload },
	{ "bar-race", dlx_mode_bar_race },
	{ "hostile-ring", dlx_mode_hostile_ring },
	{ "stale", dlx_mode_stale },
	{ "irfault", dlx_mode_irfault },
	{ "raid", dlx_mode_raid },
	{ "clock", dlx_mode_clock },
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

/* Takes up to max_channels DMA_MEMCPY channels; returns how many. */
static unsigned int dlx_grab_channels(void)
{
	unsigned int n = 0, limit = DLX_MAX_CHANNELS;
	dma_cap_mask_t mask;

	if (max_channels && max_channels < limit)
		limit = max_channels;
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
	return n;
}

/* Runs mode= on the n channels, or reports why no mode result counts. */
static void dlx_run_mode(unsigned int n)
{
	const struct dlx_mode *found = dlx_find_mode(mode), *m;
	const char *seen = dlx_report_iommu(dlx_chans[0].chan);
	char names[256];
	size_t len = 0;

	if (*iommu_expect && strcmp(seen, iommu_expect)) {
		/* The scenario's premise does not hold: no mode result counts. */
		dlx_ktap_plan(1);
		dlx_ktap_result(false, "iommu # expected %s, the mapped page is %s",
				iommu_expect, seen);
		return;
	}
	if (found) {
		found->run(n);
		return;
	}
	dlx_ktap_plan(1);
	dlx_ktap_result(false, "mode # unknown mode=%s", mode);
	for (m = dlx_modes; m->name; m++)
		len += scnprintf(names + len, sizeof(names) - len, " %s", m->name);
	for (m = dlx_race_modes; m->name; m++)
		len += scnprintf(names + len, sizeof(names) - len, " %s", m->name);
	pr_info("# %s: modes:%s\n", DLX_NAME, names);
}

/*
 * Releases the channels the mode is done with; a channel with a copy that
 * may still be in flight, or that a mode keeps for later (mode=cow), pins
 * the module instead.
 */
static void dlx_release_channels(unsigned int n)
{
	bool leaked = false, kept = false;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (dlx_chans[i].kept) {
			dlx_pinned = true;	/* its user comes later */
			kept = true;
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
	/* a mode that keeps a channel reports the rest of its plan later */
	if (!kept)
		dlx_ktap_end();
	if (leaked || dlx_pinned) {
		/* a late callback must not find this module unloaded */
		__module_get(THIS_MODULE);
		if (leaked)
			pr_info("# %s: channel(s) abandoned after a timeout; module pinned\n",
				DLX_NAME);
	}
}

static int __init dlx_init(void)
{
	unsigned int n;

	if (!max_len)
		max_len = 1;
	n = dlx_grab_channels();
	pr_info("KTAP version 1\n");
	pr_info("# %s: mode=%s iterations=%u max_len=%u seed=%llu timeout_ms=%u channels=%u\n",
		DLX_NAME, mode, iterations, max_len, seed, timeout_ms, n);
	if (!n) {
		dlx_ktap_plan(1);
		dlx_ktap_result(false, "channels # no DMA_MEMCPY channel");
		return 0;
	}
	dlx_run_mode(n);
	dlx_release_channels(n);
	return 0;
}

static void __exit dlx_exit(void)
{
	dlx_bounce_exit();
}

module_init(dlx_init);
module_exit(dlx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dmalab: verified memcpy exerciser for dmaengine channels");
MODULE_AUTHOR("dmalab");
