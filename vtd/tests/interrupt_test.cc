// SPDX-License-Identifier: GPL-2.0-or-later
// Interrupt remapping (VT-d chapter 5, 9.10): what the unit advertises, how GCMD turns it on,
// every field of a remapping table entry as the delivered message shows it, and every fault
// reason with what the fault-recording registers hold.

#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

// The positions derive from the field tables (registers.h); these are the values Linux's
// drivers/iommu/intel/iommu.h, dmar.h and irq_remapping.c give them.
static_assert(IRTA == 0xb8 && G_SIRTP == 1u << 24 && IRTA_EIME == 1u << 11 &&
              IRTA_S.mask() == 0xf && IRTA_BASE.mask() == ~uint64_t{0xfff});
static_assert(ECAP_IR == 1u << 3 && ECAP_EIM == 1u << 4 && ECAP_MHMV_SHIFT == 20);
static_assert(QI_IEC == 4 && QI_IEC_SELECTIVE == 1u << 4 && QI_IEC_IM_SHIFT == 27 &&
              QI_IEC_IIDX_SHIFT == 32 && defined_bits(qi::IEC_LO) == 0x0000fffff800001f);
static_assert(IRTE_P == 1 && IRTE_FPD == 2 && IRTE_DM == 4 && IRTE_RH == 8 && IRTE_TM == 0x10 &&
              IRTE_DLM_SHIFT == 5 && IRTE_AVAIL_SHIFT == 8 && IRTE_IM == 0x8000 &&
              IRTE_V_SHIFT == 16 && IRTE_DST_SHIFT == 32);
static_assert(defined_bits(irte::HI) == 0xfffff && IRTE_SQ_SHIFT == 16 && IRTE_SVT_SHIFT == 18);
static_assert(MSI_HANDLE15 == 4 && MSI_SHV == 8 && MSI_IF == 0x10 && MSI_HANDLE_SHIFT == 5);

Config ir_config(bool eim = true)
{
    Config c;
    c.ir = true;
    c.eim = eim;
    return c;
}

constexpr uint16_t kSid = 0x0010; // 00:02.0

TEST(Capabilities, InterruptRemappingOnlyWhenConfigured)
{
    Rig off;
    EXPECT_EQ(off.r64(ECAP) & (ECAP_IR | ECAP_EIM), 0u);
    EXPECT_EQ((off.r64(ECAP) >> ECAP_MHMV_SHIFT) & 0xf, 0u);
    Rig on(ir_config());
    EXPECT_EQ(on.r64(ECAP) & (ECAP_IR | ECAP_EIM), ECAP_IR | ECAP_EIM);
    EXPECT_EQ((on.r64(ECAP) >> ECAP_MHMV_SHIFT) & 0xf, kMhmv);
    Rig xapic(ir_config(false));
    EXPECT_EQ(xapic.r64(ECAP) & (ECAP_IR | ECAP_EIM), ECAP_IR);
}

TEST(Capabilities, RemappingNeedsTheQueueAndASaneCache)
{
    Config c = ir_config();
    EXPECT_EQ(check(c), nullptr);
    c.qi = false;
    EXPECT_NE(check(c), nullptr);
    c = ir_config();
    for (unsigned n : {0u, 2u, 6u, 65540u}) {
        c.iec_entries = n;
        EXPECT_NE(check(c), nullptr) << n;
    }
    c.iec_entries = 4;
    c.iec_inv_ns = kMaxCostNs + 1;
    EXPECT_NE(check(c), nullptr);
}

TEST(Commands, SirtpIreAndCfiSetTheirStatus)
{
    Rig r(ir_config());
    r.qi_enable();
    r.w64(IRTA, 0x40000 | 3);
    EXPECT_EQ(r.r64(IRTA), 0x40000u | 3);
    r.command(G_SIRTP);
    EXPECT_TRUE(r.r32(GSTS) & G_SIRTP); // IRTPS
    r.command(G_IRE);
    EXPECT_TRUE(r.r32(GSTS) & G_IRE);
    EXPECT_TRUE(r.unit.interrupt_remapping_enabled());
    r.command(G_CFI);
    EXPECT_TRUE(r.r32(GSTS) & G_CFI);
    r.command(G_CFI, false);
    EXPECT_FALSE(r.r32(GSTS) & G_CFI);
    EXPECT_TRUE(r.r32(GSTS) & G_IRE);
    r.command(G_IRE, false);
    EXPECT_FALSE(r.r32(GSTS) & G_IRE);
    EXPECT_FALSE(r.unit.interrupt_remapping_enabled());
}

TEST(Commands, IgnoredWithoutInterruptRemapping)
{
    Rig r;
    r.w32(GCMD, G_SIRTP | G_IRE | G_CFI);
    EXPECT_EQ(r.r32(GSTS) & (G_SIRTP | G_IRE | G_CFI), 0u);
    EXPECT_FALSE(r.log.unimplemented.empty());
    // Requests pass unchanged, remappable format or not.
    Interrupt i = r.intr(Rig::remappable(5), 0x21);
    EXPECT_TRUE(i.ok);
    EXPECT_EQ(i.address, Rig::remappable(5));
    EXPECT_EQ(i.data, 0x21u);
    EXPECT_EQ(r.unit.counters().ir_passed, 1u);
}

TEST(Delivery, RemappingOffPassesEverything)
{
    Rig r(ir_config());
    r.qi_enable();
    Interrupt i = r.intr(0xfee01000, 0x4031);
    EXPECT_TRUE(i.ok);
    EXPECT_FALSE(i.remapped);
    EXPECT_EQ(i.address, 0xfee01000u);
    EXPECT_EQ(i.data, 0x4031u);
}

// Each field of the entry, one at a time, and where it lands in the message.
TEST(Delivery, EveryFieldOfTheEntry)
{
    struct Case {
        const char* what;
        uint64_t lo;
        uint64_t address, data; // the message delivered
    };
    const uint64_t base = Rig::entry(0x31, 0x05);
    const Case cases[] = {
        {"vector, physical", base, 0xfee05000, 0x4031},
        {"logical (DM)", base | IRTE_DM, 0xfee05004, 0x4031},
        {"redirection hint", base | IRTE_RH, 0xfee05008, 0x4031},
        {"level (TM)", base | IRTE_TM, 0xfee05000, 0xc031},
        {"lowest priority", base | 1u << IRTE_DLM_SHIFT, 0xfee05000, 0x4131},
        {"SMI", base | 2u << IRTE_DLM_SHIFT, 0xfee05000, 0x4231},
        {"NMI", base | 4u << IRTE_DLM_SHIFT, 0xfee05000, 0x4431},
        {"INIT", base | 5u << IRTE_DLM_SHIFT, 0xfee05000, 0x4531},
        {"ExtINT", base | 7u << IRTE_DLM_SHIFT, 0xfee05000, 0x4731},
        {"AVAIL is software's", base | 0xfu << IRTE_AVAIL_SHIFT, 0xfee05000, 0x4031},
        {"destination 0xff", Rig::entry(0x31, 0xff), 0xfeeff000, 0x4031},
    };
    for (const Case& c : cases) {
        Rig r(ir_config(false));
        r.ir_enable();
        r.irte(9, c.lo);
        Interrupt i = r.intr(Rig::remappable(9));
        ASSERT_TRUE(i.ok) << c.what;
        EXPECT_TRUE(i.remapped) << c.what;
        EXPECT_EQ(i.index, 9u) << c.what;
        EXPECT_EQ(i.address, c.address) << c.what;
        EXPECT_EQ(i.data, c.data) << c.what;
    }
}

// The unit-wide ir-remapped counts every requester's, the IOAPIC's among them (hundreds per
// boot): a scenario that claims a device's interrupts went through an entry needs that
// device's own count.
TEST(Delivery, RemappedRequestsAreCountedByRequester)
{
    Rig r(ir_config(false));
    r.ir_enable();
    r.irte(9, Rig::entry(0x31, 0x05));
    const uint16_t ioapic = 0xff00, dev = 0x0008; // ff:00.0, 00:01.0
    for (int i = 0; i < 3; i++)
        ASSERT_TRUE(r.intr(Rig::remappable(9), 0, ioapic).remapped);
    ASSERT_TRUE(r.intr(Rig::remappable(9), 0, dev).remapped);
    r.intr(Rig::remappable(9), 0, dev, false); // a query (QEMU's KVM routes): counts nothing
    r.intr(Rig::remappable(200), 0, dev);      // blocked: no entry there, not remapped
    EXPECT_EQ(r.unit.counters().ir_remapped, 4u);
    EXPECT_EQ(ir_requesters_text(r.unit.counters()), "ff:00.0=3 00:01.0=1");
    // Past the first kIrRequesters requesters, the rest are counted together.
    for (uint16_t sid = 1; sid <= Counters::kIrRequesters; sid++)
        r.intr(Rig::remappable(9), 0, static_cast<uint16_t>(0x0100 + sid));
    EXPECT_EQ(ir_requesters_text(r.unit.counters()),
              "ff:00.0=3 00:01.0=1 01:00.1=1 01:00.2=1 01:00.3=1 01:00.4=1 01:00.5=1 "
              "01:00.6=1 other=2");
}

TEST(Delivery, X2apicDestinationsUseAllOfDst)
{
    Rig r(ir_config());
    r.ir_enable(7, true);
    r.irte(1, Rig::entry(0x40, 0x0012ab34, true));
    Interrupt i = r.intr(Rig::remappable(1));
    ASSERT_TRUE(i.ok);
    // Bits 7:0 in the address's destination field, bits 31:8 above bit 32.
    EXPECT_EQ(i.address, 0xfee34000u | uint64_t{0x0012ab00} << 32);
    EXPECT_EQ(i.data, 0x4040u);
}

TEST(Delivery, HandleBit15AndSubhandle)
{
    Rig r(ir_config());
    r.ir_enable(15); // 65536 entries
    r.irte(0x8003, Rig::entry(0x50, 1));
    r.irte(0x8005, Rig::entry(0x52, 1));
    EXPECT_EQ(r.intr(Rig::remappable(0x8003), 0).data & 0xff, 0x50u);
    Interrupt i = r.intr(Rig::remappable(0x8003), 2); // SHV: handle + subhandle
    EXPECT_EQ(i.index, 0x8005u);
    EXPECT_EQ(i.data & 0xff, 0x52u);
    // Without SHV the data is not a subhandle (the IOAPIC puts its vector there).
    i = r.intr(Rig::remappable(0x8003, false), 0x2);
    EXPECT_EQ(i.index, 0x8003u);
    EXPECT_EQ(i.data & 0xff, 0x50u);
}

TEST(Delivery, CompatibilityFormatOnlyWithCfiInXapicMode)
{
    Rig r(ir_config());
    r.ir_enable(7, false, true);
    Interrupt i = r.intr(0xfee02000, 0x4041);
    EXPECT_TRUE(i.ok);
    EXPECT_FALSE(i.remapped);
    EXPECT_EQ(i.address, 0xfee02000u);
    EXPECT_EQ(r.unit.counters().ir_compat, 1u);
    r.command(G_CFI, false);
    EXPECT_EQ(r.intr(0xfee02000, 0x4041).fault_reason, FaultReason::IrCompatBlocked);
    Rig x(ir_config());
    x.ir_enable(7, true, true); // x2APIC mode blocks it even with CFI
    EXPECT_EQ(x.intr(0xfee02000, 0x4041).fault_reason, FaultReason::IrCompatBlocked);
}

TEST(Delivery, EimeWithoutEcapEimIsXapicMode)
{
    Rig r(ir_config(false));
    r.ir_enable(7, true);
    EXPECT_FALSE(r.log.guest_errors.empty());
    r.irte(1, Rig::entry(0x40, 0x07)); // xAPIC placement: DST bits 15:8
    Interrupt i = r.intr(Rig::remappable(1));
    ASSERT_TRUE(i.ok);
    EXPECT_EQ(i.address, 0xfee07000u);
}

TEST(SourceId, FullAndQualifiedAndBus)
{
    struct Case {
        uint64_t hi;
        uint16_t requester;
        bool ok;
    };
    const Case cases[] = {
        {0, 0x1234, true},                              // SVT 0: no check
        {Rig::verify_sid(0x0010), 0x0010, true},        // SVT 1, SQ 0: all 16 bits
        {Rig::verify_sid(0x0010), 0x0011, false},       //
        {Rig::verify_sid(0x0010, 1), 0x0014, true},     // SQ 1: bit 2 not compared
        {Rig::verify_sid(0x0010, 1), 0x0012, false},    //
        {Rig::verify_sid(0x0010, 2), 0x0016, true},     // SQ 2: bits 2:1
        {Rig::verify_sid(0x0010, 2), 0x0011, false},    //
        {Rig::verify_sid(0x0010, 3), 0x0017, true},     // SQ 3: bits 2:0
        {Rig::verify_sid(0x0010, 3), 0x0018, false},    //
        {2u << IRTE_SVT_SHIFT | 0x0305, 0x0310, true},  // SVT 2: buses 3 to 5
        {2u << IRTE_SVT_SHIFT | 0x0305, 0x0500, true},  //
        {2u << IRTE_SVT_SHIFT | 0x0305, 0x0210, false}, //
        {2u << IRTE_SVT_SHIFT | 0x0305, 0x0600, false}, //
    };
    for (const Case& c : cases) {
        Rig r(ir_config());
        r.ir_enable();
        r.irte(3, Rig::entry(0x30, 1), c.hi);
        Interrupt i = r.intr(Rig::remappable(3), 0, c.requester);
        EXPECT_EQ(i.ok, c.ok) << std::hex << c.hi << " " << c.requester;
        EXPECT_EQ(i.fault_reason, c.ok ? FaultReason::None : FaultReason::IrSourceId);
        // A request without a requester id is not checked.
        EXPECT_TRUE(r.unit.remap_interrupt({Rig::remappable(3), 0, 0, false, true}).ok);
    }
}

// Every reason, what the record holds (index in FI bits 63:48, requester, reason, T clear)
// and the fault event.
struct FaultCase {
    const char* what;
    FaultReason reason;
    uint32_t index; // what the record names
    bool qualified; // FPD in the entry suppresses the record
};

void expect_recorded(Rig& r, const FaultCase& c)
{
    uint64_t lo = r.r64(FRCD), hi = r.r64(FRCD + 8);
    EXPECT_TRUE(hi & FRCD_F) << c.what;
    EXPECT_EQ(record_reason(hi), c.reason) << c.what;
    EXPECT_EQ(hi & 0xffff, kSid) << c.what;
    EXPECT_FALSE(hi & FRCD_T_READ) << c.what;
    EXPECT_EQ(lo, uint64_t{c.index & 0xffff} << 48) << c.what;
    EXPECT_TRUE(r.r32(FSTS) & FSTS_PPF) << c.what;
    EXPECT_EQ(r.irq.msis.size(), 1u) << c.what;
    EXPECT_EQ(r.unit.counters().faults_recorded, 1u) << c.what;
}

// Sets up a unit in which request `c` is blocked for its reason; returns the request.
std::pair<uint64_t, uint32_t> provoke(Rig& r, const FaultCase& c, bool fpd)
{
    uint64_t f = fpd ? IRTE_FPD : 0;
    r.ir_enable(3); // 16 entries
    r.w32(FEADDR, 0xfee00000);
    r.w32(FECTL, 0);
    uint64_t ok = Rig::entry(0x30, 1) | f;
    switch (c.reason) {
    case FaultReason::IrRequestReserved:
        r.irte(2, ok);
        return {Rig::remappable(2), 0x10000}; // SHV with data bits 31:16 set
    case FaultReason::IrIndexBeyond:
        return {Rig::remappable(15), 1}; // 15 + 1 in a 16-entry table
    case FaultReason::IrNotPresent:
        r.irte(5, (ok & ~IRTE_P) | 0x30);
        return {Rig::remappable(5), 0};
    case FaultReason::IrTableError:
        r.mem.add_hole(r.irt, 0x1000);
        return {Rig::remappable(6), 0};
    case FaultReason::IrEntryReserved:
        r.irte(7, ok | uint64_t{1} << 12);
        return {Rig::remappable(7), 0};
    case FaultReason::IrCompatBlocked:
        return {0xfee00000, 0x4030};
    case FaultReason::IrSourceId:
        r.irte(8, ok, Rig::verify_sid(kSid + 1));
        return {Rig::remappable(8), 0};
    default:
        return {};
    }
}

TEST(Faults, EveryReasonIsRecordedWithItsIndex)
{
    const FaultCase cases[] = {
        {"reserved bits in the request", FaultReason::IrRequestReserved, 2, false},
        {"index beyond the table", FaultReason::IrIndexBeyond, 16, false},
        {"entry not present", FaultReason::IrNotPresent, 5, true},
        {"table unreadable", FaultReason::IrTableError, 6, false},
        {"reserved bits in the entry", FaultReason::IrEntryReserved, 7, true},
        {"compatibility format blocked", FaultReason::IrCompatBlocked, 0, false},
        {"source id check", FaultReason::IrSourceId, 8, true},
    };
    for (const FaultCase& c : cases) {
        for (bool fpd : {false, true}) {
            Rig r(ir_config());
            auto [addr, data] = provoke(r, c, fpd);
            // A query (QEMU's KVM routes) is refused the same way and records nothing.
            Interrupt q = r.intr(addr, data, kSid, false);
            EXPECT_EQ(q.fault_reason, c.reason) << c.what;
            EXPECT_EQ(r.unit.counters().faults_recorded, 0u) << c.what;
            Interrupt i = r.intr(addr, data, kSid);
            EXPECT_FALSE(i.ok) << c.what;
            EXPECT_EQ(i.fault_reason, c.reason) << c.what;
            if (fpd && c.qualified) {
                EXPECT_FALSE(r.r64(FRCD + 8) & FRCD_F) << c.what << " (FPD)";
                EXPECT_EQ(r.unit.counters().faults_recorded, 0u) << c.what;
                continue;
            }
            expect_recorded(r, c);
            EXPECT_EQ(r.unit.counters().ir_faults, 1u) << c.what;
            EXPECT_EQ(r.unit.counters().interrupts, 1u) << c.what;
        }
    }
}

TEST(Faults, ReservedPartsOfAnEntry)
{
    struct Case {
        const char* what;
        uint64_t lo, hi;
        bool eime;
    };
    const uint64_t ok = Rig::entry(0x30, 1);
    const uint64_t ok2 = Rig::entry(0x30, 1, true);
    const Case cases[] = {
        {"bits 14:12", ok | uint64_t{1} << 14, 0, false},
        {"bits 31:24", ok | uint64_t{1} << 24, 0, false},
        {"IM: posted format not advertised", ok | IRTE_IM, 0, false},
        {"upper qword bits 63:20", ok, uint64_t{1} << 20, false},
        {"xAPIC mode: DST bits 7:0", ok | uint64_t{1} << IRTE_DST_SHIFT, 0, false},
        {"xAPIC mode: DST bits 31:16", ok | uint64_t{1} << (IRTE_DST_SHIFT + 16), 0, false},
        {"delivery mode 3", ok | 3u << IRTE_DLM_SHIFT, 0, false},
        {"delivery mode 6", ok | 6u << IRTE_DLM_SHIFT, 0, false},
        {"SVT 3", ok, 3u << IRTE_SVT_SHIFT, false},
        {"x2APIC mode: bits 14:12 still reserved", ok2 | uint64_t{1} << 13, 0, true},
    };
    for (const Case& c : cases) {
        Rig r(ir_config());
        r.ir_enable(3, c.eime);
        r.irte(4, c.lo, c.hi);
        EXPECT_EQ(r.intr(Rig::remappable(4)).fault_reason, FaultReason::IrEntryReserved) << c.what;
    }
    // In x2APIC mode all of DST is the destination.
    Rig r(ir_config());
    r.ir_enable(3, true);
    r.irte(4, Rig::entry(0x30, 0x01020304, true));
    EXPECT_TRUE(r.intr(Rig::remappable(4)).ok);
}

TEST(Faults, RequestOutsideTheInterruptRange)
{
    Rig r(ir_config());
    r.ir_enable(3);
    r.irte(1, Rig::entry(0x30, 1));
    // Only a route QEMU builds can carry these: above 4 GiB, or not 0xFEEx_xxxx.
    EXPECT_EQ(r.intr(uint64_t{1} << 32 | Rig::remappable(1)).fault_reason,
              FaultReason::IrRequestReserved);
    EXPECT_EQ(r.intr((Rig::remappable(1) & 0xfffff) | 0xfed00000).fault_reason,
              FaultReason::IrRequestReserved);
}

TEST(Faults, NoTableOrATableBeyondTheAddressWidth)
{
    Rig r(ir_config());
    r.qi_enable();
    r.command(G_IRE); // no SIRTP
    EXPECT_FALSE(r.log.guest_errors.empty());
    EXPECT_EQ(r.intr(Rig::remappable(0)).fault_reason, FaultReason::IrTableError);
    // A 65536-entry table whose base is the last page below 2^48: the first 256 entries are
    // there (not RAM here), the rest past the address width; bits above it are ignored.
    Rig t(ir_config());
    t.qi_enable();
    t.w64(IRTA, (uint64_t{0xffff} << 48) | ((uint64_t{1} << 48) - 0x1000) | 15);
    t.command(G_SIRTP);
    t.command(G_IRE);
    unsigned reads = t.mem.reads;
    EXPECT_EQ(t.intr(Rig::remappable(0x100)).fault_reason, FaultReason::IrTableError);
    EXPECT_EQ(t.mem.reads, reads); // refused without a read
    EXPECT_EQ(t.intr(Rig::remappable(0xffff)).fault_reason, FaultReason::IrTableError);
    EXPECT_EQ(t.intr(Rig::remappable(0)).fault_reason, FaultReason::IrTableError);
    EXPECT_EQ(t.mem.reads, reads + 1);
}

TEST(Faults, RepeatedFaultsCoalesceAndTheEventCanBeMasked)
{
    Rig r(ir_config());
    r.ir_enable(3);
    r.w32(FEADDR, 0xfee00000);
    r.w32(FECTL, CTL_IM);
    for (int i = 0; i < 3; i++)
        EXPECT_FALSE(r.intr(Rig::remappable(9)).ok); // not present
    EXPECT_EQ(r.unit.counters().faults_recorded, 1u);
    EXPECT_EQ(r.unit.counters().faults_coalesced, 2u);
    EXPECT_TRUE(r.r32(FECTL) & CTL_IP);
    EXPECT_TRUE(r.irq.msis.empty());
    r.w32(FECTL, 0);
    EXPECT_EQ(r.irq.msis.size(), 1u);
}

TEST(Events, UpperAddressWithExtendedInterruptMode)
{
    Rig r(ir_config());
    r.qi_enable();
    r.w32(IEADDR, 0xfee01000);
    r.w32(IEUADDR, 0x00012300);
    r.w32(IECTL, 0);
    r.submit({Rig::wait(0x100, 1, true)});
    r.run_all();
    ASSERT_EQ(r.irq.msis.size(), 1u);
    EXPECT_EQ(r.irq.msis[0].first, 0xfee01000u | uint64_t{0x00012300} << 32);
    // Without ECAP.EIM the upper register is not looked at.
    Rig x;
    x.qi_enable();
    x.w32(IEADDR, 0xfee01000);
    x.w32(IEUADDR, 0x00012300);
    x.w32(IECTL, 0);
    x.submit({Rig::wait(0x100, 1, true)});
    x.run_all();
    ASSERT_EQ(x.irq.msis.size(), 1u);
    EXPECT_EQ(x.irq.msis[0].first, 0xfee01000u);
}

} // namespace
} // namespace dmalab::vtd::testing
