// SPDX-License-Identifier: GPL-2.0-or-later
// The interrupt address range in translation (3.14, 4.2.3): translate() gives no translation
// there, nor one that covers it, and an ATS translation request there is answered
// untranslated-only; everywhere else translate() is translation.cc's table lookup.

#include "parts.h"

namespace dmalab::vtd
{

// The interrupt address range's answer to translate(): no translation (3.14).
static Translation interrupt_range_refusal(uint64_t iova)
{
    Translation t;
    t.iova = iova & ~uint64_t{0xfff};
    t.mask = 0xfff;
    t.untranslated_only = true;
    return t;
}

static bool overlaps_interrupt_range(uint64_t base, uint64_t mask)
{
    return base <= kInterruptRangeBase + (kInterruptRangeSize - 1) &&
           kInterruptRangeBase <= base + mask;
}

// An answer for an address outside the interrupt address range whose page reaches into it
// (a large page mapped over it): the largest aligned piece of the page around iova that
// leaves the range out, 2 MiB or 4 KiB (the range is 2 MiB aligned).
static Translation outside_interrupt_range(Translation t, uint64_t iova)
{
    static_assert(kInterruptRangeBase % (uint64_t{2} << 20) == 0);
    if (!overlaps_interrupt_range(t.iova, t.mask))
        return t;
    for (uint64_t size : {uint64_t{2} << 20, uint64_t{4} << 10}) {
        const uint64_t base = iova & ~(size - 1);
        if (size - 1 < t.mask && !overlaps_interrupt_range(base, size - 1)) {
            t.addr += base - t.iova;
            t.iova = base;
            t.mask = size - 1;
            break;
        }
    }
    return t;
}

Translation Translator::translate(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm)
{
    if (in_interrupt_range(iova))
        return interrupt_range_refusal(iova);
    if (pasid != kNoPasid)
        return lookup_pasid(sid, pasid, iova, perm);
    return outside_interrupt_range(lookup(sid, iova, perm), iova);
}

// A translation request (4.2.3) for the interrupt address range is answered with R=0, W=1
// and U=1: the device may write there with untranslated requests only, which the platform
// takes as interrupt requests; the tables are not read. Elsewhere it is a query.
Translation Translator::translation_request(uint16_t sid, uint32_t pasid, uint64_t iova)
{
    s_.counters.ats_requests++;
    if (!in_interrupt_range(iova))
        return translate(sid, pasid, iova, 0);
    s_.counters.ats_untranslated_only++;
    Translation t = interrupt_range_refusal(iova);
    t.ok = true;
    t.addr = t.iova;
    t.write = true;
    return t;
}

} // namespace dmalab::vtd
