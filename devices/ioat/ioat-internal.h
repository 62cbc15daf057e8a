/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat's glue: what ioat.c (the PCI function: BAR, config space, life
 * cycle, migration), ioat-host.c (what the model reaches in QEMU) and
 * ioat-props.c (counters, timing and fault plan properties) share.
 */

#ifndef HW_DMALAB_IOAT_INTERNAL_H
#define HW_DMALAB_IOAT_INTERNAL_H

#include "hw/pci/pci_device.h"
#include "qapi/visitor.h"
#include "qom/object.h"

#include "dmalab/ioat_core.h"
#include "../glue.h"
#include "../pci-host.h"

#define TYPE_DMALAB_IOAT "dmalab-ioat"
OBJECT_DECLARE_SIMPLE_TYPE(DmalabIoatState, DMALAB_IOAT)

/* Capability layout in configuration space. */
#define DMALAB_IOAT_CAP_EXP 0x40
#define DMALAB_IOAT_CAP_MSI 0x80
#define DMALAB_IOAT_CAP_MSIX 0x90
#define DMALAB_IOAT_CAP_ATS 0x100 /* extended, with ats=on */

/*
 * Linux's ioatdma gives up on a descriptor after its completion timeout (200
 * ms, completion_timeout in dma.c).
 */
#define DMALAB_IOAT_LINUX_TIMEOUT_NS (200 * SCALE_MS)

struct DmalabIoatState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion mmio;       /* the model's, seen through the two below */
    MemoryRegion regs;
    MemoryRegion fault_regs; /* the test-only fault doorbell */
    DmalabTimers timers;
    DmalabIoat *model;
    DmalabCallGuard guard; /* calls into the model that can call out */
    bool intx_level;
    DmalabState state; /* the model's, in migration */

    /* properties: the model's configuration, with the model's defaults */
    DmalabIoatConfig cfg;
    char *personality; /* the part it poses as (NULL: skx) */
    uint16_t device_id; /* 0: the personality's */
    DmalabPlan plan; /* "fault-plan", settable at run time */
    bool fault_doorbell;
    char *race_table;           /* file shared with the race detector plugin */
    DmalabRaceTable *race_map;
    bool ats;       /* the ATS capability and a device-TLB (ioat-ats.c) */
    bool ats_audit; /* every device-TLB hit checked */
    MemoryListener ats_listener;
    IOMMUNotifier ats_notifier;
    MemoryRegion *ats_region; /* the IOMMU region ats_notifier is on */
    hwaddr ats_offset;        /* its offset in the function's address space */
    unsigned ats_sections;    /* its sections in the DMA address space */
    bool ats_refused;         /* the IOMMU took no DEVIOTLB_UNMAP notifier */
};

static inline bool dmalab_ioat_live(DmalabIoatState *s)
{
    return s->model && !s->guard.released && qdev_is_realized(DEVICE(s));
}

/* ioat-host.c */
/* The model's host callbacks (dmalab_glue_host completes them). */
extern const DmalabHost dmalab_ioat_host_fns;
void dmalab_ioat_update_intx(DmalabIoatState *s);

/* ioat-ats.c */
void dmalab_ioat_ats_realize(DmalabIoatState *s);
void dmalab_ioat_ats_unrealize(DmalabIoatState *s);
void dmalab_ioat_ats_reset(DmalabIoatState *s);
void dmalab_ioat_ats_sync(DmalabIoatState *s);
void dmalab_ioat_ats_counters(DmalabIoatState *s, DmalabCounterSink *sink);
uint8_t dmalab_ioat_ats_translate(void *opaque, uint64_t page, bool is_write,
                                  const DmalabMemAttrs *attrs, uint64_t *addr,
                                  bool *untranslated_only);

/* ioat-props.c */
void dmalab_ioat_get_timing(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp);
void dmalab_ioat_set_timing_prop(Object *obj, Visitor *v,
                                        const char *name, void *opaque,
                                        Error **errp);
bool dmalab_ioat_map_race_table(DmalabIoatState *s, Error **errp);
extern const DmalabPlanOps dmalab_ioat_plan_ops;
void dmalab_ioat_warn_timing(const DmalabIoatConfig *cfg);

#endif
