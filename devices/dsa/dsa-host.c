/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-dsa: what the model reaches in QEMU (PCI DMA, MSI-X, trace points)
 * and its counters as QOM properties; dsa.c has the device.
 */

#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "qapi/visitor.h"
#include "qom/object.h"
#include "system/dma.h"
#include "../trace.h"

#include "dmalab/dsa_core.h"
#include "dsa-internal.h"

static DmalabDmaResult host_dma_rw(DmalabDsaState *s, uint64_t addr,
                                   void *buf, size_t len, DMADirection dir,
                                   const DmalabMemAttrs *attrs)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    DmalabDmaResult r = dmalab_pci_result(MEMTX_ACCESS_ERROR, addr, len);

    if (dmalab_dsa_live(s)) {
        r = dmalab_pci_dma_rw(pdev, pci_get_address_space(pdev), addr, buf,
                              len, dir, attrs->pasid);
    }
    if (r.error != DMALAB_DMA_OK) {
        trace_dmalab_dsa_dma_error(attrs->stream, r.fault_addr, len,
                                   dir == DMA_DIRECTION_FROM_DEVICE, r.error);
    }
    return r;
}

static DmalabDmaResult host_dma_read(void *opaque, uint64_t addr, void *buf,
                                     size_t len, const DmalabMemAttrs *attrs)
{
    return host_dma_rw(opaque, addr, buf, len, DMA_DIRECTION_TO_DEVICE, attrs);
}

static DmalabDmaResult host_dma_write(void *opaque, uint64_t addr,
                                      const void *buf, size_t len,
                                      const DmalabMemAttrs *attrs)
{
    return host_dma_rw(opaque, addr, (void *)buf, len,
                       DMA_DIRECTION_FROM_DEVICE, attrs);
}

static void *host_dma_map(void *opaque, uint64_t addr, size_t *len,
                          bool is_write, const DmalabMemAttrs *attrs)
{
    DmalabDsaState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);

    if (!dmalab_dsa_live(s)) {
        return NULL;
    }
    return dmalab_pci_dma_map(pdev, pci_get_address_space(pdev), addr, len,
                              is_write, attrs);
}

/* MSI-X only: idxd asks for nothing else (pci_alloc_irq_vectors, MSI-X). */
static bool host_notify(void *opaque, unsigned vector)
{
    DmalabDsaState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    bool sent = false;

    if (!dmalab_dsa_live(s) || vector >= s->cfg.msix_vectors) {
        return false;
    }
    if (msix_enabled(pdev)) {
        sent = dmalab_pci_msix_notify(pdev, vector);
    }
    trace_dmalab_dsa_irq(vector, sent);
    return sent;
}

const DmalabHost dmalab_dsa_host_fns = {
    .dma_read = host_dma_read,
    .dma_write = host_dma_write,
    .dma_map = host_dma_map,
    .dma_unmap = dmalab_pci_host_dma_unmap,
    .notify = host_notify,
    .dma_cost = dmalab_pci_host_dma_cost,
};

/* The model's trace points (dsa_core.h). */

void dmalab_dsa_trace_command(void *opaque, bool done, unsigned cmd,
                              uint32_t operand, unsigned err)
{
    if (done) {
        trace_dmalab_dsa_command_done(cmd, operand, err);
    } else {
        trace_dmalab_dsa_command(cmd, operand);
    }
}

DMALAB_TRACE_RELAY(dmalab_dsa_trace_submitted,
                   (void *opaque, unsigned wq, unsigned opcode),
                   trace_dmalab_dsa_submitted, wq, opcode)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_dropped,
                   (void *opaque, unsigned wq, const char *why),
                   trace_dmalab_dsa_dropped, wq, why)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_completed,
                   (void *opaque, unsigned wq, unsigned opcode,
                    unsigned status, uint64_t done),
                   trace_dmalab_dsa_completed, wq, opcode, status, done)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_record,
                   (void *opaque, unsigned wq, uint64_t addr, unsigned status,
                    bool ok),
                   trace_dmalab_dsa_record, wq, addr, status, ok)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_swerr,
                   (void *opaque, unsigned error, int wq, bool recorded),
                   trace_dmalab_dsa_swerr, error, wq, recorded)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_halted,
                   (void *opaque, unsigned reset_type),
                   trace_dmalab_dsa_halted, reset_type)

DMALAB_TRACE_RELAY(dmalab_dsa_trace_refused,
                   (void *opaque, uint32_t offset),
                   trace_dmalab_dsa_refused, offset)

/* Counters: the "counters" property (qom-get). */

static const DmalabDynProp dmalab_dsa_counters_table[] = {
    { "commands", offsetof(DmalabDsaCounters, commands),
      "commands completed" },
    { "command-errors", offsetof(DmalabDsaCounters, command_errors),
      "commands completed with CMDSTS.ERR set" },
    { "swerrs", offsetof(DmalabDsaCounters, swerrs),
      "software errors reported in SWERR (recorded or overflowed)" },
    { "halts", offsetof(DmalabDsaCounters, halts), "times the device halted" },
    { "interrupts", offsetof(DmalabDsaCounters, interrupts),
      "MSI-X messages delivered" },
    { "refused-writes", offsetof(DmalabDsaCounters, refused_writes),
      "configuration writes refused: locked or not offered" },
    { "submitted", offsetof(DmalabDsaCounters, submitted),
      "descriptors a WQ took from a portal" },
    { "dropped", offsetof(DmalabDsaCounters, dropped),
      "portal writes that never became a descriptor" },
    { "aborted", offsetof(DmalabDsaCounters, aborted),
      "descriptors dropped by an abort, a reset or a halt" },
    { "descriptors", offsetof(DmalabDsaCounters, descriptors),
      "descriptors completed, batches and their descriptors each one" },
    { "descriptor-errors", offsetof(DmalabDsaCounters, descriptor_errors),
      "descriptors completed with a status other than success" },
    { "bytes", offsetof(DmalabDsaCounters, bytes),
      "transfer bytes processed" },
    { "batches", offsetof(DmalabDsaCounters, batches), "batches completed" },
    { "records", offsetof(DmalabDsaCounters, records),
      "completion records written" },
};

/* "counters": the model's, then the plan's. */
void dmalab_dsa_read_counters(Object *obj, DmalabCounterSink *sink)
{
    DmalabDsaState *s = DMALAB_DSA(obj);
    DmalabDsaCounters c = { 0 };

    if (s->model) {
        dmalab_dsa_counters(s->model, &c);
    }
    dmalab_counters_table(sink, &c, dmalab_dsa_counters_table,
                          ARRAY_SIZE(dmalab_dsa_counters_table));
    dmalab_plan_counters(&s->plan, sink);
}

/* How the model takes fault plans (glue.c has the properties). */
DMALAB_DEFINE_PLAN_OPS(dmalab_dsa_plan_ops, DMALAB_DSA, dmalab_dsa,
                       trace_dmalab_dsa_fault_plan);
