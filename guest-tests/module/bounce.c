// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise: the bytes swiotlb copies, counted where it copies them.
 *
 * Every copy swiotlb makes between a buffer and its bounce slot, on map,
 * unmap and sync alike, goes through one function, swiotlb_bounce() in
 * kernel/dma/swiotlb.c (6.1 and 6.12; its third argument is the length,
 * its fourth the direction of the copy: DMA_TO_DEVICE buffer to slot,
 * DMA_FROM_DEVICE slot to buffer).  A kprobe on it counts calls and bytes
 * per direction while it is enabled.  The kernel's own swiotlb_bounced trace
 * event fires on map only, so it misses what unmaps and syncs copy.
 *
 * The probe costs the guest instructions of its own (a breakpoint or an
 * optimised jump, and this handler), so it is enabled only around counting
 * passes, never around what is timed: mapcost.c counts one op at a time in
 * passes of their own, and /init enables it through the bounce_probe
 * parameter around a NIC workload it runs for counting only.
 *
 * Parameters (/sys/module/dmalab_exercise/parameters/):
 *   bounce_probe  "1" enabled, "0" disabled, "-1" no probe (swiotlb_bounce
 *                 not found: inlined, or no swiotlb); write 1 or 0.
 *   bounce_stats  read-only: "TO_CALLS TO_BYTES FROM_CALLS FROM_BYTES", the
 *                 counts since the module loaded.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/kprobes.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>

#include "exercise.h"

static atomic64_t dlx_bounce_n[2], dlx_bounce_bytes[2];
static DEFINE_MUTEX(dlx_bounce_lock);
static int dlx_bounce_state = -2;	/* -2 not tried, -1 unavailable, 0 off, 1 on */

/* x86-64: size in %rdx, direction in %rcx (the third and fourth arguments) */
static int dlx_bounce_pre(struct kprobe *p, struct pt_regs *regs)
{
	int i = regs->cx == DMA_TO_DEVICE ? 0 : 1;

	atomic64_inc(&dlx_bounce_n[i]);
	atomic64_add(regs->dx, &dlx_bounce_bytes[i]);
	return 0;
}

static struct kprobe dlx_bounce_kp = {
	.symbol_name = "swiotlb_bounce",
	.pre_handler = dlx_bounce_pre,
	.flags = KPROBE_FLAG_DISABLED,
};

/* Enables (on) or disables the probe, registering it first; false if there is none. */
bool dlx_bounce_enable(bool on)
{
	bool ok;

	mutex_lock(&dlx_bounce_lock);
	if (dlx_bounce_state == -2)
		dlx_bounce_state = register_kprobe(&dlx_bounce_kp) ? -1 : 0;
	if (dlx_bounce_state >= 0 && on != dlx_bounce_state) {
		if (on ? enable_kprobe(&dlx_bounce_kp) : disable_kprobe(&dlx_bounce_kp))
			pr_info("# %s: bounce: cannot %s the kprobe\n", DLX_NAME,
				on ? "enable" : "disable");
		else
			dlx_bounce_state = on;
	}
	ok = dlx_bounce_state >= 0;
	mutex_unlock(&dlx_bounce_lock);
	return ok;
}

void dlx_bounce_read(struct dlx_bounce *b)
{
	b->to_calls = atomic64_read(&dlx_bounce_n[0]);
	b->to_bytes = atomic64_read(&dlx_bounce_bytes[0]);
	b->from_calls = atomic64_read(&dlx_bounce_n[1]);
	b->from_bytes = atomic64_read(&dlx_bounce_bytes[1]);
}

/*
 * A counting pass: dlx_bounce_begin() enables the probe and notes the counts
 * (false, and nothing to count, without a probe); dlx_bounce_end() disables
 * it and prints what the calls between copied, as "# bench-bounce op=OP
 * size=SIZE calls=N to_dev_bytes=... from_dev_bytes=... bytes_per_call=...".
 */
bool dlx_bounce_begin(struct dlx_bounce *b0)
{
	if (!dlx_bounce_enable(true))
		return false;
	dlx_bounce_read(b0);
	return true;
}

void dlx_bounce_end(const char *op, size_t size, unsigned int calls,
		    const struct dlx_bounce *b0)
{
	struct dlx_bounce b;
	u64 to, from;

	dlx_bounce_enable(false);
	dlx_bounce_read(&b);
	to = b.to_bytes - b0->to_bytes;
	from = b.from_bytes - b0->from_bytes;
	pr_info("# bench-bounce op=%s size=%zu calls=%u to_dev_copies=%llu to_dev_bytes=%llu from_dev_copies=%llu from_dev_bytes=%llu bytes_per_call=%llu\n",
		op, size, calls, b.to_calls - b0->to_calls, to, b.from_calls - b0->from_calls,
		from, div_u64(to + from, max(calls, 1u)));
}

static int dlx_bounce_probe_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", dlx_bounce_state < -1 ? -1 : dlx_bounce_state);
}

static int dlx_bounce_probe_set(const char *val, const struct kernel_param *kp)
{
	bool on;

	if (kstrtobool(val, &on))
		return -EINVAL;
	/* not as a load-time parameter: only once the module is live */
	if (THIS_MODULE->state != MODULE_STATE_LIVE)
		return -EPERM;
	return dlx_bounce_enable(on) ? 0 : -ENODEV;
}

static const struct kernel_param_ops dlx_bounce_probe_ops = {
	.set = dlx_bounce_probe_set,
	.get = dlx_bounce_probe_get,
};
module_param_cb(bounce_probe, &dlx_bounce_probe_ops, NULL, 0644);
MODULE_PARM_DESC(bounce_probe, "1 or 0: count swiotlb's copies (a kprobe on swiotlb_bounce)");

static int dlx_bounce_stats_get(char *buf, const struct kernel_param *kp)
{
	struct dlx_bounce b;

	dlx_bounce_read(&b);
	return sysfs_emit(buf, "%llu %llu %llu %llu\n", b.to_calls, b.to_bytes,
			  b.from_calls, b.from_bytes);
}

static int dlx_bounce_stats_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops dlx_bounce_stats_ops = {
	.set = dlx_bounce_stats_set,
	.get = dlx_bounce_stats_get,
};
module_param_cb(bounce_stats, &dlx_bounce_stats_ops, NULL, 0444);
MODULE_PARM_DESC(bounce_stats, "read-only: swiotlb copies counted so far, to and from the device");

/* Unregisters the probe, when the module goes. */
void dlx_bounce_exit(void)
{
	if (dlx_bounce_state >= 0)
		unregister_kprobe(&dlx_bounce_kp);
	dlx_bounce_state = -2;
}
