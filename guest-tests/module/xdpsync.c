// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=mapcost with mapcost_xdp=1: the DMA syncs of an
 * AF_XDP-like receive path, per frame (dmalab measure's swiotlb study,
 * docs/swiotlb.rst).
 *
 * AF_XDP maps its umem once, DMA_BIDIRECTIONAL (xp_dma_map() in
 * net/xdp/xsk_buff_pool.c, 6.1 and 6.12), and then syncs per frame, at the
 * frame's length: for the device when a chunk goes to the fill ring
 * (xp_alloc()), for the CPU when a frame is received (xp_dma_sync_for_cpu()).
 * Here one buffer of DLX_XDP_BYTES is mapped once, bidirectionally, and for
 * each frame length (a 2 KiB or 4 KiB chunk less the 256 bytes of headroom
 * XDP keeps) every call is timed on its own, the frames taken in turn:
 *
 *   fill       dma_sync_single_range_for_device() of the frame: the chunk
 *              goes back to the device.  In a receive-and-drop loop the CPU
 *              never wrote it, so nothing needed copying: the sync that is
 *              not needed, and what it costs is the "9% question";
 *   rx         dma_sync_single_range_for_cpu() of the frame: the device
 *              wrote it (here nothing writes it: the calls are what is
 *              timed, not the data);
 *   rx-64      the same for a 64-byte packet's length only;
 *   need-sync  dma_need_sync() of the mapping: the check with which a
 *              driver (or 6.1's xsk pool, once per umem) skips both.
 *
 * as "# bench-xdp op=... size=FRAME_LEN ..." lines (dlx_report_calls), and
 * for each, in an untimed pass with swiotlb's copies counted (bounce.c), a
 * "# bench-bounce op=xdp-OP size=FRAME_LEN ..." line.
 */

#include <linux/kernel.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "exercise.h"

#define DLX_XDP_BYTES		(128 * 1024)	/* the "umem": 32 4 KiB or 64 2 KiB chunks */
#define DLX_XDP_HEADROOM	256		/* XDP_PACKET_HEADROOM */
#define DLX_XDP_SMALL		64		/* rx-64's packet */

static const size_t dlx_xdp_chunks[] = { 2048, 4096 };

enum { DLX_XDP_FILL, DLX_XDP_RX, DLX_XDP_RX64, DLX_XDP_NEED, DLX_XDP_OPS };
static const char *const dlx_xdp_ops[] = { "fill", "rx", "rx-64", "need-sync" };
static const char *const dlx_xdp_counted[] = { "xdp-fill", "xdp-rx", "xdp-rx-64",
					       "xdp-need-sync" };

static bool dlx_xdp_sink;	/* keeps need-sync's result alive (WRITE_ONCE) */

static void dlx_xdp_call(struct device *dev, dma_addr_t dma, unsigned int op,
			 size_t off, size_t len)
{
	switch (op) {
	case DLX_XDP_FILL:
		dma_sync_single_range_for_device(dev, dma, off, len, DMA_BIDIRECTIONAL);
		break;
	case DLX_XDP_RX:
		dma_sync_single_range_for_cpu(dev, dma, off, len, DMA_BIDIRECTIONAL);
		break;
	case DLX_XDP_RX64:
		dma_sync_single_range_for_cpu(dev, dma, off, DLX_XDP_SMALL,
					      DMA_BIDIRECTIONAL);
		break;
	default:
		WRITE_ONCE(dlx_xdp_sink, dma_need_sync(dev, dma + off));
		break;
	}
}

/* The syncs of the AF_XDP-like pattern on dev; false if the mapping failed. */
bool dlx_xdp_syncs(struct device *dev, u32 *ns, unsigned int n)
{
	void *buf = kzalloc(DLX_XDP_BYTES, GFP_KERNEL);
	unsigned int c, op, i;
	dma_addr_t dma;
	u64 t0;

	if (!buf)
		return false;
	dma = dma_map_single(dev, buf, DLX_XDP_BYTES, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, dma)) {
		pr_info("# %s: xdp: mapping %d bytes failed\n", DLX_NAME, DLX_XDP_BYTES);
		kfree(buf);
		return false;
	}
	for (c = 0; c < ARRAY_SIZE(dlx_xdp_chunks); c++) {
		size_t chunk = dlx_xdp_chunks[c], len = chunk - DLX_XDP_HEADROOM;
		unsigned int frames = DLX_XDP_BYTES / chunk;

		for (op = 0; op < DLX_XDP_OPS; op++) {
			for (i = 0; i < n; i++) {
				size_t off = (i % frames) * chunk + DLX_XDP_HEADROOM;

				t0 = ktime_get_ns();
				dlx_xdp_call(dev, dma, op, off, len);
				ns[i] = dlx_elapsed(t0);
			}
			dlx_report_calls("bench-xdp", dlx_xdp_ops[op], len, ns, n);
		}
		for (op = 0; op < DLX_XDP_OPS; op++) {
			struct dlx_bounce b0;

			if (!dlx_bounce_begin(&b0))
				break;
			for (i = 0; i < DLX_BOUNCE_CALLS; i++)
				dlx_xdp_call(dev, dma, op, (i % frames) * chunk + DLX_XDP_HEADROOM,
					     len);
			dlx_bounce_end(dlx_xdp_counted[op], len, DLX_BOUNCE_CALLS, &b0);
		}
	}
	dma_unmap_single(dev, dma, DLX_XDP_BYTES, DMA_BIDIRECTIONAL);
	kfree(buf);
	return true;
}
