/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the glue of the dmalab devices shares: the models' timers on
 * QEMU's virtual clock, their log messages, fault plan files and the
 * strings the models hand back.
 */

#ifndef HW_DMALAB_GLUE_H
#define HW_DMALAB_GLUE_H

#include "qemu/timer.h"
#include "hw/qdev-properties.h"
#include "hw/resettable.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "dmalab/host_c.h"
#include "dmalab/race_table.h"

/* One of a model's timers; `fire` runs the model's timer `id`. */
typedef struct DmalabTimer {
    QEMUTimer *timer;
    void *dev;
    unsigned id;
} DmalabTimer;

/* A model's timers on QEMU_CLOCK_VIRTUAL: the clock of its DmalabHost. */
typedef struct DmalabTimers {
    DmalabTimer *t;
    unsigned n;
    bool stopped; /* the model is going: arming does nothing */
} DmalabTimers;

/* n timers, each calling cb with its DmalabTimer. */
void dmalab_timers_init(DmalabTimers *timers, unsigned n, QEMUTimerCB *cb,
                        void *dev);
/* Cancels every timer; the model cannot arm them again until freed. */
void dmalab_timers_stop(DmalabTimers *timers);
void dmalab_timers_free(DmalabTimers *timers);

/*
 * The host a model is given: the device's callbacks (fns, with opaque), the
 * glue's clock on timers, and its log.
 */
void dmalab_glue_host(DmalabHost *h, const DmalabHost *fns, void *opaque,
                      DmalabTimers *timers);

/*
 * A model's state in migration: the byte string the model saves and loads
 * (state.h), which VMSTATE_DMALAB_STATE puts in the device's vmstate as its
 * length and bytes. ops says how the device's model saves and loads.
 */
typedef struct DmalabStateOps {
    uint8_t *(*save)(void *dev, uint32_t *len); /* malloc'd; NULL: no room */
    bool (*load)(void *dev, const uint8_t *blob, uint32_t len);
} DmalabStateOps;

typedef struct DmalabState {
    uint8_t *blob;
    uint32_t len;
    void *dev; /* the device (its QOM object) */
    const DmalabStateOps *ops;
} DmalabState;

extern const VMStateDescription vmstate_dmalab_state;

#define VMSTATE_DMALAB_STATE(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 0, vmstate_dmalab_state, DmalabState)

/*
 * A model's fault plan (docs/faults.rst): the property "fault-plan", the
 * path of a plan file read at realize (dmalab_plan_apply) and again each
 * time it is set while the model runs, the read-only "fault-log" (from
 * realize on), and the counter "faults-injected" (dmalab_plan_counters).
 * ops says how the device's model takes a plan and reports; messages name
 * the device by its type.
 */
typedef struct DmalabPlanOps {
    bool (*running)(void *dev); /* a model to give plans to */
    /* The plan's text (NULL: none) to the model: NULL, or why not (malloc). */
    char *(*give)(void *dev, const char *text);
    /* With a model: its injections so far, and if log, their log (malloc). */
    uint64_t (*report)(void *dev, char **log);
    void (*applied)(const char *path); /* a trace point */
} DmalabPlanOps;

typedef struct DmalabPlan {
    char *path;
    void *dev;
    const DmalabPlanOps *ops;
} DmalabPlan;

void dmalab_plan_init(Object *obj, DmalabPlan *plan, const DmalabPlanOps *ops);

/*
 * Defines the DmalabPlanOps `name` of a device that serialises its model's
 * calls itself (on the BQL): its state, CAST from the QOM object, holds the
 * model in `model`, whose C ABI has prefix##_set_fault_plan, _fault_log and
 * _faults_injected; trace_fn is the device's plan trace point.
 */
#define DMALAB_DEFINE_PLAN_OPS(name, CAST, prefix, trace_fn)                 \
    static bool name##_running(void *dev)                                   \
    {                                                                       \
        return CAST(dev)->model != NULL;                                    \
    }                                                                       \
    static char *name##_give(void *dev, const char *text)                   \
    {                                                                       \
        return prefix##_set_fault_plan(CAST(dev)->model, text,              \
                                       DEVICE(dev)->id);                    \
    }                                                                       \
    static uint64_t name##_report(void *dev, char **log)                    \
    {                                                                       \
        if (log) {                                                          \
            *log = prefix##_fault_log(CAST(dev)->model);                    \
        }                                                                   \
        return prefix##_faults_injected(CAST(dev)->model);                  \
    }                                                                       \
    const DmalabPlanOps name = {                                            \
        .running = name##_running,                                          \
        .give = name##_give,                                                \
        .report = name##_report,                                            \
        .applied = trace_fn,                                                \
    }
/* Reads the plan at path (none for NULL or "") and gives it to the model. */
bool dmalab_plan_apply(DmalabPlan *plan, const char *path, Error **errp);
/* At realize: applies the plan named before, if one was; adds "fault-log". */
bool dmalab_plan_realize(DmalabPlan *plan, Error **errp);
void dmalab_plan_finalize(DmalabPlan *plan);

/*
 * The DMA race detector's table (docs/race-detector.rst): the file at path,
 * which a device and the detector's TCG plugin both map, whichever creates
 * it. NULL, with errp naming the device's type, when it cannot be mapped.
 */
DmalabRaceTable *dmalab_glue_map_race_table(const char *type,
                                            const char *path, Error **errp);
void dmalab_glue_unmap_race_table(DmalabRaceTable *table);

/*
 * One of a model's trace points: the function `fn` its C ABI declares (whose
 * opaque it does not need), relaying the other parameters to QEMU's trace
 * event `event`.
 */
#define DMALAB_TRACE_RELAY(fn, params, event, ...) \
    void fn params                                 \
    {                                              \
        event(__VA_ARGS__);                        \
    }

/* A string a model allocated (malloc), as a g_malloc'd one; "" for NULL. */
char *dmalab_glue_take_string(char *s);

/*
 * What both device classes set alike: the description "-device help" shows,
 * the migration state, the reset's hold phase and the "misc" category.
 */
void dmalab_glue_class_init(ObjectClass *oc, const char *desc,
                            const VMStateDescription *vmsd,
                            ResettableHoldPhase hold);

/* A description for each of a class's properties, by name. */
typedef struct DmalabPropDoc {
    const char *name;
    const char *desc;
} DmalabPropDoc;

void dmalab_glue_describe(ObjectClass *oc, const DmalabPropDoc *docs,
                          size_t n);

/*
 * A property of one instance whose accessors find their value at `offset`
 * (the property's opaque): in the device state, or in a counters struct.
 */
typedef struct DmalabDynProp {
    const char *name;
    size_t offset;
    const char *desc;
} DmalabDynProp;

/* Adds table[0..n) to obj, each of QOM type `type` with get and set. */
void dmalab_glue_add_props(Object *obj, const DmalabDynProp *table, size_t n,
                           const char *type, ObjectPropertyAccessor *get,
                           ObjectPropertyAccessor *set);

/*
 * A device's counters as one read-only property, "counters": qom-get answers
 * {"name": value, ...} with every counter of the device. It is added once the
 * device is realized, so that "-device NAME,help" lists only what a user can
 * set. read() gives each counter to dmalab_counter() in turn.
 */
typedef struct DmalabCounterSink {
    Visitor *v;
    Error *err;
} DmalabCounterSink;

typedef void DmalabCountersRead(Object *obj, DmalabCounterSink *sink);

void dmalab_glue_add_counters(Object *obj, DmalabCountersRead *read);
void dmalab_counter(DmalabCounterSink *sink, const char *name, uint64_t value);
/* Each uint64_t of table[0..n) at its offset in base, by its name. */
void dmalab_counters_table(DmalabCounterSink *sink, const void *base,
                           const DmalabDynProp *table, size_t n);
/* The plan's counter: "faults-injected", since it was set or the reset. */
void dmalab_plan_counters(DmalabPlan *plan, DmalabCounterSink *sink);

/*
 * Gives each of props[0..n) that lies in the model's configuration (a
 * struct at cfg_offset in the device state) the default that the model's own
 * default configuration, defaults (cfg_size bytes), has at that place: so
 * the core's defaults are the only ones, and "-device ...,help" shows them.
 * The properties must have been added without a default.
 */
void dmalab_glue_props_defaults(ObjectClass *oc, const Property *props,
                                size_t n, size_t cfg_offset,
                                const void *defaults, size_t cfg_size);

#endif
