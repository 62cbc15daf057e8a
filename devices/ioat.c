/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: QEMU glue for the dmalab Intel I/OAT (Crystal Beach 3.x) DMA
 * engine model.
 *
 * Everything the device does lives in the C++ model (dmaengine/); the glue
 * only connects it to QEMU: a PCI Express function with BAR0 and its MSI-X
 * table, MSI and INTx, PCI DMA (so an IOMMU in front of the device applies),
 * one virtual-clock timer per channel, properties, counters, migration and
 * trace points. This file has the PCI function, its life cycle and
 * migration; ioat-host.c what the model reaches in QEMU; ioat-props.c the
 * counters, timing and fault plan properties.
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
#include "trace.h"

#include "dmalab/ioat_core.h"
#include "dmalab-vtd.h"
#include "glue.h"
#include "ioat-internal.h"


static void dmalab_ioat_release(DmalabIoatState *s);

/*
 * Around every call into the model that can call back out (DMA, interrupts):
 * those may reach config space or the port above the device and reset or unplug
 * it. The model checks its state after every call out; the reference keeps the
 * object, and the deferred release keeps the model, until the call has
 * returned.
 */
static void dmalab_ioat_enter(DmalabIoatState *s)
{
    object_ref(OBJECT(s));
    s->in_model++;
}

static void dmalab_ioat_leave(DmalabIoatState *s)
{
    s->in_model--;
    if (s->released && !s->in_model) {
        dmalab_ioat_release(s);
    }
    object_unref(OBJECT(s));
}

static uint64_t dmalab_ioat_read(void *opaque, hwaddr addr, unsigned size)
{
    DmalabIoatState *s = opaque;
    uint64_t val = 0;

    if (s->model && !s->released) {
        val = dmalab_ioat_mmio_read(s->model, addr, size);
    }
    trace_dmalab_ioat_mmio_read(addr, size, val);
    return val;
}

static void dmalab_ioat_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    DmalabIoatState *s = opaque;

    trace_dmalab_ioat_mmio_write(addr, size, val);
    if (!s->model || s->released) {
        return;
    }
    /*
     * With sync-start, a doorbell write runs the channel's first step right
     * here.
     */
    dmalab_ioat_enter(s);
    dmalab_ioat_mmio_write(s->model, addr, val, size);
    dmalab_ioat_leave(s);
}

static const MemoryRegionOps dmalab_ioat_ops = {
    .read = dmalab_ioat_read,
    .write = dmalab_ioat_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /*
     * Linux reads CHANSTS with readq; the model handles any size and alignment.
     */
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/*
 * The fault doorbell (docs/faults.rst): test-only registers through which a
 * guest arms and releases a fault plan's rules. A release lets a held
 * descriptor go on, with sync-start inside this write: it can call out.
 */
static uint64_t dmalab_ioat_fault_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    DmalabIoatState *s = opaque;

    if (!s->model || s->released) {
        return 0;
    }
    return dmalab_ioat_doorbell_read(s->model, addr, size);
}

static void dmalab_ioat_fault_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    DmalabIoatState *s = opaque;

    trace_dmalab_ioat_doorbell(addr, size, val);
    if (!s->model || s->released) {
        return;
    }
    dmalab_ioat_enter(s);
    dmalab_ioat_doorbell_write(s->model, addr, val, size);
    dmalab_ioat_leave(s);
}

static const MemoryRegionOps dmalab_ioat_fault_ops = {
    .read = dmalab_ioat_fault_read,
    .write = dmalab_ioat_fault_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

static void dmalab_ioat_release(DmalabIoatState *s)
{
    if (s->race_map) {
        dmalab_ioat_set_race_table(s->model, NULL, 0);
        munmap(s->race_map, sizeof(*s->race_map));
        s->race_map = NULL;
    }

    dmalab_timers_free(&s->timers);
    dmalab_ioat_free(s->model);
    s->model = NULL;
}

static void dmalab_ioat_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabIoatState *s = t->dev;
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    /*
     * The step's DMA and interrupt messages may land on this device's own BAR:
     * QEMU's re-entrancy guard, engaged here as it is for MMIO, refuses that
     * access, and the model reports the failed DMA as a channel error.
     */
    dmalab_ioat_enter(s);
    guard->engaged_in_io = true;
    dmalab_ioat_timer(s->model, t->id);
    guard->engaged_in_io = engaged;
    dmalab_ioat_leave(s);
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
    /* MSI or MSI-X enabled or disabled: the pin follows (or not). */
    dmalab_ioat_update_intx(DMALAB_IOAT(pdev));
}

static void dmalab_ioat_realize(PCIDevice *pdev, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);
    DmalabIoatConfig cfg;
    DmalabHost host;
    const char *why = NULL;
    uint16_t device_id;
    unsigned i;

    if (!pci_bus_is_express(pci_get_bus(pdev))) {
        error_setg(
            errp,
            "dmalab-ioat is a PCI Express function and needs a PCI Express bus "
            "(-M q35): Linux's ioatdma reads CHANERR_INT in extended "
            "configuration "
            "space, which a conventional PCI bus cannot reach");
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
        pcie_cap_exit(pdev);
        return;
    }

    memory_region_init(&s->bar0, OBJECT(s), "dmalab-ioat-bar0",
                       DMALAB_IOAT_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_ioat_ops, s,
                          "dmalab-ioat-regs", DMALAB_IOAT_REG_WINDOW);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(
        pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
        &s->bar0);
    if (msix_init(pdev, s->cfg.channels, &s->bar0, 0, DMALAB_IOAT_MSIX_TABLE,
                  &s->bar0, 0, DMALAB_IOAT_MSIX_PBA, DMALAB_IOAT_CAP_MSIX,
                  errp)) {
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
    for (i = 0; i < s->cfg.channels; i++) {
        msix_vector_use(pdev, i);
    }
    if (s->fault_doorbell) {
        memory_region_init_io(&s->fault_regs, OBJECT(s), &dmalab_ioat_fault_ops,
                              s, "dmalab-ioat-fault-doorbell",
                              DMALAB_IOAT_FAULT_DOORBELL_SIZE);
        memory_region_add_subregion(&s->bar0, DMALAB_IOAT_FAULT_DOORBELL,
                                    &s->fault_regs);
    }

    dmalab_timers_init(&s->timers, dmalab_ioat_timer_count(&cfg),
                       dmalab_ioat_timer_cb, s);
    dmalab_ioat_host(s, &host);
    s->model = dmalab_ioat_new(&cfg, &host, &dmalab_ioat_trace, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-ioat: %s",
                   why ? why : "cannot create the model");
        dmalab_ioat_release(s);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
    s->released = false;
    if ((s->fault_plan && *s->fault_plan &&
         !dmalab_ioat_apply_plan(s, s->fault_plan, errp)) ||
        (s->race_table && !dmalab_ioat_map_race_table(s, errp))) {
        dmalab_ioat_release(s);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
}

static void dmalab_ioat_exit(PCIDevice *pdev)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);

    msix_uninit(pdev, &s->bar0, &s->bar0);
    msi_uninit(pdev);
    pcie_cap_exit(pdev);
    g_free(s->state_blob);
    s->state_blob = NULL;
    if (s->in_model) {
        /*
         * Unplugged by its own DMA: stop the model now, free it when the step
         * returns.
         */
        dmalab_ioat_reset(s->model);
        s->released = true;
        return;
    }
    dmalab_ioat_release(s);
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
    trace_dmalab_ioat_reset();
}

static int dmalab_ioat_pre_save(void *opaque)
{
    DmalabIoatState *s = opaque;

    g_free(s->state_blob);
    s->state_blob = dmalab_ioat_save(s->model, &s->state_len);
    return s->state_blob ? 0 : -ENOMEM;
}

static int dmalab_ioat_pre_load(void *opaque)
{
    DmalabIoatState *s = opaque;

    g_free(s->state_blob);
    s->state_blob = NULL;
    s->state_len = 0;
    return 0;
}

static int dmalab_ioat_post_load(void *opaque, int version_id)
{
    DmalabIoatState *s = opaque;
    bool ok = dmalab_ioat_load(s->model, s->state_blob, s->state_len);

    g_free(s->state_blob);
    s->state_blob = NULL;
    if (!ok) {
        error_report(
            "dmalab-ioat: the incoming device state is not valid for this "
            "configuration");
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_dmalab_ioat = {
    .name = TYPE_DMALAB_IOAT,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dmalab_ioat_pre_save,
    .pre_load = dmalab_ioat_pre_load,
    .post_load = dmalab_ioat_post_load,
    .fields =
        (const VMStateField[]){
            VMSTATE_PCI_DEVICE(parent_obj, DmalabIoatState),
            VMSTATE_MSIX(parent_obj, DmalabIoatState),
            VMSTATE_BOOL(intx_level, DmalabIoatState),
            VMSTATE_UINT32(state_len, DmalabIoatState),
            VMSTATE_VBUFFER_ALLOC_UINT32(state_blob, DmalabIoatState, 0, NULL,
                                         state_len),
            VMSTATE_END_OF_LIST(),
        },
};

/* "<op>-<what>": element `op` of the counter array at offset `array`. */
static void dmalab_ioat_add_op_counter(Object *obj, unsigned op,
                                       const char *what, size_t array)
{
    g_autofree char *name =
        g_strdup_printf("%s-%s", dmalab_ioat_op_name(op), what);

    object_property_add(obj, name, "uint64", dmalab_ioat_get_stat, NULL, NULL,
                        (void *)(uintptr_t)(array + op * sizeof(uint64_t)));
}

static void dmalab_ioat_instance_init(Object *obj)
{
    static const struct {
        const char *name;
        size_t offset;
    } counters[] = {
        { "descriptors", offsetof(DmalabIoatStats, descriptors) },
        { "bytes", offsetof(DmalabIoatStats, bytes) },
        { "errors", offsetof(DmalabIoatStats, errors) },
        { "interrupts", offsetof(DmalabIoatStats, interrupts) },
    };
    static const struct {
        const char *name;
        size_t offset;
        const char *desc;
    } timing[] = {
        { "bandwidth", offsetof(DmalabIoatState, cfg.bandwidth),
          "bytes per second a channel moves (0: unlimited); settable at run "
          "time" },
        { "latency-ns", offsetof(DmalabIoatState, cfg.latency_ns),
          "added to every descriptor's completion time; settable at run time" },
        { "jitter-ns", offsetof(DmalabIoatState, cfg.jitter_ns),
          "uniform random extra completion time, drawn from seed; settable at "
          "run time" },
    };

    /*
     * The whole configuration, for the timing properties below and what no
     * property sets; the static properties have these defaults already.
     */
    dmalab_ioat_default_config(&DMALAB_IOAT(obj)->cfg);
    for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
        object_property_add(obj, counters[i].name, "uint64",
                            dmalab_ioat_get_stat, NULL, NULL,
                            (void *)(uintptr_t)counters[i].offset);
    }
    /* The same by operation: xor-descriptors, xor-bytes, ... */
    for (unsigned op = 0; dmalab_ioat_op_name(op); op++) {
        dmalab_ioat_add_op_counter(obj, op, "descriptors",
                                   offsetof(DmalabIoatStats, op_descriptors));
        dmalab_ioat_add_op_counter(obj, op, "bytes",
                                   offsetof(DmalabIoatStats, op_bytes));
    }
    for (size_t i = 0; i < ARRAY_SIZE(timing); i++) {
        ObjectProperty *op;

        op = object_property_add(obj, timing[i].name, "size",
                                 dmalab_ioat_get_timing,
                                 dmalab_ioat_set_timing_prop, NULL,
                                 (void *)(uintptr_t)timing[i].offset);
        op->description = g_strdup(timing[i].desc);
    }
    object_property_add_str(obj, "fault-plan", dmalab_ioat_get_plan,
                            dmalab_ioat_set_plan);
    object_property_set_description(
        obj, "fault-plan",
        "JSON file of faults to inject (docs/faults.rst); settable at run time");
    object_property_add(obj, "faults-injected", "uint64",
                        dmalab_ioat_get_injected, NULL, NULL, NULL);
    object_property_add_str(obj, "fault-log", dmalab_ioat_get_fault_log, NULL);
}

static void dmalab_ioat_instance_finalize(Object *obj)
{
    g_free(DMALAB_IOAT(obj)->fault_plan);
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
};

static void dmalab_ioat_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    DmalabIoatConfig defaults;

    k->realize = dmalab_ioat_realize;
    k->exit = dmalab_ioat_exit;
    k->config_write = dmalab_ioat_pci_config_write;
    k->vendor_id = DMALAB_IOAT_VENDOR_INTEL;
    k->device_id = DMALAB_IOAT_DEVICE_SKX;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    k->revision = DMALAB_IOAT_REVISION;
    rc->phases.hold = dmalab_ioat_reset_hold;
    dc->desc = "dmalab Intel I/OAT (Crystal Beach 3.x) DMA engine";
    dc->vmsd = &vmstate_dmalab_ioat;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    device_class_set_props(dc, dmalab_ioat_properties);
    object_class_property_set_description(
        klass, "personality",
        "the part it poses as: skx (Xeon Scalable CBDMA, 0x2021, memcpy only "
        "to Linux; the default) or bwd (Atom C2000, 0x0c50, with XOR and PQ)");
    object_class_property_set_description(
        klass, "device-id", "PCI device ID (0: the personality's)");
    dmalab_ioat_default_config(&defaults);
    dmalab_glue_props_defaults(klass, dmalab_ioat_properties,
                               ARRAY_SIZE(dmalab_ioat_properties),
                               offsetof(DmalabIoatState, cfg), &defaults,
                               sizeof(defaults));
}

static const TypeInfo dmalab_ioat_info = {
    .name = TYPE_DMALAB_IOAT,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DmalabIoatState),
    .instance_init = dmalab_ioat_instance_init,
    .instance_finalize = dmalab_ioat_instance_finalize,
    .class_init = dmalab_ioat_class_init,
    .interfaces =
        (InterfaceInfo[]){
            { INTERFACE_PCIE_DEVICE },
            {},
        },
};

static void dmalab_ioat_register_types(void)
{
    type_register_static(&dmalab_ioat_info);
}

type_init(dmalab_ioat_register_types)
