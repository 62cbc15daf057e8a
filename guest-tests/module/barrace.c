// SPDX-License-Identifier: GPL-2.0
/*
 * dmalab_exercise, mode=bar-race: QEMU's memory map changes under a vCPU that
 * is doing MMIO.  A thread on one CPU reads dmalab-ioat's CHANCNT register
 * over and over while this thread, on another CPU, turns a second PCI
 * function's memory decoding off and on (each turn is a new memory map in
 * QEMU).  Every read must return the channel count.
 *
 * Under MTTCG, QEMU 10.0 looks up the section of an MMIO TLB entry in the
 * address space's current map, while the reading vCPU may still hold entries
 * filled from the previous one: its read can go to another region, or QEMU
 * aborts in iotlb_to_section ("section_index < d->map.sections_nb").
 * qemu/patches/0005 keeps the map a vCPU's TLB was filled from.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dmaengine.h>
#include <linux/kthread.h>
#include <linux/pci.h>
#include <linux/sched.h>

#include "exercise.h"

static unsigned int barrace_toggles = 20000;
module_param(barrace_toggles, uint, 0444);
MODULE_PARM_DESC(barrace_toggles,
		 "bar-race: memory-decode off/on turns of the second function (default 20000)");

/* QEMU's edu device: the function whose decoding is turned off and on. */
#define DLX_EDU_VENDOR	0x1234
#define DLX_EDU_DEVICE	0x11e8

struct dlx_barrace {
	void __iomem *chancnt;
	u8 want;
	unsigned long reads;
	unsigned long wrong;
	u8 first_wrong;
};

static int dlx_barrace_reader(void *arg)
{
	struct dlx_barrace *r = arg;

	while (!kthread_should_stop()) {
		u8 v = ioread8(r->chancnt);

		if (v != r->want && !r->wrong++)
			r->first_wrong = v;
		if (!(++r->reads & 1023))
			cond_resched();
	}
	return 0;
}

/* mode=bar-race: see above; channel 0's function is the one read. */
void dlx_mode_bar_race(unsigned int n)
{
	struct dlx_chan *c = &dlx_chans[0];
	struct dlx_barrace r = { 0 };
	void __iomem *bar = NULL;
	struct task_struct *reader;
	struct pci_dev *edu;
	unsigned int i, here, there;
	u16 cmd;

	dlx_ktap_plan(1);
	edu = pci_get_device(DLX_EDU_VENDOR, DLX_EDU_DEVICE, NULL);
	if (!edu || num_online_cpus() < 2 || !dlx_ioat_map(c, &bar)) {
		dlx_ktap_result(false,
				"bar-race # needs -device edu, two CPUs and dmalab-ioat's registers");
		goto out;
	}
	r.chancnt = bar;	/* CHANCNT: offset 0 of BAR 0 */
	r.want = ioread8(r.chancnt);

	/* this thread on one CPU, the reader on another */
	here = cpumask_first(cpu_online_mask);
	there = cpumask_next(here, cpu_online_mask);
	set_cpus_allowed_ptr(current, cpumask_of(here));
	reader = kthread_create(dlx_barrace_reader, &r, "dlx-barrace");
	if (IS_ERR(reader)) {
		dlx_ktap_result(false, "bar-race # no reader thread");
		goto restore;
	}
	kthread_bind(reader, there);
	wake_up_process(reader);

	pci_read_config_word(edu, PCI_COMMAND, &cmd);
	for (i = 0; i < barrace_toggles; i++) {
		pci_write_config_word(edu, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
		pci_write_config_word(edu, PCI_COMMAND, cmd | PCI_COMMAND_MEMORY);
		if (!(i & 255))
			cond_resched();
	}
	pci_write_config_word(edu, PCI_COMMAND, cmd);
	kthread_stop(reader);

	pr_info("# %s: bar-race: %u decode turns of %s on CPU %u, %lu reads of CHANCNT (%u) on CPU %u, %lu wrong (first %u)\n",
		DLX_NAME, barrace_toggles, pci_name(edu), here, r.reads, r.want, there, r.wrong,
		r.first_wrong);
	dlx_ktap_result(!r.wrong && r.reads, "bar-race");
restore:
	set_cpus_allowed_ptr(current, cpu_possible_mask);
out:
	if (bar)
		pci_iounmap(to_pci_dev(c->chan->device->dev), bar);
	pci_dev_put(edu);
}
