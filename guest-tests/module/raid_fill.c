// SPDX-License-Identifier: GPL-2.0
/*
 * mode=raid's fill: ioatdma offers no DMA_MEMSET, so each channel that
 * advertises fill in DMACAPABILITY gets one raw fill descriptor of the
 * module's own on its registers, polled to completion and checked (raid.c
 * settles the channels first).
 */

#include <linux/delay.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "exercise.h"
#include "raid.h"

/* Gives the idle channel one fill descriptor of its own and starts it. */
void dlx_raid_fill_start(struct dlx_raid *r, u64 *rng)
{
	__le64 *d = r->desc;

	r->len = 64 * (1 + dlx_below(rng, DLX_RAID_LEN / 64 - 1));
	r->pattern = dlx_next(rng);
	memset(r->buf[DLX_RAID_P], DLX_POISON, DLX_RAID_LEN);
	memset(d, 0, 64);
	d[0] = cpu_to_le64(r->len | (u64)(DLX_IOAT_OP_FILL << 24) << 32);
	d[1] = cpu_to_le64(r->pattern);
	d[2] = cpu_to_le64(r->dma[DLX_RAID_P]);
	d[3] = cpu_to_le64(r->desc_dma);
	/* stop the idle channel, point it at the descriptor, one to run */
	writeb(DLX_IOAT_CHANCMD_SUSPEND, r->regs + DLX_IOAT_CHANCMD);
	lo_hi_writeq(r->desc_dma, r->regs + DLX_IOAT_CHAINADDR);
	writew(1, r->regs + DLX_IOAT_DMACOUNT);
	r->submitted = true;
}

/* Polls the channel until it is done with the fill; why not, or NULL. */
static const char *dlx_raid_fill_wait(struct dlx_raid *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	u64 sts;

	do {
		sts = lo_hi_readq(r->regs + DLX_IOAT_CHANSTS);
		if ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_HALTED)
			return "channel halted";
		if ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_DONE &&
		    (sts & ~0x3fULL) == r->desc_dma)
			return NULL;
		usleep_range(50, 100);
	} while (time_before(jiffies, end));
	return "timeout";
}

void dlx_raid_fill_check(struct dlx_raid *r)
{
	const u8 *p = r->buf[DLX_RAID_P];
	const char *why = dlx_raid_fill_wait(r);
	size_t i;

	for (i = 0; !why && i < r->len; i++)
		if (p[i] != (u8)(r->pattern >> (8 * (i % 8))))
			why = "pattern differs";
	if (!why && p[r->len] != DLX_POISON)
		why = "wrote past the block";
	if (why) {
		pr_info("# %s: %s fill: %s, CHANSTS %#llx CHANERR %#x\n", DLX_NAME,
			r->c->name, why,
			(unsigned long long)lo_hi_readq(r->regs + DLX_IOAT_CHANSTS),
			readl(r->regs + DLX_IOAT_CHANERR));
		dlx_raid_fail(r, DLX_RAID_FILL, why);
		return;
	}
	r->c->ops++;
	r->done[DLX_RAID_FILL]++;
}
