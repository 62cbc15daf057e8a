/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: what the model reaches in QEMU (PCI DMA, its timers, MSI-X,
 * MSI and INTx, trace points); ioat.c has the device.
 */

#include "qemu/osdep.h"
#include <sys/mman.h>
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "system/dma.h"
#include "../trace.h"

#include "dmalab/ioat_core.h"
#include "../glue.h"
#include "../pci-host.h"
#include "ioat-internal.h"

/*
 * Where an access goes: the function's bus-master address space or, for an
 * ATS translated request (ioat-ats.c), system memory, which the IOMMU lets it
 * reach untranslated while bus mastering is on. NULL: nowhere (a master
 * abort).
 */
static AddressSpace *dmalab_ioat_dma_as(DmalabIoatState *s,
                                        const DmalabMemAttrs *attrs)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (!attrs->translated) {
        return pci_get_address_space(pdev);
    }
    if (!(pci_get_word(pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER)) {
        return NULL;
    }
    return &address_space_memory;
}

static MemTxResult dmalab_ioat_rw(DmalabIoatState *s, uint64_t addr,
                                  void *buf, size_t len, DMADirection dir,
                                  const DmalabMemAttrs *attrs)
{
    AddressSpace *as;

    if (!dmalab_ioat_live(s)) {
        return MEMTX_ACCESS_ERROR;
    }
    as = dmalab_ioat_dma_as(s, attrs);
    if (!as) {
        return MEMTX_DECODE_ERROR;
    }
    return dma_memory_rw(as, addr, buf, len, dir,
                         dmalab_pci_attrs(PCI_DEVICE(s)));
}

static DmalabDmaResult host_dma_read(void *opaque, uint64_t addr, void *buf,
                                     size_t len, const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    MemTxResult r = dmalab_ioat_rw(s, addr, buf, len, DMA_DIRECTION_TO_DEVICE,
                                   attrs);

    if (r != MEMTX_OK) {
        trace_dmalab_ioat_dma_error(attrs->stream, addr, len, false, r);
    }
    return dmalab_pci_result(r, addr, len);
}

static DmalabDmaResult host_dma_write(void *opaque, uint64_t addr,
                                      const void *buf, size_t len,
                                      const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    MemTxResult r = dmalab_ioat_rw(s, addr, (void *)buf, len,
                                   DMA_DIRECTION_FROM_DEVICE, attrs);

    if (r != MEMTX_OK) {
        trace_dmalab_ioat_dma_error(attrs->stream, addr, len, true, r);
    }
    return dmalab_pci_result(r, addr, len);
}

static void *host_dma_map(void *opaque, uint64_t addr, size_t *len,
                          bool is_write, const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    AddressSpace *as = dmalab_ioat_live(s) ? dmalab_ioat_dma_as(s, attrs)
                                           : NULL;

    return as ? dmalab_pci_dma_map(PCI_DEVICE(s), as, addr, len, is_write,
                                   attrs)
              : NULL;
}

static bool host_notify(void *opaque, unsigned vector)
{
    DmalabIoatState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    bool sent = false;

    if (!dmalab_ioat_live(s)) {
        return false;
    }
    if (msix_enabled(pdev)) {
        if (vector >= s->cfg.channels) {
            vector = 0;
        }
        sent = dmalab_pci_msix_notify(pdev, vector);
    } else if (msi_enabled(pdev)) {
        /*
         * One message: msi_notify() asserts on a vector the guest did not
         * enable.
         */
        vector = 0;
        if (msi_is_masked(pdev, 0)) {
            msi_notify(pdev, 0); /* sets the pending bit */
        } else {
            sent = dmalab_pci_deliver(pdev, msi_get_message(pdev, 0));
        }
    }
    trace_dmalab_ioat_irq(vector, msix_enabled(pdev), sent);
    return sent;
}

/*
 * The INTx pin follows the model's level while neither MSI nor MSI-X is on:
 * a function with either enabled must not use INTx (PCI Local Bus 3.0,
 * 6.8.1.3 and 6.8.2.3), so enabling one lowers a line that was high, and
 * going back to INTx shows the level again.
 */
void dmalab_ioat_update_intx(DmalabIoatState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    pci_set_irq(pdev, s->intx_level && !msix_enabled(pdev) &&
                !msi_enabled(pdev));
}

static bool host_set_level(void *opaque, bool asserted)
{
    DmalabIoatState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    bool rose;

    if (!dmalab_ioat_live(s)) {
        return false;
    }
    rose = asserted && !s->intx_level;
    s->intx_level = asserted;
    dmalab_ioat_update_intx(s);
    trace_dmalab_ioat_intx(asserted);
    return rose && !msix_enabled(pdev) && !msi_enabled(pdev) &&
           !(pci_get_word(pdev->config + PCI_COMMAND) &
             PCI_COMMAND_INTX_DISABLE);
}

/* The model's trace points (ioat_core.h). */

void dmalab_ioat_trace_mmio(void *opaque, bool write, uint32_t offset,
                            unsigned size, uint64_t value)
{
    (write ? trace_dmalab_ioat_mmio_write : trace_dmalab_ioat_mmio_read)(
        offset, size, value);
}

DMALAB_TRACE_RELAY(dmalab_ioat_trace_decided,
                   (void *opaque, unsigned ch, uint64_t desc, const char *op,
                    uint64_t len, uint64_t data_at, uint64_t done_at,
                    uint32_t fail),
                   trace_dmalab_ioat_decided, ch, desc, op, len, data_at,
                   done_at, fail)

DMALAB_TRACE_RELAY(dmalab_ioat_trace_completed,
                   (void *opaque, unsigned ch, uint64_t desc, const char *op,
                    uint64_t bytes),
                   trace_dmalab_ioat_completed, ch, desc, op, bytes)

DMALAB_TRACE_RELAY(dmalab_ioat_trace_halted,
                   (void *opaque, unsigned ch, uint32_t chanerr,
                    int dma_error, uint64_t fault_addr),
                   trace_dmalab_ioat_halted, ch, chanerr, dma_error, fault_addr)

DMALAB_TRACE_RELAY(dmalab_ioat_trace_status,
                   (void *opaque, unsigned ch, uint64_t where,
                    uint64_t status, bool ok),
                   trace_dmalab_ioat_status, ch, where, status, ok)

DMALAB_TRACE_RELAY(dmalab_ioat_trace_stepped,
                   (void *opaque, unsigned ch, uint64_t bytes, unsigned descs,
                    uint64_t next_ns),
                   trace_dmalab_ioat_step, ch, bytes, descs, next_ns)

/* The model's host: PCI DMA, interrupts, walk costs; glue.c's clock and log. */
const DmalabHost dmalab_ioat_host_fns = {
    .dma_read = host_dma_read,
    .dma_write = host_dma_write,
    .dma_map = host_dma_map,
    .dma_unmap = dmalab_pci_host_dma_unmap,
    .notify = host_notify,
    .set_level = host_set_level,
    .dma_cost = dmalab_pci_host_dma_cost,
    .ats_translate = dmalab_ioat_ats_translate,
};
