// SPDX-License-Identifier: GPL-2.0-or-later
// Personalities: the PCI ID and DMACAPABILITY chosen together, and what Linux v6.1's
// ioatdma makes of each ID (ioat3_dma_probe(), drivers/dma/ioat/init.c).

#include <algorithm>
#include <string>

#include "dmalab/ioat/personality.h"
#include "dmalab/ioat_core.h"
#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// The IDs whose XOR, PQ and RAID16SS Linux v6.1 clears whatever DMACAPABILITY says:
// is_xeon_cb32() (JSF, SNB, IVB, HSW, BDX, SKX) and is_bwd_noraid() (BWD2/3, BDX-DE).
bool linux_masks_raid(uint16_t id)
{
    auto in = [id](uint16_t lo, uint16_t hi) { return id >= lo && id <= hi; };
    for (uint16_t base : {0x3c20, 0x0e20, 0x2f20, 0x6f20})
        if (in(base, base + 7) || id == base + 0xe || id == base + 0xf)
            return true;
    return in(0x3710, 0x3719) || id == 0x2021 || in(0x0c52, 0x0c53) || in(0x6f50, 0x6f53);
}

uint32_t raid_caps(uint32_t cap)
{
    return cap & (CAP_XOR | CAP_PQ | CAP_RAID16SS);
}

TEST(Personality, DefaultIsSkylakeCbdmaWithoutRaid)
{
    DmalabIoatConfig c;
    dmalab_ioat_default_config(&c);
    uint16_t id = 0;
    ASSERT_EQ(dmalab_ioat_personality(nullptr, &c, &id), nullptr);
    EXPECT_EQ(id, 0x2021);
    EXPECT_EQ(c.cbver, 0x33);
    EXPECT_EQ(c.dmacap, 0u);
    EXPECT_TRUE(linux_masks_raid(id));
}

TEST(Personality, BwdKeepsXorAndPqInLinux)
{
    DmalabIoatConfig c;
    dmalab_ioat_default_config(&c);
    uint16_t id = 0;
    ASSERT_EQ(dmalab_ioat_personality("bwd", &c, &id), nullptr);
    EXPECT_EQ(id, 0x0c50);
    EXPECT_FALSE(linux_masks_raid(id));
    EXPECT_EQ(raid_caps(c.dmacap), CAP_XOR | CAP_PQ | CAP_RAID16SS);
    EXPECT_EQ(c.dmacap & CAP_DWBES, 0u) << "see personality.h: XOR_VAL results would be lost";
    // The register shows it, and the operations run.
    Config m = rig_config();
    m.dmacap = c.dmacap;
    Rig r(m);
    EXPECT_EQ(r.dev.mmio_read(DMACAPABILITY, 4), c.dmacap);
    r.setup(0, kCompletion);
    r.fill(kSrc, 2 * 4096, 1);
    r.put_xor(kRing, OP_XOR, 4096, kDst, {kSrc, kSrc + 4096}, ctl::COMPL_WRITE);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Xor)].descriptors, 1u);
}

TEST(Personality, EveryOneIsKnownByNameAndUnknownNamesAreRefused)
{
    for (const Personality& p : kPersonalities) {
        DmalabIoatConfig c;
        dmalab_ioat_default_config(&c);
        uint16_t id = 0;
        EXPECT_EQ(dmalab_ioat_personality(std::string(p.name).c_str(), &c, &id), nullptr);
        EXPECT_EQ(id, p.device_id);
        EXPECT_EQ(dmalab_ioat_check(&c), nullptr);
    }
    DmalabIoatConfig c;
    dmalab_ioat_default_config(&c);
    const DmalabIoatConfig before = c;
    uint16_t id = 0x1234;
    const char* why = dmalab_ioat_personality("icx", &c, &id);
    ASSERT_NE(why, nullptr);
    EXPECT_NE(std::string(why).find("skx"), std::string::npos) << why;
    EXPECT_NE(std::string(why).find("bwd"), std::string::npos) << why;
    EXPECT_EQ(id, 0x1234) << "nothing changed";
    EXPECT_EQ(c.dmacap, before.dmacap);
}

TEST(Personality, SkxRefusesXor)
{
    Rig r(rig_config());
    r.setup(0, kCompletion);
    r.put_xor(kRing, OP_XOR, 4096, kDst, {kSrc, kSrc + 4096}, ctl::COMPL_WRITE);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_CONTROL_ERR);
}

TEST(Personality, OperationNamesForCounters)
{
    std::vector<std::string> names;
    for (unsigned op = 0; dmalab_ioat_op_name(op); op++)
        names.push_back(dmalab_ioat_op_name(op));
    EXPECT_EQ(names.size(), kOpKinds);
    EXPECT_EQ(names[static_cast<unsigned>(OpKind::Xor)], "xor");
    EXPECT_EQ(names[static_cast<unsigned>(OpKind::PqVal16)], "pq-val-16s");
    EXPECT_EQ(dmalab_ioat_op_name(kOpKinds), nullptr);
}

} // namespace
} // namespace dmalab::ioat::testing
