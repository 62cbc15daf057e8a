// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans applied at the descriptor policy seam: each kind does what it says to the
// descriptor it selects, and nothing else.

#include "dmalab/fault_doorbell.h"
#include "dmalab/ioat/faults.h"
#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

struct FaultRig : Rig {
    explicit FaultRig(const char* plan, Config c = rig_config())
        : Rig(c), policy(dev.timing(), injector)
    {
        std::string err;
        auto p = faults::parse_plan(plan, fault_spec(c.channels), "ioat0", &err);
        EXPECT_TRUE(p) << err;
        if (p)
            injector.set_plan(*p);
        dev.set_policy(&policy);
        // As the C ABI connects them (ioat/src/capi.cc).
        bell.set_release_hook(
            [](void* o, unsigned rule) { return static_cast<Ioat*>(o)->release(rule); }, &dev);
    }
    ~FaultRig() { dev.set_policy(nullptr); }

    // n copies of `len` bytes on channel `ch`, descriptor i from kSrc + i*len to kDst + i*len.
    void copies(unsigned ch, unsigned n, uint32_t len, uint64_t ring = kRing, uint64_t off = 0)
    {
        setup(ch, kCompletion + 64 * ch);
        fill(kSrc + off, n * len, static_cast<uint8_t>(ch + 1));
        for (unsigned i = 0; i < n; i++)
            put_desc(ring + 64 * i, len, kCopyIrq, kSrc + off + i * len, kDst + off + i * len,
                     ring + 64 * (i + 1));
        set_chainaddr(ch, ring);
        issue(ch, static_cast<uint16_t>(n));
    }

    // Releases rule `rule` through the fault doorbell, as the guest does; whether the
    // doorbell then says the release ended a hold (STATUS.ENDED), as the guest checks.
    bool release(unsigned rule)
    {
        bell.write(faults::doorbell::SELECT, rule, 4);
        bell.write(faults::doorbell::COMMAND, faults::doorbell::kRelease, 4);
        return bell.read(faults::doorbell::STATUS, 4) & faults::doorbell::kEnded;
    }

    faults::Injector injector;
    FaultPolicy policy;
    faults::Doorbell bell{injector, log, "test-doorbell"};
};

TEST(Faults, DelayDataHoldsTheBytesOfTheNthDescriptor)
{
    Config c = rig_config();
    c.latency_ns = 1000;
    FaultRig r(R"({"rules": [{"kind": "delay-data", "delay": "1ms", "nth": 2}]})", c);
    r.copies(0, 3, 4096);
    while (r.pending() && r.timers.next()->second < 1000000)
        r.step();
    EXPECT_TRUE(r.same(kSrc, kDst, 4096));
    EXPECT_EQ(r.mem.ram[kDst + 4096], 0) << "the second copy's data waits";
    EXPECT_EQ(r.completed_addr(0), kRing);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 3 * 4096));
    EXPECT_EQ(r.completed_addr(0), kRing + 128);
    // The second started at t = 1000 (the first's latency); its bytes moved 1 ms later and
    // it completed with them, its own latency having passed. The third took its latency.
    EXPECT_EQ(r.timers.now, 1000u + 1000000 + 1000);
    EXPECT_EQ(r.injector.injected(0), 1u);
}

// Channels in the order their completions were written, and whether channel 0's data had
// landed when channel 1 completed.
std::pair<std::vector<unsigned>, bool> race_two_channels(const char* plan)
{
    Config c = rig_config();
    c.channels = 2;
    FaultRig r(plan, c);
    r.copies(0, 1, 256, kRing, 0);
    r.copies(1, 1, 256, kRing + 0x1000, 0x10000);
    std::vector<unsigned> order;
    bool landed_first = false;
    while (r.pending()) {
        r.step();
        for (unsigned ch = 0; ch < 2; ch++) {
            if (!r.completed_addr(ch) || std::find(order.begin(), order.end(), ch) != order.end())
                continue;
            order.push_back(ch);
            if (ch == 1)
                landed_first = r.same(kSrc, kDst, 256);
        }
    }
    EXPECT_TRUE(r.same(kSrc, kDst, 256));
    EXPECT_EQ(r.timers.now, 2000000u);
    return {order, landed_first};
}

TEST(Faults, DelayedCompletionIsOvertakenButItsDataHasMoved)
{
    auto [order, landed] = race_two_channels(
        R"({"rules": [{"kind": "delay-completion", "delay": "2ms", "channel": 0}]})");
    EXPECT_EQ(order, (std::vector<unsigned>{1, 0}));
    EXPECT_TRUE(landed);
}

TEST(Faults, ReorderHoldsTheWholeDescriptor)
{
    auto [order, landed] =
        race_two_channels(R"({"rules": [{"kind": "reorder", "delay": "2ms", "channel": 0}]})");
    EXPECT_EQ(order, (std::vector<unsigned>{1, 0}));
    EXPECT_FALSE(landed) << "channel 1 completed while channel 0's data had not moved";
}

// Channel 0's copy held by `plan` until released, channel 1's copy done meanwhile.
struct HeldRig : FaultRig {
    explicit HeldRig(const char* plan, bool sync_start = true) : FaultRig(plan, config(sync_start))
    {
        copies(0, 1, 4096, kRing, 0);
        copies(1, 1, 4096, kRing + 0x1000, 0x10000);
        while (pending() && !completed_addr(1))
            step();
    }
    static Config config(bool sync_start)
    {
        Config c = rig_config();
        c.channels = 2;
        c.sync_start = sync_start;
        return c;
    }
    bool channel0_done() { return completed_addr(0) == kRing && same(kSrc, kDst, 4096); }
};

constexpr const char* kHoldUntilRelease =
    R"({"rules": [{"kind": "reorder", "delay": "1s", "channel": 0, "until": "release"}]})";

TEST(Faults, ReleaseEndsTheHoldInsideTheDoorbellWrite)
{
    HeldRig r(kHoldUntilRelease);
    EXPECT_EQ(r.completed_addr(1), kRing + 0x1000);
    EXPECT_FALSE(r.same(kSrc, kDst, 1)) << "channel 0's data waits for the release";
    EXPECT_EQ(r.completed_addr(0), 0u);
    const uint64_t t = r.timers.now;
    EXPECT_TRUE(r.release(0)) << "STATUS.ENDED: the guest's release ended the hold";
    EXPECT_TRUE(r.channel0_done()) << "with sync-start, the release moves the data at once";
    EXPECT_EQ(r.timers.now, t);
    EXPECT_EQ(r.irq.raised, (std::vector<unsigned>{1, 0})) << "channel 1 first, then 0";
    EXPECT_FALSE(r.pending()) << "the timer set for the end of the hold is gone";
    EXPECT_EQ(r.injector.injected(0), 1u);
}

TEST(Faults, WithoutSyncStartAReleasedHoldGoesOnAtTheNextStep)
{
    HeldRig r(kHoldUntilRelease, false);
    const uint64_t t = r.timers.now;
    EXPECT_TRUE(r.release(0));
    EXPECT_FALSE(r.channel0_done());
    ASSERT_TRUE(r.pending());
    EXPECT_EQ(r.timers.next()->second, t);
    r.run_until_idle();
    EXPECT_TRUE(r.channel0_done());
    EXPECT_EQ(r.timers.now, t);
}

TEST(Faults, WithoutAReleaseTheHoldEndsAtItsDelay)
{
    HeldRig r(kHoldUntilRelease);
    r.run_until_idle();
    EXPECT_TRUE(r.channel0_done());
    EXPECT_EQ(r.timers.now, 1000000000u);
    EXPECT_FALSE(r.release(0)) << "the hold's own time ended it, not the guest";
}

TEST(Faults, AReleaseEndsNoHoldOfARuleWithoutUntilRelease)
{
    HeldRig r(R"({"rules": [{"kind": "reorder", "delay": "1s", "channel": 0}]})");
    EXPECT_FALSE(r.release(0)) << "a guest that counts on the release must see it did nothing";
    EXPECT_FALSE(r.channel0_done());
    r.run_until_idle();
    EXPECT_EQ(r.timers.now, 1000000000u);
}

TEST(Faults, AReleaseBeforeTheDescriptorLeavesNothingToHold)
{
    FaultRig r(R"({"rules": [{"kind": "delay-data", "delay": "1s", "until": "release"}]})");
    EXPECT_FALSE(r.release(0)) << "nothing was held: the guest must be able to tell";
    r.copies(0, 1, 4096);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 4096));
    EXPECT_EQ(r.timers.now, 0u) << "released before it was hit: no hold at all";
    EXPECT_EQ(r.injector.injected(0), 1u);
}

TEST(Faults, AReleaseEndsOnlyItsOwnRulesHold)
{
    FaultRig r(R"({"rules": [
      {"name": "data", "kind": "delay-data", "delay": "1ms", "until": "release"},
      {"name": "done", "kind": "delay-completion", "delay": "2ms", "until": "release"}]})");
    r.copies(0, 1, 4096);
    r.step();
    EXPECT_FALSE(r.release(1)) << "the descriptor answers to rule 0, the first that held it";
    EXPECT_FALSE(r.same(kSrc, kDst, 1));
    EXPECT_TRUE(r.release(0));
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 4096));
    EXPECT_EQ(r.timers.now, 2000000u) << "rule 1's hold was not released, so it ran whole";
}

TEST(Faults, ASuspendedChannelGoesOnAtResumeAfterARelease)
{
    HeldRig r(kHoldUntilRelease);
    r.wr(0, CHANCMD, CHANCMD_SUSPEND, 1);
    r.release(0);
    EXPECT_FALSE(r.channel0_done());
    EXPECT_EQ(r.state(0), ChanState::Suspended);
    r.wr(0, CHANCMD, CHANCMD_RESUME, 1);
    r.run_until_idle();
    EXPECT_TRUE(r.channel0_done());
    EXPECT_LT(r.timers.now, 1000000000u);
}

TEST(Faults, AHeldDescriptorMigratesAndIsReleasedOnTheDestination)
{
    HeldRig a(kHoldUntilRelease), b(kHoldUntilRelease);
    b.dev.reset();
    StateWriter model, policy;
    a.dev.save(model);
    a.policy.save(policy);
    StateReader rm(model.bytes), rp(policy.bytes);
    ASSERT_TRUE(b.dev.load(rm));
    b.policy.load(rp);
    EXPECT_TRUE(rp.finished());
    b.mem.ram = a.mem.ram;
    b.timers.now = a.timers.now;
    EXPECT_FALSE(b.channel0_done());
    b.release(0);
    EXPECT_TRUE(b.channel0_done());
}

TEST(Faults, FailHaltsWithTheChosenErrorAndMovesNothing)
{
    FaultRig r(R"({"rules": [{"kind": "fail", "chanerr": "0x100", "nth": 2}]})");
    r.copies(0, 3, 512);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_READ_DATA_ERR);
    EXPECT_TRUE(r.same(kSrc, kDst, 512));
    for (unsigned i = 512; i < 3 * 512; i++)
        ASSERT_EQ(r.mem.ram[kDst + i], 0) << i;
    EXPECT_EQ(r.completed_addr(0), kRing);
}

TEST(Faults, CorruptFlipsTheLastByteWrittenOnly)
{
    FaultRig r(
        R"({"rules": [{"kind": "corrupt", "xor": "0x5a", "range": ["0x400000", "0x400001"]}]})");
    r.copies(0, 2, 1000);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 999));
    EXPECT_EQ(r.mem.ram[kDst + 999], r.mem.ram[kSrc + 999] ^ 0x5a);
    EXPECT_TRUE(r.same(kSrc + 1000, kDst + 1000, 1000)) << "the range picked the first copy";
    EXPECT_EQ(r.mem.ram[kDst + 2000], 0);
    EXPECT_EQ(r.completed_addr(0), kRing + 64);
}

TEST(Faults, ShortenMovesAPrefixAndCompletesAsWhole)
{
    FaultRig r(R"({"rules": [{"kind": "shorten", "bytes": 100}]})");
    r.copies(0, 1, 4096);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 100));
    for (unsigned i = 100; i < 4096; i++)
        ASSERT_EQ(r.mem.ram[kDst + i], 0) << i;
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.state(0), ChanState::Done);
}

TEST(Faults, DropInterruptWritesTheStatusButRaisesNothing)
{
    FaultRig r(R"({"rules": [{"kind": "drop-interrupt", "nth": 1}]})");
    r.copies(0, 1, 256);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 256));
    EXPECT_EQ(r.completed_addr(0), kRing) << "the status is written for a poller to find";
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_EQ(r.dev.stats(0).interrupts, 0u);
    // The channel stays armed: the next completion interrupts as usual.
    r.put_desc(kRing + 64, 256, kCopyIrq, kSrc, kDst + 4096, kRing + 128);
    r.issue(0, 2);
    r.run_until_idle();
    EXPECT_EQ(r.irq.raised.size(), 1u);
    EXPECT_EQ(r.completed_addr(0), kRing + 64);
}

TEST(Faults, TheLargestDelaysAddUpWithoutOverflow)
{
    Config c = rig_config();
    c.latency_ns = kMaxDelayNs;
    c.jitter_ns = kMaxDelayNs;
    FaultRig r(R"({"rules": [
      {"kind": "delay-data", "delay": 1125899906842624},
      {"kind": "delay-completion", "delay": 1125899906842624},
      {"kind": "reorder", "delay": 1125899906842624}]})",
               c);
    r.copies(0, 1, 64);
    r.run_until_idle();
    EXPECT_FALSE(r.timers.over_limit);
    EXPECT_TRUE(r.same(kSrc, kDst, 64));
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_GE(r.timers.now, 3 * kMaxDelayNs);
    EXPECT_LT(r.timers.now, kTimeLimit);
}

TEST(Faults, NullDescriptorsMatchTheirOwnOp)
{
    FaultRig r(R"({"rules": [{"kind": "fail", "chanerr": 1, "op": "null"}]})");
    r.copies(0, 1, 64);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done) << "a copy is not a null descriptor";
    r.put_desc(kRing + 64, 8, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 128);
    r.issue(0, 2);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_SRC_ADDR_ERR);
}

TEST(Faults, ResetReplaysThePlan)
{
    FaultRig r(R"({"rules": [{"kind": "fail", "chanerr": 1, "nth": 1}]})");
    r.copies(0, 1, 64);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    r.dev.reset();
    EXPECT_EQ(r.injector.total(), 0u);
    r.copies(0, 1, 64);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted) << "after a reset the first descriptor is hit again";
}

TEST(Faults, PolicyStateMigrates)
{
    const char* plan =
        R"({"seed": 5, "rules": [{"kind": "corrupt", "xor": 1, "probability": 0.5}]})";
    FaultRig a(plan), b(plan);
    a.copies(0, 5, 64);
    a.run_until_idle();
    StateWriter w;
    a.policy.save(w);
    StateReader rd(w.bytes);
    b.policy.load(rd);
    EXPECT_TRUE(rd.finished());
    EXPECT_EQ(b.injector.total(), a.injector.total());
    faults::Occasion o{~0u, 0, 0, 0, {0, 0}, {0, 0}};
    std::vector<bool> fa, fb;
    for (int i = 0; i < 64; i++) {
        bool x = false, y = false;
        a.injector.decide(o, 0, [&](const faults::Rule&) { x = true; });
        b.injector.decide(o, 0, [&](const faults::Rule&) { y = true; });
        fa.push_back(x);
        fb.push_back(y);
    }
    EXPECT_EQ(fa, fb);
}

// A device-TLB invalidation (ats=on) a rule drops: armed from the guest, the next one only.
TEST(Faults, AnArmedDropInvalidationRuleTakesTheNextDeviceTlbInvalidationOnly)
{
    std::string err;
    auto p = faults::parse_plan(
        R"({"rules": [{"kind": "drop-invalidation", "op": "device-tlb", "count": 1,
                       "armed": false}]})",
        fault_spec(4), "ioat0", &err);
    ASSERT_TRUE(p) << err;
    faults::Injector injector;
    injector.set_plan(*p);
    EXPECT_FALSE(drops_invalidation(injector, 0x1000, 0x1fff, 0)); // not armed yet
    ASSERT_TRUE(injector.arm(0, true));
    EXPECT_TRUE(drops_invalidation(injector, 0x2000, 0x2fff, 1));
    EXPECT_FALSE(drops_invalidation(injector, 0x2000, 0x2fff, 2)); // count 1
    EXPECT_EQ(injector.total(), 1u);
}

TEST(Faults, ADropInvalidationRuleForADescriptorOpNeverTakesAnInvalidation)
{
    std::string err;
    auto p = faults::parse_plan(R"({"rules": [{"kind": "drop-invalidation", "op": "copy"}]})",
                                fault_spec(4), "ioat0", &err);
    ASSERT_TRUE(p) << err;
    faults::Injector injector;
    injector.set_plan(*p);
    EXPECT_FALSE(drops_invalidation(injector, 0, UINT64_MAX, 0));
}

} // namespace
} // namespace dmalab::ioat::testing
