/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every dmalab PCI function's glue gives its model alike: DMA as the
 * function's bus master (behind dmalab-vtd, a run of pages translated at
 * once), interrupt messages written as QEMU's own MSI path writes them, and
 * the guard around calls into a model that can call back out.
 */

#ifndef HW_DMALAB_PCI_HOST_H
#define HW_DMALAB_PCI_HOST_H

#include "exec/memattrs.h"
#include "hw/pci/msi.h"
#include "hw/pci/pci_device.h"
#include "qom/object.h"
#include "system/dma.h"

#include "dmalab/host_c.h"
#include "glue.h"

/*
 * DmalabHost entries that every PCI engine's glue shares, for an opaque that
 * is the PCI device: a mapping's release, and the modelled time dmalab-vtd's
 * table walks cost its DMA since the last call (0 behind no dmalab-vtd).
 */
void dmalab_pci_host_dma_unmap(void *opaque, void *host, size_t len,
                               bool is_write, size_t accessed);
uint64_t dmalab_pci_host_dma_cost(void *opaque);

/* A MemTxResult as the models' DMA result for `len` bytes at `addr`. */
DmalabDmaResult dmalab_pci_result(MemTxResult r, uint64_t addr, size_t len);
MemTxAttrs dmalab_pci_attrs(PCIDevice *pdev);

/*
 * dma_memory_rw() of len bytes at addr in `as`, the function's bus-master
 * space, with what failed said as the models say it: behind dmalab-vtd, a
 * page the unit refuses is an IOMMU fault (the unit records it once; QEMU's
 * own path would ask it again for every piece it splits a failed access
 * into) and the bytes before it move; otherwise as dmalab_pci_result().
 */
DmalabDmaResult dmalab_pci_dma_rw(PCIDevice *pdev, AddressSpace *as,
                                  uint64_t addr, void *buf, size_t len,
                                  DMADirection dir, uint32_t pasid);

/*
 * Maps a prefix of [addr, addr + *len) in `as` (the function's bus-master
 * space, or the memory an ATS translated request reaches) if it is plain RAM;
 * NULL otherwise, and the model moves that piece through dma_memory_rw(),
 * which reports the error.
 */
void *dmalab_pci_dma_map(PCIDevice *pdev, AddressSpace *as, uint64_t addr,
                         size_t *len, bool is_write,
                         const DmalabMemAttrs *attrs);
void dmalab_pci_dma_unmap(PCIDevice *pdev, void *host, size_t len,
                          bool is_write, size_t accessed);

/*
 * MSI-X vector `vector`: left pending while masked, else written as the
 * function's bus master. True when the memory system took the message (not
 * for a message aimed at the function's own BAR, refused by QEMU's
 * re-entrancy guard, or at nothing).
 */
bool dmalab_pci_msix_notify(PCIDevice *pdev, unsigned vector);
bool dmalab_pci_deliver(PCIDevice *pdev, MSIMessage msg);

/*
 * Around every call into a model that can call back out (DMA, interrupts):
 * those may reach configuration space or the port above the function and
 * reset or unplug it. The reference keeps the object, and a release asked for
 * meanwhile waits until the outermost call has returned.
 */
typedef struct DmalabCallGuard {
    unsigned depth;
    bool released; /* unrealized while a call ran: release when it returns */
    void (*release)(Object *obj);
} DmalabCallGuard;

void dmalab_guard_enter(DmalabCallGuard *g, Object *obj);
void dmalab_guard_leave(DmalabCallGuard *g, Object *obj);

/*
 * Unrealize's last step: g->release(obj) now, or, when a call into the model
 * is still running (the function was unplugged by its own DMA), stop(obj) and
 * the timers now and the release when that call returns.
 */
void dmalab_guard_unrealize(DmalabCallGuard *g, Object *obj,
                            DmalabTimers *timers, void (*stop)(Object *obj));

/*
 * Defines the MemoryRegionOps `name` of a BAR window whose accesses, of any
 * size and alignment, reach the model while running(s) is true (realized, not
 * released) and do nothing otherwise: reads through read_fn(model, addr,
 * size), writes through write_fn(model, addr, value, size) under the call
 * guard, since a write can call out. State holds `model` and `guard`.
 */
#define DMALAB_DEFINE_MMIO_OPS(name, State, running, read_fn, write_fn)     \
    static uint64_t name##_read(void *opaque, hwaddr addr, unsigned size)   \
    {                                                                       \
        State *s = opaque;                                                  \
                                                                            \
        return running(s) ? read_fn(s->model, addr, size) : 0;             \
    }                                                                       \
    static void name##_write(void *opaque, hwaddr addr, uint64_t val,       \
                             unsigned size)                                 \
    {                                                                       \
        State *s = opaque;                                                  \
                                                                            \
        if (running(s)) {                                                   \
            dmalab_guard_enter(&s->guard, OBJECT(s));                       \
            write_fn(s->model, addr, val, size);                            \
            dmalab_guard_leave(&s->guard, OBJECT(s));                       \
        }                                                                   \
    }                                                                       \
    static const MemoryRegionOps name = {                                   \
        .read = name##_read,                                                \
        .write = name##_write,                                              \
        .endianness = DEVICE_LITTLE_ENDIAN,                                 \
        .valid = { .min_access_size = 1, .max_access_size = 8,              \
                   .unaligned = true },                                     \
        .impl = { .min_access_size = 1, .max_access_size = 8,               \
                  .unaligned = true },                                      \
    }
/*
 * A timer callback's call into the model, with QEMU's re-entrancy guard
 * engaged as it is for MMIO, so the model's DMA and messages cannot land on
 * the function's own BARs.
 */
void dmalab_guard_timer(DmalabCallGuard *g, DeviceState *dev,
                        void (*fire)(void *model, unsigned id), void *model,
                        unsigned id);

#endif
