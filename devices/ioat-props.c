/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: its counters, timing properties, the race detector's table and
 * fault plans, as QOM properties; ioat.c has the device.
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

/* Counters, readable with qom-get. */

void dmalab_ioat_get_stat(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    DmalabIoatStats st;
    uint64_t value = 0;

    if (s->model) {
        dmalab_ioat_stats(s->model, -1, &st);
        value = *(uint64_t *)((char *)&st + (uintptr_t)opaque);
    }
    visit_type_uint64(v, name, &value, errp);
}

/* Timing properties: settable before realize and at run time (qom-set). */

void dmalab_ioat_get_timing(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);

    visit_type_size(v, name, field, errp);
}

void dmalab_ioat_set_timing_prop(Object *obj, Visitor *v,
                                        const char *name, void *opaque,
                                        Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);
    uint64_t value;

    /*
     * A size, so that bandwidth=100M reads as it does for other QEMU
     * properties.
     */
    if (!visit_type_size(v, name, &value, errp)) {
        return;
    }
    if (s->model) {
        uint64_t old = *field;
        const char *why;

        *field = value;
        why = dmalab_ioat_set_timing(s->model, s->cfg.bandwidth,
                                     s->cfg.latency_ns, s->cfg.jitter_ns);
        if (why) {
            *field = old;
            error_setg(errp, "dmalab-ioat: %s", why);
            return;
        }
        trace_dmalab_ioat_timing(s->cfg.bandwidth, s->cfg.latency_ns,
                                 s->cfg.jitter_ns);
        return;
    }
    *field = value; /* checked at realize */
}

/*
 * The race detector's table (docs/race-detector.rst): a file this device and
 * the detector's TCG plugin both map, whichever creates it.
 */
bool dmalab_ioat_map_race_table(DmalabIoatState *s, Error **errp)
{
    int fd = open(s->race_table, O_RDWR | O_CREAT, 0600);
    void *p;

    if (fd < 0 || ftruncate(fd, sizeof(*s->race_map)) < 0) {
        error_setg_errno(errp, errno, "dmalab-ioat: race-table %s",
                         s->race_table);
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    p = mmap(NULL, sizeof(*s->race_map), PROT_READ | PROT_WRITE, MAP_SHARED,
             fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        error_setg_errno(errp, errno, "dmalab-ioat: race-table %s",
                         s->race_table);
        return false;
    }
    s->race_map = p;
    dmalab_ioat_set_race_table(s->model, s->race_map, 0);
    return true;
}

/* Fault plans: a file named at start-up, replaceable at run time (qom-set). */

bool dmalab_ioat_apply_plan(DmalabIoatState *s, const char *path,
                                   Error **errp)
{
    g_autofree char *text = NULL;
    char *why;

    if (!dmalab_glue_read_plan("dmalab-ioat", path, &text, errp)) {
        return false;
    }
    why = dmalab_ioat_set_fault_plan(s->model, text, DEVICE(s)->id);
    if (why) {
        error_setg(errp, "dmalab-ioat: fault plan %s: %s", path, why);
        free(why);
        return false;
    }
    trace_dmalab_ioat_fault_plan(path ? path : "");
    return true;
}

char *dmalab_ioat_get_plan(Object *obj, Error **errp)
{
    return g_strdup(DMALAB_IOAT(obj)->fault_plan ?: "");
}

void dmalab_ioat_set_plan(Object *obj, const char *value, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    /* Before realize the plan is read there; after, it replaces the old. */
    if (s->model && !dmalab_ioat_apply_plan(s, value, errp)) {
        return;
    }
    g_free(s->fault_plan);
    s->fault_plan = g_strdup(value);
}

void dmalab_ioat_get_injected(Object *obj, Visitor *v, const char *name,
                                     void *opaque, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    uint64_t value = s->model ? dmalab_ioat_faults_injected(s->model) : 0;

    visit_type_uint64(v, name, &value, errp);
}

char *dmalab_ioat_get_fault_log(Object *obj, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    return dmalab_glue_take_string(s->model ? dmalab_ioat_fault_log(s->model)
                                            : NULL);
}

void dmalab_ioat_warn_timing(const DmalabIoatConfig *cfg)
{
    uint64_t longest = dmalab_ioat_longest_descriptor_ns(cfg);

    if (longest >= DMALAB_IOAT_LINUX_TIMEOUT_NS) {
        warn_report("dmalab-ioat: a descriptor may take %" PRIu64
                    " ms, longer than the 200 ms completion timeout of "
                    "Linux's ioatdma: it will reset channels "
                    "(see docs/ioat.rst)",
                    longest / SCALE_MS);
    }
}
