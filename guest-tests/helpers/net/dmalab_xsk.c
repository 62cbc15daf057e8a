// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-xsk IFACE: an AF_XDP socket that receives every frame of IFACE's
 * queue 0 and drops it, for init.sh's dmalab.xsk workload (the xdp study).
 *
 * libxdp attaches its default program for sockets to IFACE in driver
 * (native) mode; the program redirects each frame of the queue to the
 * socket, which is bound in copy mode: the kernel copies the frame from the
 * driver's receive buffer into a frame of the socket's memory (its UMEM)
 * and puts a descriptor on the socket's RX ring.  This program takes the
 * descriptors off the RX ring in batches and hands each frame straight back
 * to the kernel through the fill ring, touching no payload: a receive and
 * drop.  Between batches it sleeps in ppoll(), so an idle socket costs no
 * CPU time.
 *
 * It is built against libxdp and libbpf (Debian's, by net_image.py) and is
 * not static like the other helpers: it needs libxdp.so.1 and the program
 * file libxdp loads (xsk_def_xdp_prog.o) in the image.
 *
 * Standard output, one line each, for /init to read:
 *   "xsk ready ifname=IFACE queue=0 xdp=drv bind=copy" once the socket is bound
 *   "xsk rx=N bytes=N polls=N batches=N rx_dropped=N rx_invalid=N
 *    rx_ring_full=N fill_empty=N"
 *     the counts so far: on SIGUSR1, and once more when SIGINT or SIGTERM
 *     ends it (rx, bytes: frames and their bytes taken off the RX ring;
 *     polls: ppoll() calls; batches: the RX ring reads that found frames;
 *     the rest: the socket's XDP_STATISTICS, what the kernel could not put
 *     on the ring, or found wrong)
 * Errors go to standard error; the exit status is 0 after a clean end.
 */

#define _GNU_SOURCE		/* ppoll() */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* As many frames as the fill ring holds: the fill ring never lacks room for
 * a frame coming back, so handing one back never waits. */
#define RING		XSK_RING_PROD__DEFAULT_NUM_DESCS
#define FRAME		XSK_UMEM__DEFAULT_FRAME_SIZE
#define BATCH		64

static volatile sig_atomic_t want_counts, want_end;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_counts = 1;
	else
		want_end = 1;
}

/* libxdp's and libbpf's messages: warnings only (they report the sections
 * of the program file they skip at info level). */
static int quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return level == LIBXDP_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int quiet_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

struct tally {
	unsigned long long rx, bytes, polls, batches;
};

static void print_counts(int fd, const struct tally *t)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		fprintf(stderr, "dmalab-xsk: XDP_STATISTICS: %s\n", strerror(errno));
	printf("xsk rx=%llu bytes=%llu polls=%llu batches=%llu rx_dropped=%llu rx_invalid=%llu "
	       "rx_ring_full=%llu fill_empty=%llu\n", t->rx, t->bytes, t->polls, t->batches,
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_invalid_descs,
	       (unsigned long long)st.rx_ring_full,
	       (unsigned long long)st.rx_fill_ring_empty_descs);
	fflush(stdout);
}

/* Takes what the RX ring holds, up to BATCH frames, and gives each frame
 * back to the fill ring: how many there were. */
static unsigned int drain(struct xsk_ring_cons *rx, struct xsk_ring_prod *fq,
			  struct tally *t)
{
	__u32 i, n, at_rx, at_fq;

	n = xsk_ring_cons__peek(rx, BATCH, &at_rx);
	if (!n)
		return 0;
	/* room for n: every frame not on the fill ring is one of these n */
	if (xsk_ring_prod__reserve(fq, n, &at_fq) != n) {
		fprintf(stderr, "dmalab-xsk: no room on the fill ring for %u frames\n", n);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(rx, at_rx + i);

		t->bytes += d->len;
		*xsk_ring_prod__fill_addr(fq, at_fq + i) = xsk_umem__extract_addr(d->addr);
	}
	xsk_ring_prod__submit(fq, n);
	xsk_ring_cons__release(rx, n);
	t->rx += n;
	t->batches++;
	return n;
}

int main(int argc, char **argv)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct xsk_socket_config cfg;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq, rx;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct tally t = { 0 };
	struct sigaction sa;
	sigset_t blocked, open_set;
	struct pollfd pfd;
	__u32 i, at;
	void *area;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: dmalab-xsk IFACE\n");
		return 2;
	}
	libxdp_set_print(quiet_xdp);
	libbpf_set_print(quiet_bpf);
	/* the UMEM's pages are pinned: no locked-memory limit for them */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);

	/* The signals are blocked except inside ppoll(), so that one arriving
	 * between a check of the flags and the wait still ends the wait. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&blocked);
	for (i = 0; i < 3; i++) {
		int sig = i == 0 ? SIGUSR1 : i == 1 ? SIGINT : SIGTERM;

		sigaction(sig, &sa, NULL);
		sigaddset(&blocked, sig);
	}
	sigprocmask(SIG_BLOCK, &blocked, &open_set);
	sigdelset(&open_set, SIGUSR1);
	sigdelset(&open_set, SIGINT);
	sigdelset(&open_set, SIGTERM);

	area = mmap(NULL, (size_t)RING * FRAME, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		fprintf(stderr, "dmalab-xsk: mmap: %s\n", strerror(errno));
		return 1;
	}
	err = xsk_umem__create(&umem, area, (__u64)RING * FRAME, &fq, &cq, NULL);
	if (err) {
		fprintf(stderr, "dmalab-xsk: xsk_umem__create: %s\n", strerror(-err));
		return 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS;
	cfg.xdp_flags = XDP_FLAGS_DRV_MODE;
	cfg.bind_flags = XDP_COPY;
	err = xsk_socket__create(&xsk, argv[1], 0, umem, &rx, NULL, &cfg);
	if (err) {
		fprintf(stderr, "dmalab-xsk: xsk_socket__create on %s: %s\n", argv[1],
			strerror(-err));
		return 1;
	}

	/* every frame of the UMEM on the fill ring */
	if (xsk_ring_prod__reserve(&fq, RING, &at) != RING) {
		fprintf(stderr, "dmalab-xsk: the fill ring took fewer than %u frames\n", RING);
		return 1;
	}
	for (i = 0; i < RING; i++)
		*xsk_ring_prod__fill_addr(&fq, at + i) = (__u64)i * FRAME;
	xsk_ring_prod__submit(&fq, RING);
	printf("xsk ready ifname=%s queue=0 xdp=drv bind=copy\n", argv[1]);
	fflush(stdout);

	pfd.fd = xsk_socket__fd(xsk);
	pfd.events = POLLIN;
	while (!want_end) {
		if (want_counts) {
			want_counts = 0;
			print_counts(pfd.fd, &t);
		}
		/* take every frame there is before sleeping again */
		if (drain(&rx, &fq, &t))
			continue;
		t.polls++;
		if (ppoll(&pfd, 1, NULL, &open_set) < 0 && errno != EINTR) {
			fprintf(stderr, "dmalab-xsk: ppoll: %s\n", strerror(errno));
			return 1;
		}
	}
	while (drain(&rx, &fq, &t))
		;
	print_counts(pfd.fd, &t);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(area, (size_t)RING * FRAME);
	return 0;
}
