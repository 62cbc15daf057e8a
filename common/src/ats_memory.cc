// SPDX-License-Identifier: GPL-2.0-or-later
#include "dmalab/ats_memory.h"

#include <algorithm>

namespace dmalab
{

void AtsMemory::set_enabled(bool on)
{
    if (!on)
        clear();
    enabled_ = on;
}

void AtsMemory::clear()
{
    entries_ = {};
    next_ = 0;
}

void AtsMemory::invalidate(uint64_t first, uint64_t last)
{
    stats_.invalidations++;
    unsigned dropped = 0;
    if (first <= last) {
        for (Entry& e : entries_) {
            // inclusive ends: a range may end at 2^64 - 1
            if (e.valid && e.page <= last && e.page + (kPage - 1) >= first) {
                e = {};
                dropped++;
            }
        }
    }
    stats_.dropped += dropped;
    if (observer_)
        observer_->invalidated(first, last, dropped);
}

void AtsMemory::audit(const Entry& e, Access dir, const MemAttrs& attrs)
{
    stats_.audits++;
    AtsPort::Reply now = port_.translate(e.page, dir, attrs);
    bool now_ok = now.error == DmaError::None;
    if (now_ok && now.untranslated_only == e.untranslated_only &&
        (e.untranslated_only || (now.addr & ~(kPage - 1)) == e.addr))
        return;
    stats_.stale++;
    if (observer_)
        observer_->stale(e.page, e.addr, now_ok, now_ok ? now.addr : 0);
}

AtsMemory::Lookup AtsMemory::translate(uint64_t page, Access dir, const MemAttrs& attrs)
{
    Entry* hit = nullptr;
    for (Entry& e : entries_)
        if (e.valid && e.page == page) {
            hit = &e;
            break;
        }
    if (hit && (dir == Access::Read ? hit->read : hit->write)) {
        stats_.hits++;
        if (audit_)
            audit(*hit, dir, attrs);
        return {DmaError::None, hit->addr, hit->untranslated_only};
    }
    // A miss, or cached for the other direction only: ask.
    stats_.requests++;
    AtsPort::Reply r = port_.translate(page, dir, attrs);
    if (r.error != DmaError::None) {
        stats_.refused++;
        return {r.error == DmaError::Wrap ? DmaError::Unassigned : r.error, 0};
    }
    r.addr = r.untranslated_only ? 0 : r.addr & ~(kPage - 1);
    if (!hit || hit->addr != r.addr || hit->untranslated_only != r.untranslated_only) {
        if (!hit) {
            hit = &entries_[next_];
            next_ = (next_ + 1) % kEntries;
        }
        *hit = {page, r.addr, true, false, false, r.untranslated_only};
    }
    (dir == Access::Read ? hit->read : hit->write) = true;
    return {DmaError::None, r.addr, r.untranslated_only};
}

// Page by page: each piece goes to memory as a translated request, or as an untranslated one
// at its IOVA where the page's answer said U (so that VT-d's interrupt address range gets
// interrupt requests, not writes to what its tables map). A refused request ends the access
// with the IOMMU's answer at that page; the device raises its own error.
DmaResult AtsMemory::access(uint64_t addr, uint8_t* buf, size_t len, Access dir,
                            const MemAttrs& attrs)
{
    if (!enabled_ || len == 0 || wraps(addr, len))
        return dir == Access::Read ? bus_.read(addr, buf, len, attrs)
                                   : bus_.write(addr, buf, len, attrs);
    MemAttrs translated = attrs;
    translated.translated = true;
    uint64_t done = 0;
    while (done < len) {
        uint64_t iova = addr + done;
        uint64_t off = iova & (kPage - 1);
        uint64_t chunk = std::min<uint64_t>(len - done, kPage - off);
        Lookup t = translate(iova - off, dir, attrs);
        if (t.error != DmaError::None)
            return DmaResult::failure(t.error, iova, done);
        if (t.untranslated)
            stats_.untranslated++;
        uint64_t to = t.untranslated ? iova : t.addr + off;
        const MemAttrs& as = t.untranslated ? attrs : translated;
        DmaResult r = dir == Access::Read ? bus_.read(to, buf + done, chunk, as)
                                          : bus_.write(to, buf + done, chunk, as);
        if (!r.ok()) {
            // name the failing byte by its IOVA, as the device knows it
            uint64_t at =
                r.fault_addr >= to && r.fault_addr - to < chunk ? r.fault_addr - to : r.done;
            return DmaResult::failure(r.error, iova + at, done + r.done, r.fault_reason);
        }
        done += chunk;
    }
    return DmaResult::success(len);
}

DmaResult AtsMemory::read(uint64_t addr, void* buf, size_t len, const MemAttrs& attrs)
{
    return access(addr, static_cast<uint8_t*>(buf), len, Access::Read, attrs);
}

DmaResult AtsMemory::write(uint64_t addr, const void* buf, size_t len, const MemAttrs& attrs)
{
    // access() only reads from buf when it writes
    return access(addr, static_cast<uint8_t*>(const_cast<void*>(buf)), len, Access::Write, attrs);
}

DmaMemory::Mapping AtsMemory::map(uint64_t addr, size_t len, Access dir, const MemAttrs& attrs)
{
    if (!enabled_ || len == 0 || wraps(addr, len))
        return bus_.map(addr, len, dir, attrs);
    uint64_t off = addr & (kPage - 1);
    Lookup t = translate(addr - off, dir, attrs);
    if (t.error != DmaError::None)
        return {}; // read() and write() report it
    const size_t n = std::min<uint64_t>(len, kPage - off);
    if (t.untranslated) {
        stats_.untranslated++;
        return bus_.map(addr, n, dir, attrs);
    }
    MemAttrs translated = attrs;
    translated.translated = true;
    return bus_.map(t.addr + off, n, dir, translated);
}

} // namespace dmalab
