// SPDX-License-Identifier: GPL-2.0-or-later
// Commands on the modelled clock: CMDSTS.ACTIVE for command_ns (plus seeded jitter), the
// effect and the interrupt at the end, and a CMD write while ACTIVE refused.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

Config slow(uint64_t ns, uint64_t jitter = 0, uint64_t seed = 0)
{
    Config c;
    c.command_ns = ns;
    c.command_jitter_ns = jitter;
    c.seed = seed;
    return c;
}

TEST(Timing, ActiveUntilTheCommandsTimeHasPassed)
{
    Rig r(slow(5000));
    r.configure();
    r.timers.now = 1000;
    r.issue(Cmd::EnableDevice);
    EXPECT_TRUE(r.active());
    EXPECT_EQ(r.rd(kCmdsts), CMDSTS_ACTIVE) << "ERR and RESULT are 0 while ACTIVE";
    EXPECT_EQ(r.state(), DeviceState::Disabled) << "the effect comes with the completion";
    EXPECT_TRUE(r.irq.raised.empty());
    ASSERT_TRUE(r.timers.next().has_value());
    EXPECT_EQ(r.timers.next()->second, 6000u);
    r.step();
    EXPECT_FALSE(r.active());
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD);
    EXPECT_EQ(r.timers.now, 6000u);
}

TEST(Timing, ProbeResetIsPolled)
{
    // idxd_device_init_reset spins on ACTIVE with no interrupt asked for.
    Rig r(slow(2000));
    r.issue(Cmd::ResetDevice, 0, false);
    unsigned polls = 0;
    while (r.active() && polls < 10) {
        polls++;
        r.step();
    }
    EXPECT_EQ(polls, 1u);
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::Success);
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_EQ(r.rd(kIntcause), 0u);
}

TEST(Timing, CmdWrittenWhileActiveIsRefused)
{
    Rig r(slow(1000));
    r.configure();
    r.issue(Cmd::EnableDevice);
    r.issue(Cmd::DisableDevice);
    r.wr(kCmd, 0x1234, 2);
    EXPECT_EQ(r.dev.counters().refused_writes, 2u);
    EXPECT_EQ(CMD_CODE.get(r.rd(kCmd)), static_cast<uint64_t>(Cmd::EnableDevice));
    EXPECT_EQ(err_of(r.wait()), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_EQ(r.dev.counters().commands, 1u);
    EXPECT_FALSE(r.pending());
}

TEST(Timing, AtOnceWhenTheTimeIsZero)
{
    Rig r;
    r.configure();
    r.issue(Cmd::EnableDevice);
    EXPECT_FALSE(r.active());
    EXPECT_FALSE(r.pending()) << "no timer for an instant command";
    EXPECT_EQ(r.state(), DeviceState::Enabled);
}

TEST(Timing, JitterIsBoundedAndReplaysFromItsSeed)
{
    auto durations = [](uint64_t seed) {
        Rig r(slow(1000, 500, seed));
        std::vector<uint64_t> out;
        for (unsigned i = 0; i < 20; i++) {
            uint64_t start = r.timers.now;
            r.run(Cmd::DrainAll);
            out.push_back(r.timers.now - start);
        }
        return out;
    };
    auto a = durations(7);
    for (uint64_t d : a) {
        EXPECT_GE(d, 1000u);
        EXPECT_LE(d, 1500u);
    }
    EXPECT_EQ(a, durations(7));
    EXPECT_NE(a, durations(8));
}

TEST(Timing, ResetCancelsTheCommandInProgress)
{
    Rig r(slow(1000));
    r.configure();
    r.issue(Cmd::EnableDevice);
    r.dev.reset();
    EXPECT_FALSE(r.active());
    EXPECT_FALSE(r.pending());
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    r.dev.timer(0); // a late expiry of the cancelled timer does nothing
    EXPECT_EQ(r.dev.counters().commands, 0u);
    EXPECT_EQ(r.rd(kCmdsts), 0u);
}

} // namespace
} // namespace dmalab::dsa::testing
