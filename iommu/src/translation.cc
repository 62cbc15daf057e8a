// SPDX-License-Identifier: GPL-2.0-or-later
// Translation (3.6, 9): the context cache, the walk of second-level tables, the IOTLB, the
// stale-translation audit, and what walks cost the requesters. Runs of pages for a DMA
// engine are in translation_run.cc.

#include <algorithm>
#include <cstring>

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
}

void Translator::save(StateWriter& w) const
{
    w.boolean(root_valid_);
    w.u64(root_);
    w.u64(prng_.state());
}

bool Translator::load(StateReader& r)
{
    root_valid_ = r.boolean();
    root_ = r.u64() & RTADDR_RTA.mask();
    prng_.set_state(r.u64());
    te_ = s_.reg(reg("GSTS")) & G_TE;
    return r.ok();
}

// The 128-bit entry (root or context, 9.1 and 9.3) at addr; zeros where the read failed.
template <class E> DmaResult Translator::read_entry128(uint64_t addr, E& out)
{
    uint8_t raw[E::kSize] = {};
    DmaResult r = s_.call_out([&] { return s_.host.memory.read(addr, raw, sizeof raw, {}); });
    out = E::from(raw);
    return r;
}

FaultReason Translator::context_for(uint16_t sid, ContextInfo& out)
{
    if (last_context_ && last_context_->sid == sid) {
        s_.counters.context_hits++;
        caches_.context.touch(last_context_);
        out = *last_context_;
        return FaultReason::None;
    }
    unsigned set = caches_.context_set(sid);
    if (ContextInfo* c = caches_.context.find(set, Caches::context_tag(sid))) {
        s_.counters.context_hits++;
        last_context_ = c;
        out = *c;
        return FaultReason::None;
    }
    s_.counters.context_misses++;
    charge(sid, 2 * s_.config.walk_read_ns); // the root and the context entry
    uint64_t haw_mask = ~(pow2(s_.config.aw_bits) - 1);
    if (!root_valid_ || (root_ & haw_mask))
        return FaultReason::RootTable;
    RootEntry re;
    if (!read_entry128(root_ + (sid >> 8) * RootEntry::kSize, re).ok())
        return FaultReason::RootTable;
    if (!re.present())
        return FaultReason::RootNotPresent;
    if (re.reserved_set(haw_mask))
        return FaultReason::RootReserved;
    ContextEntry ce;
    if (!read_entry128(re.context_table_pointer() + (sid & 0xffu) * ContextEntry::kSize, ce).ok())
        return FaultReason::ContextTable;
    if (!ce.present())
        return FaultReason::ContextNotPresent;
    out.fpd = ce.fault_processing_disable();
    if (ce.reserved_set(haw_mask) || ce.domain_id() >= kDomainIds)
        return FaultReason::ContextReserved;
    out.sid = sid;
    out.tt = ce.translation_type();
    out.aw = ce.address_width();
    out.did = static_cast<uint16_t>(ce.domain_id());
    out.slptptr = ce.slptptr();
    bool aw_ok = out.aw == 1 || (out.aw == 2 && s_.config.aw_bits >= 48);
    // TT=01 (device-TLB enabled, with ECAP.DT): untranslated requests are translated as with
    // TT=00; the unit models no translation requests of the device's own.
    bool tables = out.tt == TT::Untranslated || (out.tt == TT::All && s_.config.dt);
    if (!(tables && aw_ok) && !(out.tt == TT::Passthrough && s_.config.pt))
        return FaultReason::ContextInvalid;
    auto [where, evicted] = caches_.context.insert(set, Caches::context_tag(sid), out.did, out);
    if (evicted) {
        s_.counters.context_evictions++;
        forget();
    }
    last_context_ = where;
    return FaultReason::None;
}

FaultReason Translator::walk(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
                             bool count)
{
    unsigned levels = ctx.aw == 1 ? 3 : 4;
    uint64_t haw_mask = ~(pow2(s_.config.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    uint64_t table = ctx.slptptr;
    bool r = true, w = true;
    if (count)
        s_.counters.page_walks++;
    unsigned top = levels;
    Memo& m = *memo_;
    if (m.on && m.have_upper && m.upper_root == table && m.upper_levels == levels &&
        m.upper_region == iova >> 21) {
        // translate_run: the levels above the leaf table were read for this 2 MiB region
        // earlier in the call and are counted as read again.
        if (count)
            s_.counters.walk_reads += levels - 1;
        r = m.upper_r;
        w = m.upper_w;
        table = m.upper_table;
        top = 1;
    }
    for (unsigned level = top; level >= 1; level--) {
        unsigned shift = 12 + 9 * (level - 1);
        uint64_t idx = (iova >> shift) & 511;
        SlPte pte;
        if (table & ~(pow2(s_.config.aw_bits) - 1))
            return FaultReason::PageTable;
        DmaResult res = read_entry(table, idx, level, pte);
        if (count)
            s_.counters.walk_reads++;
        if (!res.ok())
            return FaultReason::PageTable;
        if (!pte.present())
            return (perm & Unit::kWrite) ? FaultReason::Write : FaultReason::Read;
        bool leaf = level == 1 || (pte.page_size() && level <= 3);
        // PS is reserved at level 4; a large page's address bits inside the page are too.
        bool reserved = pte.reserved_set(haw_mask, s_.config.dt) ||
                        (level == 4 && pte.page_size()) ||
                        (leaf && level > 1 && (pte.address() & (pow2(shift) - 1)));
        if (reserved)
            return FaultReason::PageReserved;
        r = r && pte.read();
        w = w && pte.write();
        uint64_t addr = pte.address();
        if (leaf) {
            out.page = addr & ~(pow2(shift) - 1);
            out.shift = shift;
            out.r = r;
            out.w = w;
            return FaultReason::None;
        }
        if (m.on && level == 2) {
            m.have_upper = true;
            m.upper_root = ctx.slptptr;
            m.upper_levels = levels;
            m.upper_region = iova >> 21;
            m.upper_table = addr;
            m.upper_r = r;
            m.upper_w = w;
        }
        table = addr;
    }
    return FaultReason::PageTable; // not reached: level 1 is always a leaf
}

Translation Translator::refuse(uint16_t sid, uint64_t iova, unsigned perm, FaultReason reason,
                               bool record)
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
        faults_.record(sid, iova, write, reason);
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
    if (!r && !w && (why == FaultReason::Read || why == FaultReason::Write))
        return;
    uint64_t now_addr = ok ? now.page + (iova & (pow2(now.shift) - 1) & ~uint64_t{0xfff}) : 0;
    if (ok && now_addr == cached && now.r == r && now.w == w)
        return;
    s_.counters.audit_stale++;
    if (s_.host.observer)
        s_.host.observer->stale(sid, iova, cached, now_addr, why);
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
    if ((perm & Unit::kWrite) && !front_.w)
        return refuse(sid, iova, perm, FaultReason::Write, !front_.fpd);
    if ((perm & Unit::kRead) && !front_.r)
        return refuse(sid, iova, perm, FaultReason::Read, !front_.fpd);
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
        uint64_t tag = Caches::iotlb_tag(ctx.did, iova >> shift, shift);
        if (TlbEntry* hit = caches_.iotlb.find(caches_.iotlb_set(tag), tag))
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
    // walk() refuses with Read or Write only where an entry is not present: in caching
    // mode that is cached too, as a 4 KiB entry that allows nothing.
    bool negative = s_.config.cm && (why == FaultReason::Read || why == FaultReason::Write);
    if (why != FaultReason::None && !negative)
        return why;
    if (negative) {
        w = {};
        s_.counters.iotlb_negative++;
    }
    e = {ctx.did, static_cast<uint8_t>(w.shift), w.r, w.w, iova >> w.shift, w.page};
    uint64_t tag = Caches::iotlb_tag(ctx.did, e.vpn, w.shift);
    auto [where, evicted] =
        caches_.iotlb.insert(caches_.iotlb_set(tag), tag, ctx.did, e, (w.shift - 12) / 9);
    slot = where;
    // An eviction can only have replaced the front entry, which answer() sets again; the
    // context cache is untouched.
    if (evicted)
        s_.counters.iotlb_evictions++;
    return why;
}

Translation Translator::translate(uint16_t sid, uint64_t iova, unsigned perm)
{
    if (!te_)
        return identity(iova);
    s_.counters.translations++;
    if (FaultReason why = injected(sid, iova, perm); why != FaultReason::None)
        return refuse(sid, iova, perm, why, true);
    if (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base &&
        !s_.config.audit)
        return from_front(sid, iova, perm);
    ContextInfo ctx;
    if (FaultReason why = context_for(sid, ctx); why != FaultReason::None)
        return refuse(sid, iova, perm, why, !ctx.fpd);
    if (ctx.tt == TT::Passthrough)
        return identity(iova);
    unsigned agaw = ctx.aw == 1 ? 39 : 48;
    if (iova >> agaw)
        return refuse(sid, iova, perm, FaultReason::AddressBeyondAw, !ctx.fpd);

    TlbEntry e;
    TlbEntry* slot = iotlb_find(ctx, iova);
    if (slot) {
        s_.counters.iotlb_hits++;
        e = *slot;
        if (s_.config.audit)
            audit(sid, ctx, iova, e.page + (iova & (pow2(e.shift) - 1) & ~uint64_t{0xfff}), e.r,
                  e.w);
    } else if (FaultReason why = fill(sid, ctx, iova, perm, e, slot); why != FaultReason::None) {
        return refuse(sid, iova, perm, why, !ctx.fpd);
    }
    return answer(sid, iova, perm, e.shift, e.page, e.r, e.w, ctx.fpd, slot);
}

Translation Translator::answer(uint16_t sid, uint64_t iova, unsigned perm, unsigned shift,
                               uint64_t page, bool r, bool w, bool fpd, TlbEntry* slot)
{
    front_ = {true, sid, iova & ~(pow2(shift) - 1), pow2(shift) - 1, page, r, w, fpd, slot};
    if ((perm & Unit::kWrite) && !w)
        return refuse(sid, iova, perm, FaultReason::Write, !fpd);
    if ((perm & Unit::kRead) && !r)
        return refuse(sid, iova, perm, FaultReason::Read, !fpd);
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
