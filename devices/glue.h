/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the glue of dmalab-ioat and dmalab-vtd shares: the models' timers on
 * QEMU's virtual clock, their log messages, fault plan files and the
 * strings the models hand back.
 */

#ifndef HW_DMALAB_GLUE_H
#define HW_DMALAB_GLUE_H

#include "qemu/timer.h"

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

#endif
