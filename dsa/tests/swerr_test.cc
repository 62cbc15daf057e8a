// SPDX-License-Identifier: GPL-2.0-or-later
// Software errors and the Halted state as idxd's misc interrupt thread handles them
// (idxd_misc_thread: HALT first, then SWERR read in four quadwords and acknowledged by
// writing VALID and OVERFLOW back).

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint32_t kSwerrIntEn = 1, kHaltIntEn = 2;

TEST(Swerr, RecordsTheFirstError)
{
    Rig r;
    r.bring_up();
    r.wr(kGenctrl, kSwerrIntEn | kHaltIntEn); // idxd_unmask_error_interrupts
    SwError e;
    e.error = Status::CompletionRecordFault;
    e.wq = 5;
    e.desc_valid = true;
    e.operation = static_cast<uint8_t>(Opcode::Memmove);
    e.batch = true;
    e.batch_index = 17;
    e.fault_write = true;
    e.priv = true;
    e.pasid = 0x54321;
    e.fault_addr = 0xdead0000;
    r.dev.software_error(e);
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_EQ(w0 & SWERR_VALID, SWERR_VALID);
    EXPECT_EQ(w0 & SWERR_OVERFLOW, 0u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x1au);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX"), 5u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "DESC_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "OPERATION"), 3u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "BATCH"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "FAULT_RW"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "PRIV"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "PASID"), 0x54321u);
    EXPECT_EQ(field_of(r.rd(kSwerr + 8, 8), fields::SWERR1, "BATCH_IDX"), 17u);
    EXPECT_EQ(r.rd(kSwerr + 16, 8), 0xdead0000u);
    EXPECT_EQ(r.rd(kSwerr + 24, 8), 0u);
    EXPECT_EQ(r.rd(kIntcause), INTC_SWERR);
    EXPECT_EQ(r.irq.raised.back(), 0u);
    EXPECT_EQ(r.dev.counters().swerrs, 1u);
}

TEST(Swerr, ASecondErrorOnlyOverflows)
{
    Rig r;
    r.dev.software_error({Status::InvalidIntHandle, 2});
    SwError second{Status::CompletionRecordAlign};
    second.fault_addr = 0x1234;
    r.dev.software_error(second);
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_EQ(w0 & (SWERR_VALID | SWERR_OVERFLOW), SWERR_VALID | SWERR_OVERFLOW);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x19u) << "the first error's record stays";
    EXPECT_EQ(r.rd(kSwerr + 16, 8), 0u);
    EXPECT_EQ(r.dev.counters().swerrs, 2u);
    EXPECT_EQ(r.dev.counters().swerr_overflows, 1u);
    EXPECT_TRUE(r.irq.raised.empty()) << "GENCTRL.SWERR_INT_EN is clear";
    EXPECT_EQ(r.rd(kIntcause), 0u);
    // idxd acknowledges with the quadword's VALID and OVERFLOW written back.
    r.wr(kSwerr, w0 & (SWERR_VALID | SWERR_OVERFLOW), 8);
    EXPECT_EQ(r.rd(kSwerr, 8) & (SWERR_VALID | SWERR_OVERFLOW), 0u);
    r.dev.software_error(second);
    EXPECT_EQ(field_of(r.rd(kSwerr, 8), fields::SWERR0, "ERROR"), 0x1bu) << "recorded anew";
    EXPECT_EQ(r.rd(kSwerr + 16, 8), 0x1234u);
}

TEST(Swerr, RecordIsReadOnlyButForItsStatusBits)
{
    Rig r;
    r.dev.software_error({Status::InvalidFlags});
    r.wr(kSwerr + 16, ~0ull, 8);
    r.wr(kSwerr, ~0ull & ~(SWERR_VALID | SWERR_OVERFLOW), 8);
    EXPECT_EQ(r.rd(kSwerr + 16, 8), 0u);
    EXPECT_EQ(r.rd(kSwerr, 8) & SWERR_VALID, SWERR_VALID);
}

TEST(Swerr, HaltWithSoftwareResetAndRecovery)
{
    Rig r;
    r.bring_up();
    r.wr(kGenctrl, kSwerrIntEn | kHaltIntEn);
    r.dev.halt(ResetType::Software);
    const uint32_t gensts = static_cast<uint32_t>(r.rd(kGensts));
    EXPECT_EQ(GENSTS_STATE.get(gensts), static_cast<uint64_t>(DeviceState::Halted));
    EXPECT_EQ(GENSTS_RESET_TYPE.get(gensts), static_cast<uint64_t>(ResetType::Software));
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_FALSE(r.dev.wq(0).enabled);
    EXPECT_EQ(r.ack(), INTC_HALT);
    EXPECT_EQ(r.dev.counters().halts, 1u);
    // Only Reset Device is taken: idxd_device_reinit resets, configures, enables.
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::HwError);
    EXPECT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_EQ(r.rd(kGensts), 0u);
    r.bring_up();
    EXPECT_TRUE(r.dev.wq(0).enabled);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Swerr, HaltNeedingFlrTakesNoCommand)
{
    Rig r;
    r.bring_up();
    r.dev.halt(ResetType::Flr);
    r.dev.halt(ResetType::Software); // the first fatal error decides
    EXPECT_EQ(GENSTS_RESET_TYPE.get(r.rd(kGensts)), static_cast<uint64_t>(ResetType::Flr));
    EXPECT_EQ(r.ack(), 0u) << "HALT_INT_EN is clear: no INTCAUSE.HALT";
    for (Cmd c : {Cmd::ResetDevice, Cmd::DisableDevice, Cmd::EnableDevice, Cmd::DrainAll})
        EXPECT_EQ(r.run(c), CmdErr::HwError);
    EXPECT_EQ(r.state(), DeviceState::Halted);
    EXPECT_EQ(r.dev.counters().halts, 1u);
    r.dev.reset(); // the FLR
    EXPECT_EQ(r.rd(kGensts), 0u);
}

} // namespace
} // namespace dmalab::dsa::testing
