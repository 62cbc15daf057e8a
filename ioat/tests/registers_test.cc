// SPDX-License-Identifier: GPL-2.0-or-later
// Register reset values, write masks and access sizes.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// The masks derive from the field tables (registers.h); these are the values Linux's
// drivers/dma/ioat/registers.h gives the same bits, so a wrong field position fails here.
static_assert(INTRCTRL_MASTER_INT_EN == 0x01 && INTRCTRL_INT_STATUS == 0x02 &&
              INTRCTRL_INT == 0x04 && INTRCTRL_MSIX_VECTOR_CONTROL == 0x08);
static_assert(INTRDELAY_MASK == 0x3fff && INTRDELAY_COALESCE_SUPPORT == 0x8000);
static_assert(CHANCTRL_INT_REARM == 0x0001 && CHANCTRL_ERR_COMPLETION_EN == 0x0004 &&
              CHANCTRL_ANY_ERR_ABORT_EN == 0x0008 && CHANCTRL_ERR_INT_EN == 0x0010 &&
              CHANCTRL_DESC_ADDR_SNOOP_CONTROL == 0x0020 && CHANCTRL_CHANNEL_IN_USE == 0x0100 &&
              CHANCTRL_COMPL_DCA_EN == 0x0200 && CHANCTRL_PRIORITY_MASK == 0xf000);
static_assert(CHANCMD_START == 0x01 && CHANCMD_APPEND == 0x02 && CHANCMD_SUSPEND == 0x04 &&
              CHANCMD_ABORT == 0x08 && CHANCMD_RESUME == 0x10 && CHANCMD_RESET == 0x20);
static_assert(CHANSTS_COMPLETED_ADDR_MASK == ~0x3full && CHANSTS_SOFT_ERR == 0x10 &&
              CHANSTS_UNAFFILIATED_ERR == 0x08 && CHANSTS_STATUS_MASK == 0x7);
static_assert(CHANERR_ALL == (1u << 19) - 1);

TEST(Registers, GlobalResetValues)
{
    Rig r;
    EXPECT_EQ(r.dev.mmio_read(CHANCNT, 1), 4u);
    EXPECT_EQ(r.dev.mmio_read(XFERCAP, 1), 20u);
    EXPECT_EQ(r.dev.mmio_read(GENCTRL, 1), 0u);
    EXPECT_EQ(r.dev.mmio_read(INTRCTRL, 1), 0u);
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 0u);
    EXPECT_EQ(r.dev.mmio_read(CBVER, 1), 0x33u);
    EXPECT_EQ(r.dev.mmio_read(PERPORTOFFSET, 2), 0x80u);
    EXPECT_EQ(r.dev.mmio_read(INTRDELAY, 2), INTRDELAY_COALESCE_SUPPORT);
    EXPECT_EQ(r.dev.mmio_read(CS_STATUS, 2), 0u);
    EXPECT_EQ(r.dev.mmio_read(DMACAPABILITY, 4), 0u);
}

TEST(Registers, ConfigurationShowsInGlobalRegisters)
{
    Config c = rig_config();
    c.channels = 2;
    c.xfercap_log = 16;
    c.cbver = kCbVer32;
    Rig r(c);
    EXPECT_EQ(r.dev.mmio_read(CHANCNT, 1), 2u);
    EXPECT_EQ(r.dev.mmio_read(XFERCAP, 1), 16u);
    EXPECT_EQ(r.dev.mmio_read(CBVER, 1), 0x32u);
    // Channel 2 does not exist: its window reads as zero and ignores writes.
    r.wr(2, CHAINADDR, 0x1000, 8);
    EXPECT_EQ(r.rd(2, CHAINADDR, 8), 0u);
    EXPECT_EQ(r.rd(2, CHANSTS, 8), 0u);
}

TEST(Registers, ChannelResetValues)
{
    Rig r;
    for (unsigned ch = 0; ch < 4; ch++) {
        EXPECT_EQ(r.rd(ch, CHANCTRL, 2), 0u);
        EXPECT_EQ(r.rd(ch, DMA_COMP, 2), DMA_COMP_V2);
        EXPECT_EQ(r.rd(ch, CHANCMD, 1), 0u);
        EXPECT_EQ(r.rd(ch, DMACOUNT, 2), 0u);
        EXPECT_EQ(r.rd(ch, CHANSTS, 8), static_cast<uint64_t>(ChanState::Halted));
        EXPECT_EQ(r.rd(ch, CHAINADDR, 8), 0u);
        EXPECT_EQ(r.rd(ch, CHANCMP, 8), 0u);
        EXPECT_EQ(r.rd(ch, CHANERR, 4), 0u);
        EXPECT_EQ(r.rd(ch, CHANERR_MSK, 4), 0u);
    }
}

TEST(Registers, ReadOnlyRegistersIgnoreWrites)
{
    Rig r;
    r.dev.mmio_write(CHANCNT, 0x1f, 1);
    r.dev.mmio_write(XFERCAP, 0, 1);
    r.dev.mmio_write(CBVER, 0x10, 1);
    r.dev.mmio_write(DMACAPABILITY, 0xffffffff, 4);
    r.wr(0, CHANSTS, 0x12345678, 8);
    r.wr(0, DMA_COMP, 0xffff, 2);
    EXPECT_EQ(r.dev.mmio_read(CHANCNT, 1), 4u);
    EXPECT_EQ(r.dev.mmio_read(XFERCAP, 1), 20u);
    EXPECT_EQ(r.dev.mmio_read(CBVER, 1), 0x33u);
    EXPECT_EQ(r.dev.mmio_read(DMACAPABILITY, 4), 0u);
    EXPECT_EQ(r.rd(0, CHANSTS, 8), static_cast<uint64_t>(ChanState::Halted));
    EXPECT_EQ(r.rd(0, DMA_COMP, 2), DMA_COMP_V2);
}

TEST(Registers, WriteMasks)
{
    Rig r;
    r.dev.mmio_write(INTRCTRL, 0xff, 1);
    EXPECT_EQ(r.dev.mmio_read(INTRCTRL, 1), INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL);
    r.dev.mmio_write(INTRDELAY, 0xffff, 2);
    EXPECT_EQ(r.dev.mmio_read(INTRDELAY, 2), INTRDELAY_COALESCE_SUPPORT | INTRDELAY_MASK);
    r.dev.mmio_write(INTRDELAY, 0x0005, 2);
    EXPECT_EQ(r.dev.mmio_read(INTRDELAY, 2), INTRDELAY_COALESCE_SUPPORT | 5u);
    r.wr(1, CHANCTRL, 0xffff, 2);
    EXPECT_EQ(r.rd(1, CHANCTRL, 2), 0xf23cu); // INT_REARM is an action, not stored
    r.wr(1, CHANERR_MSK, 0xffffffff, 4);
    EXPECT_EQ(r.rd(1, CHANERR_MSK, 4), CHANERR_ALL);
}

TEST(Registers, ChanerrIsWriteOneToClear)
{
    Rig r;
    r.setup(0, 0x1000);
    r.set_chainaddr(0, 0x2001); // misaligned: NEXT_DESC_ALIGN_ERR when fetched
    r.issue(0, 1);
    r.run_until_idle();
    ASSERT_EQ(r.chanerr(0), CHANERR_NEXT_DESC_ALIGN_ERR);
    r.wr(0, CHANERR, 0, 4);
    EXPECT_EQ(r.chanerr(0), CHANERR_NEXT_DESC_ALIGN_ERR);
    r.wr(0, CHANERR, CHANERR_NEXT_DESC_ALIGN_ERR, 4);
    EXPECT_EQ(r.chanerr(0), 0u);
}

TEST(Registers, SplitAndWideAccesses)
{
    Rig r;
    // CHAINADDR as two 32-bit halves (as Linux writes it) and back as one 64-bit read.
    r.wr(0, CHAINADDR, 0x89abcdc0, 4);
    r.wr(0, CHAINADDR + 4, 0x01234567, 4);
    EXPECT_EQ(r.rd(0, CHAINADDR, 8), 0x0123456789abcdc0ull);
    EXPECT_EQ(r.rd(0, CHAINADDR + 4, 4), 0x01234567u);
    EXPECT_EQ(r.rd(0, CHAINADDR + 1, 2), 0xabcdu);
    // A byte write lands in its lane only.
    r.wr(0, CHAINADDR + 7, 0xff, 1);
    EXPECT_EQ(r.rd(0, CHAINADDR, 8), 0xff23456789abcdc0ull);
    // A 32-bit read at 0 spans CHANCNT, XFERCAP, GENCTRL and INTRCTRL.
    r.dev.mmio_write(GENCTRL, 1, 1);
    EXPECT_EQ(r.dev.mmio_read(0, 4), 0x00011404u);
    // A read reaching into bytes no register covers returns zeros there.
    EXPECT_EQ(r.dev.mmio_read(0x16, 2), 0u);
}

TEST(Registers, ResetCommandCompletesAtOnce)
{
    Rig r;
    r.set_chainaddr(0, 0x4000);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    // ioat_reset_sync() polls for the RESET bit to clear.
    EXPECT_EQ(r.rd(0, CHANCMD, 1) & CHANCMD_RESET, 0u);
    EXPECT_EQ(r.rd(0, CHAINADDR, 8), 0u);
    EXPECT_EQ(r.state(0), ChanState::Halted);
}

TEST(Registers, InvalidConfigurationsAreRejected)
{
    Config c = rig_config();
    c.channels = 0;
    EXPECT_NE(Ioat::check(c), nullptr);
    c.channels = kMaxChannels + 1;
    EXPECT_NE(Ioat::check(c), nullptr);
    c.channels = 4;
    c.xfercap_log = 0;
    EXPECT_NE(Ioat::check(c), nullptr);
    c.xfercap_log = 20;
    EXPECT_EQ(Ioat::check(c), nullptr);
}

} // namespace
} // namespace dmalab::ioat::testing

namespace dmalab::ioat::testing
{
namespace
{

TEST(Registers, ChannelResetKeepsErrorMaskDeviceResetDoesNot)
{
    Rig r;
    r.wr(0, CHANERR_MSK, CHANERR_XOR_P_OR_CRC_ERR, 4);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    EXPECT_EQ(r.rd(0, CHANERR_MSK, 4), CHANERR_XOR_P_OR_CRC_ERR);
    r.dev.reset();
    EXPECT_EQ(r.rd(0, CHANERR_MSK, 4), 0u);
}

} // namespace
} // namespace dmalab::ioat::testing
