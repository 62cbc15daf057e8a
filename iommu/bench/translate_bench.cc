// SPDX-License-Identifier: GPL-2.0-or-later
// Translation cost: IOTLB hits (on one page, and moving across pages) against a miss that
// walks four levels, in the same run. Page tables live in the fake memory (a vector), so a
// walk here is cheaper than in QEMU, where each paging-entry read is a memory access.
// Meaningful in an optimised build (meson setup -Dbuildtype=release).

#include <benchmark/benchmark.h>

#include "../tests/rig.h"

namespace
{

using dmalab::vtd::Config;
using dmalab::vtd::Unit;
using dmalab::vtd::testing::Rig;

constexpr uint64_t kPages = 512;

Rig* make(Config c)
{
    auto* r = new Rig(c);
    uint64_t pgd = r->basic();
    for (uint64_t i = 0; i < kPages; i++)
        r->map(pgd, i << 12, (0x800 + i) << 12);
    return r;
}

void Hit(benchmark::State& state)
{
    Config c;
    Rig* r = make(c);
    r->read(0x1000);
    for (auto _ : state)
        benchmark::DoNotOptimize(r->unit.translate(0x0010, 0x1234, Unit::kRead));
    delete r;
}
BENCHMARK(Hit);

// Hits that move from page to page (256 pages, all in a 512-entry IOTLB): the set lookup
// on every translation, as a device streaming through a mapped buffer sees it.
void HitAcrossPages(benchmark::State& state)
{
    Config c;
    Rig* r = make(c);
    for (uint64_t i = 0; i < 256; i++)
        r->read(i << 12);
    uint64_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(r->unit.translate(0x0010, (i & 255) << 12, Unit::kRead));
        i++;
    }
    if (r->unit.counters().iotlb_misses != 256)
        state.SkipWithError("the pages did not stay in the IOTLB");
    delete r;
}
BENCHMARK(HitAcrossPages);

// Every translation misses: the IOTLB has one entry and the pages alternate.
void MissFourLevelWalk(benchmark::State& state)
{
    Config c;
    c.iotlb_entries = 1;
    c.iotlb_ways = 1;
    Rig* r = make(c);
    uint64_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(r->unit.translate(0x0010, (i & 1) << 12, Unit::kRead));
        i++;
    }
    delete r;
}
BENCHMARK(MissFourLevelWalk);

} // namespace

BENCHMARK_MAIN();
