// SPDX-License-Identifier: GPL-2.0-or-later
// When descriptors complete: the model's completion-time seam (Config::bandwidth,
// Config::latency_ns) and how completion waits interact with channel commands.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// Runs the step the model asked for, at the time it asked for.
void step_at_requested_time(Rig& r)
{
    ASSERT_TRUE(r.sched.pending);
    r.sched.now = std::max(r.sched.now, r.sched.when);
    r.sched.pending = false;
    r.dev.run();
}

TEST(Timing, BandwidthDelaysCompletionNotData)
{
    Config c;
    c.bandwidth = 1000000000; // 1 GB/s: 1 MiB takes 1048576 ns
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 2 << 20, 4);
    r.put_desc(kRing, 1 << 20, kCopyIrq, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, 1 << 20, kCopyIrq, kSrc + (1 << 20), kDst + (1 << 20), kRing + 128);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);

    step_at_requested_time(r); // t = 0
    EXPECT_TRUE(r.same(kSrc, kDst, 1 << 20)) << "data moves when the descriptor starts";
    EXPECT_EQ(r.state(0), ChanState::Active);
    EXPECT_EQ(r.completed_addr(0), 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u);
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_EQ(r.mem.get<uint64_t>(kDst + (1 << 20)), 0u) << "one descriptor at a time";
    EXPECT_EQ(r.sched.when, 1048576u);

    r.sched.now = 1048575; // a step just before the due time changes nothing
    r.dev.run();
    EXPECT_EQ(r.completed_addr(0), 0u);
    EXPECT_TRUE(r.sched.pending);

    step_at_requested_time(r); // t = 1048576: first completes, second starts
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 0u);
    EXPECT_EQ(r.irq.raised.size(), 1u);
    EXPECT_TRUE(r.same(kSrc + (1 << 20), kDst + (1 << 20), 1 << 20));
    EXPECT_EQ(r.sched.when, 2u * 1048576);

    r.wr(0, CHANCTRL, CHANCTRL_INT_REARM, 2);
    step_at_requested_time(r);
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing + 64);
    EXPECT_EQ(r.irq.raised.size(), 2u);
    EXPECT_FALSE(r.sched.pending);
}

TEST(Timing, LatencyPerDescriptor)
{
    Config c;
    c.latency_ns = 5000;
    Rig r(c);
    r.setup(0, kCompletion);
    for (unsigned i = 0; i < 3; i++)
        r.put_desc(kRing + 64 * i, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0,
                   kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 3);
    std::vector<uint64_t> completed_at;
    uint64_t last = 0;
    while (r.sched.pending) {
        step_at_requested_time(r);
        if (r.completed_addr(0) != last) {
            last = r.completed_addr(0);
            completed_at.push_back(r.sched.now);
        }
    }
    EXPECT_EQ(completed_at, (std::vector<uint64_t>{5000, 10000, 15000}));
}

TEST(Timing, SuspendHoldsACompletionAndRestartRedoesIt)
{
    Config c;
    c.latency_ns = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 64, 8);
    r.put_desc(kRing, 64, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    r.sched.now = 5000;
    r.sched.pending = false;
    r.dev.run();
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    EXPECT_EQ(r.completed_addr(0), 0u);
    // Linux's restart: CHAINADDR at the first descriptor it has not seen complete.
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    while (r.sched.pending)
        step_at_requested_time(r);
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.dev.stats(0).descriptors, 1u);
}

TEST(Timing, ResetDropsTheDescriptorInFlight)
{
    Config c;
    c.latency_ns = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 64, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    r.sched.now = 5000;
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u);
    EXPECT_TRUE(r.irq.raised.empty());
}

} // namespace
} // namespace dmalab::ioat::testing
