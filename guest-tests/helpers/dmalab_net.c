// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-net: raw Ethernet frames out of the first non-loopback interface
 * and back, for a network backend that returns each frame it receives
 * (DPDK testpmd in macswap mode behind vhost-user, in the runner's
 * --vhost-user-net).  Each frame carries its sequence number and a payload
 * drawn from it; a frame counts only when it comes back with both intact.
 * Behind an IOMMU in strict mode every receive buffer is mapped and unmapped
 * by the virtio-net driver, so the backend's copies of translations must
 * follow the guest's invalidations (IOMMU notifiers) for the data to stay
 * right.
 *
 * Lines start with "dmalab-net: "; the registry's vtd-vhost scenarios match
 * them.  Exit status 0 only when every frame came back verified.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#define SAY_PREFIX "dmalab-net: "
#include "say.h"

#define FRAMES		256
#define ETHERTYPE	0x88b5	/* IEEE 802 local experimental */
#define WAIT_MS		10000	/* per frame: TCG is slow, a lost frame is not */
#define MAX_FRAME	1514

/* Frame i's length: 64 bytes up to a full frame, so buffers differ in size. */
static size_t frame_len(unsigned int i)
{
	return 64 + (i * 613u) % (MAX_FRAME - 64 + 1);
}

/* Frame i's payload byte at offset k (xorshift of both). */
static uint8_t pattern(unsigned int i, size_t k)
{
	uint32_t x = (i + 1) * 2654435761u ^ (uint32_t)k * 40503u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return (uint8_t)x;
}

static const uint8_t peer[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };

static void build(uint8_t *f, unsigned int i, const uint8_t *mac)
{
	size_t k, len = frame_len(i);
	uint32_t seq = htonl(i);

	memcpy(f, peer, ETH_ALEN);
	memcpy(f + ETH_ALEN, mac, ETH_ALEN);
	f[12] = ETHERTYPE >> 8;
	f[13] = ETHERTYPE & 0xff;
	memcpy(f + ETH_HLEN, &seq, sizeof(seq));
	for (k = ETH_HLEN + sizeof(seq); k < len; k++)
		f[k] = pattern(i, k);
}

/*
 * 1 when f (n bytes) is frame i come back: its addresses swapped (from the
 * peer to us, so not our own frame as the socket also sees it leave) and its
 * contents as sent.
 */
static int intact(const uint8_t *f, size_t n, unsigned int i,
		  const uint8_t *mac)
{
	size_t k, len = frame_len(i);
	uint32_t seq;

	if (n != len || memcmp(f, mac, ETH_ALEN) ||
	    memcmp(f + ETH_ALEN, peer, ETH_ALEN))
		return 0;
	memcpy(&seq, f + ETH_HLEN, sizeof(seq));
	if (ntohl(seq) != i)
		return 0;
	for (k = ETH_HLEN + sizeof(seq); k < len; k++)
		if (f[k] != pattern(i, k))
			return 0;
	return 1;
}

/* The first interface that is not loopback, brought up; its index or -1. */
static int open_interface(int s, struct ifreq *ifr)
{
	struct if_nameindex *names = if_nameindex(), *n;
	int index = -1;

	for (n = names; n && n->if_index; n++) {
		if (strcmp(n->if_name, "lo")) {
			index = (int)n->if_index;
			snprintf(ifr->ifr_name, IFNAMSIZ, "%s", n->if_name);
			break;
		}
	}
	if (names)
		if_freenameindex(names);
	if (index < 0 || ioctl(s, SIOCGIFFLAGS, ifr))
		return -1;
	ifr->ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, ifr) || ioctl(s, SIOCGIFHWADDR, ifr))
		return -1;
	return index;
}

/*
 * Waits for frame i to come back; other frames received (late, damaged or
 * foreign) are counted.  Frames leaving are skipped.
 */
static int await(int s, unsigned int i, const uint8_t *mac,
		 unsigned int *other)
{
	uint8_t f[2048];
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	while (*other < 4 * FRAMES && poll(&p, 1, WAIT_MS) == 1) {
		fl = sizeof(from);
		n = recvfrom(s, f, sizeof(f), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return 0;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (intact(f, (size_t)n, i, mac))
			return 1;
		(*other)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_ll at = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETHERTYPE) };
	uint8_t mac[ETH_ALEN], f[MAX_FRAME];
	unsigned int i, ok = 0, other = 0;
	struct ifreq ifr = { 0 };
	int s;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: dmalab-net\n");
		return 2;
	}
	s = socket(AF_PACKET, SOCK_RAW, htons(ETHERTYPE));
	if (s < 0)
		return fail("AF_PACKET socket");
	at.sll_ifindex = open_interface(s, &ifr);
	if (at.sll_ifindex < 0)
		return fail("no interface to bring up");
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	if (bind(s, (struct sockaddr *)&at, sizeof(at)))
		return fail("bind");
	say("%s up, %d frames of 64 to %d bytes", ifr.ifr_name, FRAMES,
	    MAX_FRAME);
	for (i = 0; i < FRAMES; i++) {
		build(f, i, mac);
		if (send(s, f, frame_len(i), 0) != (ssize_t)frame_len(i))
			return fail("send");
		if (!await(s, i, mac, &other)) {
			say("frame %u not back within %d ms", i, WAIT_MS);
			break;
		}
		ok++;
	}
	say("%u of %d frames echoed and verified, %u others", ok, FRAMES,
	    other);
	return ok == FRAMES ? 0 : 1;
}
