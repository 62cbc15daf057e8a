// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=cow: NET_DMA's fork/copy-on-write race, made deterministic by a fault
 * plan (races.c describes the scenarios).
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "exercise.h"
#include "race_uapi.h"
#include "races.h"

/* ---- mode=cow --------------------------------------------------------- */

static DEFINE_MUTEX(dlx_cow_lock);
static struct {
	struct dlx_chan *kept;	/* the channel it keeps */
	struct dlx_bell bell;
	u64 start, rng, hits;
	struct page *page;	/* the user page the copy goes to */
	dma_addr_t src, dst;
	bool pin;		/* taken with pin_user_pages */
	bool busy;		/* a copy was started and not waited for */
	bool released;		/* the release ended the device's hold */
	bool done;		/* it completed (callback came) */
	bool finished;
} dlx_cow;

static void dlx_cow_release_page(void)
{
	struct device *dev = dlx_cow.kept->chan->device->dev;

	dma_unmap_page(dev, dlx_cow.dst, PAGE_SIZE, DMA_FROM_DEVICE);
	dma_unmap_single(dev, dlx_cow.src, PAGE_SIZE, DMA_TO_DEVICE);
	if (dlx_cow.pin) {
		unpin_user_pages_dirty_lock(&dlx_cow.page, 1, true);
	} else {
		set_page_dirty_lock(dlx_cow.page);
		put_page(dlx_cow.page);
	}
	dlx_cow.page = NULL;
}

static long dlx_cow_start(struct dlx_cow_start __user *argp)
{
	struct dlx_chan *c = dlx_cow.kept;
	struct device *dev = c->chan->device->dev;
	struct dlx_cow_start a;
	int got;

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	if (dlx_cow.busy || c->abandoned || !PAGE_ALIGNED(a.uaddr))
		return -EINVAL;
	dlx_cow.pin = a.pin;
	if (a.pin)
		got = pin_user_pages_fast(a.uaddr, 1, FOLL_WRITE | FOLL_LONGTERM,
					  &dlx_cow.page);
	else
		got = get_user_pages_fast(a.uaddr, 1, FOLL_WRITE, &dlx_cow.page);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	dlx_fill(c->src, PAGE_SIZE, 0, PAGE_SIZE, a.pin ? 41 : 17);
	dlx_cow.src = dma_map_single(dev, c->src, PAGE_SIZE, DMA_TO_DEVICE);
	dlx_cow.dst = dma_map_page(dev, dlx_cow.page, 0, PAGE_SIZE,
				   DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dlx_cow.src) ||
	    dma_mapping_error(dev, dlx_cow.dst)) {
		dlx_cow_release_page();
		return -ENOMEM;
	}
	dlx_cow.hits = dlx_bell_injected(&dlx_cow.bell);
	dlx_bell_arm(&dlx_cow.bell);
	if (!dlx_start_copy(c, dlx_cow.dst + DLX_COW_DMA_OFF,
			    dlx_cow.src + DLX_COW_DMA_OFF,
			    DLX_COW_LEN - DLX_COW_DMA_OFF)) {
		dlx_cow_release_page();
		return -EIO;
	}
	dlx_cow.busy = true;
	return 0;
}

static long dlx_cow_wait(void)
{
	struct dlx_chan *c = dlx_cow.kept;

	if (!dlx_cow.busy)
		return -EINVAL;
	/* dmalab-cow has forked and written: the held copy goes on now. */
	dlx_cow.released = dlx_bell_release(&dlx_cow.bell);
	dlx_cow.done = dlx_wait(c, c->tmo_ms);
	dlx_cow.busy = false;
	if (!dlx_cow.done) {
		c->abandoned = true;	/* the page stays taken: the copy may still land */
		return -ETIMEDOUT;
	}
	dlx_cow.hits = dlx_bell_injected(&dlx_cow.bell) - dlx_cow.hits;
	dlx_cow_release_page();
	return 0;
}

/* mode=cow's plan */
static const char *const dlx_cow_tests[] = {
	"copies-before", "get-user-pages-loses-the-data",
	"pin-user-pages-keeps-the-data", "copies-after"
};

/* The caller's view of its page after the race: did the DMA's bytes arrive? */
static long dlx_cow_check(u64 uaddr)
{
	struct dlx_chan *c = dlx_cow.kept;
	size_t len = DLX_COW_LEN - DLX_COW_DMA_OFF;
	bool arrived, ok;
	u8 *view;

	view = kmalloc(len, GFP_KERNEL);
	if (!view)
		return -ENOMEM;
	if (copy_from_user(view, u64_to_user_ptr(uaddr + DLX_COW_DMA_OFF), len)) {
		kfree(view);
		return -EFAULT;
	}
	arrived = !memcmp(view, c->src + DLX_COW_DMA_OFF, len);
	pr_info("# %s: cow: page taken with %s: copy %s, %llu fault(s) injected, %s; after fork and the parent's write the parent's page %s the DMA's data\n",
		DLX_NAME, dlx_cow.pin ? "pin_user_pages(FOLL_LONGTERM)" :
		"get_user_pages", dlx_cow.done ? dlx_result_name(c->result) :
		"never called back", dlx_cow.hits,
		dlx_cow.released ? "released after the write" :
		"NOT ended by the release (the plan needs \"until\": \"release\", and the copy must still be held)",
		arrived ? "has" : view[0] == 'P' ? "lacks (it kept its old bytes)" :
		"lacks");
	ok = dlx_cow.done && c->result == DMA_TRANS_NOERROR &&
	     dlx_cow.hits == 1 && dlx_cow.released &&
	     arrived == dlx_cow.pin;
	/* get_user_pages' round comes first, then pin_user_pages' */
	dlx_ktap_not_ok_to(dlx_cow_tests, dlx_cow.pin ? 2 : 1, "not checked");
	dlx_ktap_result(ok, "%s", dlx_cow_tests[dlx_cow.pin ? 2 : 1]);
	kfree(view);
	return 0;
}

static long dlx_cow_finish(void)
{
	struct dlx_chan *c = dlx_cow.kept;
	bool ok;

	if (dlx_cow.finished || dlx_cow.busy)
		return -EINVAL;
	dlx_cow.finished = true;
	ok = !c->abandoned && dlx_copies(c, 10, &dlx_cow.rng);
	dlx_ktap_not_ok_to(dlx_cow_tests, 3, "not checked");
	dlx_ktap_result(ok, "%s", dlx_cow_tests[3]);
	dlx_ktap_end();
	dlx_bell_close(&dlx_cow.bell);
	dlx_free_buffers(c);
	dlx_chan_report(c, dlx_cow.start);
	dlx_summary(0, 1);
	return 0;
}

static long dlx_race_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	long ret = -ENOTTY;

	mutex_lock(&dlx_cow_lock);
	if (dlx_cow.finished && cmd != DLX_IOC_FINISH)
		ret = -EINVAL;
	else if (cmd == DLX_IOC_COW_START)
		ret = dlx_cow_start((struct dlx_cow_start __user *)arg);
	else if (cmd == DLX_IOC_COW_WAIT)
		ret = dlx_cow_wait();
	else if (cmd == DLX_IOC_COW_CHECK)
		ret = dlx_cow_check(arg);
	else if (cmd == DLX_IOC_FINISH)
		ret = dlx_cow_finish();
	mutex_unlock(&dlx_cow_lock);
	return ret;
}

static const struct file_operations dlx_race_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = dlx_race_ioctl,
};

static struct miscdevice dlx_race_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "dmalab_race",
	.fops = &dlx_race_fops,
};

/*
 * Sets the scenario up and returns: dmalab-cow drives the rest through
 * /dev/dmalab_race, and the channel stays with this module.
 */
void dlx_mode_cow(unsigned int n)
{
	const char *const *tests = dlx_cow_tests;
	struct dlx_chan *c = &dlx_chans[0];
	bool ok;

	dlx_ktap_plan(4);
	dlx_cow.kept = c;
	dlx_cow.start = ktime_get_ns();
	dlx_cow.rng = dlx_chan_rng(0);
	if (!dlx_race_setup(&c, 1, tests, 4))
		return;
	ok = dlx_copies(c, 10, &dlx_cow.rng);
	dlx_ktap_result(ok, "%s", tests[0]);
	if (!dlx_bell_open(c, &dlx_cow.bell)) {
		dlx_ktap_not_ok_to(tests, 4, "no fault doorbell");
		dlx_free_buffers(c);
		return;
	}
	if (misc_register(&dlx_race_misc)) {
		dlx_ktap_not_ok_to(tests, 4, "cannot register " DLX_RACE_DEVICE);
		dlx_bell_close(&dlx_cow.bell);
		dlx_free_buffers(c);
		return;
	}
	c->kept = true;
	pr_info("# %s: cow: %s ready for dmalab-cow\n", DLX_NAME,
		DLX_RACE_DEVICE);
}

/* Runs mode if it is one of the race scenarios; false if it is not. */
