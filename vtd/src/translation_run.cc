// SPDX-License-Identifier: GPL-2.0-or-later
// Runs of pages for a DMA engine (Unit::translate_run): each page as translate() would do
// it, with each paging entry read from memory once per call.

#include <algorithm>

#include "parts.h"

namespace dmalab::vtd
{

DmaResult Translator::read_entry(uint64_t table, uint64_t idx, unsigned level, SlPte& pte)
{
    Memo& m = *memo_;
    uint8_t raw[SlPte::kSize] = {};
    if (m.on && level == 1) {
        if (!m.have_leaf || m.leaf != table) {
            DmaResult all = s_.call_out(
                [&] { return s_.host.memory.read(table, m.leaf_bytes, sizeof m.leaf_bytes, {}); });
            m.have_leaf = all.ok();
            m.leaf = table;
        }
        if (m.have_leaf) {
            pte = SlPte::from(m.leaf_bytes + idx * SlPte::kSize);
            return DmaResult::success(SlPte::kSize);
        }
    } else if (m.on && m.have[level] && m.at[level] == table + idx * SlPte::kSize) {
        pte = m.value[level];
        return DmaResult::success(SlPte::kSize);
    }
    DmaResult r = s_.call_out(
        [&] { return s_.host.memory.read(table + idx * SlPte::kSize, raw, sizeof raw, {}); });
    pte = SlPte::from(raw);
    if (m.on && r.ok() && level < 5) {
        m.at[level] = table + idx * SlPte::kSize;
        m.value[level] = pte;
        m.have[level] = true;
    }
    return r;
}

Unit::Run Translator::translate_run(uint16_t sid, uint32_t pasid, uint64_t iova, uint64_t len,
                                    unsigned perm)
{
    Unit::Run run;
    Memo& m = *memo_;
    m.on = true;
    m.have_leaf = false;
    m.have_upper = false;
    for (bool& h : m.have)
        h = false;
    len = std::min(len, Unit::kMaxRun);
    run.first = translate(sid, pasid, iova, perm);
    if (run.first.ok && len) {
        const Translation& f = run.first;
        const uint64_t out = f.addr + (iova - f.iova);
        uint64_t page_end = f.iova + f.mask; // last byte of the page
        run.len = std::min(len, page_end - iova + 1);
        while (run.len < len && page_end != ~uint64_t{0}) {
            uint64_t next = page_end + 1;
            // (requests with a PASID are refused page by page below)
            uint64_t pages = pasid != kNoPasid
                                 ? 0
                                 : extend_run(sid, next, perm, (len - run.len + 0xfff) >> 12,
                                              out + run.len, f.read, f.write);
            if (pages) {
                run.len = std::min(len, run.len + (pages << 12));
                page_end = next + (pages << 12) - 1;
                continue;
            }
            Translation t = translate(sid, pasid, next, perm);
            if (!t.ok || t.addr + (next - t.iova) != out + run.len || t.read != f.read ||
                t.write != f.write)
                break;
            page_end = t.iova + t.mask;
            run.len += std::min(len - run.len, page_end - next + 1);
        }
    }
    m.on = false;
    return run;
}

uint64_t Translator::extend_run(uint16_t sid, uint64_t iova, unsigned perm, uint64_t max_pages,
                                uint64_t out, bool r0, bool w0)
{
    const Memo& m = *memo_;
    ContextInfo* ctx = last_context_;
    // Whatever translate() would treat otherwise goes to it: fault rules and audits, the
    // previous page's front entry, cached large pages (each a lookup of its own), another
    // requester, and a page outside the leaf table this call read whole.
    if (s_.injector || s_.config.audit || !te_ || !ctx || ctx->sid != sid ||
        ctx->tt == TT::Passthrough || ctx->fs || !m.have_upper || !m.have_leaf ||
        m.leaf != m.upper_table || m.upper_root != ctx->slptptr ||
        m.upper_levels != (ctx->aw == 1 ? 3u : 4u) || m.upper_region != iova >> 21 ||
        (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base) ||
        caches_.iotlb.kind_size(1) || caches_.iotlb.kind_size(2))
        return 0;
    // The pages below stay in iova's leaf table, whose 2 MiB the interrupt address range
    // either fills the first half of or misses: a run reaches that range only through
    // translate(), which refuses it.
    static_assert(kInterruptRangeBase % (uint64_t{2} << 20) == 0 &&
                  kInterruptRangeSize <= (uint64_t{2} << 20));
    const uint64_t haw_mask = ~(pow2(s_.config.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    const bool need_r = perm & Unit::kRead, need_w = perm & Unit::kWrite;
    // Pages up to the end of the leaf table; each one below stays 4 KiB (no large entry is
    // cached, and filling 4 KiB entries evicts only 4 KiB ones).
    const uint64_t first = iova >> 12;
    const uint64_t last = std::min(first + max_pages, ((iova >> 21) + 1) << 9);
    // Each walk below reads the levels above again, or with the paging-structure caches on,
    // starts below the cached PDE of this leaf table and reads the leaf only. Without that
    // entry (evicted, or the PDE cache off), translate() walks.
    uint64_t reads_per_walk = m.upper_levels;
    SetAssoc<PscEntry>::Probe pde;
    unsigned pde_set = 0;
    if (psc_on()) {
        auto& c = caches_.psc[0];
        if (!c)
            return 0;
        uint64_t tag = Caches::psc_tag(ctx->did, ctx->pasid, false, in48(iova) >> 21);
        pde_set = c->set_of(tag);
        pde = c->probe(pde_set, tag);
        if (!pde.found())
            return 0;
        const PscEntry& e = c->at(pde);
        if (e.pasid != ctx->pasid || e.table != m.upper_table || e.r != m.upper_r ||
            e.w != m.upper_w)
            return 0;
        reads_per_walk = 1;
    }
    uint64_t vpn = first, walked = 0;
    TlbEntry* slot = nullptr;
    for (; vpn < last; vpn++, out += 0x1000) {
        const uint64_t tag = Caches::iotlb_tag(ctx->did, ctx->pasid, vpn, 12);
        const unsigned set = caches_.iotlb_set(tag);
        auto p = caches_.iotlb.probe(set, tag); // changes nothing yet
        uint64_t page;
        bool r, w;
        if (p.found()) {
            const TlbEntry& e = caches_.iotlb.at(p);
            // The tag holds the PASID's bits 14:0 only: another PASID's entry is iotlb_find's
            // miss, and fill()'s to replace.
            if (e.pasid != ctx->pasid)
                break;
            page = e.page;
            r = e.r;
            w = e.w;
        } else {
            // walk()'s checks of a level-1 entry (present, reserved bits); a fault is walk()'s.
            SlPte pte = SlPte::from(m.leaf_bytes + (vpn & 511) * SlPte::kSize);
            if (!pte.present() || pte.reserved_set(haw_mask, s_.config.dt))
                break;
            page = pte.address();
            r = m.upper_r && pte.read();
            w = m.upper_w && pte.write();
        }
        // A page that ends the run, or that translate() would refuse, is left to it: this
        // page would be translated, counted and filled just the same there.
        if (page != out || r != r0 || w != w0 || (need_r && !r) || (need_w && !w))
            break;
        s_.counters.translations++;
        s_.counters.context_hits++;
        caches_.context.touch(ctx);
        if (p.found()) {
            s_.counters.iotlb_hits++;
            slot = caches_.iotlb.use(p);
        } else {
            s_.counters.iotlb_misses++;
            s_.counters.page_walks++;
            walked++;
            // Every field fill() gives an entry: the PASID a PASID-based invalidation selects
            // by (6.5.2.4), and D (second stage: always set).
            slot = caches_.iotlb.fill(set, p, tag, ctx->did,
                                      TlbEntry{ctx->did, 12, r, w, vpn, page, ctx->pasid, true});
            if (p.evict)
                s_.counters.iotlb_evictions++;
        }
    }
    if (vpn == first)
        return 0;
    s_.counters.walk_reads += walked * reads_per_walk;
    charge(sid, walked * reads_per_walk * s_.config.walk_read_ns);
    if (pde.found() && walked) {
        s_.counters.psc_hits[0] += walked;
        caches_.psc[0]->use(pde);
    }
    const uint64_t base = (vpn - 1) << 12;
    front_ = {true, sid, base, 0xfff, out - 0x1000, r0, w0, ctx->fpd, slot, stage_of(*ctx)};
    return vpn - first;
}

} // namespace dmalab::vtd
