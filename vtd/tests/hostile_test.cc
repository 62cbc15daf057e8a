// SPDX-License-Identifier: GPL-2.0-or-later
// What a hostile or broken guest can do to the unit: malformed descriptors and queues,
// status writes aimed at the unit itself, odd register accesses, resets and migration in
// the middle of work. Also the stale-translation audit.

#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t kStatus = 0x8000;

Config zero_cost()
{
    Config c;
    c.inv_desc_ns = c.inv_page_ns = c.wait_ns = 0;
    return c;
}

TEST(QueueErrors, UnknownDescriptorStopsTheQueueAtIt)
{
    Rig r(zero_cost());
    r.w32(FEADDR, Rig::kFeAddr);
    r.w32(FECTL, 0);
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 1),
              {0x9, 0} /* page-group response: not supported */,
              Rig::wait(kStatus, 3)});
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 1u);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
    EXPECT_EQ(r.r64(IQH), 1u << 4);   // on the bad descriptor
    EXPECT_EQ(r.irq.msis.size(), 1u); // IQE is a fault event
    // The driver replaces the bad descriptor and clears IQE: processing resumes there.
    r.mem.put<uint64_t>(r.iq + 16, Rig::wait(kStatus, 2).first);
    r.mem.put<uint64_t>(r.iq + 24, kStatus);
    r.w32(FSTS, FSTS_IQE);
    EXPECT_EQ(r.r64(IQH), 3u << 4);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 3u);
    EXPECT_EQ(r.unit.counters().queue_errors, 1u);
}

TEST(QueueErrors, ReservedBitsAndUnadvertisedTypes)
{
    const std::pair<uint64_t, uint64_t> bad[] = {
        {QI_CC | 1u << QI_G_SHIFT | 1u << 8, 0},    // reserved bit in a cc descriptor
        {QI_CC, 0},                                 // granularity 0
        {QI_IOTLB | 3u << QI_G_SHIFT, 0x1000 | 19}, // mask beyond CAP.MAMV
        {QI_IOTLB | 1u << QI_G_SHIFT, 0x80},        // reserved bit in the upper qword
        {QI_WAIT | QI_WAIT_SW, kStatus | 1},        // misaligned status address
        {QI_DEV_IOTLB, 0},                          // device-TLB: not advertised
        {QI_IEC, 0},                                // interrupt entry cache: no IR
        {QI_WAIT | 1u << 9, 0},                     // type bits 11:9 (256-bit types)
    };
    for (auto d : bad) {
        Rig r(zero_cost());
        r.qi_enable();
        r.submit({d});
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE) << std::hex << d.first << " " << d.second;
        EXPECT_EQ(r.r64(IQH), 0u);
    }
}

TEST(QueueErrors, TailBeyondTheQueue)
{
    Rig r(zero_cost());
    r.qi_enable(); // 256 entries
    r.w64(IQT, 300u << 4);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
    EXPECT_EQ(r.r64(IQH), 0u);
}

TEST(QueueErrors, MisalignedTailBitsAreIgnored)
{
    Rig r(zero_cost());
    r.qi_enable();
    r.mem.put<uint64_t>(r.iq, Rig::wait(kStatus, 5).first);
    r.mem.put<uint64_t>(r.iq + 8, kStatus);
    r.w64(IQT, (1u << 4) | 0x8);
    EXPECT_EQ(r.r64(IQT), 1u << 4);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 5u);
    EXPECT_FALSE(r.log.guest_errors.empty()); // reserved bits written as 1
}

TEST(QueueErrors, QueueOutsideMemory)
{
    Rig r(zero_cost());
    r.w64(IQA, 0x40000000);
    r.w64(IQT, 0);
    r.command(G_QIE);
    r.w64(IQT, 1u << 4);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
}

// IQA bits at and above the host address width (aw_bits) are ignored (VT-d 10.4.23): the
// queue runs from the low bits, and a base near 2^64 cannot wrap a fetch into low memory.
TEST(QueueBase, BitsAboveTheHostAddressWidthAreIgnored)
{
    for (uint64_t high : {uint64_t{1} << 48, uint64_t{1} << 63, ~uint64_t{0} << 48}) {
        Rig r(zero_cost());
        uint64_t iq = r.alloc();
        r.w64(IQA, high | iq);
        r.w64(IQT, 0);
        r.command(G_QIE);
        r.mem.put<uint64_t>(iq, Rig::wait(kStatus, 7).first);
        r.mem.put<uint64_t>(iq + 8, kStatus);
        r.w64(IQT, 1u << 4);
        EXPECT_FALSE(r.r32(FSTS) & FSTS_IQE) << std::hex << high;
        EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 7u) << std::hex << high;
    }
}

TEST(QueueBase, TopOfTheAddressSpaceDoesNotWrapIntoLowMemory)
{
    Rig r(zero_cost());
    r.qi_enable(1); // 512 entries
    for (unsigned i = 0; i < 256; i++)
        r.submit({Rig::wait(kStatus, i)});
    ASSERT_EQ(r.r64(IQH), 256u << 4);
    // A descriptor in low memory that the wrap would reach: base 2^64 - 4 KiB plus
    // head * 16 = 4 KiB is address 0 when the high bits are kept.
    r.mem.put<uint64_t>(0, Rig::wait(kStatus, 0xbad).first);
    r.mem.put<uint64_t>(8, kStatus);
    r.w64(IQA, ~uint64_t{0xfff} | 1);
    r.w64(IQT, 257u << 4);
    EXPECT_NE(r.mem.get<uint32_t>(kStatus), 0xbadu);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE); // 2^48 is outside memory
}

TEST(WaitStatus, UnwritableAddressIsCountedAndTheQueueGoesOn)
{
    Rig r(zero_cost());
    r.qi_enable();
    r.submit({Rig::wait(0x40000000, 1), Rig::wait(kStatus, 2)});
    EXPECT_EQ(r.unit.counters().wait_status_failed, 1u);
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 2u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_IQE);
}

TEST(WaitStatus, AimedAtTheUnitsOwnRegistersIsRefused)
{
    Rig r(zero_cost());
    // A window where the unit's registers would be: writes there reach the unit.
    constexpr uint64_t kWindow = 0xf00000;
    r.mem.add_window({kWindow, kRegWindow, [&r](uint64_t off, const uint8_t* d, size_t n) {
                          uint32_t v = 0;
                          std::memcpy(&v, d, n < 4 ? n : 4);
                          r.unit.mmio_write(static_cast<uint32_t>(off), v, 4);
                      }});
    r.qi_enable();
    // A status write of "TE" into GCMD, and one of 0 into the queue tail.
    r.submit({Rig::wait(kWindow + GCMD, G_TE), Rig::wait(kWindow + IQT, 0)});
    EXPECT_FALSE(r.r32(GSTS) & G_TE);
    EXPECT_EQ(r.r64(IQH), r.r64(IQT));
    EXPECT_EQ(r.r64(IQT), 2u << 4);
}

TEST(Registers, WrongSizesAreIgnored)
{
    Rig r;
    r.unit.mmio_write(GCMD + 3, 0x80, 1); // TE, as a byte write
    r.unit.mmio_write(GCMD, G_TE, 2);
    EXPECT_FALSE(r.r32(GSTS) & G_TE);
    EXPECT_EQ(r.unit.mmio_read(VER, 1), 0u);
    EXPECT_EQ(r.unit.mmio_read(CAP + 4, 8), 0u); // misaligned QWORD
    EXPECT_EQ(r.unit.mmio_read(0x2000, 4), 0u);  // beyond the window
    EXPECT_GE(r.log.guest_errors.size(), 5u);
}

TEST(Registers, ReadOnlyAndUndecoded)
{
    Rig r;
    uint64_t cap = r.r64(CAP);
    r.w64(CAP, 0);
    EXPECT_EQ(r.r64(CAP), cap);
    r.w32(0x300, 1); // nothing there
    EXPECT_EQ(r.r32(0x300), 0u);
    EXPECT_EQ(r.r32(GCMD), 0u); // GCMD reads as zero
}

TEST(Reset, InTheMiddleOfWork)
{
    Rig r(Config{});
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.w64(CCMD, CCMD_ICC | uint64_t{1} << CCMD_CIRG_SHIFT);
    r.qi_enable();
    r.submit({Rig::cc_global(), Rig::wait(kStatus)});
    r.unit.reset();
    EXPECT_TRUE(r.timers.pending.empty());
    EXPECT_EQ(r.r32(GSTS), 0u);
    EXPECT_EQ(r.r64(CCMD), 0u);
    EXPECT_FALSE(r.read(0x1000).translated); // translation off: identity
    // And the unit works again, like a new one.
    r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.context(0x0010, 1, pgd);
    EXPECT_EQ(r.read(0x1000).addr, 0x9000u);
    r.qi_enable();
    r.submit({Rig::wait(kStatus, 7)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(kStatus), 7u);
}

TEST(Migration, MidQueueRoundTrip)
{
    Config c;
    c.inv_desc_ns = 100;
    c.wait_ns = 100;
    Rig a(c);
    uint64_t pgd = a.basic();
    a.map(pgd, 0x1000, 0x9000);
    a.qi_enable();
    a.submit({Rig::cc_global(), Rig::iotlb_global(), Rig::wait(kStatus, 9)});
    a.run_until(150); // inside the IOTLB descriptor

    Rig b(c);
    ASSERT_TRUE(b.take_state_of(a));
    b.run_all();
    EXPECT_EQ(b.mem.get<uint32_t>(kStatus), 9u);
    EXPECT_EQ(b.r64(IQH), 3u << 4);
    EXPECT_TRUE(b.r32(GSTS) & G_TE);
    b.iq = a.iq;
    EXPECT_EQ(b.read(0x1000).addr, 0x9000u);
    // Save/load/save is stable, and a cut state is refused.
    StateWriter w2;
    b.unit.save(w2);
    Rig d(c);
    StateReader in2(w2.bytes);
    ASSERT_TRUE(d.unit.load(in2));
    StateWriter w3;
    d.unit.save(w3);
    EXPECT_EQ(w2.bytes, w3.bytes);
    std::vector<uint8_t> cut(w2.bytes.begin(), w2.bytes.end() - 3);
    StateReader bad(cut);
    EXPECT_FALSE(d.unit.load(bad));
}

TEST(Audit, CountsHitsThroughAChangedTranslation)
{
    Config c = zero_cost();
    c.audit = true;
    Rig r(c);
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.read(0x1000);
    EXPECT_EQ(r.unit.counters().audit_checks, 1u);
    EXPECT_EQ(r.unit.counters().audit_stale, 0u);
    // Unmapped without a flush (the lazy-mode window): the next hit is stale.
    r.mem.put<uint64_t>(leaf, 0);
    EXPECT_TRUE(r.read(0x1000).ok);
    EXPECT_EQ(r.unit.counters().audit_stale, 1u);
    ASSERT_EQ(r.rec.stales.size(), 1u);
    EXPECT_EQ(r.rec.stales[0].cached, 0x9000u);
    EXPECT_EQ(r.rec.stales[0].fault, FR_READ);
    // Remapped elsewhere: stale too, with both translations.
    r.mem.put<uint64_t>(leaf, 0xa000 | SL_R | SL_W);
    r.read(0x1000);
    ASSERT_EQ(r.rec.stales.size(), 2u);
    EXPECT_EQ(r.rec.stales[1].now, 0xa000u);
    // After the invalidation, no more stale hits.
    r.qi_enable();
    r.submit({Rig::iotlb_page(1, 0x1000)});
    r.read(0x1000);
    r.read(0x1000);
    EXPECT_EQ(r.unit.counters().audit_stale, 2u);
}

TEST(Audit, OffByDefault)
{
    Rig r;
    uint64_t pgd = r.basic();
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    r.read(0x1000);
    r.mem.put<uint64_t>(leaf, 0);
    r.read(0x1000);
    EXPECT_EQ(r.unit.counters().audit_checks, 0u);
}

// Random register writes and memory contents: the unit never crashes, never arms a timer
// beyond the limit, and its queue work drains.
TEST(Robustness, RandomPrograms)
{
    for (uint64_t seed = 1; seed <= 200; seed++) {
        Prng p(seed);
        Config c;
        c.inv_desc_ns = p.upto(3) * 100;
        c.inv_page_ns = p.upto(2);
        c.wait_ns = p.upto(3) * 50;
        c.iotlb_entries = 8;
        c.iotlb_ways = 2;
        c.audit = p.upto(1);
        Rig r(c);
        r.basic();
        r.qi_enable();
        for (int i = 0; i < 300; i++) {
            uint64_t v = p.next();
            switch (p.upto(6)) {
            case 0:
                r.w64(static_cast<uint32_t>(p.upto(0x2a0) & ~7u), v);
                break;
            case 1:
                r.w32(static_cast<uint32_t>(p.upto(0x2a0) & ~3u), static_cast<uint32_t>(v));
                break;
            case 2:
                r.mem.put<uint64_t>(0x10000 + (p.upto(0x7fff) & ~7u), v);
                break;
            case 3:
                r.unit.translate(static_cast<uint16_t>(p.upto(0x30)), kNoPasid, p.upto(0xffffff),
                                 static_cast<unsigned>(p.upto(3)));
                break;
            case 4:
                r.run_until(r.timers.now + p.upto(1000));
                break;
            case 5:
                r.w64(IQT, p.upto(300) << 4);
                break;
            default:
                if (p.upto(20) == 0)
                    r.unit.reset();
                break;
            }
            ASSERT_FALSE(r.timers.over_limit);
        }
        r.run_all();
        EXPECT_TRUE(r.timers.pending.empty()) << "seed " << seed;
    }
}

} // namespace
} // namespace dmalab::vtd::testing
