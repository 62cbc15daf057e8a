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
#include "../trace.h"

#include "dmalab/ioat_core.h"
#include "../vtd/dmalab-vtd.h"
#include "../glue.h"
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

/* How the model takes fault plans (glue.c has the properties). */

static bool dmalab_ioat_plan_running(void *dev)
{
    return DMALAB_IOAT(dev)->model != NULL;
}

static char *dmalab_ioat_plan_give(void *dev, const char *text)
{
    return dmalab_ioat_set_fault_plan(DMALAB_IOAT(dev)->model, text,
                                      DEVICE(dev)->id);
}

static uint64_t dmalab_ioat_plan_report(void *dev, char **log)
{
    DmalabIoat *model = DMALAB_IOAT(dev)->model;

    if (log) {
        *log = dmalab_ioat_fault_log(model);
    }
    return dmalab_ioat_faults_injected(model);
}

const DmalabPlanOps dmalab_ioat_plan_ops = {
    .running = dmalab_ioat_plan_running,
    .give = dmalab_ioat_plan_give,
    .report = dmalab_ioat_plan_report,
    .applied = trace_dmalab_ioat_fault_plan,
};

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
