/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: QEMU glue for the dmalab VT-d DMA-remapping model.
 *
 * Everything the unit does lives in the C++ model (iommu/); the glue only
 * connects it to QEMU: the register window at the q35 DMAR address, one IOMMU
 * memory region per PCI device whose translate calls the model, the interrupt
 * window that keeps MSIs working behind the unit, virtual-clock timers, the
 * ACPI DMAR table, properties, counters, migration and trace points. This
 * file has the device; vtd-host.c what the unit reaches in QEMU and the
 * address spaces.
 *
 * Locking: translate may be called without the BQL (devices with iothreads),
 * so every call into the model is serialised by DmalabVtdState.lock. Nothing
 * called with the lock held reaches MMIO or another device: the model reads
 * its tables, queue and wait status from RAM only (dmalab_vtd_ram_range),
 * and the event messages it raises are queued and sent to the APIC after
 * the lock is dropped (dmalab_vtd_unlock), or from a bottom half when the
 * caller does not hold the BQL. The model raises only messages aimed at the
 * interrupt range and refuses the rest (its "events-refused" counter).
 */

#include "qemu/osdep.h"
#include "exec/address-spaces.h"
#include "hw/acpi/aml-build.h"
#include "hw/i386/x86-iommu.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_host.h"
#include "hw/qdev-properties.h"
#include "hw/sysbus.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "trace.h"

#include "dmalab/vtd_core.h"
#include "dmalab-vtd.h"
#include "glue.h"
#include "vtd-internal.h"

/* Registers. */

static uint64_t dmalab_vtd_read(void *opaque, hwaddr addr, unsigned size)
{
    DmalabVtdState *s = opaque;
    uint64_t value;

    qemu_mutex_lock(&s->lock);
    value = dmalab_vtd_mmio_read(s->model, addr, size);
    dmalab_vtd_unlock(s);
    trace_dmalab_vtd_mmio_read(addr, size, value);
    return value;
}

static void dmalab_vtd_write(void *opaque, hwaddr addr, uint64_t value,
                             unsigned size)
{
    DmalabVtdState *s = opaque;

    trace_dmalab_vtd_mmio_write(addr, size, value);
    qemu_mutex_lock(&s->lock);
    dmalab_vtd_mmio_write(s->model, addr, value, size);
    dmalab_vtd_unlock(s);
    dmalab_vtd_switch(s);
}

static const MemoryRegionOps dmalab_vtd_ops = {
    .read = dmalab_vtd_read,
    .write = dmalab_vtd_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* The model checks sizes and alignment and reports what it refuses. */
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

static void dmalab_vtd_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabVtdState *s = t->dev;

    qemu_mutex_lock(&s->lock);
    dmalab_vtd_timer(s->model, t->id);
    dmalab_vtd_unlock(s);
    dmalab_vtd_switch(s);
}

/* ACPI: a DMAR table with one unit that covers every PCI device (VT-d 8.1). */

static void dmalab_vtd_build_acpi(X86IOMMUState *iommu, GArray *table_data,
                                  BIOSLinker *linker, const char *oem_id,
                                  const char *oem_table_id)
{
    DmalabVtdState *s = DMALAB_VTD(iommu);
    AcpiTable table = { .sig = "DMAR", .rev = 1, .oem_id = oem_id,
                        .oem_table_id = oem_table_id };
    static const uint8_t reserved[10];

    acpi_table_begin(&table, table_data);
    build_append_int_noprefix(table_data, s->cfg.aw_bits - 1, 1); /* HAW */
    build_append_int_noprefix(table_data, 0, 1); /* no interrupt remapping */
    g_array_append_vals(table_data, reserved, sizeof(reserved));
    /* DRHD: type 0, 16 bytes, INCLUDE_PCI_ALL, segment 0, register base */
    build_append_int_noprefix(table_data, 0, 2);
    build_append_int_noprefix(table_data, 16, 2);
    build_append_int_noprefix(table_data, 1, 1);
    build_append_int_noprefix(table_data, 0, 1);
    build_append_int_noprefix(table_data, 0, 2);
    build_append_int_noprefix(table_data, DMALAB_VTD_BASE, 8);
    acpi_table_end(linker, &table);
}

/* Counters and run-time properties. */

static void dmalab_vtd_get_counter(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    uint64_t value = 0;

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        value = dmalab_vtd_counter(s->model, (uintptr_t)opaque);
        dmalab_vtd_unlock(s);
    }
    visit_type_uint64(v, name, &value, errp);
}

static void dmalab_vtd_get_cost(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);

    visit_type_uint64(v, name, field, errp);
}

static void dmalab_vtd_set_cost(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);
    uint64_t value, old;
    const char *why = NULL;

    if (!visit_type_uint64(v, name, &value, errp)) {
        return;
    }
    old = *field;
    *field = value;
    if (s->model) {
        qemu_mutex_lock(&s->lock);
        why = dmalab_vtd_set_costs(s->model, s->cfg.inv_desc_ns,
                                   s->cfg.inv_page_ns, s->cfg.wait_ns,
                                   s->cfg.iec_inv_ns);
        dmalab_vtd_unlock(s);
    }
    if (why) {
        *field = old;
        error_setg(errp, "dmalab-vtd: %s", why);
    }
}

static bool dmalab_vtd_prop_get_audit(Object *obj, Error **errp)
{
    return DMALAB_VTD(obj)->cfg.audit;
}

static void dmalab_vtd_prop_set_audit(Object *obj, bool value, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    s->cfg.audit = value;
    if (s->model) {
        qemu_mutex_lock(&s->lock);
        dmalab_vtd_set_audit(s->model, value);
        dmalab_vtd_unlock(s);
    }
}

/* The IOTLB's replacement policy, a QOM enum fixed at realize. */

static const QEnumLookup dmalab_vtd_replacement_lookup = {
    .array = (const char *const[]) {
        [DMALAB_VTD_LRU] = "lru",
        [DMALAB_VTD_FIFO] = "fifo",
        [DMALAB_VTD_RANDOM] = "random",
    },
    .size = 3,
};

static int dmalab_vtd_get_replacement(Object *obj, Error **errp)
{
    return DMALAB_VTD(obj)->cfg.replacement;
}

static void dmalab_vtd_set_replacement(Object *obj, int value, Error **errp)
{
    if (DEVICE(obj)->realized) {
        error_setg(errp, "dmalab-vtd: replacement is fixed once the unit "
                   "runs");
        return;
    }
    DMALAB_VTD(obj)->cfg.replacement = value;
}

/* Fault plans: a file named at start-up, replaceable at run time (qom-set). */

static bool dmalab_vtd_apply_plan(DmalabVtdState *s, const char *path,
                                  Error **errp)
{
    g_autofree char *text = NULL;
    char *why;

    if (!dmalab_glue_read_plan("dmalab-vtd", path, &text, errp)) {
        return false;
    }
    qemu_mutex_lock(&s->lock);
    why = dmalab_vtd_set_fault_plan(s->model, text, DEVICE(s)->id);
    dmalab_vtd_unlock(s);
    if (why) {
        error_setg(errp, "dmalab-vtd: fault plan %s: %s", path, why);
        free(why);
        return false;
    }
    trace_dmalab_vtd_fault_plan(path ? path : "");
    return true;
}

static char *dmalab_vtd_get_plan(Object *obj, Error **errp)
{
    return g_strdup(DMALAB_VTD(obj)->fault_plan ?: "");
}

static void dmalab_vtd_set_plan(Object *obj, const char *value, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    /* Before realize the plan is read there; after, it replaces the old. */
    if (s->model && !dmalab_vtd_apply_plan(s, value, errp)) {
        return;
    }
    g_free(s->fault_plan);
    s->fault_plan = g_strdup(value);
}

static void dmalab_vtd_get_injected(Object *obj, Visitor *v, const char *name,
                                    void *opaque, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    uint64_t value = 0;

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        value = dmalab_vtd_faults_injected(s->model);
        dmalab_vtd_unlock(s);
    }
    visit_type_uint64(v, name, &value, errp);
}

/* The counters' names, comma-separated, so tools need not keep a copy. */
static char *dmalab_vtd_get_counter_names(Object *obj, Error **errp)
{
    GString *names = g_string_new(NULL);
    unsigned i;

    for (i = 0; i < dmalab_vtd_counter_count(); i++) {
        g_string_append_printf(names, "%s%s", i ? "," : "",
                               dmalab_vtd_counter_name(i));
    }
    return g_string_free(names, false);
}

static void dmalab_vtd_get_events_dropped(Object *obj, Visitor *v,
                                          const char *name, void *opaque,
                                          Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    uint64_t value = 0;

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        value = s->msis_dropped;
        qemu_mutex_unlock(&s->lock);
    }
    visit_type_uint64(v, name, &value, errp);
}

static char *dmalab_vtd_get_fault_log(Object *obj, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    char *log = NULL;

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        log = dmalab_vtd_fault_log(s->model);
        dmalab_vtd_unlock(s);
    }
    return dmalab_glue_take_string(log);
}

/* Life cycle. */

/*
 * What realize set up before the unit was connected to the machine: the
 * model, its timers and the bottom half. A realize that fails gives
 * them back here; so does unrealize, which also takes the register window
 * away. (The unit cannot be unplugged: the PCI bus keeps its address spaces.)
 */
static void dmalab_vtd_release(DmalabVtdState *s)
{
    dmalab_timers_free(&s->timers);
    if (s->msi_bh) {
        qemu_bh_delete(s->msi_bh);
        s->msi_bh = NULL;
    }
    if (s->model) {
        dmalab_vtd_free(s->model);
        s->model = NULL;
    }
}

static void dmalab_vtd_unrealize(DeviceState *dev)
{
    DmalabVtdState *s = DMALAB_VTD(dev);

    if (s->spaces) {
        memory_region_del_subregion(get_system_memory(), &s->regs);
    }
    dmalab_vtd_release(s);
}

static void dmalab_vtd_realize(DeviceState *dev, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    X86IOMMUState *x86 = X86_IOMMU_DEVICE(dev);
    Object *host = object_resolve_path_type("", "q35-pcihost", NULL);
    PCIBus *bus;
    DmalabVtdConfig cfg;
    DmalabHost h;
    const char *why;

    if (!host) {
        error_setg(errp, "dmalab-vtd needs the q35 machine (-M q35)");
        return;
    }
    if (x86->intr_supported == ON_OFF_AUTO_ON) {
        error_setg(errp, "dmalab-vtd does not remap interrupts: use "
                   "intremap=off");
        return;
    }
    if (x86->dt_supported) {
        error_setg(errp, "dmalab-vtd has no device-TLB support: use "
                   "device-iotlb=off");
        return;
    }
    cfg = s->cfg;
    cfg.pt = x86->pt_supported;
    why = dmalab_vtd_check(&cfg);
    if (why) {
        error_setg(errp, "dmalab-vtd: %s", why);
        return;
    }

    s->msi_bh = qemu_bh_new_guarded(dmalab_vtd_send_pending, s,
                                    &dev->mem_reentrancy_guard);
    dmalab_timers_init(&s->timers, dmalab_vtd_timer_count(),
                       dmalab_vtd_timer_cb, s);
    dmalab_vtd_host(s, &h);
    s->model = dmalab_vtd_new(&cfg, &h, &dmalab_vtd_trace, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-vtd: %s", why ? why : "out of memory");
        dmalab_vtd_release(s);
        return;
    }
    if (s->fault_plan && *s->fault_plan &&
        !dmalab_vtd_apply_plan(s, s->fault_plan, errp)) {
        dmalab_vtd_release(s);
        return;
    }

    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_vtd_ops, s,
                          "dmalab-vtd", DMALAB_VTD_REG_SIZE);
    memory_region_add_subregion(get_system_memory(), DMALAB_VTD_BASE,
                                &s->regs);
    bus = PCI_HOST_BRIDGE(host)->bus;
    dmalab_vtd_attach(s, bus);
}

static void dmalab_vtd_reset_hold(Object *obj, ResetType type)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    if (s->model) {
        qemu_mutex_lock(&s->lock);
        dmalab_vtd_reset(s->model);
        dmalab_vtd_unlock(s);
        dmalab_vtd_switch(s);
    }
}

static int dmalab_vtd_pre_save(void *opaque)
{
    DmalabVtdState *s = opaque;

    g_free(s->state_blob);
    qemu_mutex_lock(&s->lock);
    s->state_blob = dmalab_vtd_save(s->model, &s->state_len);
    dmalab_vtd_unlock(s);
    return s->state_blob ? 0 : -ENOMEM;
}

static int dmalab_vtd_pre_load(void *opaque)
{
    DmalabVtdState *s = opaque;

    g_free(s->state_blob);
    s->state_blob = NULL;
    s->state_len = 0;
    return 0;
}

static int dmalab_vtd_post_load(void *opaque, int version_id)
{
    DmalabVtdState *s = opaque;
    bool ok;

    qemu_mutex_lock(&s->lock);
    ok = dmalab_vtd_load(s->model, s->state_blob, s->state_len);
    dmalab_vtd_unlock(s);
    g_free(s->state_blob);
    s->state_blob = NULL;
    if (!ok) {
        error_report("dmalab-vtd: the incoming unit state is not valid for "
                     "this configuration");
        return -EINVAL;
    }
    dmalab_vtd_switch(s);
    return 0;
}

static const VMStateDescription vmstate_dmalab_vtd = {
    .name = TYPE_DMALAB_VTD,
    .version_id = 1,
    .minimum_version_id = 1,
    .priority = MIG_PRI_IOMMU,
    .pre_save = dmalab_vtd_pre_save,
    .pre_load = dmalab_vtd_pre_load,
    .post_load = dmalab_vtd_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state_len, DmalabVtdState),
        VMSTATE_VBUFFER_ALLOC_UINT32(state_blob, DmalabVtdState, 0, NULL,
                                     state_len),
        VMSTATE_END_OF_LIST(),
    },
};

static void dmalab_vtd_instance_init(Object *obj)
{
    static const struct {
        const char *name;
        size_t offset;
        const char *desc;
    } costs[] = {
        { "inv-desc-ns", offsetof(DmalabVtdState, cfg.inv_desc_ns),
          "virtual ns per invalidation descriptor or register command" },
        { "inv-page-ns", offsetof(DmalabVtdState, cfg.inv_page_ns),
          "virtual ns per page an IOTLB invalidation covers" },
        { "wait-ns", offsetof(DmalabVtdState, cfg.wait_ns),
          "virtual ns per invalidation wait descriptor" },
    };
    DmalabVtdState *s = DMALAB_VTD(obj);
    unsigned i;

    /* No interrupt remapping: "intremap" defaults to off, and on is refused. */
    X86_IOMMU_DEVICE(obj)->intr_supported = ON_OFF_AUTO_OFF;
    qemu_mutex_init(&s->lock);
    dmalab_vtd_default_config(&s->cfg);
    object_property_add_enum(obj, "replacement", "DmalabVtdReplacement",
                             &dmalab_vtd_replacement_lookup,
                             dmalab_vtd_get_replacement,
                             dmalab_vtd_set_replacement);
    object_property_set_description(obj, "replacement",
                                    "IOTLB replacement policy: lru, fifo "
                                    "or random");
    for (i = 0; i < dmalab_vtd_counter_count(); i++) {
        object_property_add(obj, dmalab_vtd_counter_name(i), "uint64",
                            dmalab_vtd_get_counter, NULL, NULL,
                            (void *)(uintptr_t)i);
    }
    for (i = 0; i < ARRAY_SIZE(costs); i++) {
        ObjectProperty *op;

        op = object_property_add(obj, costs[i].name, "uint64",
                                 dmalab_vtd_get_cost, dmalab_vtd_set_cost,
                                 NULL, (void *)(uintptr_t)costs[i].offset);
        op->description = g_strdup(costs[i].desc);
    }
    object_property_add_bool(obj, "audit", dmalab_vtd_prop_get_audit,
                             dmalab_vtd_prop_set_audit);
    object_property_add_str(obj, "fault-plan", dmalab_vtd_get_plan,
                            dmalab_vtd_set_plan);
    object_property_set_description(
        obj, "fault-plan",
        "JSON file of faults to inject (docs/faults.rst); settable at run time");
    object_property_add(obj, "faults-injected", "uint64",
                        dmalab_vtd_get_injected, NULL, NULL, NULL);
    object_property_add_str(obj, "fault-log", dmalab_vtd_get_fault_log, NULL);
    object_property_add_str(obj, "counter-names",
                            dmalab_vtd_get_counter_names, NULL);
    object_property_set_description(obj, "counter-names",
                                    "the names of the unit's counters");
    object_property_add(obj, "events-dropped", "uint64",
                        dmalab_vtd_get_events_dropped, NULL, NULL, NULL);
    object_property_set_description(
        obj, "events-dropped",
        "event messages not sent: more were raised at once than the glue "
        "queues (not counted in fault-events or inv-events)");
}

static void dmalab_vtd_instance_finalize(Object *obj)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    g_free(s->fault_plan);
    qemu_mutex_destroy(&s->lock);
}

/* The unit's configuration: defaults from dmalab_vtd_default_config(). */
static const Property dmalab_vtd_properties[] = {
    DEFINE_PROP_UNSIGNED_NODEFAULT("aw-bits", DmalabVtdState, cfg.aw_bits,
                                   qdev_prop_uint8, uint8_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("iotlb-entries", DmalabVtdState,
                                   cfg.iotlb_entries, qdev_prop_uint32,
                                   uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("iotlb-ways", DmalabVtdState,
                                   cfg.iotlb_ways, qdev_prop_uint32, uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("context-entries", DmalabVtdState,
                                   cfg.context_entries, qdev_prop_uint32,
                                   uint32_t),
    DEFINE_PROP("qi", DmalabVtdState, cfg.qi, qdev_prop_bool, bool),
    DEFINE_PROP_UNSIGNED_NODEFAULT("queue-step", DmalabVtdState,
                                   cfg.queue_step, qdev_prop_uint32, uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("seed", DmalabVtdState, cfg.seed,
                                   qdev_prop_uint64, uint64_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("walk-read-ns", DmalabVtdState,
                                   cfg.walk_read_ns, qdev_prop_uint64,
                                   uint64_t),
};

static void dmalab_vtd_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    X86IOMMUClass *x86 = X86_IOMMU_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    DmalabVtdConfig defaults;

    x86->realize = dmalab_vtd_realize;
    dc->unrealize = dmalab_vtd_unrealize;
    x86->build_acpi_table = dmalab_vtd_build_acpi;
    rc->phases.hold = dmalab_vtd_reset_hold;
    dc->desc = "dmalab VT-d DMA-remapping unit";
    dc->vmsd = &vmstate_dmalab_vtd;
    dc->hotpluggable = false;
    dc->user_creatable = true;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    device_class_set_props(dc, dmalab_vtd_properties);
    dmalab_vtd_default_config(&defaults);
    dmalab_glue_props_defaults(klass, dmalab_vtd_properties,
                               ARRAY_SIZE(dmalab_vtd_properties),
                               offsetof(DmalabVtdState, cfg), &defaults,
                               sizeof(defaults));
}

static const TypeInfo dmalab_vtd_types[] = {
    {
        .name = TYPE_DMALAB_VTD,
        .parent = TYPE_X86_IOMMU_DEVICE,
        .instance_size = sizeof(DmalabVtdState),
        .instance_init = dmalab_vtd_instance_init,
        .instance_finalize = dmalab_vtd_instance_finalize,
        .class_init = dmalab_vtd_class_init,
    },
    {
        .name = TYPE_DMALAB_VTD_IOMMU_MR,
        .parent = TYPE_IOMMU_MEMORY_REGION,
        .class_init = dmalab_vtd_iommu_mr_class_init,
    },
};

DEFINE_TYPES(dmalab_vtd_types)
