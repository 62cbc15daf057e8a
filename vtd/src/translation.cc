// SPDX-License-Identifier: GPL-2.0-or-later
// Translation (3.6, 9): the context cache, the walk of second-level tables, the IOTLB, the
// stale-translation audit, and what walks cost the requesters. Runs of pages for a DMA
// engine are in translation_run.cc; translate() itself, which keeps the interrupt address
// range out of every answer, in interrupt_range.cc.

#include <algorithm>
#include <bit>
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
    FaultReason why =
        s_.sm_root ? context_sm(sid, out, haw_mask) : context_legacy(sid, out, haw_mask);
    if (why != FaultReason::None)
        return why;
    auto [where, evicted] = caches_.context.insert(set, Caches::context_tag(sid), out.did, out);
    if (evicted) {
        s_.counters.context_evictions++;
        forget();
    }
    last_context_ = where;
    return FaultReason::None;
}

FaultReason Translator::context_legacy(uint16_t sid, ContextInfo& out, uint64_t haw_mask)
{
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
    return FaultReason::None;
}

// Scalable mode (9.2, 9.4): the root entry's half for the devfn, the 256-bit context
// entry, then RID_PASID's PASID directory and table entries. Any FPD on the way holds.
FaultReason Translator::context_sm(uint16_t sid, ContextInfo& out, uint64_t haw_mask)
{
    if (!root_valid_ || (root_ & haw_mask))
        return sm(SmFault::RootTableAddress);
    const bool upper = sid & 0x80;
    SmRootEntry re;
    if (!read_entry128(root_ + (sid >> 8) * SmRootEntry::kSize, re).ok())
        return sm(SmFault::RootAccess);
    if (!re.present(upper))
        return sm(SmFault::RootNotPresent);
    if (re.reserved_set(upper, haw_mask))
        return sm(SmFault::RootReserved);
    SmContextEntry ce;
    uint64_t at = re.context_table_pointer(upper) + (sid & 0x7fu) * SmContextEntry::kSize;
    if (!read_entry128(at, ce).ok())
        return sm(SmFault::ContextAccess);
    if (!ce.present())
        return sm(SmFault::ContextNotPresent);
    out.fpd = ce.fault_processing_disable();
    // DTE needs ECAP.DT; page requests (PRE, ECAP.PRS) and PASID-tagged requests (PASIDE,
    // ECAP.PASID) are not offered, so those bits are reserved too.
    if (ce.reserved_set(haw_mask) || (ce.device_tlb() && !s_.config.dt) || ce.page_requests() ||
        ce.pasid_enable())
        return sm(SmFault::ContextReserved);
    out.sid = sid;
    out.sm = true;
    return pasid_entry(ce, out, haw_mask);
}

FaultReason Translator::pasid_entry(const SmContextEntry& ce, ContextInfo& out, uint64_t haw_mask)
{
    const uint32_t pasid = ce.rid_pasid();
    if ((pasid >> 6) >= ce.dir_entries())
        return sm(SmFault::RidPasid);
    charge(out.sid, 2 * s_.config.walk_read_ns); // the directory and the PASID entry
    uint8_t raw[PasidEntry::kSize] = {};
    uint64_t dir_at = ce.dir_pointer() + uint64_t{pasid >> 6} * PasidDirEntry::kSize;
    if (!s_.call_out([&] {
               return s_.host.memory.read(dir_at, raw, PasidDirEntry::kSize, {});
           }).ok())
        return sm(SmFault::DirAccess);
    PasidDirEntry de = PasidDirEntry::from(raw);
    if (!de.present())
        return sm(SmFault::DirNotPresent);
    out.fpd = out.fpd || de.fault_processing_disable();
    if (de.reserved_set(haw_mask))
        return sm(SmFault::DirReserved);
    uint64_t pe_at = de.table_pointer() + uint64_t{pasid & 63} * PasidEntry::kSize;
    if (!s_.call_out([&] { return s_.host.memory.read(pe_at, raw, sizeof raw, {}); }).ok())
        return sm(SmFault::PasidAccess);
    PasidEntry pe = PasidEntry::from(raw);
    if (!pe.present())
        return sm(SmFault::PasidNotPresent);
    out.fpd = out.fpd || pe.fault_processing_disable();
    if (pe.reserved_set() || pe.domain_id() >= kDomainIds)
        return sm(SmFault::PasidReserved);
    out.pasid = pasid;
    out.did = static_cast<uint16_t>(pe.domain_id());
    out.tt = TT::Untranslated;
    switch (pe.pgtt()) {
    case Pgtt::FirstStage:
        // 4-level tables only (FLPM 0): CAP.FL5LP is not advertised.
        if (!s_.config.fs || pe.flpm() != 0)
            return sm(SmFault::PasidInvalid);
        out.fs = true;
        out.nxe = pe.nxe();
        out.aw = 2;
        out.slptptr = pe.flptr();
        return FaultReason::None;
    case Pgtt::SecondStage:
        out.aw = pe.address_width();
        if (!(out.aw == 1 || (out.aw == 2 && s_.config.aw_bits >= 48)))
            return sm(SmFault::PasidInvalid);
        out.slptptr = pe.slptptr();
        return FaultReason::None;
    case Pgtt::PassThrough:
        if (!s_.config.pt)
            return sm(SmFault::PasidInvalid);
        out.tt = TT::Passthrough;
        return FaultReason::None;
    default: // nested (not advertised) and the reserved encodings
        return sm(SmFault::PasidInvalid);
    }
}

// The reason a second-stage walk gives in scalable mode, for the legacy one (7.1.3).
static FaultReason second_stage_sm(FaultReason legacy)
{
    switch (legacy) {
    case FaultReason::PageTable:
        return sm(SmFault::SsAccess);
    case FaultReason::PageReserved:
        return sm(SmFault::SsReserved);
    case FaultReason::Read:
        return sm(SmFault::Read);
    case FaultReason::Write:
        return sm(SmFault::Write);
    default:
        return legacy;
    }
}

FaultReason Translator::check_input(const ContextInfo& ctx, uint64_t iova)
{
    if (ctx.fs) {
        // 4-level first-stage input: bits 63:48 copy bit 47 (canonical).
        auto high = static_cast<int64_t>(iova) >> 47;
        return high == 0 || high == -1 ? FaultReason::None : sm(SmFault::NonCanonical);
    }
    unsigned agaw = ctx.aw == 1 ? 39 : 48;
    if (iova >> agaw)
        return ctx.sm ? sm(SmFault::AddressBeyondAw) : FaultReason::AddressBeyondAw;
    return FaultReason::None;
}

// The 8-byte entry at `at`, `expected` in guest memory, becomes `desired`, atomically on
// the host (a mapping of guest RAM): Done; Changed when it no longer held `expected`;
// Failed when it is not RAM that can be mapped.
Translator::AdUpdate Translator::update_ad(uint64_t at, uint64_t expected, uint64_t desired)
{
    auto le = [](uint64_t v) {
        return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
    };
    DmaMemory::Mapping m =
        s_.call_out([&] { return s_.host.memory.map(at, FlPte::kSize, Access::Write, {}); });
    if (!m)
        return AdUpdate::Failed;
    AdUpdate u = AdUpdate::Failed;
    if (m.len >= FlPte::kSize && reinterpret_cast<uintptr_t>(m.host) % alignof(uint64_t) == 0) {
        uint64_t old = le(expected);
        bool swapped =
            __atomic_compare_exchange_n(static_cast<uint64_t*>(m.host), &old, le(desired), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        u = swapped ? AdUpdate::Done : AdUpdate::Changed;
    }
    s_.call_out([&] {
        s_.host.memory.unmap(m, Access::Write, u == AdUpdate::Done ? FlPte::kSize : 0);
        return 0;
    });
    return u;
}

// First-stage tables (9.7), 4-level: every entry on the way must be present and, the
// request being a user one (requests without a PASID; RID_PRIV is not offered), allow user
// access; a write needs RW at every level. The unit sets A in each entry it uses and D in
// the leaf for a write, as the CPU's paging does; a failed update is an access error.
FaultReason Translator::walk_fs(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
                                bool count)
{
    const uint64_t haw_mask = ~(pow2(s_.config.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    uint64_t table = ctx.slptptr;
    if (table & haw_mask)
        return sm(SmFault::FsPointer);
    if (count)
        s_.counters.page_walks++;
    const bool write = perm & Unit::kWrite;
    bool w = true;
    unsigned top = 4;
    // The audit (count false) reads the tables in memory, never the caches.
    if (PscEntry p; count && psc_on()) {
        if (unsigned at = psc_find(ctx, iova, 4, p, true)) {
            // Cached entries were present, user and had A set when filled; the write
            // permission they gathered goes on down the walk.
            table = p.table;
            w = p.w;
            top = at - 1;
        }
    }
    for (unsigned level = top; level >= 1; level--) {
        const unsigned shift = 12 + 9 * (level - 1);
        const uint64_t at = table + ((iova >> shift) & 511) * FlPte::kSize;
        FlPte pte;
        bool leaf = false;
        // The entry, checked; and A (and D) set in it if they are not. The update is a
        // compare-and-exchange, as the CPU's is: an entry software changed since it was read
        // (a vCPU runs beside the device) is read and checked again, never overwritten.
        for (unsigned attempt = 0;; attempt++) {
            uint8_t raw[FlPte::kSize] = {};
            DmaResult res =
                s_.call_out([&] { return s_.host.memory.read(at, raw, sizeof raw, {}); });
            if (count)
                s_.counters.walk_reads++;
            if (!res.ok())
                return sm(SmFault::FsAccess);
            pte = FlPte{load_le(raw, 8)};
            if (!pte.present())
                return sm(SmFault::FsNotPresent);
            const bool large = pte.page_size() && (level == 2 || level == 3);
            leaf = level == 1 || large;
            // PS is reserved at level 4 (at level 3 it needs CAP.FL1GP, advertised); a
            // large page's address bits below its size, other than PAT (bit 12), are too.
            bool reserved = (pte.address() & haw_mask) || (level == 4 && pte.page_size()) ||
                            (pte.execute_disable() && !ctx.nxe) ||
                            (large && (pte.address() & (pow2(shift) - 1) & ~uint64_t{0x1000}));
            if (reserved)
                return sm(SmFault::FsReserved);
            if (!pte.user())
                return sm(SmFault::UserSupervisor);
            if (write && !(w && pte.writable()))
                return sm(SmFault::Write);
            uint64_t set = 0;
            if (perm && !pte.accessed())
                set |= field_mask(flpte::F, "A");
            if (leaf && write && !pte.dirty())
                set |= field_mask(flpte::F, "D");
            if (!set)
                break;
            AdUpdate u = update_ad(at, pte.v, pte.v | set);
            if (u == AdUpdate::Done) {
                s_.counters.fs_ad_updates++;
                pte.v |= set;
                break;
            }
            // Not RAM (a register, ROM, nothing), or an entry that keeps changing.
            if (u == AdUpdate::Failed || attempt == 3)
                return sm(SmFault::FsAccess);
        }
        w = w && pte.writable();
        if (leaf) {
            out.page = pte.address() & ~(pow2(shift) - 1);
            out.shift = shift;
            out.r = true;
            out.w = w;
            out.d = pte.dirty();
            return FaultReason::None;
        }
        // Only an entry whose A is set is cached (a query sets none), as the CPU's
        // paging-structure caches do.
        if (count && pte.accessed())
            psc_fill(ctx, iova, level, pte.address(), true, w);
        table = pte.address();
    }
    return sm(SmFault::FsAccess); // not reached: level 1 is always a leaf
}

unsigned Translator::psc_find(const ContextInfo& ctx, uint64_t iova, unsigned levels, PscEntry& out,
                              bool count)
{
    for (unsigned i = 0; i < Caches::kPscLevels && i + 2 <= levels; i++) {
        auto& c = caches_.psc[i];
        if (!c)
            continue;
        uint64_t tag =
            Caches::psc_tag(ctx.did, ctx.pasid, ctx.fs, in48(iova) >> Caches::psc_shift(i));
        PscEntry* e = c->find(c->set_of(tag), tag);
        if (e && e->pasid == ctx.pasid) {
            if (count)
                s_.counters.psc_hits[i]++;
            out = *e;
            return i + 2;
        }
    }
    if (count)
        s_.counters.psc_misses++;
    return 0;
}

void Translator::psc_fill(const ContextInfo& ctx, uint64_t iova, unsigned level, uint64_t table,
                          bool r, bool w)
{
    if (level < 2 || level - 2 >= Caches::kPscLevels || !caches_.psc[level - 2])
        return;
    auto& c = *caches_.psc[level - 2];
    const uint64_t region = in48(iova) >> Caches::psc_shift(level - 2);
    const uint64_t tag = Caches::psc_tag(ctx.did, ctx.pasid, ctx.fs, region);
    const unsigned set = c.set_of(tag);
    c.drop(set, tag); // another PASID's entry under the same tag, or an older one
    c.insert(set, tag, ctx.did, PscEntry{table, region, ctx.pasid, r, w});
}

FaultReason Translator::walk(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
                             bool count)
{
    if (ctx.fs)
        return walk_fs(ctx, iova, perm, out, count);
    if (ctx.sm) {
        if (ctx.slptptr & ~(pow2(s_.config.aw_bits) - 1))
            return sm(SmFault::SsPointer);
        return second_stage_sm(walk_ss(ctx, iova, perm, out, count));
    }
    return walk_ss(ctx, iova, perm, out, count);
}

FaultReason Translator::walk_ss(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
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
    const bool psc = count && psc_on(); // the audit reads memory, never the caches
    PscEntry p;
    if (unsigned at = psc ? psc_find(ctx, iova, levels, p, true) : 0) {
        r = p.r;
        w = p.w;
        table = p.table;
        top = at - 1;
        if (m.on && at == 2)
            m.reached_leaf_table(ctx.slptptr, levels, iova, table, r, w);
    } else if (!psc && m.on && m.have_upper && m.upper_root == table && m.upper_levels == levels &&
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
        if (psc)
            psc_fill(ctx, iova, level, addr, r, w);
        if (m.on && level == 2)
            m.reached_leaf_table(ctx.slptptr, levels, iova, addr, r, w);
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
