/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mode=raid's buffers and operations, shared by raid.c and raid_fill.c.
 */
#ifndef DLX_RAID_H
#define DLX_RAID_H

#include <linux/dmaengine.h>
#include <linux/string.h>
#include <linux/types.h>

#include "exercise.h"

#define DLX_RAID_LEN	16384
#define DLX_RAID_SRCS	16
/* the sources, then P and Q, then the CPU's expected P and Q */
#define DLX_RAID_BUFS	(DLX_RAID_SRCS + 4)
#define DLX_RAID_P	DLX_RAID_SRCS
#define DLX_RAID_Q	(DLX_RAID_SRCS + 1)
#define DLX_RAID_WANT_P	(DLX_RAID_SRCS + 2)
#define DLX_RAID_WANT_Q	(DLX_RAID_SRCS + 3)

enum dlx_raid_op {
	DLX_RAID_MEMCPY,
	DLX_RAID_INTERRUPT,
	DLX_RAID_XOR,
	DLX_RAID_XOR_VAL,
	DLX_RAID_PQ,
	DLX_RAID_PQ_VAL,
	DLX_RAID_PQ16,
	DLX_RAID_PQ16_VAL,
	DLX_RAID_VAL_CHAIN,	/* a wrong PQ_VAL submitted from another's callback */
	DLX_RAID_FILL,		/* raw descriptors, not through dmaengine */
	DLX_RAID_OPS,
};

/* What each operation needs of the channel and does with the sources. */
struct dlx_raid_kind {
	const char *name;
	enum dma_transaction_type cap;	/* the dmaengine capability */
	u8 lo, hi;			/* sources: from lo to hi */
	bool q;				/* Q too (the PQ forms) */
	bool validate;			/* compares and reports, writes nothing */
	bool wide;			/* 9-16 sources: dma_maxpq() must reach 16 */
};

/* One channel's buffers and the operation it has in flight. */
struct dlx_raid {
	struct dlx_chan *c;
	struct device *dev;
	u8 *buf[DLX_RAID_BUFS];
	dma_addr_t dma[DLX_RAID_BUFS];
	u8 coef[DLX_RAID_SRCS];
	unsigned int srcs;
	size_t len;
	enum sum_check_flags check;	/* written by the driver before the callback */
	enum sum_check_flags want;	/* what a validation must report */
	/* xor-val-chain: the second validation's flags, and why it did not run */
	enum sum_check_flags check2;
	enum dmaengine_tx_result result1;
	const char *chain_why;
	bool submitted;
	/* fill: the channel's registers and its one descriptor */
	void __iomem *bar;
	void __iomem *regs;
	__le64 *desc;
	dma_addr_t desc_dma;
	u64 pattern;
	unsigned int failed[DLX_RAID_OPS];
	unsigned int done[DLX_RAID_OPS];
	char why[DLX_RAID_OPS][64];
};

/* The first failure of op on r says why; later ones only count. */
static inline void dlx_raid_fail(struct dlx_raid *r, enum dlx_raid_op op,
				  const char *why)
{
	if (!r->failed[op]++)
		strscpy(r->why[op], why, sizeof(r->why[op]));
}

/* raid_fill.c: fill, as raw descriptors on the channel's own registers */
void dlx_raid_fill_start(struct dlx_raid *r, u64 *rng);
void dlx_raid_fill_check(struct dlx_raid *r);

#endif
