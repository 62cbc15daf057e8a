/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmalab_exercise: what the race scenarios (races.c, uaf.c, cow.c) share: the
 * fault doorbell, and the steps every scenario takes.
 */
#ifndef DLX_RACES_H
#define DLX_RACES_H

#include <linux/pci.h>
#include <linux/types.h>

#include "exercise.h"

extern unsigned int fault_rule;
/* A copy that takes longer was completed by ioatdma's timer, not its interrupt. */
extern unsigned int fast_ms;

/* The fault doorbell in dmalab-ioat's BAR 0 (docs/faults.rst). */
#define DLX_BELL		0x2000
#define DLX_BELL_ID		0x00
#define DLX_BELL_SELECT		0x04
#define DLX_BELL_COMMAND	0x08
#define DLX_BELL_STATUS		0x0c
#define DLX_BELL_INJECTED	0x10
#define DLX_BELL_MAGIC		0x464c4d44	/* "DMLF" */
#define DLX_BELL_ARM		1
#define DLX_BELL_RELEASE	3
#define DLX_BELL_OWNED		BIT(0)
#define DLX_BELL_RELEASED	BIT(2)
#define DLX_BELL_ENDED		BIT(3)	/* the release ended a running hold */

#define DLX_ORDER_LEN		(64 * 1024)
#define DLX_ORDER_SIDE_LEN	4096
#define DLX_UAF_LEN		PAGE_SIZE
#define DLX_NEW_OWNER		0x3c	/* what the page's next user writes */

struct dlx_bell {
	struct pci_dev *pdev;
	void __iomem *bar;
	void __iomem *regs;
};

bool dlx_bell_open(struct dlx_chan *c, struct dlx_bell *b);
void dlx_bell_close(struct dlx_bell *b);
void dlx_bell_arm(struct dlx_bell *b);
bool dlx_bell_release(struct dlx_bell *b);
u64 dlx_bell_injected(struct dlx_bell *b);
bool dlx_bell_taken(struct dlx_bell *b, u64 before, unsigned int ms);
bool dlx_race_setup(struct dlx_chan **cs, unsigned int n,
		    const char *const *tests, unsigned int ntests);
bool dlx_race_begin(struct dlx_chan *c, const char *const *tests, unsigned int n,
		    struct dlx_bell *bell, u64 *rng);
void dlx_race_end(struct dlx_chan *c, struct dlx_bell *bell, u64 start);
bool dlx_armed_copy(struct dlx_chan *c, struct dlx_bell *bell,
		    const char *const *tests, unsigned int n, u64 *hits);

void dlx_mode_uaf(unsigned int n);
void dlx_mode_cow(unsigned int n);

#endif
