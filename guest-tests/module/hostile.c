// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=hostile-ring: a channel kept busy forever by a
 * self-looping null descriptor.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/jiffies.h>
#include <linux/wait.h>

#include "exercise.h"

static unsigned int hostile_ms = 2000;
module_param(hostile_ms, uint, 0444);
MODULE_PARM_DESC(hostile_ms, "mode=hostile-ring: how many 1 ms sleeps the ring runs for");

/*
 * The guest sleeps hostile_ms times for a millisecond, pushing DMACOUNT ahead
 * after each sleep, while the ring runs; reports the ring-runs test.
 */
static void dlx_ring_runs(void __iomem *regs, u16 count)
{
	unsigned long start = jiffies, longest = 0;
	unsigned int writes;
	u64 sts;
	bool ok;

	/*
	 * The guest goes on with its own work: a device that held QEMU (or
	 * this vCPU) for good would keep these sleeps from returning, and the
	 * runner's time-out would end the scenario.  The longest sleep is
	 * reported, not judged: under TCG it is host wall-clock time, and a
	 * loaded host makes it long without any fault of the device's.
	 */
	for (writes = 0; writes < hostile_ms; writes++) {
		unsigned long t0 = jiffies;

		usleep_range(1000, 1100);
		longest = max(longest, jiffies - t0);
		/*
		 * Once the engine has caught up with the count (idle), the
		 * count moves as far ahead as 16 bits go; while it runs, the
		 * doorbell repeats the count.  A count in between would take
		 * back descriptors already handed over, which the device
		 * refuses (DESCRIPTOR_COUNT_ERR, as for Linux, whose count
		 * only grows).
		 */
		sts = lo_hi_readq(regs + DLX_IOAT_CHANSTS);
		if ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_DONE)
			count += 0xffff;
		writew(count, regs + DLX_IOAT_DMACOUNT);
	}
	/* still running the ring, or caught up with it a moment ago: not halted */
	sts = lo_hi_readq(regs + DLX_IOAT_CHANSTS);
	ok = writes > 0 && ((sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_ACTIVE ||
			    (sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_DONE);
	dlx_ktap_result(ok,
			"ring-runs # %u doorbells, one after each 1 ms sleep, in %u ms (longest sleep %u ms, host time under TCG, not judged), CHANSTS %#llx",
			writes, jiffies_to_msecs(jiffies - start), jiffies_to_msecs(longest),
			(unsigned long long)sts);
}

void dlx_mode_hostile_ring(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	struct device *dev = c->chan->device->dev;
	void __iomem *bar = NULL, *regs;
	dma_addr_t ring_dma;
	__le64 *ring;
	u64 sts;
	u16 count = 0;
	bool ok;

	dlx_ktap_plan(2);
	regs = dlx_ioat_map(c, &bar);
	ring = regs ? dma_alloc_coherent(dev, 64, &ring_dma, GFP_KERNEL) : NULL;
	if (!ring) {
		dlx_ktap_result(false, "ring-runs # no registers or descriptor memory");
		dlx_ktap_result(false, "channel-stops # skipped");
		goto out;
	}
	/* size 1, null, next = itself */
	memset(ring, 0, 64);
	ring[0] = cpu_to_le64(1 | (u64)DLX_IOAT_NULL_DESC_CTL << 32);
	ring[3] = cpu_to_le64(ring_dma);

	/* Stop the channel ioatdma left idle, point it at the ring, start it. */
	writeb(DLX_IOAT_CHANCMD_SUSPEND, regs + DLX_IOAT_CHANCMD);
	lo_hi_writeq(ring_dma, regs + DLX_IOAT_CHAINADDR);
	count = 0xfff0;
	writew(count, regs + DLX_IOAT_DMACOUNT);
	pr_info("# %s: %s: self-looping null descriptor at %pad, DMACOUNT pushed ahead after each of %u 1 ms sleeps\n",
		DLX_NAME, c->name, &ring_dma, hostile_ms);

	dlx_ring_runs(regs, count);

	/* Told to stop, it stops at once; a reset hands it back to ioatdma. */
	writeb(DLX_IOAT_CHANCMD_SUSPEND, regs + DLX_IOAT_CHANCMD);
	sts = lo_hi_readq(regs + DLX_IOAT_CHANSTS);
	ok = (sts & DLX_IOAT_CHANSTS_STATE) == DLX_IOAT_CHANSTS_SUSPENDED;
	writeb(DLX_IOAT_CHANCMD_RESET, regs + DLX_IOAT_CHANCMD);
	dlx_ktap_result(ok, "channel-stops # CHANSTS %#llx after SUSPEND",
			(unsigned long long)sts);
	dma_free_coherent(dev, 64, ring, ring_dma);
out:
	if (bar)
		pci_iounmap(to_pci_dev(dev), bar);
}
