// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmalab-vfio: a user-space driver for dmalab-ioat through VFIO (type1), as
 * DPDK-style drivers and Linux's VFIO selftests drive a DMA engine: the first
 * function ioatdma drives is unbound from it and bound to vfio-pci
 * (driver_override), its group put in a type1 container, three pages of
 * this process mapped for DMA at IOVAs of its choosing, BAR 0 mapped, MSI-X
 * vector 0 signalling an eventfd.  It then has channel 0 copy COPIES pages,
 * one descriptor each, waiting for each completion's interrupt and checking
 * the completion record and the data, and last gives the channel a source
 * that is not mapped, which the IOMMU must refuse (the channel halts with a
 * read error).  Setting the container's IOMMU type is where type1 asks for
 * interrupt remapping unless vfio_iommu_type1.allow_unsafe_interrupts is set
 * (vfio_iommu_type1_attach_group): its outcome is printed either way.
 *
 * Lines start with "dmalab-vfio: "; the registry's scenarios vfio-ir and
 * vfio-noir match them.  Exit status 0 only when everything held.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#define SAY_PREFIX "dmalab-vfio: "
#include "say.h"
#include "sysfs.h"
#include "vfio.h"

#define COPIES		8
#define PAGE		4096
#define IOVA_BASE	0x10000000ull	/* descriptors, then source, then destination */
#define IOVA_UNMAPPED	0x20000000ull

/* dmalab-ioat's registers (docs/ioat.rst), channel 0 at 0x80 */
#define INTRCTRL		0x03
#define INTRCTRL_MASTER		0x01
#define INTRCTRL_MSIX_VECTOR	0x08
#define CH0			0x80
#define CHANCTRL		0x00	/* 16 bit */
#define CHANCTRL_RUN		0x1d	/* rearm, error completion, abort and interrupt */
#define CHANCTRL_INT_REARM	0x01
#define DMACOUNT		0x06	/* 16 bit */
#define CHANCMD			0x04	/* 8 bit */
#define CHANCMD_RESET		0x20
#define CHANSTS			0x08	/* 64 bit */
#define CHAINADDR		0x10	/* 64 bit */
#define CHANCMP			0x18	/* 64 bit */
#define CHANERR			0x28	/* 32 bit */
#define STATE_DONE		1
#define STATE_HALTED		3
#define CTL_INT_EN		0x01
#define CTL_COMPL_WRITE		0x08

struct desc {
	uint32_t size, ctl;
	uint64_t src, dst, next, rsv[4];
};

/*
 * BAR 0, accessed with plain loads and stores of the register's width; release
 * and acquire keep them in program order (the descriptors before the doorbell).
 */
static uint8_t *bar;

static void wr8(unsigned int off, uint8_t v)
{
	__atomic_store_n(bar + off, v, __ATOMIC_RELEASE);
}

static void wr16(unsigned int off, uint16_t v)
{
	__atomic_store_n((uint16_t *)(bar + off), v, __ATOMIC_RELEASE);
}

static void wr32(unsigned int off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(bar + off), v, __ATOMIC_RELEASE);
}

static uint32_t rd32(unsigned int off)
{
	return __atomic_load_n((uint32_t *)(bar + off), __ATOMIC_ACQUIRE);
}

static uint64_t rd64(unsigned int off)
{
	return rd32(off) | (uint64_t)rd32(off + 4) << 32;
}

static void wr64(unsigned int off, uint64_t v)
{
	wr32(off, (uint32_t)v);
	wr32(off + 4, v >> 32);
}

/*
 * The first function bound to ioatdma, into bdf, handed to vfio-pci: unbound,
 * driver_override set, probed again. 0 when vfio-pci has it.
 */
static int hand_over(char *bdf, size_t len)
{
	char path[PATH_MAX];

	if (sysfs_take_first("ioatdma", bdf, len))
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	if (sysfs_put(path, "vfio-pci") || sysfs_put("/sys/bus/pci/drivers_probe", bdf))
		return fail("handing the function to vfio-pci");
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/vfio-pci/%s", bdf);
	if (access(path, F_OK)) {
		say("vfio-pci did not bind %s", bdf);
		return -1;
	}
	say("vfio-pci bound %s", bdf);
	return 0;
}

/* vfio_iommu_type1's allow_unsafe_interrupts as the module has it (Y or N). */
static void say_unsafe_interrupts(void)
{
	char v[8];

	sysfs_get("/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts",
		  v, sizeof(v));
	say("allow_unsafe_interrupts=%s", v);
}

/* MSI-X vector 0 to an eventfd; bus mastering on. */
static int irq_and_master(int dev, int efd)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;

	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_MSIX_IRQ_INDEX;
	set->start = 0;
	set->count = 1;
	memcpy(set->data, &efd, sizeof(int));
	if (ioctl(dev, VFIO_DEVICE_SET_IRQS, set))
		return fail("VFIO_DEVICE_SET_IRQS MSI-X");
	return vfio_bus_master(dev);
}

/* Waits (bounded) for the eventfd; the interrupts it counted. */
static uint64_t wait_irq(int efd)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n = 0;

	if (poll(&p, 1, 5000) == 1 && read(efd, &n, sizeof(n)) != sizeof(n))
		n = 0;
	return n;
}

/*
 * Channel 0 copies COPIES pages through the mapped IOVAs, one descriptor and
 * one interrupt each; 0 when every completion, interrupt and byte held.
 */
static int run_copies(int efd, struct desc *ring, uint8_t *src, uint8_t *dst,
		      uint64_t *compl)
{
	uint64_t irqs = 0;

	for (unsigned int i = 0; i < COPIES; i++) {
		uint64_t d = IOVA_BASE + 64 * (i + 1), done;

		for (unsigned int j = 0; j < PAGE; j++)
			src[j] = (uint8_t)(j * 7 + i * 13 + 1);
		memset(dst, 0, PAGE);
		ring[i + 1] = (struct desc){
			.size = PAGE, .ctl = CTL_INT_EN | CTL_COMPL_WRITE,
			.src = IOVA_BASE + PAGE, .dst = IOVA_BASE + 2 * PAGE,
			.next = d + 64,
		};
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (i == 0)
			wr64(CH0 + CHAINADDR, d);
		wr16(CH0 + DMACOUNT, i + 1);
		irqs += wait_irq(efd);
		done = __atomic_load_n(compl, __ATOMIC_SEQ_CST);
		if ((done & ~0x3full) != d || (done & 7) != STATE_DONE) {
			say("copy %u: completion record 0x%llx, CHANSTS 0x%llx, CHANERR 0x%x",
			    i, (unsigned long long)done,
			    (unsigned long long)rd64(CH0 + CHANSTS), rd32(CH0 + CHANERR));
			return 1;
		}
		if (memcmp(src, dst, PAGE)) {
			say("copy %u: destination differs from the source", i);
			return 1;
		}
		wr16(CH0 + CHANCTRL, CHANCTRL_RUN);	/* rearm, as ioatdma does */
	}
	say("%d copies of %d bytes verified, %llu MSI-X interrupts", COPIES, PAGE,
	    (unsigned long long)irqs);
	return irqs == COPIES ? 0 : 1;
}

/* A copy from an IOVA never mapped: the IOMMU refuses the read. */
static int copy_unmapped(struct desc *ring)
{
	unsigned int state = 0;
	uint32_t err = 0;

	wr8(CH0 + CHANCMD, CHANCMD_RESET);
	wr16(CH0 + CHANCTRL, CHANCTRL_RUN);
	wr64(CH0 + CHANCMP, IOVA_BASE + PAGE - 64);
	ring[0] = (struct desc){
		.size = PAGE, .ctl = CTL_COMPL_WRITE,
		.src = IOVA_UNMAPPED, .dst = IOVA_BASE + 2 * PAGE,
		.next = IOVA_BASE + 64,
	};
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wr64(CH0 + CHAINADDR, IOVA_BASE);
	wr16(CH0 + DMACOUNT, 1);
	/* bounded: halted with an error, or (wrongly) done */
	for (int i = 0; i < 5000; i++) {
		state = rd64(CH0 + CHANSTS) & 7;
		err = rd32(CH0 + CHANERR);
		if ((state == STATE_HALTED && err) || state == STATE_DONE)
			break;
		usleep(1000);
	}
	say("unmapped source: CHANSTS state %u, CHANERR 0x%x", state, err);
	return state == STATE_HALTED && err ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct vfio_region_info r0;
	struct vfio_fds v;
	char bdf[NAME_MAX + 1];
	uint8_t *mem;
	int efd;
	struct desc *ring;
	uint64_t *compl;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: dmalab-vfio\n");
		return 2;
	}
	say_unsafe_interrupts();
	if (hand_over(bdf, sizeof(bdf)) || vfio_open(bdf, &v))
		return 1;
	if (vfio_region(v.device, VFIO_PCI_BAR0_REGION_INDEX, &r0) ||
	    !(r0.flags & VFIO_REGION_INFO_FLAG_MMAP))
		return fail("BAR 0 region");
	bar = vfio_mmap_region(v.device, &r0);
	mem = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bar == MAP_FAILED || mem == MAP_FAILED)
		return fail("mmap");
	memset(mem, 0, 3 * PAGE);
	if (vfio_map_dma(v.container, mem, IOVA_BASE, 3 * PAGE))
		return fail("VFIO_IOMMU_MAP_DMA");
	efd = eventfd(0, 0);
	if (efd < 0 || irq_and_master(v.device, efd))
		return 1;

	/*
	 * The descriptor page: slot 0 spare, slots 1.. the copies, the last
	 * 64 bytes the completion record.
	 */
	ring = (struct desc *)mem;
	compl = (uint64_t *)(mem + PAGE - 64);
	wr8(CH0 + CHANCMD, CHANCMD_RESET);	/* what ioatdma left: gone */
	wr8(INTRCTRL, INTRCTRL_MASTER | INTRCTRL_MSIX_VECTOR);
	wr16(CH0 + CHANCTRL, CHANCTRL_RUN);
	wr64(CH0 + CHANCMP, IOVA_BASE + PAGE - 64);
	if (run_copies(efd, ring, mem + PAGE, mem + 2 * PAGE, compl))
		return 1;
	return copy_unmapped(ring);
}
