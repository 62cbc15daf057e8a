// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-dsa-vfio: a user-space driver for dmalab-dsa (Intel DSA 1.0, PCI
 * 8086:0b25) through VFIO (type1), with no kernel driver of the device's own
 * involved: the function goes to vfio-pci (taken from idxd first should idxd
 * hold it), its IOMMU group into a type1v2 container, some pages of this
 * process are mapped for DMA at IOVAs chosen here, and BAR 0 (registers and
 * configuration tables) and BAR 2 (the WQ portals) are mapped through VFIO's
 * regions.  The device is then programmed as the DSA 1.0 architecture has
 * software do it (docs/dsa.rst; the offsets and fields are those of
 * dsa/include/dmalab/dsa/spec/): group 0 gets engine 0 and WQ 0, a dedicated
 * WQ without PASID; Enable Device, Enable WQ.  Descriptors are stored to
 * WQ 0's portal with MOVDIR64B from user mode and their completion records
 * polled (no interrupts): eight Memory Moves of a page, each with its own
 * pattern, a No-op, a Batch of Memory Moves read from a list in DMA memory,
 * a Memory Move from an IOVA never mapped (the IOMMU refuses it: the record
 * must say page fault, at that address) and one more good copy after it.
 * Last Disable WQ and Disable Device.  Every command's CMDSTS, and GENSTS or
 * the WQ's state after it, is printed and checked.
 *
 * Lines start with "dmalab-dsa-vfio: "; the registry's scenario dsa-vfio
 * matches them.  Exit status 0 only when every check held.
 */

#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/vfio.h>

#define SAY_PREFIX "dmalab-dsa-vfio: "
#include "say.h"
#include "sysfs.h"
#include "vfio.h"
#include "dsa.h"

#define PAGE		4096u
#define COPIES		8		/* the single copies, one page each */
#define BATCH		4		/* Memory Moves in the batch */
#define WQ_SIZE		8
#define WQ_PRIORITY	10
#define IOVA_BASE	0x10000000ull
#define IOVA_UNMAPPED	0x20000000ull	/* never mapped */
#define SPIN_NS		5000000000ll	/* a command or a record: 5 s at most */

/*
 * The DMA pages, from IOVA_BASE: the completion records (32 bytes each), the
 * batch's descriptor list, COPIES source pages, COPIES destination pages.
 */
#define PG_RECORDS	0
#define PG_LIST		1
#define PG_SRC		2
#define PG_DST		(PG_SRC + COPIES)
#define PAGES		(PG_DST + COPIES)

static int dev = -1;		/* the VFIO device */
static struct dsa_bar0 bar0 = { .fd = -1 };	/* BAR 0: mapped, or the region */
static uint64_t regs_size;
static uint8_t *portals;	/* BAR 2 mapped */
static uint64_t portals_size;
static uint8_t *mem;		/* the DMA pages */
static unsigned grpcfg, wqcfg;	/* the tables' offsets in BAR 0 */
static int checks, held;

static uint64_t iova(unsigned page)
{
	return IOVA_BASE + (uint64_t)page * PAGE;
}

static uint8_t *page(unsigned p)
{
	return mem + (size_t)p * PAGE;
}

static struct record *record(unsigned slot)
{
	return (struct record *)page(PG_RECORDS) + slot;
}

static uint64_t record_iova(unsigned slot)
{
	return iova(PG_RECORDS) + slot * sizeof(struct record);
}

/* One check's verdict; its line says what was seen. */
static int check(int ok)
{
	checks++;
	held += !!ok;
	return ok ? 0 : 1;
}

static uint32_t wq_status(unsigned wq, unsigned stride)
{
	return dsa_rd32(&bar0, wqcfg + wq * stride + W_STATUS);
}

/*
 * Waits (bounded) for CMDSTS.ACTIVE to clear: CMDSTS, with ACTIVE still set
 * when it did not.
 */
static uint32_t wait_cmd(void)
{
	long long end = now_ns() + SPIN_NS;
	uint32_t s;

	while ((s = dsa_rd32(&bar0, R_CMDSTS)) & CMDSTS_ACTIVE && now_ns() < end)
		cpu_relax();
	return s;
}

/* Runs command code with operand; its CMDSTS (ACTIVE set: it never ended). */
static uint32_t command(unsigned code, uint32_t operand)
{
	dsa_wr32(&bar0, R_CMD, code << 20 | operand);
	return wait_cmd();
}

/* The descriptor to WQ 0's portal, its record cleared first. */
static void submit(const struct desc *d, struct record *r)
{
	static struct desc one;

	if (r)
		memset(r, 0, sizeof(*r));
	one = *d;
	/* the record and the data before the store that hands them to the device */
	asm volatile("sfence" ::: "memory");
	movdir64b(portals + PORTAL(0), &one);
}

/* What a status of 0 means once the poll has ended. */
static const char *timed_out(uint8_t st)
{
	return st ? "" : " (no record: timed out)";
}

/* Polls the record's status (bounded); 0 when the device never wrote it. */
static uint8_t poll_record(struct record *r)
{
	long long end = now_ns() + SPIN_NS;
	uint8_t s;

	while (!(s = __atomic_load_n(&r->status, __ATOMIC_ACQUIRE)) && now_ns() < end)
		cpu_relax();
	return s;
}

/* A page of pattern seed: every copy moves different bytes. */
static void fill(uint8_t *p, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (unsigned i = 0; i < PAGE; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static struct desc memmove_desc(unsigned slot, uint64_t src, uint64_t dst, uint32_t len)
{
	return (struct desc){
		.flags_op = F_CRAV | F_RCR | (uint32_t)OP_MEMMOVE << 24,
		.record = record_iova(slot),
		.src = src, .dst = dst, .size = len,
	};
}

/*
 * Memory Move of source page s to destination page s, pattern seed, record
 * slot: 0 when its record said success and the destination holds the source.
 */
static int copy_page(unsigned s, uint32_t seed, unsigned slot, const char *what)
{
	struct desc d = memmove_desc(slot, iova(PG_SRC + s), iova(PG_DST + s), PAGE);
	struct record *r = record(slot);
	uint8_t st;

	fill(page(PG_SRC + s), seed);
	memset(page(PG_DST + s), 0xee, PAGE);
	submit(&d, r);
	st = poll_record(r);
	if (st != ST_SUCCESS) {
		say("%s: status 0x%02x%s, bytes completed %u, fault addr 0x%llx", what, st,
		    timed_out(st), r->bytes_completed,
		    (unsigned long long)r->fault_addr);
		return 1;
	}
	if (memcmp(page(PG_SRC + s), page(PG_DST + s), PAGE)) {
		say("%s: the destination differs from the source", what);
		return 1;
	}
	return 0;
}

/*
 * vfio_pci's disable_denylist as the module has it (Y or N): Linux's vfio-pci
 * keeps 8086:0b25 on its device denylist (vfio_pci_dev_in_denylist) and
 * refuses to probe it unless the parameter is set.
 */
static void say_denylist(void)
{
	char v[8];

	sysfs_get("/sys/module/vfio_pci/parameters/disable_denylist", v, sizeof(v));
	say("vfio_pci disable_denylist=%s", v);
}

/* The first 8086:0b25 function, into bdf, handed to vfio-pci. */
static int hand_over(char *bdf, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX], vendor[16], device[16];
	struct dirent *e;
	DIR *d = opendir("/sys/bus/pci/devices");
	ssize_t n;

	bdf[0] = 0;
	while (d && (e = readdir(d))) {
		FILE *f;
		int ok = 0;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= len)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		f = fopen(path, "r");
		ok = f && fscanf(f, "%15s", vendor) == 1;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		f = fopen(path, "r");
		ok = ok && f && fscanf(f, "%15s", device) == 1;
		if (f)
			fclose(f);
		if (ok && !strcmp(vendor, "0x8086") && !strcmp(device, "0x0b25")) {
			memcpy(bdf, e->d_name, strlen(e->d_name) + 1);
			break;
		}
	}
	if (d)
		closedir(d);
	if (!bdf[0]) {
		say("no 8086:0b25 PCI function");
		return -1;
	}
	/* a driver that has it (idxd, if anything loaded it) lets it go first */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		if (strcmp(basename(link), "vfio-pci")) {
			char drv[NAME_MAX + 1];

			snprintf(drv, sizeof(drv), "%s", basename(link));
			snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver/unbind", bdf);
			if (sysfs_put(path, bdf))
				return fail("unbinding the function from its driver");
			say("%s unbound %s", drv, bdf);
		}
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	if (sysfs_put(path, "vfio-pci"))
		return fail("driver_override");
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vfio-pci/%s", bdf);
	if (access(path, F_OK) && sysfs_put("/sys/bus/pci/drivers_probe", bdf))
		return fail("drivers_probe");
	if (access(path, F_OK)) {
		say("vfio-pci did not bind %s (its device denylist has 8086:0b25)", bdf);
		return -1;
	}
	say("vfio-pci bound %s (8086:0b25)", bdf);
	return 0;
}

/* BAR 0 (mmap, else pread/pwrite) and BAR 2 (mmap: MOVDIR64B needs an address). */
static int map_bars(void)
{
	struct vfio_region_info r0, r2;
	void *p;

	if (vfio_region(dev, VFIO_PCI_BAR0_REGION_INDEX, &r0) ||
	    vfio_region(dev, VFIO_PCI_BAR2_REGION_INDEX, &r2))
		return fail("VFIO_DEVICE_GET_REGION_INFO");
	bar0.off = r0.offset;
	if (r0.flags & VFIO_REGION_INFO_FLAG_MMAP) {
		p = vfio_mmap_region(dev, &r0);
		if (p != MAP_FAILED) {
			bar0.map = p;
			regs_size = r0.size;
		}
		else
			say("BAR 0: mmap: %s", strerror(errno));
	}
	if (!(r2.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		say("BAR 2: the region cannot be mapped (flags 0x%x)", r2.flags);
		return 1;
	}
	p = vfio_mmap_region(dev, &r2);
	if (p == MAP_FAILED)
		return fail("BAR 2: mmap");
	portals = p;
	portals_size = r2.size;
	say("BAR 0: %s, %llu bytes; BAR 2: mmap, %llu bytes",
	    bar0.map ? "mmap" : "pread/pwrite", (unsigned long long)r0.size,
	    (unsigned long long)r2.size);
	return 0;
}

/*
 * Reads the capabilities; resets the device if it is not disabled; writes
 * group 0 and WQ 0; Enable Device, Enable WQ.  0 when the WQ is enabled.
 */
static int configure(unsigned *stride, unsigned *batch_shift)
{
	uint64_t gencap = dsa_rd64(&bar0, R_GENCAP), wqcap = dsa_rd64(&bar0, R_WQCAP), grpcap = dsa_rd64(&bar0, R_GRPCAP);
	uint64_t engcap = dsa_rd64(&bar0, R_ENGCAP), opcap = dsa_rd64(&bar0, R_OPCAP), offsets = dsa_rd64(&bar0, R_OFFSETS);
	unsigned xfer = GENCAP_MAX_XFER(gencap), prio;
	uint32_t s, mode;
	int bad = 0;

	grpcfg = OFFSETS_GRPCFG(offsets);
	wqcfg = OFFSETS_WQCFG(offsets);
	*stride = 32u << WQCAP_WQCFG_SIZE(wqcap);
	*batch_shift = GENCAP_MAX_BATCH(gencap);
	say("VERSION 0x%x GENCAP 0x%llx WQCAP 0x%llx GRPCAP 0x%llx ENGCAP 0x%llx OPCAP 0x%llx",
	    dsa_rd32(&bar0, R_VERSION), (unsigned long long)gencap, (unsigned long long)wqcap,
	    (unsigned long long)grpcap, (unsigned long long)engcap, (unsigned long long)opcap);
	say("%u WQs (%u slots), %u groups, %u engines, %u read buffers; GRPCFG at 0x%x, "
	    "WQCFG at 0x%x (%u bytes an entry)", (unsigned)WQCAP_NUM_WQS(wqcap),
	    (unsigned)WQCAP_TOTAL_SIZE(wqcap), (unsigned)GRPCAP_GROUPS(grpcap),
	    (unsigned)ENGCAP_ENGINES(engcap), (unsigned)GRPCAP_RDBUFS(grpcap), grpcfg, wqcfg,
	    *stride);
	if (!(gencap & GENCAP_CONFIG) || !(wqcap & WQCAP_DEDICATED) ||
	    WQCAP_TOTAL_SIZE(wqcap) < WQ_SIZE || !WQCAP_NUM_WQS(wqcap) ||
	    !GRPCAP_GROUPS(grpcap) || !ENGCAP_ENGINES(engcap) || !grpcfg || !wqcfg ||
	    xfer < 12 || (opcap & 0xb) != 0xb) {
		say("the device cannot be configured for this program (configurable, dedicated "
		    "WQs, %u slots, a 4 KiB transfer, No-op, Batch and Memory Move needed)",
		    WQ_SIZE);
		return 1;
	}

	s = wait_cmd();
	say("after vfio-pci's reset: GENSTS 0x%x CMDSTS 0x%x WQ 0 status 0x%x", dsa_rd32(&bar0, R_GENSTS),
	    s, wq_status(0, *stride));
	if (s & CMDSTS_ACTIVE) {
		say("a command never ended");
		return 1;
	}
	if (GENSTS_STATE(dsa_rd32(&bar0, R_GENSTS)) != DEV_DISABLED ||
	    WSTATUS_STATE(wq_status(0, *stride))) {
		s = command(CMD_RESET_DEVICE, 0);
		say("Reset Device: CMDSTS 0x%x GENSTS 0x%x", s, dsa_rd32(&bar0, R_GENSTS));
		bad |= check(s == 0 && GENSTS_STATE(dsa_rd32(&bar0, R_GENSTS)) == DEV_DISABLED);
	}

	/* group 0: WQ 0 and engine 0, every read buffer allowed, none reserved */
	dsa_wr64(&bar0, grpcfg + G_WQS, 1);
	dsa_wr64(&bar0, grpcfg + G_ENGINES, 1);
	dsa_wr64(&bar0, grpcfg + G_FLAGS, GFLAGS_RDBUFS_ALLOWED(GRPCAP_RDBUFS(grpcap)));
	/*
	 * WQ 0: dedicated (MOVDIR64B), no PASID (the requests carry the
	 * requester ID only, which VFIO's domain translates), PRIV clear: its
	 * descriptors come from user mode.  The device's largest transfer and
	 * batch.
	 */
	prio = wqcap & WQCAP_PRIORITY ? WQ_PRIORITY : 0;
	mode = WMODE_DEDICATED | WMODE_PRIORITY(prio);
	dsa_wr32(&bar0, wqcfg + W_SIZE, WQ_SIZE);
	dsa_wr32(&bar0, wqcfg + W_THRESHOLD, 0);
	dsa_wr32(&bar0, wqcfg + W_LIMITS, WLIMITS(xfer, *batch_shift));
	dsa_wr32(&bar0, wqcfg + W_MODE, mode);
	say("group 0: GRPWQCFG 0x%llx GRPENGCFG 0x%llx GRPFLAGS 0x%llx",
	    (unsigned long long)dsa_rd64(&bar0, grpcfg + G_WQS), (unsigned long long)dsa_rd64(&bar0, grpcfg + G_ENGINES),
	    (unsigned long long)dsa_rd64(&bar0, grpcfg + G_FLAGS));
	say("WQ 0: size %u, mode 0x%x (dedicated, priority %u, PRIV 0, PASID off), "
	    "limits 0x%x (transfer 2^%u, batch 2^%u)", dsa_rd32(&bar0, wqcfg + W_SIZE),
	    dsa_rd32(&bar0, wqcfg + W_MODE), prio, dsa_rd32(&bar0, wqcfg + W_LIMITS), xfer, *batch_shift);
	if (dsa_rd32(&bar0, wqcfg + W_SIZE) != WQ_SIZE || dsa_rd32(&bar0, wqcfg + W_MODE) != mode ||
	    dsa_rd64(&bar0, grpcfg + G_WQS) != 1 || dsa_rd64(&bar0, grpcfg + G_ENGINES) != 1) {
		say("the configuration did not hold");
		return 1;
	}

	s = command(CMD_ENABLE_DEVICE, 0);
	say("Enable Device: CMDSTS 0x%x GENSTS 0x%x", s, dsa_rd32(&bar0, R_GENSTS));
	if (check(s == 0 && GENSTS_STATE(dsa_rd32(&bar0, R_GENSTS)) == DEV_ENABLED))
		return 1;
	s = command(CMD_ENABLE_WQ, 0);
	say("Enable WQ 0: CMDSTS 0x%x WQ 0 status 0x%x (state %u)", s, wq_status(0, *stride),
	    WSTATUS_STATE(wq_status(0, *stride)));
	if (check(s == 0 && WSTATUS_STATE(wq_status(0, *stride)) == 1))
		return 1;
	return bad;
}

/* COPIES Memory Moves of a page, each its own pattern, source and destination. */
static int run_copies(void)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < COPIES; i++) {
		char what[32];

		snprintf(what, sizeof(what), "copy %u", i);
		ok += !copy_page(i, 100 + i, i, what);
	}
	say("%u copies of %u bytes verified by completion records%s", ok, PAGE,
	    ok == COPIES ? "" : " (of 8)");
	return check(ok == COPIES);
}

static int run_noop(void)
{
	const unsigned slot = COPIES;
	struct desc d = { .flags_op = F_CRAV | F_RCR | (uint32_t)OP_NOOP << 24,
			  .record = record_iova(slot) };
	uint8_t st;

	submit(&d, record(slot));
	st = poll_record(record(slot));
	say("noop: status 0x%02x%s", st, timed_out(st));
	return check(st == ST_SUCCESS);
}

/*
 * A Batch of BATCH Memory Moves (pages 0..BATCH-1, new patterns), its list in
 * DMA memory: the batch's record counts the descriptors, each has its own.
 */
static int run_batch(unsigned batch_shift)
{
	const unsigned slot = COPIES + 1, first = slot + 1;
	struct desc *list = (struct desc *)page(PG_LIST);
	struct desc d = { .flags_op = F_CRAV | F_RCR | (uint32_t)OP_BATCH << 24,
			  .record = record_iova(slot), .src = iova(PG_LIST), .size = BATCH };
	unsigned good = 0;
	uint8_t st;

	if ((1u << batch_shift) < BATCH) {
		say("batch: skipped, the largest batch is %u descriptors", 1u << batch_shift);
		return check(0);
	}
	for (unsigned i = 0; i < BATCH; i++) {
		fill(page(PG_SRC + i), 200 + i);
		memset(page(PG_DST + i), 0xee, PAGE);
		memset(record(first + i), 0, sizeof(struct record));
		list[i] = memmove_desc(first + i, iova(PG_SRC + i), iova(PG_DST + i), PAGE);
	}
	submit(&d, record(slot));
	st = poll_record(record(slot));
	for (unsigned i = 0; i < BATCH; i++) {
		uint8_t s = __atomic_load_n(&record(first + i)->status, __ATOMIC_ACQUIRE);

		if (s == ST_SUCCESS && !memcmp(page(PG_SRC + i), page(PG_DST + i), PAGE))
			good++;
		else
			say("batch descriptor %u: status 0x%02x%s", i, s,
			    s == ST_SUCCESS ? ", the destination differs from the source" : "");
	}
	say("batch of %u copies: status 0x%02x%s, %u descriptors processed, %u records and "
	    "destinations verified", BATCH, st, timed_out(st), record(slot)->bytes_completed,
	    good);
	return check(st == ST_SUCCESS && record(slot)->bytes_completed == BATCH &&
		     good == BATCH);
}

/*
 * A Memory Move from an IOVA never mapped: a page fault (read) at that
 * address, nothing copied, the device and the WQ still enabled, no software
 * error; then one more good copy.
 */
static int run_unmapped(unsigned stride)
{
	const unsigned slot = COPIES + 2 + BATCH;
	struct desc d = memmove_desc(slot, IOVA_UNMAPPED, iova(PG_DST), PAGE);
	struct record *r = record(slot);
	uint32_t gensts, wqs;
	uint64_t swerr;
	uint8_t st;
	int bad, again;

	memset(page(PG_DST), 0xee, PAGE);
	submit(&d, r);
	st = poll_record(r);
	say("unmapped source: status 0x%02x%s fault addr 0x%llx, bytes completed %u", st,
	    timed_out(st), (unsigned long long)r->fault_addr, r->bytes_completed);
	bad = check(st == ST_PAGE_FAULT && r->fault_addr == IOVA_UNMAPPED &&
		    r->bytes_completed == 0 && page(PG_DST)[0] == 0xee);

	gensts = dsa_rd32(&bar0, R_GENSTS);
	wqs = wq_status(0, stride);
	swerr = dsa_rd64(&bar0, R_SWERR);
	again = copy_page(0, 300, slot + 1, "copy after the fault");
	say("after the fault: GENSTS 0x%x, WQ 0 status 0x%x, SWERR 0x%llx, %s", gensts, wqs,
	    (unsigned long long)swerr, again ? "no good copy" : "1 more copy verified");
	bad |= check(!again && GENSTS_STATE(gensts) == DEV_ENABLED && WSTATUS_STATE(wqs) == 1 &&
		     !(swerr & SWERR_VALID));
	return bad;
}

/* Disable WQ 0, Disable Device. */
static int disable(unsigned stride)
{
	uint32_t s;
	int bad;

	s = command(CMD_DISABLE_WQ, 1);	/* WQ set: block 0, bit 0 */
	say("Disable WQ 0: CMDSTS 0x%x WQ 0 status 0x%x (state %u)", s, wq_status(0, stride),
	    WSTATUS_STATE(wq_status(0, stride)));
	bad = check(s == 0 && WSTATUS_STATE(wq_status(0, stride)) == 0);
	s = command(CMD_DISABLE_DEVICE, 0);
	say("Disable Device: CMDSTS 0x%x GENSTS 0x%x", s, dsa_rd32(&bar0, R_GENSTS));
	bad |= check(s == 0 && GENSTS_STATE(dsa_rd32(&bar0, R_GENSTS)) == DEV_DISABLED);
	return bad;
}

static int unmap_dma(int container)
{
	struct vfio_iommu_type1_dma_unmap u = {
		.argsz = sizeof(u), .iova = IOVA_BASE, .size = (uint64_t)PAGES * PAGE,
	};

	if (ioctl(container, VFIO_IOMMU_UNMAP_DMA, &u))
		return fail("VFIO_IOMMU_UNMAP_DMA");
	return u.size == (uint64_t)PAGES * PAGE ? 0 : 1;
}

int main(int argc, char **argv)
{
	char bdf[NAME_MAX + 1];
	unsigned stride = 32, batch_shift = 0;
	struct vfio_fds v;
	int bad;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: dmalab-dsa-vfio\n");
		return 2;
	}
	say_denylist();
	if (!have_movdir64b() || hand_over(bdf, sizeof(bdf)) || vfio_open(bdf, &v))
		return 1;
	dev = v.device;
	bar0.fd = dev;
	/* Enable Device refuses without bus mastering */
	if (map_bars() || vfio_bus_master(dev))
		return 1;

	mem = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED)
		return fail("mmap");
	memset(mem, 0, (size_t)PAGES * PAGE);
	if (vfio_map_dma(v.container, mem, IOVA_BASE, (uint64_t)PAGES * PAGE))
		return fail("VFIO_IOMMU_MAP_DMA");
	say("%u pages mapped for DMA at IOVA 0x%llx; 0x%llx left unmapped", PAGES,
	    (unsigned long long)IOVA_BASE, (unsigned long long)IOVA_UNMAPPED);

	bad = configure(&stride, &batch_shift);
	if (!bad) {
		bad |= run_copies();
		bad |= run_noop();
		bad |= run_batch(batch_shift);
		bad |= run_unmapped(stride);
	}
	if (GENSTS_STATE(dsa_rd32(&bar0, R_GENSTS)) != DEV_DISABLED)
		bad |= disable(stride);
	bad |= unmap_dma(v.container);
	munmap(portals, portals_size);
	if (bar0.map)
		munmap(bar0.map, regs_size);
	munmap(mem, (size_t)PAGES * PAGE);
	close(dev);
	close(v.group);
	close(v.container);
	say("%d of %d checks held", held, checks);
	return bad || held != checks ? 1 : 0;
}
