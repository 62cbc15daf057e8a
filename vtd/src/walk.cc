// SPDX-License-Identifier: GPL-2.0-or-later
// The walks (3.6, 9.7, 9.8): second-stage and first-stage tables, with the paging-structure
// caches that shorten them and the A/D updates of first-stage entries.

#include "dmalab/vtd/faults.h"
#include "parts.h"

namespace dmalab::vtd
{

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
    // FLPTR has bits 63:12, all of them checked: the entries' address fields end at bit 51.
    if (table & ~(pow2(s_.config.aw_bits) - 1))
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

} // namespace dmalab::vtd
