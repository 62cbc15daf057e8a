/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the VFIO helpers share, as a user-space driver does it through VFIO's
 * type1 IOMMU driver: a PCI function that vfio-pci has opened (its IOMMU
 * group in a type1v2 container, the device's file), this process's memory
 * mapped for the device's DMA, a region (a BAR) mapped, bus mastering on.
 * What fails is said (say.h) with errno's text where there is one, under the
 * same names in every helper, since the scenarios' judges match the lines.
 * Include after say.h.
 */
#ifndef DMALAB_HELPERS_VFIO_H
#define DMALAB_HELPERS_VFIO_H

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/pci_regs.h>
#include <linux/vfio.h>

/* A function opened through VFIO: its container, its group and the device. */
struct vfio_fds {
	int container, group, device;
};

/* The function's IOMMU group number, from sysfs; -1 when it has none. */
static inline int vfio_group_of(const char *bdf)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = 0;
	return atoi(basename(link));
}

/*
 * The function bdf, which vfio-pci has, opened into *v: its group (viable:
 * every device in it bound to vfio-pci or to no driver) put in a new
 * container, the container's IOMMU type set to type1v2, the device's file
 * got from the group.  Setting the type is where type1 refuses a unit
 * without interrupt remapping unless allow_unsafe_interrupts is set
 * (vfio_iommu_type1_attach_group): its outcome is said either way.  0, or 1
 * when a step failed (said).
 */
static inline int vfio_open(const char *bdf, struct vfio_fds *v)
{
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	char path[64];
	int g = vfio_group_of(bdf);

	if (g < 0)
		return fail("iommu_group");
	snprintf(path, sizeof(path), "/dev/vfio/%d", g);
	v->container = open("/dev/vfio/vfio", O_RDWR);
	v->group = open(path, O_RDWR);
	v->device = -1;
	if (v->container < 0 || v->group < 0)
		return fail("open /dev/vfio");
	if (ioctl(v->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    !ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU)) {
		say("no VFIO type1v2");
		return 1;
	}
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &gs) ||
	    !(gs.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		say("group %d not viable", g);
		return 1;
	}
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container))
		return fail("VFIO_GROUP_SET_CONTAINER");
	if (ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return fail("VFIO_SET_IOMMU type1v2");
	say("VFIO_SET_IOMMU type1v2: ok (group %d)", g);
	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (v->device < 0)
		return fail("VFIO_GROUP_GET_DEVICE_FD");
	return 0;
}

/*
 * len bytes of this process at va mapped for the device's DMA, reads and
 * writes, at iova: 0, or -1 with errno set.
 */
static inline int vfio_map_dma(int container, void *va, uint64_t iova, uint64_t len)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)va,
		.iova = iova,
		.size = len,
	};

	return ioctl(container, VFIO_IOMMU_MAP_DMA, &m);
}

/*
 * The device's region index (VFIO_PCI_BAR0_REGION_INDEX, ...) described in
 * *r: where it lies in the device's file, its size, whether it can be mapped
 * (VFIO_REGION_INFO_FLAG_MMAP).  0, or -1 with errno set.
 */
static inline int vfio_region(int device, unsigned int index, struct vfio_region_info *r)
{
	*r = (struct vfio_region_info){ .argsz = sizeof(*r), .index = index };
	return ioctl(device, VFIO_DEVICE_GET_REGION_INFO, r);
}

/* Region r mapped shared, for reads and writes; MAP_FAILED (errno) when not. */
static inline void *vfio_mmap_region(int device, const struct vfio_region_info *r)
{
	return mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, device, r->offset);
}

/*
 * Bus mastering (the device's DMA) and memory decoding (its BARs) on, in
 * PCI_COMMAND through the config region: 0, or 1 when that failed (said).
 */
static inline int vfio_bus_master(int device)
{
	struct vfio_region_info cfg;
	uint16_t cmd;

	if (vfio_region(device, VFIO_PCI_CONFIG_REGION_INDEX, &cfg))
		return fail("config region");
	if (pread(device, &cmd, 2, cfg.offset + PCI_COMMAND) != 2)
		return fail("read PCI_COMMAND");
	cmd |= PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY;
	if (pwrite(device, &cmd, 2, cfg.offset + PCI_COMMAND) != 2)
		return fail("write PCI_COMMAND");
	return 0;
}

#endif
