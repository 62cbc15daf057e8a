/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between dmalab_exercise's mode=cow (races.c) and its
 * userspace half, dmalab-cow (guest-tests/helpers/dmalab_cow.c).
 */
#ifndef DLX_RACE_UAPI_H
#define DLX_RACE_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DLX_RACE_DEVICE		"/dev/dmalab_race"

/* The DMA writes [DLX_COW_DMA_OFF, DLX_COW_LEN) of the page; the parent writes below. */
#define DLX_COW_LEN		4096
#define DLX_COW_DMA_OFF		64

struct dlx_cow_start {
	__u64 uaddr;	/* a page of the caller's, page aligned */
	/*
	 * 0: get_user_pages (FOLL_GET, as NET_DMA did);
	 * 1: pin_user_pages (FOLL_PIN | FOLL_LONGTERM)
	 */
	__u32 pin;
	__u32 pad;
};

/* Takes the page, arms the fault plan's rule and starts a copy into it; returns at once. */
#define DLX_IOC_COW_START	_IOW('D', 1, struct dlx_cow_start)
/* Releases the held copy (it moves now), waits for it, unmaps the page and lets it go. */
#define DLX_IOC_COW_WAIT	_IO('D', 2)
/*
 * Reads the caller's view of the page at this address and reports whether
 * the DMA's data is there.
 */
#define DLX_IOC_COW_CHECK	_IOW('D', 3, __u64)
/* Verified copies on the channel, then the summary: the scenario is over. */
#define DLX_IOC_FINISH		_IO('D', 4)

#endif
