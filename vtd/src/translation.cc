// SPDX-License-Identifier: GPL-2.0-or-later
// Translation (3.6, 9): the context cache and the IOTLB in front of the walks, faults for
// what they refuse, the stale-translation audit, and what walks cost the requesters. The
// entries a context comes from are read in context.cc, the tables walked in walk.cc, runs of
// pages for a DMA engine in translation_run.cc; translate() itself, which keeps the interrupt
// address range out of every answer, in interrupt_range.cc.

#include "dmalab/vtd/faults.h"
#include "parts.h"

namespace dmalab::vtd
{

Translator::Translator(Shared& s, FaultRecording& faults)
    : s_(s), faults_(faults), prng_(s.config.seed), caches_(s.config, prng_)
{
}

Translator::~Translator() = default;

void Translator::reset()
{
    caches_.clear();
    forget();
    te_ = false;
    for (Cost& c : costs_)
        c = {};
    root_valid_ = false;
    root_ = 0;
    s_.sm_root = false;
}

void Translator::save(StateWriter& w) const
{
    w.boolean(root_valid_);
    w.u64(root_);
    w.u64(prng_.state());
    w.boolean(s_.sm_root);
}

bool Translator::load(StateReader& r)
{
    root_valid_ = r.boolean();
    root_ = r.u64() & RTADDR_RTA.mask();
    prng_.set_state(r.u64());
    s_.sm_root = r.boolean();
    te_ = s_.reg(reg("GSTS")) & G_TE;
    // A stream cannot give a unit without scalable mode a scalable-mode root table.
    return r.ok() && !(s_.sm_root && !s_.config.sm);
}

Translation Translator::refuse(uint16_t sid, uint64_t iova, unsigned perm, FaultReason reason,
                               bool record, uint32_t pasid)
{
    Translation t;
    t.fault_reason = reason;
    t.iova = iova & ~uint64_t{0xfff};
    t.mask = 0xfff;
    if (perm == 0)
        return t; // a query records nothing
    s_.counters.faults++;
    bool write = perm & Unit::kWrite;
    if (record)
        faults_.record(sid, pasid, iova, write, reason);
    if (s_.host.observer)
        s_.host.observer->fault(sid, iova, write, reason, record);
    return t;
}

void Translator::audit(uint16_t sid, const ContextInfo& ctx, uint64_t iova, uint64_t cached, bool r,
                       bool w)
{
    s_.counters.audit_checks++;
    Walk now;
    FaultReason why = walk(ctx, iova, 0, now, false);
    bool ok = why == FaultReason::None;
    // A negative entry (caching mode) is right while the page is still not present.
    if (!r && !w && not_present(ctx, why))
        return;
    uint64_t now_addr = ok ? now.page + (iova & (pow2(now.shift) - 1) & ~uint64_t{0xfff}) : 0;
    if (ok && now_addr == cached && now.r == r && now.w == w)
        return;
    s_.counters.audit_stale++;
    if (s_.host.observer)
        s_.host.observer->stale(sid, iova, cached, now_addr, why);
}

bool Translator::not_present(const ContextInfo& ctx, FaultReason why)
{
    // A second-stage entry with neither R nor W is not present (3.6): walk() refuses the
    // request for its read or write.
    if (ctx.fs)
        return why == sm(SmFault::FsNotPresent);
    if (ctx.sm)
        return why == sm(SmFault::Read) || why == sm(SmFault::Write);
    return why == FaultReason::Read || why == FaultReason::Write;
}

Translation Translator::identity(uint64_t iova)
{
    Translation t;
    t.ok = true;
    t.iova = iova & ~uint64_t{0xfff};
    t.addr = t.iova;
    t.mask = 0xfff;
    t.read = t.write = true;
    return t;
}

FaultReason Translator::injected(uint16_t sid, uint64_t iova, unsigned perm)
{
    FaultReason reason = FaultReason::None;
    if (!s_.injector || !perm)
        return reason;
    faults::Occasion o{};
    o.kinds = 1u << static_cast<unsigned>(faults::Kind::TranslationFault);
    o.unit = sid;
    o.op = (perm & Unit::kWrite) ? kFaultOpWrite : kFaultOpRead;
    o.key = iova;
    o.start[0] = iova;
    o.end[0] = iova == ~uint64_t{0} ? iova : iova + 1;
    s_.injector->decide(
        o, s_.now(), [&](const faults::Rule& r) { reason = static_cast<FaultReason>(r.reason); });
    return reason;
}

Translation Translator::from_front(uint16_t sid, uint64_t iova, unsigned perm)
{
    s_.counters.context_hits++;
    s_.counters.iotlb_hits++;
    caches_.iotlb.touch(front_.entry);
    if (FaultReason why = denied(front_.stage, perm, front_.r, front_.w); why != FaultReason::None)
        return refuse(sid, iova, perm, why, !front_.fpd);
    Translation t;
    t.ok = true;
    t.translated = true;
    t.mask = front_.mask;
    t.iova = front_.base;
    t.addr = front_.page;
    t.read = front_.r;
    t.write = front_.w;
    return t;
}

TlbEntry* Translator::iotlb_find(const ContextInfo& ctx, uint64_t iova)
{
    for (unsigned shift : {12u, 21u, 30u}) {
        // No entry of this page size is cached anywhere: the lookup would miss.
        if (caches_.iotlb.kind_size((shift - 12) / 9) == 0)
            continue;
        uint64_t tag = Caches::iotlb_tag(ctx.did, ctx.pasid, in48(iova) >> shift, shift);
        TlbEntry* hit = caches_.iotlb.find(caches_.iotlb_set(tag), tag);
        if (hit && hit->pasid == ctx.pasid)
            return hit;
    }
    return nullptr;
}

FaultReason Translator::fill(uint16_t sid, const ContextInfo& ctx, uint64_t iova, unsigned perm,
                             TlbEntry& e, TlbEntry*& slot)
{
    s_.counters.iotlb_misses++;
    Walk w;
    uint64_t reads = s_.counters.walk_reads;
    FaultReason why = walk(ctx, iova, perm, w, true);
    charge(sid, (s_.counters.walk_reads - reads) * s_.config.walk_read_ns);
    // In caching mode a not-present second-stage entry is cached too, as a 4 KiB entry that
    // allows nothing. Caching mode does not apply to first-stage tables (6.1): software does
    // not invalidate when it maps there, and the unit caches no not-present entry of them.
    bool negative = s_.config.cm && !ctx.fs && not_present(ctx, why);
    if (why != FaultReason::None && !negative)
        return why;
    if (negative) {
        w = {};
        s_.counters.iotlb_negative++;
    }
    e = {ctx.did, static_cast<uint8_t>(w.shift), w.r, w.w, in48(iova) >> w.shift, w.page, ctx.pasid,
         w.d};
    uint64_t tag = Caches::iotlb_tag(ctx.did, ctx.pasid, e.vpn, w.shift);
    unsigned set = caches_.iotlb_set(tag);
    caches_.iotlb.drop(set, tag); // another PASID's entry under the same tag
    auto [where, evicted] = caches_.iotlb.insert(set, tag, ctx.did, e, (w.shift - 12) / 9);
    slot = where;
    // An eviction can only have replaced the front entry, which answer() sets again; the
    // context cache is untouched.
    if (evicted)
        s_.counters.iotlb_evictions++;
    return why;
}

// Requests with a PASID: ECAP.PASID is clear, so none is translated. Under a legacy root
// table the request is refused outright (31h); in scalable mode the root and context entries
// are read, and whatever they refuse is the fault, else the context entry's PASIDE, which
// this unit never lets software set, refuses it (45h).
Translation Translator::lookup_pasid(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm)
{
    if (!te_)
        return identity(iova);
    s_.counters.translations++;
    if (!s_.sm_root)
        return refuse(sid, iova, perm, sm(SmFault::LegacyPasid), true, pasid);
    charge(sid, 2 * s_.config.walk_read_ns); // the root and the context entry
    ContextInfo ctx;
    FaultReason why = context_sm(sid, ctx, haw_mask(), false);
    if (why == FaultReason::None)
        why = sm(SmFault::PasidDisabled);
    return refuse(sid, iova, perm, why, !ctx.fpd, pasid);
}

Translation Translator::lookup(uint16_t sid, uint64_t iova, unsigned perm)
{
    if (!te_)
        return identity(iova);
    s_.counters.translations++;
    if (FaultReason why = injected(sid, iova, perm); why != FaultReason::None)
        return refuse(sid, iova, perm, why, true);
    if (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base &&
        !s_.config.audit && (front_.d || !(perm & Unit::kWrite)))
        return from_front(sid, iova, perm);
    ContextInfo ctx;
    if (FaultReason why = context_for(sid, ctx); why != FaultReason::None)
        return refuse(sid, iova, perm, why, !ctx.fpd);
    if (ctx.tt == TT::Passthrough)
        return identity(iova);
    if (FaultReason why = check_input(ctx, iova); why != FaultReason::None)
        return refuse(sid, iova, perm, why, !ctx.fpd);

    TlbEntry e;
    TlbEntry* slot = iotlb_find(ctx, iova);
    // A write through a first-stage entry filled clean walks again (and sets D).
    if (slot && !slot->d && (perm & Unit::kWrite))
        slot = nullptr;
    if (slot) {
        s_.counters.iotlb_hits++;
        e = *slot;
        if (s_.config.audit)
            audit(sid, ctx, iova, e.page + (iova & (pow2(e.shift) - 1) & ~uint64_t{0xfff}), e.r,
                  e.w);
    } else if (FaultReason why = fill(sid, ctx, iova, perm, e, slot); why != FaultReason::None) {
        return refuse(sid, iova, perm, why, !ctx.fpd);
    }
    return answer(sid, iova, perm, e, ctx, slot);
}

FaultReason Translator::denied(Stage stage, unsigned perm, bool r, bool w)
{
    const bool need_w = perm & Unit::kWrite, need_r = perm & Unit::kRead;
    if (!(need_w && !w) && !(need_r && !r))
        return FaultReason::None;
    switch (stage) {
    case Stage::First: // a negative entry (caching mode), or a read-only page written
        return !r ? sm(SmFault::FsNotPresent) : sm(SmFault::Write);
    case Stage::SmSecond:
        return need_w && !w ? sm(SmFault::Write) : sm(SmFault::Read);
    default:
        return need_w && !w ? FaultReason::Write : FaultReason::Read;
    }
}

Translation Translator::answer(uint16_t sid, uint64_t iova, unsigned perm, const TlbEntry& e,
                               const ContextInfo& ctx, TlbEntry* slot)
{
    const Stage stage = stage_of(ctx);
    const unsigned shift = e.shift;
    const uint64_t page = e.page;
    const bool r = e.r, w = e.w;
    front_ = {true,  sid, iova & ~(pow2(shift) - 1), pow2(shift) - 1, page, r, w, ctx.fpd, slot,
              stage, e.d};
    if (FaultReason why = denied(stage, perm, r, w); why != FaultReason::None)
        return refuse(sid, iova, perm, why, !ctx.fpd);
    Translation t;
    t.ok = true;
    t.translated = true;
    t.mask = pow2(shift) - 1;
    t.iova = iova & ~t.mask;
    t.addr = page;
    t.read = r;
    t.write = w;
    return t;
}

// ---- What walks cost the requesters ----

void Translator::charge(uint16_t sid, uint64_t ns)
{
    if (ns == 0)
        return;
    s_.counters.walk_cost_ns += ns;
    for (unsigned i = 0; i < kCostSlots; i++) {
        Cost& c = costs_[(sid + i) % kCostSlots];
        if (c.key == 0u || c.key == sid + 1u) {
            c.key = sid + 1u;
            c.ns = sat_add(c.ns, ns);
            return;
        }
    }
}

uint64_t Translator::take_cost(uint16_t sid)
{
    for (unsigned i = 0; i < kCostSlots; i++) {
        Cost& c = costs_[(sid + i) % kCostSlots];
        if (c.key == sid + 1u) {
            uint64_t ns = c.ns;
            c.ns = 0; // the slot stays with its requester
            return ns;
        }
        if (c.key == 0)
            return 0;
    }
    return 0;
}

} // namespace dmalab::vtd
