// SPDX-License-Identifier: GPL-2.0-or-later
// pcie-bench's latency sweep of random 64-byte DMA reads, replayed through the VT-d model on
// the host: a window of IOVA space mapped with 4 KiB second-level pages, addresses drawn
// uniformly in it (64-byte units), each translated as the device's read would be, and what
// the unit's own counters say the translations cost. Shared by the tool
// (pciebench_replay.cc) and its test.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "../tests/rig.h"
#include "dmalab/prng.h"

namespace dmalab::vtd::replay
{

inline constexpr uint64_t kPage = 4096;
inline constexpr uint64_t kUnit = 64; // bytes a read moves; addresses are multiples of it

// Where the window's bytes lie in IOVA space: chunks of chunk_size bytes, filled in order
// (byte b of the window is at chunks[b / chunk_size] + b % chunk_size).
struct Layout {
    std::vector<uint64_t> chunks;
    uint64_t chunk_size = 0;

    uint64_t capacity() const { return chunks.size() * chunk_size; }
    uint64_t iova(uint64_t offset) const
    {
        return chunks[offset / chunk_size] + offset % chunk_size;
    }
};

// The IOVAs of pcie-bench's sixteen 4 MiB host buffers in the E5-2620 v3 run with 4 KiB
// IOMMU pages, in the order a window runs through them (pcie-bench/data, commit
// 35825258e3d1c8da8a0e4800d2b659b9a32b41fb, still so at b2abf2f78ac28837c8ecda200f7d898d779340d3:
// nfp6000-1.2GHz_hsw-Xeon-E5-2620v3_dell-t630-iommu-nosp/sys-dma-addrs.txt). Linux left out
// 0xfec00000, whose 4 MiB hold the interrupt address range, which the unit never translates.
inline Layout pciebench_layout()
{
    return {{0xffc00000, 0xff800000, 0xff400000, 0xff000000, 0xfe800000, 0xfe400000, 0xfe000000,
             0xfdc00000, 0xfd800000, 0xfd400000, 0xfd000000, 0xfcc00000, 0xfc800000, 0xfc400000,
             0xfc000000, 0xfbc00000},
            uint64_t{4} << 20};
}

// One run of `size` bytes from `base`.
inline Layout contiguous_layout(uint64_t base, uint64_t size)
{
    return {{base}, size};
}

struct Options {
    uint64_t window = 0;          // bytes, a multiple of 4 KiB, at most the layout's capacity
    uint64_t reads = 2097152;     // translations measured
    uint64_t addresses = 1 << 20; // addresses drawn once, then replayed in a cycle
    unsigned warmup = 1;          // passes over the addresses before the measured ones
    uint64_t seed = 1;            // the addresses' generator
};

// What the measured translations did, from the unit's counters (after minus before) and from
// take_cost() after each translation.
struct Result {
    uint64_t translations = 0, iotlb_misses = 0, page_walks = 0, walk_reads = 0;
    uint64_t walk_cost_ns = 0, pde_hits = 0, faults = 0;
    uint64_t charged_ns = 0;                 // the sum of take_cost()
    std::map<uint64_t, uint64_t> cost_count; // take_cost() of one translation -> translations

    double mean_ns() const
    {
        return translations ? static_cast<double>(walk_cost_ns) / translations : 0.0;
    }
    // The smallest cost that at least `fraction` of the translations did not exceed.
    uint64_t quantile(double fraction) const
    {
        uint64_t total = 0;
        for (auto [ns, n] : cost_count)
            total += n;
        uint64_t seen = 0;
        for (auto [ns, n] : cost_count) {
            seen += n;
            if (static_cast<double>(seen) >= fraction * static_cast<double>(total))
                return ns;
        }
        return 0;
    }
};

// Why the window does not fit the layout, or nullptr.
inline const char* check(const Layout& layout, const Options& o)
{
    if (o.window == 0 || o.window % kPage)
        return "the window must be a positive multiple of 4 KiB";
    if (o.window > layout.capacity())
        return "the window is larger than the layout";
    if (o.addresses == 0)
        return "at least one address is needed";
    return nullptr;
}

// A unit configured by `c` (valid: vtd::check), requester 0x0010 in domain 1 with a 4-level
// second-level table mapping the window's pages with 4 KiB pages, translation on; then the
// warm-up and measured reads. The pages map to consecutive output pages; nothing reads them.
inline Result run(const Config& c, const Layout& layout, const Options& o)
{
    constexpr uint16_t kSid = 0x0010;
    constexpr uint64_t kOutput = uint64_t{1} << 32;
    auto rig = std::make_unique<testing::Rig>(c);
    uint64_t pgd = rig->basic(kSid, 1);
    for (uint64_t off = 0; off < o.window; off += kPage)
        rig->map(pgd, layout.iova(off), kOutput + off, true, false);

    Prng prng(o.seed);
    std::vector<uint64_t> addresses(o.addresses);
    for (uint64_t& a : addresses)
        a = layout.iova(prng.upto(o.window / kUnit - 1) * kUnit);

    for (unsigned pass = 0; pass < o.warmup; pass++)
        for (uint64_t a : addresses)
            rig->unit.translate(kSid, kNoPasid, a, Unit::kRead);
    rig->unit.take_cost(kSid);

    Result r;
    const Counters before = rig->unit.counters();
    for (uint64_t i = 0; i < o.reads; i++) {
        if (!rig->unit.translate(kSid, kNoPasid, addresses[i % addresses.size()], Unit::kRead).ok)
            r.faults++;
        uint64_t ns = rig->unit.take_cost(kSid);
        r.charged_ns += ns;
        r.cost_count[ns]++;
    }
    const Counters& after = rig->unit.counters();
    r.translations = after.translations - before.translations;
    r.iotlb_misses = after.iotlb_misses - before.iotlb_misses;
    r.page_walks = after.page_walks - before.page_walks;
    r.walk_reads = after.walk_reads - before.walk_reads;
    r.walk_cost_ns = after.walk_cost_ns - before.walk_cost_ns;
    r.pde_hits = after.psc_hits[0] - before.psc_hits[0];
    return r;
}

} // namespace dmalab::vtd::replay
