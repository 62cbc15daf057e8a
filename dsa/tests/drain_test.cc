// SPDX-License-Identifier: GPL-2.0-or-later
// Waiting for work in flight: the Drain descriptor (§3.12, §8.3.3), the commands that drain
// (Drain WQ, Disable WQ, Drain All, Disable Device, Drain PASID) and those that drop (Abort WQ,
// Reset WQ, Reset Device, a halt), all with descriptors that take modelled time: at 1 GB/s a
// memmove of n bytes moves 2n bytes, so it takes 2n ns.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kSrc = 0x10000, kDst = 0x40000;
constexpr uint64_t kRecA = 0x1000, kRecB = 0x1020, kRecC = 0x1040, kRecD = 0x1060;

Config paced()
{
    Config c;
    c.bandwidth = 1000000000; // 1 byte per ns over both streams
    c.step_bytes = 4096;
    return c;
}

// WQs `wqs` (dedicated, 8 slots each) in group 0 with engines `engines`, all enabled.
void up(Rig& r, uint64_t wqs, uint64_t engines)
{
    r.group(0, wqs, engines);
    for (unsigned w = 0; w < 64; w++)
        if ((wqs >> w) & 1)
            r.wq(w, 8);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    for (unsigned w = 0; w < 64; w++) {
        if ((wqs >> w) & 1) {
            ASSERT_EQ(r.run(Cmd::EnableWq, w), CmdErr::Success);
        }
    }
    r.ack();
}

// A memmove of `n` bytes at byte `at` of the source and destination areas.
Desc move(uint64_t at, uint32_t n, uint64_t rec)
{
    Desc d(Opcode::Memmove, kRecord);
    d.completion(rec).src(kSrc + at).dst(kDst + at).size(n);
    return d;
}

bool written(Rig& r, uint64_t rec)
{
    return r.record(rec).status != 0;
}

uint32_t occupancy(Rig& r, unsigned wq)
{
    return static_cast<uint32_t>(WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(wq, kWqStatus))));
}

void fill_source(Rig& r)
{
    for (unsigned i = 0; i < 0x30000; i++)
        r.at(kSrc)[i] = static_cast<uint8_t>(i * 29 + 3);
}

bool untouched(Rig& r, uint64_t at, size_t n)
{
    const uint8_t* p = r.at(kDst + at);
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// ---- The Drain descriptor ----

TEST(Drain, ADrainDescriptorCompletesAfterEverythingSubmittedBeforeIt)
{
    Rig r(paced());
    up(r, 1, 0b11);
    fill_source(r);
    r.submit(0, move(0, 0x10000, kRecA));      // engine 0, 128 us
    r.submit(0, move(0x10000, 0x1000, kRecB)); // engine 1, 8 us
    Desc drain(Opcode::Drain, kRecord);
    drain.completion(kRecD);
    r.submit(0, drain);
    bool drain_waited = false;
    for (unsigned n = 0; r.pending() && n < 10000; n++) {
        r.step();
        if (written(r, kRecD))
            break;
        // Engine 1 took the drain once B was done; it waits there for A.
        if (written(r, kRecB) && occupancy(r, 0) == 0 && !written(r, kRecA))
            drain_waited = true;
    }
    ASSERT_TRUE(written(r, kRecD));
    EXPECT_EQ(r.record(kRecD).code(), Status::Success);
    EXPECT_TRUE(written(r, kRecA)) << "the drain completed before what came earlier";
    EXPECT_TRUE(written(r, kRecB));
    EXPECT_TRUE(drain_waited) << "the drain never sat taken while A ran";
    EXPECT_EQ(r.timers.now, 2u * 0x10000) << "the drain ends with A, not later";
    r.run_until_idle();
}

TEST(Drain, ADrainDescriptorDoesNotWaitForAnotherWq)
{
    // On a dedicated WQ a drain waits for its own WQ's descriptors only.
    Rig r(paced());
    up(r, 0b11, 0b11);
    r.submit(0, move(0, 0x10000, kRecA));
    Desc drain(Opcode::Drain, kRecord);
    drain.completion(kRecD);
    r.submit(1, drain);
    for (unsigned n = 0; r.pending() && !written(r, kRecD) && n < 10000; n++)
        r.step();
    EXPECT_EQ(r.record(kRecD).code(), Status::Success);
    EXPECT_FALSE(written(r, kRecA));
    r.run_until_idle();
}

// ---- Drain WQ ----

TEST(Drain, DrainWqStaysActiveUntilWhatTheWqHeldCompletes)
{
    Rig r(paced());
    r.bring_up();
    r.submit(0, move(0, 0x4000, kRecA));
    r.submit(0, move(0x4000, 0x4000, kRecB)); // queued behind A
    r.issue(Cmd::DrainWq, wq_operand(0));
    ASSERT_TRUE(r.active());
    for (unsigned n = 0; r.pending() && n < 10000; n++) {
        r.step();
        if (written(r, kRecB))
            break;
        EXPECT_TRUE(r.active()) << "at " << r.timers.now << " ns, A written: " << written(r, kRecA);
    }
    ASSERT_TRUE(written(r, kRecB));
    EXPECT_FALSE(r.active()) << "the drain ends with the last descriptor it waited for";
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::Success);
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD);
    EXPECT_TRUE(r.wq_enabled(0)) << "Drain WQ leaves the WQ enabled";
}

TEST(Drain, DrainWqDoesNotWaitForDescriptorsSubmittedAfterIt)
{
    Rig r(paced());
    r.bring_up();
    r.submit(0, move(0, 0x1000, kRecA));
    r.issue(Cmd::DrainWq, wq_operand(0));
    r.submit(0, move(0x1000, 0x10000, kRecB));
    EXPECT_EQ(err_of(r.wait()), CmdErr::Success);
    EXPECT_TRUE(written(r, kRecA));
    EXPECT_FALSE(written(r, kRecB)) << "B came after the command";
    r.run_until_idle();
    EXPECT_EQ(r.record(kRecB).code(), Status::Success);
}

TEST(Drain, DrainWqOfAnIdleWqCompletesAtOnce)
{
    Rig r(paced());
    r.bring_up();
    r.issue(Cmd::DrainWq, wq_operand(0));
    EXPECT_FALSE(r.active());
    EXPECT_FALSE(r.pending());
}

// ---- Disable WQ ----

TEST(Drain, DisableWqDrainsAndThenDisables)
{
    Rig r(paced());
    r.bring_up();
    fill_source(r);
    r.submit(0, move(0, 0x4000, kRecA));
    r.issue(Cmd::DisableWq, wq_operand(0));
    ASSERT_TRUE(r.active());
    EXPECT_TRUE(r.wq_enabled(0)) << "enabled while it drains";
    r.submit(0, move(0x4000, 0x1000, kRecB)); // after the command: not waited for
    EXPECT_EQ(err_of(r.wait()), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.record(kRecA).code(), Status::Success);
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst), 0x4000), 0);
    r.run_until_idle();
    EXPECT_FALSE(written(r, kRecB)) << "what came after the command is dropped";
    EXPECT_TRUE(untouched(r, 0x4000, 0x1000));
    EXPECT_EQ(occupancy(r, 0), 0u);
    const uint64_t dropped = r.dev.counters().dropped;
    r.submit(0, move(0x5000, 0x1000, kRecC));
    EXPECT_EQ(r.dev.counters().dropped, dropped + 1) << "a disabled WQ takes nothing";
    r.run_until_idle();
    EXPECT_FALSE(written(r, kRecC));
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

// ---- Drain All, Disable Device ----

TEST(Drain, DrainAllWaitsForEveryWq)
{
    Rig r(paced());
    up(r, 0b11, 0b11);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(1, move(0x10000, 0x2000, kRecB));
    r.issue(Cmd::DrainAll);
    for (unsigned n = 0; r.pending() && !written(r, kRecA) && n < 10000; n++) {
        EXPECT_TRUE(r.active()) << "at " << r.timers.now << " ns, B written: " << written(r, kRecB);
        r.step();
    }
    ASSERT_TRUE(written(r, kRecB));
    ASSERT_TRUE(written(r, kRecA));
    EXPECT_FALSE(r.active());
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::Success);
    EXPECT_TRUE(r.wq_enabled(0));
    EXPECT_TRUE(r.wq_enabled(1));
}

TEST(Drain, DisableDeviceDrainsEveryWqAndThenDisables)
{
    Rig r(paced());
    up(r, 0b11, 0b11);
    r.submit(0, move(0, 0x8000, kRecA));
    r.submit(1, move(0x8000, 0x2000, kRecB));
    r.issue(Cmd::DisableDevice);
    ASSERT_TRUE(r.active());
    EXPECT_EQ(r.state(), DeviceState::Enabled) << "enabled while it drains";
    EXPECT_EQ(err_of(r.wait()), CmdErr::Success);
    EXPECT_EQ(r.record(kRecA).code(), Status::Success);
    EXPECT_EQ(r.record(kRecB).code(), Status::Success);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_FALSE(r.wq_enabled(1));
    EXPECT_EQ(r.dev.counters().aborted, 0u);
    const uint64_t dropped = r.dev.counters().dropped;
    r.submit(0, move(0xa000, 0x1000, kRecC));
    EXPECT_EQ(r.dev.counters().dropped, dropped + 1);
    r.run_until_idle();
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

// ---- Abort WQ, Reset WQ, Reset Device ----

TEST(Drain, AbortWqDropsQueuedAndRunningWorkWithoutRecords)
{
    Rig r(paced());
    r.bring_up();
    fill_source(r);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(0, move(0x10000, 0x1000, kRecB));
    r.submit(0, move(0x11000, 0x1000, kRecC));
    r.step();
    r.step(); // A is running, partway
    ASSERT_FALSE(untouched(r, 0, 0x10000));
    r.issue(Cmd::AbortWq, wq_operand(0));
    EXPECT_FALSE(r.active()) << "an abort waits for nothing";
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::Success);
    EXPECT_EQ(r.dev.counters().aborted, 3u);
    EXPECT_EQ(occupancy(r, 0), 0u);
    std::vector<uint8_t> dst(r.at(kDst), r.at(kDst) + 0x10000);
    r.run_until_idle();
    for (uint64_t rec : {kRecA, kRecB, kRecC})
        EXPECT_FALSE(written(r, rec)) << std::hex << rec;
    EXPECT_EQ(std::memcmp(dst.data(), r.at(kDst), dst.size()), 0) << "A moved on after it";
    EXPECT_TRUE(untouched(r, 0x10000, 0x2000));
    EXPECT_EQ(r.dev.counters().records, 0u);
    EXPECT_TRUE(r.wq_enabled(0)) << "Abort WQ leaves the WQ enabled";
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Drain, AfterAbortWqTheWqRunsNewWork)
{
    Rig r(paced());
    r.bring_up();
    r.submit(0, move(0, 0x10000, kRecA));
    r.step();
    r.step(); // A is running, its engine's next step armed
    ASSERT_EQ(r.run(Cmd::AbortWq, wq_operand(0)), CmdErr::Success);
    r.submit(0, move(0x10000, 0x1000, kRecB));
    EXPECT_TRUE(r.pending()) << "nothing will run B";
    r.run_until_idle();
    EXPECT_EQ(r.record(kRecB).code(), Status::Success);
}

TEST(Drain, ResetWqMidTransferDropsItsWork)
{
    Rig r(paced());
    r.bring_up();
    fill_source(r);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(0, move(0x10000, 0x1000, kRecB));
    r.step();
    r.step();
    EXPECT_EQ(r.run(Cmd::ResetWq, wq_operand(0)), CmdErr::Success);
    EXPECT_FALSE(r.wq_enabled(0));
    EXPECT_EQ(r.rd(r.wqcfg(0, kWqMode)), 0u) << "its configuration is back to reset";
    EXPECT_EQ(r.dev.counters().aborted, 2u);
    std::vector<uint8_t> dst(r.at(kDst), r.at(kDst) + 0x11000);
    r.run_until_idle();
    EXPECT_EQ(std::memcmp(dst.data(), r.at(kDst), dst.size()), 0);
    EXPECT_FALSE(written(r, kRecA));
    EXPECT_FALSE(written(r, kRecB));
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Drain, ResetDeviceMidTransferDropsEverything)
{
    Rig r(paced());
    up(r, 0b11, 0b11);
    fill_source(r);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(1, move(0x10000, 0x10000, kRecB));
    r.step();
    r.step();
    r.step();
    EXPECT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    EXPECT_EQ(r.dev.counters().aborted, 2u);
    EXPECT_FALSE(r.pending()) << "no engine runs on";
    std::vector<uint8_t> dst(r.at(kDst), r.at(kDst) + 0x20000);
    r.run_until_idle();
    EXPECT_EQ(std::memcmp(dst.data(), r.at(kDst), dst.size()), 0);
    EXPECT_FALSE(written(r, kRecA));
    EXPECT_FALSE(written(r, kRecB));
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Drain, AfterResetDeviceMidTransferTheDeviceRunsNewWork)
{
    // idxd's reinit after a software reset configures and enables the device again
    // (idxd_device_reinit); the engines must serve it as after power-on.
    Rig r(paced());
    up(r, 0b11, 0b11);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(1, move(0x10000, 0x10000, kRecB));
    r.step();
    r.step();
    r.step();
    ASSERT_EQ(r.run(Cmd::ResetDevice), CmdErr::Success);
    up(r, 0b11, 0b11);
    r.submit(0, move(0x20000, 0x1000, kRecC));
    r.submit(1, move(0x21000, 0x1000, kRecD));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRecC).code(), Status::Success);
    EXPECT_EQ(r.record(kRecD).code(), Status::Success);
}

// ---- A halt ----

TEST(Drain, AHaltDropsTheWorkAndEndsAWaitingDrainWqWithAnError)
{
    Rig r(paced());
    r.bring_up();
    fill_source(r);
    r.submit(0, move(0, 0x10000, kRecA));
    r.submit(0, move(0x10000, 0x1000, kRecB));
    r.issue(Cmd::DrainWq, wq_operand(0));
    r.step();
    r.step();
    ASSERT_TRUE(r.active());
    r.dev.halt(ResetType::Software);
    EXPECT_EQ(r.state(), DeviceState::Halted);
    EXPECT_FALSE(r.active()) << "the drain has nothing left to wait for";
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::HwError);
    EXPECT_EQ(r.dev.counters().aborted, 2u);
    std::vector<uint8_t> dst(r.at(kDst), r.at(kDst) + 0x11000);
    r.run_until_idle();
    EXPECT_EQ(std::memcmp(dst.data(), r.at(kDst), dst.size()), 0);
    EXPECT_FALSE(written(r, kRecA));
    EXPECT_FALSE(written(r, kRecB));
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

// ---- Drain PASID ----

TEST(Drain, DrainPasidWaitsOnlyForWqsWithThatPasidEnabled)
{
    Rig r(paced());
    r.dev.set_pasid(true, true);
    const auto pasid = [](uint32_t p) { return static_cast<uint32_t>(WQCFG_PASID.put(p)); };
    r.group(0, 0b111, 0b111);
    r.wq(0, 8, kDedicated | WQCFG_PASID_EN | pasid(5));
    r.wq(1, 8, kDedicated | pasid(5)); // the field without PASID_EN names no PASID
    r.wq(2, 8, kDedicated | WQCFG_PASID_EN | pasid(6));
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    for (unsigned w = 0; w < 3; w++)
        ASSERT_EQ(r.run(Cmd::EnableWq, w), CmdErr::Success);
    r.submit(0, move(0, 0x4000, kRecA));
    r.submit(1, move(0x4000, 0x10000, kRecB));
    r.submit(2, move(0x14000, 0x10000, kRecC));
    EXPECT_EQ(r.run(Cmd::DrainPasid, 7), CmdErr::Success);
    EXPECT_EQ(r.timers.now, 0u) << "no WQ has PASID 7: nothing to wait for";
    r.issue(Cmd::DrainPasid, 5);
    for (unsigned n = 0; r.pending() && !written(r, kRecA) && n < 10000; n++) {
        EXPECT_TRUE(r.active()) << "at " << r.timers.now << " ns";
        r.step();
    }
    ASSERT_TRUE(written(r, kRecA));
    EXPECT_FALSE(r.active());
    EXPECT_EQ(err_of(static_cast<uint32_t>(r.rd(kCmdsts))), CmdErr::Success);
    EXPECT_FALSE(written(r, kRecB)) << "WQ 1 has no PASID enabled";
    EXPECT_FALSE(written(r, kRecC)) << "WQ 2 has another PASID";
    r.run_until_idle();
}

} // namespace
} // namespace dmalab::dsa::testing
