// SPDX-License-Identifier: GPL-2.0-or-later
// Translation cost: IOTLB hits (on one page, and moving across pages) against a miss that
// walks four levels, in the same run; and what a page-selective invalidation costs at the
// smallest and largest IOTLB sizes. Page tables live in the fake memory (a vector), so a
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
        benchmark::DoNotOptimize(r->unit.translate(0x0010, dmalab::kNoPasid, 0x1234, Unit::kRead));
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
        benchmark::DoNotOptimize(
            r->unit.translate(0x0010, dmalab::kNoPasid, (i & 255) << 12, Unit::kRead));
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
        benchmark::DoNotOptimize(
            r->unit.translate(0x0010, dmalab::kNoPasid, (i & 1) << 12, Unit::kRead));
        i++;
    }
    delete r;
}
BENCHMARK(MissFourLevelWalk);

// What translate_run costs per page when every page misses (fresh IOVAs, as Linux's
// mappings are): 256 pages a run, the IOTLB full of other pages, host time per run.
void RunOfMisses(benchmark::State& state)
{
    Config c;
    Rig* r = make(c);
    uint64_t pgd = r->basic();
    for (uint64_t i = 0; i < 8192; i++)
        r->map(pgd, (1u << 20) + (i << 12), (0x2000 + i) << 12);
    uint64_t i = 0;
    for (auto _ : state) {
        auto run = r->unit.translate_run(0x0010, dmalab::kNoPasid, (1u << 20) + ((i & 31) << 20),
                                         1u << 20, Unit::kRead);
        benchmark::DoNotOptimize(run);
        i++;
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 256);
    delete r;
}
BENCHMARK(RunOfMisses);

// A page-selective invalidation in a full IOTLB, at the default size and at the largest the
// unit accepts (iotlb-entries=1048576): its cost must not grow with the IOTLB. The page
// invalidated is never cached, so every iteration does the same lookups and nothing refills.
void PageInvalidationInFullIotlb(benchmark::State& state)
{
    Config c;
    c.inv_desc_ns = c.inv_page_ns = c.wait_ns = 0; // complete at once, in the submit
    c.iotlb_entries = static_cast<unsigned>(state.range(0));
    auto* r = new Rig(c);
    uint64_t pgd = r->basic();
    for (uint64_t i = 0; i < c.iotlb_entries; i++) {
        r->map(pgd, i << 12, (0x800 + i) << 12);
        r->read(i << 12);
    }
    r->qi_enable();
    uint64_t valid = r->unit.counters().iotlb_misses - r->unit.counters().iotlb_evictions;
    uint64_t i = 0;
    for (auto _ : state) {
        // IOVAs above everything mapped: never in the IOTLB.
        r->submit({Rig::iotlb_page(1, (uint64_t{c.iotlb_entries} + (i & 1023)) << 12)});
        i++;
    }
    state.counters["entries_cached"] = static_cast<double>(valid);
    if (r->unit.counters().iotlb_dropped != 0)
        state.SkipWithError("the invalidations dropped cached entries");
    delete r;
}
BENCHMARK(PageInvalidationInFullIotlb)->Arg(512)->Arg(1 << 20);

} // namespace

BENCHMARK_MAIN();
