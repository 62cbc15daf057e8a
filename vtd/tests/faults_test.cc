// SPDX-License-Identifier: GPL-2.0-or-later
// Faults: every legacy-mode reason the model produces, recording, overflow and the event.

#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

struct Record {
    uint64_t lo, hi;
    uint16_t sid() const { return hi & 0xffff; }
    FaultReason reason() const { return record_reason(hi); }
    bool read() const { return hi & FRCD_T_READ; }
    bool present() const { return hi & FRCD_F; }
};

Record record(Rig& r, unsigned i)
{
    return {r.r64(FRCD + 16 * i), r.r64(FRCD + 16 * i + 8)};
}

TEST(Faults, RecordHoldsRequesterAddressReasonAndType)
{
    Rig r;
    r.basic(0x0310);
    Translation t = r.unit.translate(0x0310, kNoPasid, 0x7000abc, Unit::kWrite);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, FR_WRITE); // not present, for a write
    Record f = record(r, 0);
    EXPECT_TRUE(f.present());
    EXPECT_EQ(f.sid(), 0x0310);
    EXPECT_EQ(f.reason(), FR_WRITE);
    EXPECT_FALSE(f.read());
    EXPECT_EQ(f.lo, 0x7000000u);
    uint32_t fsts = r.r32(FSTS);
    EXPECT_TRUE(fsts & FSTS_PPF);
    EXPECT_EQ((fsts >> FSTS_FRI_SHIFT) & 0xff, 0u); // the first pending record
    r.unit.translate(0x0310, kNoPasid, 0x8000, Unit::kRead);
    EXPECT_EQ(record(r, 1).reason(), FR_READ);
    EXPECT_TRUE(record(r, 1).read());
    EXPECT_EQ((r.r32(FSTS) >> FSTS_FRI_SHIFT) & 0xff, 0u);
    // Clearing F (W1C on the upper dword, as Linux does) empties the record; PPF follows.
    r.w32(FRCD + 12, 0x80000000);
    r.w32(FRCD + 16 + 12, 0x80000000);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PPF);
}

TEST(Faults, RepeatsOfThePendingRecordAreCoalesced)
{
    Rig r;
    r.basic();
    for (int i = 0; i < 100; i++)
        r.read(0x5000 + 8 * i); // one page, as QEMU splits a faulting access
    EXPECT_EQ(r.unit.counters().faults, 100u);
    EXPECT_EQ(r.unit.counters().faults_recorded, 1u);
    EXPECT_EQ(r.unit.counters().faults_coalesced, 99u);
    r.write(0x5000); // another type: a new record
    r.read(0x6000);  // another page: a new record
    EXPECT_EQ(r.unit.counters().faults_recorded, 3u);
    // Once the record is cleared, the same fault is recorded again.
    r.w32(FRCD + 2 * 16 + 12, 0x80000000);
    r.read(0x6000);
    EXPECT_EQ(r.unit.counters().faults_recorded, 4u);
}

TEST(Faults, EventIsAnMsiFromFeaddrAndFedata)
{
    Rig r;
    r.basic();
    r.w32(FEDATA, 0x4021);
    r.w32(FEADDR, Rig::kFeAddr);
    r.w32(FEUADDR, 0);
    r.w32(FECTL, 0);
    r.read(0x5000);
    ASSERT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.irq.msis[0], std::make_pair(uint64_t{Rig::kFeAddr}, uint32_t{0x4021}));
    // A second fault while one is pending raises no new event.
    r.read(0x6000);
    EXPECT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.unit.counters().fault_events, 1u);
}

// An event message is an interrupt: one aimed outside 0xFEEx_xxxx (RAM, the unit's own
// registers, another device, nowhere) is refused and counted, never written anywhere.
TEST(Faults, EventAimedOutsideTheInterruptRangeIsRefused)
{
    const uint64_t targets[] = {
        0x0, 0x5000, 0xfed90000 /* the unit */, 0xfebf0000, 0xfef00000, 0xfedfffff, 0xffffffff};
    for (uint64_t target : targets) {
        Rig r;
        r.basic();
        r.w32(FEADDR, static_cast<uint32_t>(target));
        r.w32(FECTL, 0);
        r.read(0x5000);
        EXPECT_TRUE(r.irq.msis.empty()) << std::hex << target;
        EXPECT_EQ(r.unit.counters().fault_events, 0u);
        EXPECT_EQ(r.unit.counters().events_refused, 1u);
        EXPECT_EQ(r.mem.writes, 0u) << std::hex << target;
        EXPECT_FALSE(r.r32(FECTL) & CTL_IP); // the event happened; only its message is lost
        // The unit goes on: the record is there, and once the guest aims the message at
        // the interrupt range the next event is sent.
        EXPECT_TRUE(r.r32(FSTS) & FSTS_PPF);
        r.w32(FRCD + 12, 0x80000000);
        r.w32(FEADDR, Rig::kFeAddr);
        r.read(0x6000);
        ASSERT_EQ(r.irq.msis.size(), 1u);
        EXPECT_EQ(r.unit.counters().fault_events, 1u);
    }
}

// FEUADDR only extends the destination in extended interrupt mode, which needs interrupt
// remapping: without it the message goes to FEADDR alone.
TEST(Faults, UpperAddressDoesNotMoveTheMessage)
{
    Rig r;
    r.basic();
    r.w32(FEADDR, Rig::kFeAddr);
    r.w32(FEUADDR, 0xffffffff);
    r.w32(FECTL, 0);
    r.read(0x5000);
    ASSERT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.irq.msis[0].first, uint64_t{Rig::kFeAddr});
}

TEST(Faults, MaskedEventIsPendingAndSentOnUnmask)
{
    Rig r;
    r.basic();
    r.w32(FEADDR, Rig::kFeAddr);
    r.read(0x5000);
    EXPECT_TRUE(r.irq.msis.empty());
    EXPECT_TRUE(r.r32(FECTL) & CTL_IP);
    r.w32(FECTL, 0);
    EXPECT_EQ(r.irq.msis.size(), 1u);
    EXPECT_FALSE(r.r32(FECTL) & CTL_IP);
}

TEST(Faults, PendingClearsWhenStatusIsCleared)
{
    Rig r;
    r.basic();
    r.read(0x5000);
    EXPECT_TRUE(r.r32(FECTL) & CTL_IP);
    r.w32(FRCD + 12, 0x80000000);
    EXPECT_FALSE(r.r32(FECTL) & CTL_IP);
    r.w32(FECTL, 0);
    EXPECT_TRUE(r.irq.msis.empty());
}

TEST(Faults, OverflowSetsPfoAndStopsRecording)
{
    Rig r;
    r.basic();
    for (unsigned i = 0; i < kFaultRecords; i++)
        r.read(0x100000 + i * 0x1000);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PFO);
    r.read(0x900000);
    EXPECT_TRUE(r.r32(FSTS) & FSTS_PFO);
    EXPECT_EQ(r.unit.counters().faults_recorded, kFaultRecords);
    EXPECT_EQ(r.unit.counters().faults_overflowed, 1u);
    // Free every record: still nothing is recorded until PFO is cleared.
    for (unsigned i = 0; i < kFaultRecords; i++)
        r.w32(FRCD + 16 * i + 12, 0x80000000);
    r.read(0xa00000);
    EXPECT_EQ(r.unit.counters().faults_recorded, kFaultRecords);
    r.w32(FSTS, FSTS_PFO);
    r.read(0xb00000);
    EXPECT_EQ(r.unit.counters().faults_recorded, kFaultRecords + 1);
    // Recording went on at the next record (wrapped to 0), and FRI names it.
    EXPECT_EQ(record(r, 0).lo, 0xb00000u);
    EXPECT_EQ((r.r32(FSTS) >> FSTS_FRI_SHIFT) & 0xff, 0u);
    r.w32(FRCD + 12, 0x80000000);
    r.read(0xc00000);
    EXPECT_EQ(record(r, 1).lo, 0xc00000u);
    EXPECT_EQ((r.r32(FSTS) >> FSTS_FRI_SHIFT) & 0xff, 1u);
}

TEST(Faults, FaultProcessingDisableSuppressesTheRecord)
{
    Rig r;
    r.set_root();
    r.context(0x0010, 1, r.alloc(), 2, 0, true);
    r.command(G_TE);
    EXPECT_FALSE(r.read(0x1000).ok);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PPF);
    EXPECT_EQ(r.unit.counters().faults, 1u);
    EXPECT_EQ(r.unit.counters().faults_recorded, 0u);
}

TEST(Faults, RootAndContextNotPresent)
{
    Rig r;
    r.basic(0x0010);
    EXPECT_EQ(r.read(0x1000, 0x0500).fault_reason, FR_ROOT_NOT_PRESENT);
    EXPECT_EQ(r.read(0x1000, 0x0011).fault_reason, FR_CONTEXT_NOT_PRESENT);
}

TEST(Faults, ReservedBitsInEachTable)
{
    Rig r;
    uint64_t pgd = r.basic(0x0010);
    uint64_t leaf = r.map(pgd, 0x1000, 0x9000);
    // Page-table entry: bit 11 (snoop) is reserved without ECAP.SC.
    r.mem.put<uint64_t>(leaf, 0x9000 | SL_SNP | SL_R | SL_W);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_PAGE_RESERVED);
    // Address bits above the host address width.
    r.mem.put<uint64_t>(leaf, (uint64_t{1} << 50) | SL_R | SL_W);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_PAGE_RESERVED);
    // A large-page entry at level 4 does not exist.
    uint64_t top = r.mem.get<uint64_t>(pgd);
    r.mem.put<uint64_t>(pgd, top | SL_PS);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_PAGE_RESERVED);
    r.mem.put<uint64_t>(pgd, top);
    // A 2 MiB page whose address is not 2 MiB-aligned.
    r.map(pgd, 0x40000000, 0x201000, true, true, 4, 2);
    EXPECT_EQ(r.read(0x40000000).fault_reason, FR_PAGE_RESERVED);
    // Context entry: reserved bits 11:4 of the lower qword; a second device on its own bus.
    r.context(0x0020, 1, pgd);
    uint64_t ce = (r.mem.get<uint64_t>(r.root) & RE_CTP) + 0x20 * 16;
    r.mem.put<uint64_t>(ce, r.mem.get<uint64_t>(ce) | 0x100);
    EXPECT_EQ(r.read(0x1000, 0x0020).fault_reason, FR_CONTEXT_RESERVED);
    // A domain id beyond CAP.ND (256 domains).
    r.context(0x0021, 300, pgd);
    EXPECT_EQ(r.read(0x1000, 0x0021).fault_reason, FR_CONTEXT_RESERVED);
    // Root entry: the upper qword is reserved in legacy mode.
    r.context(0x0200, 1, pgd);
    r.mem.put<uint64_t>(r.root + 2 * 16 + 8, 1);
    EXPECT_EQ(r.read(0x1000, 0x0200).fault_reason, FR_ROOT_RESERVED);
}

TEST(Faults, InvalidContextProgramming)
{
    Config c;
    c.aw_bits = 39;
    Rig r(c);
    r.set_root();
    uint64_t pgd = r.alloc();
    r.context(0x0010, 1, pgd, 2);         // 4-level tables where only 3-level exist
    r.context(0x0011, 1, pgd, 1, TT_ALL); // device-TLB translation, not advertised
    r.context(0x0012, 1, pgd, 1, 3);      // reserved translation type
    r.command(G_TE);
    EXPECT_EQ(r.read(0x1000, 0x0010).fault_reason, FR_CONTEXT_INVALID);
    EXPECT_EQ(r.read(0x1000, 0x0011).fault_reason, FR_CONTEXT_INVALID);
    EXPECT_EQ(r.read(0x1000, 0x0012).fault_reason, FR_CONTEXT_INVALID);
}

TEST(Faults, TablePointersOutsideMemory)
{
    Rig r;
    uint64_t pgd = r.basic(0x0010);
    // Page table: the top entry points beyond RAM (the fake memory ends at 16 MiB).
    r.map(pgd, 0x1000, 0x9000);
    r.mem.put<uint64_t>(pgd, 0x40000000 | SL_R | SL_W);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_PAGE_TABLE);
    // Context table pointer beyond RAM.
    r.mem.put<uint64_t>(r.root + 16, 0x40000000 | RE_P);
    EXPECT_EQ(r.read(0x1000, 0x0100).fault_reason, FR_CONTEXT_TABLE);
    // Root table beyond RAM, and beyond the address width.
    r.w64(RTADDR, 0x40000000);
    r.command(G_SRTP);
    r.w64(CCMD, CCMD_ICC | uint64_t{1} << CCMD_CIRG_SHIFT);
    r.run_all();
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_ROOT_TABLE);
    r.w64(RTADDR, uint64_t{1} << 50);
    r.command(G_SRTP);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_ROOT_TABLE);
}

TEST(Faults, TranslationEnabledWithoutRootTable)
{
    Rig r;
    r.command(G_TE);
    EXPECT_TRUE(r.r32(GSTS) & G_TE);
    EXPECT_FALSE(r.log.guest_errors.empty());
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_ROOT_TABLE);
    EXPECT_EQ(r.mem.reads, 0u); // nothing was read from address 0
}

TEST(Faults, AScalableModeRootTableIsRefused)
{
    Rig r;
    r.w64(RTADDR, 0x10000 | uint64_t{1} << RTADDR_TTM_SHIFT);
    r.command(G_SRTP);
    r.command(G_TE);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_ROOT_TABLE);
}

TEST(Faults, ATableThatPointsAtItselfEndsAfterTheLevels)
{
    Rig r;
    uint64_t pgd = r.basic();
    // Every level-4 entry points back at the level-4 table itself.
    for (unsigned i = 0; i < 512; i++)
        r.mem.put<uint64_t>(pgd + i * 8, pgd | SL_R | SL_W);
    Translation t = r.read(0x1000);
    // Four reads, then the "leaf" at level 1 is the table's own page: a mapping of it.
    EXPECT_EQ(r.unit.counters().walk_reads, 4u);
    EXPECT_TRUE(t.ok);
    EXPECT_EQ(t.addr, pgd);
}

} // namespace
} // namespace dmalab::vtd::testing
