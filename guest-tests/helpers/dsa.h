// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a user-space program needs to drive an Intel DSA 1.0 (dmalab-dsa)
 * itself: BAR 0's registers and configuration tables, BAR 2's portals, the
 * descriptor and completion record layouts (the numbers are those of
 * dsa/include/dmalab/dsa/spec/ and docs/dsa.rst), MOVDIR64B, and a
 * monotonic clock to bound the polls.  Include after say.h.
 */
#ifndef DMALAB_HELPERS_DSA_H
#define DMALAB_HELPERS_DSA_H

#include <cpuid.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* BAR 0: the fixed registers (spec/registers.h) */
#define R_VERSION	0x00
#define R_GENCAP	0x10
#define R_WQCAP		0x20
#define R_GRPCAP	0x30
#define R_ENGCAP	0x38
#define R_OPCAP		0x40
#define R_OFFSETS	0x60
#define R_GENSTS	0x90
#define R_CMD		0xa0
#define R_CMDSTS	0xa8
#define R_SWERR		0xc0

#define GENCAP_MAX_XFER(v)	(((v) >> 16) & 0x1f)
#define GENCAP_MAX_BATCH(v)	(((v) >> 21) & 0xf)
#define GENCAP_CONFIG		(1ull << 31)
#define WQCAP_TOTAL_SIZE(v)	((v) & 0xffff)
#define WQCAP_NUM_WQS(v)	(((v) >> 16) & 0xff)
#define WQCAP_WQCFG_SIZE(v)	(((v) >> 24) & 0xf)
#define WQCAP_DEDICATED		(1ull << 49)
#define WQCAP_PRIORITY		(1ull << 51)
#define GRPCAP_GROUPS(v)	((v) & 0xff)
#define GRPCAP_RDBUFS(v)	(((v) >> 8) & 0xff)
#define ENGCAP_ENGINES(v)	((v) & 0xff)
#define OFFSETS_GRPCFG(v)	(((v) & 0xffff) * 0x100)
#define OFFSETS_WQCFG(v)	((((v) >> 16) & 0xffff) * 0x100)
#define GENSTS_STATE(v)		((v) & 3)
#define CMDSTS_ERR(v)		((v) & 0xff)
#define CMDSTS_ACTIVE		(1u << 31)
#define SWERR_VALID		1u

enum { DEV_DISABLED = 0, DEV_ENABLED = 1 };
enum { CMD_ENABLE_DEVICE = 1, CMD_DISABLE_DEVICE = 2, CMD_RESET_DEVICE = 5,
       CMD_ENABLE_WQ = 6, CMD_DISABLE_WQ = 7 };

/* A group entry (64 bytes) and a WQ entry (32 bytes in DSA 1.0: spec/config.h) */
#define G_WQS		0x00		/* bit w for WQ w, WQs 0-63 */
#define G_ENGINES	0x20
#define G_FLAGS		0x28
#define GFLAGS_RDBUFS_ALLOWED(n)	((uint64_t)(n) << 20)
#define W_SIZE		0x00
#define W_THRESHOLD	0x04
#define W_MODE		0x08
#define W_LIMITS	0x0c
#define W_STATUS	0x18
#define WMODE_DEDICATED		1u
#define WMODE_PRIORITY(p)	((uint32_t)(p) << 4)
#define WMODE_PASID_EN		(1u << 28)
#define WMODE_PRIV		(1u << 29)
#define WLIMITS(xfer, batch)	((uint32_t)(xfer) | (uint32_t)(batch) << 5)
#define WSTATUS_STATE(v)	((v) >> 30)

/* BAR 2: WQ w's four portals from w * 16 KiB (spec/pci.h); the limited MSI-X one */
#define PORTAL(wq)	((wq) * 0x4000u + 0x1000u)

/* Descriptors and completion records (spec/descriptor.h) */
enum { OP_NOOP = 0x00, OP_BATCH = 0x01, OP_MEMMOVE = 0x03 };
#define F_CRAV		(1u << 2)
#define F_RCR		(1u << 3)
#define ST_SUCCESS	0x01
#define ST_PAGE_FAULT	0x03
#define ST_CODE(s)	((s) & 0x7f)
#define ST_WRITE	0x80

struct desc {
	uint32_t pasid_priv;	/* a dedicated WQ takes both from WQCFG */
	uint32_t flags_op;	/* flags in bits 23:0, the opcode in 31:24 */
	uint64_t record;
	uint64_t src;		/* a batch: its descriptor list */
	uint64_t dst;
	uint32_t size;		/* a batch: its descriptor count */
	uint32_t int_handle;
	uint32_t rsvd[6];
} __attribute__((aligned(64)));

struct record {
	uint8_t status, result;
	uint16_t rsvd;
	uint32_t bytes_completed;
	uint64_t fault_addr;
	uint64_t op_specific[2];
};

_Static_assert(sizeof(struct desc) == 64, "a descriptor is 64 bytes");
_Static_assert(sizeof(struct record) == 32, "a completion record is 32 bytes");

/*
 * BAR 0 in 32-bit accesses: through its mapping, or (map NULL) pread/pwrite
 * on the VFIO device fd at the region's offset.
 */
struct dsa_bar0 {
	uint8_t *map;
	int fd;
	uint64_t off;
};

static inline uint32_t dsa_rd32(const struct dsa_bar0 *b, unsigned off)
{
	uint32_t v = ~0u;

	if (b->map)
		return __atomic_load_n((uint32_t *)(b->map + off), __ATOMIC_ACQUIRE);
	if (pread(b->fd, &v, 4, b->off + off) != 4)
		say("pread BAR 0 at 0x%x: %s", off, strerror(errno));
	return v;
}

static inline void dsa_wr32(const struct dsa_bar0 *b, unsigned off, uint32_t v)
{
	if (b->map) {
		__atomic_store_n((uint32_t *)(b->map + off), v, __ATOMIC_RELEASE);
		return;
	}
	if (pwrite(b->fd, &v, 4, b->off + off) != 4)
		say("pwrite BAR 0 at 0x%x: %s", off, strerror(errno));
}

static inline uint64_t dsa_rd64(const struct dsa_bar0 *b, unsigned off)
{
	uint64_t lo = dsa_rd32(b, off);

	return lo | (uint64_t)dsa_rd32(b, off + 4) << 32;
}

static inline void dsa_wr64(const struct dsa_bar0 *b, unsigned off, uint64_t v)
{
	dsa_wr32(b, off, (uint32_t)v);
	dsa_wr32(b, off + 4, (uint32_t)(v >> 32));
}

static inline long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static inline void cpu_relax(void)
{
	asm volatile("pause" ::: "memory");
}

/* MOVDIR64B (66 0F 38 F8 /r) as bytes: the 64 bytes at *src to the portal at dst. */
static inline void movdir64b(volatile void *dst, const void *src)
{
	asm volatile(".byte 0x66, 0x0f, 0x38, 0xf8, 0x3e" /* movdir64b (%rsi), %rdi */
		     : : "D"(dst), "S"(src) : "memory");
}

static inline int have_movdir64b(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		c = 0;
	say("CPUID.7.0:ECX movdir64b=%u", (c >> 28) & 1);
	if (!(c & (1u << 28)))
		say("no MOVDIR64B: the CPU cannot store a descriptor to a portal");
	return !!(c & (1u << 28));
}

#endif
