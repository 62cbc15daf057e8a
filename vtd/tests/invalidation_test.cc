// SPDX-License-Identifier: GPL-2.0-or-later
// Register-based and queued invalidation: what they drop, and when (in virtual time).

#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t kStatus = 0x8000;

// The masks and shifts derive from the field tables (registers.h); these are the values
// Linux's drivers/iommu/intel/iommu.h gives them, so a misplaced field fails here.
static_assert(G_TE == 1u << 31 && G_SRTP == 1u << 30 && G_QIE == 1u << 26 && G_IRE == 1u << 25 &&
              G_CFI == 1u << 23);
static_assert(CCMD_ICC == uint64_t{1} << 63 && CCMD_CIRG_SHIFT == 61 && CCMD_CAIG_SHIFT == 59 &&
              CCMD_FM_SHIFT == 32 && CCMD_SID_SHIFT == 16);
static_assert(IOTLB_IVT == uint64_t{1} << 63 && IOTLB_IIRG_SHIFT == 60 && IOTLB_IAIG_SHIFT == 57 &&
              IOTLB_DID_SHIFT == 32);
static_assert(IVA_AM.mask() == 0x3f && IVA_IH == 0x40 && IVA_ADDR.mask() == ~uint64_t{0xfff});
static_assert(FSTS_PFO == 1 && FSTS_PPF == 2 && FSTS_IQE == 0x10 && FSTS_ICE == 0x20 &&
              FSTS_ITE == 0x40 && FSTS_FRI_SHIFT == 8);
static_assert(CTL_IM == 1u << 31 && CTL_IP == 1u << 30 && ICS_IWC == 1);
static_assert(FRCD_F == uint64_t{1} << 63 && FRCD_T_READ == uint64_t{1} << 62 &&
              FRCD_FR_SHIFT == 32);
static_assert(IQ_INDEX_SHIFT == 4 && IQ_INDEX_MASK == 0x7fff && IQA_QS.mask() == 7 &&
              IQA_BASE.mask() == ~uint64_t{0xfff} && RTADDR_RTA.mask() == ~uint64_t{0xfff});
// The bits each legacy descriptor and entry defines (the rest are reserved), from their
// field tables, as VT-d 6.5.2 and 9.1-9.3 lay them out.
static_assert(defined_bits(qi::CC_LO) == 0x0003ffffffff003f);
static_assert(defined_bits(qi::IOTLB_LO) == 0x00000000ffff00ff &&
              defined_bits(qi::IOTLB_HI) == ~uint64_t{0xf80});
static_assert(defined_bits(qi::WAIT_LO) == 0xffffffff000000ff &&
              defined_bits(qi::WAIT_HI) == ~uint64_t{0x3});
static_assert(defined_bits(root::LO) == ~uint64_t{0xffe});
static_assert(defined_bits(ctx::LO) == ~uint64_t{0xff0} && defined_bits(ctx::HI) == 0xffff7f);
static_assert(slpte::kReserved == (uint64_t{1} << 11 | uint64_t{1} << 62));

TEST(RegisterInvalidation, IvtStaysSetUntilDoneAndOldEntriesServeMeanwhile)
{
    Rig r(costs(1000, 10, 0));
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    ASSERT_EQ(r.read(0x1000).addr, 0x9000u);
    r.mem.put<uint64_t>(leaf, 0xa000 | SL_R | SL_W);
    // Page-selective invalidation of 0x1000 in domain 1 (IVA then IOTLB, as Linux does).
    r.w64(IVA, 0x1000);
    r.w64(IOTLB, IOTLB_IVT | uint64_t{3} << IOTLB_IIRG_SHIFT | uint64_t{1} << IOTLB_DID_SHIFT);
    EXPECT_TRUE(r.r64(IOTLB) & IOTLB_IVT);
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u); // not yet in effect
    r.run_until(1009);
    EXPECT_TRUE(r.r64(IOTLB) & IOTLB_IVT);
    r.run_until(1010); // 1000 per command + 10 for its one page
    uint64_t v = r.r64(IOTLB);
    EXPECT_FALSE(v & IOTLB_IVT);
    EXPECT_EQ((v >> IOTLB_IAIG_SHIFT) & 3, 3u);
    EXPECT_EQ(r.read(0x1000).addr, 0xa000u);
    EXPECT_EQ(r.unit.counters().iotlb_inv[3], 1u);
    EXPECT_EQ(r.unit.counters().inv_register, 1u);
}

TEST(RegisterInvalidation, ContextCommandStaysBusyThenReportsItsGranularity)
{
    Rig r(costs(500, 0, 0));
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.w64(CCMD, CCMD_ICC | uint64_t{1} << CCMD_CIRG_SHIFT);
    EXPECT_TRUE(r.r64(CCMD) & CCMD_ICC);
    r.run_until(499);
    EXPECT_TRUE(r.r64(CCMD) & CCMD_ICC);
    r.run_until(500);
    EXPECT_FALSE(r.r64(CCMD) & CCMD_ICC);
    EXPECT_EQ((r.r64(CCMD) >> CCMD_CAIG_SHIFT) & 3, 1u);
    uint64_t misses = r.unit.counters().context_misses;
    r.read(0x1000);
    EXPECT_EQ(r.unit.counters().context_misses, misses + 1);
}

TEST(RegisterInvalidation, ReservedGranularityIsReportedAsNotDone)
{
    Rig r(costs(0, 0, 0));
    r.w64(IOTLB, IOTLB_IVT); // IIRG 0
    EXPECT_FALSE(r.r64(IOTLB) & IOTLB_IVT);
    EXPECT_EQ((r.r64(IOTLB) >> IOTLB_IAIG_SHIFT) & 3, 0u);
}

TEST(RegisterInvalidation, IgnoredWhileQueuedInvalidationIsOn)
{
    Rig r;
    r.qi_enable();
    r.w64(CCMD, CCMD_ICC | uint64_t{1} << CCMD_CIRG_SHIFT);
    EXPECT_FALSE(r.r64(CCMD) & CCMD_ICC);
    EXPECT_FALSE(r.log.guest_errors.empty());
}

TEST(QueuedInvalidation, WaitWritesStatusAfterEverythingBeforeIt)
{
    Rig r(costs(100, 10, 50));
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.mem.put<uint64_t>(leaf, 0xa000 | SL_R | SL_W);
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x1000), Rig::wait(kStatus, 0xc0de)});
    // Nothing has completed at the moment of the tail write.
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u);
    r.run_until(109);
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u);
    r.run_until(110); // the IOTLB descriptor: 100 + 10 for its page
    EXPECT_EQ(r.read(0x1000).addr, 0xa000u);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    r.run_until(159);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    r.run_until(160); // then the wait: 50
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0xc0deu);
    EXPECT_EQ(r.r64(IQH), r.r64(IQT));
    EXPECT_EQ(r.unit.counters().waits, 1u);
    EXPECT_EQ(r.unit.counters().wait_modelled_ns, 160u);
    EXPECT_EQ(r.unit.counters().wait_achieved_ns, 160u);
    EXPECT_EQ(r.unit.counters().inv_queued, 2u - 1u); // the IOTLB descriptor (waits apart)
}

TEST(QueuedInvalidation, AchievedLatencyIncludesLateTimers)
{
    Rig r(costs(100, 0, 100));
    r.qi_enable();
    r.submit({Rig::cc_global(), Rig::wait(kStatus)});
    r.run_until(150);
    r.timers.now = 5000; // the host ran the timer late
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 1u);
    EXPECT_EQ(r.unit.counters().wait_modelled_ns, 200u);
    EXPECT_EQ(r.unit.counters().wait_achieved_ns, 5000u);
}

// A timer that fires late finds the invalidation and the wait behind it both due. With
// hold_waits (QEMU's glue sets it while IOMMU notifiers listen) the wait completes in the
// next call, after the host has told the notifiers; without, in the same call.
TEST(QueuedInvalidation, HeldWaitCompletesInTheCallAfterTheInvalidation)
{
    for (bool hold : {false, true}) {
        Config c = costs(100, 10, 50);
        c.hold_waits = hold;
        Rig r(c);
        r.qi_enable();
        r.submit({Rig::iotlb_page(1, 0x1000), Rig::wait(kStatus, 0xc0de)});
        r.timers.now = 5000;
        r.timers.pending.clear();
        r.unit.timer(static_cast<unsigned>(Timer::Queue));
        EXPECT_EQ(r.unit.counters().iotlb_inv[3], 1u) << hold;
        EXPECT_EQ(r.mem.get<uint32_t>(kStatus), hold ? 0u : 0xc0deu) << hold;
        // held: the queue's timer is armed for now, and that call completes the wait
        ASSERT_EQ(r.timers.next().has_value(), hold);
        if (hold) {
            EXPECT_EQ(r.timers.next()->second, 5000u);
            r.run_all();
            EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0xc0deu);
        }
        EXPECT_EQ(r.unit.counters().wait_modelled_ns, 160u) << hold;
        EXPECT_EQ(r.r64(IQH), r.r64(IQT));
    }
}

// What each invalidation tells copies of translations outside the unit (QEMU's IOMMU
// notifiers): a page-selective one its aligned range, anything wider everything.
TEST(QueuedInvalidation, EachInvalidationSaysWhatItTookAway)
{
    using U = Recorder::Unmap;
    constexpr uint64_t kAll = UINT64_MAX;
    Rig r(costs(100, 10, 50));
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x5000),
              Rig::iotlb_page(1, 0x12340000, 3),
              {2u << QI_G_SHIFT | 1ull << QI_DID_SHIFT | QI_IOTLB, 0},
              Rig::iotlb_global(),
              Rig::cc_global(),
              Rig::wait(kStatus)});
    r.run_all();
    ASSERT_EQ(r.mem.get<uint32_t>(kStatus), 1u);
    EXPECT_EQ(r.rec.unmaps, (std::vector<U>{{false, 0, 0x5000, 0x5fff},
                                            {false, 0, 0x12340000, 0x12347fff},
                                            {false, 0, 0, kAll},
                                            {false, 0, 0, kAll},
                                            {false, 0, 0, kAll}}));
    EXPECT_FALSE(r.r32(FSTS) & FSTS_IQE);
}

TEST(QueuedInvalidation, DomainAndGlobalGranularities)
{
    Rig r(costs(0, 0, 0));
    r.set_root();
    uint64_t a = r.alloc(), b = r.alloc();
    r.context(0x0010, 1, a);
    r.context(0x0018, 2, b);
    r.command(G_TE);
    r.map(a, 0x1000, 0xa000);
    r.map(b, 0x1000, 0xb000);
    r.read(0x1000, 0x0010);
    r.read(0x1000, 0x0018);
    r.qi_enable();
    r.submit({{uint64_t{2} << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_IOTLB, 0}});
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 1u);
    EXPECT_EQ(r.unit.counters().iotlb_inv[2], 1u);
    r.submit({Rig::iotlb_global()});
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 2u);
}

// CAP.ND says 256 domain ids: domain 255 is cached and invalidated like any other; a
// context entry naming 256 is refused, and invalidations naming 256 or 0xffff (descriptors
// carry 16 bits) drop nothing and leave the unit working.
TEST(QueuedInvalidation, DomainIdsAtAndBeyondTheSupportedRange)
{
    Rig r(costs(0, 0, 0));
    r.set_root();
    uint64_t a = r.alloc(), b = r.alloc();
    r.context(0x0010, 255, a);
    r.context(0x0018, 256, b);
    r.command(G_TE);
    r.map(a, 0x1000, 0xa000);
    r.map(b, 0x1000, 0xb000);
    EXPECT_TRUE(r.read(0x1000, 0x0010).ok);
    Translation t = r.read(0x1000, 0x0018);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, FR_CONTEXT_RESERVED);
    r.qi_enable();
    for (uint64_t did : {256u, 0xffffu}) {
        r.submit({{did << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_IOTLB, 0},
                  {did << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_CC, 0},
                  Rig::iotlb_page(static_cast<uint16_t>(did), 0x1000)});
    }
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 0u);
    EXPECT_EQ(r.unit.counters().queue_errors, 0u);
    uint64_t misses = r.unit.counters().iotlb_misses;
    EXPECT_EQ(r.read(0x1000, 0x0010).addr, 0xa000u); // still cached
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses);
    r.submit({{uint64_t{255} << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_IOTLB, 0}});
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 1u);
}

TEST(QueuedInvalidation, AddressMaskCoversARange)
{
    Rig r(costs(0, 0, 0));
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 8; i++) {
        r.map(pgd, i << 12, (0x100 + i) << 12);
        r.read(i << 12);
    }
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x4000, 2)}); // pages 4..7
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 4u);
    uint64_t misses = r.unit.counters().iotlb_misses;
    r.read(0x3000);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses);
    r.read(0x4000);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses + 1);
}

TEST(QueuedInvalidation, PageInvalidationDropsALargePageThatCoversIt)
{
    Rig r(costs(0, 0, 0));
    uint64_t pgd = r.basic();
    r.map(pgd, 0x200000, 0x400000, true, true, 4, 2);
    r.read(0x200000);
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x3ff000)});
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 1u);
}

TEST(QueuedInvalidation, ContextDeviceSelectiveWithFunctionMask)
{
    Rig r(costs(0, 0, 0));
    r.set_root();
    uint64_t pgd = r.alloc();
    for (uint16_t fn = 0; fn < 8; fn++)
        r.context(0x0100 | fn, 1, pgd);
    r.command(G_TE);
    r.map(pgd, 0x1000, 0x9000);
    for (uint16_t fn = 0; fn < 8; fn++)
        r.read(0x1000, 0x0100 | fn);
    r.qi_enable();
    // Device 0x0104 with FM=1: function bit 2 masked, so functions 0 and 4 go.
    r.submit({{uint64_t{1} << QI_CC_FM_SHIFT | uint64_t{0x0104} << QI_CC_SID_SHIFT |
                   3u << QI_G_SHIFT | QI_CC,
               0}});
    uint64_t misses = r.unit.counters().context_misses;
    for (uint16_t fn = 0; fn < 8; fn++)
        r.read(0x1000, 0x0100 | fn);
    EXPECT_EQ(r.unit.counters().context_misses, misses + 2);
}

TEST(QueuedInvalidation, CompletionEventFromWaitWithInterruptFlag)
{
    Rig r(costs(0, 0, 10));
    r.w32(IEADDR, Rig::kIeAddr);
    r.w32(IEDATA, 0x41);
    r.w32(IECTL, 0); // unmask
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 1, true)});
    EXPECT_TRUE(r.irq.msis.empty());
    r.run_all();
    ASSERT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.irq.msis[0], std::make_pair(uint64_t{Rig::kIeAddr}, uint32_t{0x41}));
    EXPECT_TRUE(r.r32(ICS) & ICS_IWC);
    // While IWC is set, further waits raise no new event.
    r.submit({Rig::wait(kStatus, 2, true)});
    r.run_all();
    EXPECT_EQ(r.irq.msis.size(), 1u);
    r.w32(ICS, ICS_IWC);
    r.submit({Rig::wait(kStatus, 3, true)});
    r.run_all();
    EXPECT_EQ(r.irq.msis.size(), 2u);
}

TEST(QueuedInvalidation, CompletionEventAimedAtTheUnitItselfIsRefused)
{
    Rig r(costs(0, 0, 10));
    r.w32(IEADDR, 0xfed90000 + IQT); // would ring the unit's own doorbell
    r.w32(IECTL, 0);
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 1, true)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 1u); // the wait itself completes
    EXPECT_TRUE(r.irq.msis.empty());
    EXPECT_EQ(r.unit.counters().inv_events, 0u);
    EXPECT_EQ(r.unit.counters().events_refused, 1u);
    EXPECT_TRUE(r.r32(ICS) & ICS_IWC);
    // Aimed right, the next completion is sent.
    r.w32(ICS, ICS_IWC);
    r.w32(IEADDR, Rig::kIeAddr);
    r.submit({Rig::wait(kStatus, 2, true)});
    r.run_all();
    EXPECT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.unit.counters().inv_events, 1u);
}

TEST(QueuedInvalidation, MaskedEventIsPendingUntilUnmasked)
{
    Rig r(costs(0, 0, 0));
    r.w32(IEADDR, Rig::kIeAddr);
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 1, true)});
    EXPECT_TRUE(r.irq.msis.empty());
    EXPECT_TRUE(r.r32(IECTL) & CTL_IP);
    r.w32(IECTL, 0);
    EXPECT_EQ(r.irq.msis.size(), 1u);
    EXPECT_FALSE(r.r32(IECTL) & CTL_IP);
}

// The IOTLB finds what a page- or domain-selective invalidation drops through its per-domain
// lists and tag lookups, not a scan: check it against the definition (drop exactly the
// entries of that domain that overlap the range) over random ranges, page sizes and domains.
TEST(QueuedInvalidation, SelectiveInvalidationDropsExactlyWhatItNames)
{
    Prng prng(7);
    for (unsigned round = 0; round < 200; round++) {
        Config c = costs(0, 0, 0);
        c.iotlb_entries = 4096;
        c.iotlb_ways = 64; // everything below stays cached
        Rig r(c);
        uint64_t pgd1 = r.basic(0x0010, 1);
        uint64_t pgd2 = r.alloc();
        r.context(0x0018, 2, pgd2);
        // 4 KiB pages at 0..1 MiB and a 2 MiB page at 4 MiB, in both domains.
        std::vector<uint64_t> pages;
        for (uint64_t i = 0; i < 256; i++)
            pages.push_back(i << 12);
        for (uint64_t pgd : {pgd1, pgd2}) {
            for (uint64_t p : pages)
                r.map(pgd, p, 0x400000 + p);
            r.map(pgd, 4u << 20, 8u << 20, true, true, 4, 2);
        }
        pages.push_back(4u << 20);
        for (uint16_t sid : {0x0010, 0x0018})
            for (uint64_t p : pages)
                ASSERT_TRUE(r.read(p, sid).ok);
        bool domain = prng.upto(3) == 0;
        unsigned am = static_cast<unsigned>(prng.upto(10));
        uint64_t addr = prng.upto(6u << 20) & ~((uint64_t{1} << (12 + am)) - 1);
        r.qi_enable();
        if (domain)
            r.submit({{uint64_t{1} << QI_DID_SHIFT | 2u << QI_G_SHIFT | QI_IOTLB, 0}});
        else
            r.submit({Rig::iotlb_page(1, addr, am)});
        uint64_t first = addr, last = addr + (uint64_t{1} << (12 + am)) - 1;
        for (uint16_t sid : {0x0010, 0x0018})
            for (uint64_t p : pages) {
                uint64_t size = p == (4u << 20) ? 2u << 20 : 4096;
                bool named = sid == 0x0010 && (domain || (p <= last && first <= p + size - 1));
                uint64_t misses = r.unit.counters().iotlb_misses;
                ASSERT_TRUE(r.read(p + 8, sid).ok);
                EXPECT_EQ(r.unit.counters().iotlb_misses - misses, named ? 1u : 0u)
                    << "round " << round << " sid " << sid << " page " << std::hex << p << " addr "
                    << addr << " am " << std::dec << am << " domain " << domain;
            }
    }
}

// Modelled time is the model's: with every host timer firing 40 us late, a queue of waits
// submitted at once still ends at the sum of their costs, and each wait's modelled latency is
// its place in the queue times the cost. The lateness shows in the achieved times only.
TEST(QueuedInvalidation, LateTimersDoNotAddUpInModelledTime)
{
    constexpr unsigned kWaits = 20;
    constexpr uint64_t kLate = 40000, kWait = 500;
    Rig r(costs(200, 10, kWait));
    r.qi_enable();
    for (unsigned i = 0; i < kWaits; i++) {
        r.mem.put<uint64_t>(r.iq + 16 * i, Rig::wait(kStatus, i + 1).first);
        r.mem.put<uint64_t>(r.iq + 16 * i + 8, kStatus);
    }
    r.w64(IQT, uint64_t{kWaits} << 4); // one IQT write: all submitted at t=0
    r.run_all_late(kLate);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), kWaits);
    ASSERT_EQ(r.rec.waits.size(), kWaits);
    for (unsigned i = 0; i < kWaits; i++)
        EXPECT_EQ(r.rec.waits[i].first, (i + 1) * kWait) << "wait " << i;
    EXPECT_EQ(r.unit.counters().wait_modelled_ns, kWait * kWaits * (kWaits + 1) / 2);
    // The first wait's timer came 40 us late; the rest were already due then.
    EXPECT_EQ(r.rec.waits.back().second, kWait + kLate);
}

// Descriptors submitted one at a time, each after the one before has been modelled to end:
// each starts at its own submission.
TEST(QueuedInvalidation, AnIdleQueueStartsAtTheSubmission)
{
    Rig r(costs(200, 10, 500));
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 1)});
    r.run_all_late(40000);
    r.timers.now += 1000000;
    r.submit({Rig::wait(kStatus, 2)});
    r.run_all_late(40000);
    ASSERT_EQ(r.rec.waits.size(), 2u);
    EXPECT_EQ(r.rec.waits[0].first, 500u);
    EXPECT_EQ(r.rec.waits[1].first, 500u);
}

TEST(QueuedInvalidation, WrapsAroundTheQueue)
{
    Rig r(costs(0, 0, 0));
    r.qi_enable();
    for (unsigned i = 0; i < 300; i++)
        r.submit({Rig::wait(kStatus, i)});
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 299u);
    EXPECT_EQ(r.r64(IQH), uint64_t{300 % 256} << 4);
}

TEST(QueuedInvalidation, ZeroCostWorkIsBoundedPerStep)
{
    Config c = costs(0, 0, 0);
    c.queue_step = 8;
    Rig r(c);
    r.qi_enable();
    for (unsigned i = 0; i < 100; i++) {
        r.mem.put<uint64_t>(r.iq + i * 16, Rig::wait(kStatus, i).first);
        r.mem.put<uint64_t>(r.iq + i * 16 + 8, kStatus);
    }
    r.w64(IQT, 100u << 4);
    EXPECT_EQ(r.r64(IQH), 8u << 4); // at most queue_step descriptors inside the write
    ASSERT_TRUE(r.timers.next());
    EXPECT_GT(r.timers.next()->second, r.timers.now); // the rest strictly later
    r.run_all();
    EXPECT_EQ(r.r64(IQH), 100u << 4);
}

TEST(QueuedInvalidation, DisableWithWorkPendingDropsIt)
{
    Rig r(costs(1000, 0, 0));
    r.qi_enable();
    r.submit({Rig::cc_global(), Rig::wait(kStatus)});
    r.command(G_QIE, false);
    EXPECT_FALSE(r.r32(GSTS) & G_QIE);
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    EXPECT_FALSE(r.log.guest_errors.empty());
}

TEST(Costs, RuntimeChangeIsChecked)
{
    Rig r;
    EXPECT_EQ(r.unit.set_costs({1, 2, 3, 4}), nullptr);
    EXPECT_EQ(r.unit.config().wait_ns, 3u);
    EXPECT_NE(r.unit.set_costs({kMaxCostNs + 1, 0, 0, 0}), nullptr);
    EXPECT_EQ(r.unit.config().inv_desc_ns, 1u);
}

} // namespace
} // namespace dmalab::vtd::testing
