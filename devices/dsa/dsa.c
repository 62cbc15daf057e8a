/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-dsa: QEMU glue for the dmalab Intel Data Streaming Accelerator
 * (DSA 1.0) model.
 *
 * Everything the device does lives in the C++ model (dsa/); the glue only
 * connects it to QEMU: a PCI Express function with BAR 0 (registers,
 * configuration tables and the MSI-X table) and BAR 2 (the WQ portals), PCI
 * DMA (so an IOMMU in front of the device applies), its timers on the virtual
 * clock, properties, counters, migration and trace points. This file has the
 * PCI function, its life cycle and migration; dsa-host.c what the model
 * reaches in QEMU. docs/dsa.rst describes the device.
 */

#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "qom/object.h"
#include "../trace.h"

#include "dmalab/dsa_core.h"
#include "dsa-internal.h"

OBJECT_DEFINE_SIMPLE_TYPE_WITH_INTERFACES(DmalabDsaState, dmalab_dsa,
                                          DMALAB_DSA, PCI_DEVICE,
                                          { INTERFACE_PCIE_DEVICE }, { NULL })

static void dmalab_dsa_release(DmalabDsaState *s)
{
    if (s->race_map) {
        dmalab_dsa_set_race_table(s->model, NULL, 0);
        dmalab_glue_unmap_race_table(s->race_map);
        s->race_map = NULL;
    }
    dmalab_timers_free(&s->timers);
    dmalab_dsa_free(s->model);
    s->model = NULL;
}

static void dmalab_dsa_release_obj(Object *obj)
{
    dmalab_dsa_release(DMALAB_DSA(obj));
}

/* Every step and timer of the model cancelled, as at a reset. */
static void dmalab_dsa_stop_obj(Object *obj)
{
    dmalab_dsa_reset(DMALAB_DSA(obj)->model);
}

/* A model to call: realized, not unplugged by its own DMA. */
static bool dmalab_dsa_running(DmalabDsaState *s)
{
    return s->model && !s->guard.released;
}

/*
 * BAR 0: idxd reads the capability registers with readq; any size goes. A
 * command can call out: its completion interrupt.
 */
DMALAB_DEFINE_MMIO_OPS(dmalab_dsa_regs_ops, DmalabDsaState, dmalab_dsa_running,
                       dmalab_dsa_mmio_read, dmalab_dsa_mmio_write);

/*
 * BAR 2's portals. A MOVDIR64B arrives as eight 8-byte writes, ascending,
 * under one hold of the BQL (qemu/patches/0007); any other shape is not a
 * descriptor. The last can call out: with sync-start, an idle engine's first
 * step runs in it.
 */
DMALAB_DEFINE_MMIO_OPS(dmalab_dsa_portal_ops, DmalabDsaState,
                       dmalab_dsa_running, dmalab_dsa_portal_read,
                       dmalab_dsa_portal_write);

static void dmalab_dsa_fire(void *model, unsigned id)
{
    dmalab_dsa_timer(model, id);
}

/*
 * An engine's DMA and messages may land on this device's own BARs: QEMU's
 * re-entrancy guard, engaged as for MMIO, refuses them, and the model
 * reports the failed access (a hardware error status, SWERR).
 */
static void dmalab_dsa_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabDsaState *s = t->dev;

    dmalab_guard_timer(&s->guard, DEVICE(s), dmalab_dsa_fire, s->model,
                       t->id);
}

static void dmalab_dsa_sync_bus_master(DmalabDsaState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (s->model) {
        dmalab_dsa_set_bus_master(
            s->model,
            pci_get_word(pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER);
    }
}

static void dmalab_dsa_pci_config_write(PCIDevice *pdev, uint32_t addr,
                                        uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    if (ranges_overlap(addr, len, PCI_COMMAND, 2)) {
        dmalab_dsa_sync_bus_master(DMALAB_DSA(pdev));
    }
}

/*
 * BAR 0: the model's registers and tables, with the MSI-X table and PBA
 * above them; BAR 2: the portals. Fails only where msix_init does.
 */
static bool dmalab_dsa_bars_init(DmalabDsaState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned i;

    memory_region_init(&s->bar0, OBJECT(s), "dmalab-dsa-bar0",
                       DMALAB_DSA_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_dsa_regs_ops, s,
                          "dmalab-dsa-regs", DMALAB_DSA_BAR0_SIZE);
    memory_region_add_subregion_overlap(&s->bar0, 0, &s->regs, -1);
    pci_register_bar(pdev, DMALAB_DSA_BAR_REGS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->bar0);
    memory_region_init_io(&s->portals, OBJECT(s), &dmalab_dsa_portal_ops, s,
                          "dmalab-dsa-portals",
                          dmalab_dsa_portals_size(&s->cfg));
    pci_register_bar(pdev, DMALAB_DSA_BAR_PORTALS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                         PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->portals);
    if (msix_init(pdev, s->cfg.msix_vectors, &s->bar0, DMALAB_DSA_BAR_REGS,
                  DMALAB_DSA_MSIX_TABLE, &s->bar0, DMALAB_DSA_BAR_REGS,
                  DMALAB_DSA_MSIX_PBA, DMALAB_DSA_CAP_MSIX, errp)) {
        return false;
    }
    for (i = 0; i < s->cfg.msix_vectors; i++) {
        msix_vector_use(pdev, i);
    }
    return true;
}

static void dmalab_dsa_realize(PCIDevice *pdev, Error **errp)
{
    DmalabDsaState *s = DMALAB_DSA(pdev);
    DmalabHost host;
    const char *why;

    if (!pci_bus_is_express(pci_get_bus(pdev))) {
        error_setg(errp, "dmalab-dsa is a PCI Express function and needs a PCI "
                   "Express bus (-M q35)");
        return;
    }
    why = dmalab_dsa_check(&s->cfg);
    if (why) {
        error_setg(errp, "dmalab-dsa: %s", why);
        return;
    }
    if (pcie_endpoint_cap_init(pdev, DMALAB_DSA_CAP_EXP) < 0) {
        error_setg(errp, "dmalab-dsa: cannot add the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pdev);
    if (!dmalab_dsa_bars_init(s, errp)) {
        goto err_pcie;
    }
    dmalab_timers_init(&s->timers, dmalab_dsa_timer_count(&s->cfg),
                       dmalab_dsa_timer_cb, s);
    dmalab_glue_host(&host, &dmalab_dsa_host_fns, s, &s->timers);
    s->model = dmalab_dsa_new(&s->cfg, &host, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-dsa: %s", why ? why : "cannot create the model");
        dmalab_timers_free(&s->timers);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        goto err_pcie;
    }
    s->guard.released = false;
    if (!dmalab_plan_realize(&s->plan, errp)) {
        goto err_model;
    }
    if (s->race_table) {
        s->race_map = dmalab_glue_map_race_table(TYPE_DMALAB_DSA,
                                                 s->race_table, errp);
        if (!s->race_map) {
            goto err_model;
        }
        dmalab_dsa_set_race_table(s->model, s->race_map, 0);
    }
    dmalab_glue_add_counters(OBJECT(s), dmalab_dsa_read_counters);
    return;

err_model:
    dmalab_dsa_release(s);
    msix_uninit(pdev, &s->bar0, &s->bar0);
err_pcie:
    pcie_cap_exit(pdev);
}

static void dmalab_dsa_exit(PCIDevice *pdev)
{
    DmalabDsaState *s = DMALAB_DSA(pdev);

    msix_uninit(pdev, &s->bar0, &s->bar0);
    pcie_cap_exit(pdev);
    dmalab_guard_unrealize(&s->guard, OBJECT(s), &s->timers,
                           dmalab_dsa_stop_obj);
}

static void dmalab_dsa_reset_hold(Object *obj, ResetType type)
{
    DmalabDsaState *s = DMALAB_DSA(obj);

    /*
     * Whatever was in flight is gone, and Bus Master Enable is off, as the
     * command register is after a reset (PCI core clears it after this phase).
     */
    if (s->model) {
        dmalab_dsa_reset(s->model);
    }
    trace_dmalab_dsa_reset();
}

/* Migration: the model's state as one buffer (glue.c carries it). */

static uint8_t *dmalab_dsa_state_save(void *dev, uint32_t *len)
{
    return dmalab_dsa_save(DMALAB_DSA(dev)->model, len);
}

static bool dmalab_dsa_state_load(void *dev, const uint8_t *blob, uint32_t len)
{
    return dmalab_dsa_load(DMALAB_DSA(dev)->model, blob, len);
}

static const DmalabStateOps dmalab_dsa_state_ops = {
    .save = dmalab_dsa_state_save,
    .load = dmalab_dsa_state_load,
};

static const VMStateDescription vmstate_dmalab_dsa = {
    .name = TYPE_DMALAB_DSA,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields =
        (const VMStateField[]){
            VMSTATE_PCI_DEVICE(parent_obj, DmalabDsaState),
            VMSTATE_MSIX(parent_obj, DmalabDsaState),
            VMSTATE_DMALAB_STATE(state, DmalabDsaState),
            VMSTATE_END_OF_LIST(),
        },
};

static void dmalab_dsa_init(Object *obj)
{
    DmalabDsaState *s = DMALAB_DSA(obj);

    /* What no property sets; the static properties have these defaults. */
    dmalab_dsa_default_config(&s->cfg);
    dmalab_plan_init(obj, &s->plan, &dmalab_dsa_plan_ops);
    s->state.dev = obj;
    s->state.ops = &dmalab_dsa_state_ops;
    s->guard.release = dmalab_dsa_release_obj;
}

static void dmalab_dsa_finalize(Object *obj)
{
    dmalab_plan_finalize(&DMALAB_DSA(obj)->plan);
}

/* The model's configuration: defaults from dmalab_dsa_default_config(). */
#define DMALAB_DSA_PROP(_name, _field, _prop, _type) \
    DEFINE_PROP_UNSIGNED_NODEFAULT(_name, DmalabDsaState, cfg._field, _prop, _type)

static const Property dmalab_dsa_properties[] = {
    DMALAB_DSA_PROP("wqs", wqs, qdev_prop_uint32, uint32_t),
    DMALAB_DSA_PROP("engines", engines, qdev_prop_uint32, uint32_t),
    DMALAB_DSA_PROP("groups", groups, qdev_prop_uint32, uint32_t),
    DMALAB_DSA_PROP("total-wq-size", total_wq_size, qdev_prop_uint32, uint32_t),
    DMALAB_DSA_PROP("msix-vectors", msix_vectors, qdev_prop_uint32, uint32_t),
    DMALAB_DSA_PROP("max-xfer-shift", max_xfer_shift, qdev_prop_uint8, uint8_t),
    DMALAB_DSA_PROP("max-batch-shift", max_batch_shift, qdev_prop_uint8,
                    uint8_t),
    DMALAB_DSA_PROP("read-buffers", read_buffers, qdev_prop_uint8, uint8_t),
    DEFINE_PROP("int-handles", DmalabDsaState, cfg.int_handles, qdev_prop_bool,
                bool),
    DMALAB_DSA_PROP("opcap", opcap, qdev_prop_uint64, uint64_t),
    DMALAB_DSA_PROP("command-ns", command_ns, qdev_prop_uint64, uint64_t),
    DMALAB_DSA_PROP("command-jitter-ns", command_jitter_ns, qdev_prop_uint64,
                    uint64_t),
    DMALAB_DSA_PROP("seed", seed, qdev_prop_uint64, uint64_t),
    DMALAB_DSA_PROP("bandwidth", bandwidth, qdev_prop_size, uint64_t),
    DMALAB_DSA_PROP("latency-ns", latency_ns, qdev_prop_uint64, uint64_t),
    DMALAB_DSA_PROP("jitter-ns", jitter_ns, qdev_prop_uint64, uint64_t),
    DMALAB_DSA_PROP("step-bytes", step_bytes, qdev_prop_size, uint64_t),
    DMALAB_DSA_PROP("step-descriptors", step_descriptors, qdev_prop_uint32,
                    uint32_t),
    DMALAB_DSA_PROP("step-gap-ns", step_gap_ns, qdev_prop_uint64, uint64_t),
    DEFINE_PROP("sync-start", DmalabDsaState, cfg.sync_start, qdev_prop_bool,
                bool),
    DEFINE_PROP("fault-doorbell", DmalabDsaState, cfg.fault_doorbell,
                qdev_prop_bool, bool),
    DEFINE_PROP_STRING("race-table", DmalabDsaState, race_table),
};

static const DmalabPropDoc dmalab_dsa_property_docs[] = {
    { "wqs", "work queues, 1 to 64 (WQCAP.NUM_WQS); BAR 2 holds 16 KiB of "
      "portals each" },
    { "engines", "engines, 1 to 64 (ENGCAP)" },
    { "groups", "groups, 1 to 64 (GRPCAP)" },
    { "total-wq-size", "descriptor slots the WQs share (WQCAP.TOTAL_WQ_SIZE)" },
    { "msix-vectors", "MSI-X table size, 2 to wqs + 1: vector 0 for the "
      "device, one per WQ" },
    { "max-xfer-shift", "GENCAP: log2 of the largest transfer, 1 to 31" },
    { "max-batch-shift", "GENCAP: log2 of the largest batch, 1 to 15" },
    { "read-buffers", "GRPCAP.TOTAL_RDBUFS" },
    { "int-handles", "offer Request/Release Interrupt Handle (CMDCAP bits 13 "
      "and 14)" },
    { "opcap", "OPCAP[0]: the operations offered (every DSA 1.0 one)" },
    { "command-ns", "modelled ns a command stays ACTIVE in CMDSTS" },
    { "command-jitter-ns", "plus a uniform [0, command-jitter-ns], from seed" },
    { "seed", "seed of the commands' and engines' jitter" },
    { "bandwidth", "bytes per second an engine moves over every range a "
      "descriptor touches (0: unlimited)" },
    { "latency-ns", "modelled ns added to every descriptor's completion" },
    { "jitter-ns", "plus a uniform [0, jitter-ns] per descriptor, from seed" },
    { "step-bytes", "bytes an engine moves in one step at most" },
    { "step-descriptors", "descriptors an engine starts in one step at most" },
    { "step-gap-ns", "modelled ns between a busy engine's steps" },
    { "sync-start", "an idle engine's first step runs inside the portal "
      "write that gives it work, not from its timer" },
    { "fault-doorbell", "map the test-only fault doorbell at BAR 0 + 0x2000 "
      "(docs/faults.rst)" },
    { "race-table", "file shared with the DMA race detector's plugin "
      "(docs/race-detector.rst)" },
};

static void dmalab_dsa_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    DmalabDsaConfig defaults;

    k->realize = dmalab_dsa_realize;
    k->exit = dmalab_dsa_exit;
    k->config_write = dmalab_dsa_pci_config_write;
    k->vendor_id = DMALAB_DSA_VENDOR_INTEL;
    k->device_id = DMALAB_DSA_DEVICE_SPR;
    k->class_id = DMALAB_DSA_CLASS_CODE >> 8;
    dmalab_glue_class_init(klass,
                           "dmalab Intel Data Streaming Accelerator (DSA 1.0)",
                           &vmstate_dmalab_dsa, dmalab_dsa_reset_hold);
    device_class_set_props(DEVICE_CLASS(klass), dmalab_dsa_properties);
    dmalab_glue_describe(klass, dmalab_dsa_property_docs,
                         ARRAY_SIZE(dmalab_dsa_property_docs));
    dmalab_dsa_default_config(&defaults);
    dmalab_glue_props_defaults(klass, dmalab_dsa_properties,
                               ARRAY_SIZE(dmalab_dsa_properties),
                               offsetof(DmalabDsaState, cfg), &defaults,
                               sizeof(defaults));
}
