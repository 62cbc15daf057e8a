// SPDX-License-Identifier: GPL-2.0-or-later
// The paging-structure caches (6.2.4): what a miss reads under a cached PDE, PDPE or PML4E,
// what each invalidation drops and what its hint (IH) keeps, and a guest that aims its
// non-leaf entries at nothing, at themselves or at many regions.

#include <gtest/gtest.h>

#include "rig.h"
#include "sm_rig.h"

using namespace dmalab::vtd;
using namespace dmalab::vtd::testing;

namespace
{

constexpr uint64_t QI_IOTLB_IH = field_mask(qi::IOTLB_HI, "IH");
constexpr uint64_t QI_PIOTLB_IH = field_mask(qi::PIOTLB_HI, "IH");
static_assert(QI_IOTLB_IH == 0x40 && QI_PIOTLB_IH == 0x40);

Config no_psc(Config c = costs(0, 0, 0))
{
    c.pde_cache = c.pdpe_cache = c.pml4e_cache = 0;
    return c;
}

// The entry reads of one request.
uint64_t reads_of(Rig& r, uint64_t iova, uint16_t sid = 0x0010)
{
    uint64_t before = r.unit.counters().walk_reads;
    EXPECT_TRUE(r.read(iova, sid).ok) << std::hex << iova;
    return r.unit.counters().walk_reads - before;
}

// The PDE (level 2 entry) on the way to iova in a 4-level table.
uint64_t pde_of(Rig& r, uint64_t pgd, uint64_t iova)
{
    uint64_t t = pgd;
    for (unsigned level = 4; level > 2; level--)
        t = r.mem.get<uint64_t>(t + ((iova >> (12 + 9 * (level - 1))) & 511) * 8) &
            ~uint64_t{0xfff};
    return t + ((iova >> 21) & 511) * 8;
}

// Requesters 0x0010 in domain 1 and 0x0018 in domain 2, each with its own empty 4-level
// table; TE on. The tables' roots.
std::pair<uint64_t, uint64_t> two_domains(Rig& r)
{
    r.set_root();
    uint64_t a = r.alloc(), b = r.alloc();
    r.context(0x0010, 1, a);
    r.context(0x0018, 2, b);
    r.command(G_TE);
    return {a, b};
}

} // namespace

TEST(PagingStructureCaches, AMissStartsBelowTheLowestCachedEntry)
{
    Config c = costs(0, 0, 0);
    c.walk_read_ns = 100;
    Rig r(c);
    uint64_t pgd = r.basic();
    const uint64_t a = 0x1000, same_2m = 0x2000, same_1g = uint64_t{4} << 20,
                   same_512g = uint64_t{2} << 30, other = uint64_t{1} << 39;
    for (uint64_t iova : {a, same_2m, same_1g, same_512g, other})
        r.map(pgd, iova, 0x100000);
    EXPECT_EQ(reads_of(r, a), 4u);         // nothing cached
    EXPECT_EQ(reads_of(r, same_2m), 1u);   // under the cached PDE: the leaf only
    EXPECT_EQ(reads_of(r, same_1g), 2u);   // under the cached PDPE
    EXPECT_EQ(reads_of(r, same_512g), 3u); // under the cached PML4E
    EXPECT_EQ(reads_of(r, other), 4u);     // another PML4E
    const Counters& n = r.unit.counters();
    EXPECT_EQ(n.psc_hits[0], 1u);
    EXPECT_EQ(n.psc_hits[1], 1u);
    EXPECT_EQ(n.psc_hits[2], 1u);
    EXPECT_EQ(n.psc_misses, 2u);
    EXPECT_EQ(n.page_walks, 5u);
    // What walks cost follows the reads: 2 context reads, then 4 + 1 + 2 + 3 + 4.
    EXPECT_EQ(n.walk_cost_ns, 1600u);
    EXPECT_EQ(r.unit.take_cost(0x0010), 1600u);
}

TEST(PagingStructureCaches, OffEveryMissWalksAllLevels)
{
    Rig r(no_psc());
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.map(pgd, 0x2000, 0xa000);
    EXPECT_EQ(reads_of(r, 0x1000), 4u);
    EXPECT_EQ(reads_of(r, 0x2000), 4u);
    EXPECT_EQ(r.unit.counters().psc_misses, 0u); // no cache, no miss of one
    for (unsigned h : r.unit.counters().psc_hits)
        EXPECT_EQ(h, 0u);
}

TEST(PagingStructureCaches, ThreeLevelTablesCacheTheirTopLevelAsPdpes)
{
    Rig r(costs(0, 0, 0));
    r.set_root();
    uint64_t pgd = r.alloc();
    r.context(0x0010, 1, pgd, 1); // AW 1: 39 bits, 3 levels
    r.command(G_TE);
    r.map(pgd, 0x1000, 0x9000, true, true, 3);
    r.map(pgd, uint64_t{4} << 20, 0xa000, true, true, 3);
    EXPECT_EQ(reads_of(r, 0x1000), 3u);
    EXPECT_EQ(reads_of(r, uint64_t{4} << 20), 2u);
    EXPECT_EQ(r.unit.counters().psc_hits[1], 1u);
    EXPECT_EQ(r.unit.counters().psc_hits[2], 0u); // no fourth level to cache
}

// Linux's unmap without freed page tables sends IH=1; with a table freed, IH=0. A guest
// that changed a PDE and sent IH=1 said what was not so: the unit keeps using the table it
// cached, as hardware may, and never reads outside the guest's memory for it.
TEST(PagingStructureCaches, HintKeepsThemAndNoHintDropsWhatTheRangeCovers)
{
    for (bool queued : {false, true}) {
        Rig r(costs(0, 0, 0));
        uint64_t pgd = r.basic();
        r.map(pgd, 0x1000, 0x9000);
        r.map(pgd, uint64_t{4} << 20, 0xb000); // another 2 MiB region, its own PDE
        ASSERT_EQ(r.read(0x1000).addr, 0x9000u);
        ASSERT_EQ(r.read(uint64_t{4} << 20).addr, 0xb000u);
        // A new leaf table for the first region, its PDE pointed at it.
        uint64_t leaf2 = r.alloc();
        r.mem.put<uint64_t>(leaf2 + 1 * 8, 0xa000 | SL_R | SL_W);
        r.mem.put<uint64_t>(pde_of(r, pgd, 0x1000), leaf2 | SL_R | SL_W);
        if (queued)
            r.qi_enable();
        auto invalidate = [&](bool ih) {
            if (queued) {
                r.submit({{uint64_t{1} << QI_DID_SHIFT | 3u << QI_G_SHIFT | QI_IOTLB,
                           0x1000 | (ih ? QI_IOTLB_IH : 0)}});
            } else {
                r.w64(IVA, 0x1000 | (ih ? IVA_IH : 0));
                r.w64(IOTLB,
                      IOTLB_IVT | uint64_t{3} << IOTLB_IIRG_SHIFT | uint64_t{1} << IOTLB_DID_SHIFT);
                r.run_until(r.timers.now + 1);
                ASSERT_FALSE(r.r64(IOTLB) & IOTLB_IVT);
            }
        };
        invalidate(true);
        EXPECT_EQ(r.unit.counters().inv_leaf_hints, 1u) << queued;
        EXPECT_EQ(r.unit.counters().psc_dropped, 0u) << queued;
        EXPECT_EQ(r.read(0x1000).addr, 0x9000u) << queued; // the old leaf table, cached
        invalidate(false);
        // Every entry on the way to the range: its PML4E, PDPE and PDE.
        EXPECT_EQ(r.unit.counters().psc_dropped, 3u) << queued;
        EXPECT_EQ(r.read(0x1000).addr, 0xa000u) << queued;
        // The other region's PDE stayed: its next miss reads the leaf only.
        r.map(pgd, (uint64_t{4} << 20) + 0x1000, 0xc000);
        EXPECT_EQ(reads_of(r, (uint64_t{4} << 20) + 0x1000), 1u) << queued;
    }
}

TEST(PagingStructureCaches, DomainAndGlobalInvalidationsDropThemWhateverTheHint)
{
    Rig r(costs(0, 0, 0));
    auto [a, b] = two_domains(r);
    for (uint64_t pgd : {a, b}) {
        r.map(pgd, 0x1000, 0x9000);
        r.map(pgd, 0x2000, 0xa000);
    }
    r.read(0x1000, 0x0010);
    r.read(0x1000, 0x0018);
    r.qi_enable();
    r.submit({{uint64_t{2} << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_IOTLB, QI_IOTLB_IH}});
    EXPECT_EQ(r.unit.counters().psc_dropped, 3u); // domain 2's PML4E, PDPE and PDE
    EXPECT_EQ(reads_of(r, 0x2000, 0x0010), 1u);   // domain 1's stayed
    EXPECT_EQ(reads_of(r, 0x2000, 0x0018), 4u);
    r.submit({Rig::iotlb_global()});
    EXPECT_EQ(r.unit.counters().psc_dropped, 9u);
    r.map(a, 0x3000, 0xb000);
    EXPECT_EQ(reads_of(r, 0x3000, 0x0010), 4u);
}

TEST(PagingStructureCaches, ADomainsEntriesServeOnlyThatDomain)
{
    Rig r(costs(0, 0, 0));
    auto [a, b] = two_domains(r);
    r.map(a, 0x1000, 0x9000);
    r.map(b, 0x2000, 0xa000);
    ASSERT_EQ(r.read(0x1000, 0x0010).addr, 0x9000u);
    EXPECT_EQ(r.read(0x2000, 0x0018).addr, 0xa000u); // b's own tables, not a's PDE
    EXPECT_EQ(r.unit.counters().psc_misses, 2u);
    // Two requesters in one domain share its tables, and so its cached entries.
    r.context(0x0020, 1, a);
    r.map(a, 0x3000, 0xb000);
    EXPECT_EQ(reads_of(r, 0x3000, 0x0020), 1u);
}

TEST(PagingStructureCaches, ResetEmptiesThem)
{
    Rig r(costs(0, 0, 0));
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.unit.reset();
    pgd = r.basic();
    r.map(pgd, 0x2000, 0xa000);
    EXPECT_EQ(reads_of(r, 0x2000), 4u);
}

TEST(PagingStructureCaches, ARunOfPagesReadsEachLeafOnce)
{
    for (bool on : {true, false}) {
        Rig r(on ? costs(0, 0, 0) : no_psc());
        uint64_t pgd = r.basic();
        for (uint64_t i = 0; i < 64; i++)
            r.map(pgd, i << 12, (0x1000 + i) << 12);
        Unit::Run run = r.unit.translate_run(0x0010, dmalab::kNoPasid, 0, 64 << 12, Unit::kRead);
        EXPECT_EQ(run.len, 64u << 12);
        // 64 walks: the first reads 4 entries, the others under the cached PDE 1 each.
        EXPECT_EQ(r.unit.counters().walk_reads, on ? 4u + 63 : 64u * 4) << on;
        EXPECT_EQ(r.unit.counters().psc_hits[0], on ? 63u : 0u) << on;
    }
}

// ---- first stage (scalable mode) ----

TEST(PagingStructureCaches, FirstStageEntriesAreCachedOnceAccessed)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x1000, 0x9000);
    r.fs_map(pgd, 0x2000, 0xa000);
    r.fs_map(pgd, 0x3000, 0xb000);
    EXPECT_EQ(reads_of(r, 0x1000), 4u);
    EXPECT_EQ(reads_of(r, 0x2000), 1u);
    EXPECT_EQ(r.unit.counters().psc_hits[0], 1u);
    // A read-only path: a write under the cached entries is refused without a walk of
    // the upper levels, as the walk would.
    SmRig q;
    uint64_t p2 = q.fs_device();
    q.fs_map(p2, 0x1000, 0x9000, false);
    q.fs_map(p2, 0x2000, 0xa000, false);
    uint64_t pde = p2;
    for (unsigned level = 4; level > 2; level--)
        pde = q.mem.get<uint64_t>(pde) & ~uint64_t{0xfff};
    q.mem.put<uint64_t>(pde, q.mem.get<uint64_t>(pde) & ~FL_RW); // PDE read-only
    ASSERT_TRUE(q.read(0x1000).ok);
    EXPECT_FALSE(q.write(0x2000).ok);
    EXPECT_EQ(q.recorded(), SM(SmFault::Write));
}

TEST(PagingStructureCaches, AFirstStageQueryCachesNoEntryWithoutA)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x1000, 0x9000);
    // Every non-leaf entry without A: a query (perm 0) sets none, so caches none.
    uint64_t t = pgd;
    for (unsigned level = 4; level > 1; level--) {
        uint64_t e = r.mem.get<uint64_t>(t) & ~FL_A;
        r.mem.put<uint64_t>(t, e);
        t = e & ~uint64_t{0xfff} & ((uint64_t{1} << 52) - 1);
    }
    r.fs_map(pgd, 0x2000, 0xa000);
    EXPECT_TRUE(r.unit.translate(0x0010, dmalab::kNoPasid, 0x1000, 0).ok);
    EXPECT_EQ(reads_of(r, 0x2000), 4u); // nothing was cached: a full walk, setting A
    EXPECT_EQ(r.unit.counters().psc_hits[0], 0u);
    r.fs_map(pgd, 0x3000, 0xb000);
    EXPECT_EQ(reads_of(r, 0x3000), 1u); // now they are
}

TEST(PagingStructureCaches, PasidBasedInvalidationKeepsThemWithTheHintOnly)
{
    for (bool ih : {true, false}) {
        SmRig r;
        uint64_t pgd = r.fs_device();
        r.fs_map(pgd, 0x1000, 0x9000);
        r.fs_map(pgd, 0x2000, 0xa000);
        r.read(0x1000);
        r.qi_enable_wide();
        auto [lo, hi] = SmRig::piotlb(2, 0, 0x1000);
        r.submit_wide({{lo, hi | (ih ? QI_PIOTLB_IH : 0)}});
        EXPECT_EQ(r.unit.counters().inv_leaf_hints, ih ? 1u : 0u);
        // Without the hint, every entry on the way to 0x1000 goes (PML4E, PDPE, PDE).
        EXPECT_EQ(r.unit.counters().psc_dropped, ih ? 0u : 3u);
        EXPECT_EQ(reads_of(r, 0x2000), ih ? 1u : 4u) << ih;
        // PASID-selective (all of the PASID's entries): every level goes, hint or not.
        r.submit_wide({SmRig::piotlb(2, 0, 0, 0, false)});
        r.fs_map(pgd, 0x3000, 0xb000);
        EXPECT_EQ(reads_of(r, 0x3000), 4u) << ih;
        // Another PASID's invalidation drops none of RID_PASID 0's.
        r.submit_wide({SmRig::piotlb(2, 7, 0, 0, false)});
        r.fs_map(pgd, 0x4000, 0xc000);
        EXPECT_EQ(reads_of(r, 0x4000), 1u) << ih;
    }
}

// ---- hostile guests ----

// A PDE that names no memory: cached (it is present and well-formed), every miss under it
// fails its leaf read and records the fault; the unit goes on, and a fixed PDE with an
// invalidation that drops it serves again.
TEST(PagingStructureCaches, APdeNamingNothingFaultsEachMissAndRecovers)
{
    Rig r(costs(0, 0, 0));
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    ASSERT_TRUE(r.read(0x1000).ok);
    uint64_t pde = pde_of(r, pgd, 0x1000);
    uint64_t good = r.mem.get<uint64_t>(pde);
    r.mem.put<uint64_t>(pde, uint64_t{0x7ff} << 32 | SL_R | SL_W); // beyond the rig's RAM
    r.qi_enable();
    r.submit({Rig::iotlb_global()});
    uint64_t reads = r.mem.reads;
    for (uint64_t i = 0; i < 3; i++) {
        Translation t = r.read(0x2000 + (i << 12));
        EXPECT_FALSE(t.ok);
        EXPECT_EQ(t.fault_reason, FR_PAGE_TABLE);
    }
    EXPECT_EQ(r.unit.counters().psc_hits[0], 2u); // the bad PDE, cached by the first walk
    EXPECT_LE(r.mem.reads - reads, 3u * 4);
    r.mem.put<uint64_t>(pde, good);
    r.submit({Rig::iotlb_page(1, 0x2000)}); // IH 0: the PDE goes
    r.map(pgd, 0x2000, 0xa000);
    EXPECT_EQ(r.read(0x2000).addr, 0xa000u);
}

// Non-leaf entries that point back at their own table: each walk still reads at most one
// entry per level, and the cached entries keep it so.
TEST(PagingStructureCaches, TablesThatPointAtThemselvesStayBounded)
{
    Rig r(costs(0, 0, 0));
    uint64_t pgd = r.basic();
    for (unsigned i = 0; i < 512; i++)
        r.mem.put<uint64_t>(pgd + i * 8, pgd | SL_R | SL_W);
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t reads = r.unit.counters().walk_reads;
        r.read(i << 21); // the leaf read is the PML4 itself: whatever it names
        EXPECT_LE(r.unit.counters().walk_reads - reads, 4u);
    }
}

// Many domains and regions: the caches stay at their configured sizes, evicting, and every
// answer is the tables'.
TEST(PagingStructureCaches, ManyRegionsEvictAndAnswerAsTheTablesSay)
{
    Config c = costs(0, 0, 0);
    c.pde_cache = 4;
    c.pdpe_cache = 4;
    c.pml4e_cache = 4;
    Rig r(c);
    r.set_root();
    uint64_t pgd[4];
    for (unsigned d = 0; d < 4; d++) {
        pgd[d] = r.alloc();
        r.context(static_cast<uint16_t>(0x0010 + d), static_cast<uint16_t>(d + 1), pgd[d]);
    }
    r.command(G_TE);
    for (unsigned d = 0; d < 4; d++)
        for (uint64_t i = 0; i < 16; i++)
            r.map(pgd[d], i << 21, (0x100 + d * 16 + i) << 12);
    for (unsigned round = 0; round < 2; round++)
        for (uint64_t i = 0; i < 16; i++)
            for (unsigned d = 0; d < 4; d++) {
                Translation t = r.read(i << 21, static_cast<uint16_t>(0x0010 + d));
                ASSERT_TRUE(t.ok);
                EXPECT_EQ(t.addr, (0x100 + d * 16 + i) << 12);
            }
    // 128 walks: none found its PDE (16 regions of 4 domains through 4 entries), but the
    // domains' PDPEs and PML4Es fit.
    EXPECT_EQ(r.unit.counters().psc_hits[0], 0u);
    EXPECT_GT(r.unit.counters().psc_hits[1], 0u);
}

TEST(PagingStructureCaches, SizesAreChecked)
{
    Config c;
    c.pde_cache = 6;
    EXPECT_NE(check(c), nullptr);
    c.pde_cache = 8192;
    EXPECT_NE(check(c), nullptr);
    c.pde_cache = 0;
    EXPECT_EQ(check(c), nullptr);
    c.pdpe_cache = 4096;
    EXPECT_EQ(check(c), nullptr);
}
