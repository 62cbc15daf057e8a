// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-movdir: MOVDIRI and MOVDIR64B from user mode, as QEMU's TCG runs
 * them with dmalab's patch (qemu/patches/0007-*): what CPUID says, 4- and
 * 8-byte direct stores, 64-byte stores to RAM from aligned, unaligned and
 * page-crossing sources, #GP (SIGSEGV) on a destination that is not 64-byte
 * aligned and a fault on the source, each leaving the destination untouched,
 * and a 64-byte store to MMIO: dmalab-ioat's channel 0 registers through
 * sysfs (the function unbound from ioatdma first), whose CHAINADDR and
 * CHANCMP must then hold the third and fourth quadwords.
 *
 * Lines start with "dmalab-movdir: "; the registry's scenario movdir matches
 * them.  Exit status 0 only when every check held.
 */

#include <cpuid.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SAY_PREFIX "dmalab-movdir: "
#include "say.h"
#include "sysfs.h"

#define PAGE		4096
#define CH0		0x80	/* dmalab-ioat's channel 0 registers in BAR 0 */
#define CHANCMD		0x04
#define CHAINADDR	0x10
#define CHANCMP		0x18
#define CHANERR		0x28
#define CHANERR_CHANCMD_ERR	0x20

static unsigned int checks, failed;

static void check(int ok, const char *name, const char *why)
{
	checks++;
	if (ok) {
		say("ok %s", name);
		return;
	}
	failed++;
	say("not ok %s: %s", name, why);
}

/*
 * The instructions as bytes, so that any assembler builds this:
 * movdiri %esi,(%rdi); movdiri %rsi,(%rdi); movdir64b (%rsi),%rdi.
 */
static void movdiri32(void *dst, uint32_t v)
{
	asm volatile(".byte 0x0f, 0x38, 0xf9, 0x37" : : "D"(dst), "S"(v) : "memory");
}

static void movdiri64(void *dst, uint64_t v)
{
	asm volatile(".byte 0x48, 0x0f, 0x38, 0xf9, 0x37" : : "D"(dst), "S"(v) : "memory");
}

static void movdir64b(void *dst, const void *src)
{
	asm volatile(".byte 0x66, 0x0f, 0x38, 0xf8, 0x3e" : : "D"(dst), "S"(src) : "memory");
}

/* A MOVDIR64B that may fault: the signal it raised, or 0. */
static sigjmp_buf jump;
static volatile sig_atomic_t armed, caught;

static void on_signal(int sig)
{
	if (!armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	armed = 0;
	caught = sig;
	siglongjmp(jump, 1);
}

static int try_movdir64b(void *dst, const void *src)
{
	caught = 0;
	if (sigsetjmp(jump, 1))
		return caught;
	armed = 1;
	movdir64b(dst, src);
	armed = 0;
	return 0;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + 7 * i);
}

static uint8_t dst[256] __attribute__((aligned(64)));
static uint8_t src[256] __attribute__((aligned(64)));

/* 64 bytes from src + off to dst + 64; nothing else of dst changes. */
static void ram_copy(const char *name, const uint8_t *from)
{
	uint8_t want[sizeof(dst)];
	int sig;

	fill(dst, sizeof(dst), 0xc3);
	memcpy(want, dst, sizeof(dst));
	memcpy(want + 64, from, 64);
	sig = try_movdir64b(dst + 64, from);
	check(!sig && !memcmp(dst, want, sizeof(dst)), name,
	      sig ? "faulted" : "the destination differs");
}

static void ram(void)
{
	uint8_t before[sizeof(dst)], *map;
	static const unsigned int offs[] = { 1, 8, 32, 63 };
	uint32_t d32[3] = { 0xaaaaaaaa, 0, 0x55555555 };
	uint64_t d64[3] = { ~0ull, 0, 0 };
	int gp = 1;

	movdiri32(&d32[1], 0x12345678);
	check(d32[0] == 0xaaaaaaaa && d32[1] == 0x12345678 && d32[2] == 0x55555555,
	      "movdiri-32", "wrong bytes");
	movdiri64(&d64[1], 0x0123456789abcdefull);
	check(d64[0] == ~0ull && d64[1] == 0x0123456789abcdefull && d64[2] == 0,
	      "movdiri-64", "wrong bytes");

	fill(src, sizeof(src), 0x11);
	ram_copy("movdir64b-ram", src);
	ram_copy("movdir64b-ram-unaligned-source", src + 3);
	map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		check(0, "movdir64b-source-across-pages", "mmap failed");
		return;
	}
	fill(map + PAGE - 24, 64, 0x5a);
	ram_copy("movdir64b-source-across-pages", map + PAGE - 24);

	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		fill(dst, sizeof(dst), 0x99);
		memcpy(before, dst, sizeof(dst));
		gp &= try_movdir64b(dst + 64 + offs[i], src) == SIGSEGV &&
		      !memcmp(dst, before, sizeof(dst));
	}
	check(gp, "movdir64b-misaligned-destination-gp", "no #GP, or bytes written");

	/* the source's second half unreadable: a fault, nothing written */
	fill(dst, sizeof(dst), 0xe1);
	memcpy(before, dst, sizeof(dst));
	mprotect(map + PAGE, PAGE, PROT_NONE);
	check(try_movdir64b(dst + 64, map + PAGE - 32) == SIGSEGV && !memcmp(dst, before, sizeof(dst)),
	      "movdir64b-source-fault-writes-nothing", "no fault, or bytes written");
	munmap(map, 2 * PAGE);
}

/* BAR 0 of the first function ioatdma drives, unbound from it; or NULL. */
static volatile uint8_t *ioat_bar(void)
{
	char bdf[64], path[PATH_MAX];
	void *bar;
	int fd;

	if (sysfs_take_first("ioatdma", bdf, sizeof(bdf)))
		return NULL;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", bdf);
	sysfs_put(path, "1");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0) {
		fail(path);
		return NULL;
	}
	bar = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED) {
		fail("mapping BAR 0");
		return NULL;
	}
	say("%s unbound from ioatdma, BAR 0 mapped", bdf);
	return bar;
}

static uint64_t rd64(volatile uint8_t *bar, unsigned int off)
{
	volatile uint32_t *r = (volatile uint32_t *)(bar + off);

	return r[0] | (uint64_t)r[1] << 32;
}

static void mmio(void)
{
	volatile uint8_t *bar = ioat_bar();
	uint64_t q[8] __attribute__((aligned(64))) = { 0 };
	const uint64_t chain = 0x123456780ull, cmp = 0x9abcdef40ull;
	uint32_t chanerr;

	if (!bar) {
		check(0, "movdir64b-mmio", "no dmalab-ioat BAR to write");
		return;
	}
	/*
	 * CHANCTRL, DMA_COMP and DMACOUNT as they are (a DMACOUNT that moves
	 * starts the channel), CHANCMD 0, CHANERR's W1C 0: nothing starts.  The
	 * device sees 8-byte pieces: the first covers CHANCMD, which dmalab-ioat
	 * takes only as the byte Linux writes, so it halts the channel with
	 * CHANERR.CHANCMD_ERR (its error completion may add more bits); the
	 * others land as plain register writes.
	 */
	q[0] = rd64(bar, CH0) & ~(0xffull << (8 * CHANCMD));
	q[CHAINADDR / 8] = chain;
	q[CHANCMP / 8] = cmp;
	check(!try_movdir64b((void *)(bar + CH0), q) && rd64(bar, CH0 + CHAINADDR) == chain &&
	      rd64(bar, CH0 + CHANCMP) == cmp,
	      "movdir64b-mmio", "CHAINADDR or CHANCMP does not hold what was stored");
	chanerr = *(volatile uint32_t *)(bar + CH0 + CHANERR);
	say("CHANERR %#x", chanerr);
	check(chanerr & CHANERR_CHANCMD_ERR, "movdir64b-mmio-pieces-of-8",
	      "CHANERR has no CHANCMD_ERR");
	q[CHAINADDR / 8] = 0;
	check(try_movdir64b((void *)(bar + CH0 + 8), q) == SIGSEGV &&
	      rd64(bar, CH0 + CHAINADDR) == chain,
	      "movdir64b-mmio-misaligned-gp", "no #GP, or a register written");
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int a, b, c, d;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		c = 0;
	say("CPUID.7.0:ECX movdiri=%u movdir64b=%u", c >> 27 & 1, c >> 28 & 1);
	if (!(c >> 27 & 1) || !(c >> 28 & 1)) {
		say("the CPU offers neither, or not both");
		return 1;
	}
	ram();
	mmio();
	say("%u of %u checks held", checks - failed, checks);
	return failed ? 1 : 0;
}
