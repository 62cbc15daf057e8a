// SPDX-License-Identifier: GPL-2.0-or-later
// Each command status error the model reports (registers.h's CmdErr, idxd's enum
// idxd_cmdsts_err), from the state or configuration that causes it; a refused command
// changes nothing.

#include <functional>

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

// A device in some state, a command, the error it must answer.
struct Case {
    const char* name;
    std::function<void(Rig&)> setup;
    Cmd cmd;
    uint32_t operand;
    CmdErr expect;
    Config config = Config{};
};

void enabled(Rig& r)
{
    r.bring_up();
}
void configured(Rig& r)
{
    r.configure();
}
void nothing(Rig&) {}
// The default configuration, changed.
Config changed(void (*change)(Config&))
{
    Config c;
    change(c);
    return c;
}

const Case kCases[] = {
    // Any command.
    {"unknown code 0", nothing, static_cast<Cmd>(0), 0, CmdErr::InvalidCommand},
    {"unknown code 15", nothing, static_cast<Cmd>(15), 0, CmdErr::InvalidCommand},
    {"unknown code 31", nothing, static_cast<Cmd>(31), 0, CmdErr::InvalidCommand},
    {"handles not offered", nothing, Cmd::RequestIntHandle, 1, CmdErr::InvalidCommand},
    {"release not offered", nothing, Cmd::ReleaseIntHandle, 1, CmdErr::InvalidCommand},
    {"halted", [](Rig& r) { r.dev.halt(ResetType::Software); }, Cmd::EnableDevice, 0,
     CmdErr::HwError},
    {"halted, FLR needed", [](Rig& r) { r.dev.halt(ResetType::Flr); }, Cmd::ResetDevice, 0,
     CmdErr::HwError},
    // Enable Device.
    {"already enabled", enabled, Cmd::EnableDevice, 0, CmdErr::DevEnabled},
    {"bus mastering off",
     [](Rig& r) {
         r.configure();
         r.dev.set_bus_master(false);
     },
     Cmd::EnableDevice, 0, CmdErr::BusMasterDisabled},
    {"GENCFG read-buffer limit beyond TOTAL_RDBUFS",
     [](Rig& r) {
         r.configure();
         r.wr(kGencfg, 97);
     },
     Cmd::EnableDevice, 0, CmdErr::Config},
    {"WQ sizes beyond TOTAL_WQ_SIZE",
     [](Rig& r) {
         r.group(0, 0b11, 1);
         r.wq(0, 100);
         r.wq(1, 29);
     },
     Cmd::EnableDevice, 0, CmdErr::WqSizeRange},
    {"a WQ in two groups",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.group(1, 1, 2);
         r.wq(0, 16);
     },
     Cmd::EnableDevice, 0, CmdErr::GroupConfig},
    {"a WQ with slots and no group",
     [](Rig& r) {
         r.configure();
         r.wq(1, 16);
     },
     Cmd::EnableDevice, 0, CmdErr::GroupConfig},
    {"an engine in two groups",
     [](Rig& r) {
         r.group(0, 1, 0b11);
         r.group(1, 2, 0b10);
         r.wq(0, 16);
         r.wq(1, 16);
     },
     Cmd::EnableDevice, 0, CmdErr::GroupConfig2},
    {"a group with WQs and no engine",
     [](Rig& r) {
         r.group(0, 1, 0);
         r.wq(0, 16);
     },
     Cmd::EnableDevice, 0, CmdErr::GroupConfig3},
    {"read buffers reserved beyond TOTAL_RDBUFS",
     [](Rig& r) {
         r.configure();
         r.group(1, 0, 0, rdbufs(96, 50));
         r.group(2, 0, 0, rdbufs(96, 50));
     },
     Cmd::EnableDevice, 0, CmdErr::GroupConfig4},
    {"a group allowed fewer read buffers than it reserves",
     [](Rig& r) { r.group(0, 1, 1, rdbufs(4, 8)); }, Cmd::EnableDevice, 0, CmdErr::GroupConfig4},
    // Enable WQ.
    {"WQ index beyond NUM_WQS", enabled, Cmd::EnableWq, 8, CmdErr::InvalidWqIndex},
    {"WQ on a disabled device", configured, Cmd::EnableWq, 0, CmdErr::DevNotEnabled},
    {"WQ already enabled", enabled, Cmd::EnableWq, 0, CmdErr::WqEnabled},
    {"WQ of size 0",
     [](Rig& r) {
         r.group(0, 0b11, 1);
         r.wq(0, 16);
         r.wq(1, 0);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 1, CmdErr::WqSize},
    {"shared WQ with threshold 0",
     [](Rig& r) {
         r.dev.set_pasid(true, false);
         r.group(0, 1, 1);
         r.wq(0, 16, 0, 0);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::WqSize},
    {"shared WQ with threshold above its size",
     [](Rig& r) {
         r.dev.set_pasid(true, false);
         r.group(0, 1, 1);
         r.wq(0, 16, 0, 17);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::WqSize},
    {"shared WQ, shared mode not offered",
     [](Rig& r) {
         r.dev.set_pasid(true, false);
         r.group(0, 1, 1);
         r.wq(0, 16, 0, 8);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::WqMode, changed([](Config& c) { c.shared_mode = false; })},
    {"dedicated WQ, dedicated mode not offered",
     [](Rig& r) {
         r.configure();
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::WqMode, changed([](Config& c) { c.dedicated_mode = false; })},
    {"priority set, WQCAP.PRIORITY clear",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated | 3u << kPriorityShift);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::WqPriority, changed([](Config& c) { c.priority = false; })},
    {"block on fault, not offered",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated | kBofBit);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::BofEnable},
    {"PASID_EN, PCI PASID disabled",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated | WQCFG_PASID_EN);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::PasidEnable},
    {"shared WQ, PCI PASID disabled",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, 0, 8);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::PasidEnable},
    {"privileged PASID WQ, Privileged Mode Enable clear",
     [](Rig& r) {
         r.dev.set_pasid(true, false);
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated | WQCFG_PASID_EN | WQCFG_PRIV);
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::PasidEnable},
    {"batch limit above GENCAP's",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated, 0, limits(21, 11));
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::MaxBatchSize},
    {"transfer limit above GENCAP's",
     [](Rig& r) {
         r.group(0, 1, 1);
         r.wq(0, 16, kDedicated, 0, limits(21, 5));
         r.run(Cmd::EnableDevice);
     },
     Cmd::EnableWq, 0, CmdErr::MaxXferSize, changed([](Config& c) { c.max_xfer_shift = 20; })},
    // Disable Device.
    {"disable a disabled device", nothing, Cmd::DisableDevice, 0, CmdErr::DisDevNotEnabled},
    // Disable, Drain, Abort, Reset WQ.
    {"WQ set with no WQ", enabled, Cmd::DisableWq, 0, CmdErr::InvalidWqIndex},
    {"WQ set naming WQ 8", enabled, Cmd::DrainWq, wq_operand(0) | wq_operand(8),
     CmdErr::InvalidWqIndex},
    {"WQ set in block 1", enabled, Cmd::ResetWq, wq_operand(16), CmdErr::InvalidWqIndex},
    {"disable WQ on a disabled device", configured, Cmd::DisableWq, wq_operand(0),
     CmdErr::WqCmdNotEnabled},
    {"reset WQ on a disabled device", configured, Cmd::ResetWq, wq_operand(0),
     CmdErr::WqCmdNotEnabled},
    {"disable a disabled WQ", enabled, Cmd::DisableWq, wq_operand(1), CmdErr::WqCmdNotEnabled},
    {"drain a disabled WQ", enabled, Cmd::DrainWq, wq_operand(0) | wq_operand(1),
     CmdErr::WqCmdNotEnabled},
    {"abort a disabled WQ", enabled, Cmd::AbortWq, wq_operand(2), CmdErr::WqCmdNotEnabled},
    // Interrupt handles.
    {"handle for vector 0", nothing, Cmd::RequestIntHandle, 0, CmdErr::InvalidIntIndex,
     changed([](Config& c) { c.int_handles = true; })},
    {"handle beyond the MSI-X table", nothing, Cmd::RequestIntHandle, 9, CmdErr::InvalidIntIndex,
     changed([](Config& c) { c.int_handles = true; })},
    {"an IMS handle", nothing, Cmd::RequestIntHandle, 0x10001, CmdErr::InvalidIntIndex,
     changed([](Config& c) { c.int_handles = true; })},
    {"release a handle never granted", nothing, Cmd::ReleaseIntHandle, 2, CmdErr::InvalidIntIndex,
     changed([](Config& c) { c.int_handles = true; })},
};

TEST(CommandErrors, EachErrorFromItsCause)
{
    for (const Case& c : kCases) {
        SCOPED_TRACE(c.name);
        Rig r(c.config);
        c.setup(r);
        r.ack();
        const auto before = r.dump();
        const uint64_t errors = r.dev.counters().command_errors;
        r.issue(c.cmd, c.operand);
        const uint32_t sts = r.wait();
        EXPECT_EQ(err_of(sts), c.expect);
        EXPECT_EQ(CMDSTS_RESULT.get(sts), 0u);
        EXPECT_EQ(r.dev.counters().command_errors, errors + 1);
        // Nothing changed but CMD, CMDSTS and INTCAUSE.CMD (idxd waits for it on errors
        // too).
        EXPECT_EQ(r.rd(kIntcause), INTC_CMD);
        r.ack();
        auto after = r.dump();
        for (uint32_t at : {kCmd, kCmdsts})
            after[at / 4] = before[at / 4];
        EXPECT_EQ(after, before);
        EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    }
}

TEST(CommandErrors, IdxdTakesTheseAsSuccess)
{
    // idxd_device_enable accepts DEV_ENABLED, idxd_wq_enable WQ_ENABLED, idxd_device_disable
    // any status with a bit of 0x31 (DIS_DEV_EN).
    EXPECT_EQ(static_cast<uint8_t>(CmdErr::DisDevNotEnabled) & 0x31, 0x31);
    Rig r;
    r.bring_up();
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::DevEnabled);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::WqEnabled);
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_TRUE(r.wq_enabled(0));
}

TEST(CommandErrors, AWqSetIsCheckedWholeBeforeAnyWqChanges)
{
    Rig r;
    r.bring_up();
    // WQ 0 is enabled, WQ 1 is not: Disable WQ of both refuses, and WQ 0 stays enabled.
    EXPECT_EQ(r.run(Cmd::DisableWq, 0b11), CmdErr::WqCmdNotEnabled);
    EXPECT_TRUE(r.wq_enabled(0));
}

} // namespace
} // namespace dmalab::dsa::testing
