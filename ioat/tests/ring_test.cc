// SPDX-License-Identifier: GPL-2.0-or-later
// Descriptor-chain walking driven by DMACOUNT, memcpy and null descriptors, completion
// write-back and channel start/suspend semantics.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

TEST(Ring, MemcpyChainCompletesAndWritesBack)
{
    Rig r;
    r.setup(0, kCompletion);
    const uint32_t sizes[] = {1, 4096, 3000, 65536};
    uint64_t off = 0;
    for (unsigned i = 0; i < 4; i++) {
        uint32_t ctl = i == 3 ? kCopyIrq : 0;
        r.put_desc(kRing + 64 * i, sizes[i], ctl, kSrc + off, kDst + off, kRing + 64 * (i + 1));
        off += sizes[i];
    }
    r.fill(kSrc, off, 3);
    r.set_chainaddr(0, kRing);
    r.issue(0, 4);
    // The register access moved nothing; the scheduled step does.
    EXPECT_EQ(r.dev.stats(0).bytes, 0u);
    EXPECT_TRUE(r.pending());
    r.run_until_idle();

    EXPECT_TRUE(r.same(kSrc, kDst, off));
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing + 64 * 3);
    EXPECT_EQ(r.rd(0, CDAR, 8), kRing + 64 * 3);
    // Only the descriptor asking for it wrote the completion area: address | DONE.
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), (kRing + 64 * 3) | 1u);
    EXPECT_EQ(r.dev.stats(0).descriptors, 4u);
    EXPECT_EQ(r.dev.stats(0).bytes, off);
    EXPECT_EQ(r.mem.outstanding, 0);
}

TEST(Ring, CompletionStatusIsActiveWhileMoreIsIssued)
{
    Rig r;
    r.setup(0, kCompletion);
    r.put_desc(kRing, 16, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, 16, 0, kSrc, kDst, kRing + 128);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    r.run_until_idle();
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 0u); // ACTIVE: more was issued
    EXPECT_EQ(r.completed_addr(0), kRing + 64);
}

TEST(Ring, WalksAcrossTheWrap)
{
    // A circular chain of 8 descriptors, as ioat_alloc_ring() links it, issued 6 at a time.
    Rig r;
    r.setup(0, kCompletion);
    constexpr unsigned kSlots = 8;
    for (unsigned i = 0; i < kSlots; i++)
        r.put_desc(kRing + 64 * i, 512, ctl::COMPL_WRITE, kSrc + 512 * i, kDst + 512 * i,
                   kRing + 64 * ((i + 1) % kSlots));
    r.set_chainaddr(0, kRing);
    uint16_t count = 0;
    for (unsigned round = 0; round < 4; round++) {
        r.fill(kSrc, 512 * kSlots, static_cast<uint8_t>(round * 31));
        count += 6;
        r.issue(0, count);
        r.run_until_idle();
        unsigned last = (count - 1) % kSlots;
        EXPECT_EQ(r.completed_addr(0), kRing + 64 * last) << "round " << round;
        for (unsigned k = 0; k < 6; k++) {
            unsigned slot = (count - 6 + k) % kSlots;
            EXPECT_TRUE(r.same(kSrc + 512 * slot, kDst + 512 * slot, 512))
                << "round " << round << " slot " << slot;
        }
    }
    EXPECT_EQ(r.dev.stats(0).descriptors, 24u);
}

TEST(Ring, DmacountWrapsAt16Bits)
{
    Config c = rig_config();
    c.step_descriptors = 4096;
    Rig r(c);
    r.setup(0, kCompletion);
    for (unsigned i = 0; i < 4; i++)
        r.put_desc(kRing + 64 * i, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0,
                   kRing + 64 * ((i + 1) % 4));
    r.set_chainaddr(0, kRing);
    r.issue(0, 0xfffe);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    r.issue(0, 0x0003); // five more, across 0xffff -> 0x0000
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0xfffeu + 5);
    EXPECT_EQ(r.completed_addr(0), kRing + 64 * ((0xfffe + 5 - 1) % 4));
}

TEST(Ring, NullDescriptorMovesNoData)
{
    Rig r;
    r.setup(0, kCompletion);
    r.fill(kSrc, 64, 9);
    // Linux's ioat_start_null_desc(): null, int_en, compl_write, size 1, addresses 0.
    r.put_desc(kRing, 1, ctl::NULL_DESC | kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.mem.get<uint64_t>(kDst), 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 1u);
    EXPECT_EQ(r.dev.stats(0).bytes, 0u);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
}

TEST(Ring, StartIsVisibleInsideTheDmacountWrite)
{
    // ioat_alloc_chan_resources() polls CHANSTS for ~20 us after the DMACOUNT write and wants
    // ACTIVE or DONE, long before any scheduled step could run.
    Rig r;
    r.setup(2, kCompletion);
    r.put_desc(kRing, 1, ctl::NULL_DESC | kCopyIrq, 0, 0, kRing + 64);
    r.set_chainaddr(2, kRing);
    ASSERT_EQ(r.state(2), ChanState::Halted);
    r.issue(2, 1);
    EXPECT_EQ(r.state(2), ChanState::Active);
    EXPECT_EQ(r.dev.stats(2).descriptors, 0u);
    r.run_until_idle();
    EXPECT_EQ(r.state(2), ChanState::Done);
}

TEST(Ring, SuspendThenRestartFromChainaddr)
{
    Rig r;
    r.setup(0, kCompletion);
    for (unsigned i = 0; i < 4; i++)
        r.put_desc(kRing + 64 * i, 8, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    r.run_until_idle();
    ASSERT_EQ(r.state(0), ChanState::Done);
    // ioat_quiesce(): the state leaves DONE inside the write.
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    // __ioat_restart_chan(): CHAINADDR at the first unfinished descriptor, DMACOUNT from 0.
    r.set_chainaddr(0, kRing + 128);
    r.issue(0, 2);
    EXPECT_EQ(r.state(0), ChanState::Active);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing + 64 * 3);
    EXPECT_EQ(r.dev.stats(0).descriptors, 4u);
}

TEST(Ring, SuspendedChannelRunsNothing)
{
    Rig r;
    r.setup(0, kCompletion);
    for (unsigned i = 0; i < 3; i++)
        r.put_desc(kRing + 64 * i, 8, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 3);
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    r.run_until_idle();
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u);
    r.wr(0, CHANCMD, CHANCMD_RESUME, 1);
    EXPECT_EQ(r.state(0), ChanState::Active);
    r.run_until_idle();
    EXPECT_EQ(r.dev.stats(0).descriptors, 3u);
}

TEST(Interrupts, OneMessagePerArmAndPendingDeliveredOnRearm)
{
    Rig r;
    r.setup(1, kCompletion); // arms channel 1
    for (unsigned i = 0; i < 3; i++)
        r.put_desc(kRing + 64 * i, 8, kCopyIrq, kSrc, kDst, kRing + 64 * (i + 1));
    r.set_chainaddr(1, kRing);
    r.issue(1, 1);
    r.run_until_idle();
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{1}); // MSI-X: vector = channel
    // Disarmed now: the next completion is held back ...
    r.issue(1, 2);
    r.run_until_idle();
    EXPECT_EQ(r.irq.raised.size(), 1u);
    // ... and sent when the cleanup tasklet re-arms (ioat_cleanup_event writes CHANCTRL).
    r.wr(1, CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_INT_EN | CHANCTRL_ERR_COMPLETION_EN, 2);
    EXPECT_EQ(r.irq.raised, (std::vector<unsigned>{1, 1}));
    // Re-arming with nothing pending sends nothing.
    r.wr(1, CHANCTRL, CHANCTRL_INT_REARM, 2);
    EXPECT_EQ(r.irq.raised.size(), 2u);
    EXPECT_EQ(r.dev.stats(1).interrupts, 2u);
}

TEST(Interrupts, OnlyForIntEnDescriptors)
{
    Rig r;
    r.setup(0, kCompletion);
    r.put_desc(kRing, 8, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_TRUE(r.irq.raised.empty());
}

TEST(Interrupts, MasterEnableAndSingleVectorMode)
{
    Rig r;
    r.setup(3, kCompletion);
    r.dev.mmio_write(INTRCTRL, 0, 1); // master disable
    r.put_desc(kRing, 8, kCopyIrq, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, 8, kCopyIrq, kSrc, kDst, kRing + 128);
    r.set_chainaddr(3, kRing);
    r.issue(3, 1);
    r.run_until_idle();
    EXPECT_TRUE(r.irq.raised.empty());
    // The event is still latched for software polling ATTNSTATUS.
    EXPECT_EQ(r.dev.mmio_read(INTRCTRL, 1) & INTRCTRL_INT_STATUS, INTRCTRL_INT_STATUS);
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 1u << 3);
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 0u); // reading clears
    // Master enabled without per-channel vectors: everything on vector 0.
    r.dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN, 1);
    r.wr(3, CHANCTRL, CHANCTRL_INT_REARM, 2);
    r.issue(3, 2);
    r.run_until_idle();
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    EXPECT_EQ(r.dev.mmio_read(ATTNSTATUS, 4), 1u << 3);
}

} // namespace
} // namespace dmalab::ioat::testing
