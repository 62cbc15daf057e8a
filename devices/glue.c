/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the glue of the dmalab devices shares (see glue.h).
 */

#include "qemu/osdep.h"
#include <sys/mman.h>
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/timer.h"

#include "dmalab/host_c.h"
#include "glue.h"
#include "trace.h"

void dmalab_timers_init(DmalabTimers *timers, unsigned n, QEMUTimerCB *cb,
                        void *dev)
{
    unsigned i;

    timers->n = n;
    timers->stopped = false;
    timers->t = g_new0(DmalabTimer, n);
    for (i = 0; i < n; i++) {
        timers->t[i].dev = dev;
        timers->t[i].id = i;
        timers->t[i].timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, cb,
                                          &timers->t[i]);
    }
}

/* The models' clock (DmalabClock): QEMU_CLOCK_VIRTUAL and a model's timers. */
static uint64_t dmalab_glue_now(void *clock)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* Ids beyond the model's count are ignored. */
static void dmalab_glue_timer_arm(void *clock, unsigned id, uint64_t when_ns)
{
    DmalabTimers *timers = clock;

    if (id < timers->n && !timers->stopped) {
        /* The models never ask beyond 2^61 ns, well inside int64_t. */
        timer_mod_ns(timers->t[id].timer, (int64_t)when_ns);
    }
}

static void dmalab_glue_timer_cancel(void *clock, unsigned id)
{
    DmalabTimers *timers = clock;

    if (id < timers->n) {
        timer_del(timers->t[id].timer);
    }
}

void dmalab_timers_stop(DmalabTimers *timers)
{
    unsigned i;

    for (i = 0; i < timers->n; i++) {
        dmalab_glue_timer_cancel(timers, i);
    }
    timers->stopped = true;
}

void dmalab_timers_free(DmalabTimers *timers)
{
    unsigned i;

    for (i = 0; i < timers->n; i++) {
        timer_free(timers->t[i].timer);
    }
    g_free(timers->t);
    timers->t = NULL;
    timers->n = 0;
}

static void dmalab_glue_log(void *opaque, int kind, const char *text)
{
    qemu_log_mask(kind == DMALAB_LOG_UNIMP ? LOG_UNIMP : LOG_GUEST_ERROR,
                  "%s\n", text);
}

/* The models' fault injections (host_c.h). */
void dmalab_trace_injected(void *opaque, const char *device, const char *rule,
                           const char *kind, uint32_t unit, uint64_t key)
{
    trace_dmalab_fault_injected(device, rule, kind, unit, key);
}

static const DmalabClock dmalab_glue_clock = {
    .now_ns = dmalab_glue_now,
    .timer_arm = dmalab_glue_timer_arm,
    .timer_cancel = dmalab_glue_timer_cancel,
};

void dmalab_glue_host(DmalabHost *h, const DmalabHost *fns, void *opaque,
                      DmalabTimers *timers)
{
    *h = *fns;
    h->opaque = opaque;
    h->clock = &dmalab_glue_clock;
    h->clock_opaque = timers;
    h->log = dmalab_glue_log;
}

/* Migration: the model's state as one buffer, given back once sent. */

static int dmalab_state_pre_save(void *opaque)
{
    DmalabState *st = opaque;

    g_free(st->blob);
    st->blob = st->ops->save(st->dev, &st->len);
    return st->blob ? 0 : -ENOMEM;
}

static int dmalab_state_post_save(void *opaque)
{
    DmalabState *st = opaque;

    g_free(st->blob);
    st->blob = NULL;
    return 0;
}

static int dmalab_state_pre_load(void *opaque)
{
    DmalabState *st = opaque;

    g_free(st->blob);
    st->blob = NULL;
    st->len = 0;
    return 0;
}

static int dmalab_state_post_load(void *opaque, int version_id)
{
    DmalabState *st = opaque;
    bool ok = st->ops->load(st->dev, st->blob, st->len);

    g_free(st->blob);
    st->blob = NULL;
    if (!ok) {
        error_report("%s: the incoming state is not valid for this "
                     "configuration", object_get_typename(OBJECT(st->dev)));
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_dmalab_state = {
    .name = "dmalab-state",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dmalab_state_pre_save,
    .post_save = dmalab_state_post_save,
    .pre_load = dmalab_state_pre_load,
    .post_load = dmalab_state_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(len, DmalabState),
        VMSTATE_VBUFFER_ALLOC_UINT32(blob, DmalabState, 0, NULL, len),
        VMSTATE_END_OF_LIST(),
    },
};

/* Fault plans: a file named at start-up, replaceable at run time (qom-set). */

bool dmalab_plan_apply(DmalabPlan *plan, const char *path, Error **errp)
{
    const char *dev = object_get_typename(OBJECT(plan->dev));
    g_autoptr(GError) gerr = NULL;
    g_autofree char *text = NULL;
    char *why;

    if (path && *path && !g_file_get_contents(path, &text, NULL, &gerr)) {
        error_setg(errp, "%s: cannot read the fault plan %s: %s", dev, path,
                   gerr->message);
        return false;
    }
    why = plan->ops->give(plan->dev, text);
    if (why) {
        error_setg(errp, "%s: fault plan %s: %s", dev, path, why);
        free(why);
        return false;
    }
    plan->ops->applied(path ? path : "");
    return true;
}

static void dmalab_plan_get_log(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    DmalabPlan *plan = opaque;
    char *log = NULL;
    g_autofree char *value = NULL;

    if (plan->ops->running(plan->dev)) {
        plan->ops->report(plan->dev, &log);
    }
    value = dmalab_glue_take_string(log);
    visit_type_str(v, name, &value, errp);
}

bool dmalab_plan_realize(DmalabPlan *plan, Error **errp)
{
    Object *obj = OBJECT(plan->dev);

    /* What the plan did, from realize on: not a setting (-device help). */
    if (!object_property_find(obj, "fault-log")) {
        object_property_add(obj, "fault-log", "string", dmalab_plan_get_log,
                            NULL, NULL, plan);
        object_property_set_description(obj, "fault-log",
                                        "the newest 256 injections, oldest "
                                        "first, one per line");
    }
    return !plan->path || !*plan->path ||
           dmalab_plan_apply(plan, plan->path, errp);
}

void dmalab_plan_counters(DmalabPlan *plan, DmalabCounterSink *sink)
{
    uint64_t value = 0;

    if (plan->ops->running(plan->dev)) {
        value = plan->ops->report(plan->dev, NULL);
    }
    dmalab_counter(sink, "faults-injected", value);
}

static void dmalab_plan_get(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    DmalabPlan *plan = opaque;
    g_autofree char *value = g_strdup(plan->path ?: "");

    visit_type_str(v, name, &value, errp);
}

static void dmalab_plan_set(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    DmalabPlan *plan = opaque;
    g_autofree char *value = NULL;

    if (!visit_type_str(v, name, &value, errp)) {
        return;
    }
    /* Before realize the plan is read there; after, it replaces the old. */
    if (plan->ops->running(plan->dev) &&
        !dmalab_plan_apply(plan, value, errp)) {
        return;
    }
    g_free(plan->path);
    plan->path = g_steal_pointer(&value);
}


void dmalab_plan_init(Object *obj, DmalabPlan *plan, const DmalabPlanOps *ops)
{
    plan->dev = obj;
    plan->ops = ops;
    object_property_add(obj, "fault-plan", "string", dmalab_plan_get,
                        dmalab_plan_set, NULL, plan);
    object_property_set_description(obj, "fault-plan",
                                    "JSON file of faults to inject "
                                    "(docs/faults.rst); settable at run time");
}

void dmalab_plan_finalize(DmalabPlan *plan)
{
    g_free(plan->path);
    plan->path = NULL;
}

char *dmalab_glue_take_string(char *s)
{
    char *out = g_strdup(s ?: "");

    free(s);
    return out;
}

void dmalab_glue_props_defaults(ObjectClass *oc, const Property *props,
                                size_t n, size_t cfg_offset,
                                const void *defaults, size_t cfg_size)
{
    for (size_t i = 0; i < n; i++) {
        const Property *p = &props[i];
        const uint8_t *at = (const uint8_t *)defaults + p->offset - cfg_offset;
        ObjectProperty *op;

        if (p->offset < cfg_offset || p->offset >= cfg_offset + cfg_size) {
            continue;
        }
        op = object_class_property_find(oc, p->name);
        assert(op);
        if (p->info == &qdev_prop_bool) {
            object_property_set_default_bool(op, *(const bool *)at);
        } else if (p->info == &qdev_prop_uint8) {
            object_property_set_default_uint(op, *at);
        } else if (p->info == &qdev_prop_uint16) {
            object_property_set_default_uint(op, *(const uint16_t *)at);
        } else if (p->info == &qdev_prop_uint32) {
            object_property_set_default_uint(op, *(const uint32_t *)at);
        } else if (p->info == &qdev_prop_uint64 || p->info == &qdev_prop_size) {
            object_property_set_default_uint(op, *(const uint64_t *)at);
        } else {
            g_assert_not_reached();
        }
    }
}

void dmalab_glue_class_init(ObjectClass *oc, const char *desc,
                            const VMStateDescription *vmsd,
                            ResettableHoldPhase hold)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->desc = desc;
    dc->vmsd = vmsd;
    RESETTABLE_CLASS(oc)->phases.hold = hold;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

void dmalab_glue_describe(ObjectClass *oc, const DmalabPropDoc *docs,
                          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        object_class_property_set_description(oc, docs[i].name, docs[i].desc);
    }
}

void dmalab_glue_add_props(Object *obj, const DmalabDynProp *table, size_t n,
                           const char *type, ObjectPropertyAccessor *get,
                           ObjectPropertyAccessor *set)
{
    for (size_t i = 0; i < n; i++) {
        ObjectProperty *op;

        op = object_property_add(obj, table[i].name, type, get, set, NULL,
                                 (void *)(uintptr_t)table[i].offset);
        op->description = g_strdup(table[i].desc);
    }
}

void dmalab_counter(DmalabCounterSink *sink, const char *name, uint64_t value)
{
    if (!sink->err) {
        visit_type_uint64(sink->v, name, &value, &sink->err);
    }
}

void dmalab_counters_table(DmalabCounterSink *sink, const void *base,
                           const DmalabDynProp *table, size_t n)
{
    const char *p = base;

    for (size_t i = 0; i < n; i++) {
        dmalab_counter(sink, table[i].name,
                       *(const uint64_t *)(p + table[i].offset));
    }
}

static void dmalab_counters_get(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    DmalabCountersRead *read = opaque;
    DmalabCounterSink sink = { .v = v };

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    read(obj, &sink);
    if (!sink.err) {
        visit_check_struct(v, &sink.err);
    }
    visit_end_struct(v, NULL);
    error_propagate(errp, sink.err);
}

void dmalab_glue_add_counters(Object *obj, DmalabCountersRead *read)
{
    if (object_property_find(obj, "counters")) {
        return;
    }
    object_property_add(obj, "counters", "DmalabCounters", dmalab_counters_get,
                        NULL, NULL, read);
    object_property_set_description(obj, "counters",
                                    "every counter of the device, by name, "
                                    "since it was created (read-only)");
}

DmalabRaceTable *dmalab_glue_map_race_table(const char *type,
                                            const char *path, Error **errp)
{
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    void *p;

    if (fd < 0 || ftruncate(fd, sizeof(DmalabRaceTable)) < 0) {
        error_setg_errno(errp, errno, "%s: race-table %s", type, path);
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }
    p = mmap(NULL, sizeof(DmalabRaceTable), PROT_READ | PROT_WRITE,
             MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        error_setg_errno(errp, errno, "%s: race-table %s", type, path);
        return NULL;
    }
    return p;
}

void dmalab_glue_unmap_race_table(DmalabRaceTable *table)
{
    if (table) {
        munmap(table, sizeof(*table));
    }
}
