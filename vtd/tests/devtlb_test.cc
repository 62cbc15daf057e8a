// SPDX-License-Identifier: GPL-2.0-or-later
// Device-TLB support (ECAP.DT): context entries with TT=01, the device-TLB invalidation
// descriptor (6.5.2.5) and its size encoding, its modelled time before a wait, the fault
// plan's say over it, and everything refused without it.

#include "dmalab/vtd/faults.h"
#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t kStatus = 0x8000;
constexpr uint64_t ECAP_DT = field_mask(fields::ECAP, "DT");
constexpr uint64_t SL_TM = field_mask(slpte::F, "TM");
static_assert(ECAP_DT == 1u << 2 && SL_TM == uint64_t{1} << 62);
// Type, PFSID 3:0, MIP, SID, PFSID 15:4; S and the address.
static_assert(defined_bits(qi::DEVTLB_LO) == 0xfff0ffff001ff00f);
static_assert(defined_bits(qi::DEVTLB_HI) == 0xfffffffffffff001);

Config dt_config(bool dt = true)
{
    Config c = costs(100, 10, 50);
    c.dt = dt;
    return c;
}

// A device-TLB invalidation for requester sid, as Linux builds it (qi_flush_dev_iotlb):
// 2^mask pages from addr, the size in the address's low bits when mask > 0.
std::pair<uint64_t, uint64_t> devtlb(uint16_t sid, uint64_t addr, unsigned mask = 0,
                                     unsigned qdep = 0)
{
    uint64_t hi = addr;
    if (mask)
        hi |= ((uint64_t{1} << (12 + mask - 1)) - 1) | 1;
    return {uint64_t{sid} << 32 | uint64_t{qdep} << 16 | QI_DEV_IOTLB, hi & ~uint64_t{0xffe}};
}

// Puts `plan` in `injector` and gives the injector to the rig's unit.
::testing::AssertionResult with_plan(Rig& r, faults::Injector& injector, const std::string& plan)
{
    std::string err;
    auto p = faults::parse_plan(plan, fault_spec(), "vtd0", &err);
    if (!p)
        return ::testing::AssertionFailure() << err;
    injector.set_plan(*p);
    r.unit.set_injector(&injector);
    return ::testing::AssertionSuccess();
}

TEST(DeviceTlb, SizeEncoding)
{
    EXPECT_EQ(devtlb_pages_log2(0x5000), 0u);                   // S clear: one page
    EXPECT_EQ(devtlb_pages_log2(0x4000 | 1), 1u);               // bit 12 clear: two pages
    EXPECT_EQ(devtlb_pages_log2(0x3000 | 1), 3u);               // bits 12-13 set, 14 clear: eight
    EXPECT_EQ(devtlb_pages_log2(devtlb(0, 0, 52).second), 52u); // Linux's "all"
    EXPECT_EQ(devtlb_pages_log2(~uint64_t{0xffe}), 52u);        // every address bit set
    Decoded d =
        decode(InvDesc{devtlb(0x0108, 0x12340000, 3).first, devtlb(0x0108, 0x12340000, 3).second},
               {kMamv, false, kMhmv, true});
    ASSERT_TRUE(std::holds_alternative<DevTlbInv>(d));
    const auto& inv = std::get<DevTlbInv>(d);
    EXPECT_EQ(inv.sid, 0x0108u);
    EXPECT_EQ(inv.pages_log2, 3u);
    EXPECT_EQ(inv.addr, 0x12340000u); // the size bits are not address bits
}

TEST(DeviceTlb, AdvertisedOnlyWhenConfigured)
{
    Rig on(dt_config(true)), off(dt_config(false));
    EXPECT_TRUE(on.r64(ECAP) & ECAP_DT);
    EXPECT_FALSE(off.r64(ECAP) & ECAP_DT);
    Config c = dt_config(true);
    c.qi = false;
    EXPECT_NE(check(c), nullptr); // only a queued descriptor invalidates a device-TLB
}

TEST(DeviceTlb, ContextWithDeviceTlbTranslates)
{
    for (bool dt : {true, false}) {
        Rig r(dt_config(dt));
        r.set_root();
        uint64_t pgd = r.alloc();
        r.map(pgd, 0x1000, 0x9000);
        r.context(0x0011, 1, pgd, 2, TT_ALL);
        r.command(G_TE);
        Translation t = r.read(0x1000, 0x0011);
        if (dt) {
            EXPECT_TRUE(t.ok);
            EXPECT_EQ(t.addr, 0x9000u);
        } else {
            EXPECT_EQ(t.fault_reason, FR_CONTEXT_INVALID);
        }
    }
}

TEST(DeviceTlb, TransientMappingBitIsAHintWithDt)
{
    for (bool dt : {true, false}) {
        Rig r(dt_config(dt));
        uint64_t pgd = r.basic();
        uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
        r.mem.put<uint64_t>(leaf, 0x9000 | SL_TM | SL_R | SL_W);
        Translation t = r.read(0x1000);
        EXPECT_EQ(t.ok, dt);
        EXPECT_EQ(t.fault_reason, dt ? FaultReason::None : FR_PAGE_RESERVED);
    }
}

TEST(DeviceTlb, InvalidationTakesItsTimeBeforeTheWait)
{
    Rig r(dt_config());
    r.qi_enable();
    // 8 pages, one round trip: 100 (no cost per page); then the wait, 50.
    r.submit({devtlb(0x0010, 0x40000, 3, 0), Rig::wait(kStatus, 7)});
    r.run_until(99);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 0u);
    r.run_until(100);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 1u);
    EXPECT_EQ(r.unit.counters().devtlb_pages, 8u);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    r.run_until(149);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    r.run_until(150);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 7u);
    EXPECT_EQ(r.unit.counters().wait_modelled_ns, 150u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_IQE);
    // Linux's "everything", 2^52 pages: the same round trip.
    r.submit({devtlb(0x0010, 0, 52), Rig::wait(kStatus, 8)});
    r.run_until(150 + 150);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 8u);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 2u);
    EXPECT_EQ(r.unit.counters().devtlb_pages, 8u + (uint64_t{1} << 52));
}

// A device-TLB invalidation takes away its requester's range only; Linux's "all" (2^52
// pages) is every address.
TEST(DeviceTlb, SaysWhatItTookAwayForItsRequester)
{
    Rig r(dt_config());
    r.qi_enable();
    r.submit({devtlb(0x0108, 0x12340000, 3), devtlb(0x0010, 0, 52), Rig::wait(kStatus, 1)});
    r.run_all();
    ASSERT_EQ(r.mem.get<uint32_t>(kStatus), 1u);
    EXPECT_EQ(r.rec.unmaps, (std::vector<Recorder::Unmap>{{true, 0x0108, 0x12340000, 0x12347fff},
                                                          {true, 0x0010, 0, UINT64_MAX}}));
}

TEST(DeviceTlb, ReservedBitsAreQueueErrors)
{
    const std::pair<uint64_t, uint64_t> bad[] = {
        {QI_DEV_IOTLB | 1u << 4, 0},           // bits 11:4
        {QI_DEV_IOTLB | 1u << 21, 0},          // bits 31:21
        {QI_DEV_IOTLB | uint64_t{1} << 48, 0}, // bits 51:48
        {QI_DEV_IOTLB | 1u << 9, 0},           // type bits 11:9 (256-bit types)
        {QI_DEV_IOTLB, 0x1000 | 2},            // upper qword bits 11:1
    };
    for (auto d : bad) {
        Rig r(dt_config());
        r.qi_enable();
        r.submit({d});
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE) << std::hex << d.first << " " << d.second;
        EXPECT_EQ(r.unit.counters().devtlb_inv, 0u);
    }
    // PFSID and MIP are fields, not reserved bits.
    Rig r(dt_config());
    r.qi_enable();
    r.submit({{devtlb(0x0010, 0x1000).first | 0xa000 | uint64_t{0x123} << 52 | 31u << 16, 0x1000}});
    r.run_all();
    EXPECT_FALSE(r.r32(FSTS) & FSTS_IQE);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 1u);
}

TEST(DeviceTlb, FaultPlanDelaysAndDrops)
{
    for (const char* kind : {"delay-invalidation", "drop-invalidation"}) {
        Rig r(dt_config());
        bool delay = std::string(kind) == "delay-invalidation";
        std::string plan = std::string(R"({"rules": [{"kind": ")") + kind + "\"" +
                           (delay ? R"(, "delay": "1us")" : "") + R"(, "op": "device-tlb"}]})";
        faults::Injector injector;
        ASSERT_TRUE(with_plan(r, injector, plan));
        r.qi_enable();
        r.submit({devtlb(0x0010, 0x1000), Rig::wait(kStatus, 9)});
        r.run_all();
        EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 9u); // the wait completes either way
        EXPECT_EQ(r.unit.counters().devtlb_inv, delay ? 1u : 0u);
        // 100, + 1000 when delayed, + 50 for the wait
        EXPECT_EQ(r.unit.counters().wait_modelled_ns, delay ? 1150u : 150u) << kind;
    }
}

// A plan that delays a device-TLB invalidation past devtlb_timeout_ns: ITE at the time-out,
// the fault event, the wait behind it never completed, IQH at IQT, nothing fetched until
// ITE is cleared; then the same batch submitted again completes (Linux's -EAGAIN path).
TEST(DeviceTlb, AnInvalidationThatTimesOutRaisesIteAndCompletesNoWaitBehindIt)
{
    Config c = dt_config();
    c.devtlb_timeout_ns = 5000;
    Rig r(c);
    faults::Injector injector;
    ASSERT_TRUE(with_plan(r, injector, R"({"rules": [{"kind": "delay-invalidation",
        "delay": "1ms", "op": "device-tlb", "count": 1}]})"));
    r.qi_enable();
    r.w32(FEADDR, Rig::kFeAddr);
    r.w32(FEDATA, 0x4021);
    r.w32(FECTL, 0); // the fault event unmasked
    r.submit({Rig::iotlb_global(), devtlb(0x0010, 0x1000), Rig::wait(kStatus, 9)});
    uint64_t start = r.timers.now;
    r.run_until(start + 100 + 4999); // the IOTLB one, and the device-TLB one not yet timed out
    EXPECT_FALSE(r.r32(FSTS) & FSTS_ITE);
    r.run_all();
    EXPECT_TRUE(r.r32(FSTS) & FSTS_ITE);
    EXPECT_EQ(r.unit.counters().queue_timeouts, 1u);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 0u); // the device never said it was done
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u); // the wait behind it: not completed
    EXPECT_EQ(r.r64(IQH), r.r64(IQT));
    ASSERT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.irq.msis[0], std::make_pair(uint64_t{Rig::kFeAddr}, uint32_t{0x4021}));
    ASSERT_EQ(r.rec.unmaps.size(), 1u); // the global IOTLB one only
    // Nothing is fetched while ITE is set.
    r.submit({Rig::wait(kStatus, 7)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    // Cleared: the queue goes on from IQH, and the batch again completes.
    r.w32(FSTS, FSTS_ITE);
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 7u);
    r.submit({Rig::iotlb_global(), devtlb(0x0010, 0x1000), Rig::wait(kStatus, 9)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 9u);
    EXPECT_EQ(r.unit.counters().devtlb_inv, 1u);
    EXPECT_EQ(r.unit.counters().queue_timeouts, 1u);
}

TEST(DeviceTlb, WithoutATimeOutADelayIsWaitedFor)
{
    Rig r(dt_config()); // devtlb_timeout_ns 0
    faults::Injector injector;
    ASSERT_TRUE(with_plan(
        r, injector,
        R"({"rules": [{"kind": "delay-invalidation", "delay": "1s", "op": "device-tlb"}]})"));
    r.qi_enable();
    r.submit({devtlb(0x0010, 0x1000), Rig::wait(kStatus, 9)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 9u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_ITE);
    EXPECT_EQ(r.unit.counters().queue_timeouts, 0u);
}

TEST(DeviceTlb, ATimeOutPastASecondIsRefused)
{
    Config c = dt_config();
    c.devtlb_timeout_ns = 1'000'000'001;
    EXPECT_NE(check(c), nullptr);
}

// The time-out pending across a save/load: the destination raises ITE when it is due. A
// reset while it is pending: nothing times out, the queue is idle.
TEST(DeviceTlb, APendingTimeOutMigratesAndAResetForgetsIt)
{
    Config c = dt_config();
    c.devtlb_timeout_ns = 5000;
    Rig a(c);
    faults::Injector injector;
    ASSERT_TRUE(with_plan(
        a, injector,
        R"({"rules": [{"kind": "delay-invalidation", "delay": "1ms", "op": "device-tlb"}]})"));
    a.qi_enable();
    a.submit({devtlb(0x0010, 0x1000), Rig::wait(kStatus, 9)});
    a.run_until(a.timers.now + 1000); // started, not yet timed out

    Rig b(c);
    ASSERT_TRUE(b.take_state_of(a));
    b.run_all();
    EXPECT_TRUE(b.r32(FSTS) & FSTS_ITE);
    EXPECT_EQ(b.unit.counters().queue_timeouts, 1u);
    EXPECT_EQ(b.mem.get<uint32_t>(kStatus), 0u);

    a.unit.reset();
    a.run_all();
    EXPECT_FALSE(a.r32(FSTS) & FSTS_ITE);
    EXPECT_EQ(a.unit.counters().queue_timeouts, 0u);
    EXPECT_EQ(a.mem.get<uint32_t>(kStatus), 0u);
}

} // namespace
} // namespace dmalab::vtd::testing
