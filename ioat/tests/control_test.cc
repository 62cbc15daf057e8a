// SPDX-License-Identifier: GPL-2.0-or-later
// CHANCMD and CHANSTS with RAID operations in flight: every state, suspend and resume, abort,
// append, and the recovery sequences Linux's ioatdma drives (drivers/dma/ioat/dma.c:
// ioat_eh() after a validation error, ioat_timer_event() -> ioat_reboot_chan() after a
// completion timeout).

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

constexpr uint64_t kP = 0x800000;
constexpr uint64_t kQ = 0x900000;
constexpr uint32_t kBlock = 64 << 10;

std::vector<uint64_t> srcs(unsigned n)
{
    std::vector<uint64_t> s;
    for (unsigned i = 0; i < n; i++)
        s.push_back(kSrc + i * kBlock);
    return s;
}

// 64 KiB at 1 GB/s in 4 KiB steps: each operation takes 65,536 ns of virtual time.
Config slow()
{
    Config c = raid_config();
    c.bandwidth = 1000000000;
    c.step_bytes = 4096;
    return c;
}

std::vector<uint8_t> xor_of(Rig& r, const std::vector<uint64_t>& s, size_t len)
{
    std::vector<uint8_t> p(len, 0);
    for (uint64_t a : s)
        for (size_t i = 0; i < len; i++)
            p[i] ^= r.mem.ram[a + i];
    return p;
}

TEST(Control, EveryChanstsState)
{
    Rig r(slow());
    EXPECT_EQ(r.state(0), ChanState::Halted) << "after power-on";
    r.setup(0, kCompletion);
    r.fill(kSrc, 6 * kBlock, 1);
    uint64_t end = r.put_xor(kRing, OP_XOR, kBlock, kDst, srcs(6), ctl::COMPL_WRITE);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    EXPECT_EQ(r.state(0), ChanState::Active) << "inside the DMACOUNT write";
    r.step();
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    r.wr(0, CHANCMD, CHANCMD_RESUME, 1);
    EXPECT_EQ(r.state(0), ChanState::Active);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.bytes(kDst, kBlock), xor_of(r, srcs(6), kBlock));
    r.put_desc(end, 64, uint32_t{0x42} << ctl::OP_SHIFT, 0, 0, end + 64);
    r.issue(0, 3);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted) << "after an error";
    EXPECT_EQ(r.chanerr(0), CHANERR_CONTROL_ERR);
}

TEST(Control, SuspendMidXorKeepsItsProgress)
{
    Rig r(slow());
    r.setup(0, kCompletion);
    r.fill(kSrc, 8 * kBlock, 4);
    r.put_xor(kRing, OP_XOR, kBlock, kDst, srcs(8), ctl::COMPL_WRITE | ctl::INT_EN);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    for (int i = 0; i < 5; i++)
        r.step();
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    ASSERT_EQ(r.state(0), ChanState::Suspended);
    EXPECT_FALSE(r.pending()) << "a suspended channel asks for no step";
    r.timers.now += 1000000;
    r.wr(0, CHANCMD, CHANCMD_RESUME, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.bytes(kDst, kBlock), xor_of(r, srcs(8), kBlock));
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
}

TEST(Control, AbortStopsAPqAndItNeverCompletes)
{
    Rig r(slow());
    r.setup(0, kCompletion);
    r.fill(kSrc, 4 * kBlock, 2);
    r.put_pq(kRing, OP_PQ, kBlock, kP, kQ, srcs(4), {1, 2, 4, 8}, ctl::COMPL_WRITE);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    r.step();
    r.wr(0, CHANCMD, CHANCMD_ABORT, 1);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    auto after_abort = r.mem.ram;
    r.run_until_idle();
    r.timers.now += 10000000;
    EXPECT_TRUE(r.mem.ram == after_abort) << "nothing moves or completes after ABORT";
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u);
    EXPECT_EQ(r.chanerr(0), 0u) << "ABORT is a command, not an error";
}

TEST(Control, AppendIsADoorbellNotAnError)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    r.wr(0, CHANCMD, CHANCMD_APPEND, 1);
    EXPECT_EQ(r.chanerr(0), 0u);
    EXPECT_EQ(r.state(0), ChanState::Halted) << "APPEND does not start a halted channel";
    r.put_null(kRing);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    ASSERT_EQ(r.state(0), ChanState::Done);
    r.wr(0, CHANCMD, CHANCMD_APPEND, 1);
    EXPECT_EQ(r.state(0), ChanState::Done) << "nothing more was issued";
    EXPECT_EQ(r.chanerr(0), 0u);
    // START stays a CB1 command this engine refuses.
    r.wr(0, CHANCMD, CHANCMD_START, 1);
    EXPECT_EQ(r.chanerr(0), CHANERR_CHANCMD_ERR);
}

// ioat_timer_event() -> ioat_reboot_chan(): ioat_abort_descs, then ioat_reset_hw()
// (ioat_quiesce: SUSPEND and wait for CHANSTS to leave ACTIVE/DONE; CHANERR read and written
// back; RESET, wait for the bit to clear), then ioat_restart_channel() (CHANCMP again,
// quiesce, CHAINADDR at the first descriptor not seen complete, DMACOUNT from 0).
TEST(Control, TimeoutRecoveryWithAPqHeldUp)
{
    Config c = raid_config();
    c.latency_ns = 500000000; // longer than the driver's 200 ms completion timeout
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 3 * 4096, 5);
    uint64_t second = r.put_pq(kRing, OP_PQ, 4096, kP, kQ, {kSrc, kSrc + 4096}, {1, 2},
                               ctl::COMPL_WRITE | ctl::INT_EN);
    r.put_null(second);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    r.timers.now = 400000000; // the driver's timer fired twice
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    r.wr(0, CHANERR, r.chanerr(0), 4);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    EXPECT_EQ(r.rd(0, CHANCMD, 1) & CHANCMD_RESET, 0u);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    r.wr(0, CHANCMP, kCompletion & 0xffffffff, 4);
    r.wr(0, CHANCMP + 4, kCompletion >> 32, 4);
    // The PQ was aborted by the driver; the ring goes on at the null descriptor.
    r.dev.timing().set_params({0, 0, 0, 0});
    r.set_chainaddr(0, second);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), second);
    EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Pq)].descriptors, 0u)
        << "the reset PQ never completed";
    // The reset kept the interrupt arm no event had used.
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
}

// On CB3.3 a PQ_VAL carries its own completion (no null descriptor: __ioat_prep_pq_lock).
// ioat_eh() completes the failed one itself, writes CHANERR back and restarts after it.
TEST(Control, ValidationErrorRecoveryWithoutANullDescriptor)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    r.fill(kSrc, 2 * 4096, 6);
    uint64_t second = r.put_pq(kRing, OP_PQ_VAL, 4096, kP, kQ, {kSrc, kSrc + 4096}, {1, 2},
                               ctl::COMPL_WRITE | ctl::INT_EN);
    uint64_t third = r.put_pq(second, OP_PQ, 4096, kP, kQ, {kSrc, kSrc + 4096}, {1, 2},
                              ctl::COMPL_WRITE | ctl::INT_EN);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    r.run_until_idle();
    ASSERT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_XOR_P_OR_CRC_ERR | CHANERR_XOR_Q_ERR);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0}) << "the error interrupt";
    r.rearm(0);
    r.wr(0, CHANERR, r.chanerr(0), 4);
    r.set_chainaddr(0, second);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), second);
    EXPECT_EQ(r.irq.raised.size(), 2u);
    (void)third;
}

} // namespace
} // namespace dmalab::ioat::testing
