// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=raid: every operation a channel offers through
 * dmaengine, on every channel at once, each result checked by the CPU.
 *
 * A round gives each channel one operation of the same kind, issues them all,
 * waits for every callback and then verifies: memcpy and interrupt, which
 * every channel has; XOR of 2-8 sources; XOR_VAL over sources that XOR to
 * zero and over a parity with one byte wrong (the engine must report
 * SUM_CHECK_P_RESULT); PQ of 2-8 sources with random coefficients; PQ_VAL
 * with P and Q right, P wrong or Q wrong (the matching SUM_CHECK flag only);
 * and, where the device takes 16 sources (dma_maxpq() of 16: ioatdma's
 * RAID16SS), PQ and PQ_VAL of 9-16 sources.  Then two wrong PQ_VAL parities
 * in a row, the second submitted from the first one's callback: ioatdma
 * calls it from its error handler (ioat_eh) before it restarts the channel,
 * so the restart's chain always begins with the second, which fails before
 * any descriptor of the new chain completed.  (A PQ on CB3.3 completes in
 * its own descriptor, which is the one that fails; an XOR carries its
 * completion in a null descriptor after it, whose callback comes only after
 * the restart: __ioat_prep_pq_lock, __ioat_prep_xor_lock.)  One KTAP result per channel and
 * operation; an operation the channel does not offer is a SKIP.
 *
 * Fill last: ioatdma (v6.1 and v6.12) offers no DMA_MEMSET, so the module
 * gives each idle channel one fill descriptor of its own behind the driver's
 * back, all channels at once (where DMACAPABILITY advertises fill).  Idle
 * means ioatdma is done with it: a validation's callback comes from inside
 * ioat_eh, which clears CHANERR and restarts the channel only after it
 * returns, so each fill round first waits for an interrupt descriptor
 * submitted through dmaengine, which completes only once that restart has
 * run.  The module then polls
 * CHANSTS until the channel is done with it and checks the pattern; a reset
 * then leaves each channel as ioatdma's release of it expects (as
 * mode=hostile-ring does).  The descriptor asks for no completion write: the
 * channel's completion address is still ioatdma's.
 *
 * raid_rounds sets the rounds per operation.  Lengths are multiples of 64
 * bytes up to DLX_RAID_LEN, from the seed.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "exercise.h"
#include "raid.h"

static unsigned int raid_rounds = 6;
module_param(raid_rounds, uint, 0444);
MODULE_PARM_DESC(raid_rounds, "mode=raid: rounds per operation (default 6)");

static const struct dlx_raid_kind dlx_raid_kinds[DLX_RAID_OPS] = {
	[DLX_RAID_MEMCPY] = { "memcpy", DMA_MEMCPY, 1, 1 },
	[DLX_RAID_INTERRUPT] = { "interrupt", DMA_INTERRUPT, 0, 0 },
	[DLX_RAID_XOR] = { "xor", DMA_XOR, 2, 8 },
	/* with the parity, 8 sources: ioatdma's max_xor */
	[DLX_RAID_XOR_VAL] = { "xor-val", DMA_XOR_VAL, 2, 7, .validate = true },
	[DLX_RAID_PQ] = { "pq", DMA_PQ, 2, 8, .q = true },
	[DLX_RAID_PQ_VAL] = { "pq-val", DMA_PQ_VAL, 2, 8, .q = true, .validate = true },
	[DLX_RAID_PQ16] = { "pq16", DMA_PQ, 9, 16, .q = true, .wide = true },
	[DLX_RAID_PQ16_VAL] = { "pq16-val", DMA_PQ_VAL, 9, 16, .q = true, .validate = true,
				.wide = true },
	[DLX_RAID_VAL_CHAIN] = { "pq-val-chain", DMA_PQ_VAL, 2, 8, .q = true, .validate = true },
	/* not through dmaengine: DMACAPABILITY says (dlx_raid_offered) */
	[DLX_RAID_FILL] = { "fill" },
};

/* GF(2^8) with the RAID-6 polynomial 0x11d, by log and exp tables. */
static u8 dlx_gf_exp[512];
static u8 dlx_gf_log[256];

static void dlx_gf_init(void)
{
	unsigned int i, x = 1;

	for (i = 0; i < 255; i++) {
		dlx_gf_exp[i] = x;
		dlx_gf_exp[i + 255] = x;
		dlx_gf_log[x] = i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
}

static u8 dlx_gf_mul(u8 a, u8 b)
{
	if (!a || !b)
		return 0;
	return dlx_gf_exp[dlx_gf_log[a] + dlx_gf_log[b]];
}

/* The CPU's P (and Q, with q) of the r->srcs sources. */
static void dlx_raid_expect(struct dlx_raid *r, bool q)
{
	u8 *p = r->buf[DLX_RAID_WANT_P], *qq = r->buf[DLX_RAID_WANT_Q];
	unsigned int s;
	size_t i;

	memset(p, 0, r->len);
	memset(qq, 0, r->len);
	for (s = 0; s < r->srcs; s++) {
		const u8 *d = r->buf[s];

		for (i = 0; i < r->len; i++) {
			p[i] ^= d[i];
			if (q)
				qq[i] ^= dlx_gf_mul(r->coef[s], d[i]);
		}
	}
}

static bool dlx_raid_alloc(struct dlx_raid *r, struct dlx_chan *c)
{
	unsigned int i;

	r->c = c;
	r->dev = c->chan->device->dev;
	init_completion(&c->done);
	for (i = 0; i < DLX_RAID_BUFS; i++) {
		r->buf[i] = dma_alloc_coherent(r->dev, DLX_RAID_LEN, &r->dma[i],
					       GFP_KERNEL);
		if (!r->buf[i])
			return false;
	}
	/* fill's registers and descriptor; without them fill is not offered */
	r->regs = dlx_ioat_map(c, &r->bar);
	if (r->regs)
		r->desc = dma_alloc_coherent(r->dev, 64, &r->desc_dma, GFP_KERNEL);
	if (!r->desc && r->bar) {
		pci_iounmap(to_pci_dev(r->dev), r->bar);
		r->bar = NULL;
	}
	return true;
}

static void dlx_raid_free(struct dlx_raid *r)
{
	unsigned int i;

	for (i = 0; i < DLX_RAID_BUFS; i++)
		if (r->buf[i])
			dma_free_coherent(r->dev, DLX_RAID_LEN, r->buf[i],
					  r->dma[i]);
	if (r->desc)
		dma_free_coherent(r->dev, 64, r->desc, r->desc_dma);
	if (r->bar)
		pci_iounmap(to_pci_dev(r->dev), r->bar);
}

/* Whether the channel offers op (dmaengine's capabilities, ioatdma's limits). */
static bool dlx_raid_offered(struct dlx_raid *r, enum dlx_raid_op op)
{
	const struct dlx_raid_kind *k = &dlx_raid_kinds[op];
	struct dma_device *d = r->c->chan->device;

	if (op == DLX_RAID_FILL)
		return r->bar &&
		       (readl(r->bar + DLX_IOAT_DMACAPABILITY) & DLX_IOAT_CAP_FILL);
	return dma_has_cap(k->cap, d->cap_mask) &&
	       (!k->wide || dma_maxpq(d, 0) >= 16);
}

/*
 * Sets up round k of op: the sources' count, data and coefficients, the
 * length, and for the validations the parity to check with the answer it
 * must give (one byte of P or Q turned wrong in two rounds of three).
 */
static void dlx_raid_prepare(struct dlx_raid *r, enum dlx_raid_op op,
			     unsigned int k, u64 *rng)
{
	const struct dlx_raid_kind *kind = &dlx_raid_kinds[op];
	unsigned int s;
	size_t at;

	r->srcs = kind->lo + dlx_below(rng, kind->hi - kind->lo + 1);
	r->len = 64 * (1 + dlx_below(rng, DLX_RAID_LEN / 64));
	for (s = 0; s < r->srcs; s++) {
		dlx_fill(r->buf[s], DLX_RAID_LEN, 0, DLX_RAID_LEN, dlx_next(rng));
		r->coef[s] = 1 + dlx_below(rng, 255);
	}
	memset(r->buf[DLX_RAID_P], DLX_POISON, DLX_RAID_LEN);
	memset(r->buf[DLX_RAID_Q], DLX_POISON, DLX_RAID_LEN);
	dlx_raid_expect(r, kind->q);
	r->want = 0;
	if (!kind->validate)
		return;
	memcpy(r->buf[DLX_RAID_P], r->buf[DLX_RAID_WANT_P], r->len);
	memcpy(r->buf[DLX_RAID_Q], r->buf[DLX_RAID_WANT_Q], r->len);
	at = dlx_below(rng, r->len);
	if (op == DLX_RAID_XOR_VAL || op == DLX_RAID_VAL_CHAIN || k % 3 == 1) {
		r->buf[DLX_RAID_P][at] ^= 0x5a;
		r->want = SUM_CHECK_P_RESULT;
	} else if (k % 3 == 2) {
		r->buf[DLX_RAID_Q][at] ^= 0x5a;
		r->want = SUM_CHECK_Q_RESULT;
	}
	/* XOR_VAL: the wrong parity in every round but the first */
	if (op == DLX_RAID_XOR_VAL && k == 0) {
		r->buf[DLX_RAID_P][at] ^= 0x5a;
		r->want = 0;
	}
}

/* A PQ_VAL of r's P, Q and sources that reports into *check. */
static struct dma_async_tx_descriptor *
dlx_raid_pq_val(struct dlx_raid *r, enum sum_check_flags *check,
		unsigned long flags)
{
	struct dma_chan *chan = r->c->chan;
	dma_addr_t pq[2] = { r->dma[DLX_RAID_P], r->dma[DLX_RAID_Q] };

	*check = 0;
	return chan->device->device_prep_dma_pq_val(chan, pq, r->dma, r->srcs,
						    r->coef, r->len, check,
						    flags);
}

/* The descriptor for op as r is set up, or NULL when the driver refuses. */
static struct dma_async_tx_descriptor *
dlx_raid_prep(struct dlx_raid *r, enum dlx_raid_op op)
{
	struct dma_chan *chan = r->c->chan;
	struct dma_device *d = chan->device;
	unsigned long flags = DMA_PREP_INTERRUPT | DMA_CTRL_ACK;
	dma_addr_t src[DLX_RAID_SRCS + 1], pq[2];
	unsigned int s;

	pq[0] = r->dma[DLX_RAID_P];
	pq[1] = r->dma[DLX_RAID_Q];
	r->check = 0;
	switch (op) {
	case DLX_RAID_MEMCPY:
		return d->device_prep_dma_memcpy(chan, r->dma[DLX_RAID_P],
						 r->dma[0], r->len, flags);
	case DLX_RAID_INTERRUPT:
		return d->device_prep_dma_interrupt(chan, flags);
	case DLX_RAID_XOR:
		return d->device_prep_dma_xor(chan, r->dma[DLX_RAID_P], r->dma,
					      r->srcs, r->len, flags);
	case DLX_RAID_XOR_VAL:
		/* ioatdma: the parity first, then the sources */
		src[0] = r->dma[DLX_RAID_P];
		for (s = 0; s < r->srcs; s++)
			src[s + 1] = r->dma[s];
		return d->device_prep_dma_xor_val(chan, src, r->srcs + 1,
						  r->len, &r->check, flags);
	case DLX_RAID_PQ:
	case DLX_RAID_PQ16:
		return d->device_prep_dma_pq(chan, pq, r->dma, r->srcs,
					     r->coef, r->len, flags);
	case DLX_RAID_PQ_VAL:
	case DLX_RAID_PQ16_VAL:
	case DLX_RAID_VAL_CHAIN:
		return dlx_raid_pq_val(r, &r->check, flags);
	default:
		return NULL;
	}
}

/*
 * xor-val-chain: the first validation's callback.  ioatdma calls it from
 * ioat_eh, under its cleanup lock, before it clears CHANERR and restarts the
 * channel; dmaengine lets a callback submit (async_tx chains that way).  The
 * second validation is then pending when the restart looks, so the new chain
 * begins with it.  Its own callback (dlx_callback) ends the operation.
 */
static void dlx_raid_chain_callback(void *param,
				    const struct dmaengine_result *res)
{
	struct dlx_raid *r = param;
	struct dma_async_tx_descriptor *tx;

	r->result1 = res ? res->result : DMA_TRANS_NOERROR;
	tx = dlx_raid_pq_val(r, &r->check2, DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
	if (!tx) {
		r->chain_why = "second prep refused";
		complete(&r->c->done);
		return;
	}
	tx->callback_result = dlx_callback;
	tx->callback_param = r->c;
	if (dma_submit_error(dmaengine_submit(tx))) {
		r->chain_why = "second submit failed";
		complete(&r->c->done);
		return;
	}
	dma_async_issue_pending(r->c->chan);
}

static void dlx_raid_submit(struct dlx_raid *r, enum dlx_raid_op op)
{
	struct dma_async_tx_descriptor *tx = dlx_raid_prep(r, op);

	r->submitted = false;
	if (!tx) {
		dlx_raid_fail(r, op, "prep refused");
		return;
	}
	reinit_completion(&r->c->done);
	if (op == DLX_RAID_VAL_CHAIN) {
		r->chain_why = NULL;
		r->check2 = 0;
		tx->callback_result = dlx_raid_chain_callback;
		tx->callback_param = r;
	} else {
		tx->callback_result = dlx_callback;
		tx->callback_param = r->c;
	}
	if (dma_submit_error(dmaengine_submit(tx))) {
		dlx_raid_fail(r, op, "submit failed");
		return;
	}
	r->submitted = true;
}

/*
 * After the callback: why the result is not the CPU's, or NULL.  A copy is
 * checked as the XOR of its one source.
 */
static const char *dlx_raid_wrong(struct dlx_raid *r, enum dlx_raid_op op,
				  char *why, size_t size)
{
	const struct dlx_raid_kind *kind = &dlx_raid_kinds[op];

	if (r->c->result != DMA_TRANS_NOERROR)
		return dlx_result_name(r->c->result);
	if (op == DLX_RAID_VAL_CHAIN) {
		if (r->chain_why)
			return r->chain_why;
		if (r->result1 != DMA_TRANS_NOERROR)
			return dlx_result_name(r->result1);
		if (r->check == r->want && r->check2 == r->want)
			return NULL;
		snprintf(why, size, "checks 0x%x and 0x%x, want 0x%x", r->check,
			 r->check2, r->want);
		return why;
	}
	if (kind->validate) {
		if (r->check == r->want)
			return NULL;
		snprintf(why, size, "check 0x%x, want 0x%x", r->check, r->want);
		return why;
	}
	if (!r->srcs)
		return NULL;	/* an interrupt: its callback is the result */
	if (memcmp(r->buf[DLX_RAID_P], r->buf[DLX_RAID_WANT_P], r->len))
		return "P differs";
	if (kind->q && memcmp(r->buf[DLX_RAID_Q], r->buf[DLX_RAID_WANT_Q], r->len))
		return "Q differs";
	return NULL;
}

static void dlx_raid_check(struct dlx_raid *r, enum dlx_raid_op op)
{
	char buf[64];
	const char *why = dlx_raid_wrong(r, op, buf, sizeof(buf));

	if (why) {
		dlx_raid_fail(r, op, why);
		return;
	}
	r->c->ops++;
	/* the summary's bytes are copied bytes, as the device counts them */
	if (op == DLX_RAID_MEMCPY)
		r->c->bytes += r->len;
	r->done[op]++;
}

/*
 * Before the first fill: an interrupt descriptor through dmaengine on every
 * channel that will fill, and its callback waited for.  It runs only after
 * the restart that ends ioatdma's handling of the last validation's error,
 * so once it called back the channel is idle and ioatdma is done with it.
 * (Only before the first: after a fill the channel's chain is the module's,
 * and ioatdma's next descriptor would follow it; the reset at the end gives
 * the channel back.)
 */
static void dlx_raid_settle(struct dlx_raid *rs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!dlx_raid_offered(&rs[i], DLX_RAID_FILL) || rs[i].c->abandoned)
			continue;
		dlx_raid_submit(&rs[i], DLX_RAID_INTERRUPT);
		if (rs[i].submitted)
			dma_async_issue_pending(rs[i].c->chan);
		else
			dlx_raid_fail(&rs[i], DLX_RAID_FILL, "no interrupt before it");
	}
	for (i = 0; i < n; i++) {
		if (!rs[i].submitted)
			continue;
		rs[i].submitted = false;
		if (!dlx_wait(rs[i].c, timeout_ms)) {
			rs[i].c->abandoned = true;
			dlx_raid_fail(&rs[i], DLX_RAID_FILL, "interrupt before it: timeout");
		}
	}
}

/* One round of op on every channel that offers it, all in flight at once. */
static void dlx_raid_round(struct dlx_raid *rs, unsigned int n,
			   enum dlx_raid_op op, unsigned int k, u64 *rng)
{
	unsigned int i;

	if (op == DLX_RAID_FILL && k == 0)
		dlx_raid_settle(rs, n);
	for (i = 0; i < n; i++) {
		if (!dlx_raid_offered(&rs[i], op) ||
		    rs[i].failed[op] >= DLX_MAX_FAILS || rs[i].c->abandoned)
			continue;
		if (op == DLX_RAID_FILL) {
			dlx_raid_fill_start(&rs[i], rng);
			continue;
		}
		dlx_raid_prepare(&rs[i], op, k, rng);
		dlx_raid_submit(&rs[i], op);
	}
	if (op == DLX_RAID_FILL) {
		for (i = 0; i < n; i++) {
			if (!rs[i].submitted)
				continue;
			rs[i].submitted = false;
			dlx_raid_fill_check(&rs[i]);
		}
		return;
	}
	for (i = 0; i < n; i++)
		if (rs[i].submitted)
			dma_async_issue_pending(rs[i].c->chan);
	for (i = 0; i < n; i++) {
		if (!rs[i].submitted)
			continue;
		rs[i].submitted = false;
		if (!dlx_wait(rs[i].c, timeout_ms)) {
			/* the buffers may still be written: keep them */
			rs[i].c->abandoned = true;
			rs[i].failed[op] = DLX_MAX_FAILS;
			strscpy(rs[i].why[op], "timeout", sizeof(rs[i].why[op]));
			continue;
		}
		dlx_raid_check(&rs[i], op);
	}
}

static void dlx_raid_report(struct dlx_raid *rs, unsigned int n)
{
	unsigned int i, op;

	for (i = 0; i < n; i++) {
		for (op = 0; op < DLX_RAID_OPS; op++) {
			struct dlx_raid *r = &rs[i];

			if (!dlx_raid_offered(r, op))
				dlx_ktap_result(true, "%s-%s # SKIP not offered",
						r->c->name, dlx_raid_kinds[op].name);
			else if (r->failed[op])
				dlx_ktap_result(false, "%s-%s # %u of %u failed, first: %s",
						r->c->name, dlx_raid_kinds[op].name,
						r->failed[op], raid_rounds,
						r->why[op]);
			else
				dlx_ktap_result(r->done[op] == raid_rounds,
						"%s-%s # %u verified",
						r->c->name, dlx_raid_kinds[op].name,
						r->done[op]);
		}
	}
}

/* mode=raid: every offered operation on every channel, all channels at once. */
void dlx_mode_raid(unsigned int n)
{
	struct dlx_raid *rs = kcalloc(n, sizeof(*rs), GFP_KERNEL);
	u64 rng = seed ^ 0x9e3779b97f4a7c15ULL;
	bool keep = false;
	unsigned int i, op, k;

	dlx_ktap_plan(n * DLX_RAID_OPS);
	if (!rs)
		return;
	dlx_gf_init();
	for (i = 0; i < n; i++) {
		if (!dlx_raid_alloc(&rs[i], &dlx_chans[i])) {
			pr_info("# %s: raid: no coherent buffers for %s\n",
				DLX_NAME, dlx_chans[i].name);
			goto out;
		}
	}
	for (op = 0; op < DLX_RAID_OPS; op++)
		for (k = 0; k < raid_rounds; k++)
			dlx_raid_round(rs, n, op, k, &rng);
	/* the channels that ran fills: a reset hands them back to ioatdma */
	for (i = 0; i < n; i++)
		if (rs[i].done[DLX_RAID_FILL] || rs[i].failed[DLX_RAID_FILL])
			writeb(DLX_IOAT_CHANCMD_RESET, rs[i].regs + DLX_IOAT_CHANCMD);
	dlx_raid_report(rs, n);
	dlx_summary(0, n);
out:
	for (i = 0; i < n; i++) {
		/* a channel that timed out may still write its buffers */
		if (dlx_chans[i].abandoned)
			keep = true;
		else
			dlx_raid_free(&rs[i]);
	}
	if (!keep)
		kfree(rs);
}
