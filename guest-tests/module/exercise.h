/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmalab_exercise: what exercise.c (verified copies, driver error paths)
 * shares with races.c (the fault-injection scenarios).
 */
#ifndef DLX_EXERCISE_H
#define DLX_EXERCISE_H

#include <linux/completion.h>
#include <linux/dmaengine.h>
#include <linux/types.h>

#define DLX_NAME		"dmalab_exercise"
#define DLX_MAX_CHANNELS	64
#define DLX_GUARD		64	/* poison bytes checked on each side */
#define DLX_POISON		0xa5
#define DLX_MAX_FAILS		8	/* give up on a channel after this */

struct dlx_chan {
	struct dma_chan *chan;
	const char *name;
	struct page *src_pages;
	struct page *dst_pages;
	u8 *src;
	u8 *dst;
	unsigned int order;
	size_t buf_len;

	/* completion state of the operation in flight */
	struct completion done;
	enum dmaengine_tx_result result;
	unsigned int tmo_ms;	/* how long to wait for it */
	unsigned int seq;	/* copies started (picks the next length) */

	/* statistics */
	unsigned int ops;
	unsigned int failures;
	u64 bytes;
	u64 dma_ns;
	u64 wall_ns;
	bool abandoned;		/* a copy may still be in flight: leak */
	bool kept;		/* still in use after init (mode=cow): keep */

	/* pace_bandwidth/pace_latency_ns: copies faster than the device's model */
	unsigned int paced_early;
	u64 paced_min_permille;	/* smallest elapsed / modelled, x1000 */
};

extern struct dlx_chan dlx_chans[DLX_MAX_CHANNELS];
extern unsigned int max_len;
extern unsigned long long seed;
extern unsigned int timeout_ms;
extern char *stale_expect;

void dlx_callback(void *param, const struct dmaengine_result *res);
/* Fills [off, off + len) of buf with the pattern of op_seed (buf_len a multiple of 8). */
void dlx_fill(u8 *buf, size_t buf_len, size_t off, size_t len, u64 op_seed);
const char *dlx_result_name(enum dmaengine_tx_result r);
int dlx_alloc_buffers(struct dlx_chan *c);
void dlx_free_buffers(struct dlx_chan *c);
bool dlx_copies(struct dlx_chan *c, unsigned int count, u64 *rng);
void dlx_chan_report(struct dlx_chan *c, u64 start);
u64 dlx_chan_rng(unsigned int chan_idx);
void dlx_summary(unsigned int first, unsigned int count);
/* Prepares, submits and issues one copy whose callback completes c->done. */
bool dlx_start_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		    size_t len);
bool dlx_copy_wait(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len);
void __iomem *dlx_ioat_map(struct dlx_chan *c, void __iomem **bar);

/* races.c */
/* A mode= of the exerciser and what runs it, given the n channels it got. */
struct dlx_mode {
	const char *name;
	void (*run)(unsigned int n);
};

/* races.c's modes, ended by a NULL name. */
extern const struct dlx_mode dlx_race_modes[];

#endif
