// SPDX-License-Identifier: GPL-2.0-or-later
// What the unit's parts share (unit.cc: registers, commands and state; invalidation.cc;
// fault_recording.cc; translation.cc): the register table's indices, the caches and the
// entries they hold.
#pragma once

#include <cstdint>

#include "cache.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd
{

// Register table indices.
enum : unsigned {
    R_VER,
    R_CAP,
    R_ECAP,
    R_GCMD,
    R_GSTS,
    R_RTADDR,
    R_CCMD,
    R_FSTS,
    R_FECTL,
    R_FEDATA,
    R_FEADDR,
    R_FEUADDR,
    R_IQH,
    R_IQT,
    R_IQA,
    R_ICS,
    R_IECTL,
    R_IEDATA,
    R_IEADDR,
    R_IEUADDR,
    R_IVA,
    R_IOTLB,
    R_FRCD0, // lower and upper qword of each record follow
    R_COUNT = R_FRCD0 + 2 * kFaultRecords,
};

// CAP.ND = 2: the domain ids the unit supports. A context entry naming a larger one is
// invalid (reserved), so nothing is ever cached under one.
inline constexpr unsigned kDomainIds = 256;

inline uint64_t pow2(unsigned n)
{
    return n >= 64 ? 0 : uint64_t{1} << n;
}

// A context entry as the unit uses it (cached in the context cache).
struct Unit::Context {
    uint16_t sid = 0;
    uint16_t did = 0;
    uint8_t tt = 0;
    uint8_t aw = 0; // 1: 39-bit 3-level, 2: 48-bit 4-level
    bool fpd = false;
    uint64_t slptptr = 0;
};

struct Unit::Walk {
    uint64_t page = 0; // output address of the page
    unsigned shift = 12;
    bool r = false, w = false;
};

struct TlbEntry {
    uint16_t did;
    uint8_t shift;
    bool r, w;
    uint64_t vpn;  // iova >> shift
    uint64_t page; // output address
};

class Caches
{
  public:
    Caches(const Config& c, Prng& prng)
        : context(c.context_entries, 4, kDomainIds, c.replacement, prng),
          iotlb(c.iotlb_entries, c.iotlb_ways, kDomainIds, c.replacement, prng)
    {
    }
    static uint64_t context_tag(uint16_t sid) { return uint64_t{1} << 63 | sid; }
    // vpn < 2^36 (input addresses below 2^48), did 16 bits, the page size in 2 bits.
    static uint64_t iotlb_tag(uint16_t did, uint64_t vpn, unsigned shift)
    {
        return uint64_t{1} << 63 | vpn << 20 | uint64_t{did} << 4 | (shift - 12) / 9;
    }
    unsigned context_set(uint16_t sid) const { return context.set_of(sid); }
    unsigned iotlb_set(uint64_t tag) const { return iotlb.set_of(tag); }
    void clear()
    {
        context.drop_all();
        iotlb.drop_all();
    }

    SetAssoc<Unit::Context> context;
    SetAssoc<TlbEntry> iotlb;
};

} // namespace dmalab::vtd
