// SPDX-License-Identifier: GPL-2.0-or-later
// What an invalidation does, however it arrived (a register command, 6.5.1, or a queued
// descriptor, 6.5.2): its modelled cost, the fault plan's say, and the entries it drops.

#include <algorithm>

#include "dmalab/vtd/faults.h"
#include "parts.h"

namespace dmalab::vtd
{

uint64_t Invalidations::cost(const InvRequest& r) const
{
    const Config& c = s_.config;
    if (r.kind == InvKind::Wait)
        return c.wait_ns;
    if (r.kind == InvKind::Iec)
        return c.iec_inv_ns;
    // A device-TLB invalidation is one round trip to the device, whatever its range (the
    // device, not the unit, finds the entries): Linux names 2^52 pages for "all".
    uint64_t ns = c.inv_desc_ns;
    if (r.kind == InvKind::Iotlb) {
        uint64_t pages;
        if (r.g == Gran::Selective) // IOTLB or PASID-based page-selective
            pages = pow2(std::min(r.am, kMamv));
        else
            pages = t_.caches().iotlb.valid(); // entries a wider invalidation may drop
        ns = sat_add(ns,
                     pages > kTimeLimit / (c.inv_page_ns + 1) ? kTimeLimit : pages * c.inv_page_ns);
    }
    return ns;
}

bool Invalidations::inject(const InvRequest& r, uint64_t& due)
{
    if (!s_.injector)
        return false;
    using faults::Kind;
    faults::Occasion o{};
    o.kinds = 1u << static_cast<unsigned>(Kind::DelayInvalidation);
    // A wait is never dropped: Linux would wait for its status write forever.
    if (r.kind != InvKind::Wait)
        o.kinds |= 1u << static_cast<unsigned>(Kind::DropInvalidation);
    o.unit = ~0u;
    o.op = r.kind == InvKind::Context      ? kFaultOpContext
           : r.kind == InvKind::Iotlb      ? kFaultOpIotlb
           : r.kind == InvKind::Iec        ? kFaultOpIec
           : r.kind == InvKind::DevTlb     ? kFaultOpDevTlb
           : r.kind == InvKind::PasidCache ? kFaultOpPasidCache
                                           : kFaultOpWait;
    o.key = r.addr;
    if (r.kind == InvKind::Iotlb && r.g == Gran::Selective) {
        uint64_t size = pow2(12 + std::min(r.am, kMamv));
        o.start[0] = r.addr & ~(size - 1);
        o.end[0] = o.start[0] + std::min(size, ~uint64_t{0} - o.start[0]);
    }
    bool drop = false;
    s_.injector->decide(o, s_.now(), [&](const faults::Rule& rule) {
        if (rule.kind == Kind::DelayInvalidation)
            due = sat_add(due, rule.ns);
        else
            drop = true;
    });
    due = std::min(due, kTimeLimit);
    return drop;
}

uint64_t Invalidations::context(Gran g, uint16_t did, uint16_t sid, uint8_t fm, bool queued)
{
    uint16_t fmask = static_cast<uint16_t>((0x7u << (3 - fm)) & 0x7u); // 6.5.1.1, FM
    t_.forget();
    // Each granularity costs what it names, not the cache's size: a domain's entries are on
    // its list, and a device-selective one names at most 8 source ids (FM masks 3 bits).
    uint64_t n = 0;
    Caches& caches = t_.caches();
    auto& cc = caches.context;
    if (g == Gran::Global) {
        n = cc.drop_all();
    } else if (g == Gran::Domain) {
        n = cc.drop_group_if(did, [](const ContextInfo&) { return true; });
    } else if (g == Gran::Selective) {
        uint16_t first = static_cast<uint16_t>(sid & ~fmask);
        for (uint16_t f = 0; f <= fmask; f++)
            if (!(f & ~fmask)) {
                uint16_t one = static_cast<uint16_t>(first | f);
                n += cc.drop(caches.context_set(one), Caches::context_tag(one));
            }
    }
    s_.counters.cc_inv[static_cast<unsigned>(g)]++;
    (queued ? s_.counters.inv_queued : s_.counters.inv_register)++;
    if (s_.host.observer) {
        s_.host.observer->invalidated(InvKind::Context, g, did, sid, fm, n, queued);
        s_.host.observer->unmapped(false, 0, 0, UINT64_MAX);
    }
    return n;
}

template <class Pred> uint64_t Invalidations::drop_psc(uint16_t did, Pred&& pred)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < Caches::kPscLevels; i++) {
        auto& c = t_.caches().psc[i];
        if (!c)
            continue;
        const uint64_t size = pow2(Caches::psc_shift(i));
        n += c->drop_group_if(did, [&](const PscEntry& e) {
            uint64_t lo = e.region << Caches::psc_shift(i);
            return pred(e, lo, lo + (size - 1));
        });
    }
    s_.counters.psc_dropped += n;
    return n;
}

uint64_t Invalidations::iotlb(Gran g, uint16_t did, uint64_t addr, unsigned am, bool ih,
                              bool queued)
{
    uint64_t size = pow2(12 + am);
    uint64_t first = addr & ~(size - 1);
    uint64_t last = first + (size - 1);
    t_.forget();
    Caches& caches = t_.caches();
    auto& tlb = caches.iotlb;
    uint64_t n = 0;
    // The paging-structure caches (6.5.2.3): a global or domain-selective invalidation
    // drops their entries as the IOTLB's; a page-selective one those whose region overlaps
    // its range, of every PASID (scalable mode: the domain's second-stage entries are
    // shared by its PASIDs), unless its hint says only leaves changed.
    if (g == Gran::Global) {
        uint64_t psc = 0;
        for (auto& c : caches.psc)
            if (c)
                psc += c->drop_all();
        s_.counters.psc_dropped += psc;
    } else if (g == Gran::Domain) {
        drop_psc(did, [](const PscEntry&, uint64_t, uint64_t) { return true; });
    } else if (g == Gran::Selective && ih) {
        s_.counters.inv_leaf_hints++;
    } else if (g == Gran::Selective) {
        drop_psc(did, [&](const PscEntry&, uint64_t lo, uint64_t hi) {
            return lo <= last && first <= hi;
        });
    }
    if (g == Gran::Global) {
        n = tlb.drop_all();
    } else if (g == Gran::Domain) {
        n = tlb.drop_group_if(did, [](const TlbEntry&) { return true; });
    } else if (g == Gran::Selective && !(first >> 48)) {
        // No entry maps an address at or above 2^48 (translate refuses those).
        last = std::min(last, pow2(48) - 1);
        // An entry of any page size that overlaps [first, last] is one of these tags. Look
        // them up when there are fewer of them than the domain has entries, else walk the
        // domain's list: the cost is the smaller of the two, whatever the IOTLB's size.
        static constexpr unsigned kShifts[] = {12, 21, 30};
        uint64_t probes = 0;
        for (unsigned shift : kShifts)
            probes += (last >> shift) - (first >> shift) + 1;
        // In scalable mode the entries of every PASID in the domain go, whose tags differ:
        // the list it is.
        if (probes <= tlb.group_size(did) && !t_.scalable()) {
            for (unsigned shift : kShifts)
                for (uint64_t vpn = first >> shift; vpn <= last >> shift; vpn++) {
                    uint64_t tag = Caches::iotlb_tag(did, 0, vpn, shift);
                    n += tlb.drop(caches.iotlb_set(tag), tag);
                }
        } else {
            n = tlb.drop_group_if(did, [&](const TlbEntry& e) {
                uint64_t lo = e.vpn << e.shift;
                uint64_t hi = lo + (pow2(e.shift) - 1);
                return lo <= last && first <= hi;
            });
        }
    }
    s_.counters.iotlb_inv[static_cast<unsigned>(g)]++;
    s_.counters.iotlb_dropped += n;
    (queued ? s_.counters.inv_queued : s_.counters.inv_register)++;
    if (s_.host.observer) {
        s_.host.observer->invalidated(InvKind::Iotlb, g, did, first, am, n, queued);
        bool range = g == Gran::Selective && size != 0; // size 0: am reaches 2^64
        s_.host.observer->unmapped(false, 0, range ? first : 0,
                                   range ? first + (size - 1) : UINT64_MAX);
    }
    return n;
}

// The PASID cache is the context cache (ContextInfo holds RID_PASID's PASID entry): its
// invalidation drops the requesters whose entry it names.
uint64_t Invalidations::pasid_cache(const PcInv& inv)
{
    t_.forget();
    auto& cc = t_.caches().context;
    uint64_t n = 0;
    if (inv.g == PcGran::Global)
        n = cc.drop_all();
    else if (inv.g == PcGran::Domain)
        n = cc.drop_group_if(inv.did, [](const ContextInfo&) { return true; });
    else
        n = cc.drop_group_if(inv.did, [&](const ContextInfo& c) { return c.pasid == inv.pasid; });
    s_.counters.pc_inv[static_cast<unsigned>(inv.g)]++;
    s_.counters.inv_queued++;
    if (s_.host.observer) {
        s_.host.observer->invalidated(InvKind::PasidCache, static_cast<Gran>(inv.g), inv.did,
                                      inv.pasid, 0, n, true);
        s_.host.observer->unmapped(false, 0, 0, UINT64_MAX);
    }
    return n;
}

// PASID-based IOTLB invalidation (6.5.2.4): the domain's entries of that PASID, all of them
// or those overlapping the pages named. The domain's list is walked (its entries of other
// PASIDs stay).
uint64_t Invalidations::piotlb(const PiotlbInv& inv)
{
    uint64_t size = pow2(12 + inv.am);
    uint64_t first = Translator::in48(inv.addr) & ~(size - 1);
    uint64_t last = first + (size - 1);
    t_.forget();
    // The PASID's paging-structure cache entries go as its IOTLB entries do, except those a
    // page-selective invalidation's hint keeps (6.5.2.4).
    if (inv.page && inv.ih)
        s_.counters.inv_leaf_hints++;
    else
        drop_psc(inv.did, [&](const PscEntry& e, uint64_t lo, uint64_t hi) {
            return e.pasid == inv.pasid && (!inv.page || (lo <= last && first <= hi));
        });
    uint64_t n = t_.caches().iotlb.drop_group_if(inv.did, [&](const TlbEntry& e) {
        if (e.pasid != inv.pasid)
            return false;
        if (!inv.page)
            return true;
        uint64_t lo = e.vpn << e.shift;
        uint64_t hi = lo + (pow2(e.shift) - 1);
        return lo <= last && first <= hi;
    });
    Counters& c = s_.counters;
    c.piotlb_inv[inv.page]++;
    c.iotlb_dropped += n;
    c.inv_queued++;
    if (s_.host.observer) {
        Gran g = inv.page ? Gran::Selective : Gran::Domain;
        s_.host.observer->invalidated(InvKind::Iotlb, g, inv.did, first, inv.am, n, true);
        bool range = inv.page && size != 0;
        s_.host.observer->unmapped(false, 0, range ? inv.addr & ~(size - 1) : 0,
                                   range ? (inv.addr & ~(size - 1)) + (size - 1) : UINT64_MAX);
    }
    return n;
}

uint64_t Invalidations::iec(const IecInv& inv)
{
    uint64_t n = ir_.invalidate(inv);
    Counters& c = s_.counters;
    (inv.global ? c.iec_inv_global : c.iec_inv_index)++;
    c.iec_dropped += n;
    c.inv_queued++;
    if (s_.host.observer)
        s_.host.observer->iec_invalidated(inv.global, inv.index, inv.im, n);
    return n;
}

void Invalidations::devtlb(const DevTlbInv& inv)
{
    Counters& c = s_.counters;
    c.devtlb_inv++;
    c.devtlb_pages = sat_add(c.devtlb_pages, pow2(inv.pages_log2)); // at most 2^52
    c.inv_queued++;
    // The trace's domain id is the requester here: a device-TLB belongs to a function.
    if (s_.host.observer) {
        s_.host.observer->invalidated(InvKind::DevTlb, Gran::Selective, inv.sid, inv.addr,
                                      inv.pages_log2, 0, true);
        uint64_t size = pow2(12 + inv.pages_log2); // 0: all 2^64 (pages_log2 52)
        uint64_t first = inv.addr & ~(size - 1);
        s_.host.observer->unmapped(true, inv.sid, size ? first : 0,
                                   size ? first + (size - 1) : UINT64_MAX);
    }
}

} // namespace dmalab::vtd
