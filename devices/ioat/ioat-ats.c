/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: PCIe Address Translation Services (ats=on). The function has
 * the ATS extended capability; once the guest sets its Enable bit, the model
 * caches translations in its device-TLB (common/src/ats_memory.cc), asks for
 * them here (translation requests) and reaches memory with translated
 * requests (ioat-host.c). The IOMMU's device-TLB invalidations arrive as
 * DEVIOTLB_UNMAP notifications on the function's IOMMU region, which a
 * memory listener on its DMA address space follows as the IOMMU switches
 * translation on and off.
 */

#include "qemu/osdep.h"
#include "exec/address-spaces.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/rcu.h"
#include "../trace.h"

#include "dmalab/ioat_core.h"
#include "../vtd/dmalab-vtd.h"
#include "../glue.h"
#include "ioat-internal.h"

/* The Enable bit as the guest left it goes to the model. */
void dmalab_ioat_ats_sync(DmalabIoatState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool on;

    if (!s->ats || !s->model) {
        return;
    }
    on = (pci_get_word(pdev->config + DMALAB_IOAT_CAP_ATS + PCI_ATS_CTRL) &
          PCI_ATS_CTRL_ENABLE) && !s->ats_refused;
    dmalab_ioat_set_ats(s->model, on, s->ats_audit);
    trace_dmalab_ioat_ats_enable(on);
}

/*
 * A translation request. Behind dmalab-vtd, the unit's answer
 * (dmalab_vtd_ats_request), translation on or off: the entry and the access
 * it allows, nothing recorded where there is none (R=W=0, 4.2.3), and for the
 * interrupt window R=0, W=1, U=1, whatever the tables map there: the model
 * then writes the page untranslated, and the window takes its writes as
 * interrupt requests. Behind another IOMMU, its region's translate as a query
 * (IOMMU_NONE). With no IOMMU region in the function's address space (no
 * IOMMU, translation off, or bus mastering off), that space's own answer: the
 * address, or unassigned.
 */
uint8_t dmalab_ioat_ats_translate(void *opaque, uint64_t page, bool is_write,
                                  const DmalabMemAttrs *attrs, uint64_t *addr,
                                  bool *untranslated_only)
{
    DmalabIoatState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    MemTxAttrs mattrs = { .requester_id = pci_requester_id(pdev) };
    AddressSpace *as = pci_get_address_space(pdev);
    IOMMUAccessFlags need = is_write ? IOMMU_WO : IOMMU_RO;
    IOMMUTLBEntry e;
    hwaddr at = page;
    uint8_t result;
    bool ok;

    if (!dmalab_ioat_live(s)) {
        return DMALAB_DMA_TARGET_ERROR;
    }
    if (dmalab_vtd_ats_request(pdev, attrs->pasid, page, is_write, &result,
                               addr, untranslated_only)) {
        ok = result == DMALAB_DMA_OK;
        trace_dmalab_ioat_ats_request(page, is_write, ok, ok ? *addr : 0);
        return result;
    }
    if (s->ats_region) {
        IOMMUMemoryRegion *mr = IOMMU_MEMORY_REGION(s->ats_region);

        at = page - s->ats_offset;
        WITH_RCU_READ_LOCK_GUARD() {
            e = memory_region_get_iommu_class_nocheck(mr)->translate(
                mr, at, IOMMU_NONE,
                memory_region_iommu_attrs_to_index(mr, mattrs));
        }
        ok = e.target_as == &address_space_memory && (e.perm & need);
    } else {
        WITH_RCU_READ_LOCK_GUARD() {
            e = address_space_get_iotlb_entry(as, page, is_write, mattrs);
        }
        ok = e.perm && e.target_as == as;
    }
    if (!ok) {
        trace_dmalab_ioat_ats_request(page, is_write, false, 0);
        return DMALAB_DMA_UNASSIGNED;
    }
    *addr = e.translated_addr | (at & e.addr_mask);
    trace_dmalab_ioat_ats_request(page, is_write, true, *addr);
    return DMALAB_DMA_OK;
}

static void dmalab_ioat_ats_notify(IOMMUNotifier *n, IOMMUTLBEntry *e)
{
    DmalabIoatState *s = container_of(n, DmalabIoatState, ats_notifier);

    if (dmalab_ioat_live(s)) {
        dmalab_ioat_ats_invalidate(s->model, e->iova, e->iova + e->addr_mask);
    }
}

static void dmalab_ioat_ats_region_add(MemoryListener *l,
                                       MemoryRegionSection *sec)
{
    DmalabIoatState *s = container_of(l, DmalabIoatState, ats_listener);
    IOMMUMemoryRegion *mr;
    Error *err = NULL;

    /*
     * The region may show in several sections (an IOMMU's interrupt window
     * splits it); one notifier covers all of it while any is there.
     */
    if (!memory_region_is_iommu(sec->mr) ||
        (s->ats_region && sec->mr != s->ats_region)) {
        return;
    }
    if (s->ats_sections++) {
        return;
    }
    mr = IOMMU_MEMORY_REGION(sec->mr);
    iommu_notifier_init(&s->ats_notifier, dmalab_ioat_ats_notify,
                        IOMMU_NOTIFIER_DEVIOTLB_UNMAP, 0, HWADDR_MAX,
                        memory_region_iommu_attrs_to_index(
                            mr, MEMTXATTRS_UNSPECIFIED));
    if (memory_region_register_iommu_notifier(sec->mr, &s->ats_notifier,
                                              &err)) {
        /*
         * A device-TLB nobody invalidates would go stale: translate every
         * access goes untranslated from now on, whatever the guest enables.
         */
        error_report_err(err);
        s->ats_sections = 0;
        s->ats_refused = true;
        dmalab_ioat_ats_sync(s);
        return;
    }
    s->ats_region = sec->mr;
    s->ats_offset =
        sec->offset_within_address_space - sec->offset_within_region;
}

static void dmalab_ioat_ats_region_del(MemoryListener *l,
                                       MemoryRegionSection *sec)
{
    DmalabIoatState *s = container_of(l, DmalabIoatState, ats_listener);

    if (sec->mr != s->ats_region || --s->ats_sections) {
        return;
    }
    memory_region_unregister_iommu_notifier(sec->mr, &s->ats_notifier);
    s->ats_region = NULL;
    /* The translations came from a region that is gone. */
    if (dmalab_ioat_live(s)) {
        dmalab_ioat_ats_invalidate(s->model, 0, UINT64_MAX);
    }
}

void dmalab_ioat_ats_realize(DmalabIoatState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (!s->ats) {
        return;
    }
    pcie_ats_init(pdev, DMALAB_IOAT_CAP_ATS, true);
    s->ats_listener = (MemoryListener){
        .name = "dmalab-ioat-ats",
        .region_add = dmalab_ioat_ats_region_add,
        .region_del = dmalab_ioat_ats_region_del,
    };
    memory_listener_register(&s->ats_listener, pci_get_address_space(pdev));
}

void dmalab_ioat_ats_unrealize(DmalabIoatState *s)
{
    if (s->ats) {
        memory_listener_unregister(&s->ats_listener);
    }
}

/* Reset: ATS off again, as the capability's control register is. */
void dmalab_ioat_ats_reset(DmalabIoatState *s)
{
    if (s->ats) {
        pci_set_word(PCI_DEVICE(s)->config + DMALAB_IOAT_CAP_ATS + PCI_ATS_CTRL,
                     0);
        dmalab_ioat_ats_sync(s);
    }
}

/* The model's trace points of its device-TLB (ioat_core.h). */

void dmalab_ioat_trace_ats_invalidated(void *opaque, uint64_t first,
                                       uint64_t last, unsigned dropped)
{
    trace_dmalab_ioat_ats_invalidated(first, last, dropped);
}

void dmalab_ioat_trace_ats_stale(void *opaque, uint64_t page, uint64_t cached,
                                 bool now_ok, uint64_t now)
{
    trace_dmalab_ioat_ats_stale(page, cached, now_ok, now);
}

static const DmalabDynProp dmalab_ioat_ats_table[] = {
    { "ats-requests", offsetof(DmalabIoatAtsStats, requests),
      "ATS translation requests (device-TLB misses)" },
    { "ats-refused", offsetof(DmalabIoatAtsStats, refused),
      "translation requests answered with no translation" },
    { "ats-hits", offsetof(DmalabIoatAtsStats, hits),
      "accesses the device-TLB translated" },
    { "ats-invalidations", offsetof(DmalabIoatAtsStats, invalidations),
      "device-TLB invalidations received from the IOMMU" },
    { "ats-dropped", offsetof(DmalabIoatAtsStats, dropped),
      "device-TLB entries those invalidations took away" },
    { "ats-audits", offsetof(DmalabIoatAtsStats, audits),
      "device-TLB hits checked against a fresh request (ats-audit=on)" },
    { "ats-stale", offsetof(DmalabIoatAtsStats, stale),
      "checked hits the IOMMU would no longer have given" },
    { "ats-untranslated", offsetof(DmalabIoatAtsStats, untranslated),
      "accesses sent untranslated: the IOMMU answered their page "
      "untranslated-only (dmalab-vtd's interrupt window)" },
};

void dmalab_ioat_ats_counters(DmalabIoatState *s, DmalabCounterSink *sink)
{
    DmalabIoatAtsStats st = { 0 };

    if (s->model) {
        dmalab_ioat_ats_stats(s->model, &st);
    }
    dmalab_counters_table(sink, &st, dmalab_ioat_ats_table,
                          ARRAY_SIZE(dmalab_ioat_ats_table));
}
