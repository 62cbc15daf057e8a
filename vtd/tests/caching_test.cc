// SPDX-License-Identifier: GPL-2.0-or-later
// Caching mode (CAP.CM): a page refused because it is not present stays refused, from the
// IOTLB, until an invalidation drops it; without caching mode the unit caches no such
// entry and a page made present translates at once.

#include "rig.h"

namespace dmalab::vtd::testing
{
namespace
{

constexpr uint64_t CAP_CM = field_mask(fields::CAP, "CM");
static_assert(CAP_CM == 1u << 7);

Config cm_config(bool cm)
{
    Config c = costs(0, 0, 0);
    c.cm = cm;
    return c;
}

TEST(CachingMode, AdvertisedOnlyWhenConfigured)
{
    EXPECT_TRUE(Rig(cm_config(true)).r64(CAP) & CAP_CM);
    EXPECT_FALSE(Rig(cm_config(false)).r64(CAP) & CAP_CM);
}

TEST(CachingMode, NotPresentPageStaysRefusedUntilInvalidated)
{
    for (bool cm : {true, false}) {
        Rig r(cm_config(cm));
        uint64_t pgd = r.basic();
        r.map(pgd, 0x1000, 0x9000); // the tables down to the leaf; then 0x2000 is absent
        EXPECT_EQ(r.read(0x2000).fault_reason, FR_READ) << cm;
        EXPECT_EQ(r.unit.counters().iotlb_negative, cm ? 1u : 0u);
        r.map(pgd, 0x2000, 0xa000); // made present, not yet invalidated
        Translation t = r.read(0x2000);
        if (cm) {
            EXPECT_EQ(t.fault_reason, FR_READ); // from the cached entry: no walk
            EXPECT_EQ(r.write(0x2000).fault_reason, FR_WRITE);
            EXPECT_EQ(r.unit.counters().iotlb_hits, 2u);
            r.qi_enable();
            r.submit({Rig::iotlb_page(1, 0x2000)});
            r.run_all();
            t = r.read(0x2000);
        }
        EXPECT_TRUE(t.ok) << cm;
        EXPECT_EQ(t.addr, 0xa000u);
    }
}

TEST(CachingMode, TheAuditDoesNotCallAStillAbsentPageStale)
{
    Config c = cm_config(true);
    c.audit = true;
    Rig r(c);
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    EXPECT_FALSE(r.read(0x2000).ok);
    EXPECT_FALSE(r.read(0x2000).ok); // a hit on the negative entry, checked
    EXPECT_EQ(r.unit.counters().audit_checks, 1u);
    EXPECT_EQ(r.unit.counters().audit_stale, 0u);
    r.map(pgd, 0x2000, 0xa000); // present now: the cached refusal is stale
    EXPECT_FALSE(r.read(0x2000).ok);
    EXPECT_EQ(r.unit.counters().audit_stale, 1u);
}

TEST(CachingMode, ADmaEngineRunStopsAtANegativeEntry)
{
    Rig r(cm_config(true));
    uint64_t pgd = r.basic();
    r.map(pgd, 0x1000, 0x9000);
    r.map(pgd, 0x3000, 0xb000);
    EXPECT_FALSE(r.read(0x2000).ok); // cached as not present
    r.map(pgd, 0x2000, 0xa000);
    Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 0x1000, 0x3000, Unit::kRead);
    EXPECT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, 0x1000u); // the run ends where the cached refusal starts
    EXPECT_EQ(r.read(0x2000).fault_reason, FR_READ);
}

} // namespace
} // namespace dmalab::vtd::testing
