// SPDX-License-Identifier: GPL-2.0-or-later
// Capabilities, legacy-mode translation, the context cache and the IOTLB, and what walks
// cost (translate_run, runs of pages, in run_test.cc).

#include "dmalab/vtd/faults.h"
#include "sm_rig.h"

namespace dmalab::vtd::testing
{
namespace
{

TEST(Capabilities, WhatLinuxReads)
{
    Rig r;
    EXPECT_EQ(r.r32(VER), 0x10u);
    uint64_t cap = r.r64(CAP);
    EXPECT_EQ((cap >> CAP_SAGAW_SHIFT) & 0x1f, 0x6u); // 39- and 48-bit tables
    EXPECT_EQ((cap >> CAP_MGAW_SHIFT) & 0x3f, 47u);
    EXPECT_EQ(((cap >> CAP_FRO_SHIFT) & 0x3ff) * 16, FRCD);
    EXPECT_EQ(((cap >> CAP_NFR_SHIFT) & 0xff) + 1, kFaultRecords);
    EXPECT_TRUE(cap & CAP_SLLPS_2M);
    EXPECT_TRUE(cap & CAP_SLLPS_1G);
    EXPECT_TRUE(cap & CAP_PSI);
    uint64_t ecap = r.r64(ECAP);
    EXPECT_EQ(((ecap >> ECAP_IRO_SHIFT) & 0x3ff) * 16, IVA);
    EXPECT_TRUE(ecap & ECAP_QI);
    EXPECT_TRUE(ecap & ECAP_PT);
    EXPECT_EQ(r.r32(FECTL), CTL_IM); // events masked out of reset
    // The 32-bit halves of a 64-bit register read the same bits.
    EXPECT_EQ(uint64_t{r.r32(CAP)} | uint64_t{r.r32(CAP + 4)} << 32, cap);
}

TEST(Capabilities, FollowTheConfiguration)
{
    Config c;
    c.aw_bits = 39;
    c.qi = false;
    c.pt = false;
    Rig r(c);
    EXPECT_EQ((r.r64(CAP) >> CAP_SAGAW_SHIFT) & 0x1f, 0x2u);
    EXPECT_EQ((r.r64(CAP) >> CAP_MGAW_SHIFT) & 0x3f, 38u);
    EXPECT_FALSE(r.r64(ECAP) & (ECAP_QI | ECAP_PT));
    r.command(G_QIE); // not advertised: ignored
    EXPECT_FALSE(r.r32(GSTS) & G_QIE);
}

TEST(Translation, OffMeansIdentity)
{
    Rig r;
    Translation t = r.write(0x123456);
    EXPECT_TRUE(t.ok);
    EXPECT_FALSE(t.translated);
    EXPECT_EQ(t.addr, 0x123000u);
    EXPECT_EQ(r.unit.counters().translations, 0u);
}

TEST(Translation, FourLevelPage)
{
    Rig r;
    uint64_t pgd = r.basic();
    EXPECT_EQ(r.r32(GSTS) & (G_TE | G_SRTP), G_TE | G_SRTP);
    r.map(pgd, 0x7f0000401000, 0x200000, true, false);
    Translation t = r.read(0x7f0000401abc);
    ASSERT_TRUE(t.ok);
    EXPECT_TRUE(t.translated);
    EXPECT_EQ(t.iova, 0x7f0000401000u);
    EXPECT_EQ(t.addr, 0x200000u);
    EXPECT_EQ(t.mask, 0xfffu);
    EXPECT_TRUE(t.read);
    EXPECT_FALSE(t.write);
    EXPECT_EQ(r.unit.counters().walk_reads, 4u);
    EXPECT_EQ(r.unit.counters().page_walks, 1u);
}

TEST(Translation, ThreeLevelTable)
{
    Rig r;
    r.set_root();
    uint64_t pgd = r.alloc();
    r.context(0x0010, 1, pgd, 1);
    r.command(G_TE);
    r.map(pgd, 0x40003000, 0x5000, true, true, 3);
    Translation t = r.write(0x40003010);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.addr, 0x5000u);
    EXPECT_EQ(r.unit.counters().walk_reads, 3u);
    // A 39-bit domain refuses addresses at or above 2^39.
    EXPECT_EQ(r.read(uint64_t{1} << 39).fault_reason, FR_ADDRESS_BEYOND_AW);
}

TEST(Translation, LargePages)
{
    Rig r;
    uint64_t pgd = r.basic();
    r.map(pgd, 0x40000000, 0x200000 * 3, true, true, 4, 2); // 2 MiB
    r.map(pgd, 0x80000000, 0x40000000, true, true, 4, 3);   // 1 GiB
    Translation t = r.read(0x40012345);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.mask, 0x1fffffu);
    EXPECT_EQ(t.addr, 0x600000u);
    t = r.read(0x80012345);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.mask, 0x3fffffffu);
    EXPECT_EQ(t.addr, 0x40000000u);
    // One IOTLB entry covers the whole large page.
    EXPECT_TRUE(r.read(0x401fffff).ok);
    EXPECT_EQ(r.unit.counters().iotlb_hits, 1u);
}

TEST(Translation, PassThrough)
{
    Rig r;
    r.set_root();
    r.context(0x0010, 1, 0, 2, TT_PASSTHROUGH);
    r.command(G_TE);
    Translation t = r.write(0x12345678);
    EXPECT_TRUE(t.ok);
    EXPECT_FALSE(t.translated);
    EXPECT_EQ(t.addr, 0x12345000u);
}

TEST(Translation, PassThroughNotAdvertisedIsInvalid)
{
    Config c;
    c.pt = false;
    Rig r(c);
    r.set_root();
    r.context(0x0010, 1, 0, 2, TT_PASSTHROUGH);
    r.command(G_TE);
    EXPECT_EQ(r.write(0x1000).fault_reason, FR_CONTEXT_INVALID);
}

TEST(Translation, PermissionsAreTheAndOfAllLevels)
{
    Rig r;
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000, true, true);
    // Make the top-level entry read-only.
    uint64_t top = r.mem.get<uint64_t>(pgd);
    r.mem.put<uint64_t>(pgd, top & ~SL_W);
    EXPECT_TRUE(r.read(0x1000).ok);
    EXPECT_EQ(r.write(0x1000).fault_reason, FR_WRITE);
}

// The unit skips the lookup for a page size of which nothing is cached, so its count of
// cached large pages must stay right through fills, evictions and invalidations of other
// sizes: a stale 2 MiB entry is still found (and used) after all of them.
TEST(Iotlb, LargeEntriesAreFoundAfterOtherSizesComeAndGo)
{
    Config c;
    c.iotlb_entries = 16;
    c.iotlb_ways = 2;
    Rig r(c);
    uint64_t pgd = r.basic();
    uint64_t big = r.map(pgd, 0x40000000, 0x600000, true, true, 4, 2);
    for (uint64_t i = 0; i < 64; i++)
        r.map(pgd, i << 12, (0x100 + i) << 12);
    r.qi_enable();
    for (unsigned round = 0; round < 3; round++) {
        ASSERT_EQ(r.read(0x40012345).addr, 0x600000u);
        r.mem.put<uint64_t>(big, (0xa00000 + round * 0x200000) | SL_R | SL_W | SL_PS);
        uint64_t hits = r.unit.counters().iotlb_hits;
        // 4 KiB fills (evicting each other, never the 2 MiB entry, which stays hot) and
        // page-selective invalidations of 4 KiB pages.
        for (uint64_t i = 0; i < 64; i++) {
            ASSERT_TRUE(r.read(i << 12).ok);
            ASSERT_EQ(r.read(0x40000000 + (i << 12)).addr, 0x600000u) << round << " " << i;
            if (i % 8 == 0)
                r.submit({Rig::iotlb_page(1, i << 12)});
        }
        EXPECT_EQ(r.unit.counters().iotlb_hits - hits, 64u);
        // A global invalidation drops it; the next read walks and sees the new page, which
        // is then cached again.
        r.submit({Rig::iotlb_global()});
        r.mem.put<uint64_t>(big, 0x600000 | SL_R | SL_W | SL_PS);
    }
}

TEST(Iotlb, HitAfterMissAndNoWalk)
{
    Rig r;
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    ASSERT_TRUE(r.read(0x1000).ok);
    unsigned reads = r.mem.reads;
    ASSERT_TRUE(r.read(0x1800).ok);
    EXPECT_EQ(r.mem.reads, reads); // neither context nor page tables were read again
    EXPECT_EQ(r.unit.counters().iotlb_hits, 1u);
    EXPECT_EQ(r.unit.counters().iotlb_misses, 1u);
    EXPECT_EQ(r.unit.counters().context_hits, 1u);
    EXPECT_EQ(r.unit.counters().context_misses, 1u);
}

TEST(Iotlb, CachedUntilInvalidated)
{
    Rig r;
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    ASSERT_EQ(r.read(0x1000).addr, 0x9000u);
    r.mem.put<uint64_t>(leaf, 0xa000 | SL_R | SL_W); // the guest remaps without a flush
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u);         // the IOTLB still says the old page
}

TEST(Iotlb, CapacityMissesAndEvictions)
{
    Config c;
    c.iotlb_entries = 16;
    c.iotlb_ways = 2;
    Rig r(c);
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 64; i++)
        r.map(pgd, i << 12, (0x100 + i) << 12);
    for (uint64_t i = 0; i < 64; i++)
        ASSERT_TRUE(r.read(i << 12).ok);
    EXPECT_EQ(r.unit.counters().iotlb_misses, 64u);
    EXPECT_GE(r.unit.counters().iotlb_evictions, 48u);
    // A second pass over 64 pages misses again: they do not fit in 16 entries.
    for (uint64_t i = 0; i < 64; i++)
        ASSERT_TRUE(r.read(i << 12).ok);
    EXPECT_GE(r.unit.counters().iotlb_misses, 64u + 48u);
}

TEST(Iotlb, LruKeepsTheHotEntry)
{
    Config c;
    c.iotlb_entries = 2;
    c.iotlb_ways = 2; // one set
    Rig r(c);
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 3; i++)
        r.map(pgd, i << 12, (0x100 + i) << 12);
    r.read(0x0000);
    r.read(0x1000);
    r.read(0x0000); // page 0 is now the most recently used
    r.read(0x2000); // evicts page 1
    uint64_t misses = r.unit.counters().iotlb_misses;
    r.read(0x0000);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses);
    r.read(0x1000);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses + 1);
}

TEST(Iotlb, FifoEvictsTheOldestFill)
{
    Config c;
    c.iotlb_entries = 2;
    c.iotlb_ways = 2;
    c.replacement = Replacement::Fifo;
    Rig r(c);
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 3; i++)
        r.map(pgd, i << 12, (0x100 + i) << 12);
    r.read(0x0000);
    r.read(0x1000);
    r.read(0x0000);
    r.read(0x2000); // evicts page 0, the oldest fill, although it was used last
    uint64_t misses = r.unit.counters().iotlb_misses;
    r.read(0x0000);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses + 1);
}

TEST(Iotlb, DomainsAreSeparate)
{
    Rig r;
    r.set_root();
    uint64_t a = r.alloc(), b = r.alloc();
    r.context(0x0010, 1, a);
    r.context(0x0018, 2, b);
    r.command(G_TE);
    r.map(a, 0x1000, 0xa000);
    r.map(b, 0x1000, 0xb000);
    EXPECT_EQ(r.read(0x1000, 0x0010).addr, 0xa000u);
    EXPECT_EQ(r.read(0x1000, 0x0018).addr, 0xb000u);
}

TEST(ContextCache, EntriesAreCached)
{
    Rig r;
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.map(pgd, 0x2000, 0xa000);
    r.read(0x1000);
    r.read(0x2000);
    EXPECT_EQ(r.unit.counters().context_misses, 1u);
    EXPECT_EQ(r.unit.counters().context_hits, 1u);
}

TEST(Cost, WalksAreChargedToTheRequester)
{
    Config c;
    c.walk_read_ns = 100;
    Rig r(c);
    uint64_t pgd = r.basic(0x0010);
    r.context(0x0018, 2, pgd);
    r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000); // context (2 reads) + 4-level walk
    EXPECT_EQ(r.unit.take_cost(0x0010), 600u);
    EXPECT_EQ(r.unit.take_cost(0x0010), 0u); // taken
    r.read(0x1000);                          // a hit costs nothing
    EXPECT_EQ(r.unit.take_cost(0x0010), 0u);
    r.read(0x1000, 0x0018); // another requester, its own account
    EXPECT_EQ(r.unit.take_cost(0x0018), 600u);
    EXPECT_EQ(r.unit.take_cost(0x0010), 0u);
    EXPECT_EQ(r.unit.counters().walk_cost_ns, 1200u);
}

} // namespace
} // namespace dmalab::vtd::testing
