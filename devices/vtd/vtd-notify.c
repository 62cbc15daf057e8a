/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: IOMMU notifiers. A device model that keeps its own copies of
 * translations (vhost's IOTLB; a device-TLB behind ATS) registers an UNMAP
 * or a DEVIOTLB_UNMAP notifier on its IOMMU region, and the unit tells it
 * what each invalidation took away once s->lock is dropped.
 *
 * The model says what each invalidation took away (Observer::unmapped in
 * vtd/include/dmalab/vtd/unit.h): an IOVA range of every domain, which
 * reaches the UNMAP notifiers of every address space (the unit does not
 * filter by domain, and a notification too many costs a copy one miss), or
 * a device-TLB's, which reaches the DEVIOTLB_UNMAP notifiers of the
 * requester it names.
 *
 * The notifications go out once s->lock is dropped, before the event messages
 * raised in the same call; while any notifier listens, the model completes a
 * queued wait only in a later call than the invalidations before it, so the
 * guest never sees a wait's status before the notifiers heard what it waited
 * for (register commands are read under the BQL, which the sending holds).
 *
 * MAP notifiers are refused: VFIO device assignment mirrors the guest's
 * tables into the host's IOMMU, which needs replay and MAP events that
 * dmalab-vtd does not send.
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "exec/address-spaces.h"
#include "qapi/error.h"
#include "../trace.h"

#include "vtd-internal.h"

int dmalab_vtd_notify_flag_changed(IOMMUMemoryRegion *iommu,
                                   IOMMUNotifierFlag old,
                                   IOMMUNotifierFlag new, Error **errp)
{
    DmalabVtdSpace *sp = container_of(iommu, DmalabVtdSpace, iommu);
    DmalabVtdState *s = sp->s;

    if (new & IOMMU_NOTIFIER_MAP) {
        error_setg(errp, "dmalab-vtd sends no MAP notifications: VFIO device "
                   "assignment needs intel-iommu,caching-mode=on");
        return -EINVAL;
    }
    qemu_mutex_lock(&s->lock);
    s->notified_spaces += (new != IOMMU_NOTIFIER_NONE);
    s->notified_spaces -= (old != IOMMU_NOTIFIER_NONE);
    if (s->model) {
        dmalab_vtd_set_hold_waits(s->model, s->notified_spaces != 0);
    }
    qemu_mutex_unlock(&s->lock);
    sp->notify_flags = new;
    trace_dmalab_vtd_notifiers(PCI_SLOT(sp->devfn), PCI_FUNC(sp->devfn), new);
    return 0;
}

/*
 * Called by the model with s->lock held (vtd_core.h): queue what an
 * invalidation took away. A full queue becomes one notification of
 * everything.
 */
void dmalab_vtd_unmapped(void *opaque, bool devtlb, uint16_t sid,
                         uint64_t first, uint64_t last)
{
    DmalabVtdState *s = opaque;

    if (!s->notified_spaces || s->inv_all) {
        return;
    }
    if (s->ninv == DMALAB_VTD_PENDING_INVS) {
        s->inv_all = true;
        return;
    }
    s->inv[s->ninv++] = (DmalabVtdInv) {
        .devtlb = devtlb, .sid = sid, .first = first, .last = last,
    };
}

/*
 * The naturally aligned power-of-two pieces of [lo, hi] within notifier n's
 * range, each as one event: an entry's addr_mask is a mask, and no piece is
 * larger than 2^63 so that addr_mask + 1 stays a size.
 */
static void dmalab_vtd_notify_one(DmalabVtdState *s, IOMMUNotifier *n,
                                  IOMMUNotifierFlag type, hwaddr lo, hwaddr hi)
{
    IOMMUTLBEvent event = {
        .type = type,
        .entry = {
            .target_as = &address_space_memory,
            .perm = IOMMU_NONE,
        },
    };

    lo = MAX(lo, n->start);
    hi = MIN(hi, n->end);
    while (lo <= hi) {
        uint64_t align = lo ? lo & -lo : 1ULL << 63;
        uint64_t room = hi - lo == UINT64_MAX ? 1ULL << 63
                                              : pow2floor(hi - lo + 1);
        uint64_t size = MIN(MIN(align, room), 1ULL << 63);

        event.entry.iova = lo;
        event.entry.addr_mask = size - 1;
        trace_dmalab_vtd_notified(type, lo, size - 1);
        memory_region_notify_iommu_one(n, &event);
        s->notifications++; /* under the BQL, as the property's reads */
        if (hi - lo == size - 1) {
            break;
        }
        lo += size;
    }
}

static void dmalab_vtd_notify_space(DmalabVtdSpace *sp, IOMMUNotifierFlag type,
                                    hwaddr lo, hwaddr hi)
{
    IOMMUNotifier *n;

    IOMMU_NOTIFIER_FOREACH(n, &sp->iommu) {
        IOMMUNotifierFlag one = n->notifier_flags & type & IOMMU_NOTIFIER_UNMAP
                                    ?: n->notifier_flags & type;

        if (one && n->start <= hi && lo <= n->end) {
            dmalab_vtd_notify_one(sp->s, n, one, lo, hi);
        }
    }
}

/* Tells the notifiers what the model invalidated; needs the BQL. */
void dmalab_vtd_inv_flush(DmalabVtdState *s)
{
    DmalabVtdInv inv[DMALAB_VTD_PENDING_INVS];
    unsigned i, n;
    bool all;
    GHashTableIter it;
    gpointer value;

    qemu_mutex_lock(&s->lock);
    n = s->ninv;
    all = s->inv_all;
    memcpy(inv, s->inv, sizeof(inv[0]) * n);
    s->ninv = 0;
    s->inv_all = false;
    qemu_mutex_unlock(&s->lock);
    if (!n && !all) {
        return;
    }
    trace_dmalab_vtd_notify(n, all);
    g_hash_table_iter_init(&it, s->spaces);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        DmalabVtdSpace *sp = value;

        if (!sp->notify_flags) {
            continue;
        }
        if (all) {
            dmalab_vtd_notify_space(sp, IOMMU_NOTIFIER_IOTLB_EVENTS |
                                    IOMMU_NOTIFIER_DEVIOTLB_EVENTS,
                                    0, UINT64_MAX);
            continue;
        }
        for (i = 0; i < n; i++) {
            if (!inv[i].devtlb) {
                dmalab_vtd_notify_space(sp, IOMMU_NOTIFIER_UNMAP,
                                        inv[i].first, inv[i].last);
            } else if (inv[i].sid == dmalab_vtd_space_sid(sp)) {
                dmalab_vtd_notify_space(sp, IOMMU_NOTIFIER_DEVIOTLB_UNMAP,
                                        inv[i].first, inv[i].last);
            }
        }
    }
}
