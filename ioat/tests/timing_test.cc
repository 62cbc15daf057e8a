// SPDX-License-Identifier: GPL-2.0-or-later
// When data moves and descriptors complete: the default policy (latency, bandwidth, jitter),
// the data phase spread over the modelled duration, and how waits interact with commands.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// Runs the channel's timer at the time it asked for.
void step_at_requested_time(Rig& r)
{
    ASSERT_TRUE(r.pending());
    r.step();
}

TEST(Timing, DataMovesOverTheModelledDurationAndCompletionWaits)
{
    Config c = rig_config();
    c.bandwidth = 1000000000; // 1 GB/s: 1 MiB takes 1048576 ns
    c.step_bytes = 256u << 10;
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 2 << 20, 4);
    r.put_desc(kRing, 1 << 20, kCopyIrq, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, 1 << 20, kCopyIrq, kSrc + (1 << 20), kDst + (1 << 20), kRing + 128);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);

    step_at_requested_time(r); // t = 0: started, nothing has had time to move
    EXPECT_EQ(r.mem.get<uint64_t>(kDst), 0u);
    EXPECT_EQ(r.timers.next()->second, 262144u) << "the first 256 KiB piece is due then";
    std::vector<std::pair<uint64_t, uint64_t>> progress; // (time, bytes moved)
    auto moved = [&] {
        uint64_t n = 0;
        while (n < (1u << 20) && r.mem.ram[kDst + n] == r.mem.ram[kSrc + n])
            n++;
        return n;
    };
    while (r.completed_addr(0) == 0) {
        step_at_requested_time(r);
        progress.emplace_back(r.timers.now, moved());
    }
    // Pieces of step_bytes land at the times the bandwidth allows, then the completion.
    std::vector<std::pair<uint64_t, uint64_t>> want = {
        {262144, 262144}, {524288, 524288}, {786432, 786432}, {1048576, 1048576}};
    EXPECT_EQ(progress, want);
    EXPECT_TRUE(r.same(kSrc, kDst, 1 << 20));
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 0u);
    EXPECT_EQ(r.irq.raised.size(), 1u);
    EXPECT_EQ(r.mem.get<uint64_t>(kDst + (1 << 20)), 0u) << "one descriptor at a time";

    r.rearm(0);
    r.run_until_idle();
    EXPECT_EQ(r.timers.now, 2u * 1048576);
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing + 64);
    EXPECT_EQ(r.irq.raised.size(), 2u);
}

struct Decisions : Observer {
    void decided(const DescriptorInfo&, const Decision& d) override { plans.push_back(d); }
    void completed(unsigned, uint64_t, uint64_t, OpKind) override { completed_at.push_back(*now); }
    std::vector<Decision> plans;
    std::vector<uint64_t> completed_at;
    const uint64_t* now = nullptr;
};

// Modelled time is the model's: with every timer firing 30 us late, a ring of paced
// descriptors submitted at once is still modelled back to back, descriptor i from
// i * (transfer + latency) to (i + 1) * (transfer + latency). Before, each started when the
// late step fetched it, and the lateness added up along the ring.
TEST(Timing, LateTimersDoNotAddUpAlongARing)
{
    constexpr unsigned kDescs = 16;
    constexpr uint64_t kLate = 30000, kLen = 4096, kLatency = 1000;
    Config c = rig_config();
    c.bandwidth = 100000000; // 100 MB/s: 4 KiB in 40960 ns
    c.latency_ns = kLatency;
    c.sync_start = false;
    Decisions seen;
    Rig r(c, 16u << 20, &seen);
    seen.now = &r.timers.now;
    r.setup(0, kCompletion);
    r.fill(kSrc, kDescs * kLen, 3);
    for (unsigned i = 0; i < kDescs; i++)
        r.put_desc(kRing + 64 * i, kLen, kCopyIrq, kSrc + i * kLen, kDst + i * kLen,
                   kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, kDescs);
    for (int guard = 0; guard < 100000 && r.pending(); guard++) {
        auto next = r.timers.next();
        r.timers.pending.erase(next->first);
        r.timers.now = std::max(r.timers.now, next->second + kLate);
        r.dev.timer(next->first);
        r.rearm(0);
    }
    EXPECT_TRUE(r.same(kSrc, kDst, kDescs * kLen));
    ASSERT_EQ(seen.plans.size(), kDescs);
    const uint64_t each = transfer_ns(kLen, c.bandwidth) + kLatency;
    for (unsigned i = 0; i < kDescs; i++) {
        EXPECT_EQ(seen.plans[i].data_at, i * each) << "descriptor " << i;
        EXPECT_EQ(seen.plans[i].done_at, (i + 1) * each) << "descriptor " << i;
    }
    // The host's lateness shows in when completions were seen, and only once per step: the
    // ring is done within one late timer of its modelled end.
    ASSERT_EQ(seen.completed_at.size(), kDescs);
    EXPECT_GE(seen.completed_at.back(), kDescs * each);
    EXPECT_LE(seen.completed_at.back(), kDescs * each + 2 * kLate);
}

TEST(Timing, AStepBeforeItsTimeChangesNothing)
{
    Config c = rig_config();
    c.latency_ns = 5000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.timers.now = 4999;
    r.dev.timer(0); // a spurious early expiry
    EXPECT_EQ(r.completed_addr(0), 0u);
    ASSERT_TRUE(r.pending());
    EXPECT_EQ(r.timers.next()->second, 5000u);
    step_at_requested_time(r);
    EXPECT_EQ(r.completed_addr(0), kRing);
}

TEST(Timing, LatencyPerDescriptor)
{
    Config c = rig_config();
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
    while (r.pending()) {
        step_at_requested_time(r);
        if (r.completed_addr(0) != last) {
            last = r.completed_addr(0);
            completed_at.push_back(r.timers.now);
        }
    }
    EXPECT_EQ(completed_at, (std::vector<uint64_t>{5000, 10000, 15000}));
}

// What the translations of a descriptor's data cost upstream (an IOMMU's walks, reported
// by the memory's take_cost) delays that descriptor's completion, not the next one's.
TEST(Timing, UpstreamTranslationCostDelaysCompletion)
{
    Config c = rig_config();
    c.latency_ns = 5000;
    Rig r(c);
    r.mem.map_limit = 4096;   // a mapping per page, as behind an IOMMU
    r.mem.cost_per_map = 300; // each one a walk of 300 ns
    r.setup(0, kCompletion);
    r.fill(kSrc, 4 * 4096, 3);
    r.put_desc(kRing, 4 * 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 128);
    r.set_chainaddr(0, kRing);
    r.issue(0, 2);
    std::vector<uint64_t> completed_at;
    uint64_t last = 0;
    while (r.pending()) {
        step_at_requested_time(r);
        if (r.completed_addr(0) != last) {
            last = r.completed_addr(0);
            completed_at.push_back(r.timers.now);
        }
    }
    // 4 pages each way: 8 mappings, 2400 ns on top of the latency; the null descriptor
    // moves nothing and costs nothing more.
    EXPECT_EQ(completed_at, (std::vector<uint64_t>{5000 + 2400, 5000 + 2400 + 5000}));
    EXPECT_TRUE(r.same(kSrc, kDst, 4 * 4096));
}

TEST(Timing, JitterIsSeededAndReplays)
{
    auto run = [](uint64_t seed) {
        Config c = rig_config();
        c.latency_ns = 1000;
        c.jitter_ns = 100000;
        c.seed = seed;
        Rig r(c);
        r.setup(0, kCompletion);
        for (unsigned i = 0; i < 8; i++)
            r.put_desc(kRing + 64 * i, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0,
                       kRing + 64 * (i + 1));
        r.set_chainaddr(0, kRing);
        r.issue(0, 8);
        std::vector<uint64_t> at;
        uint64_t last = 0;
        while (r.pending()) {
            r.step();
            if (r.completed_addr(0) != last) {
                last = r.completed_addr(0);
                at.push_back(r.timers.now);
            }
        }
        return at;
    };
    auto a = run(1), b = run(1), c = run(2);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    ASSERT_EQ(a.size(), 8u);
    uint64_t prev = 0;
    for (uint64_t t : a) {
        EXPECT_GE(t - prev, 1000u);
        EXPECT_LE(t - prev, 101000u);
        prev = t;
    }
}

TEST(Timing, SuspendHoldsACompletionAndRestartRedoesIt)
{
    Config c = rig_config();
    c.latency_ns = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 64, 8);
    r.put_desc(kRing, 64, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    EXPECT_FALSE(r.pending()) << "a suspended channel has nothing to wait for";
    r.timers.now = 5000;
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    EXPECT_EQ(r.completed_addr(0), 0u);
    // Linux's restart: CHAINADDR at the first descriptor it has not seen complete.
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.dev.stats(0).descriptors, 1u);
}

TEST(Timing, ResumeFinishesTheDescriptorInProgress)
{
    Config c = rig_config();
    c.latency_ns = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    r.timers.now = 5000;
    r.wr(0, CHANCMD, CHANCMD_RESUME, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing);
}

TEST(Timing, ResetDropsTheDescriptorInProgress)
{
    Config c = rig_config();
    c.latency_ns = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 64, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    step_at_requested_time(r);
    r.wr(0, CHANCMD, CHANCMD_RESET, 1);
    EXPECT_FALSE(r.pending()) << "a reset cancels the channel's timer";
    r.timers.now = 5000;
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u);
    EXPECT_TRUE(r.irq.raised.empty());
}

TEST(Timing, HugeLatencyAndTinyBandwidthSaturate)
{
    Config c = rig_config();
    c.latency_ns = kMaxDelayNs;
    c.jitter_ns = kMaxDelayNs;
    c.bandwidth = 1; // one byte per second: 1 MiB takes 12 days
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 1 << 20, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.timers.now = kTimeLimit - 10; // late in virtual time, too
    unsigned steps = r.run_until_idle(100);
    EXPECT_LT(steps, 100u) << "at the end of time the channel stalls instead of spinning";
    EXPECT_FALSE(r.timers.over_limit);
    EXPECT_LE(r.timers.now, kTimeLimit);
}

TEST(Timing, ConfigRejectsDelaysThatCouldOverflow)
{
    Config c = rig_config();
    c.latency_ns = kMaxDelayNs + 1;
    EXPECT_NE(Ioat::check(c), nullptr);
    c.latency_ns = 0;
    c.jitter_ns = ~0ull;
    EXPECT_NE(Ioat::check(c), nullptr);
}

} // namespace
} // namespace dmalab::ioat::testing

namespace dmalab::ioat::testing
{
namespace
{

TEST(SyncStart, TheFirstStepRunsInsideTheDoorbellWrite)
{
    Config c = rig_config();
    c.sync_start = true;
    c.step_descriptors = 4;
    Rig r(c);
    r.setup(0, kCompletion);
    r.fill(kSrc, 6 * 64, 2);
    for (unsigned i = 0; i < 6; i++)
        r.put_desc(kRing + 64 * i, 64, kCopyIrq, kSrc + 64 * i, kDst + 64 * i,
                   kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 6);
    // Four descriptors (the step budget) ran inside the write; the rest waits for the timer,
    // strictly later.
    EXPECT_EQ(r.dev.stats(0).descriptors, 4u);
    EXPECT_TRUE(r.same(kSrc, kDst, 4 * 64));
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    ASSERT_TRUE(r.pending());
    EXPECT_GT(r.timers.next()->second, r.timers.now);
    r.rearm(0);
    r.run_until_idle();
    EXPECT_EQ(r.dev.stats(0).descriptors, 6u);
    EXPECT_EQ(r.state(0), ChanState::Done);
}

TEST(SyncStart, CompletionStillWaitsForThePolicy)
{
    Config c = rig_config();
    c.sync_start = true;
    c.latency_ns = 7000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    EXPECT_EQ(r.state(0), ChanState::Active);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u);
    ASSERT_TRUE(r.pending());
    EXPECT_EQ(r.timers.next()->second, 7000u);
    r.run_until_idle();
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | 1u);
}

} // namespace
} // namespace dmalab::ioat::testing
