// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise: DMA race scenarios made reproducible by a fault plan.
 *
 * The host gives dmalab-ioat a fault plan whose rule fault_rule= starts
 * disarmed, and fault-doorbell=on.  Each scenario arms the rule through the
 * device's fault doorbell (BAR 0 + 0x2000, docs/faults.rst) just before the
 * DMA it wants hit, so the fault lands on that descriptor and no other.
 * Each scenario shows the bug with the fault armed, and the correct
 * behaviour of the fixed path under the same fault.
 *
 * The plans hold the chosen DMA "until release": it does not move until the
 * scenario releases the rule through the doorbell, once the racing access
 * has happened.  A race window is then a matter of program order, not of how
 * long the host took to run the guest (a 20 ms hold lost race-order-6.12 on
 * a loaded host: B's completion reached the consumer after A had landed).
 *
 * mode=order: a consumer that takes channel B's completion as proof that
 *	channel A's earlier copy finished.  The plan holds A's descriptor
 *	(kind reorder) until B has completed and the consumer has looked, so
 *	A's destination is still stale; waiting for A's own completion gives
 *	the right data.
 * mode=fail: a descriptor the plan fails with CHANERR READ_DATA_ERR.
 *	ioatdma's error handler (ioat_eh, drivers/dma/ioat/dma.c) completes
 *	it with DMA_TRANS_READ_FAILED and restarts the channel; verified
 *	copies go on by interrupt.
 * mode=lostirq: the plan drops the interrupt of one copy's completion; the
 *	status is written, and ioatdma's timer (ioat_timer_event, "the missed
 *	cleanup case") finds it and calls the copy back; the channel goes on
 *	completing copies by interrupt.
 * mode=cpuwrite: the CPU writes into a copy's source while the copy is in
 *	flight (its data phase held by the plan): the destination gets the new
 *	byte, not what the driver meant to send; and it reads the destination
 *	before the completion.  Run with the race detector, which names the
 *	store (dlx_cpuwrite_store), the load (dlx_cpuwrite_peek) and the
 *	descriptor.  The fixed path does both only after the completion.
 * mode=uaf: use after unmap.  A copy into a mapped buffer starts, and the
 *	plan delays its data phase (delay-data); the driver unmaps the buffer
 *	and the page is reused before the bytes move.  Strict IOTLB flushing
 *	(iommu.strict=1): the copy faults at the IOMMU and the new owner's data
 *	stays intact.  Lazy flushing: the copy lands through the stale IOTLB
 *	entry and corrupts the reused page.  stale_expect= says which.
 * mode=cow: NET_DMA's fork/copy-on-write race.  The module keeps a channel
 *	and offers /dev/dmalab_race; /init then runs dmalab-cow, which asks
 *	for a DMA into one of its pages (held by the plan), forks and writes
 *	to the page.  With the page taken by get_user_pages, as NET_DMA took
 *	it, copy-on-write gives the parent a new page and the DMA's data lands
 *	in the one the child keeps: the parent loses it.  With
 *	pin_user_pages(FOLL_LONGTERM), fork copies the page for the child
 *	instead (page_needs_cow_for_dma, mm/memory.c) and the data arrives.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "exercise.h"
#include "races.h"
#include "race_uapi.h"

unsigned int fault_rule;
module_param(fault_rule, uint, 0444);
MODULE_PARM_DESC(fault_rule, "order/fail/uaf: index in the device's fault plan of the rule to arm");

unsigned int fast_ms = 150;
module_param(fast_ms, uint, 0444);
MODULE_PARM_DESC(fast_ms,
		 "fail, lostirq, irfault: per-copy timeout of the copies that must complete by interrupt; below ioatdma's 200 ms completion timeout");


/* Maps the doorbell of the device behind c; false (and says why) if none. */
bool dlx_bell_open(struct dlx_chan *c, struct dlx_bell *b)
{
	/* dmalab-ioat and dmalab-dsa both have it at BAR 0 + 0x2000 */
	b->bar = dlx_bar0(c, NULL);
	if (!b->bar)
		return false;
	b->pdev = to_pci_dev(c->chan->device->dev);
	b->regs = b->bar + DLX_BELL;
	if (readl(b->regs + DLX_BELL_ID) != DLX_BELL_MAGIC) {
		pr_info("# %s: %s has no fault doorbell (start the dmalab device with fault-doorbell=on)\n",
			DLX_NAME, pci_name(b->pdev));
		goto fail;
	}
	writel(fault_rule, b->regs + DLX_BELL_SELECT);
	if (!(readl(b->regs + DLX_BELL_STATUS) & DLX_BELL_OWNED)) {
		pr_info("# %s: rule %u of the fault plan is not the device's (fault-plan=)\n",
			DLX_NAME, fault_rule);
		goto fail;
	}
	return true;
fail:
	pci_iounmap(b->pdev, b->bar);
	b->bar = NULL;
	return false;
}

void dlx_bell_close(struct dlx_bell *b)
{
	if (b->bar)
		pci_iounmap(b->pdev, b->bar);
}

/* Arms the rule (a new round: its nth and count start again). */
void dlx_bell_arm(struct dlx_bell *b)
{
	writel(fault_rule, b->regs + DLX_BELL_SELECT);
	writel(DLX_BELL_ARM, b->regs + DLX_BELL_COMMAND);
}

/*
 * Releases the rule: the copy it holds goes on now (with dmalab-ioat's
 * sync-start, inside this write).  True only when the device says this
 * release ended a hold it was running (STATUS.ENDED): the copy was held
 * from the arm to here, so the race window was this program's order and
 * not the host's timing.  False for a plan without "until": "release", a
 * hold whose own time ran out first, a copy the device had not reached, or
 * an older device.
 */
bool dlx_bell_release(struct dlx_bell *b)
{
	writel(fault_rule, b->regs + DLX_BELL_SELECT);
	writel(DLX_BELL_RELEASE, b->regs + DLX_BELL_COMMAND);
	return readl(b->regs + DLX_BELL_STATUS) & DLX_BELL_ENDED;
}

u64 dlx_bell_injected(struct dlx_bell *b)
{
	writel(fault_rule, b->regs + DLX_BELL_SELECT);
	return lo_hi_readq(b->regs + DLX_BELL_INJECTED);
}

/*
 * Waits, ms at the most, until the rule has fired since INJECTED read
 * `before`: from then on the plan holds the copy, so what the caller does
 * before its release is inside the window whichever thread of the host runs
 * the device.  False if the device had not taken the copy by then.
 */
bool dlx_bell_taken(struct dlx_bell *b, u64 before, unsigned int ms)
{
	u64 end = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;

	while (dlx_bell_injected(b) == before) {
		if (ktime_get_ns() > end)
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * Allocates both channels' buffers and sets their completions up; prints
 * the plan's results as not ok when that fails.
 */
bool dlx_race_setup(struct dlx_chan **cs, unsigned int n,
			   const char *const *tests, unsigned int ntests)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		init_completion(&cs[i]->done);
		cs[i]->tmo_ms = timeout_ms;
		if (dlx_alloc_buffers(cs[i]))
			goto fail;
	}
	return true;
fail:
	for (i = 0; i < n; i++)
		dlx_free_buffers(cs[i]);
	dlx_ktap_not_ok_to(tests, ntests, "no buffers");
	return false;
}

/*
 * The start the one-channel scenarios share: buffers, ten verified copies as
 * test 1 ("copies-before"), and the fault doorbell.  False, with tests
 * [1, n) reported not ok and the buffers freed, when one is missing
 * (dlx_race_end() still applies).
 */
bool dlx_race_begin(struct dlx_chan *c, const char *const *tests,
			   unsigned int n, struct dlx_bell *bell, u64 *rng)
{
	bool ok;

	if (!dlx_race_setup(&c, 1, tests, n))
		return false;
	ok = dlx_copies(c, 10, rng);
	dlx_ktap_result(ok, "%s", tests[0]);
	if (!dlx_bell_open(c, bell)) {
		dlx_ktap_not_ok_to(tests, n, "no fault doorbell");
		dlx_free_buffers(c);
		return false;
	}
	return true;
}

/* The end they share: the doorbell (if open), the buffers, the channel's report. */
void dlx_race_end(struct dlx_chan *c, struct dlx_bell *bell, u64 start)
{
	dlx_bell_close(bell);
	dlx_free_buffers(c);
	dlx_chan_report(c, start);
	dlx_summary(0, 1);
}

/*
 * One page copy from c->src to c->dst with the plan's rule armed, waited for;
 * *hits is the number of faults it took.  False, with tests [1, n) reported
 * not ok, when it could not run or never called back (the channel is then
 * abandoned: the copy may still land).
 */
bool dlx_armed_copy(struct dlx_chan *c, struct dlx_bell *bell,
			   const char *const *tests, unsigned int n, u64 *hits)
{
	dma_addr_t s, d;
	bool came;

	if (!dlx_map_pair(c, PAGE_SIZE, &s, &d)) {
		dlx_ktap_not_ok_to(tests, n, "mapping failed");
		return false;
	}
	*hits = dlx_bell_injected(bell);
	dlx_bell_arm(bell);
	came = dlx_copy_wait(c, d, s, PAGE_SIZE);
	*hits = dlx_bell_injected(bell) - *hits;
	if (!came) {
		c->abandoned = true;
		dlx_ktap_not_ok_to(tests, n, "no callback, channel abandoned");
		return false;
	}
	dlx_unmap_pair(c, PAGE_SIZE, s, d);
	return true;
}

/* ---- mode=order ------------------------------------------------------ */

/*
 * One round: copy A on channel a (the plan holds it), then a small copy on
 * channel b, which completes first.  The buggy consumer reads A's
 * destination as soon as b's copy has completed; the fixed one waits for A's
 * own completion.  A is released between the two reads.  Returns whether A's
 * destination held A's data when the consumer read it, or -1 when a copy did
 * not complete, or the fault was not injected or not released.
 */
static int dlx_order_round(struct dlx_chan *a, struct dlx_chan *b,
			   struct dlx_bell *bell, bool buggy, u8 salt)
{
	struct device *da = a->chan->device->dev, *db = b->chan->device->dev;
	dma_addr_t as, ad, bs, bd;
	bool a_done, b_done, landed = false, released;
	u64 hits;
	int ret = -1;

	dlx_fill(a->src, DLX_ORDER_LEN, 0, DLX_ORDER_LEN, salt);
	memset(a->dst, 0, DLX_ORDER_LEN);
	dlx_fill(b->src, DLX_ORDER_SIDE_LEN, 0, DLX_ORDER_SIDE_LEN, salt + 1);
	as = dma_map_single(da, a->src, DLX_ORDER_LEN, DMA_TO_DEVICE);
	ad = dma_map_single(da, a->dst, DLX_ORDER_LEN, DMA_FROM_DEVICE);
	bs = dma_map_single(db, b->src, DLX_ORDER_SIDE_LEN, DMA_TO_DEVICE);
	bd = dma_map_single(db, b->dst, DLX_ORDER_SIDE_LEN, DMA_FROM_DEVICE);
	if (dma_mapping_error(da, as) || dma_mapping_error(da, ad) ||
	    dma_mapping_error(db, bs) || dma_mapping_error(db, bd)) {
		pr_info("# %s: order: mapping failed\n", DLX_NAME);
		goto unmap;
	}
	hits = dlx_bell_injected(bell);
	dlx_bell_arm(bell);
	if (!dlx_start_copy(a, ad, as, DLX_ORDER_LEN) ||
	    !dlx_start_copy(b, bd, bs, DLX_ORDER_SIDE_LEN)) {
		pr_info("# %s: order: cannot start the copies\n", DLX_NAME);
		a->abandoned = b->abandoned = true;
		goto unmap;
	}
	b_done = dlx_wait(b, b->tmo_ms);
	if (buggy) {
		/* The bug: b's completion taken as proof that a's copy is done. */
		dma_sync_single_for_cpu(da, ad, DLX_ORDER_LEN, DMA_FROM_DEVICE);
		landed = !memcmp(a->dst, a->src, DLX_ORDER_LEN);
	}
	/* The engine gets to A at last. */
	released = dlx_bell_release(bell);
	a_done = dlx_wait(a, a->tmo_ms);
	if (!buggy) {
		dma_sync_single_for_cpu(da, ad, DLX_ORDER_LEN, DMA_FROM_DEVICE);
		landed = !memcmp(a->dst, a->src, DLX_ORDER_LEN);
	}
	hits = dlx_bell_injected(bell) - hits;
	pr_info("# %s: order: %s consumer: A %s, B %s, A's data %s when read, %llu fault(s) injected, A %s after B's completion\n",
		DLX_NAME, buggy ? "buggy" : "fixed",
		a_done ? dlx_result_name(a->result) : "no callback",
		b_done ? dlx_result_name(b->result) : "no callback",
		landed ? "complete" : "stale", hits,
		released ? "released" : "NOT ended by the release (the plan needs \"until\": \"release\", and the copy must still be held)");
	if (!a_done)
		a->abandoned = true;
	if (!b_done)
		b->abandoned = true;
	if (a_done && b_done && a->result == DMA_TRANS_NOERROR &&
	    b->result == DMA_TRANS_NOERROR && hits == 1 && released)
		ret = landed;
unmap:
	if (a->abandoned || b->abandoned)
		return -1;	/* a copy may still reach the buffers */
	dma_unmap_single(db, bd, DLX_ORDER_SIDE_LEN, DMA_FROM_DEVICE);
	dma_unmap_single(db, bs, DLX_ORDER_SIDE_LEN, DMA_TO_DEVICE);
	dma_unmap_single(da, ad, DLX_ORDER_LEN, DMA_FROM_DEVICE);
	dma_unmap_single(da, as, DLX_ORDER_LEN, DMA_TO_DEVICE);
	return ret;
}

static void dlx_mode_order(unsigned int n)
{
	static const char *const tests[] = {
		"completion-order-bug", "own-completion", "copies-after"
	};
	struct dlx_chan *cs[2] = { &dlx_chans[0], &dlx_chans[1] };
	struct dlx_bell bell = { };
	u64 start = ktime_get_ns(), rng0 = dlx_chan_rng(0), rng1 = dlx_chan_rng(1);
	int landed;
	bool ok;

	dlx_ktap_plan(3);
	if (n < 2) {
		dlx_ktap_not_ok_to(tests, 3, "needs two channels");
		return;
	}
	if (!dlx_race_setup(cs, 2, tests, 3))
		goto out;
	if (!dlx_bell_open(cs[0], &bell)) {
		dlx_ktap_not_ok_to(tests, 3, "no fault doorbell");
		goto free;
	}
	/* The bug shows: B completed while A's destination was still stale. */
	landed = dlx_order_round(cs[0], cs[1], &bell, true, 1);
	dlx_ktap_result(landed == 0, "%s", tests[0]);
	/* The fix: waiting for A's own completion gives A's data. */
	landed = dlx_order_round(cs[0], cs[1], &bell, false, 2);
	dlx_ktap_result(landed == 1, "%s", tests[1]);
	ok = !cs[0]->abandoned && !cs[1]->abandoned &&
	     dlx_copies(cs[0], 10, &rng0) && dlx_copies(cs[1], 10, &rng1);
	dlx_ktap_result(ok, "%s", tests[2]);
	dlx_bell_close(&bell);
free:
	dlx_free_buffers(cs[0]);
	dlx_free_buffers(cs[1]);
out:
	dlx_chan_report(cs[0], start);
	dlx_chan_report(cs[1], start);
	dlx_summary(0, 2);
}

/* ---- mode=fail ------------------------------------------------------- */

static void dlx_mode_fail(unsigned int n)
{
	static const char *const tests[] = {
		"copies-before", "failed-descriptor", "copies-after"
	};
	struct dlx_chan *c = &dlx_chans[0];
	struct dlx_bell bell = { };
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0), hits;
	bool untouched, ok;

	dlx_ktap_plan(3);
	if (!dlx_race_begin(c, tests, 3, &bell, &rng))
		goto out;
	dlx_fill(c->src, PAGE_SIZE, 0, PAGE_SIZE, 7);
	memset(c->dst, DLX_POISON, PAGE_SIZE);
	if (!dlx_armed_copy(c, &bell, tests, 3, &hits))
		goto out;
	untouched = !memchr_inv(c->dst, DLX_POISON, PAGE_SIZE);
	pr_info("# %s: fail: result %s, destination %s, %llu fault(s) injected\n",
		DLX_NAME, dlx_result_name(c->result),
		untouched ? "untouched" : "written", hits);
	ok = c->result == DMA_TRANS_READ_FAILED && untouched && hits == 1;
	dlx_ktap_result(ok, "%s", tests[1]);
	/*
	 * ioat_eh calls the failed copy back before it restarts the channel;
	 * once it has (dlx_settle), every copy must complete by interrupt,
	 * faster than the driver's timer would notice.
	 */
	ok = dlx_settle(c);
	c->tmo_ms = fast_ms;
	ok = ok && dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "%s", tests[2]);
out:
	dlx_race_end(c, &bell, start);
}

/* ---- mode=cpuwrite --------------------------------------------------- */

#define DLX_CPUWRITE_AT		100

/* The racing store and load, in functions of their own so the detector's reports name them. */
static noinline void dlx_cpuwrite_store(u8 *p, u8 v)
{
	WRITE_ONCE(*p, v);
}

static noinline u8 dlx_cpuwrite_peek(const u8 *p)
{
	return READ_ONCE(*p);
}

/*
 * One copy of a page from c->src, with the CPU writing byte DLX_CPUWRITE_AT
 * of the source before (racing) or after (fixed) the copy's completion.
 * Returns the byte the destination got, or -1.
 */
static int dlx_cpuwrite_round(struct dlx_chan *c, struct dlx_bell *bell,
			      bool racing, u64 *hits)
{
	dma_addr_t s, d;
	bool came, released;
	int got = -1;

	dlx_fill(c->src, PAGE_SIZE, 0, PAGE_SIZE, 31);
	c->src[DLX_CPUWRITE_AT] = 0x11;
	memset(c->dst, 0, PAGE_SIZE);
	if (!dlx_map_pair(c, PAGE_SIZE, &s, &d))
		return -1;
	*hits = dlx_bell_injected(bell);
	dlx_bell_arm(bell);
	if (!dlx_start_copy(c, d, s, PAGE_SIZE))
		goto unmap;
	if (!dlx_bell_taken(bell, *hits, 1000))
		pr_info("# %s: cpuwrite: the device had not taken the copy after 1 s\n",
			DLX_NAME);
	if (racing) {
		dlx_cpuwrite_store(c->src + DLX_CPUWRITE_AT, 0x22);
		/* and a look at the destination before the copy is done */
		pr_info("# %s: cpuwrite: the destination read 0x%02x before the completion\n",
			DLX_NAME, dlx_cpuwrite_peek(c->dst + DLX_CPUWRITE_AT));
	}
	/* The copy's data phase goes on now. */
	released = dlx_bell_release(bell);
	if (!released)
		pr_info("# %s: cpuwrite: the copy's hold was not ended by the release (the plan needs \"until\": \"release\", and the copy must still be held)\n",
			DLX_NAME);
	came = wait_for_completion_timeout(&c->done,
					   msecs_to_jiffies(c->tmo_ms)) != 0;
	if (!came) {
		c->abandoned = true;
		return -1;
	}
	if (!racing) {
		dlx_cpuwrite_store(c->src + DLX_CPUWRITE_AT, 0x22);
		dlx_cpuwrite_peek(c->dst + DLX_CPUWRITE_AT);
	}
	*hits = dlx_bell_injected(bell) - *hits;
	if (c->result == DMA_TRANS_NOERROR && released)
		got = c->dst[DLX_CPUWRITE_AT];
unmap:
	dlx_unmap_pair(c, PAGE_SIZE, s, d);
	return got;
}

static void dlx_mode_cpuwrite(unsigned int n)
{
	static const char *const tests[] = {
		"copies-before", "cpu-write-under-dma", "write-after-completion",
		"copies-after"
	};
	struct dlx_chan *c = &dlx_chans[0];
	struct dlx_bell bell = { };
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0), hits = 0;
	int got;
	bool ok;

	dlx_ktap_plan(4);
	if (!dlx_race_begin(c, tests, 4, &bell, &rng))
		goto out;
	pr_info("# %s: cpuwrite: the racing store is in dlx_cpuwrite_store at %px\n",
		DLX_NAME, dlx_cpuwrite_store);
	got = dlx_cpuwrite_round(c, &bell, true, &hits);
	pr_info("# %s: cpuwrite: written during the copy: the destination got 0x%02x (the driver meant 0x11), %llu fault(s) injected\n",
		DLX_NAME, got & 0xff, hits);
	dlx_ktap_result(got == 0x22 && hits == 1, "%s", tests[1]);
	if (c->abandoned)
		goto out;
	got = dlx_cpuwrite_round(c, &bell, false, &hits);
	pr_info("# %s: cpuwrite: written after the completion: the destination got 0x%02x, %llu fault(s) injected\n",
		DLX_NAME, got & 0xff, hits);
	dlx_ktap_result(got == 0x11 && hits == 1, "%s", tests[2]);
	ok = !c->abandoned && dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "%s", tests[3]);
out:
	dlx_race_end(c, &bell, start);
}

/* ---- mode=lostirq ---------------------------------------------------- */

/* A callback this late did not come from the copy's interrupt. */
#define DLX_LOSTIRQ_MIN_MS	20

static void dlx_mode_lostirq(unsigned int n)
{
	static const char *const tests[] = {
		"copies-before", "lost-interrupt-recovered", "copies-after"
	};
	struct dlx_chan *c = &dlx_chans[0];
	struct dlx_bell bell = { };
	u64 start = ktime_get_ns(), rng = dlx_chan_rng(0), hits, t0, ms;
	bool right, ok;

	dlx_ktap_plan(3);
	if (!dlx_race_begin(c, tests, 3, &bell, &rng))
		goto out;
	dlx_fill(c->src, PAGE_SIZE, 0, PAGE_SIZE, 23);
	memset(c->dst, 0, PAGE_SIZE);
	t0 = ktime_get_ns();
	if (!dlx_armed_copy(c, &bell, tests, 3, &hits))
		goto out;
	ms = div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC);
	right = !memcmp(c->dst, c->src, PAGE_SIZE);
	ok = c->result == DMA_TRANS_NOERROR && hits == 1 && right &&
	     ms >= DLX_LOSTIRQ_MIN_MS;
	pr_info("# %s: lostirq: copy called back after %llu ms, result %s, data %s, %llu fault(s) injected\n",
		DLX_NAME, ms, dlx_result_name(c->result),
		right ? "right" : "wrong", hits);
	dlx_ktap_result(ok, "%s", tests[1]);
	c->tmo_ms = fast_ms;
	ok = dlx_copies(c, 10, &rng);
	dlx_ktap_result(ok, "%s", tests[2]);
out:
	dlx_race_end(c, &bell, start);
}


const struct dlx_mode dlx_race_modes[] = {
	{ "order", dlx_mode_order },
	{ "fail", dlx_mode_fail },
	{ "lostirq", dlx_mode_lostirq },
	{ "cpuwrite", dlx_mode_cpuwrite },
	{ "uaf", dlx_mode_uaf },
	{ "cow", dlx_mode_cow },
	{ NULL, NULL },
};
