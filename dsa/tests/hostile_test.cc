// SPDX-License-Identifier: GPL-2.0-or-later
// A guest that writes anything anywhere: every access size at every offset of BAR 0's first
// 4 KiB (the fixed registers and every table) with seeded random values, commands included.
// The model never crashes, never arms a timer past its limit, and keeps its invariants; a
// configuration it has enabled stays as it was.

#include "dmalab/prng.h"
#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint32_t kSpan = 0x1000;

Config hostile_config()
{
    Config c;
    c.int_handles = true;
    c.command_ns = 50;
    return c;
}

TEST(Hostile, AnyWriteAnywhereKeepsTheInvariants)
{
    for (bool up : {false, true}) {
        Rig r(hostile_config());
        r.dev.set_pasid(true, true);
        ASSERT_LE(r.layout.end, kSpan) << "the tables are inside the span";
        if (up)
            r.bring_up();
        Prng prng(up ? 1 : 2);
        unsigned writes = 0;
        for (unsigned size : {1u, 2u, 4u, 8u})
            for (uint32_t at = 0; at < kSpan; at++) {
                r.wr(at, prng.next(), size);
                (void)r.rd(at, size);
                if (++writes % 8 == 0 && r.pending())
                    r.step();
                const char* why = r.dev.invariant_violation();
                ASSERT_EQ(why, nullptr)
                    << why << " after a " << size << "-byte write at 0x" << std::hex << at;
            }
        // Then random accesses, a quarter of them random commands; now and then idxd brings
        // the device up again, so that they also meet an enabled configuration.
        for (unsigned n = 0; n < 20000; n++) {
            if (n % 500 == 0) {
                r.wait();
                ASSERT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
                r.bring_up();
            }
            const unsigned size = 1u << prng.upto(3);
            const uint32_t at =
                prng.upto(3) == 0 ? kCmd : static_cast<uint32_t>(prng.upto(kSpan - 1));
            r.wr(at, prng.next(), size);
            if (prng.upto(3) == 0 && r.pending())
                r.step();
            const char* why = r.dev.invariant_violation();
            ASSERT_EQ(why, nullptr)
                << why << " after a " << size << "-byte write at 0x" << std::hex << at;
        }
        r.run_until_idle();
        EXPECT_FALSE(r.timers.over_limit);
        EXPECT_GT(r.dev.counters().commands, 1000u) << "random CMD writes ran commands";
        // Accesses the bus would never make: refused and logged.
        const size_t logged = r.log.guest_errors.size();
        r.wr(DMALAB_DSA_BAR0_SIZE - 4, 1, 8);
        r.wr(0xffffffffu, 1, 4);
        r.wr(0, 1, 3);
        EXPECT_EQ(r.rd(0x10, 16), 0u);
        EXPECT_EQ(r.log.guest_errors.size(), logged + 4);
        EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    }
}

TEST(Hostile, AnEnabledConfigurationStaysAsItWas)
{
    Rig r(hostile_config());
    r.group(0, 0b11, 0b11);
    r.group(1, 0b100, 0b100);
    r.wq(0, 16);
    r.wq(1, 8, kDedicated | 3u << kPriorityShift, 0, limits(12, 3));
    r.wq(2, 4);
    r.wr(kGencfg, 12);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 1), CmdErr::Success);
    auto snapshot = [&] {
        std::vector<uint64_t> out;
        for (unsigned g = 0; g < 4; g++)
            for (uint32_t q = 0; q < 0x30; q += 8)
                out.push_back(r.rd(r.grpcfg(g, q), 8));
        for (unsigned w = 0; w < 8; w++)
            out.push_back(r.rd(r.wqcfg(w, kWqSize)));
        for (unsigned w = 0; w < 2; w++)
            for (uint32_t d = 0; d < kWqStatus; d += 4)
                out.push_back(r.rd(r.wqcfg(w, d)));
        out.push_back(r.rd(kGencfg));
        return out;
    };
    const auto before = snapshot();
    Prng prng(3);
    for (unsigned size : {1u, 2u, 4u, 8u})
        for (uint32_t at = 0; at < kSpan; at++) {
            if (at < kCmd + 4 && at + size > kCmd)
                continue; // no commands: the device stays enabled
            r.wr(at, prng.next(), size);
        }
    EXPECT_EQ(snapshot(), before);
    EXPECT_EQ(r.state(), DeviceState::Enabled);
    EXPECT_TRUE(r.wq_enabled(0));
    EXPECT_TRUE(r.wq_enabled(1));
    EXPECT_GT(r.dev.counters().refused_writes, 1000u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
    // What was not locked took the writes: a disabled WQ's mode, the permissions.
    EXPECT_NE(r.rd(r.wqcfg(5, kWqMode)), 0u);
    EXPECT_EQ(r.run(Cmd::DisableWq, wq_operand(0) | wq_operand(1)), CmdErr::Success);
}

} // namespace
} // namespace dmalab::dsa::testing
