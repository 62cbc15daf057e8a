// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's translation (3.6, 9): the context cache, the walk, the IOTLB, runs of pages
// for a DMA engine, and what walks cost the requesters.

#include "unit_parts.h"

#include <algorithm>
#include <cstring>

#include "dmalab/le.h"
#include "dmalab/vtd/entries.h"
#include "dmalab/vtd/faults.h"

namespace dmalab::vtd
{

// ---- Translation (3.6, 9) ----

// The 128-bit entry (root or context, 9.1 and 9.3) at addr; zeros where the read failed.
template <class E> DmaResult Unit::read_entry128(uint64_t addr, E& out)
{
    uint8_t raw[E::kSize] = {};
    depth_++;
    DmaResult r = host_.memory.read(addr, raw, sizeof raw, {});
    depth_--;
    out = E::from(raw);
    return r;
}

bool Unit::context_for(uint16_t sid, Context& out, uint8_t& reason)
{
    if (last_context_ && last_context_->sid == sid) {
        counters_.context_hits++;
        caches_->context.touch(last_context_);
        out = *last_context_;
        return true;
    }
    unsigned set = caches_->context_set(sid);
    if (Context* c = caches_->context.find(set, Caches::context_tag(sid))) {
        counters_.context_hits++;
        last_context_ = c;
        out = *c;
        return true;
    }
    counters_.context_misses++;
    charge(sid, 2 * config_.walk_read_ns); // the root and the context entry
    uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1);
    if (!root_valid_ || (root_ & haw_mask)) {
        reason = FR_ROOT_TABLE;
        return false;
    }
    RootEntry re;
    if (!read_entry128(root_ + (sid >> 8) * RootEntry::kSize, re).ok()) {
        reason = FR_ROOT_TABLE;
        return false;
    }
    if (!re.present()) {
        reason = FR_ROOT_NOT_PRESENT;
        return false;
    }
    if (re.reserved_set(haw_mask)) {
        reason = FR_ROOT_RESERVED;
        return false;
    }
    ContextEntry ce;
    if (!read_entry128(re.context_table_pointer() + (sid & 0xffu) * ContextEntry::kSize, ce).ok()) {
        reason = FR_CONTEXT_TABLE;
        return false;
    }
    if (!ce.present()) {
        reason = FR_CONTEXT_NOT_PRESENT;
        return false;
    }
    out.fpd = ce.fault_processing_disable();
    if (ce.reserved_set(haw_mask) || ce.domain_id() >= kDomainIds) {
        reason = FR_CONTEXT_RESERVED;
        return false;
    }
    out.sid = sid;
    out.tt = ce.translation_type();
    out.aw = ce.address_width();
    out.did = static_cast<uint16_t>(ce.domain_id());
    out.slptptr = ce.slptptr();
    bool aw_ok = out.aw == 1 || (out.aw == 2 && config_.aw_bits >= 48);
    if (!(out.tt == TT_UNTRANSLATED && aw_ok) && !(out.tt == TT_PASSTHROUGH && config_.pt)) {
        reason = FR_CONTEXT_INVALID;
        return false;
    }
    auto [where, evicted] = caches_->context.insert(set, Caches::context_tag(sid), out.did, out);
    if (evicted) {
        counters_.context_evictions++;
        forget();
    }
    last_context_ = where;
    return true;
}

bool Unit::walk(const Context& ctx, uint64_t iova, unsigned perm, Walk& out, uint8_t& reason,
                bool count)
{
    unsigned levels = ctx.aw == 1 ? 3 : 4;
    uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    uint64_t table = ctx.slptptr;
    bool r = true, w = true;
    if (count)
        counters_.page_walks++;
    unsigned top = levels;
    Memo& m = *memo_;
    if (m.on && m.have_upper && m.upper_root == table && m.upper_levels == levels &&
        m.upper_region == iova >> 21) {
        // translate_run: the levels above the leaf table were read for this 2 MiB region
        // earlier in the call and are counted as read again.
        if (count)
            counters_.walk_reads += levels - 1;
        r = m.upper_r;
        w = m.upper_w;
        table = m.upper_table;
        top = 1;
    }
    for (unsigned level = top; level >= 1; level--) {
        unsigned shift = 12 + 9 * (level - 1);
        uint64_t idx = (iova >> shift) & 511;
        SlPte pte;
        if (table & ~(pow2(config_.aw_bits) - 1)) {
            reason = FR_PAGE_TABLE;
            return false;
        }
        DmaResult res = read_entry(table, idx, level, pte);
        if (count)
            counters_.walk_reads++;
        if (!res.ok()) {
            reason = FR_PAGE_TABLE;
            return false;
        }
        if (!pte.present()) {
            reason = (perm & kWrite) ? FR_WRITE : FR_READ;
            return false;
        }
        bool leaf = level == 1 || (pte.page_size() && level <= 3);
        // PS is reserved at level 4; a large page's address bits inside the page are too.
        bool reserved = pte.reserved_set(haw_mask) || (level == 4 && pte.page_size()) ||
                        (leaf && level > 1 && (pte.address() & (pow2(shift) - 1)));
        if (reserved) {
            reason = FR_PAGE_RESERVED;
            return false;
        }
        r = r && pte.read();
        w = w && pte.write();
        uint64_t addr = pte.address();
        if (leaf) {
            out.page = addr & ~(pow2(shift) - 1);
            out.shift = shift;
            out.r = r;
            out.w = w;
            return true;
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
    reason = FR_PAGE_TABLE; // not reached: level 1 is always a leaf
    return false;
}

DmaResult Unit::read_entry(uint64_t table, uint64_t idx, unsigned level, SlPte& pte)
{
    Memo& m = *memo_;
    uint8_t raw[SlPte::kSize] = {};
    if (m.on && level == 1) {
        if (!m.have_leaf || m.leaf != table) {
            depth_++;
            DmaResult all = host_.memory.read(table, m.leaf_bytes, sizeof m.leaf_bytes, {});
            depth_--;
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
    depth_++;
    DmaResult r = host_.memory.read(table + idx * SlPte::kSize, raw, sizeof raw, {});
    depth_--;
    pte = SlPte::from(raw);
    if (m.on && r.ok() && level < 5) {
        m.at[level] = table + idx * SlPte::kSize;
        m.value[level] = pte;
        m.have[level] = true;
    }
    return r;
}

Unit::Run Unit::translate_run(uint16_t sid, uint64_t iova, uint64_t len, unsigned perm)
{
    Run run;
    Memo& m = *memo_;
    m.on = true;
    m.have_leaf = false;
    m.have_upper = false;
    for (bool& h : m.have)
        h = false;
    len = std::min(len, kMaxRun);
    run.first = translate(sid, iova, perm);
    if (run.first.ok && len) {
        const Translation& f = run.first;
        const uint64_t out = f.addr + (iova - f.iova);
        uint64_t page_end = f.iova + f.mask; // last byte of the page
        run.len = std::min(len, page_end - iova + 1);
        while (run.len < len && page_end != ~uint64_t{0}) {
            uint64_t next = page_end + 1;
            uint64_t pages = extend_run(sid, next, perm, (len - run.len + 0xfff) >> 12,
                                        out + run.len, f.read, f.write);
            if (pages) {
                run.len = std::min(len, run.len + (pages << 12));
                page_end = next + (pages << 12) - 1;
                continue;
            }
            Translation t = translate(sid, next, perm);
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

Translation Unit::refuse(uint16_t sid, uint64_t iova, unsigned perm, uint8_t reason, bool record)
{
    Translation t;
    t.fault_reason = reason;
    t.iova = iova & ~uint64_t{0xfff};
    t.mask = 0xfff;
    if (perm == 0)
        return t; // a query records nothing
    counters_.faults++;
    bool write = perm & kWrite;
    if (record)
        record_fault(sid, iova, write, reason);
    if (host_.observer)
        host_.observer->fault(sid, iova, write, reason, record);
    return t;
}

void Unit::audit(uint16_t sid, const Context& ctx, uint64_t iova, uint64_t cached, bool r, bool w)
{
    counters_.audit_checks++;
    Walk now;
    uint8_t reason = 0;
    bool ok = walk(ctx, iova, 0, now, reason, false);
    uint64_t now_addr = ok ? now.page + (iova & (pow2(now.shift) - 1) & ~uint64_t{0xfff}) : 0;
    if (ok && now_addr == cached && now.r == r && now.w == w)
        return;
    counters_.audit_stale++;
    if (host_.observer)
        host_.observer->stale(sid, iova, cached, now_addr, ok ? 0 : reason);
}

Translation Unit::translate(uint16_t sid, uint64_t iova, unsigned perm)
{
    Translation t;
    if (!translation_enabled()) {
        t.ok = true;
        t.iova = iova & ~uint64_t{0xfff};
        t.addr = t.iova;
        t.mask = 0xfff;
        t.read = t.write = true;
        return t;
    }
    counters_.translations++;
    if (injector_ && perm) {
        uint8_t reason = 0;
        faults::Occasion o{};
        o.kinds = 1u << static_cast<unsigned>(faults::Kind::TranslationFault);
        o.unit = sid;
        o.op = (perm & kWrite) ? kFaultOpWrite : kFaultOpRead;
        o.key = iova;
        o.start[0] = iova;
        o.end[0] = iova == ~uint64_t{0} ? iova : iova + 1;
        injector_->decide(o, host_.timers.now_ns(),
                          [&](const faults::Rule& r) { reason = r.reason; });
        if (reason)
            return refuse(sid, iova, perm, reason, true);
    }
    if (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base &&
        !config_.audit) {
        counters_.context_hits++;
        counters_.iotlb_hits++;
        caches_->iotlb.touch(front_.entry);
        if ((perm & kWrite) && !front_.w)
            return refuse(sid, iova, perm, FR_WRITE, !front_.fpd);
        if ((perm & kRead) && !front_.r)
            return refuse(sid, iova, perm, FR_READ, !front_.fpd);
        t.ok = true;
        t.translated = true;
        t.mask = front_.mask;
        t.iova = front_.base;
        t.addr = front_.page;
        t.read = front_.r;
        t.write = front_.w;
        return t;
    }
    Context ctx;
    uint8_t reason = 0;
    if (!context_for(sid, ctx, reason))
        return refuse(sid, iova, perm, reason, !ctx.fpd);
    if (ctx.tt == TT_PASSTHROUGH) {
        t.ok = true;
        t.iova = iova & ~uint64_t{0xfff};
        t.addr = t.iova;
        t.mask = 0xfff;
        t.read = t.write = true;
        return t;
    }
    unsigned agaw = ctx.aw == 1 ? 39 : 48;
    if (iova >> agaw)
        return refuse(sid, iova, perm, FR_ADDRESS_BEYOND_AW, !ctx.fpd);

    TlbEntry* hit = nullptr;
    for (unsigned shift : {12u, 21u, 30u}) {
        // No entry of this page size is cached anywhere: the lookup would miss.
        if (caches_->iotlb.kind_size((shift - 12) / 9) == 0)
            continue;
        uint64_t vpn = iova >> shift;
        uint64_t tag = Caches::iotlb_tag(ctx.did, vpn, shift);
        hit = caches_->iotlb.find(caches_->iotlb_set(tag), tag);
        if (hit)
            break;
    }
    TlbEntry e;
    TlbEntry* slot = hit;
    if (hit) {
        counters_.iotlb_hits++;
        e = *hit;
        if (config_.audit)
            audit(sid, ctx, iova, e.page + (iova & (pow2(e.shift) - 1) & ~uint64_t{0xfff}), e.r,
                  e.w);
    } else {
        counters_.iotlb_misses++;
        Walk w;
        uint64_t reads = counters_.walk_reads;
        bool walked = walk(ctx, iova, perm, w, reason, true);
        charge(sid, (counters_.walk_reads - reads) * config_.walk_read_ns);
        if (!walked)
            return refuse(sid, iova, perm, reason, !ctx.fpd);
        e = {ctx.did, static_cast<uint8_t>(w.shift), w.r, w.w, iova >> w.shift, w.page};
        uint64_t tag = Caches::iotlb_tag(ctx.did, e.vpn, w.shift);
        auto [where, evicted] =
            caches_->iotlb.insert(caches_->iotlb_set(tag), tag, ctx.did, e, (w.shift - 12) / 9);
        slot = where;
        // An eviction can only have replaced the front entry, which is set again below;
        // the context cache is untouched.
        if (evicted)
            counters_.iotlb_evictions++;
    }
    return answer(sid, iova, perm, e.shift, e.page, e.r, e.w, ctx.fpd, slot);
}

Translation Unit::answer(uint16_t sid, uint64_t iova, unsigned perm, unsigned shift, uint64_t page,
                         bool r, bool w, bool fpd, TlbEntry* slot)
{
    front_ = {true, sid, iova & ~(pow2(shift) - 1), pow2(shift) - 1, page, r, w, fpd, slot};
    if ((perm & kWrite) && !w)
        return refuse(sid, iova, perm, FR_WRITE, !fpd);
    if ((perm & kRead) && !r)
        return refuse(sid, iova, perm, FR_READ, !fpd);
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

uint64_t Unit::extend_run(uint16_t sid, uint64_t iova, unsigned perm, uint64_t max_pages,
                          uint64_t out, bool r0, bool w0)
{
    const Memo& m = *memo_;
    Context* ctx = last_context_;
    // Whatever translate() would treat otherwise goes to it: fault rules and audits, the
    // previous page's front entry, cached large pages (each a lookup of its own), another
    // requester, and a page outside the leaf table this call read whole.
    if (injector_ || config_.audit || !translation_enabled() || !ctx || ctx->sid != sid ||
        ctx->tt != TT_UNTRANSLATED || !m.have_upper || !m.have_leaf || m.leaf != m.upper_table ||
        m.upper_root != ctx->slptptr || m.upper_levels != (ctx->aw == 1 ? 3u : 4u) ||
        m.upper_region != iova >> 21 ||
        (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base) ||
        caches_->iotlb.kind_size(1) || caches_->iotlb.kind_size(2))
        return 0;
    const uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    const bool need_r = perm & kRead, need_w = perm & kWrite;
    // Pages up to the end of the leaf table; each one below stays 4 KiB (no large entry is
    // cached, and filling 4 KiB entries evicts only 4 KiB ones).
    const uint64_t first = iova >> 12;
    const uint64_t last = std::min(first + max_pages, ((iova >> 21) + 1) << 9);
    uint64_t vpn = first, walked = 0;
    TlbEntry* slot = nullptr;
    for (; vpn < last; vpn++, out += 0x1000) {
        const uint64_t tag = Caches::iotlb_tag(ctx->did, vpn, 12);
        const unsigned set = caches_->iotlb_set(tag);
        auto p = caches_->iotlb.probe(set, tag); // changes nothing yet
        uint64_t page;
        bool r, w;
        if (p.found()) {
            const TlbEntry& e = caches_->iotlb.at(p);
            page = e.page;
            r = e.r;
            w = e.w;
        } else {
            // walk()'s checks of a level-1 entry (present, reserved bits); a fault is walk()'s.
            SlPte pte = SlPte::from(m.leaf_bytes + (vpn & 511) * SlPte::kSize);
            if (!pte.present() || pte.reserved_set(haw_mask))
                break;
            page = pte.address();
            r = m.upper_r && pte.read();
            w = m.upper_w && pte.write();
        }
        // A page that ends the run, or that translate() would refuse, is left to it: this
        // page would be translated, counted and filled just the same there.
        if (page != out || r != r0 || w != w0 || (need_r && !r) || (need_w && !w))
            break;
        counters_.translations++;
        counters_.context_hits++;
        caches_->context.touch(ctx);
        if (p.found()) {
            counters_.iotlb_hits++;
            slot = caches_->iotlb.use(p);
        } else {
            counters_.iotlb_misses++;
            counters_.page_walks++;
            walked++;
            slot =
                caches_->iotlb.fill(set, p, tag, ctx->did, TlbEntry{ctx->did, 12, r, w, vpn, page});
            if (p.evict)
                counters_.iotlb_evictions++;
        }
    }
    if (vpn == first)
        return 0;
    // The levels above counted as read again by every walk.
    counters_.walk_reads += walked * m.upper_levels;
    charge(sid, walked * m.upper_levels * config_.walk_read_ns);
    const uint64_t base = (vpn - 1) << 12;
    front_ = {true, sid, base, 0xfff, out - 0x1000, r0, w0, ctx->fpd, slot};
    return vpn - first;
}

// ---- What walks cost the requesters ----

void Unit::charge(uint16_t sid, uint64_t ns)
{
    if (ns == 0)
        return;
    counters_.walk_cost_ns += ns;
    for (unsigned i = 0; i < kCostSlots; i++) {
        Cost& c = costs_[(sid + i) % kCostSlots];
        if (c.key == 0u || c.key == sid + 1u) {
            c.key = sid + 1u;
            c.ns = sat_add(c.ns, ns);
            return;
        }
    }
}

uint64_t Unit::take_cost(uint16_t sid)
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
