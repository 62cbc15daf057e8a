/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: QEMU glue for the dmalab Intel I/OAT (Crystal Beach 3.x) DMA
 * engine model.
 *
 * Everything the device does lives in the C++ model (ioat/); the glue
 * only connects it to QEMU: a PCI Express function with BAR0 and its MSI-X
 * table, MSI and INTx, PCI DMA (so an IOMMU in front of the device applies),
 * one virtual-clock timer per channel, properties, counters, migration and
 * trace points. This file has the PCI function, its life cycle and
 * migration; ioat-host.c what the model reaches in QEMU; ioat-props.c the
 * counters, timing and fault plan properties.
 */

#include "qemu/osdep.h"
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
#include "qemu/range.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "system/dma.h"
#include "../trace.h"

#include "dmalab/ioat_core.h"
#include "../vtd/dmalab-vtd.h"
#include "../glue.h"
#include "../pci-host.h"
#include "ioat-internal.h"

OBJECT_DEFINE_SIMPLE_TYPE_WITH_INTERFACES(DmalabIoatState, dmalab_ioat,
                                          DMALAB_IOAT, PCI_DEVICE,
                                          { INTERFACE_PCIE_DEVICE }, { NULL })

static void dmalab_ioat_release(DmalabIoatState *s);

/*
 * Calls into the model that can call back out (DMA, interrupts) go through
 * s->guard (pci-host.h): the model checks its state after every call out; the
 * guard keeps the object, and defers the release of the model, until the
 * call has returned.
 */
static void dmalab_ioat_release_obj(Object *obj)
{
    dmalab_ioat_release(DMALAB_IOAT(obj));
}

/* Every step and timer of the model cancelled, as at a reset. */
static void dmalab_ioat_stop_obj(Object *obj)
{
    dmalab_ioat_reset(DMALAB_IOAT(obj)->model);
}

/* A model to call: realized, not unplugged by its own DMA. */
static bool dmalab_ioat_running(DmalabIoatState *s)
{
    return s->model && !s->guard.released;
}

/*
 * BAR 0. Linux reads CHANSTS with readq; the model handles any size and
 * alignment, in the registers and in the fault doorbell. A write can call out
 * (see s->guard): with sync-start a doorbell runs the channel's first step
 * here, and a fault doorbell write can release a held descriptor.
 */
DMALAB_DEFINE_MMIO_OPS(dmalab_ioat_ops, DmalabIoatState, dmalab_ioat_running,
                       dmalab_ioat_mmio_read, dmalab_ioat_mmio_write);

static void dmalab_ioat_release(DmalabIoatState *s)
{
    if (s->race_map) {
        dmalab_ioat_set_race_table(s->model, NULL, 0);
        dmalab_glue_unmap_race_table(s->race_map);
        s->race_map = NULL;
    }

    dmalab_timers_free(&s->timers);
    dmalab_ioat_free(s->model);
    s->model = NULL;
}

static void dmalab_ioat_fire(void *model, unsigned id)
{
    dmalab_ioat_timer(model, id);
}

/*
 * The step's DMA and interrupt messages may land on this device's own BAR:
 * QEMU's re-entrancy guard, engaged as it is for MMIO, refuses that access,
 * and the model reports the failed DMA as a channel error.
 */
static void dmalab_ioat_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabIoatState *s = t->dev;

    dmalab_guard_timer(&s->guard, DEVICE(s), dmalab_ioat_fire, s->model,
                       t->id);
}

/*
 * CHANERR_INT and CHANERRMSK_INT in extended configuration space (Linux's
 * ioatdma writes back what it reads from CHANERR_INT: ioat_reset_hw() and
 * ioat_eh() in drivers/dma/ioat/dma.c): no internal error is modelled, so
 * CHANERR_INT is write-1-to-clear bits that are never set, and the mask is
 * plain read-write storage. PCI config masks do both, and migrate with the
 * rest of configuration space.
 */
static void dmalab_ioat_chanerr_int_init(PCIDevice *pdev)
{
    /* Past the header, QEMU makes configuration space writable by default. */
    pci_set_long(pdev->wmask + DMALAB_IOAT_CFG_CHANERR_INT, 0);
    pci_set_long(pdev->w1cmask + DMALAB_IOAT_CFG_CHANERR_INT, 0xffffffff);
    pci_set_long(pdev->wmask + DMALAB_IOAT_CFG_CHANERRMSK_INT, 0xffffffff);
}

static void dmalab_ioat_pci_config_write(PCIDevice *pdev, uint32_t addr,
                                         uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    if (ranges_overlap(addr, len, DMALAB_IOAT_CAP_ATS + PCI_ATS_CTRL, 2)) {
        dmalab_ioat_ats_sync(DMALAB_IOAT(pdev));
    }
    /* MSI or MSI-X enabled or disabled: the pin follows (or not). */
    dmalab_ioat_update_intx(DMALAB_IOAT(pdev));
}

/*
 * BAR0: the registers, the MSI-X table and PBA, and with fault-doorbell the
 * test-only doorbell. The model's windows are aliases of one region, so that
 * it sees BAR offsets. Fails only where msix_init does.
 */
static bool dmalab_ioat_bar_init(DmalabIoatState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned i;

    memory_region_init(&s->bar0, OBJECT(s), "dmalab-ioat-bar0",
                       DMALAB_IOAT_BAR0_SIZE);
    memory_region_init_io(&s->mmio, OBJECT(s), &dmalab_ioat_ops, s,
                          "dmalab-ioat-mmio", DMALAB_IOAT_BAR0_SIZE);
    memory_region_init_alias(&s->regs, OBJECT(s), "dmalab-ioat-regs",
                             &s->mmio, 0, DMALAB_IOAT_REG_WINDOW);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(
        pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
        &s->bar0);
    if (msix_init(pdev, s->cfg.channels, &s->bar0, 0, DMALAB_IOAT_MSIX_TABLE,
                  &s->bar0, 0, DMALAB_IOAT_MSIX_PBA, DMALAB_IOAT_CAP_MSIX,
                  errp)) {
        return false;
    }
    for (i = 0; i < s->cfg.channels; i++) {
        msix_vector_use(pdev, i);
    }
    if (s->fault_doorbell) {
        memory_region_init_alias(&s->fault_regs, OBJECT(s),
                                 "dmalab-ioat-fault-doorbell", &s->mmio,
                                 DMALAB_IOAT_FAULT_DOORBELL,
                                 DMALAB_IOAT_FAULT_DOORBELL_SIZE);
        memory_region_add_subregion(&s->bar0, DMALAB_IOAT_FAULT_DOORBELL,
                                    &s->fault_regs);
    }
    return true;
}

static void dmalab_ioat_read_counters(Object *obj, DmalabCounterSink *sink);

static void dmalab_ioat_realize(PCIDevice *pdev, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);
    DmalabIoatConfig cfg;
    DmalabHost host;
    const char *why = NULL;
    uint16_t device_id;

    if (!pci_bus_is_express(pci_get_bus(pdev))) {
        error_setg(
            errp,
            "dmalab-ioat is a PCI Express function and needs a PCI Express bus "
            "(-M q35): Linux's ioatdma reads CHANERR_INT in extended "
            "configuration space, which a conventional PCI bus cannot reach");
        return;
    }

    cfg = s->cfg;
    why = dmalab_ioat_personality(s->personality, &cfg, &device_id);
    if (!why) {
        why = dmalab_ioat_check(&cfg);
    }
    if (why) {
        error_setg(errp, "dmalab-ioat: %s", why);
        return;
    }
    dmalab_ioat_warn_timing(&cfg);

    pci_config_set_device_id(pdev->config,
                             s->device_id ? s->device_id : device_id);
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (pcie_endpoint_cap_init(pdev, DMALAB_IOAT_CAP_EXP) < 0) {
        error_setg(errp, "dmalab-ioat: cannot add the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pdev);
    dmalab_ioat_chanerr_int_init(pdev);
    if (msi_init(pdev, DMALAB_IOAT_CAP_MSI, 1, true, false, errp) < 0) {
        goto err_pcie;
    }
    if (!dmalab_ioat_bar_init(s, errp)) {
        goto err_msi;
    }

    dmalab_timers_init(&s->timers, dmalab_ioat_timer_count(&cfg),
                       dmalab_ioat_timer_cb, s);
    dmalab_glue_host(&host, &dmalab_ioat_host_fns, s, &s->timers);
    s->model = dmalab_ioat_new(&cfg, &host, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-ioat: %s",
                   why ? why : "cannot create the model");
        goto err_model;
    }
    s->guard.released = false;
    dmalab_ioat_ats_realize(s);
    if (!dmalab_plan_realize(&s->plan, errp) ||
        (s->race_table && !dmalab_ioat_map_race_table(s, errp))) {
        goto err_model;
    }
    dmalab_glue_add_counters(OBJECT(s), dmalab_ioat_read_counters);
    return;

err_model:
    dmalab_ioat_ats_unrealize(s);
    dmalab_ioat_release(s);
    msix_uninit(pdev, &s->bar0, &s->bar0);
err_msi:
    msi_uninit(pdev);
err_pcie:
    pcie_cap_exit(pdev);
}

static void dmalab_ioat_exit(PCIDevice *pdev)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);

    dmalab_ioat_ats_unrealize(s);
    msix_uninit(pdev, &s->bar0, &s->bar0);
    msi_uninit(pdev);
    pcie_cap_exit(pdev);
    dmalab_guard_unrealize(&s->guard, OBJECT(s), &s->timers,
                           dmalab_ioat_stop_obj);
}

static void dmalab_ioat_reset_hold(Object *obj, ResetType type)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    /*
     * Cancels every pending step: the device is as new, whatever was in
     * progress.
     */
    if (s->model) {
        dmalab_ioat_reset(s->model);
    }
    s->intx_level = false;
    pci_set_long(PCI_DEVICE(s)->config + DMALAB_IOAT_CFG_CHANERR_INT, 0);
    pci_set_long(PCI_DEVICE(s)->config + DMALAB_IOAT_CFG_CHANERRMSK_INT, 0);
    dmalab_ioat_ats_reset(s);
    trace_dmalab_ioat_reset();
}

/* Migration: the model's state as one buffer (glue.c carries it). */

static uint8_t *dmalab_ioat_state_save(void *dev, uint32_t *len)
{
    return dmalab_ioat_save(DMALAB_IOAT(dev)->model, len);
}

static bool dmalab_ioat_state_load(void *dev, const uint8_t *blob,
                                   uint32_t len)
{
    DmalabIoatState *s = DMALAB_IOAT(dev);

    if (!dmalab_ioat_load(s->model, blob, len)) {
        return false;
    }
    dmalab_ioat_ats_sync(s); /* configuration space came first */
    return true;
}

static const DmalabStateOps dmalab_ioat_state_ops = {
    .save = dmalab_ioat_state_save,
    .load = dmalab_ioat_state_load,
};

static const VMStateDescription vmstate_dmalab_ioat = {
    .name = TYPE_DMALAB_IOAT,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields =
        (const VMStateField[]){
            VMSTATE_PCI_DEVICE(parent_obj, DmalabIoatState),
            VMSTATE_MSIX(parent_obj, DmalabIoatState),
            VMSTATE_BOOL(intx_level, DmalabIoatState),
            VMSTATE_DMALAB_STATE(state, DmalabIoatState),
            VMSTATE_END_OF_LIST(),
        },
};

/* The counters of all channels together, and run-time settable timing. */
static const DmalabDynProp dmalab_ioat_counters[] = {
    { "descriptors", offsetof(DmalabIoatStats, descriptors),
      "descriptors completed, null ones included" },
    { "bytes", offsetof(DmalabIoatStats, bytes),
      "bytes moved by completed descriptors" },
    { "errors", offsetof(DmalabIoatStats, errors),
      "times a channel halted on an error" },
    { "interrupts", offsetof(DmalabIoatStats, interrupts),
      "MSI-X or MSI messages delivered, and INTx assertions" },
};

static const DmalabDynProp dmalab_ioat_timing[] = {
    { "bandwidth", offsetof(DmalabIoatState, cfg.bandwidth),
      "bytes per second a channel moves (0: unlimited); settable at run "
      "time" },
    { "latency-ns", offsetof(DmalabIoatState, cfg.latency_ns),
      "modelled ns added to every descriptor's completion time; settable "
      "at run time" },
    { "jitter-ns", offsetof(DmalabIoatState, cfg.jitter_ns),
      "plus a uniform [0, jitter-ns] modelled ns per descriptor, drawn "
      "from seed; settable at run time" },
};

/* "counters": the table's, each operation's, the device-TLB's, the plan's. */
static void dmalab_ioat_read_counters(Object *obj, DmalabCounterSink *sink)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    DmalabIoatStats st = { 0 };

    if (s->model) {
        dmalab_ioat_stats(s->model, -1, &st);
    }
    dmalab_counters_table(sink, &st, dmalab_ioat_counters,
                          ARRAY_SIZE(dmalab_ioat_counters));
    for (unsigned k = 0; dmalab_ioat_op_name(k); k++) {
        g_autofree char *d = g_strdup_printf("%s-descriptors",
                                             dmalab_ioat_op_name(k));
        g_autofree char *b = g_strdup_printf("%s-bytes",
                                             dmalab_ioat_op_name(k));

        dmalab_counter(sink, d, st.op_descriptors[k]);
        dmalab_counter(sink, b, st.op_bytes[k]);
    }
    dmalab_ioat_ats_counters(s, sink);
    dmalab_plan_counters(&s->plan, sink);
}

static void dmalab_ioat_init(Object *obj)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    /*
     * The whole configuration, for the timing properties below and what no
     * property sets; the static properties have these defaults already.
     */
    dmalab_ioat_default_config(&s->cfg);
    dmalab_glue_add_props(obj, dmalab_ioat_timing,
                          ARRAY_SIZE(dmalab_ioat_timing), "size",
                          dmalab_ioat_get_timing, dmalab_ioat_set_timing_prop);
    dmalab_plan_init(obj, &s->plan, &dmalab_ioat_plan_ops);
    s->state.dev = obj;
    s->state.ops = &dmalab_ioat_state_ops;
    s->guard.release = dmalab_ioat_release_obj;
}

static void dmalab_ioat_finalize(Object *obj)
{
    dmalab_plan_finalize(&DMALAB_IOAT(obj)->plan);
}

/* The model's configuration: defaults from dmalab_ioat_default_config(). */
static const Property dmalab_ioat_properties[] = {
    DEFINE_PROP_UNSIGNED_NODEFAULT("channels", DmalabIoatState, cfg.channels,
                                   qdev_prop_uint32, uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("xfercap", DmalabIoatState,
                                   cfg.xfercap_log, qdev_prop_uint8, uint8_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("cbver", DmalabIoatState, cfg.cbver,
                                   qdev_prop_uint8, uint8_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("step-bytes", DmalabIoatState,
                                   cfg.step_bytes, qdev_prop_size, uint64_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("step-descriptors", DmalabIoatState,
                                   cfg.step_descriptors, qdev_prop_uint32,
                                   uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("step-gap-ns", DmalabIoatState,
                                   cfg.step_gap_ns, qdev_prop_uint64, uint64_t),
    DEFINE_PROP("sync-start", DmalabIoatState, cfg.sync_start, qdev_prop_bool,
                bool),
    DEFINE_PROP_UNSIGNED_NODEFAULT("seed", DmalabIoatState, cfg.seed,
                                   qdev_prop_uint64, uint64_t),
    /* The glue's own. */
    DEFINE_PROP_STRING("personality", DmalabIoatState, personality),
    DEFINE_PROP_UINT16("device-id", DmalabIoatState, device_id, 0),
    DEFINE_PROP_BOOL("fault-doorbell", DmalabIoatState, fault_doorbell, false),
    DEFINE_PROP_STRING("race-table", DmalabIoatState, race_table),
    DEFINE_PROP_BOOL("ats", DmalabIoatState, ats, false),
    DEFINE_PROP_BOOL("ats-audit", DmalabIoatState, ats_audit, false),
};

static const DmalabPropDoc dmalab_ioat_property_docs[] = {
    { "channels", "number of DMA channels, 1 to 16" },
    { "xfercap", "XFERCAP: log2 of the largest transfer of one descriptor" },
    { "cbver", "CBVER: the Crystal Beach version register" },
    { "step-bytes", "bytes a channel moves in one step at most" },
    { "step-descriptors", "descriptors a channel starts in one step at most" },
    { "step-gap-ns", "virtual ns between a channel's steps" },
    { "sync-start", "run a channel's first step inside the register write "
      "that starts it, not from a timer" },
    { "seed", "seed of the completion-time jitter" },
    { "personality", "the part it poses as: skx (Xeon Scalable CBDMA, "
      "0x2021, memcpy only to Linux; the default) or bwd (Atom C2000, "
      "0x0c50, with XOR and PQ)" },
    { "device-id", "PCI device ID (0: the personality's)" },
    { "fault-doorbell", "map the test-only fault doorbell at BAR 0 + 0x2000 "
      "(docs/faults.rst)" },
    { "race-table", "file shared with the DMA race detector's plugin "
      "(docs/race-detector.rst)" },
    { "ats", "the PCIe ATS capability: once Linux enables it, the function "
      "caches translations in a device-TLB of 64 pages (docs/ioat.rst)" },
    { "ats-audit", "check every device-TLB hit with a fresh translation "
      "request; ats-stale counts those the IOMMU would no longer give" },
};

static void dmalab_ioat_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    DmalabIoatConfig defaults;

    k->realize = dmalab_ioat_realize;
    k->exit = dmalab_ioat_exit;
    k->config_write = dmalab_ioat_pci_config_write;
    k->vendor_id = DMALAB_IOAT_VENDOR_INTEL;
    k->device_id = DMALAB_IOAT_DEVICE_SKX;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    k->revision = DMALAB_IOAT_REVISION;
    dmalab_glue_class_init(klass,
                           "dmalab Intel I/OAT (Crystal Beach 3.x) DMA engine",
                           &vmstate_dmalab_ioat, dmalab_ioat_reset_hold);
    device_class_set_props(DEVICE_CLASS(klass), dmalab_ioat_properties);
    dmalab_glue_describe(klass, dmalab_ioat_property_docs,
                         ARRAY_SIZE(dmalab_ioat_property_docs));
    dmalab_ioat_default_config(&defaults);
    dmalab_glue_props_defaults(klass, dmalab_ioat_properties,
                               ARRAY_SIZE(dmalab_ioat_properties),
                               offsetof(DmalabIoatState, cfg), &defaults,
                               sizeof(defaults));
}
