// SPDX-License-Identifier: GPL-2.0-or-later
// The interrupt address range 0xFEEx_xxxx and translation (3.14, 4.2.3): an ATS translation
// request there is answered untranslated-only (R=0, W=1, U=1) whatever the tables map;
// translate() and translate_run() give no translation there, and none whose page covers
// it; in legacy and scalable mode, translation on or off.

#include "sm_rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t kWindow = kInterruptRangeBase;                      // 0xfee00000
constexpr uint64_t kLastPage = kWindow + kInterruptRangeSize - 0x1000; // 0xfeeff000
static_assert(kWindow == 0xfee00000 && kLastPage == 0xfeeff000);

// The completion the device must get for a page of the range: keep sending writes there
// untranslated (interrupt requests), read nothing, use no address.
void expect_untranslated_only(const Translation& t, uint64_t page)
{
    EXPECT_TRUE(t.ok) << std::hex << page;
    EXPECT_TRUE(t.untranslated_only) << std::hex << page;
    EXPECT_FALSE(t.read) << std::hex << page;
    EXPECT_TRUE(t.write) << std::hex << page;
    EXPECT_FALSE(t.translated) << std::hex << page;
    EXPECT_EQ(t.iova, page);
    EXPECT_EQ(t.addr, page);
    EXPECT_EQ(t.mask, 0xfffu);
}

// Legacy tables that map the range's first and last pages, and the pages just outside it,
// to RAM, read and write.
uint64_t map_around_the_range(Rig& r)
{
    uint64_t pgd = r.basic();
    r.map(pgd, kWindow, 0x9000);
    r.map(pgd, kLastPage, 0xa000);
    r.map(pgd, kWindow - 0x1000, 0xb000);
    r.map(pgd, kWindow + kInterruptRangeSize, 0xc000);
    return pgd;
}

TEST(InterruptRange, ATranslationRequestThereIsAnsweredUntranslatedOnly)
{
    Rig r;
    map_around_the_range(r);
    uint64_t walks = r.unit.counters().page_walks;
    for (uint64_t page : {kWindow, kWindow + 0x5000, kLastPage})
        expect_untranslated_only(r.unit.translation_request(0x0010, kNoPasid, page + 0x123), page);
    // The tables were not read, nothing was counted as a translation or recorded.
    EXPECT_EQ(r.unit.counters().page_walks, walks);
    EXPECT_EQ(r.unit.counters().translations, 0u);
    EXPECT_EQ(r.unit.counters().faults, 0u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PPF);
    EXPECT_EQ(r.unit.counters().ats_requests, 3u);
    EXPECT_EQ(r.unit.counters().ats_untranslated_only, 3u);
    // Just outside, the tables answer.
    Translation t = r.unit.translation_request(0x0010, kNoPasid, kWindow - 0x1000);
    ASSERT_TRUE(t.ok);
    EXPECT_FALSE(t.untranslated_only);
    EXPECT_EQ(t.addr, 0xb000u);
    t = r.unit.translation_request(0x0010, kNoPasid, kWindow + kInterruptRangeSize);
    ASSERT_TRUE(t.ok);
    EXPECT_FALSE(t.untranslated_only);
    EXPECT_EQ(t.addr, 0xc000u);
    EXPECT_EQ(r.unit.counters().ats_requests, 5u);
    EXPECT_EQ(r.unit.counters().ats_untranslated_only, 3u);
}

// Whatever the tables say (nothing, or a refusal of the whole requester) and whether
// translation is on: the range is never DMA.
TEST(InterruptRange, TheAnswerDoesNotDependOnTheTables)
{
    { // not mapped: not the R=W=0 of a page the tables do not map
        Rig r;
        r.basic();
        expect_untranslated_only(r.unit.translation_request(0x0010, kNoPasid, kWindow), kWindow);
        EXPECT_FALSE(r.unit.translation_request(0x0010, kNoPasid, kWindow - 0x1000).ok);
    }
    { // a requester without a context entry
        Rig r;
        r.basic();
        expect_untranslated_only(r.unit.translation_request(0x0100, kNoPasid, kWindow), kWindow);
    }
    { // translation off: elsewhere the identity
        Rig r;
        expect_untranslated_only(r.unit.translation_request(0x0010, kNoPasid, kWindow), kWindow);
        Translation t = r.unit.translation_request(0x0010, kNoPasid, kWindow - 0x1000);
        ASSERT_TRUE(t.ok);
        EXPECT_FALSE(t.untranslated_only);
        EXPECT_EQ(t.addr, kWindow - 0x1000);
    }
}

TEST(InterruptRange, ScalableModeSecondFirstStageAndPassThrough)
{
    SmRig r;
    r.set_sm_root();
    uint64_t ss = r.alloc(), fs = r.alloc();
    r.pasid_entry(r.device(0x0010, 5), Pgtt::SecondStage, 3, ss);
    r.pasid_entry(r.device(0x0018), Pgtt::FirstStage, 4, fs);
    r.pasid_entry(r.device(0x0020), Pgtt::PassThrough, 5, 0);
    r.command(G_TE);
    r.map(ss, kWindow, 0x9000);
    r.fs_map(fs, kWindow, 0x9000);
    for (uint16_t sid : {0x0010, 0x0018, 0x0020}) {
        expect_untranslated_only(r.unit.translation_request(sid, kNoPasid, kWindow), kWindow);
        Translation t = r.unit.translate(sid, kNoPasid, kWindow, Unit::kWrite);
        EXPECT_FALSE(t.ok) << sid;
        EXPECT_TRUE(t.untranslated_only) << sid;
    }
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 0u); // the first stage was not walked
    EXPECT_EQ(r.unit.counters().faults, 0u);
}

// translate() (the IOMMU region's translate in QEMU, which any caller may query) refuses
// the range, mapped or not, for any access, recording nothing: its writes are the
// platform's to send to remap_interrupt.
TEST(InterruptRange, TranslateGivesNoTranslationThere)
{
    Rig r;
    map_around_the_range(r);
    for (unsigned perm : {0u, Unit::kRead, Unit::kWrite, Unit::kRead | Unit::kWrite}) {
        for (uint64_t page : {kWindow, kLastPage}) {
            Translation t = r.unit.translate(0x0010, kNoPasid, page + 4, perm);
            EXPECT_FALSE(t.ok) << perm;
            EXPECT_TRUE(t.untranslated_only) << perm;
            EXPECT_EQ(t.fault_reason, FaultReason::None) << perm;
            EXPECT_EQ(t.iova, page);
            EXPECT_EQ(t.mask, 0xfffu);
        }
    }
    EXPECT_EQ(r.unit.counters().faults, 0u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PPF);
    EXPECT_TRUE(r.read(kWindow - 0x1000).ok);
    EXPECT_FALSE(r.read(kWindow - 0x1000).untranslated_only);
}

// A DMA engine's run stops where the range begins and never starts in it.
TEST(InterruptRange, ARunStopsAtTheRange)
{
    Rig r;
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 16; i++)
        r.map(pgd, kWindow - 0x8000 + (i << 12), 0x100000 + (i << 12));
    Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, kWindow - 0x8000, 0x10000, Unit::kWrite);
    ASSERT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, 0x8000u);
    run = r.unit.translate_run(0x0010, kNoPasid, kWindow, 0x8000, Unit::kWrite);
    EXPECT_FALSE(run.first.ok);
    EXPECT_TRUE(run.first.untranslated_only);
    EXPECT_EQ(run.len, 0u);
    EXPECT_EQ(r.unit.counters().faults, 0u);
}

// A large page mapped over the range answers the addresses around it in the largest
// aligned pieces that leave the range out, so that a caller that keeps the page (vhost's
// IOTLB, a device-TLB) cannot use it there; a run through it stops at the range.
TEST(InterruptRange, ALargePageOverTheRangeIsAnsweredAroundIt)
{
    Rig r;
    uint64_t pgd = r.basic();
    r.map(pgd, 0xc0000000, 0x40000000, true, true, 4, 3); // 1 GiB: 0xc0000000-0xffffffff
    Translation t = r.read(0xc0001000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.iova, 0xc0000000u);
    EXPECT_EQ(t.mask, (2u << 20) - 1); // a 2 MiB piece
    EXPECT_EQ(t.addr, 0x40000000u);
    t = r.read(0xfed00000); // in the 2 MiB below the range
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.iova, 0xfec00000u);
    EXPECT_EQ(t.mask, (2u << 20) - 1);
    EXPECT_EQ(t.addr, 0x7ec00000u);
    t = r.read(0xfef01000); // in the 2 MiB the range begins: 4 KiB
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.iova, 0xfef01000u);
    EXPECT_EQ(t.mask, 0xfffu);
    EXPECT_EQ(t.addr, 0x7ef01000u);
    EXPECT_FALSE(r.read(kWindow + 0x1000).ok);
    // Once cached, the page answers the same (the front entry and the IOTLB).
    EXPECT_EQ(r.read(0xfef02000).mask, 0xfffu);
    EXPECT_EQ(r.read(0xfed00000).mask, (2u << 20) - 1);
    Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 0xfed00000, 4u << 20, Unit::kRead);
    ASSERT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, kWindow - 0xfed00000);
    // A 2 MiB page at the range: the half above it in 4 KiB pieces.
    Rig s;
    pgd = s.basic();
    s.map(pgd, kWindow, 0x600000, true, true, 4, 2);
    t = s.read(kWindow + kInterruptRangeSize);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.mask, 0xfffu);
    EXPECT_EQ(t.addr, 0x700000u);
    EXPECT_FALSE(s.read(kWindow).ok);
}

} // namespace
} // namespace dmalab::vtd::testing
