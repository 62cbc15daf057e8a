// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=copycost: the copy-engine workload of dmalab measure's
 * iommu-flush study (docs/measure.rst).  Copies through the DMA engine, each
 * buffer pair mapped and unmapped with the DMA API as a driver would
 * (dma_map_single, prep, submit, wait for the callback, dma_unmap_single), at
 * each offered rate of copycost_rates (copies per second; 0: back to back, for
 * copycost_b2b_ms), for copycost_ms at each of copycost_sizes (or, with
 * copycost_count, for that many copies at every rate).  The thread
 * wakes once per batch of copies (copycost_batch; by default rate / HZ, so
 * once per tick, at least one copy) and makes them one after the other (each
 * waits for its interrupt), so the pacing's own sleep and wake-up is shared
 * by the batch; between batches the CPU is idle unless something works.
 *
 * Service demand: the CPU time the guest spent, on all its CPUs, during the
 * window (wall time minus idle time, get_cpu_idle_time_us, in us), per copy:
 * busy_ns_per_copy, gross, everything the copies cost the guest (the DMA API
 * and the IOMMU driver, ioatdma's submission, interrupt and cleanup, the
 * wake-ups, the pacing, and whatever else ran meanwhile: little in this
 * guest); util_ppm, the window's busy time over its wall time times the CPUs,
 * in millionths.  A window of the same pacing without copies measures what
 * the pacing alone costs (pacing_ns_per_copy: per wake-up over the batch), and
 * net_ns_per_copy subtracts it.  One "# bench-copy size=... rate=... batch=...
 * copies=... slept=... slots=... per_s=... busy_us=... idle_us=... iowait_us=...
 * wall_us=... util_ppm=... busy_ns_per_copy=... pacing_ns_per_copy=...
 * net_ns_per_copy=... busy_us_per_mib=... cpus=..." line per rate and size;
 * slept counts the copies still running when their thread came to wait, which
 * measure.py keeps equal across configurations by fixing the engine's timing
 * (and requires equal to copies); slots, the wake-ups of the pacing window;
 * descs, waits and iotlb_invs what the remapping unit's invalidation queue
 * processed during the copies (counts.c; descs=-1 without a unit): counts,
 * exact, whatever the clock.
 * Then sgcost.c's scatter-gather windows (copycost_sg_count).
 *
 * With copycost_threads=N (2 or more), each size then gets a window in which N
 * kernel threads, one bound to each of the first N CPUs with a channel of its
 * own, copy back to back at once, copycost_mt_count copies each, mapped and
 * unmapped as above: the IOMMU's flush queues, IOVA caches and invalidation
 * queue with every CPU unmapping.  Each thread reads the unit's queue after
 * every copy, under one lock (counts.c): the counts are exact.  One "# bench-copymt
 * size=... threads=... copies=... per_s=... busy_ns_per_copy=... descs=...
 * waits=... iotlb_invs=... cpus=..." line per size, busy_ns_per_copy being all
 * CPUs' busy time in the window per copy.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/tick.h>

#include "exercise.h"

static unsigned int copycost_rate = 1000;
module_param(copycost_rate, uint, 0444);
MODULE_PARM_DESC(copycost_rate,
		 "copycost: offered copies per second (0: back to back; default 1000)");

static unsigned int copycost_rates[8];
static int copycost_nrates;
module_param_array(copycost_rates, uint, &copycost_nrates, 0444);
MODULE_PARM_DESC(copycost_rates,
		 "copycost: offered rates to run, in turn (default: copycost_rate)");

static unsigned int copycost_ms = 1000;
module_param(copycost_ms, uint, 0444);
MODULE_PARM_DESC(copycost_ms, "copycost: how long each paced rate and size runs (default 1000 ms)");

static unsigned int copycost_b2b_ms = 200;
module_param(copycost_b2b_ms, uint, 0444);
MODULE_PARM_DESC(copycost_b2b_ms,
		 "copycost: how long each size runs back to back (default 200 ms)");

static unsigned int copycost_count;
module_param(copycost_count, uint, 0444);
MODULE_PARM_DESC(copycost_count,
		 "copycost: copies per window, at every rate, in place of copycost_ms and copycost_b2b_ms (default 0: by time)");

static unsigned int copycost_batch;
module_param(copycost_batch, uint, 0444);
MODULE_PARM_DESC(copycost_batch,
		 "copycost: copies per wake-up of the paced thread (default 0: rate / HZ, at least 1: one wake-up per tick)");

static unsigned int copycost_threads;
module_param(copycost_threads, uint, 0444);
MODULE_PARM_DESC(copycost_threads,
		 "copycost: also copy on this many channels and CPUs at once (default 0: not)");

static unsigned int copycost_mt_count = 300;
module_param(copycost_mt_count, uint, 0444);
MODULE_PARM_DESC(copycost_mt_count,
		 "copycost: copies per thread in the concurrent window (default 300)");

static unsigned int copycost_sizes[4] = { 4096, 16384, 65536 };
static int copycost_nsizes = 3;
module_param_array(copycost_sizes, uint, &copycost_nsizes, 0444);
MODULE_PARM_DESC(copycost_sizes, "copycost: copy sizes in bytes (default 4096,16384,65536)");

/* instruction-profile windows opened (dlx_profile_mark) */
static unsigned int dlx_copycost_windows;

/*
 * /sys/module/dmalab_exercise/parameters/cpu_us, read-only: "WALL BUSY", the
 * guest's clock and the busy time of all online CPUs (wall time times CPUs,
 * less their idle time) in us.  /init's NIC workload reads it around its
 * windows; /proc/uptime counts in 10 ms units, 33 us a packet over 300.
 */
static int dlx_cpu_us_get(char *buf, const struct kernel_param *kp)
{
	u64 wall = div_u64(ktime_get_ns(), NSEC_PER_USEC);
	u64 all = wall * num_online_cpus();
	u64 idle = dlx_idle_us(false);

	if (idle == U64_MAX)
		return -ENODATA;
	return sysfs_emit(buf, "%llu %llu\n", wall, all - min(idle, all));
}

static int dlx_cpu_us_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops dlx_cpu_us_ops = {
	.set = dlx_cpu_us_set,
	.get = dlx_cpu_us_get,
};

module_param_cb(cpu_us, &dlx_cpu_us_ops, NULL, 0444);
MODULE_PARM_DESC(cpu_us, "read-only: the guest clock and all CPUs' busy time, in us");

/*
 * mode=clock: nothing but the module loaded, for cpu_us: init.sh's timed
 * windows that run no exerciser work (the md write of dmalab.scenario=mdcost).
 */
void dlx_mode_clock(unsigned int n)
{
	dlx_ktap_plan(1);
	dlx_ktap_result(true, "clock # cpu_us readable");
}

struct dlx_window {
	u64 copies;
	u64 slept;	/* copies not complete when the thread came to wait */
	u64 slots;	/* wake-ups of the pacing */
	u64 wall_ns, wall_us;	/* wall_us: times the CPUs */
	u64 busy_us;	/* all CPUs: wall minus idle */
	u64 idle_us, iowait_us;
	struct dlx_queue q;	/* the unit's invalidations during the window */
	bool ok;
};

/*
 * The unit's queue is read every DLX_QUEUE_EVERY copies: a copy submits at
 * most 8 descriptors (two maps and two unmaps, each an invalidation and a wait
 * under caching mode), and a lazy flush 3, far fewer than the 128 entries of
 * the smallest queue Linux sets up, so no reading misses one (counts.c).
 */
#define DLX_QUEUE_EVERY	8

/* One pacing slot's n copies of len, each waited for, counted in w. */
static void dlx_copycost_slot(struct dlx_chan *c, size_t len, unsigned int n,
			      struct dlx_window *w)
{
	dma_addr_t s, d;
	unsigned int i;

	for (i = 0; w->ok && i < n; i++) {
		if (!dlx_map_pair(c, len, &s, &d)) {
			w->ok = false;
			break;
		}
		if (!dlx_start_copy(c, d, s, len)) {
			dlx_unmap_pair(c, len, s, d);
			w->ok = false;
			break;
		}
		/*
		 * Whether this copy makes the thread sleep: a copy
		 * that has completed by now (its interrupt taken on
		 * the way, as when the engine finishes inside the
		 * doorbell write) costs no sleep and wake-up, and one
		 * still running does.
		 */
		if (!completion_done(&c->done))
			w->slept++;
		if (!dlx_wait(c, c->tmo_ms)) {
			/* the copy may be in flight: keep its buffers mapped */
			c->abandoned = true;
			w->ok = false;
			break;
		}
		dlx_unmap_pair(c, len, s, d);
		if (c->result != DMA_TRANS_NOERROR)
			w->ok = false;
		w->copies++;
		if (w->copies % DLX_QUEUE_EVERY == 0)
			dlx_queue_read(&w->q);
	}
}

/*
 * One window at the offered rate (copycost_ms, or copycost_b2b_ms back to
 * back; or copycost_count copies): a batch of copies of len bytes in each
 * slot of batch / rate seconds, or (copy false) nothing, which measures what
 * the pacing itself (the sleeps and wake-ups) costs the CPUs.
 */
static struct dlx_window dlx_copycost_window(struct dlx_chan *c, size_t len, unsigned int rate,
					     unsigned int batch, bool copy)
{
	u64 period = rate ? div_u64((u64)batch * NSEC_PER_SEC, rate) : 0;
	u64 ms = rate ? copycost_ms : copycost_b2b_ms;
	u64 idle0, idle1, io0, io1, t0, next, now, wall_us;
	struct dlx_window w = { .ok = true };

	/*
	 * The slots start half a period after a tick (half a tick when the
	 * period is whole ticks).  Timer-wheel timers (lazy mode's flush queue,
	 * the NICs' watchdogs) fire on ticks, which then fall between slots
	 * whenever the period divides the tick's or is a multiple of it, never
	 * into a copy's submission: an interrupt there can hold the thread
	 * until the copy is done, and it does not sleep.
	 */
	if (copy)
		dlx_queue_open(&w.q);
	schedule_timeout_uninterruptible(1);
	/* what the unit processed before the window opens is not the window's */
	dlx_queue_read(&w.q);
	w.q.descs = w.q.waits = w.q.iotlb = 0;
	/* an instruction-profile window around what is measured (docs/profile.rst) */
	dlx_profile_mark(true, DLX_PROF_ID(copy ? DLX_PROF_COPY : DLX_PROF_PACE, len));
	dlx_copycost_windows++;
	idle0 = dlx_idle_us(false);
	io0 = dlx_idle_us(true);
	t0 = ktime_get_ns();
	next = t0 + (period && period % TICK_NSEC == 0 ? TICK_NSEC : period) / 2;
	while (w.ok) {
		now = ktime_get_ns();
		if (!copycost_count && now - t0 >= ms * NSEC_PER_MSEC)
			break;
		if (period && now < next) {
			u64 us = div_u64(next - now, NSEC_PER_USEC);

			if (us)
				usleep_range(us, us + 10);
			continue;
		}
		/*
		 * copycost_count: as many copies (or pacing slots' worth) at
		 * every rate, so that a fast rate costs the host no more
		 * emulation than a slow one; the window ends where the last
		 * slot does, as a timed one ends a whole number of slots
		 */
		if (copycost_count &&
		    (copy ? w.copies : w.slots * (period ? batch : 1)) >= copycost_count)
			break;
		next += period;
		w.slots++;
		if (copy)
			dlx_copycost_slot(c, len, period ? batch : 1, &w);
	}
	w.wall_ns = ktime_get_ns() - t0;
	idle1 = dlx_idle_us(false);
	io1 = dlx_idle_us(true);
	dlx_profile_mark(false, copy ? w.copies : w.slots);
	dlx_queue_read(&w.q);
	dlx_queue_close(&w.q);
	if (idle0 == U64_MAX || idle1 == U64_MAX) {
		w.ok = false;
		return w;
	}
	w.idle_us = idle1 - idle0;
	w.iowait_us = io0 == U64_MAX || io1 == U64_MAX ? 0 : io1 - io0;
	wall_us = div_u64(w.wall_ns, NSEC_PER_USEC) * num_online_cpus();
	w.wall_us = wall_us;
	w.busy_us = wall_us > idle1 - idle0 ? wall_us - (idle1 - idle0) : 0;
	return w;
}

/*
 * One rate and size: the pacing alone (paced rates only), then the copies.
 * busy_ns_per_copy is the copy window's CPU time per copy, gross; util_ppm its
 * share of the window's CPU time; net_ns_per_copy subtracts what the pacing
 * alone cost per wake-up, shared by the batch.
 */
static bool dlx_copycost_size(struct dlx_chan *c, size_t len, unsigned int rate)
{
	unsigned int batch = copycost_batch ? copycost_batch : max(rate / HZ, 1U);
	struct dlx_window idle = { .ok = true };
	struct dlx_window w;
	u64 per, base = 0;

	if (rate) {
		idle = dlx_copycost_window(c, len, rate, batch, false);
		base = div64_u64(idle.busy_us * 1000, max_t(u64, idle.slots, 1) * batch);
	}
	w = dlx_copycost_window(c, len, rate, batch, true);
	per = div64_u64(w.busy_us * 1000, max_t(u64, w.copies, 1));
	if (!idle.ok && !c->abandoned)
		pr_info("# %s: copycost: no idle time from the kernel (no NO_HZ?)\n", DLX_NAME);
	pr_info("# bench-copy size=%zu rate=%u batch=%u copies=%llu slept=%llu slots=%llu per_s=%llu busy_us=%llu idle_us=%llu iowait_us=%llu wall_us=%llu util_ppm=%llu busy_ns_per_copy=%llu pacing_ns_per_copy=%llu net_ns_per_copy=%llu busy_us_per_mib=%llu descs=%lld waits=%llu iotlb_invs=%llu cpus=%u\n",
		len, rate, batch, w.copies, w.slept, idle.slots,
		div64_u64(w.copies * NSEC_PER_SEC, max_t(u64, w.wall_ns, 1)), w.busy_us,
		w.idle_us, w.iowait_us, w.wall_us,
		div64_u64(w.busy_us * 1000000, max_t(u64, w.wall_us, 1)),
		per, base, per > base ? per - base : 0,
		div64_u64(w.busy_us << 20, max_t(u64, w.copies * len, 1)),
		w.q.entries ? (s64)w.q.descs : -1LL, w.q.waits, w.q.iotlb,
		num_online_cpus());
	c->ops += w.copies;
	c->bytes += w.copies * len;
	return idle.ok && w.ok && w.copies;
}

/* The concurrent window of one size (copycost_threads) */
struct dlx_cmt {
	size_t len;
	spinlock_t lock;	/* the queue and the sums below */
	struct dlx_queue q;
	u64 copies;
	bool failed;
};

/* Thread k's copies on channel k, back to back (a crew's work). */
static void dlx_cmt_work(void *arg, unsigned int k)
{
	struct dlx_cmt *mt = arg;
	struct dlx_chan *c = &dlx_chans[k];
	unsigned int i, copies = 0;
	bool ok = true;
	dma_addr_t s, d;

	for (i = 0; ok && i < copycost_mt_count; i++) {
		if (!dlx_map_pair(c, mt->len, &s, &d)) {
			ok = false;
			break;
		}
		if (!dlx_start_copy(c, d, s, mt->len)) {
			dlx_unmap_pair(c, mt->len, s, d);
			ok = false;
			break;
		}
		if (!dlx_wait(c, c->tmo_ms)) {
			c->abandoned = true;	/* in flight: its buffers stay mapped */
			ok = false;
			break;
		}
		dlx_unmap_pair(c, mt->len, s, d);
		ok = c->result == DMA_TRANS_NOERROR;
		copies += ok;
		spin_lock(&mt->lock);
		dlx_queue_read(&mt->q);
		spin_unlock(&mt->lock);
	}
	spin_lock(&mt->lock);
	mt->copies += copies;
	mt->failed |= !ok;
	spin_unlock(&mt->lock);
	c->ops += copies;
	c->bytes += (u64)copies * mt->len;
}

/* copycost_threads: one size's concurrent window on n channels; false if a copy failed. */
static bool dlx_copycost_mt(unsigned int n, size_t len)
{
	struct dlx_crew *crew = kzalloc(sizeof(*crew), GFP_KERNEL);
	struct dlx_cmt *mt = kzalloc(sizeof(*mt), GFP_KERNEL);
	u64 wall, busy;
	bool ok = false;

	if (!crew || !mt)
		goto out;
	mt->len = len;
	spin_lock_init(&mt->lock);
	if (!dlx_crew_start(crew, n, "copy", dlx_cmt_work, mt))
		goto stop;
	dlx_queue_open(&mt->q);
	busy = dlx_crew_run(crew, &wall);
	spin_lock(&mt->lock);
	dlx_queue_read(&mt->q);
	spin_unlock(&mt->lock);
	pr_info("# bench-copymt size=%zu threads=%u copies=%llu per_s=%llu busy_ns_per_copy=%llu descs=%lld waits=%llu iotlb_invs=%llu cpus=%u\n",
		len, n, mt->copies, div64_u64(mt->copies * NSEC_PER_SEC, max_t(u64, wall, 1)),
		div64_u64(busy, max_t(u64, mt->copies, 1)),
		mt->q.entries ? (s64)mt->q.descs : -1LL, mt->q.waits, mt->q.iotlb,
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

/* The concurrent windows, one per size: false (each size's result) if one failed. */
static void dlx_copycost_threads(unsigned int nchans)
{
	unsigned int n = min3(copycost_threads, nchans, num_online_cpus());
	unsigned int i, k;
	bool ok = n == copycost_threads;

	for (k = 1; ok && k < n; k++) {
		init_completion(&dlx_chans[k].done);
		dlx_chans[k].tmo_ms = timeout_ms;
		ok = !dlx_alloc_buffers(&dlx_chans[k]);
		if (!ok)
			n = k;	/* the ones with buffers are freed below */
	}
	if (!ok)
		pr_info("# %s: copycost: %u threads asked for, %u channels and %u CPUs\n",
			DLX_NAME, copycost_threads, nchans, num_online_cpus());
	for (i = 0; i < copycost_nsizes; i++) {
		size_t len = min_t(size_t, copycost_sizes[i], dlx_chans[0].buf_len / 2);
		bool done = ok && !dlx_chans[0].abandoned && dlx_copycost_mt(n, len);

		for (k = 0; k < n; k++)
			done &= !dlx_chans[k].abandoned;
		dlx_ktap_result(done, "copymt-%u", copycost_sizes[i]);
		ok &= done;
	}
	for (k = 1; k < n; k++)
		if (!dlx_chans[k].abandoned)
			dlx_free_buffers(&dlx_chans[k]);
}

/* mode=copycost: mapped copies on channel 0 at the offered rates, and their CPU cost. */
void dlx_mode_copycost(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	unsigned int nrates = copycost_nrates ? copycost_nrates : 1;
	unsigned int plan = nrates * copycost_nsizes + 1 +
			    (copycost_threads > 1 ? copycost_nsizes : 0);
	unsigned int i, r;

	dlx_ktap_plan(plan);
	init_completion(&c->done);
	c->tmo_ms = timeout_ms;
	if (dlx_alloc_buffers(c)) {
		for (i = 0; i < plan; i++)
			dlx_ktap_result(false, "copycost # no buffers");
		return;
	}
	pr_info("# %s: copycost: %s, %u rate(s), %u ms per paced window, HZ %u, guest clock\n",
		DLX_NAME, c->name, nrates, copycost_ms, HZ);
	/* a window before the kernel keeps idle time could not say what its copies cost */
	if (!dlx_idle_ready("copycost"))
		pr_info("# %s: copycost: the kernel keeps no idle time in us\n", DLX_NAME);
	for (r = 0; r < nrates; r++) {
		unsigned int rate = copycost_nrates ? copycost_rates[r] : copycost_rate;

		for (i = 0; i < copycost_nsizes; i++) {
			size_t len = min_t(size_t, copycost_sizes[i], c->buf_len / 2);
			bool ok = !c->abandoned && dlx_copycost_size(c, len, rate);

			dlx_ktap_result(ok, "copy-%u-rate-%u", copycost_sizes[i], rate);
		}
	}
	dlx_ktap_result(!c->abandoned && dlx_sgcost(c), "sg");
	if (copycost_threads > 1)
		dlx_copycost_threads(n);
	pr_info("# dmalab-profile windows=%u source=copycost\n",
		dlx_copycost_windows + dlx_sgcost_windows);
	if (!c->abandoned)
		dlx_free_buffers(c);
}
