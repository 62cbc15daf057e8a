/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmalab_exercise: what the mode files share: the channels and parameters
 * (exercise.c), the helpers (lib.c), the verified copies (copies.c) and the
 * KTAP output (ktap.c).
 */
#ifndef DLX_EXERCISE_H
#define DLX_EXERCISE_H

#include <linux/completion.h>
#include <linux/dmaengine.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/atomic.h>

#define DLX_NAME		"dmalab_exercise"
#define DLX_MAX_CHANNELS	64
#define DLX_GUARD		64	/* poison bytes checked on each side */
#define DLX_POISON		0xa5
#define DLX_MAX_FAILS		8	/* give up on a channel after this */

/*
 * I/OAT channel registers (drivers/dma/ioat/registers.h), for the modes that
 * drive a channel behind ioatdma's back
 */
#define DLX_IOAT_CHAN_BASE(id)		(0x80 * ((id) + 1))
#define DLX_IOAT_CHANCMD		0x04	/* 8 bit */
#define DLX_IOAT_CHANCMD_SUSPEND	0x04
#define DLX_IOAT_CHANSTS		0x08	/* 64 bit */
#define DLX_IOAT_CHANSTS_STATE		0x7
#define DLX_IOAT_CHANSTS_SUSPENDED	0x2
#define DLX_IOAT_CHAINADDR		0x10	/* 64 bit */
#define DLX_IOAT_DMACOUNT		0x06	/* 16 bit */
#define DLX_IOAT_CHANCMD_RESET		0x20
#define DLX_IOAT_NULL_DESC_CTL		0x20	/* null, no interrupt, no write-back */
#define DLX_IOAT_CHANSTS_ACTIVE		0x0
#define DLX_IOAT_CHANSTS_DONE		0x1	/* idle: caught up with DMACOUNT */
#define DLX_IOAT_CHANSTS_HALTED		0x3
#define DLX_IOAT_CHANERR		0x28	/* 32 bit */
#define DLX_IOAT_DMACAPABILITY		0x10	/* global (BAR 0), 32 bit */
#define DLX_IOAT_CAP_FILL		BIT(6)
/* fill (drivers/dma/ioat/hw.h): opcode 0x01, the 8-byte pattern in word 1 */
#define DLX_IOAT_OP_FILL		0x01

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
/* counts.c: the remapping unit's register base, from /init (0: none) */
extern unsigned long vtd_base;

/* counts.c: the unit's invalidation queue read by descriptor type, for exact counts */
struct dlx_queue {
	void __iomem *regs;	/* NULL: no unit (the counts stay 0) */
	const u64 *desc;	/* the queue, in the kernel's direct map */
	unsigned int entries, shift, words;	/* shift: IQH's index shift */
	unsigned int head;
	u64 descs, waits, iotlb;
};
/* Zeroes q and starts counting from the unit's head now; false without a unit. */
bool dlx_queue_open(struct dlx_queue *q);
/* Counts what the unit processed since the last call. */
void dlx_queue_read(struct dlx_queue *q);
void dlx_queue_close(struct dlx_queue *q);

/* lib.c: the PRNG, poisoned buffers, copies tracked by their callback */
u64 dlx_next(u64 *state);
u64 dlx_below(u64 *state, u64 n);
/* Fills [off, off + len) of buf with the pattern of op_seed (buf_len a multiple of 8). */
void dlx_fill(u8 *buf, size_t buf_len, size_t off, size_t len, u64 op_seed);
long dlx_find_unpoisoned(const u8 *buf, size_t from, size_t to);
long dlx_compare(const u8 *a, const u8 *b, size_t n);
int dlx_alloc_buffers(struct dlx_chan *c);
void dlx_free_buffers(struct dlx_chan *c);
void dlx_callback(void *param, const struct dmaengine_result *res);
const char *dlx_result_name(enum dmaengine_tx_result r);
/*
 * Prepares, submits and issues one copy whose callback completes c->done:
 * its cookie, or a negative one with *why naming the step that failed.
 */
dma_cookie_t dlx_submit_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
			     size_t len, const char **why);
/* The same, as a yes or no. */
bool dlx_start_copy(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		    size_t len);
bool dlx_copy_wait(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len);
/* Until the driver has restarted c after an error (see lib.c). */
bool dlx_settle(struct dlx_chan *c);
/* The same, polled: usable with softirqs off. */
bool dlx_copy_poll(struct dlx_chan *c, dma_addr_t dst, dma_addr_t src,
		   size_t len, unsigned int ms);
/* Waits at most ms for c->done: false when it did not come. */
bool dlx_wait(struct dlx_chan *c, unsigned int ms);
void __iomem *dlx_bar0(struct dlx_chan *c, const char *driver);
void __iomem *dlx_ioat_map(struct dlx_chan *c, void __iomem **bar);
/* len bytes at off in c->src and c->dst mapped for one copy, and unmapped */
bool dlx_map_pair_at(struct dlx_chan *c, size_t off, size_t len, dma_addr_t *s,
		     dma_addr_t *d);
static inline bool dlx_map_pair(struct dlx_chan *c, size_t len, dma_addr_t *s,
				dma_addr_t *d)
{
	return dlx_map_pair_at(c, 0, len, s, d);
}
void dlx_unmap_pair(struct dlx_chan *c, size_t len, dma_addr_t s, dma_addr_t d);
/* idle (or iowait) time of all online CPUs in us, U64_MAX if none kept */
u64 dlx_idle_us(bool iowait);
/* Waits (up to 5 s) until the kernel keeps idle time in us; false if it never does. */
bool dlx_idle_ready(const char *mode);

/*
 * lib.c: a crew, one kernel thread bound to each of the first n online CPUs, each
 * running work(arg, k) for its index k once dlx_crew_run() releases them all at
 * once (the cost modes' concurrent windows).  dlx_crew_start() is false when fewer
 * than n threads started; dlx_crew_stop() ends the threads (always call it).
 */
#define DLX_MAX_CREW	64
struct dlx_crew;
struct dlx_crew_member {
	struct dlx_crew *crew;
	unsigned int k;
};
struct dlx_crew {
	void (*work)(void *arg, unsigned int k);
	void *arg;
	unsigned int n, started;
	bool go;		/* released by dlx_crew_run() (not by dlx_crew_stop()) */
	struct completion start, done;
	atomic_t left;		/* members still working */
	struct task_struct *tasks[DLX_MAX_CREW];
	struct dlx_crew_member members[DLX_MAX_CREW];
};
bool dlx_crew_start(struct dlx_crew *crew, unsigned int n, const char *name,
		    void (*work)(void *arg, unsigned int k), void *arg);
/* Releases the crew and waits for it: all CPUs' busy ns meanwhile (0: no idle time kept). */
u64 dlx_crew_run(struct dlx_crew *crew, u64 *wall_ns);
void dlx_crew_stop(struct dlx_crew *crew);

/* A copy whose callback marks it done (several in flight: inflight-reset, bench). */
struct dlx_op {
	struct dlx_chan *c;
	dma_addr_t src_dma;
	dma_addr_t dst_dma;
	size_t len;
	bool done;
	enum dmaengine_tx_result result;
};

extern struct wait_queue_head dlx_wq;	/* woken by every dlx_op_callback */
extern atomic_t dlx_callbacks;		/* dlx_op_callback calls so far */
extern bool dlx_pinned;			/* something may still call back */
extern unsigned int iterations;
extern unsigned long pace_bandwidth;
extern unsigned int pace_latency_ns;
void dlx_op_callback(void *param, const struct dmaengine_result *res);
bool dlx_op_done(struct dlx_op *op);
int dlx_op_submit(struct dlx_op *op);

/* copies.c: a channel's verified copies, its report, rates */
/* Copy length of op idx: op 0 is 1 byte, op 1 is max_len, then log-uniform. */
size_t dlx_pick_len(unsigned int idx, u64 *rng);
bool dlx_copies(struct dlx_chan *c, unsigned int count, u64 *rng);
bool dlx_run_channel(struct dlx_chan *c, unsigned int chan_idx);
void dlx_chan_report(struct dlx_chan *c, u64 start);
u64 dlx_chan_rng(unsigned int chan_idx);
void dlx_summary(unsigned int first, unsigned int count);
u64 dlx_mbps_x10(u64 bytes, u64 ns);

/* ktap.c: the plan, numbered results, and the check that they match */
void dlx_ktap_plan(unsigned int n);
__printf(2, 3) bool dlx_ktap_result(bool ok, const char *fmt, ...);
void dlx_ktap_not_ok_to(const char *const *tests, unsigned int to, const char *why);
void dlx_ktap_end(void);

/* The modes (one file each: memcpy.c, recover.c, stale.c, hostile.c, inflight.c, bench.c) */
void dlx_mode_memcpy(unsigned int n);
void dlx_mode_recover(unsigned int n);
void dlx_mode_stale(unsigned int n);
void dlx_mode_hostile_ring(unsigned int n);
void dlx_mode_inflight_reset(unsigned int n);
void dlx_mode_bench(unsigned int n);
void dlx_mode_mapcost(unsigned int n);
void dlx_mode_copycost(unsigned int n);
/* copycost.c: only the module, for cpu_us (init.sh's md write) */
void dlx_mode_clock(unsigned int n);
/* sgcost.c: copycost's scatter-gather windows, and the profile windows they opened */
bool dlx_sgcost(struct dlx_chan *c);
extern unsigned int dlx_sgcost_windows;
void dlx_mode_offload(unsigned int n);
void dlx_mode_bar_race(unsigned int n);
void dlx_mode_irfault(unsigned int n);
/* raid.c: every operation a channel offers, on every channel at once */
void dlx_mode_raid(unsigned int n);

/*
 * Instruction-profile windows (docs/profile.rst).  dlx_profile_mark(true, id)
 * opens a window and dlx_profile_mark(false, ops) closes it; the TCG plugin
 * libdmalab-profile.so counts the guest instructions run in between, keyed by
 * the window's id, and records the operations the window covered.  The markers
 * are xchg %bx,%bx (66 87 db) and xchg %cx,%cx (66 87 c9): each exchanges a
 * register with itself, so no register, flag or memory changes, and without
 * the plugin (or on hardware) they do nothing.  %rax carries the argument.
 * The "memory" clobber keeps the compiler from moving memory accesses across
 * a marker.  A window's id is DLX_PROF_ID(kind, size); guest-tests/profile.py
 * names the kinds (and checks its table against this one).
 */
#define DLX_PROF_ID(kind, size)	(((u32)(kind) << 24) | ((u32)(size) & 0xffffff))
#define DLX_PROF_COPY		1	/* copycost: mapped copies; ops: copies */
#define DLX_PROF_PACE		2	/* copycost: the pacing alone; ops: slots */
#define DLX_PROF_MAP		3	/* mapcost: one dma_map_single() */
#define DLX_PROF_UNMAP		4	/* mapcost: one dma_unmap_single() */
#define DLX_PROF_SYNC		5	/* mapcost: one sync for the CPU and the device */
#define DLX_PROF_MEMCPY		6	/* mapcost: one memcpy() of the buffer */
#define DLX_PROF_NIC		7	/* init.sh: pktgen's packets; ops: packets */
#define DLX_PROF_MARKS		8	/* init.sh: an empty window, dmalab-mark's own cost */
#define DLX_PROF_SG		9	/* sgcost: dma_map_sg + dma_unmap_sg; ops: unmaps */
#define DLX_PROF_SGPAGES	10	/* sgcost: the same pages one by one; ops: unmaps */
#define DLX_PROF_MD		11	/* init.sh md_cost: an md write (size: RAID level); ops: MiB */
#define DLX_PROF_MEMSET		12	/* mapcost: one memset() of the buffer */
#define DLX_PROF_MAPMT		13	/* mapcost: maps and unmaps on every CPU at once; ops: pairs */

static inline void dlx_profile_mark(bool open, u64 arg)
{
	if (open)
		asm volatile("xchg %%bx, %%bx" : : "a"(arg) : "memory");
	else
		asm volatile("xchg %%cx, %%cx" : : "a"(arg) : "memory");
}

/* Nanoseconds since t0 (ktime_get_ns), saturated to 32 bits. */
static inline u32 dlx_elapsed(u64 t0)
{
	u64 d = ktime_get_ns() - t0;

	return d > U32_MAX ? U32_MAX : (u32)d;
}

/* lib.c: per-call samples summed up, and printed as one bench line */
struct dlx_calls {
	u32 p50, p90, p99, max;
	u64 mean;
};
void dlx_calls_stats(u32 *ns, unsigned int n, struct dlx_calls *st);
void dlx_report_calls(const char *tag, const char *op, size_t size, u32 *ns, unsigned int n);

/* bounce.c: swiotlb's copies, counted by a kprobe while it is enabled */
struct dlx_bounce {
	u64 to_calls, to_bytes;		/* buffer to bounce slot */
	u64 from_calls, from_bytes;	/* bounce slot to buffer */
};
bool dlx_bounce_enable(bool on);
void dlx_bounce_read(struct dlx_bounce *b);
#define DLX_BOUNCE_CALLS	8	/* calls per counting pass */
bool dlx_bounce_begin(struct dlx_bounce *b0);
void dlx_bounce_end(const char *op, size_t size, unsigned int calls,
		    const struct dlx_bounce *b0);
void dlx_bounce_exit(void);

/* xdpsync.c: mode=mapcost's AF_XDP-like syncs (mapcost_xdp=1) */
bool dlx_xdp_syncs(struct device *dev, u32 *ns, unsigned int n);

/* races.c, uaf.c, cow.c */
/* A mode= of the exerciser and what runs it, given the n channels it got. */
struct dlx_mode {
	const char *name;
	void (*run)(unsigned int n);
};

/* races.c's modes, ended by a NULL name. */
extern const struct dlx_mode dlx_race_modes[];

#endif
