/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: its counters, timing properties, the race detector's table and
 * fault plans, as QOM properties; ioat.c has the device.
 */

#include "qemu/osdep.h"
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

/* The race detector's table (docs/race-detector.rst), as device 0. */
bool dmalab_ioat_map_race_table(DmalabIoatState *s, Error **errp)
{
    s->race_map = dmalab_glue_map_race_table(TYPE_DMALAB_IOAT, s->race_table,
                                             errp);
    if (!s->race_map) {
        return false;
    }
    dmalab_ioat_set_race_table(s->model, s->race_map, 0);
    return true;
}

/* How the model takes fault plans (glue.c has the properties). */
DMALAB_DEFINE_PLAN_OPS(dmalab_ioat_plan_ops, DMALAB_IOAT, dmalab_ioat,
                       trace_dmalab_ioat_fault_plan);

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
