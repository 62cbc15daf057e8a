// SPDX-License-Identifier: GPL-2.0-or-later
// Every command's success, and the sequences idxd issues them in: probe and device enable
// (idxd_device_drv_probe), WQ enable and disable (drv_enable_wq, drv_disable_wq), device
// disable and reset on unbind (idxd_device_drv_remove).

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

TEST(Commands, EnableDeviceThenWq)
{
    Rig r;
    r.configure();
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_EQ(r.dev.state(), DeviceState::Enabled);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    EXPECT_TRUE(r.wq_enabled(0));
    WqInfo i = r.dev.wq(0);
    EXPECT_TRUE(i.enabled);
    EXPECT_EQ(i.mode, WqMode::Dedicated);
    EXPECT_EQ(i.size, 16u);
    EXPECT_EQ(i.group, 0u);
    EXPECT_EQ(i.engines, 1u);
    EXPECT_FALSE(r.dev.wq(1).enabled);
    EXPECT_EQ(r.dev.counters().commands, 2u);
    EXPECT_EQ(r.dev.counters().command_errors, 0u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Commands, SharedWqWithPasid)
{
    Rig r;
    r.dev.set_pasid(true, true);
    r.group(0, 0b11, 0b11);
    r.wq(0, 16);
    r.wq(1, 32, 0, 24); // shared, threshold 24
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::EnableWq, 1), CmdErr::Success);
    EXPECT_EQ(r.dev.wq(1).mode, WqMode::Shared);
    EXPECT_EQ(r.dev.wq(1).threshold, 24u);
    // A dedicated WQ with a PASID and privileged descriptors, PASID's Privileged Mode on.
    ASSERT_EQ(r.run(Cmd::DisableDevice), CmdErr::Success);
    r.wq(0, 16, kDedicated | WQCFG_PASID_EN | WQCFG_PRIV);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
}

TEST(Commands, DrainAbortDisableWq)
{
    Rig r;
    r.bring_up();
    EXPECT_EQ(r.run(Cmd::DrainWq, wq_operand(0)), CmdErr::Success);
    EXPECT_TRUE(r.wq_enabled(0));
    EXPECT_EQ(r.run(Cmd::AbortWq, wq_operand(0)), CmdErr::Success);
    EXPECT_TRUE(r.wq_enabled(0));
    EXPECT_EQ(r.run(Cmd::DisableWq, wq_operand(0)), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqSize)), 16u) << "Disable WQ keeps the configuration";
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqMode)), kDedicated);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
}

TEST(Commands, ResetWqKeepsOnlyTheSize)
{
    Rig r;
    r.bring_up();
    r.wr(r.wqcfg(0, kWqMode), kDedicated); // the WQ is enabled: no change, no refusal
    EXPECT_EQ(r.run(Cmd::ResetWq, wq_operand(0)), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqMode)), 0u);
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqLimits)), 0u);
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqSize)), 16u) << "the size is the device's, locked";
    // Reset WQ of a disabled WQ is accepted too: it only puts the configuration back.
    EXPECT_EQ(r.run(Cmd::ResetWq, wq_operand(0)), CmdErr::Success);
}

TEST(Commands, WqSetsAcrossBlocks)
{
    Config c;
    c.wqs = 20;
    Rig r(c);
    r.group(0, 1u << 3 | 1u << 17, 1);
    r.wq(3, 8);
    r.wq(17, 8);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 3), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 17), CmdErr::Success);
    // WQ 17 is bit 1 of block 1 (idxd: BIT(17 % 16) | (17 / 16) << 16).
    EXPECT_EQ(wq_operand(17), 0x10002u);
    EXPECT_EQ(r.run(Cmd::DisableWq, wq_operand(17)), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(17));
    EXPECT_TRUE(r.wq_enabled(3));
    ASSERT_EQ(r.run(Cmd::EnableWq, 17), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::DisableWq, 1u << 3), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(3));
    EXPECT_TRUE(r.wq_enabled(17));
}

TEST(Commands, DisableDeviceDisablesEveryWq)
{
    Rig r;
    r.group(0, 0b111, 1);
    for (unsigned w = 0; w < 3; w++)
        r.wq(w, 8);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    for (unsigned w = 0; w < 3; w++)
        ASSERT_EQ(r.run(Cmd::EnableWq, w), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::DisableDevice), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    for (unsigned w = 0; w < 3; w++) {
        EXPECT_FALSE(r.wq_enabled(w));
        EXPECT_EQ(r.rd(r.wqcfg(w, kWqSize)), 8u);
    }
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpWqs), 8), 0b111u) << "the configuration stays";
}

TEST(Commands, DeviceWideAndPasidCommandsSucceed)
{
    Rig r;
    r.bring_up();
    for (Cmd c : {Cmd::DrainAll, Cmd::AbortAll})
        EXPECT_EQ(r.run(c), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::DrainPasid, 0x12345), CmdErr::Success); // idxd_device_drain_pasid
    EXPECT_EQ(r.run(Cmd::AbortPasid, 7), CmdErr::Success);
    EXPECT_TRUE(r.wq_enabled(0));
    EXPECT_EQ(r.state(), DeviceState::Enabled);
}

TEST(Commands, ResetDevice)
{
    Rig r;
    r.bring_up();
    r.wr(kGenctrl, 3);
    EXPECT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqSize)), 0u);
    EXPECT_EQ(r.rd(r.grpcfg(0, kGrpWqs), 8), 0u);
    EXPECT_EQ(r.rd(kGenctrl), 0u) << "idxd unmasks its error interrupts after a reset";
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD) << "the reset's own completion";
}

TEST(Commands, InterruptHandles)
{
    Config c;
    c.int_handles = true;
    Rig r(c);
    // idxd_setup_interrupts (as of its int_handles array): a handle per vector from 1.
    for (unsigned v = 1; v < 9; v++) {
        ASSERT_EQ(r.run(Cmd::RequestIntHandle, v), CmdErr::Success);
        EXPECT_EQ(r.result(), v);
        EXPECT_EQ(r.dev.handle_vector(r.result()), v);
    }
    EXPECT_EQ(r.run(Cmd::ReleaseIntHandle, 4), CmdErr::Success);
    EXPECT_EQ(r.result(), 0u);
    EXPECT_FALSE(r.dev.handle_vector(4).has_value()) << "released";
    EXPECT_FALSE(r.dev.handle_vector(0).has_value()) << "never granted";
    // Without handles offered, a descriptor's handle is the MSI-X index.
    Rig plain;
    EXPECT_EQ(plain.dev.handle_vector(3), 3u);
    EXPECT_FALSE(plain.dev.handle_vector(9).has_value());
}

TEST(Commands, IdxdWqUnbindAndRebind)
{
    Rig r;
    r.bring_up();
    // drv_disable_wq: Drain WQ, (handle released), Reset WQ.
    ASSERT_EQ(r.run(Cmd::DrainWq, wq_operand(0)), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::ResetWq, wq_operand(0)), CmdErr::Success);
    // drv_enable_wq: the PRIV dword, then idxd_device_config on the enabled device: WQCFG
    // (or-ing in what the device holds: the size survived the reset), GRPCFG; Enable WQ.
    r.wr(r.wqcfg(0, kWqMode), r.rd(r.wqcfg(0, kWqMode)) | WQCFG_PRIV);
    r.wq(0, 16, kDedicated | WQCFG_PRIV);
    r.group(0, 1, 1);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    EXPECT_TRUE(r.dev.wq(0).priv);
    EXPECT_EQ(r.dev.counters().refused_writes, 0u);
    // idxd_device_drv_remove: Disable Device, then Reset Device.
    EXPECT_EQ(r.run(Cmd::DisableDevice), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Commands, CommandsAreStagedUntilTheTopByte)
{
    Rig r;
    r.configure();
    const uint32_t cmd = Rig::command(Cmd::EnableDevice, 0, true);
    r.wr(kCmd, cmd & 0xffff, 2);
    r.wr(kCmd + 2, (cmd >> 16) & 0xff, 1);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_EQ(r.dev.counters().commands, 0u);
    r.wr(kCmd + 3, cmd >> 24, 1);
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_EQ(r.rd(kCmd), cmd) << "CMD reads back the last command";
}

} // namespace
} // namespace dmalab::dsa::testing
