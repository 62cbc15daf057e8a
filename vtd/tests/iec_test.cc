// SPDX-License-Identifier: GPL-2.0-or-later
// The interrupt entry cache (VT-d 6.5.2.7, 9.10): entries are used from the cache until a
// queued invalidation that takes modelled time removes them; global and index-selective
// invalidations, malformed descriptors, the fault plan, reset and migration.

#include "dmalab/vtd/faults.h"
#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

Config ir_config()
{
    Config c;
    c.ir = true;
    c.iec_inv_ns = 1000;
    c.wait_ns = 0;
    c.inv_desc_ns = 0;
    return c;
}

uint8_t vector_of(const Interrupt& i)
{
    return static_cast<uint8_t>(i.data & 0xff);
}

TEST(Cache, AnEntryIsUsedUntilInvalidated)
{
    Rig r(ir_config());
    r.ir_enable();
    r.irte(4, Rig::entry(0x41, 1));
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x41);
    EXPECT_EQ(r.unit.counters().iec_misses, 1u);
    r.irte(4, Rig::entry(0x42, 1)); // changed in memory, not invalidated
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x41);
    EXPECT_EQ(r.unit.counters().iec_hits, 1u);
    r.submit({Rig::iec_index(4)});
    // The invalidation takes iec_inv_ns: until it completes the old entry is used.
    r.run_until(r.timers.now + 999);
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x41);
    r.run_until(r.timers.now + 1);
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x42);
    EXPECT_EQ(r.unit.counters().iec_inv_index, 1u);
    EXPECT_EQ(r.unit.counters().iec_dropped, 1u);
}

TEST(Cache, NotPresentAndReservedEntriesAreNotCached)
{
    Rig r(ir_config());
    r.ir_enable();
    EXPECT_FALSE(r.intr(Rig::remappable(4)).ok);
    r.irte(4, Rig::entry(0x41, 1) | IRTE_IM);
    EXPECT_FALSE(r.intr(Rig::remappable(4)).ok);
    r.irte(4, Rig::entry(0x41, 1));
    EXPECT_TRUE(r.intr(Rig::remappable(4)).ok); // no invalidation needed
    EXPECT_EQ(r.unit.counters().iec_misses, 3u);
}

TEST(Cache, TheSourceCheckUsesTheCachedEntry)
{
    Rig r(ir_config());
    r.ir_enable();
    r.irte(4, Rig::entry(0x41, 1), Rig::verify_sid(0x0010));
    EXPECT_TRUE(r.intr(Rig::remappable(4), 0, 0x0010).ok);
    EXPECT_EQ(r.intr(Rig::remappable(4), 0, 0x0018).fault_reason, FaultReason::IrSourceId);
    EXPECT_EQ(r.unit.counters().iec_hits, 1u);
}

TEST(Cache, IndexSelectiveDropsItsAlignedRangeOnly)
{
    Rig r(ir_config());
    r.ir_enable();
    for (uint32_t i = 0; i < 16; i++) {
        r.irte(i, Rig::entry(0x40, 1));
        ASSERT_TRUE(r.intr(Rig::remappable(i)).ok);
        r.irte(i, Rig::entry(0x50, 1));
    }
    r.submit({Rig::iec_index(5, 2)}); // 4 entries from 4 (5 aligned down)
    r.run_all();
    EXPECT_EQ(r.unit.counters().iec_dropped, 4u);
    for (uint32_t i = 0; i < 16; i++)
        EXPECT_EQ(vector_of(r.intr(Rig::remappable(i))), i >= 4 && i < 8 ? 0x50 : 0x40) << i;
    // A wider mask than the cache holds scans it instead: same result.
    r.submit({Rig::iec_index(0, 15)});
    r.run_all();
    EXPECT_EQ(r.unit.counters().iec_dropped, 4u + 16u);
    for (uint32_t i = 0; i < 16; i++)
        EXPECT_EQ(vector_of(r.intr(Rig::remappable(i))), 0x50) << i;
}

TEST(Cache, GlobalDropsEverythingAndCapacityEvicts)
{
    Config c = ir_config();
    c.iec_entries = 4;
    Rig r(c);
    r.ir_enable();
    for (uint32_t i = 0; i < 64; i++) {
        r.irte(i, Rig::entry(0x40, 1));
        ASSERT_TRUE(r.intr(Rig::remappable(i)).ok);
    }
    EXPECT_EQ(r.unit.counters().iec_evictions, 60u);
    r.submit({Rig::iec_global()});
    r.run_all();
    EXPECT_EQ(r.unit.counters().iec_dropped, 4u);
    EXPECT_EQ(r.unit.counters().iec_inv_global, 2u); // ir_enable's and this one
}

TEST(Queue, MalformedInterruptCacheDescriptors)
{
    const std::pair<uint64_t, uint64_t> bad[] = {
        {QI_IEC | uint64_t{1} << 5, 0},          // reserved bit 5
        {QI_IEC | uint64_t{1} << 48, 0},         // reserved bits 63:48
        {QI_IEC, 1},                             // upper qword reserved
        {Rig::iec_index(0, kMhmv + 1).first, 0}, // mask beyond ECAP.MHMV
        {QI_IEC | uint64_t{1} << 9, 0},          // type bits 11:9
    };
    for (auto d : bad) {
        Rig r(ir_config());
        r.qi_enable();
        r.submit({d});
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE) << std::hex << d.first << " " << d.second;
        EXPECT_EQ(r.unit.counters().iec_inv_global + r.unit.counters().iec_inv_index, 0u);
    }
    Rig ok(ir_config());
    ok.qi_enable();
    ok.submit({Rig::iec_index(0, kMhmv), Rig::iec_global()});
    ok.run_all();
    EXPECT_FALSE(ok.r32(FSTS) & FSTS_IQE);
    EXPECT_EQ(ok.unit.counters().inv_queued, 2u);
}

TEST(Queue, AStormOfInvalidationsDrainsInBoundedSteps)
{
    Config c = ir_config();
    c.iec_inv_ns = 0;
    c.queue_step = 8;
    Rig r(c);
    r.qi_enable(0); // 256 descriptors
    for (unsigned round = 1; round <= 4; round++) {
        // 255 global invalidations made visible by one IQT write.
        for (unsigned i = 0; i < 255; i++) {
            auto [lo, hi] = Rig::iec_global();
            r.mem.put<uint64_t>(r.iq + r.tail * 16, lo);
            r.mem.put<uint64_t>(r.iq + r.tail * 16 + 8, hi);
            r.tail = (r.tail + 1) % 256;
        }
        uint64_t start = r.timers.now;
        r.w64(IQT, uint64_t{r.tail} << 4);
        unsigned steps = 0;
        for (; r.timers.next() && steps < 1000; steps++)
            r.run_until(r.timers.next()->second);
        EXPECT_EQ(r.unit.counters().iec_inv_global, round * 255u);
        // At most queue_step a step, each step strictly later in virtual time.
        EXPECT_GE(steps, 255u / 8);
        EXPECT_GE(r.timers.now - start, 255u / 8);
    }
}

TEST(FaultPlan, ADroppedInvalidationLeavesTheEntryCached)
{
    Rig r(ir_config());
    r.ir_enable();
    faults::Injector injector;
    std::string err;
    auto plan =
        faults::parse_plan(R"({"rules": [{"kind": "drop-invalidation", "op": "interrupt-cache"}]})",
                           fault_spec(), "vtd", &err);
    ASSERT_TRUE(plan) << err;
    injector.set_plan(*plan);
    r.unit.set_injector(&injector);
    r.irte(4, Rig::entry(0x41, 1));
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x41);
    r.irte(4, Rig::entry(0x42, 1));
    r.submit({Rig::iec_index(4), Rig::wait(0x100, 5)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(0x100), 5u); // the wait completed
    EXPECT_EQ(vector_of(r.intr(Rig::remappable(4))), 0x41);
    EXPECT_EQ(injector.total(), 1u);
}

TEST(Lifecycle, ResetTurnsRemappingOffAndEmptiesTheCache)
{
    Rig r(ir_config());
    r.ir_enable();
    r.irte(4, Rig::entry(0x41, 1));
    EXPECT_TRUE(r.intr(Rig::remappable(4)).ok);
    r.unit.reset();
    EXPECT_EQ(r.r64(IRTA), 0u);
    EXPECT_EQ(r.r32(GSTS) & (G_IRE | G_SIRTP | G_CFI), 0u);
    Interrupt i = r.intr(Rig::remappable(4));
    EXPECT_TRUE(i.ok);
    EXPECT_FALSE(i.remapped); // remapping off: passed through
}

TEST(Lifecycle, MigrationKeepsTheLatchedTableNotTheCache)
{
    Config c = ir_config();
    Rig a(c);
    a.ir_enable(7, true);
    a.irte(4, Rig::entry(0x41, 0x100, true));
    EXPECT_TRUE(a.intr(Rig::remappable(4)).ok);
    a.irte(4, Rig::entry(0x42, 0x100, true)); // not invalidated: only the cache has 0x41
    a.w64(IRTA, 0);                           // IRTA changed, not latched
    StateWriter w;
    a.unit.save(w);

    Rig b(c);
    b.mem.ram = a.mem.ram;
    StateReader in(w.bytes);
    ASSERT_TRUE(b.unit.load(in));
    EXPECT_TRUE(b.unit.interrupt_remapping_enabled());
    Interrupt i = b.intr(Rig::remappable(4));
    ASSERT_TRUE(i.ok);
    EXPECT_EQ(vector_of(i), 0x42);      // read again from the table SIRTP latched
    EXPECT_EQ(i.address >> 32, 0x100u); // still x2APIC mode
    // The same state is refused by a unit without interrupt remapping.
    Rig n;
    StateReader again(w.bytes);
    EXPECT_FALSE(n.unit.load(again));
}

} // namespace
} // namespace dmalab::vtd::testing
