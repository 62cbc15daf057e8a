// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=mapcost: what the DMA API costs per call on the DMA
 * engine's device, whatever stands in front of it (no IOMMU, an IOMMU in
 * strict or lazy mode, pass-through, swiotlb).  For each size it times, one
 * call at a time on the guest's clock:
 *   empty   nothing: the timed region's own cost (two ktime_get_ns() reads
 *           and the subtraction), which measure.py subtracts from the others
 *   memcpy  memcpy() of the buffer into another one: the guest CPU's own copy
 *           of that size, what a bounced map, unmap or sync is made of
 *   memset  memset() of that other buffer: the guest CPU's fill, the price of
 *           a byte on the kernel's other string path (measure.py prints both
 *           per byte)
 *   map     dma_map_single()      of a fresh mapping
 *   unmap   dma_unmap_single()    of that mapping (strict mode: with its IOTLB
 *                                 invalidation and wait)
 *   sync    dma_sync_single_for_cpu() then _for_device() of one long-lived
 *           mapping, the pair a driver that recycles its buffers calls
 * and prints the mean, median, 90th and 99th percentile and the largest as
 * "# bench-map op=... size=... n=... p50_ns=... p90_ns=... p99_ns=... max_ns=...
 * mean_ns=..." lines.  No DMA runs: the figures are the mapping layer's own.
 * Behind a VT-d unit (vtd_base), what the unit's invalidation queue processed
 * is read after each map, unmap and sync call, outside its timed region
 * (counts.c), and counted against the op just called: one "# bench-inv op=...
 * size=... calls=... descs=... waits=... iotlb_invs=..." line per op and size
 * (descs=-1 without a unit).  A lazy unmap's flush can run from a timer: it
 * is counted against the call whose reading comes next, map or unmap, so
 * their sum per pair is exact and the split between them need not be.
 * Then, untimed, a few calls of each with swiotlb's copies counted (bounce.c:
 * "# bench-bounce op=... size=..." lines).
 *
 * With mapcost_threads=N (2 or more, at most the online CPUs), each size ends
 * with a window in which N kernel threads, one bound to each of the first N
 * CPUs, map and unmap a buffer of their own mapcost_calls times at once: the
 * IOVA allocator's per-CPU caches, the flush queues and the invalidation
 * queue's lock under contention.  Each thread reads the unit's queue after
 * every pair, under one lock, so the counts are exact.  One "# bench-mapmt
 * size=... threads=... pairs=... map_ns=... unmap_ns=... busy_ns_per_pair=...
 * descs=... waits=... iotlb_invs=... cpus=..." line per size: map_ns and
 * unmap_ns are the mean call as each thread's clock saw it, busy_ns_per_pair
 * the window's CPU time (all CPUs, wall less idle) per pair.  With mapcost_xdp=1, the syncs of
 * an AF_XDP-like receive path follow (xdpsync.c).
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#include "exercise.h"

static unsigned int mapcost_calls = 2000;
module_param(mapcost_calls, uint, 0444);
MODULE_PARM_DESC(mapcost_calls, "mapcost: calls timed per operation and size (default 2000)");

static unsigned int mapcost_threads;
module_param(mapcost_threads, uint, 0444);
MODULE_PARM_DESC(mapcost_threads,
		 "mapcost: also map and unmap on this many CPUs at once (default 0: not)");

static bool mapcost_xdp;
module_param(mapcost_xdp, bool, 0444);
MODULE_PARM_DESC(mapcost_xdp, "mapcost: the AF_XDP-like syncs as well (xdpsync.c)");

#define DLX_MAPCOST_MAX_CALLS	100000

static const size_t dlx_mapcost_sizes[] = { 4096, 65536 };

/*
 * Instruction-profile windows (docs/profile.rst), one per call, opened before
 * and closed after the call's timing so that the figures do not change.
 */
static unsigned int dlx_mapcost_windows;

static void dlx_mapcost_open(unsigned int kind, size_t size)
{
	dlx_profile_mark(true, DLX_PROF_ID(kind, size));
	dlx_mapcost_windows++;
}

static void dlx_mapcost_close(void)
{
	dlx_profile_mark(false, 1);
}

static void dlx_mapcost_report(const char *op, size_t size, u32 *ns, unsigned int n)
{
	dlx_report_calls("bench-map", op, size, ns, n);
}

/* What the unit's queue processed while one op was called */
struct dlx_inv {
	u64 descs, waits, iotlb;
};

/* Reads the queue and counts what it processed since the last reading against inv. */
static void dlx_inv_take(struct dlx_queue *q, struct dlx_inv *inv)
{
	struct dlx_queue was = *q;

	dlx_queue_read(q);
	inv->descs += q->descs - was.descs;
	inv->waits += q->waits - was.waits;
	inv->iotlb += q->iotlb - was.iotlb;
}

static void dlx_inv_report(const struct dlx_queue *q, const char *op, size_t size,
			   unsigned int calls, const struct dlx_inv *inv)
{
	pr_info("# bench-inv op=%s size=%zu calls=%u descs=%lld waits=%llu iotlb_invs=%llu\n",
		op, size, calls, q->regs ? (s64)inv->descs : -1LL, inv->waits, inv->iotlb);
}

/*
 * What swiotlb copies per call of each op (nothing without bouncing), in
 * untimed passes of DLX_BOUNCE_CALLS calls with the probe enabled; dma is
 * the long-lived mapping of buf that the sync op uses.
 */
static void dlx_mapcost_count(struct device *dev, void *buf, size_t size, dma_addr_t dma)
{
	dma_addr_t maps[DLX_BOUNCE_CALLS];
	struct dlx_bounce b0;
	unsigned int i, n = 0;

	if (!dlx_bounce_begin(&b0))
		return;
	for (n = 0; n < DLX_BOUNCE_CALLS; n++) {
		maps[n] = dma_map_single(dev, buf, size, DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dev, maps[n]))
			break;
	}
	dlx_bounce_end("map", size, n, &b0);
	dlx_bounce_begin(&b0);
	for (i = 0; i < n; i++)
		dma_unmap_single(dev, maps[i], size, DMA_BIDIRECTIONAL);
	dlx_bounce_end("unmap", size, n, &b0);
	dlx_bounce_begin(&b0);
	for (i = 0; i < DLX_BOUNCE_CALLS; i++) {
		dma_sync_single_for_cpu(dev, dma, size, DMA_BIDIRECTIONAL);
		dma_sync_single_for_device(dev, dma, size, DMA_BIDIRECTIONAL);
	}
	dlx_bounce_end("sync", size, DLX_BOUNCE_CALLS, &b0);
}

/*
 * The kernel's own memcpy() and memset(), called out of line: what the memcpy and
 * memset rows time.  A direct call lets the compiler expand them inline, and 6.1's
 * build of this file did, as "rep movsb" and "rep stosb", which TCG counts as one
 * instruction per byte: the rows then timed the compiler's choice (1 ns per byte),
 * not the kernel's copy loop that swiotlb's bounces run (0.38 ns per byte).
 */
static void *(*volatile dlx_kernel_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile dlx_kernel_memset)(void *, int, size_t) = memset;

/* One size: false when a mapping failed (nothing is reported for it then). */
static bool dlx_mapcost_size(struct device *dev, size_t size, u32 *a, u32 *b,
			     unsigned int n)
{
	void *buf = kmalloc(size, GFP_KERNEL);
	void *copy = kmalloc(size, GFP_KERNEL);
	struct dlx_inv maps = { }, unmaps = { }, syncs = { };
	struct dlx_queue q;
	dma_addr_t dma;
	unsigned int i;
	u64 t0;

	if (!buf || !copy) {
		kfree(buf);
		kfree(copy);
		return false;
	}
	memset(buf, 0x5a, size);
	for (i = 0; i < n; i++) {
		t0 = ktime_get_ns();
		a[i] = dlx_elapsed(t0);
	}
	dlx_mapcost_report("empty", size, a, n);
	for (i = 0; i < n; i++) {
		dlx_mapcost_open(DLX_PROF_MEMCPY, size);
		t0 = ktime_get_ns();
		dlx_kernel_memcpy(copy, buf, size);
		a[i] = dlx_elapsed(t0);
		dlx_mapcost_close();
	}
	dlx_mapcost_report("memcpy", size, a, n);
	for (i = 0; i < n; i++) {
		dlx_mapcost_open(DLX_PROF_MEMSET, size);
		t0 = ktime_get_ns();
		dlx_kernel_memset(copy, i & 0xff, size);
		a[i] = dlx_elapsed(t0);
		dlx_mapcost_close();
	}
	dlx_mapcost_report("memset", size, a, n);
	kfree(copy);
	/* each call submits at most a few descriptors: a reading per call never misses one */
	dlx_queue_open(&q);
	for (i = 0; i < n; i++) {
		dlx_mapcost_open(DLX_PROF_MAP, size);
		t0 = ktime_get_ns();
		dma = dma_map_single(dev, buf, size, DMA_BIDIRECTIONAL);
		a[i] = dlx_elapsed(t0);
		dlx_mapcost_close();
		dlx_inv_take(&q, &maps);
		if (dma_mapping_error(dev, dma)) {
			pr_info("# %s: mapcost: mapping %zu bytes failed after %u calls\n",
				DLX_NAME, size, i);
			dlx_queue_close(&q);
			kfree(buf);
			return false;
		}
		dlx_mapcost_open(DLX_PROF_UNMAP, size);
		t0 = ktime_get_ns();
		dma_unmap_single(dev, dma, size, DMA_BIDIRECTIONAL);
		b[i] = dlx_elapsed(t0);
		dlx_mapcost_close();
		dlx_inv_take(&q, &unmaps);
	}
	dlx_mapcost_report("map", size, a, n);
	dlx_mapcost_report("unmap", size, b, n);
	dlx_inv_report(&q, "map", size, n, &maps);
	dlx_inv_report(&q, "unmap", size, n, &unmaps);

	dma = dma_map_single(dev, buf, size, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, dma)) {
		dlx_queue_close(&q);
		kfree(buf);
		return false;
	}
	dlx_queue_read(&q);	/* that map is not a sync's */
	for (i = 0; i < n; i++) {
		dlx_mapcost_open(DLX_PROF_SYNC, size);
		t0 = ktime_get_ns();
		dma_sync_single_for_cpu(dev, dma, size, DMA_BIDIRECTIONAL);
		dma_sync_single_for_device(dev, dma, size, DMA_BIDIRECTIONAL);
		a[i] = dlx_elapsed(t0);
		dlx_mapcost_close();
		dlx_inv_take(&q, &syncs);
	}
	dlx_mapcost_report("sync", size, a, n);
	dlx_inv_report(&q, "sync", size, n, &syncs);
	dlx_queue_close(&q);
	dlx_mapcost_count(dev, buf, size, dma);
	dma_unmap_single(dev, dma, size, DMA_BIDIRECTIONAL);
	kfree(buf);
	return true;
}

/* The concurrent window of one size (mapcost_threads) */
struct dlx_mt {
	struct device *dev;
	size_t size;
	unsigned int calls;
	spinlock_t lock;	/* the queue, the counts and the sums below */
	struct dlx_queue q;
	struct dlx_inv inv;
	u64 map_ns, unmap_ns;
	unsigned int pairs;
	bool failed;
};

/* One thread's maps and unmaps of a buffer of its own (a crew's work). */
static void dlx_mt_work(void *arg, unsigned int k)
{
	struct dlx_mt *mt = arg;
	void *buf = kmalloc(mt->size, GFP_KERNEL);
	u64 map_ns = 0, unmap_ns = 0, t0;
	unsigned int i = 0;
	dma_addr_t dma;

	for (; buf && i < mt->calls; i++) {
		t0 = ktime_get_ns();
		dma = dma_map_single(mt->dev, buf, mt->size, DMA_BIDIRECTIONAL);
		map_ns += ktime_get_ns() - t0;
		if (dma_mapping_error(mt->dev, dma))
			break;
		t0 = ktime_get_ns();
		dma_unmap_single(mt->dev, dma, mt->size, DMA_BIDIRECTIONAL);
		unmap_ns += ktime_get_ns() - t0;
		spin_lock(&mt->lock);
		dlx_inv_take(&mt->q, &mt->inv);
		spin_unlock(&mt->lock);
	}
	spin_lock(&mt->lock);
	mt->map_ns += map_ns;
	mt->unmap_ns += unmap_ns;
	mt->pairs += i;
	mt->failed |= i < mt->calls;
	spin_unlock(&mt->lock);
	kfree(buf);
}

/* mapcost_threads: one size's concurrent window; false if a thread failed. */
static bool dlx_mapcost_mt(struct device *dev, size_t size, unsigned int calls)
{
	unsigned int n = min(mapcost_threads, num_online_cpus());
	struct dlx_crew *crew = kzalloc(sizeof(*crew), GFP_KERNEL);
	struct dlx_mt *mt = kzalloc(sizeof(*mt), GFP_KERNEL);
	u64 wall, busy;
	bool ok = false;

	if (!crew || !mt)
		goto out;
	mt->dev = dev;
	mt->size = size;
	mt->calls = calls;
	spin_lock_init(&mt->lock);
	if (!dlx_crew_start(crew, n, "map", dlx_mt_work, mt))
		goto stop;
	dlx_queue_open(&mt->q);
	dlx_profile_mark(true, DLX_PROF_ID(DLX_PROF_MAPMT, size));
	busy = dlx_crew_run(crew, &wall);
	dlx_profile_mark(false, mt->pairs);
	spin_lock(&mt->lock);
	dlx_queue_read(&mt->q);
	spin_unlock(&mt->lock);
	pr_info("# bench-mapmt size=%zu threads=%u pairs=%u map_ns=%llu unmap_ns=%llu busy_ns_per_pair=%llu descs=%lld waits=%llu iotlb_invs=%llu cpus=%u\n",
		size, n, mt->pairs, div64_u64(mt->map_ns, max(mt->pairs, 1U)),
		div64_u64(mt->unmap_ns, max(mt->pairs, 1U)),
		div64_u64(busy, max(mt->pairs, 1U)),
		mt->q.entries ? (s64)mt->inv.descs : -1LL, mt->inv.waits, mt->inv.iotlb,
		num_online_cpus());
	dlx_queue_close(&mt->q);
	ok = !mt->failed;
stop:
	dlx_crew_stop(crew);
out:
	kfree(mt);
	kfree(crew);
	return ok;
}

/* mode=mapcost: the DMA API's per-call cost on channel 0's device. */
void dlx_mode_mapcost(unsigned int n)
{
	struct device *dev = dlx_chans[0].chan->device->dev;
	unsigned int calls = clamp(mapcost_calls, 10u, DLX_MAPCOST_MAX_CALLS);
	u32 *a = vmalloc(array_size(calls, sizeof(u32)));
	u32 *b = vmalloc(array_size(calls, sizeof(u32)));
	bool ok = a && b;
	unsigned int i;

	dlx_ktap_plan(ARRAY_SIZE(dlx_mapcost_sizes) + mapcost_xdp);
	pr_info("# %s: mapcost: device %s, %u calls per operation, guest clock (ktime_get_ns)\n",
		DLX_NAME, dev_name(dev), calls);
	if (!dlx_bounce_enable(false))
		pr_info("# %s: mapcost: no kprobe on swiotlb_bounce: its copies are not counted\n",
			DLX_NAME);
	for (i = 0; i < ARRAY_SIZE(dlx_mapcost_sizes); i++) {
		size_t size = dlx_mapcost_sizes[i];
		bool done = ok && dlx_mapcost_size(dev, size, a, b, calls);

		if (done && mapcost_threads > 1)
			done = dlx_mapcost_mt(dev, size, calls);

		dlx_ktap_result(done, "map-%zu%s", size,
				ok ? "" : " # no memory for the samples");
	}
	if (mapcost_xdp)
		dlx_ktap_result(ok && dlx_xdp_syncs(dev, a, calls), "xdp-syncs");
	pr_info("# dmalab-profile windows=%u source=mapcost\n", dlx_mapcost_windows);
	vfree(a);
	vfree(b);
}
