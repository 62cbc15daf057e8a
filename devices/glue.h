/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the glue of dmalab-ioat and dmalab-vtd shares: the models' timers on
 * QEMU's virtual clock, their log messages, fault plan files and the
 * strings the models hand back.
 */

#ifndef HW_DMALAB_GLUE_H
#define HW_DMALAB_GLUE_H

#include "qemu/timer.h"
#include "hw/qdev-properties.h"

/* One of a model's timers; `fire` runs the model's timer `id`. */
typedef struct DmalabTimer {
    QEMUTimer *timer;
    void *dev;
    unsigned id;
} DmalabTimer;

typedef struct DmalabTimers {
    DmalabTimer *t;
    unsigned n;
} DmalabTimers;

/* n timers on QEMU_CLOCK_VIRTUAL, each calling cb with its DmalabTimer. */
void dmalab_timers_init(DmalabTimers *timers, unsigned n, QEMUTimerCB *cb,
                        void *dev);
/* Arms timer id for when_ns of virtual time; ids beyond n are ignored. */
void dmalab_timers_arm(DmalabTimers *timers, unsigned id, uint64_t when_ns);
void dmalab_timers_cancel(DmalabTimers *timers, unsigned id);
void dmalab_timers_free(DmalabTimers *timers);
/* The models' clock: QEMU_CLOCK_VIRTUAL in ns (a DmalabHost now_ns). */
uint64_t dmalab_glue_now(void *opaque);

/* A DmalabHost log callback: guest errors and unimplemented features. */
void dmalab_glue_log(void *opaque, int kind, const char *text);

/*
 * The fault plan at path, read whole (NULL for no path or an empty one:
 * no plan). False, with errp set, when the file cannot be read.
 */
bool dmalab_glue_read_plan(const char *dev, const char *path, char **text,
                           Error **errp);

/* A string a model allocated (malloc), as a g_malloc'd one; "" for NULL. */
char *dmalab_glue_take_string(char *s);

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
