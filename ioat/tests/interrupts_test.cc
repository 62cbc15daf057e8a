// SPDX-License-Identifier: GPL-2.0-or-later
// Interrupt styles (MSI-X per channel, one message, INTx level with ATTNSTATUS), what the
// interrupt counter counts, and what a channel reset keeps.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// Runs the `n`th null descriptor of a chain at `ring` (n from 1), as Linux appends them.
void one_null(Rig& r, unsigned ch, uint64_t ring, uint16_t n = 1)
{
    uint64_t at = ring + 64 * (n - 1);
    r.put_desc(at, 1, ctl::NULL_DESC | ctl::INT_EN | ctl::COMPL_WRITE, 0, 0, at + 64);
    if (n == 1)
        r.set_chainaddr(ch, ring);
    r.issue(ch, n);
    r.run_until_idle();
}

// What ioat_dma_setup_interrupts() leaves for the INTx and MSI styles: master enable, no
// per-channel vectors.
void shared_vector(Rig& r, unsigned ch)
{
    r.setup(ch, kCompletion + 64 * ch);
    r.dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN, 1);
}

TEST(Interrupts, IntxLevelFollowsAttnstatus)
{
    Rig r;
    r.irq.messages = false;
    r.irq.intx = true;
    shared_vector(r, 1);
    one_null(r, 1, kRing);
    EXPECT_TRUE(r.irq.level);
    EXPECT_EQ(r.dev.stats(1).interrupts, 1u);
    // What ioat_dma_do_interrupt reads: INTRCTRL shows the status, ATTNSTATUS the channel.
    EXPECT_EQ(r.dev.mmio_read(INTRCTRL, 1),
              INTRCTRL_MASTER_INT_EN | INTRCTRL_INT_STATUS | INTRCTRL_INT);
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 1u << 1);
    EXPECT_FALSE(r.irq.level) << "reading ATTNSTATUS clears it and lowers the line";
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 0u);
    EXPECT_EQ(r.dev.mmio_read(INTRCTRL, 1), INTRCTRL_MASTER_INT_EN);
    // The next completion raises it again once re-armed.
    r.rearm(1);
    one_null(r, 1, kRing, 2);
    EXPECT_TRUE(r.irq.level);
    EXPECT_EQ(r.irq.rises, 2u);
    EXPECT_EQ(r.dev.stats(1).interrupts, 2u);
}

TEST(Interrupts, MasterDisableHoldsTheLineLowAndCountsNothing)
{
    Rig r;
    r.irq.messages = false;
    r.irq.intx = true;
    shared_vector(r, 0);
    r.dev.mmio_write(INTRCTRL, 0, 1);
    one_null(r, 0, kRing);
    EXPECT_FALSE(r.irq.level);
    EXPECT_EQ(r.dev.stats(0).interrupts, 0u);
    // Enabling with attention pending raises it.
    r.dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN, 1);
    EXPECT_TRUE(r.irq.level);
}

// Per-channel MSI-X vectors do not need the master enable (as on CBDMA hardware, which a
// driver that sets only MSIX_VECTOR_CONTROL relies on); the shared interrupt still does.
TEST(Interrupts, PerChannelVectorsAreNotGatedByTheMasterEnable)
{
    Rig r;
    r.irq.intx = true;
    r.setup(3, kCompletion);
    r.dev.mmio_write(INTRCTRL, INTRCTRL_MSIX_VECTOR_CONTROL, 1);
    one_null(r, 3, kRing);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{3});
    EXPECT_EQ(r.dev.stats(3).interrupts, 1u);
    EXPECT_FALSE(r.irq.level) << "INTx stays gated by the master enable";
    // Neither bit: nothing is sent, the event is only recorded.
    Rig q;
    q.setup(3, kCompletion);
    q.dev.mmio_write(INTRCTRL, 0, 1);
    one_null(q, 3, kRing);
    EXPECT_TRUE(q.irq.raised.empty());
    EXPECT_EQ(q.dev.mmio_read(ATTNSTATUS, 4), 1u << 3);
}

TEST(Interrupts, SingleMessageUsesVectorZero)
{
    Rig r;
    shared_vector(r, 2);
    one_null(r, 2, kRing);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 1u << 2);
    EXPECT_EQ(r.dev.stats(2).interrupts, 1u);
}

TEST(Interrupts, MaskedOrDisabledMessagesAreNotCounted)
{
    Rig r;
    r.irq.messages = false; // MSI-X vector masked, or no message interrupts enabled
    r.setup(0, kCompletion);
    one_null(r, 0, kRing);
    EXPECT_EQ(r.dev.stats(0).descriptors, 1u);
    EXPECT_EQ(r.dev.stats(0).interrupts, 0u);
}

TEST(Interrupts, ChannelResetKeepsWhatLinuxProgrammedOnce)
{
    // ioat_alloc_chan_resources writes CHANCTRL (with INT_REARM) once; the resets of
    // ioat_eh and ioat_timer_event do not write it again (drivers/dma/ioat/dma.c).
    Rig r;
    r.setup(0, kCompletion);
    r.wr(0, CHANERR_MSK, CHANERR_XOR_P_OR_CRC_ERR, 4);
    r.wr(0, DCACTRL, 0x1ffff, 4);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    EXPECT_EQ(r.rd(0, CHANCTRL, 2), uint64_t{CHANCTRL_ERR_INT_EN | CHANCTRL_ANY_ERR_ABORT_EN |
                                             CHANCTRL_ERR_COMPLETION_EN});
    EXPECT_EQ(r.rd(0, CHANERR_MSK, 4), CHANERR_XOR_P_OR_CRC_ERR);
    EXPECT_EQ(r.rd(0, DCACTRL, 4), 0x1ffffu);
    EXPECT_EQ(r.state(0), ChanState::Halted) << "ioat_restart_channel waits for !ACTIVE/IDLE";
    one_null(r, 0, kRing);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0}) << "still armed: the interrupt arrives";
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 1u);
}

TEST(Interrupts, AttnstatusNamesOnlyChannelsThatExist)
{
    for (unsigned n : {1u, 2u, 3u}) {
        SCOPED_TRACE(::testing::Message() << n << " channels");
        Config c = rig_config();
        c.channels = n;
        Rig r(c);
        r.dev.mmio_write(ATTNSTATUS, ~0ull, 4); // RC: writes do nothing
        EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 0u);
        // Every channel there is completes a descriptor with its interrupt enabled, through
        // the shared vector: each asks for attention.
        for (unsigned ch = 0; ch < n; ch++) {
            shared_vector(r, ch);
            one_null(r, ch, kRing + 0x1000 * ch);
            EXPECT_EQ(r.dev.stats(ch).descriptors, 1u);
        }
        EXPECT_EQ(r.irq.raised, std::vector<unsigned>(n, 0));
        r.dev.mmio_write(ATTNSTATUS, ~0ull, 4); // still nothing, with bits set
        const uint32_t exist = (1u << n) - 1;
        uint32_t attn = static_cast<uint32_t>(r.dev.mmio_read(ATTNSTATUS, 4));
        EXPECT_EQ(attn & exist, exist) << "a channel that completed is not named";
        EXPECT_EQ(attn & ~exist, 0u) << "a bit for a channel that does not exist";
        EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 0u) << "the read cleared it";
    }
}

// INTRDELAY, as Linux programs it (intr_coalesce microseconds per pending descriptor,
// __ioat_cleanup in drivers/dma/ioat/dma.c): an interrupt waits that long in virtual time,
// and completions meanwhile go with it.
TEST(Interrupts, IntrdelayHoldsAnInterruptAndCoalesces)
{
    Config c = rig_config();
    c.latency_ns = 4000; // one completion every 4 us
    Rig r(c);
    r.setup(0, kCompletion);
    r.dev.mmio_write(INTRDELAY, 6, 2);
    EXPECT_EQ(r.dev.mmio_read(INTRDELAY, 2), 6u | INTRDELAY_COALESCE_SUPPORT);
    for (unsigned i = 0; i < 3; i++)
        r.put_desc(kRing + 64 * i, 1, ctl::NULL_DESC | ctl::INT_EN | ctl::COMPL_WRITE, 0, 0,
                   kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 3);
    std::vector<uint64_t> sent_at;
    while (r.pending()) {
        r.step();
        if (r.irq.raised.size() > sent_at.size())
            sent_at.push_back(r.timers.now);
    }
    EXPECT_EQ(r.dev.stats(0).descriptors, 3u);
    // Completions at 4, 8 and 12 us; the first holds the interrupt until 10 us, the second
    // joins it, the third finds the channel disarmed until the driver re-arms.
    EXPECT_EQ(sent_at, std::vector<uint64_t>{10000});
    EXPECT_EQ(r.dev.stats(0).interrupts, 1u);
    // Re-armed: the pending event is held again for the delay, not sent at once.
    r.rearm(0);
    EXPECT_EQ(r.irq.raised.size(), 1u);
    ASSERT_TRUE(r.pending());
    r.step();
    EXPECT_EQ(r.timers.now, 18000u);
    EXPECT_EQ(r.irq.raised.size(), 2u);
}

TEST(Interrupts, IntrdelayZeroSendsAtOnceAndResetDropsAHeldOne)
{
    Rig r;
    r.setup(0, kCompletion);
    r.dev.mmio_write(INTRDELAY, 0x3fff, 2); // the most Linux writes: 16,383 us
    one_null(r, 0, kRing);
    EXPECT_EQ(r.timers.now, 16383000u) << "the interrupt came 16.383 ms later";
    EXPECT_EQ(r.irq.raised.size(), 1u);
    r.rearm(0);
    r.dev.mmio_write(INTRDELAY, 0, 2);
    one_null(r, 0, kRing, 2);
    EXPECT_EQ(r.timers.now, 16383000u) << "no delay: sent inside the step";
    EXPECT_EQ(r.irq.raised.size(), 2u);
    // Held, then the channel is reset: the held interrupt is gone with the channel's state.
    r.rearm(0);
    r.dev.mmio_write(INTRDELAY, 100, 2);
    r.put_desc(kRing + 128, 1, ctl::NULL_DESC | ctl::INT_EN | ctl::COMPL_WRITE, 0, 0, kRing + 192);
    r.issue(0, 3);
    r.step();
    EXPECT_EQ(r.dev.stats(0).descriptors, 3u);
    ASSERT_TRUE(r.pending());
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    EXPECT_FALSE(r.pending());
    EXPECT_EQ(r.irq.raised.size(), 2u);
}

} // namespace
} // namespace dmalab::ioat::testing
