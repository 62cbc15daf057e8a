/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: what the unit reaches in QEMU (guest memory for its tables,
 * queue and status writes; the APIC for its event messages; timers; trace)
 * and the address spaces it gives PCI devices (vtd.c has the device). The
 * locking rules are in vtd.c's header comment.
 */

#include "qemu/osdep.h"
#include "exec/address-spaces.h"
#include "hw/acpi/aml-build.h"
#include "hw/i386/apic_internal.h"
#include "hw/i386/x86-iommu.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/pci_host.h"
#include "hw/qdev-properties.h"
#include "hw/sysbus.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/rcu.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "exec/memory.h"
#include "../trace.h"

#include "dmalab/vtd_core.h"
#include "dmalab-vtd.h"
#include "../glue.h"
#include "vtd-internal.h"

/*
 * Tables, the queue and wait status must be RAM: an access that reaches
 * anything else (MMIO, including the unit's own registers) fails, and the
 * model gives the architected response (a fault, IQE, a failed status write).
 */
static bool dmalab_vtd_ram_range(hwaddr addr, hwaddr len, bool is_write)
{
    if (addr + len < addr) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, l = len;
        MemoryRegion *mr;

        mr = address_space_translate(&address_space_memory, addr, &xlat, &l,
                                     is_write, MEMTXATTRS_UNSPECIFIED);
        if (!memory_region_is_ram(mr) ||
            (is_write && memory_region_is_rom(mr)) || l == 0) {
            return false;
        }
        addr += l;
        len -= l;
    }
    return true;
}

static DmalabDmaResult host_dma(uint64_t addr, void *buf, size_t len,
                                bool is_write)
{
    DmalabDmaResult r = { .error = DMALAB_DMA_OK, .done = len };
    MemTxResult res;

    if (!dmalab_vtd_ram_range(addr, len, is_write)) {
        r.error = DMALAB_DMA_UNASSIGNED;
        r.fault_addr = addr;
        r.done = 0;
        return r;
    }
    res = address_space_rw(&address_space_memory, addr,
                           MEMTXATTRS_UNSPECIFIED, buf, len, is_write);
    if (res != MEMTX_OK) {
        r.error = DMALAB_DMA_TARGET_ERROR;
        r.fault_addr = addr;
        r.done = 0;
    }
    return r;
}

/*
 * A direct mapping of guest RAM (never ROM for a write, never MMIO), for the
 * first stage's accessed and dirty updates, which the model makes with an
 * atomic compare-and-exchange on the entry as the CPU does.
 */
static void *host_dma_map(void *opaque, uint64_t addr, size_t *len,
                          bool is_write, const DmalabMemAttrs *attrs)
{
    hwaddr plen = *len;
    void *p;

    if (!dmalab_vtd_ram_range(addr, *len, is_write)) {
        return NULL;
    }
    p = address_space_map(&address_space_memory, addr, &plen, is_write,
                          MEMTXATTRS_UNSPECIFIED);
    if (p && plen < *len) {
        address_space_unmap(&address_space_memory, p, plen, is_write, 0);
        return NULL;
    }
    return p;
}

static void host_dma_unmap(void *opaque, void *host, size_t len,
                           bool is_write, size_t accessed)
{
    address_space_unmap(&address_space_memory, host, len, is_write, accessed);
}

static DmalabDmaResult host_dma_read(void *opaque, uint64_t addr, void *buf,
                                     size_t len, const DmalabMemAttrs *attrs)
{
    return host_dma(addr, buf, len, false);
}

static DmalabDmaResult host_dma_write(void *opaque, uint64_t addr,
                                      const void *buf, size_t len,
                                      const DmalabMemAttrs *attrs)
{
    return host_dma(addr, (void *)buf, len, true);
}

/*
 * Called by the model with s->lock held: queue the message only. A full queue
 * refuses it, and the model does not count it as sent.
 */
static bool host_send_msi(void *opaque, uint64_t address, uint32_t data,
                          const DmalabMemAttrs *attrs)
{
    DmalabVtdState *s = opaque;

    if (s->npending == DMALAB_VTD_PENDING_MSIS) {
        s->msis_dropped++;
        trace_dmalab_vtd_msi(address, data, false);
        return false;
    }
    s->pending[s->npending].address = address;
    s->pending[s->npending].data = data;
    s->npending++;
    return true;
}

/*
 * A message in the interrupt range goes to the APIC as an interrupt (as
 * QEMU's other x86 IOMMUs send theirs), not through memory dispatch. Bits
 * 63:32 of the address carry an x2APIC destination's bits 31:8, as QEMU's
 * APIC takes them.
 */
void dmalab_vtd_send_apic(uint64_t address, uint32_t data)
{
    MSIMessage msi = { .address = address, .data = data };

    trace_dmalab_vtd_msi(address, data, true);
    apic_get_class(NULL)->send_msi(&msi);
}

/*
 * Sends what the model queued and tells the IEC listeners and IOMMU
 * notifiers; needs the BQL, and s->lock not held.
 */
void dmalab_vtd_send_pending(void *opaque)
{
    DmalabVtdState *s = opaque;
    unsigned i, n;
    typeof(s->pending[0]) msgs[DMALAB_VTD_PENDING_MSIS];

    dmalab_vtd_inv_flush(s);
    qemu_mutex_lock(&s->lock);
    n = s->npending;
    memcpy(msgs, s->pending, sizeof(msgs[0]) * n);
    s->npending = 0;
    qemu_mutex_unlock(&s->lock);
    for (i = 0; i < n; i++) {
        dmalab_vtd_send_apic(msgs[i].address, msgs[i].data);
    }
    dmalab_vtd_iec_flush(s);
}

/*
 * After a call into the model, s->lock no longer held: sends what it raised
 * now under the BQL, else from the bottom half.
 */
void dmalab_vtd_send_raised(DmalabVtdState *s)
{
    if (bql_locked()) {
        dmalab_vtd_send_pending(s);
    } else {
        qemu_bh_schedule(s->msi_bh);
    }
}

/* The model's trace points (vtd_core.h). */

/* A source-id as the bus, slot and function arguments of a trace event. */
#define DMALAB_VTD_BDF(sid) \
    PCI_BUS_NUM(sid), PCI_SLOT((sid) & 0xff), PCI_FUNC((sid) & 0xff)

void dmalab_vtd_trace_mmio(void *opaque, bool write, uint32_t offset,
                           unsigned size, uint64_t value)
{
    (write ? trace_dmalab_vtd_mmio_write : trace_dmalab_vtd_mmio_read)(
        offset, size, value);
}

void dmalab_vtd_trace_fault(void *opaque, uint16_t sid, uint64_t iova,
                            bool write, uint8_t reason, bool recorded)
{
    trace_dmalab_vtd_fault(DMALAB_VTD_BDF(sid), iova, write, reason,
                           recorded);
}

void dmalab_vtd_trace_invalidated(void *opaque, char kind, uint8_t gran,
                                  uint16_t did, uint64_t addr, unsigned am,
                                  uint64_t dropped, bool queued)
{
    trace_dmalab_vtd_invalidated(kind, gran, did, addr, am, dropped, queued);
}

void dmalab_vtd_trace_wait_done(void *opaque, uint64_t modelled,
                                uint64_t achieved)
{
    trace_dmalab_vtd_wait(modelled, achieved);
}

void dmalab_vtd_trace_stale(void *opaque, uint16_t sid, uint64_t iova,
                            uint64_t cached, uint64_t now, uint8_t now_fault)
{
    trace_dmalab_vtd_stale(DMALAB_VTD_BDF(sid), iova, cached, now,
                           now_fault);
}

void dmalab_vtd_trace_queue_timeout(void *opaque, uint32_t head, uint16_t sid,
                                    uint32_t dropped)
{
    trace_dmalab_vtd_queue_timeout(head, sid, dropped);
}

void dmalab_vtd_trace_queue_error(void *opaque, uint32_t head, uint64_t lo,
                                  uint64_t hi)
{
    trace_dmalab_vtd_queue_error(head, lo, hi);
}

void dmalab_vtd_trace_event_refused(void *opaque, bool fault,
                                    uint64_t address, uint32_t data)
{
    trace_dmalab_vtd_event_refused(fault ? "fault" : "invalidation", address,
                                   data);
}

void dmalab_vtd_trace_interrupt(void *opaque, uint16_t sid, uint64_t address,
                                uint32_t data, bool ok, bool remapped,
                                uint32_t index, uint64_t out_address,
                                uint32_t out_data, uint8_t reason,
                                bool recorded)
{
    if (ok) {
        trace_dmalab_vtd_interrupt(DMALAB_VTD_BDF(sid), address, data,
                                   remapped, index, out_address, out_data);
    } else {
        trace_dmalab_vtd_ir_fault(DMALAB_VTD_BDF(sid), address, data, index,
                                  reason, recorded);
    }
}

/*
 * Called by the model with s->lock held: note the invalidation, and tell
 * QEMU's listeners once the lock is dropped (dmalab_vtd_iec_flush).
 */
void dmalab_vtd_trace_iec_invalidated(void *opaque, bool global,
                                      uint32_t index, unsigned im,
                                      uint64_t dropped)
{
    DmalabVtdState *s = opaque;

    trace_dmalab_vtd_iec_invalidated(global, index, im, dropped);
    if (s->iec_pending || global) {
        s->iec_global = true;
    } else {
        s->iec_index = index;
        s->iec_mask = im;
    }
    s->iec_pending = true;
}

void dmalab_vtd_trace_ir_state(void *opaque, bool enabled, uint64_t table,
                               unsigned entries, bool x2apic)
{
    trace_dmalab_vtd_ir_state(enabled, table, entries, x2apic);
}

/*
 * What a device's translations cost in walks since it last asked, for a DMA
 * model that adds it to its own timing (dmalab-ioat). 0 without dmalab-vtd.
 */
uint64_t dmalab_vtd_dma_cost(PCIDevice *dev)
{
    Object *obj = OBJECT(x86_iommu_get_default());
    DmalabVtdState *s = (DmalabVtdState *)object_dynamic_cast(obj,
                                                              TYPE_DMALAB_VTD);
    uint64_t ns;

    if (!s || !s->model) {
        return 0;
    }
    DMALAB_VTD_LOCKED(s, ns = dmalab_vtd_take_cost(s->model,
                                                   pci_requester_id(dev)));
    return ns;
}

bool dmalab_vtd_dma_run(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                        bool is_write, uint64_t *gpa, uint64_t *len)
{
    Object *obj = OBJECT(x86_iommu_get_default());
    DmalabVtdState *s = (DmalabVtdState *)object_dynamic_cast(obj,
                                                              TYPE_DMALAB_VTD);
    DmalabVtdTranslation t;
    uint64_t run = 0;

    /* Without bus mastering the device's DMA goes nowhere: the usual path. */
    if (!s || !s->model || !s->dmar_on || !*len ||
        !(pci_get_word(dev->config + PCI_COMMAND) & PCI_COMMAND_MASTER) ||
        iova + *len - 1 < iova ||
        (iova < DMALAB_VTD_INTR_BASE + DMALAB_VTD_INTR_SIZE &&
         iova + *len > DMALAB_VTD_INTR_BASE)) {
        return false;
    }
    DMALAB_VTD_LOCKED(s, t = dmalab_vtd_translate_run(
                             s->model, pci_requester_id(dev), pasid, iova, *len,
                             is_write ? DMALAB_VTD_WRITE : DMALAB_VTD_READ,
                             &run));
    *gpa = t.addr + (iova - t.iova);
    *len = t.ok ? run : 0;
    return true;
}

bool dmalab_vtd_ats_request(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                            bool is_write, uint8_t *result, uint64_t *addr,
                            bool *untranslated_only)
{
    Object *obj = OBJECT(x86_iommu_get_default());
    DmalabVtdState *s = (DmalabVtdState *)object_dynamic_cast(obj,
                                                              TYPE_DMALAB_VTD);
    DmalabVtdTranslation t;

    /* Without bus mastering the request goes nowhere: the usual path. */
    if (!s || !s->model ||
        !(pci_get_word(dev->config + PCI_COMMAND) & PCI_COMMAND_MASTER)) {
        return false;
    }
    DMALAB_VTD_LOCKED(s, t = dmalab_vtd_translation_request(
                             s->model, pci_requester_id(dev), pasid, iova));
    if (!t.ok || !(is_write ? t.write : t.read)) {
        *result = DMALAB_DMA_UNASSIGNED;
        return true;
    }
    *result = DMALAB_DMA_OK;
    *untranslated_only = t.untranslated_only;
    *addr = t.untranslated_only ? iova : t.addr + (iova - t.iova);
    return true;
}

/* Address spaces. */

/* Routes every device's DMA through the IOMMU region or straight to memory. */
void dmalab_vtd_switch(DmalabVtdState *s)
{
    bool on;
    GHashTableIter it;
    gpointer value;

    DMALAB_VTD_LOCKED(s, on = s->model && dmalab_vtd_enabled(s->model));
    if (on == s->dmar_on) {
        return;
    }
    s->dmar_on = on;
    trace_dmalab_vtd_switch(on);
    memory_region_transaction_begin();
    g_hash_table_iter_init(&it, s->spaces);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        DmalabVtdSpace *sp = value;

        memory_region_set_enabled(&sp->nodmar, !on);
        memory_region_set_enabled(MEMORY_REGION(&sp->iommu), on);
    }
    memory_region_transaction_commit();
}

static IOMMUTLBEntry dmalab_vtd_translate_mr(IOMMUMemoryRegion *iommu,
                                             hwaddr addr,
                                             IOMMUAccessFlags flag,
                                             int iommu_idx)
{
    DmalabVtdSpace *sp = container_of(iommu, DmalabVtdSpace, iommu);
    DmalabVtdState *s = sp->s;
    uint16_t sid = PCI_BUILD_BDF(pci_bus_num(sp->bus), sp->devfn);
    unsigned perm = ((flag & IOMMU_RO) ? DMALAB_VTD_READ : 0) |
                    ((flag & IOMMU_WO) ? DMALAB_VTD_WRITE : 0);
    DmalabVtdTranslation t;
    IOMMUTLBEntry e = {
        .target_as = &address_space_memory,
        .perm = IOMMU_NONE,
    };

    /* QEMU's IOMMU regions carry no PASID: requests through them have none. */
    DMALAB_VTD_LOCKED(s, t = dmalab_vtd_translate(s->model, sid,
                                                  DMALAB_VTD_NO_PASID, addr,
                                                  perm));
    e.iova = t.iova;
    e.translated_addr = t.addr;
    e.addr_mask = t.mask;
    if (t.ok) {
        e.perm = (t.read ? IOMMU_RO : 0) | (t.write ? IOMMU_WO : 0);
    }
    trace_dmalab_vtd_translate(PCI_SLOT(sp->devfn), PCI_FUNC(sp->devfn), addr,
                               flag, e.translated_addr, e.addr_mask, e.perm);
    return e;
}

static guint dmalab_vtd_key_hash(gconstpointer v)
{
    const DmalabVtdKey *k = v;

    return g_direct_hash(k->bus) ^ k->devfn;
}

static gboolean dmalab_vtd_key_equal(gconstpointer a, gconstpointer b)
{
    const DmalabVtdKey *x = a, *y = b;

    return x->bus == y->bus && x->devfn == y->devfn;
}

static AddressSpace *dmalab_vtd_find_as(PCIBus *bus, void *opaque, int devfn)
{
    DmalabVtdState *s = opaque;
    DmalabVtdKey key = { .bus = bus, .devfn = devfn };
    DmalabVtdSpace *sp = g_hash_table_lookup(s->spaces, &key);
    g_autofree char *name = NULL;

    if (sp) {
        return &sp->as;
    }
    sp = g_new0(DmalabVtdSpace, 1);
    sp->s = s;
    sp->bus = bus;
    sp->devfn = devfn;
    name = g_strdup_printf("dmalab-vtd-%02x.%x", PCI_SLOT(devfn),
                           PCI_FUNC(devfn));
    memory_region_init(&sp->root, OBJECT(s), name, UINT64_MAX);
    memory_region_init_iommu(&sp->iommu, sizeof(sp->iommu),
                             TYPE_DMALAB_VTD_IOMMU_MR, OBJECT(s), name,
                             UINT64_MAX);
    memory_region_init_alias(&sp->nodmar, OBJECT(s), "dmalab-vtd-nodmar",
                             &s->nodmar, 0, memory_region_size(&s->nodmar));
    dmalab_vtd_intr_init(sp);
    memory_region_add_subregion_overlap(&sp->root, 0,
                                        MEMORY_REGION(&sp->iommu), 0);
    memory_region_add_subregion_overlap(&sp->root, 0, &sp->nodmar, 0);
    memory_region_add_subregion_overlap(&sp->root, DMALAB_VTD_INTR_BASE,
                                        &sp->intr, 1);
    memory_region_set_enabled(MEMORY_REGION(&sp->iommu), s->dmar_on);
    memory_region_set_enabled(&sp->nodmar, !s->dmar_on);
    address_space_init(&sp->as, &sp->root, name);
    g_hash_table_insert(s->spaces, g_memdup2(&key, sizeof(key)), sp);
    return &sp->as;
}

static PCIIOMMUOps dmalab_vtd_iommu_ops = {
    .get_address_space = dmalab_vtd_find_as,
};

/*
 * Gives every PCI device on bus an address space behind the unit: through
 * its IOMMU region while translation is on, straight to system memory
 * (nodmar) while it is off.
 */
void dmalab_vtd_attach(DmalabVtdState *s, PCIBus *bus)
{
    memory_region_init(&s->nodmar, OBJECT(s), "dmalab-vtd-nodmar",
                       UINT64_MAX);
    memory_region_init_alias(&s->sys_alias, OBJECT(s), "dmalab-vtd-sys",
                             get_system_memory(), 0,
                             memory_region_size(get_system_memory()));
    memory_region_add_subregion(&s->nodmar, 0, &s->sys_alias);
    s->spaces = g_hash_table_new_full(dmalab_vtd_key_hash,
                                      dmalab_vtd_key_equal, g_free, g_free);
    pci_setup_iommu(bus, &dmalab_vtd_iommu_ops, s);
}

/* The model's host: guest memory (RAM only), messages; glue.c's clock, log. */
const DmalabHost dmalab_vtd_host_fns = {
    .dma_read = host_dma_read,
    .dma_write = host_dma_write,
    .dma_map = host_dma_map,
    .dma_unmap = host_dma_unmap,
    .send_msi = host_send_msi,
};

static void dmalab_vtd_iommu_mr_class_init(ObjectClass *klass, void *data)
{
    IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_CLASS(klass);

    imrc->translate = dmalab_vtd_translate_mr;
    imrc->notify_flag_changed = dmalab_vtd_notify_flag_changed;
}

static const TypeInfo dmalab_vtd_iommu_mr_types[] = {
    {
        .name = TYPE_DMALAB_VTD_IOMMU_MR,
        .parent = TYPE_IOMMU_MEMORY_REGION,
        .class_init = dmalab_vtd_iommu_mr_class_init,
    },
};

DEFINE_TYPES(dmalab_vtd_iommu_mr_types)
