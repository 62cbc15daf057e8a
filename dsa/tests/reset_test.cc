// SPDX-License-Identifier: GPL-2.0-or-later
// Power-on reset (and FLR) against Reset Device: every register and table entry back to its
// reset value, except what Reset Device leaves to the function (MSI-X permissions, handles).

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

Config busy_config()
{
    Config c;
    c.int_handles = true;
    c.command_ns = 100;
    return c;
}

// Every register and table touched: configured, enabled, GENCTRL and GENCFG set, a
// software error recorded, permissions written, handles out, occupancy, a cause pending and
// a command in progress.
void dirty(Rig& r)
{
    r.dev.set_pasid(true, true);
    r.wr(kGencfg, 0x1010);
    r.group(0, 0b11, 0b11, rdbufs(90, 6) | 0x3f);
    r.group(3, 0b100, 0b100);
    r.wq(0, 16, kDedicated | WQCFG_PASID_EN | WQCFG_PRIV | 5u << kPriorityShift);
    r.wq(1, 32, 0, 8);
    r.wq(2, 8);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    for (unsigned w = 0; w < 3; w++)
        ASSERT_EQ(r.run(Cmd::EnableWq, w), CmdErr::Success);
    for (unsigned v = 1; v < 9; v++) {
        ASSERT_EQ(r.run(Cmd::RequestIntHandle, v), CmdErr::Success);
        r.wr(r.perm(v), v << 12 | 1u << 3);
    }
    for (unsigned i = 0; i < 7; i++)
        r.submit(2, Desc(Opcode::Noop), i);
    r.wr(kGenctrl, 3);
    r.dev.software_error({Status::CompletionRecordFault, 1});
    r.issue(Cmd::DrainAll);
    ASSERT_TRUE(r.active());
}

TEST(Reset, PowerOnResetRestoresEveryRegisterAndTable)
{
    Rig fresh(busy_config());
    Rig r(busy_config());
    dirty(r);
    EXPECT_NE(r.dump(), fresh.dump());
    r.dev.reset();
    EXPECT_EQ(r.dump(), fresh.dump());
    EXPECT_FALSE(r.pending());
    EXPECT_FALSE(r.dev.handle_vector(1).has_value()) << "handles released";
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    // Bus Master Enable is the PCI command register's, which resets too.
    r.configure();
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::BusMasterDisabled);
    r.dev.set_bus_master(true);
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
}

TEST(Reset, ResetDeviceKeepsThePermissionsAndHandles)
{
    Rig fresh(busy_config());
    Rig r(busy_config());
    dirty(r);
    r.wait();
    const uint32_t perms = r.layout.msix_perm, perms_end = r.layout.grpcfg;
    std::vector<uint32_t> kept;
    for (uint32_t at = perms; at < perms_end; at += 4)
        kept.push_back(static_cast<uint32_t>(r.rd(at)));
    EXPECT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    auto after = r.dump();
    auto expect = fresh.dump();
    expect[kIntcause / 4] = INTC_CMD; // the reset's own completion
    for (uint32_t at = perms; at < perms_end; at += 4)
        expect[at / 4] = kept[(at - perms) / 4];
    EXPECT_EQ(after, expect);
    EXPECT_EQ(r.dev.handle_vector(3), 3u);
    EXPECT_EQ(r.dev.msix_permission(3).pasid, 3u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

} // namespace
} // namespace dmalab::dsa::testing
