// SPDX-License-Identifier: GPL-2.0-or-later
// Requests with a PASID. The unit offers none (ECAP.PASID clear, PASIDE reserved in its
// context entries), so with translation on each is refused: 31h under a legacy root table,
// 45h (PASIDE clear) under a scalable-mode one once the root and context entries hold; the
// fault record names the PASID (FRCD.PP and PV, 10.4.14). Requests without one are unchanged.

#include "sm_rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t FRCD_PP = field_mask(fields::FRCD_HI, "PP");
constexpr unsigned FRCD_PV_SHIFT = field_lsb(fields::FRCD_HI, "PV");
constexpr uint32_t kPasid = 0x12345;

uint32_t pasid_of(uint64_t frcd_hi)
{
    return static_cast<uint32_t>(frcd_hi >> FRCD_PV_SHIFT) & 0xfffff;
}

TEST(Pasid, LegacyRootTableRefusesARequestWithAPasid)
{
    Rig r;
    uint64_t pgd = r.basic(0x0310);
    r.map(pgd, 0x1000, 0x9000, true, true);
    EXPECT_TRUE(r.unit.translate(0x0310, kNoPasid, 0x1000, Unit::kRead).ok);
    Translation t = r.unit.translate(0x0310, kPasid, 0x1abc, Unit::kWrite);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, SM(SmFault::LegacyPasid));
    uint64_t hi = r.r64(FRCD + 8);
    EXPECT_EQ(record_reason(hi), SM(SmFault::LegacyPasid));
    EXPECT_TRUE(hi & FRCD_PP);
    EXPECT_EQ(pasid_of(hi), kPasid);
    EXPECT_EQ(hi & 0xffff, 0x0310u);
    EXPECT_EQ(r.r64(FRCD), 0x1000u);
    // A record without a PASID says so.
    EXPECT_FALSE(r.unit.translate(0x0310, kNoPasid, 0x5000, Unit::kRead).ok);
    EXPECT_FALSE(r.r64(FRCD + 16 + 8) & FRCD_PP);
}

TEST(Pasid, TranslationOffPassesARequestWithAPasid)
{
    Rig r;
    Translation t = r.unit.translate(0x0310, kPasid, 0x1abc, Unit::kWrite);
    EXPECT_TRUE(t.ok);
    EXPECT_FALSE(t.translated);
    EXPECT_EQ(t.addr, 0x1000u);
}

TEST(Pasid, ScalableModeRefusesItAtTheContextEntry)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010), Pgtt::SecondStage, 3, pgd);
    r.command(G_TE);
    r.map(pgd, 0x1000, 0x9000, true, true);
    ASSERT_TRUE(r.read(0x1000).ok);
    Translation t = r.unit.translate(0x0010, kPasid, 0x1000, Unit::kRead);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, SM(SmFault::PasidDisabled));
    uint64_t hi = r.r64(FRCD + 8);
    EXPECT_EQ(record_reason(hi), SM(SmFault::PasidDisabled));
    EXPECT_TRUE(hi & FRCD_PP);
    EXPECT_EQ(pasid_of(hi), kPasid);
    EXPECT_TRUE(hi & FRCD_T_READ);
    // What the root and context entries refuse comes first: no context entry for 0x0020.
    EXPECT_EQ(r.unit.translate(0x0020, kPasid, 0x1000, Unit::kRead).fault_reason,
              SM(SmFault::ContextNotPresent));
    // The request without a PASID still translates, from the cache or the tables.
    EXPECT_TRUE(r.read(0x1000).ok);
}

TEST(Pasid, TranslationRequestsAndRunsCarryIt)
{
    SmRig r;
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010), Pgtt::SecondStage, 3, pgd);
    r.command(G_TE);
    for (uint64_t p = 0; p < 4; p++)
        r.map(pgd, 0x1000 + (p << 12), 0x9000 + (p << 12), true, true);
    // An ATS translation request with a PASID: refused, a query's answer, nothing recorded.
    Translation t = r.unit.translation_request(0x0010, kPasid, 0x1000);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, SM(SmFault::PasidDisabled));
    EXPECT_EQ(r.unit.counters().faults_recorded, 0u);
    EXPECT_TRUE(r.unit.translation_request(0x0010, kNoPasid, 0x1000).ok);
    // A run with a PASID stops at its first page; without, it covers the four.
    Unit::Run run = r.unit.translate_run(0x0010, kPasid, 0x1000, 0x4000, Unit::kRead);
    EXPECT_FALSE(run.first.ok);
    EXPECT_EQ(run.len, 0u);
    EXPECT_EQ(r.recorded(), SM(SmFault::PasidDisabled));
    run = r.unit.translate_run(0x0010, kNoPasid, 0x1000, 0x4000, Unit::kRead);
    EXPECT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, 0x4000u);
}

} // namespace
} // namespace dmalab::vtd::testing
