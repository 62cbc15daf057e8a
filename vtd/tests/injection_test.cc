// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans applied by the unit: delayed and dropped invalidations, injected translation
// faults, and what they leave alone.

#include "dmalab/vtd/faults.h"
#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t kStatus = 0x8000;

struct InjectRig : Rig {
    explicit InjectRig(const char* plan) : Rig(costs(100, 10, 50))
    {
        std::string err;
        auto p = faults::parse_plan(plan, fault_spec(), "vtd0", &err);
        EXPECT_TRUE(p) << err;
        if (p)
            injector.set_plan(*p);
        unit.set_injector(&injector);
    }
    faults::Injector injector;
};

TEST(Injection, DelayedQueuedInvalidationHoldsTheWaitBehindIt)
{
    InjectRig r(R"({"rules": [{"kind": "delay-invalidation", "delay": "1ms", "op": "iotlb"}]})");
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.mem.put<uint64_t>(leaf, 0xa000 | SL_R | SL_W);
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x1000), Rig::wait(kStatus)});
    r.run_until(1000109);
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u) << "the invalidation is not in effect yet";
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 0u);
    r.run_until(1000110);
    EXPECT_EQ(r.read(0x1000).addr, 0xa000u);
    r.run_until(1000160);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 1u);
    EXPECT_EQ(r.unit.counters().wait_modelled_ns, 1000160u);
    EXPECT_EQ(r.injector.total(), 1u) << "the wait was not an IOTLB invalidation";
}

TEST(Injection, DelayedRegisterInvalidationKeepsIvtSet)
{
    InjectRig r(R"({"rules": [{"kind": "delay-invalidation", "delay": 5000}]})");
    r.basic();
    r.w64(IVA, 0x1000);
    r.w64(IOTLB, IOTLB_IVT | uint64_t{3} << IOTLB_IIRG_SHIFT | uint64_t{1} << IOTLB_DID_SHIFT);
    r.run_until(5109);
    EXPECT_TRUE(r.r64(IOTLB) & IOTLB_IVT);
    r.run_until(5110);
    EXPECT_FALSE(r.r64(IOTLB) & IOTLB_IVT);
    r.w64(CCMD, CCMD_ICC | uint64_t{1} << CCMD_CIRG_SHIFT);
    r.run_until(5110 + 5099);
    EXPECT_TRUE(r.r64(CCMD) & CCMD_ICC);
    r.run_until(5110 + 5100);
    EXPECT_FALSE(r.r64(CCMD) & CCMD_ICC);
}

TEST(Injection, DroppedInvalidationCompletesButTheStaleEntryStays)
{
    InjectRig r(R"({"rules": [{"kind": "drop-invalidation", "op": "iotlb",
                                "range": ["0x1000", "0x2000"], "nth": 1}]})");
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    r.map(pgd, 0x5000, 0x6000);
    r.read(0x1000);
    r.mem.put<uint64_t>(leaf, 0); // unmapped
    r.qi_enable();
    // The first invalidation of 0x1000 is dropped; one of 0x5000 is outside the range.
    r.submit({Rig::iotlb_page(1, 0x5000), Rig::iotlb_page(1, 0x1000), Rig::wait(kStatus)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 1u) << "the wait still completes";
    Translation t = r.read(0x1000);
    EXPECT_TRUE(t.ok) << "the dropped invalidation left the entry";
    EXPECT_EQ(t.addr, 0x9000u);
    EXPECT_EQ(r.injector.total(), 1u);
    EXPECT_EQ(r.unit.counters().iotlb_inv[3], 1u) << "only the 0x5000 one was done";
    // The next invalidation of it (count 1 is spent) works.
    r.submit({Rig::iotlb_page(1, 0x1000), Rig::wait(kStatus, 2)});
    r.run_all();
    EXPECT_FALSE(r.read(0x1000).ok);
}

TEST(Injection, WaitsAreNeverDropped)
{
    InjectRig r(R"({"rules": [{"kind": "drop-invalidation"}]})");
    r.basic();
    r.qi_enable();
    r.submit({Rig::cc_global(), Rig::wait(kStatus, 7)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 7u);
    EXPECT_EQ(r.injector.total(), 1u);
    EXPECT_EQ(r.unit.counters().cc_inv[1], 0u);
}

TEST(Injection, TranslationFaultIsRecordedWithTheChosenReason)
{
    InjectRig r(R"({"rules": [{"kind": "translation-fault", "reason": 6, "requester": "00:02.0",
                                "op": "read", "nth": 2}]})");
    uint64_t pgd = r.basic(0x0010);
    r.map(pgd, 0x1000, 0x9000);
    EXPECT_TRUE(r.read(0x1000).ok);
    EXPECT_TRUE(r.write(0x1000).ok) << "writes are not selected";
    Translation t = r.read(0x1000);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, FR_READ);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_PPF);
    uint64_t hi = r.r64(FRCD + 8);
    EXPECT_EQ(record_reason(hi), FR_READ);
    EXPECT_EQ(hi & 0xffff, 0x0010u);
    EXPECT_EQ(r.unit.counters().faults_recorded, 1u);
    EXPECT_TRUE(r.read(0x1000).ok) << "count 1: the next read translates";
    // Another requester is never selected; queries (perm 0) never fault.
    r.context(0x0018, 1, pgd);
    EXPECT_TRUE(r.unit.translate(0x0018, kNoPasid, 0x1000, Unit::kRead).ok);
    EXPECT_TRUE(r.unit.translate(0x0010, kNoPasid, 0x1000, 0).ok);
}

TEST(Injection, NothingWithTranslationOff)
{
    InjectRig r(R"({"rules": [{"kind": "translation-fault", "reason": 5}]})");
    EXPECT_TRUE(r.write(0x1000).ok);
    EXPECT_EQ(r.injector.total(), 0u);
}

TEST(Injection, DropFlagsMigrate)
{
    const char* plan = R"({"rules": [{"kind": "drop-invalidation", "op": "iotlb"}]})";
    InjectRig a(plan), b(plan);
    uint64_t pgd = a.basic();
    a.map(pgd, 0x1000, 0x9000);
    a.read(0x1000);
    a.w64(IVA, 0x1000);
    a.w64(IOTLB, IOTLB_IVT | uint64_t{3} << IOTLB_IIRG_SHIFT | uint64_t{1} << IOTLB_DID_SHIFT);
    StateWriter w;
    a.unit.save(w);
    b.mem.ram = a.mem.ram;
    StateReader rd(w.bytes);
    ASSERT_TRUE(b.unit.load(rd));
    b.unit.set_injector(nullptr); // the decision was taken before migration
    b.run_all();
    EXPECT_FALSE(b.r64(IOTLB) & IOTLB_IVT);
    EXPECT_EQ(b.unit.counters().iotlb_inv[3], 0u) << "the dropped invalidation stayed dropped";
}

TEST(Injection, SpecRefusesDelaysLinuxWouldNotSurvive)
{
    std::string err;
    EXPECT_FALSE(faults::parse_plan(R"({"rules": [{"kind": "delay-invalidation", "delay": "2s"}]})",
                                    fault_spec(), "vtd0", &err));
    EXPECT_NE(err.find("at most 1000000000 ns"), std::string::npos) << err;
    EXPECT_FALSE(faults::parse_plan(R"({"rules": [{"kind": "translation-fault", "reason": 13}]})",
                                    fault_spec(), "vtd0", &err));
    EXPECT_NE(err.find("\"reason\" must be one of 0x1,"), std::string::npos) << err;
}

} // namespace
} // namespace dmalab::vtd::testing
