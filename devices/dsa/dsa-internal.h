/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-dsa's glue: what dsa.c (the PCI function, its life cycle and
 * migration) and dsa-host.c (what the model reaches in QEMU, its counters)
 * share.
 */

#ifndef HW_DMALAB_DSA_INTERNAL_H
#define HW_DMALAB_DSA_INTERNAL_H

#include "hw/pci/pci_device.h"
#include "qapi/visitor.h"
#include "qom/object.h"

#include "dmalab/dsa_core.h"
#include "../glue.h"
#include "../pci-host.h"

#define TYPE_DMALAB_DSA "dmalab-dsa"
OBJECT_DECLARE_SIMPLE_TYPE(DmalabDsaState, DMALAB_DSA)

/* Capability layout in configuration space. */
#define DMALAB_DSA_CAP_EXP 0x40
#define DMALAB_DSA_CAP_MSIX 0x90
/* Where BAR 0 holds the MSI-X table and its PBA, above the model's tables. */
#define DMALAB_DSA_MSIX_TABLE 0x8000
#define DMALAB_DSA_MSIX_PBA 0x9000

struct DmalabDsaState {
    PCIDevice parent_obj;

    MemoryRegion bar0;    /* the registers, with the MSI-X table over them */
    MemoryRegion regs;    /* the model's BAR 0 */
    MemoryRegion portals; /* BAR 2 */
    DmalabTimers timers;
    DmalabDsa *model;
    DmalabCallGuard guard; /* calls into the model that can call out */
    DmalabState state;     /* the model's, in migration */

    /* properties: the model's configuration, with the model's defaults */
    DmalabDsaConfig cfg;
    DmalabPlan plan;            /* "fault-plan", settable at run time */
    char *race_table;           /* file shared with the race detector plugin */
    DmalabRaceTable *race_map;
};

static inline bool dmalab_dsa_live(DmalabDsaState *s)
{
    return s->model && !s->guard.released && qdev_is_realized(DEVICE(s));
}

/* dsa-host.c */
/* The model's host callbacks (dmalab_glue_host completes them). */
extern const DmalabHost dmalab_dsa_host_fns;
void dmalab_dsa_read_counters(Object *obj, DmalabCounterSink *sink);
extern const DmalabPlanOps dmalab_dsa_plan_ops;

#endif
