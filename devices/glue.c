/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the glue of dmalab-ioat and dmalab-vtd shares (see glue.h).
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/log.h"
#include "qemu/timer.h"

#include "dmalab/host_c.h"
#include "glue.h"

void dmalab_timers_init(DmalabTimers *timers, unsigned n, QEMUTimerCB *cb,
                        void *dev)
{
    unsigned i;

    timers->n = n;
    timers->t = g_new0(DmalabTimer, n);
    for (i = 0; i < n; i++) {
        timers->t[i].dev = dev;
        timers->t[i].id = i;
        timers->t[i].timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, cb,
                                          &timers->t[i]);
    }
}

void dmalab_timers_arm(DmalabTimers *timers, unsigned id, uint64_t when_ns)
{
    if (id < timers->n) {
        /* The models never ask beyond 2^61 ns, well inside int64_t. */
        timer_mod_ns(timers->t[id].timer, (int64_t)when_ns);
    }
}

void dmalab_timers_cancel(DmalabTimers *timers, unsigned id)
{
    if (id < timers->n) {
        timer_del(timers->t[id].timer);
    }
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

uint64_t dmalab_glue_now(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

void dmalab_glue_log(void *opaque, int kind, const char *text)
{
    qemu_log_mask(kind == DMALAB_LOG_UNIMP ? LOG_UNIMP : LOG_GUEST_ERROR,
                  "%s\n", text);
}

bool dmalab_glue_read_plan(const char *dev, const char *path, char **text,
                           Error **errp)
{
    g_autoptr(GError) gerr = NULL;

    *text = NULL;
    if (path && *path && !g_file_get_contents(path, text, NULL, &gerr)) {
        error_setg(errp, "%s: cannot read the fault plan %s: %s", dev, path,
                   gerr->message);
        return false;
    }
    return true;
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
