/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: its configuration, counters, run-time costs and fault plans as
 * QOM properties; vtd.c has the device.
 */

#include "qemu/osdep.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qom/object.h"
#include "../trace.h"

#include "dmalab/vtd_core.h"
#include "../glue.h"
#include "vtd-internal.h"

/* Run-time properties. */

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
        DMALAB_VTD_LOCKED(s, why = dmalab_vtd_set_costs(
                                 s->model, s->cfg.inv_desc_ns,
                                 s->cfg.inv_page_ns, s->cfg.wait_ns,
                                 s->cfg.iec_inv_ns));
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
        DMALAB_VTD_LOCKED(s, dmalab_vtd_set_audit(s->model, value));
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

/* The mode the unit offers (ECAP.SMTS), a QOM enum fixed at realize. */

static const QEnumLookup dmalab_vtd_mode_lookup = {
    .array = (const char *const[]) { "legacy", "scalable" },
    .size = 2,
};

static int dmalab_vtd_get_mode(Object *obj, Error **errp)
{
    return DMALAB_VTD(obj)->cfg.sm;
}

static void dmalab_vtd_set_mode(Object *obj, int value, Error **errp)
{
    if (DEVICE(obj)->realized) {
        error_setg(errp, "dmalab-vtd: mode is fixed once the unit runs");
        return;
    }
    DMALAB_VTD(obj)->cfg.sm = value;
}

/* How the unit takes fault plans (glue.c has the properties). */

static bool dmalab_vtd_plan_running(void *dev)
{
    return DMALAB_VTD(dev)->model != NULL;
}

static char *dmalab_vtd_plan_give(void *dev, const char *text)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    char *why;

    DMALAB_VTD_LOCKED(s, why = dmalab_vtd_set_fault_plan(s->model, text,
                                                         DEVICE(s)->id));
    return why;
}

static uint64_t dmalab_vtd_plan_report(void *dev, char **log)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    uint64_t n;

    if (log) {
        DMALAB_VTD_LOCKED(s, *log = dmalab_vtd_fault_log(s->model));
    }
    DMALAB_VTD_LOCKED(s, n = dmalab_vtd_faults_injected(s->model));
    return n;
}

static const DmalabPlanOps dmalab_vtd_plan_ops = {
    .running = dmalab_vtd_plan_running,
    .give = dmalab_vtd_plan_give,
    .report = dmalab_vtd_plan_report,
    .applied = trace_dmalab_vtd_fault_plan,
};

/* Remapped interrupts by requester ("BB:DD.F=N ...", docs/vtd-ir.rst). */
static char *dmalab_vtd_get_ir_requesters(Object *obj, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    char *text = NULL;
    char *out;

    if (s->model) {
        DMALAB_VTD_LOCKED(s, text = dmalab_vtd_ir_requesters(s->model));
    }
    out = g_strdup(text ? text : "");
    free(text);
    return out;
}

/* The run-time settings: policy, mode, costs, audit, fault plan. */
void dmalab_vtd_add_props(Object *obj)
{
    static const DmalabDynProp costs[] = {
        { "inv-desc-ns", offsetof(DmalabVtdState, cfg.inv_desc_ns),
          "virtual ns per invalidation descriptor or register command" },
        { "inv-page-ns", offsetof(DmalabVtdState, cfg.inv_page_ns),
          "virtual ns per page an IOTLB invalidation covers" },
        { "wait-ns", offsetof(DmalabVtdState, cfg.wait_ns),
          "virtual ns per invalidation wait descriptor" },
        { "iec-inv-ns", offsetof(DmalabVtdState, cfg.iec_inv_ns),
          "virtual ns per interrupt entry cache invalidation descriptor" },
    };
    DmalabVtdState *s = DMALAB_VTD(obj);

    object_property_add_enum(obj, "replacement", "DmalabVtdReplacement",
                             &dmalab_vtd_replacement_lookup,
                             dmalab_vtd_get_replacement,
                             dmalab_vtd_set_replacement);
    object_property_set_description(obj, "replacement",
                                    "IOTLB replacement policy: lru, fifo "
                                    "or random");
    object_property_add_enum(obj, "mode", "DmalabVtdMode",
                             &dmalab_vtd_mode_lookup, dmalab_vtd_get_mode,
                             dmalab_vtd_set_mode);
    object_property_set_description(obj, "mode",
                                    "legacy (root and context tables) or "
                                    "scalable (also PASID tables, first- "
                                    "and second-stage, ECAP.SMTS)");
    dmalab_glue_add_props(obj, costs, ARRAY_SIZE(costs), "uint64",
                          dmalab_vtd_get_cost, dmalab_vtd_set_cost);
    object_property_add_bool(obj, "audit", dmalab_vtd_prop_get_audit,
                             dmalab_vtd_prop_set_audit);
    object_property_set_description(obj, "audit",
                                    "the stale-translation audit; settable "
                                    "at run time");
    dmalab_plan_init(obj, &s->plan, &dmalab_vtd_plan_ops);
}

/*
 * "counters": the unit's (docs/vtd.rst, Counters), then the glue's own, then
 * the plan's; each read under the lock, none held while the next is visited.
 */
static void dmalab_vtd_read_counters(Object *obj, DmalabCounterSink *sink)
{
    DmalabVtdState *s = DMALAB_VTD(obj);
    uint64_t value;

    for (unsigned i = 0; i < dmalab_vtd_counter_count(); i++) {
        DMALAB_VTD_LOCKED(s, value = s->model ? dmalab_vtd_counter(s->model, i)
                                              : 0);
        dmalab_counter(sink, dmalab_vtd_counter_name(i), value);
    }
    DMALAB_VTD_LOCKED(s, value = s->msis_dropped);
    dmalab_counter(sink, "events-dropped", value);
    DMALAB_VTD_LOCKED(s, value = s->notifications);
    dmalab_counter(sink, "notifications", value);
    dmalab_plan_counters(&s->plan, sink);
}

/* What a realized unit reports: not settings, so not in -device help. */
void dmalab_vtd_add_realized_props(Object *obj)
{
    dmalab_glue_add_counters(obj, dmalab_vtd_read_counters);
    if (!object_property_find(obj, "ir-remapped-requesters")) {
        object_property_add_str(obj, "ir-remapped-requesters",
                                dmalab_vtd_get_ir_requesters, NULL);
        object_property_set_description(obj, "ir-remapped-requesters",
                                        "remapped interrupts by requester, "
                                        "'BB:DD.F=N' words (the first 8 "
                                        "requesters, then other=N)");
    }
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
    DEFINE_PROP("eim", DmalabVtdState, cfg.eim, qdev_prop_bool, bool),
    DEFINE_PROP("caching-mode", DmalabVtdState, cfg.cm, qdev_prop_bool, bool),
    DEFINE_PROP("first-stage", DmalabVtdState, cfg.fs, qdev_prop_bool, bool),
    DEFINE_PROP_UNSIGNED_NODEFAULT("iec-entries", DmalabVtdState,
                                   cfg.iec_entries, qdev_prop_uint32,
                                   uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("devtlb-timeout-ns", DmalabVtdState,
                                   cfg.devtlb_timeout_ns, qdev_prop_uint64,
                                   uint64_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("pde-cache", DmalabVtdState, cfg.pde_cache,
                                   qdev_prop_uint32, uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("pdpe-cache", DmalabVtdState,
                                   cfg.pdpe_cache, qdev_prop_uint32, uint32_t),
    DEFINE_PROP_UNSIGNED_NODEFAULT("pml4e-cache", DmalabVtdState,
                                   cfg.pml4e_cache, qdev_prop_uint32, uint32_t),
};

static const DmalabPropDoc dmalab_vtd_property_docs[] = {
    { "aw-bits", "guest address width in bits: 39 or 48" },
    { "iotlb-entries", "IOTLB entries" },
    { "iotlb-ways", "IOTLB associativity" },
    { "context-entries", "context-cache entries (4-way)" },
    { "qi", "advertise queued invalidation" },
    { "queue-step", "queue descriptors completed in one step at most" },
    { "seed", "seed of the random replacement policy" },
    { "walk-read-ns", "virtual ns per table entry read on a cache miss" },
    { "eim", "extended interrupt mode (x2APIC destinations), with intremap" },
    { "caching-mode", "CAP.CM: not-present pages cached until invalidated "
      "(the guest invalidates on map, and Linux runs strict)" },
    { "first-stage", "with mode=scalable: offer first-stage tables "
      "(ECAP.FLTS; Linux then puts DMA domains on them)" },
    { "iec-entries", "interrupt entry cache entries" },
    { "devtlb-timeout-ns", "a device-TLB invalidation that would take longer "
      "(a fault plan's delay) times out after this long: FSTS.ITE "
      "(0: never)" },
    { "pde-cache", "paging-structure cache of PDEs, in entries (4-way; 0: "
      "none): a miss under a cached PDE reads one entry" },
    { "pdpe-cache", "paging-structure cache of PDPEs, in entries (4-way; "
      "0: none)" },
    { "pml4e-cache", "paging-structure cache of PML4Es, in entries (4-way; "
      "0: none)" },
};

/* The configuration properties, with the model's defaults. */
void dmalab_vtd_class_props(ObjectClass *klass)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    DmalabVtdConfig defaults;

    device_class_set_props(dc, dmalab_vtd_properties);
    dmalab_glue_describe(klass, dmalab_vtd_property_docs,
                         ARRAY_SIZE(dmalab_vtd_property_docs));
    dmalab_vtd_default_config(&defaults);
    dmalab_glue_props_defaults(klass, dmalab_vtd_properties,
                               ARRAY_SIZE(dmalab_vtd_properties),
                               offsetof(DmalabVtdState, cfg), &defaults,
                               sizeof(defaults));
}
