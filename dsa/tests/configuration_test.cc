// SPDX-License-Identifier: GPL-2.0-or-later
// The configuration tables and GENCFG: what software may write, read back as idxd does
// (idxd_wq_config_write, idxd_group_config_write), and the locks while the device or a WQ is
// enabled.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

TEST(Configuration, WqEntryReadsBackWhatIdxdWrites)
{
    Rig r;
    const uint32_t mode = kDedicated | 7u << kPriorityShift | WQCFG_PRIV | WQCFG_PASID_EN |
                          static_cast<uint32_t>(WQCFG_PASID.put(0x1234));
    r.wq(3, 32, mode, 0, limits(21, 5));
    EXPECT_EQ(r.rd(r.wqcfg(3, kWqSize)), 32u);
    EXPECT_EQ(r.rd(r.wqcfg(3, kWqMode)), mode);
    EXPECT_EQ(r.rd(r.wqcfg(3, kWqLimits)), limits(21, 5));
    WqInfo i = r.dev.wq(3);
    EXPECT_FALSE(i.enabled);
    EXPECT_EQ(i.mode, WqMode::Dedicated);
    EXPECT_EQ(i.size, 32u);
    EXPECT_EQ(i.priority, 7u);
    EXPECT_TRUE(i.priv);
    EXPECT_TRUE(i.pasid_enabled);
    EXPECT_EQ(i.pasid, 0x1234u);
    EXPECT_EQ(i.max_xfer_shift, 21u);
    EXPECT_EQ(i.max_batch_shift, 5u);
    EXPECT_FALSE(i.group.has_value());
    // idxd writes all eight dwords back, the status dword with what it read (read-only).
    r.wr(r.wqcfg(3, kWqStatus), 0xffffffffu);
    EXPECT_EQ(r.rd(r.wqcfg(3, kWqStatus)), 1u << 29) << "WQ_STATE, OCCUPANCY, MODE_SUPPORT";
    EXPECT_FALSE(r.log.guest_errors.empty()) << "the reserved bits were written as 1";
}

TEST(Configuration, GroupEntryAndTheMapping)
{
    Rig r;
    r.group(2, 0b1010, 0b0110, rdbufs(96, 8) | 1u << 3 | 1u);
    EXPECT_EQ(r.rd(r.grpcfg(2, kGrpWqs), 8), 0b1010u);
    EXPECT_EQ(r.rd(r.grpcfg(2, kGrpEngines), 8), 0b0110u);
    GroupInfo g = r.dev.group(2);
    EXPECT_EQ(g.wqs[0], 0b1010u);
    EXPECT_EQ(g.engines, 0b0110u);
    EXPECT_EQ(g.tc_a, 1u);
    EXPECT_EQ(g.tc_b, 1u);
    EXPECT_EQ(g.rdbufs_allowed, 96u);
    EXPECT_EQ(g.rdbufs_reserved, 8u);
    EXPECT_EQ(r.dev.wq(3).group, 2u);
    EXPECT_EQ(r.dev.wq(3).engines, 0b0110u);
    EXPECT_FALSE(r.dev.wq(0).group.has_value());
    EXPECT_EQ(r.dev.counters().refused_writes, 0u);
}

TEST(Configuration, WqsAndEnginesTheDeviceLacksAreNotWritable)
{
    Rig r;
    r.wr(r.grpcfg(0, kGrpWqs), 0x1ff, 8);      // WQ 8 of 8
    r.wr(r.grpcfg(0, kGrpWqs + 8), 1, 8);      // WQ 64
    r.wr(r.grpcfg(0, kGrpEngines), 0xffff, 8); // engines 4 and up
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpWqs), 8), 0xffu);
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpWqs + 8), 8), 0u);
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpEngines), 8), 0xfu);
    EXPECT_EQ(r.dev.counters().refused_writes, 3u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Configuration, LockedWhileTheDeviceIsEnabled)
{
    Rig r;
    r.bring_up();
    r.wr(kGencfg, 5);
    EXPECT_EQ(r.rd(kGencfg), 0u);
    r.wr(r.grpcfg(0, kGrpEngines), 0x3, 8);
    r.wr(r.grpcfg(1, kGrpWqs), 0x2, 8);
    r.wr(r.grpcfg(1, kGrpWqs), 0x2, 1); // a byte at a time changes nothing either
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpEngines), 8), 1u);
    EXPECT_EQ(r.rd(r.grpcfg(1, kGrpWqs), 8), 0u);
    // WQ_SIZE divides the device's storage: locked even for a disabled WQ (idxd's
    // wq_size_store refuses while the device is enabled).
    r.wr(r.wqcfg(1, kWqSize), 8);
    EXPECT_EQ(r.rd(r.wqcfg(1, kWqSize)), 0u);
    EXPECT_EQ(r.dev.counters().refused_writes, 5u);
    EXPECT_GE(r.log.guest_errors.size(), 5u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    // Disabled again, the device takes them.
    ASSERT_EQ(r.run(Cmd::DisableDevice), CmdErr::Success);
    r.wr(kGencfg, 5);
    r.wr(r.wqcfg(1, kWqSize), 8);
    EXPECT_EQ(r.rd(kGencfg), 5u);
    EXPECT_EQ(r.rd(r.wqcfg(1, kWqSize)), 8u);
}

TEST(Configuration, WqEntryLockedWhileTheWqIsEnabled)
{
    Rig r;
    r.bring_up();
    const uint32_t before = static_cast<uint32_t>(r.rd(r.wqcfg(0, kWqMode)));
    r.wr(r.wqcfg(0, kWqMode), 0);
    r.wr(r.wqcfg(0, kWqThreshold), 3);
    r.wr(r.wqcfg(0, kWqLimits), limits(10, 2));
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqMode)), before);
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqThreshold)), 0u);
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqLimits)), limits(21, 5));
    EXPECT_EQ(r.dev.counters().refused_writes, 3u);
    // idxd_wq_set_pasid: Disable WQ, the PASID dword, Enable WQ, all on an enabled device.
    ASSERT_EQ(r.run(Cmd::DisableWq, wq_operand(0)), CmdErr::Success);
    const uint32_t pasid = kDedicated | WQCFG_PASID_EN | static_cast<uint32_t>(WQCFG_PASID.put(9));
    r.wr(r.wqcfg(0, kWqMode), pasid);
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqMode)), pasid);
    r.dev.set_pasid(true, false);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    EXPECT_EQ(r.dev.wq(0).pasid, 9u);
    EXPECT_EQ(r.dev.counters().refused_writes, 3u);
}

TEST(Configuration, IdxdRewritingTheSameValuesWhileEnabledIsNoError)
{
    // drv_enable_wq runs idxd_device_config on an enabled device: every group and every
    // grouped WQ's entry is written again, with the values the device holds.
    Rig r;
    r.group(0, 0b11, 1);
    r.wq(0, 16);
    r.wq(1, 16);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.log.guest_errors.clear();
    for (unsigned g = 0; g < 4; g++) {
        for (unsigned k = 0; k < 4; k++)
            r.wr(r.grpcfg(g, kGrpWqs + 8 * k), r.rd(r.grpcfg(g, kGrpWqs + 8 * k), 8), 8);
        r.wr(r.grpcfg(g, kGrpEngines), r.rd(r.grpcfg(g, kGrpEngines), 8), 8);
        r.wr(r.grpcfg(g, kGrpFlags), r.rd(r.grpcfg(g, kGrpFlags), 8), 8);
    }
    for (unsigned w = 0; w < 2; w++)
        for (uint32_t d = 0; d < kWqcfgStride; d += 4)
            r.wr(r.wqcfg(w, d), r.rd(r.wqcfg(w, d)));
    EXPECT_TRUE(r.log.guest_errors.empty());
    EXPECT_EQ(r.dev.counters().refused_writes, 0u);
    EXPECT_EQ(r.run(Cmd::EnableWq, 1), CmdErr::Success);
}

TEST(Configuration, MsixPermissionsAreAlwaysWritable)
{
    Rig r;
    r.bring_up();
    // idxd_device_set_perm_entry: PASID and PASID_EN, after the WQ is enabled.
    r.wr(r.perm(1), 0x12345u << 12 | 1u << 3);
    MsixPermission m = r.dev.msix_permission(1);
    EXPECT_TRUE(m.pasid_enabled);
    EXPECT_FALSE(m.ignore);
    EXPECT_EQ(m.pasid, 0x12345u);
    r.wr(r.perm(8), 1u << 2);
    EXPECT_TRUE(r.dev.msix_permission(8).ignore);
    r.wr(r.perm(1), 0); // idxd_device_clear_perm_entry
    EXPECT_EQ(r.rd(r.perm(1)), 0u);
    EXPECT_EQ(r.dev.counters().refused_writes, 0u);
}

TEST(Configuration, OccupancyCountsWhatTheWqHolds)
{
    Rig r(queued());
    r.bring_up();
    for (unsigned i = 0; i < 5; i++)
        r.submit(0, Desc(Opcode::Noop), i);
    EXPECT_EQ(WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(0, kWqStatus))), 5u);
    for (unsigned i = 0; i < 20; i++)
        r.submit(0, Desc(Opcode::Noop), i);
    EXPECT_EQ(r.dev.wq(0).occupancy, 16u) << "never more than the WQ holds";
    EXPECT_EQ(r.dev.counters().dropped, 9u);
    ASSERT_EQ(r.run(Cmd::DisableWq, wq_operand(0)), CmdErr::Success);
    EXPECT_EQ(r.dev.wq(0).occupancy, 0u);
    EXPECT_EQ(r.dev.counters().descriptors, 16u) << "Disable WQ drains first";
}

} // namespace
} // namespace dmalab::dsa::testing
