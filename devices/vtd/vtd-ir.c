/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: interrupt requests (VT-d chapter 5). Writes to 0xFEEx_xxxx
 * from a device behind the unit are interrupt requests, not DMA: every
 * device's address space overlays that range with a window whose writes
 * the model remaps, passes or blocks (recording a fault). The IOAPIC gets an
 * address space of its own with the same window and the requester id the
 * DMAR table gives it; KVM's MSI routes (kernel-irqchip=split) ask through
 * X86IOMMUClass.int_remap. The model is called with s->lock held and reads
 * only RAM; the message it answers goes to the APIC once the lock is
 * dropped, and so do the listeners of interrupt entry cache invalidations.
 */

#include "qemu/osdep.h"
#include "exec/memory.h"
#include "hw/i386/x86.h"
#include "hw/i386/x86-iommu.h"
#include "hw/pci/pci.h"
#include "hw/pci-host/q35.h"
#include "qemu/main-loop.h"
#include "../trace.h"

#include "dmalab/vtd_core.h"
#include "vtd-internal.h"

/* The IOAPIC's requester id: the device scope of the unit's DMAR table. */
#define DMALAB_VTD_IOAPIC_SID \
    PCI_BUILD_BDF(Q35_PSEUDO_BUS_PLATFORM, Q35_PSEUDO_DEVFN_IOAPIC)

uint16_t dmalab_vtd_space_sid(DmalabVtdSpace *sp)
{
    if (!sp->bus) {
        return sp->sid;
    }
    return PCI_BUILD_BDF(pci_bus_num(sp->bus), sp->devfn);
}

/*
 * An interrupt request: a device's MSI or MSI-X message (its requester id in
 * attrs), the IOAPIC's message, or any other write a device aims here (the
 * space's own requester id). A request the unit blocks is dropped: the
 * requester's posted write completes, the unit records the fault.
 */
static MemTxResult dmalab_vtd_intr_write(void *opaque, hwaddr addr,
                                         uint64_t value, unsigned size,
                                         MemTxAttrs attrs)
{
    DmalabVtdSpace *sp = opaque;
    DmalabVtdState *s = sp->s;
    uint16_t sid = attrs.unspecified ? dmalab_vtd_space_sid(sp)
                                     : attrs.requester_id;
    uint64_t address;
    uint32_t data;
    bool ok;

    DMALAB_VTD_LOCKED(s, ok = dmalab_vtd_remap_interrupt(
                             s->model, sid, true, DMALAB_VTD_INTR_BASE + addr,
                             value, true, &address, &data));
    if (ok) {
        dmalab_vtd_send_apic(address, data);
    }
    return MEMTX_OK;
}

static MemTxResult dmalab_vtd_intr_read(void *opaque, hwaddr addr,
                                        uint64_t *data, unsigned size,
                                        MemTxAttrs attrs)
{
    *data = 0;
    return MEMTX_ERROR;
}

static const MemoryRegionOps dmalab_vtd_intr_ops = {
    .read_with_attrs = dmalab_vtd_intr_read,
    .write_with_attrs = dmalab_vtd_intr_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Interrupt requests are aligned DWORD writes; QEMU refuses the rest. */
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

void dmalab_vtd_intr_init(DmalabVtdSpace *sp)
{
    memory_region_init_io(&sp->intr, OBJECT(sp->s), &dmalab_vtd_intr_ops, sp,
                          "dmalab-vtd-intr", DMALAB_VTD_INTR_SIZE);
}

/*
 * The IOAPIC sends its messages through x86ms->ioapic_as: there, the window
 * over system memory, as in a device's space with translation off.
 */
void dmalab_vtd_ioapic_space(DmalabVtdState *s)
{
    DmalabVtdSpace *sp = g_new0(DmalabVtdSpace, 1);

    sp->s = s;
    sp->sid = DMALAB_VTD_IOAPIC_SID;
    memory_region_init(&sp->root, OBJECT(s), "dmalab-vtd-ioapic", UINT64_MAX);
    memory_region_init_alias(&sp->nodmar, OBJECT(s), "dmalab-vtd-nodmar",
                             &s->nodmar, 0, memory_region_size(&s->nodmar));
    dmalab_vtd_intr_init(sp);
    memory_region_add_subregion_overlap(&sp->root, 0, &sp->nodmar, 0);
    memory_region_add_subregion_overlap(&sp->root, DMALAB_VTD_INTR_BASE,
                                        &sp->intr, 1);
    address_space_init(&sp->as, &sp->root, "dmalab-vtd-ioapic");
    s->ioapic = sp;
    X86_MACHINE(qdev_get_machine())->ioapic_as = &sp->as;
}

/*
 * KVM asks when it builds an MSI route: a query, so nothing is counted or
 * recorded (a request KVM then delivers never reaches the unit).
 */
int dmalab_vtd_int_remap(X86IOMMUState *iommu, MSIMessage *src,
                         MSIMessage *dst, uint16_t sid)
{
    DmalabVtdState *s = DMALAB_VTD(iommu);
    uint64_t address;
    uint32_t data;
    bool ok;

    DMALAB_VTD_LOCKED(s, ok = dmalab_vtd_remap_interrupt(
                             s->model, sid, sid != X86_IOMMU_SID_INVALID,
                             src->address, src->data, false, &address,
                             &data));
    if (!ok) {
        return -EINVAL;
    }
    dst->address = address;
    dst->data = data;
    return 0;
}

void dmalab_vtd_iec_flush(DmalabVtdState *s)
{
    bool pending, global;
    uint32_t index, mask;

    qemu_mutex_lock(&s->lock);
    pending = s->iec_pending;
    global = s->iec_global;
    index = s->iec_index;
    mask = s->iec_mask;
    s->iec_pending = s->iec_global = false;
    qemu_mutex_unlock(&s->lock);
    if (pending) {
        x86_iommu_iec_notify_all(X86_IOMMU_DEVICE(s), global, index, mask);
    }
}
