/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd's glue: what vtd.c (the device: registers, life cycle,
 * migration, ACPI), vtd-props.c (its QOM properties), vtd-host.c (what the
 * unit reaches in QEMU, and the address spaces it gives PCI devices) and
 * vtd-ir.c (interrupt requests) share.
 */

#ifndef HW_DMALAB_VTD_INTERNAL_H
#define HW_DMALAB_VTD_INTERNAL_H

#include "exec/memory.h"
#include "hw/i386/x86-iommu.h"
#include "hw/pci/pci.h"
#include "qemu/thread.h"
#include "qom/object.h"

#include "dmalab/vtd_core.h"
#include "../glue.h"

#define TYPE_DMALAB_VTD "dmalab-vtd"
OBJECT_DECLARE_SIMPLE_TYPE(DmalabVtdState, DMALAB_VTD)
#define TYPE_DMALAB_VTD_IOMMU_MR "dmalab-vtd-iommu-mr"

/* Where q35 firmware and Linux expect the remapping unit's registers. */
#define DMALAB_VTD_BASE 0xfed90000ULL
#define DMALAB_VTD_INTR_BASE 0xfee00000ULL
#define DMALAB_VTD_INTR_SIZE 0x100000ULL
#define DMALAB_VTD_PENDING_MSIS 16
#define DMALAB_VTD_PENDING_INVS 8

/* An invalidation to tell IOMMU notifiers of (vtd-notify.c). */
typedef struct DmalabVtdInv {
    bool devtlb;    /* a device-TLB's: only requester sid's notifiers */
    uint16_t sid;
    uint64_t first, last;
} DmalabVtdInv;

typedef struct DmalabVtdSpace {
    struct DmalabVtdState *s;
    PCIBus *bus;        /* NULL for the IOAPIC's */
    uint8_t devfn;
    uint16_t sid;       /* without a bus: the requester id of its writes */
    MemoryRegion root;
    IOMMUMemoryRegion iommu;
    MemoryRegion nodmar;
    MemoryRegion intr;
    AddressSpace as;
    IOMMUNotifierFlag notify_flags; /* what its notifiers listen to */
} DmalabVtdSpace;

struct DmalabVtdState {
    X86IOMMUState parent_obj;

    MemoryRegion regs;
    MemoryRegion nodmar;   /* shared: all of system memory */
    MemoryRegion sys_alias;
    DmalabVtd *model;
    QemuMutex lock;
    DmalabTimers timers;
    GHashTable *spaces; /* (bus, devfn) -> DmalabVtdSpace */
    bool dmar_on;       /* what the address spaces currently route through */

    /* Messages the model raised, sent once the lock is dropped. */
    QEMUBH *msi_bh;
    struct {
        uint64_t address;
        uint32_t data;
    } pending[DMALAB_VTD_PENDING_MSIS];
    unsigned npending;
    uint64_t msis_dropped;

    /*
     * Interrupt entry cache invalidations the model performed, told to QEMU's
     * listeners (KVM's MSI routes, the IOAPIC under kernel-irqchip=split)
     * once the lock is dropped; several at once become one global one.
     */
    bool iec_pending;
    bool iec_global;
    uint32_t iec_index;
    uint32_t iec_mask;
    DmalabVtdSpace *ioapic; /* the IOAPIC's address space, with intremap=on */

    /*
     * Invalidations told to IOMMU notifiers once the lock is dropped, recorded
     * only while some address space has notifiers; past the queue's size,
     * one notification of everything.
     */
    unsigned notified_spaces;
    DmalabVtdInv inv[DMALAB_VTD_PENDING_INVS];
    unsigned ninv;
    bool inv_all;
    uint64_t notifications; /* events sent, for the QOM counter */

    /*
     * Properties: the unit's configuration, with the unit's defaults (pt
     * comes from the x86-iommu property at realize).
     */
    DmalabVtdConfig cfg;
    DmalabPlan plan; /* "fault-plan", settable at run time */
    DmalabState state; /* the unit's, in migration */
};

typedef struct DmalabVtdKey {
    PCIBus *bus;
    uint8_t devfn;
} DmalabVtdKey;

/* vtd.c */

/* vtd-props.c */
void dmalab_vtd_add_props(Object *obj);
void dmalab_vtd_add_realized_props(Object *obj);
void dmalab_vtd_class_props(ObjectClass *klass);

/* vtd-ir.c */
/* The interrupt window of a device's (or the IOAPIC's) address space. */
void dmalab_vtd_intr_init(DmalabVtdSpace *sp);
/* An address space for the IOAPIC, whose messages the unit remaps. */
void dmalab_vtd_ioapic_space(DmalabVtdState *s);
/* X86IOMMUClass.int_remap: KVM's MSI routes (kernel-irqchip=split). */
int dmalab_vtd_int_remap(X86IOMMUState *iommu, MSIMessage *src,
                         MSIMessage *dst, uint16_t sid);
/* Tells QEMU's IEC listeners what the model invalidated; needs the BQL. */
void dmalab_vtd_iec_flush(DmalabVtdState *s);
/* The requester id of an address space's DMA and messages. */
uint16_t dmalab_vtd_space_sid(DmalabVtdSpace *sp);

/* vtd-notify.c */
/* IOMMUMemoryRegionClass.notify_flag_changed: UNMAP and DEVIOTLB_UNMAP. */
int dmalab_vtd_notify_flag_changed(IOMMUMemoryRegion *iommu,
                                   IOMMUNotifierFlag old,
                                   IOMMUNotifierFlag new, Error **errp);
/* Tells the notifiers what the model invalidated; needs the BQL. */
void dmalab_vtd_inv_flush(DmalabVtdState *s);

/* vtd-host.c */
/* The model's host callbacks (dmalab_glue_host completes them). */
extern const DmalabHost dmalab_vtd_host_fns;
/* A message to the APIC; s->lock must not be held. */
void dmalab_vtd_send_apic(uint64_t address, uint32_t data);
/* Sends what the model raised; s->lock must not be held. */
void dmalab_vtd_send_raised(DmalabVtdState *s);

/*
 * Every call into the model: `call` (a statement) runs with s->lock held;
 * the lock is released, and only then are the messages, interrupt entry
 * cache invalidations and IOMMU notifications the model raised meanwhile
 * sent. Nothing that leaves
 * the unit (interrupts, DMA, other devices) runs under the lock.
 */
#define DMALAB_VTD_LOCKED(s, call)                                       \
    do {                                                                 \
        bool raised_;                                                    \
                                                                         \
        qemu_mutex_lock(&(s)->lock);                                     \
        call;                                                            \
        raised_ = (s)->npending != 0 || (s)->iec_pending ||              \
                  (s)->ninv != 0 || (s)->inv_all;                        \
        qemu_mutex_unlock(&(s)->lock);                                   \
        if (raised_) {                                                   \
            dmalab_vtd_send_raised(s);                                   \
        }                                                                \
    } while (0)
/* Sends what the model queued (a bottom half); needs the BQL. */
void dmalab_vtd_send_pending(void *opaque);
/* Routes every device's DMA through the IOMMU region or straight to memory. */
void dmalab_vtd_switch(DmalabVtdState *s);
void dmalab_vtd_attach(DmalabVtdState *s, PCIBus *bus);

#endif
