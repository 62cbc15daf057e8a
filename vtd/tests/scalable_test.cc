// SPDX-License-Identifier: GPL-2.0-or-later
// Scalable mode (VT-d 9.2-9.7, 6.5.2.2, 6.5.2.4): the tables from RTADDR.TTM=01 down to the
// PASID entry of RID_PASID, first-stage, second-stage and pass-through translation, their
// fault reasons, the 256-bit invalidation queue, and the PASID-cache and PASID-based IOTLB
// invalidations. Tables are built the way Linux 6.1 and 6.12 build them
// (drivers/iommu/intel/pasid.c): PASID 0, a one-page directory (PDTS 2), and first-stage
// entries with U/S, A and D already set.

#include "sm_rig.h"

namespace dmalab::vtd::testing
{
namespace
{

TEST(ScalableMode, CapabilitiesFollowTheConfiguration)
{
    Rig legacy(costs(0, 0, 0));
    EXPECT_EQ(legacy.r64(ECAP) & (ECAP_SMTS | ECAP_SLTS | ECAP_FLTS | ECAP_SMPWCS), 0u);
    EXPECT_EQ(legacy.r64(CAP) & CAP_FL1GP, 0u);
    SmRig both;
    EXPECT_EQ(both.r64(ECAP) & (ECAP_SMTS | ECAP_SLTS | ECAP_FLTS | ECAP_SMPWCS),
              ECAP_SMTS | ECAP_SLTS | ECAP_FLTS | ECAP_SMPWCS);
    EXPECT_TRUE(both.r64(CAP) & CAP_FL1GP);
    SmRig second(sm_config(false));
    EXPECT_EQ(second.r64(ECAP) & (ECAP_SLTS | ECAP_FLTS), ECAP_SLTS);
    EXPECT_EQ(second.r64(CAP) & CAP_FL1GP, 0u);

    Config c = sm_config();
    c.qi = false;
    EXPECT_NE(check(c), nullptr);
    c = sm_config();
    c.aw_bits = 39;
    EXPECT_NE(check(c), nullptr); // first stage is 4-level only
    c.fs = false;
    EXPECT_EQ(check(c), nullptr);
}

TEST(ScalableMode, TtmOneWithoutScalableModeBlocksDma)
{
    Rig r(costs(0, 0, 0));
    r.w64(RTADDR, r.alloc() | uint64_t{1} << RTADDR_TTM_SHIFT);
    r.command(G_SRTP);
    r.command(G_TE);
    EXPECT_EQ(r.read(0x1000).fault_reason, FR_ROOT_TABLE);
    EXPECT_FALSE(r.log.guest_errors.empty());
}

TEST(ScalableMode, FirstStageTranslates)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x1000, 0x9000);
    r.fs_map(pgd, 0x2000, 0xa000, false);
    Translation t = r.write(0x1234);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.addr, 0x9000u);
    EXPECT_TRUE(t.read && t.write);
    t = r.read(0x2000);
    ASSERT_TRUE(t.ok);
    EXPECT_FALSE(t.write);
    EXPECT_EQ(r.write(0x2000).fault_reason, SM(SmFault::Write));
    EXPECT_EQ(r.read(0x3000).fault_reason, SM(SmFault::FsNotPresent));
    EXPECT_EQ(r.recorded(0), SM(SmFault::Write));
    EXPECT_EQ(r.recorded(1), SM(SmFault::FsNotPresent));
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 0u); // Linux sets A and D itself
}

TEST(ScalableMode, FirstStageLargePages)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x40000000, 0x80000000, true, 3); // 1 GiB (CAP.FL1GP)
    r.fs_map(pgd, 0x200000, 0x600000, true, 2);     // 2 MiB
    Translation t = r.read(0x40123000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.mask, (uint64_t{1} << 30) - 1);
    EXPECT_EQ(t.addr, 0x80000000u);
    t = r.read(0x3ff000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.mask, (uint64_t{1} << 21) - 1);
    // A 2 MiB page whose address has bits below 2 MiB set (other than PAT) is reserved.
    SmRig bad;
    uint64_t pgd2 = bad.fs_device();
    bad.fs_map(pgd2, 0x200000, 0x602000, true, 2);
    EXPECT_EQ(bad.read(0x200000).fault_reason, SM(SmFault::FsReserved));
}

TEST(ScalableMode, FirstStageChecksUserAndCanonicalAndXd)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x1000, 0x9000, true, 1, FL_A); // U/S clear: supervisor only
    EXPECT_EQ(r.read(0x1000).fault_reason, SM(SmFault::UserSupervisor));
    EXPECT_EQ(r.read(0x0000800000000000).fault_reason, SM(SmFault::NonCanonical));
    // Canonical upper half: translated through PML4 entry 256 like any other address.
    r.fs_map(pgd, 0xffff800000001000, 0xb000);
    Translation t = r.read(0xffff800000001000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.addr, 0xb000u);
    // XD (Linux 6.1 sets it with NXE in the PASID entry) is reserved without NXE.
    r.fs_map(pgd, 0x5000, 0xc000, true, 1, FL_US | FL_A | FL_XD);
    EXPECT_EQ(r.read(0x5000).fault_reason, SM(SmFault::FsReserved));

    SmRig n;
    n.set_sm_root();
    uint64_t pgd2 = n.alloc();
    n.pasid_entry(n.device(0x0010), Pgtt::FirstStage, 2, pgd2, 0, PE_NXE);
    n.command(G_TE);
    n.fs_map(pgd2, 0x5000, 0xc000, true, 1, FL_US | FL_A | FL_XD, FL_XD);
    EXPECT_TRUE(n.read(0x5000).ok);
}

TEST(ScalableMode, FirstStageSetsAccessedAndDirty)
{
    SmRig r;
    uint64_t pgd = r.fs_device();
    uint64_t leaf = r.fs_map(pgd, 0x1000, 0x9000, true, 1, FL_US); // no A, no D
    r.mem.put<uint64_t>(leaf, r.mem.get<uint64_t>(leaf) & ~FL_D);
    ASSERT_TRUE(r.read(0x1000).ok);
    EXPECT_TRUE(r.mem.get<uint64_t>(leaf) & FL_A);
    EXPECT_FALSE(r.mem.get<uint64_t>(leaf) & FL_D); // a read leaves D alone
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 1u);
    // The IOTLB entry was filled by a read with D clear: a write through it walks again
    // and sets D, as the CPU's TLB does, with no invalidation in between.
    uint64_t misses = r.unit.counters().iotlb_misses;
    ASSERT_TRUE(r.write(0x1000).ok);
    EXPECT_TRUE(r.mem.get<uint64_t>(leaf) & FL_D);
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 2u);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses + 1);
    // Now dirty in the IOTLB too: the next write hits.
    ASSERT_TRUE(r.write(0x1000).ok);
    EXPECT_EQ(r.unit.counters().iotlb_misses, misses + 1);
    // A query (perm 0) changes nothing.
    uint64_t leaf2 = r.fs_map(pgd, 0x2000, 0xa000, true, 1, FL_US);
    r.mem.put<uint64_t>(leaf2, r.mem.get<uint64_t>(leaf2) & ~FL_D);
    EXPECT_TRUE(r.unit.translate(0x0010, kNoPasid, 0x2000, 0).ok);
    EXPECT_FALSE(r.mem.get<uint64_t>(leaf2) & (FL_A | FL_D));
}

TEST(ScalableMode, AccessedBitUpdateNeverOverwritesWhatSoftwareChanged)
{
    // Software clears the leaf (an unmap on a vCPU) between the unit's read of it and its
    // update of A: the compare-and-exchange fails, the unit reads the entry again, finds it
    // not present and faults; the entry stays clear.
    SmRig r;
    uint64_t pgd = r.fs_device();
    uint64_t leaf = r.fs_map(pgd, 0x1000, 0x9000, true, 1, FL_US); // A clear
    r.mem.before_map = [&](uint64_t addr) {
        if (addr == leaf)
            r.mem.put<uint64_t>(leaf, 0);
    };
    EXPECT_EQ(r.read(0x1000).fault_reason, SM(SmFault::FsNotPresent));
    EXPECT_EQ(r.mem.get<uint64_t>(leaf), 0u);
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 0u);
    // Software sets A itself meanwhile: the second read finds nothing to update.
    uint64_t leaf2 = r.fs_map(pgd, 0x2000, 0xa000, true, 1, FL_US);
    r.mem.before_map = [&](uint64_t addr) {
        if (addr == leaf2)
            r.mem.put<uint64_t>(leaf2, r.mem.get<uint64_t>(leaf2) | FL_A);
    };
    ASSERT_TRUE(r.read(0x2000).ok);
    EXPECT_EQ(r.unit.counters().fs_ad_updates, 0u);
    // An entry that changes on every attempt: an access error after four, nothing written.
    uint64_t leaf3 = r.fs_map(pgd, 0x3000, 0xb000, true, 1, FL_US);
    uint64_t flip = 0;
    r.mem.before_map = [&](uint64_t addr) {
        if (addr == leaf3)
            r.mem.put<uint64_t>(leaf3, (0xb000 | FL_P | FL_RW | FL_US) ^ (++flip & 1 ? FL_RW : 0));
    };
    EXPECT_EQ(r.read(0x3000).fault_reason, SM(SmFault::FsAccess));
    EXPECT_FALSE(r.mem.get<uint64_t>(leaf3) & FL_A);
    // Tables where nothing can be mapped (not RAM): the update fails, an access error.
    r.mem.before_map = nullptr;
    r.mem.mappable = false;
    r.fs_map(pgd, 0x4000, 0xc000, true, 1, FL_US);
    EXPECT_EQ(r.read(0x4000).fault_reason, SM(SmFault::FsAccess));
    EXPECT_EQ(r.mem.outstanding, 0);
}

TEST(ScalableMode, SecondStageAndPassThrough)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010), Pgtt::SecondStage, 3, pgd);
    r.pasid_entry(r.device(0x0090), Pgtt::PassThrough, 1, 0); // upper half of the bus
    r.command(G_TE);
    r.map(pgd, 0x1000, 0x9000, true, false);
    Translation t = r.read(0x1000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.addr, 0x9000u);
    EXPECT_EQ(r.write(0x1000).fault_reason, SM(SmFault::Write));
    EXPECT_EQ(r.read(0x2000).fault_reason, SM(SmFault::Read));
    EXPECT_EQ(r.read(uint64_t{1} << 48).fault_reason, SM(SmFault::AddressBeyondAw));
    t = r.read(0x123000, 0x0090);
    ASSERT_TRUE(t.ok);
    EXPECT_FALSE(t.translated);
    EXPECT_EQ(t.addr, 0x123000u);
}

TEST(ScalableMode, FirstStageNotOfferedIsAnInvalidPasidEntry)
{
    SmRig r(sm_config(false));
    r.fs_device();
    EXPECT_EQ(r.read(0x1000).fault_reason, SM(SmFault::PasidInvalid));
    EXPECT_EQ(r.recorded(), SM(SmFault::PasidInvalid));
}

TEST(ScalableMode, TableFaultsHaveScalableModeReasons)
{
    struct Case {
        const char* what;
        void (*breakit)(SmRig&, uint64_t pe);
        FaultReason want;
    };
    const Case cases[] = {
        {"context entry not present",
         [](SmRig& r, uint64_t) {
             uint64_t ce = (r.mem.get<uint64_t>(r.root) & ~uint64_t{0xfff}) + 0x10 * 32;
             r.mem.put<uint64_t>(ce, 0);
         },
         SM(SmFault::ContextNotPresent)},
        {"PASIDE without ECAP.PASID",
         [](SmRig& r, uint64_t) {
             uint64_t ce = (r.mem.get<uint64_t>(r.root) & ~uint64_t{0xfff}) + 0x10 * 32;
             r.mem.put<uint64_t>(ce, r.mem.get<uint64_t>(ce) | SCE_PASIDE);
         },
         SM(SmFault::ContextReserved)},
        {"RID_PASID beyond the directory",
         [](SmRig& r, uint64_t) {
             uint64_t ce = (r.mem.get<uint64_t>(r.root) & ~uint64_t{0xfff}) + 0x10 * 32;
             r.mem.put<uint64_t>(ce + 8, 512 * 64);
         },
         SM(SmFault::RidPasid)},
        {"directory entry not present",
         [](SmRig& r, uint64_t) {
             uint64_t ce = (r.mem.get<uint64_t>(r.root) & ~uint64_t{0xfff}) + 0x10 * 32;
             r.mem.put<uint64_t>(r.mem.get<uint64_t>(ce) & ~uint64_t{0xfff}, 0);
         },
         SM(SmFault::DirNotPresent)},
        {"PASID entry not present", [](SmRig& r, uint64_t pe) { r.mem.put<uint64_t>(pe, 0); },
         SM(SmFault::PasidNotPresent)},
        {"nested PGTT (not offered)",
         [](SmRig& r, uint64_t pe) { r.pasid_entry(pe, Pgtt::Nested, 2, r.alloc()); },
         SM(SmFault::PasidInvalid)},
        {"domain id beyond CAP.ND",
         [](SmRig& r, uint64_t pe) { r.pasid_entry(pe, Pgtt::FirstStage, 300, r.alloc()); },
         SM(SmFault::PasidReserved)},
        {"a nested-only qword set", [](SmRig& r, uint64_t pe) { r.mem.put<uint64_t>(pe + 24, 1); },
         SM(SmFault::PasidReserved)},
        {"PASID table in a hole",
         [](SmRig& r, uint64_t) {
             uint64_t ce = (r.mem.get<uint64_t>(r.root) & ~uint64_t{0xfff}) + 0x10 * 32;
             uint64_t dir = r.mem.get<uint64_t>(ce) & ~uint64_t{0xfff};
             r.mem.put<uint64_t>(dir, (Rig::kMem + 0x1000) | PDE_P);
         },
         SM(SmFault::PasidAccess)},
        {"FLPTR beyond the host address width",
         [](SmRig& r, uint64_t pe) { r.pasid_entry(pe, Pgtt::FirstStage, 2, uint64_t{1} << 50); },
         SM(SmFault::FsPointer)},
    };
    for (const Case& c : cases) {
        SmRig r;
        r.set_sm_root();
        uint64_t pgd = r.alloc();
        uint64_t pe = r.device(0x0010);
        r.pasid_entry(pe, Pgtt::FirstStage, 2, pgd);
        r.command(G_TE);
        r.fs_map(pgd, 0x1000, 0x9000);
        c.breakit(r, pe);
        EXPECT_EQ(r.read(0x1000).fault_reason, c.want) << c.what;
        EXPECT_EQ(r.recorded(), c.want) << c.what;
    }
}

// FLPTR is bits 63:12, and its bits 63:52 are beyond the host address width as much as
// bits 51:aw are: the walk reads nothing at such a pointer (here a window near 2^64 that
// reads as zeros), nor at its low bits.
TEST(ScalableMode, FlptrBitsAbove51AreBeyondTheHostAddressWidth)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    uint64_t pe = r.device(0x0010);
    r.fs_map(pgd, 0x1000, 0x9000);
    const uint64_t high = uint64_t{0xfff} << 52;
    r.mem.add_window({high | pgd, 0x1000, [](uint64_t, const uint8_t*, size_t) {}});
    r.pasid_entry(pe, Pgtt::FirstStage, 2, high | pgd);
    r.command(G_TE);
    const unsigned reads = r.mem.reads;
    EXPECT_EQ(r.read(0x1000).fault_reason, SM(SmFault::FsPointer));
    EXPECT_EQ(r.recorded(), SM(SmFault::FsPointer));
    EXPECT_EQ(r.mem.reads - reads, 4u) << "root, context, directory and PASID entries only";
}

TEST(ScalableMode, PasidEntryFpdSuppressesRecording)
{
    SmRig r;
    r.set_sm_root();
    r.pasid_entry(r.device(0x0010), Pgtt::FirstStage, 2, r.alloc(), PE_FPD);
    r.command(G_TE);
    EXPECT_EQ(r.read(0x1000).fault_reason, SM(SmFault::FsNotPresent));
    EXPECT_EQ(r.unit.counters().faults_recorded, 0u);
}

TEST(ScalableMode, WideQueueRunsLinuxsDescriptors)
{
    SmRig r;
    r.fs_device();
    r.qi_enable_wide();
    uint64_t status = r.alloc();
    r.submit_wide({SmRig::pc(3, 0), Rig::cc_global(), Rig::iotlb_global(),
                   SmRig::piotlb(2, 0, 0, 0, false), Rig::wait(status, 2)});
    r.run_all();
    EXPECT_EQ(r.mem.get<uint32_t>(status), 2u);
    EXPECT_EQ(r.r64(IQH), r.r64(IQT));
    EXPECT_EQ(r.r64(IQH), uint64_t{5} << 5);
    EXPECT_EQ(r.r32(FSTS) & FSTS_IQE, 0u);
    const Counters& c = r.unit.counters();
    EXPECT_EQ(c.pc_inv[3], 1u);
    EXPECT_EQ(c.piotlb_inv[0], 1u);
    EXPECT_EQ(c.waits, 1u);
}

TEST(ScalableMode, WideQueueRefusesWhatIsNotAWideDescriptor)
{
    { // bits 255:128 set
        SmRig r;
        r.qi_enable_wide();
        r.submit_wide({Rig::cc_global()}, 1);
        r.run_all();
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
        EXPECT_EQ(r.r64(IQH), 0u);
    }
    { // IQT not on a 32-byte boundary
        SmRig r;
        r.qi_enable_wide();
        r.w64(IQT, 0x10);
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
    }
    { // a 256-bit descriptor on a 128-bit queue: its upper half is a descriptor of type 0
        SmRig r;
        r.qi_enable();
        r.mem.put<uint64_t>(r.iq, Rig::cc_global().first);
        r.w64(IQT, 2 << 4);
        r.run_all();
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
        EXPECT_EQ(r.r64(IQH), 1u << 4);
    }
    { // 128-bit descriptors once the unit runs scalable mode (6.5.2); before, they do
        SmRig r;
        r.qi_enable();
        uint64_t status = r.alloc();
        r.submit({Rig::wait(status, 3)});
        r.run_all();
        EXPECT_EQ(r.mem.get<uint32_t>(status), 3u);
        r.set_sm_root();
        r.submit({Rig::wait(status, 4)});
        r.run_all();
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
        EXPECT_EQ(r.mem.get<uint32_t>(status), 3u);
    }
    { // PASID-based descriptors without scalable mode
        Rig r(costs(0, 0, 0));
        r.qi_enable();
        r.submit({SmRig::pc(3, 0)});
        r.run_all();
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
    }
    { // reserved granularities
        SmRig r;
        r.qi_enable_wide();
        r.submit_wide({SmRig::pc(2, 0)});
        r.run_all();
        EXPECT_TRUE(r.r32(FSTS) & FSTS_IQE);
    }
}

TEST(ScalableMode, PasidEntryStaysCachedUntilPasidCacheInvalidation)
{
    for (unsigned g : {0u, 1u, 3u}) {
        SmRig r;
        r.set_sm_root();
        uint64_t pgd = r.alloc(), pgd2 = r.alloc();
        uint64_t pe = r.device(0x0010);
        r.pasid_entry(pe, Pgtt::FirstStage, 2, pgd);
        r.command(G_TE);
        r.fs_map(pgd, 0x1000, 0x9000);
        r.fs_map(pgd2, 0x1000, 0xa000);
        r.qi_enable_wide();
        ASSERT_EQ(r.read(0x1000).addr, 0x9000u);
        // The entry moves to other tables; the IOTLB entry goes, the PASID entry stays.
        r.pasid_entry(pe, Pgtt::FirstStage, 2, pgd2);
        r.submit_wide({SmRig::piotlb(2, 0, 0, 0, false)});
        r.run_all();
        EXPECT_EQ(r.read(0x1000).addr, 0x9000u) << g;
        r.submit_wide({SmRig::pc(g, 2, 0), SmRig::piotlb(2, 0, 0, 0, false)});
        r.run_all();
        EXPECT_EQ(r.read(0x1000).addr, 0xa000u) << g;
        // A PASID-selective invalidation of another PASID, or of another domain, keeps it.
        r.pasid_entry(pe, Pgtt::FirstStage, 2, pgd);
        r.submit_wide({SmRig::pc(1, 2, 5), SmRig::pc(0, 7), SmRig::piotlb(2, 0, 0, 0, false)});
        r.run_all();
        EXPECT_EQ(r.read(0x1000).addr, 0xa000u) << g;
    }
}

TEST(ScalableMode, PasidIotlbInvalidationDropsOnlyItsPasidAndPages)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    // Two requesters in domain 2 on the same tables, under PASIDs whose low 15 bits match
    // (the IOTLB tags hold those): their entries share tags but never answer each other.
    r.pasid_entry(r.device(0x0010, 0), Pgtt::FirstStage, 2, pgd);
    r.pasid_entry(r.device(0x0018, 0x8000, 3), Pgtt::FirstStage, 2, pgd);
    r.command(G_TE);
    r.fs_map(pgd, 0x1000, 0x9000);
    r.fs_map(pgd, 0x2000, 0xa000);
    r.qi_enable_wide();
    for (uint16_t sid : {0x0010, 0x0018})
        for (uint64_t a : {0x1000, 0x2000})
            ASSERT_TRUE(r.read(a, sid).ok);
    uint64_t hits = r.unit.counters().iotlb_hits;
    // Both map 0x1000 elsewhere now; only PASID 0x8000's page 0x1000 is invalidated.
    r.fs_map(pgd, 0x1000, 0xb000);
    r.submit_wide({SmRig::piotlb(2, 0x8000, 0x1000)});
    r.run_all();
    EXPECT_EQ(r.read(0x1000, 0x0018).addr, 0xb000u);
    EXPECT_EQ(r.read(0x2000, 0x0018).addr, 0xa000u);
    // PASID 0's entry for 0x1000 was replaced by 0x8000's fill (same tag): it walks again.
    EXPECT_EQ(r.read(0x1000, 0x0010).addr, 0xb000u);
    EXPECT_EQ(r.unit.counters().iotlb_hits, hits + 1);
    EXPECT_EQ(r.unit.counters().piotlb_inv[1], 1u);
}

// Issue 41's sequence, as dmalab-ioat's glue drives the unit: an 8 KiB run (two contiguous
// pages) under RID_PASID 5 on second-stage tables; the second page's entry cleared; a
// PASID-based page-selective invalidation of PASID 5 naming both pages, and a wait. The next
// 8 KiB run stops after the first page, and the engine's access of the second faults with
// the architected reason (85h, a write to a not-present second-stage entry) in a record.
// The run's IOTLB entries of the second page and on must carry the PASID they are tagged
// with, or the invalidation of that PASID leaves them behind.
TEST(ScalableMode, APasidInvalidationReachesEveryPageOfARun)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010, 5), Pgtt::SecondStage, 3, pgd);
    r.command(G_TE);
    r.map(pgd, 0x10000, 0x9000);
    uint64_t second = r.map(pgd, 0x11000, 0xa000);
    r.qi_enable_wide();
    Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 0x10000, 0x2000, Unit::kWrite);
    ASSERT_TRUE(run.first.ok);
    ASSERT_EQ(run.len, 0x2000u);
    r.mem.put<uint64_t>(second, 0);
    uint64_t status = r.alloc();
    r.submit_wide({SmRig::piotlb(3, 5, 0x10000, 1), Rig::wait(status, 7)});
    r.run_all();
    ASSERT_EQ(r.mem.get<uint32_t>(status), 7u);
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 2u);
    run = r.unit.translate_run(0x0010, kNoPasid, 0x10000, 0x2000, Unit::kWrite);
    ASSERT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, 0x1000u) << "the run went on through the invalidated page";
    run = r.unit.translate_run(0x0010, kNoPasid, 0x11000, 0x1000, Unit::kWrite);
    EXPECT_FALSE(run.first.ok);
    EXPECT_EQ(run.first.fault_reason, SM(SmFault::Write));
    EXPECT_TRUE(r.r32(FSTS) & FSTS_PPF);
    EXPECT_EQ(r.recorded(), SM(SmFault::Write));
    EXPECT_EQ(r.r64(FRCD + 0), 0x11000u);
}

TEST(ScalableMode, IotlbInvalidationInScalableModeDropsEveryPasidOfTheDomain)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010, 0), Pgtt::SecondStage, 3, pgd);
    r.pasid_entry(r.device(0x0018, 7), Pgtt::SecondStage, 3, pgd);
    r.command(G_TE);
    r.map(pgd, 0x1000, 0x9000);
    r.qi_enable_wide();
    ASSERT_TRUE(r.read(0x1000, 0x0010).ok);
    ASSERT_TRUE(r.read(0x1000, 0x0018).ok);
    r.submit_wide({Rig::iotlb_page(3, 0x1000)});
    r.run_all();
    EXPECT_EQ(r.unit.counters().iotlb_dropped, 2u);
}

TEST(ScalableMode, CachingModeCachesNoNotPresentFirstStageEntry)
{
    Config c = sm_config();
    c.cm = true;
    SmRig r(c);
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, 0x1000, 0x9000);
    EXPECT_EQ(r.read(0x2000).fault_reason, SM(SmFault::FsNotPresent));
    r.fs_map(pgd, 0x2000, 0xa000); // Linux invalidates nothing when it maps first-stage
    EXPECT_TRUE(r.read(0x2000).ok);
    EXPECT_EQ(r.unit.counters().iotlb_negative, 0u);
}

TEST(ScalableMode, MigrationKeepsTheScalableModeRoot)
{
    SmRig a;
    uint64_t pgd = a.fs_device();
    a.fs_map(pgd, 0x1000, 0x9000);
    ASSERT_TRUE(a.read(0x1000).ok);
    SmRig b;
    ASSERT_TRUE(b.take_state_of(a));
    Translation t = b.read(0x1000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.addr, 0x9000u);
    // A unit without scalable mode refuses the stream.
    Rig legacy(costs(0, 0, 0));
    EXPECT_FALSE(legacy.take_state_of(a));
}

} // namespace
} // namespace dmalab::vtd::testing
