/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every dmalab PCI function's glue gives its model alike (pci-host.h).
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "exec/memory.h"

#include "vtd/dmalab-vtd.h"
#include "pci-host.h"

DmalabDmaResult dmalab_pci_result(MemTxResult r, uint64_t addr, size_t len)
{
    DmalabDmaResult out = { .error = DMALAB_DMA_OK, .done = len };

    if (r == MEMTX_OK) {
        return out;
    }
    /*
     * QEMU's IOMMUs fail a translation as an unassigned access: both are decode
     * errors.
     */
    out.error = (r & MEMTX_DECODE_ERROR) ? DMALAB_DMA_UNASSIGNED
                                         : DMALAB_DMA_TARGET_ERROR;
    out.fault_addr = addr;
    out.done = 0;
    return out;
}

MemTxAttrs dmalab_pci_attrs(PCIDevice *pdev)
{
    return (MemTxAttrs){ .requester_id = pci_requester_id(pdev) };
}

DmalabDmaResult dmalab_pci_dma_rw(PCIDevice *pdev, AddressSpace *as,
                                  uint64_t addr, void *buf, size_t len,
                                  DMADirection dir, uint32_t pasid)
{
    bool is_write = dir == DMA_DIRECTION_FROM_DEVICE;
    MemTxAttrs attrs = dmalab_pci_attrs(pdev);
    DmalabDmaResult out = { .error = DMALAB_DMA_OK, .done = len };
    size_t done = 0;

    while (done < len) {
        uint64_t at = addr + done, gpa, run = len - done;
        MemTxResult r;

        if (!dmalab_vtd_dma_run(pdev, pasid, at, is_write, &gpa, &run)) {
            r = dma_memory_rw(as, at, (uint8_t *)buf + done, len - done, dir,
                              attrs);
            run = len - done;
        } else if (!run) {
            out.error = DMALAB_DMA_IOMMU_FAULT;
            out.fault_addr = at;
            out.done = done;
            return out;
        } else {
            r = dma_memory_rw(&address_space_memory, gpa,
                              (uint8_t *)buf + done, run, dir, attrs);
        }
        if (r != MEMTX_OK) {
            out = dmalab_pci_result(r, at, run);
            out.done = done;
            return out;
        }
        done += run;
    }
    return out;
}

void *dmalab_pci_dma_map(PCIDevice *pdev, AddressSpace *as, uint64_t addr,
                         size_t *len, bool is_write,
                         const DmalabMemAttrs *attrs)
{
    DMADirection dir =
        is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;
    MemTxAttrs mattrs = dmalab_pci_attrs(pdev);
    dma_addr_t plen = *len;
    uint64_t gpa, run = *len;
    ram_addr_t offset;
    void *p;

    /*
     * Behind dmalab-vtd the unit translates the whole piece in one call, each
     * page as it would one at a time, and the contiguous run it answers is
     * mapped in system memory: QEMU's memory API would otherwise ask the IOMMU
     * region for one 4 KiB page at a time. A first page that faults goes the
     * ordinary way (through the bounce path), which reports the error.
     */
    if (!attrs->translated &&
        dmalab_vtd_dma_run(pdev, attrs->pasid, addr, is_write, &gpa, &run)) {
        if (!run) {
            return NULL;
        }
        as = &address_space_memory;
        addr = gpa;
        plen = run;
    }
    /*
     * dma_memory_map() translates each page once and hands out a bounce buffer,
     * without reporting failure, for anything that is not RAM (device memory,
     * unassigned ranges, IOMMU faults); for a read it would already have read
     * device registers into it. So only plain RAM is mapped: a bounce buffer is
     * given back untouched (memory_region_from_host knows guest RAM from it).
     * Only the first page of a run pays a second translation.
     */
    if (!is_write) {
        MemoryRegion *mr;
        hwaddr xlat, l = 1;

        RCU_READ_LOCK_GUARD();
        mr = address_space_translate(as, addr, &xlat, &l, false, mattrs);
        if (!memory_access_is_direct(mr, false, mattrs)) {
            return NULL;
        }
    }
    p = dma_memory_map(as, addr, &plen, dir, mattrs);
    if (!p) {
        return NULL;
    }
    if (!memory_region_from_host(p, &offset)) {
        dma_memory_unmap(as, p, plen, dir, 0);
        return NULL;
    }
    *len = plen;
    return p;
}

void dmalab_pci_dma_unmap(PCIDevice *pdev, void *host, size_t len,
                          bool is_write, size_t accessed)
{
    DMADirection dir =
        is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;

    /* Only RAM is ever mapped: any address space unmaps it. */
    dma_memory_unmap(pci_get_address_space(pdev), host, len, dir, accessed);
}

bool dmalab_pci_deliver(PCIDevice *pdev, MSIMessage msg)
{
    MemTxResult r = MEMTX_OK;

    address_space_stl_le(&pdev->bus_master_as, msg.address, msg.data,
                         dmalab_pci_attrs(pdev), &r);
    return r == MEMTX_OK;
}

bool dmalab_pci_msix_notify(PCIDevice *pdev, unsigned vector)
{
    if (msix_is_masked(pdev, vector)) {
        msix_notify(pdev, vector); /* sets the pending bit */
        return false;
    }
    return dmalab_pci_deliver(pdev, msix_get_message(pdev, vector));
}

void dmalab_guard_enter(DmalabCallGuard *g, Object *obj)
{
    object_ref(obj);
    g->depth++;
}

void dmalab_guard_leave(DmalabCallGuard *g, Object *obj)
{
    g->depth--;
    if (g->released && !g->depth) {
        g->released = false;
        g->release(obj);
    }
    object_unref(obj);
}

void dmalab_guard_unrealize(DmalabCallGuard *g, Object *obj,
                            DmalabTimers *timers, void (*stop)(Object *obj))
{
    if (g->depth) {
        stop(obj);
        dmalab_timers_stop(timers);
        g->released = true;
        return;
    }
    g->release(obj);
}

void dmalab_guard_timer(DmalabCallGuard *g, DeviceState *dev,
                        void (*fire)(void *model, unsigned id), void *model,
                        unsigned id)
{
    MemReentrancyGuard *mem = &dev->mem_reentrancy_guard;
    bool engaged = mem->engaged_in_io;

    dmalab_guard_enter(g, OBJECT(dev));
    mem->engaged_in_io = true;
    fire(model, id);
    mem->engaged_in_io = engaged;
    dmalab_guard_leave(g, OBJECT(dev));
}

void dmalab_pci_host_dma_unmap(void *opaque, void *host, size_t len,
                               bool is_write, size_t accessed)
{
    dmalab_pci_dma_unmap(PCI_DEVICE(opaque), host, len, is_write, accessed);
}

uint64_t dmalab_pci_host_dma_cost(void *opaque)
{
    return dmalab_vtd_dma_cost(PCI_DEVICE(opaque));
}
