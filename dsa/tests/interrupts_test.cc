// SPDX-License-Identifier: GPL-2.0-or-later
// MSI-X vector 0 and INTCAUSE as idxd's misc interrupt thread sees them, completion vectors
// for the data path, and the model's own message aimed back at its registers.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

TEST(Interrupts, IntReqRaisesCmdOnVectorZero)
{
    Rig r;
    r.configure();
    EXPECT_EQ(r.run(Cmd::EnableDevice, 0, false), CmdErr::Success);
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_EQ(r.rd(kIntcause), 0u);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0, true), CmdErr::Success);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD);
    EXPECT_EQ(r.dev.counters().interrupts, 1u);
}

TEST(Interrupts, IntcauseIsWriteOneToClear)
{
    Rig r;
    r.run(Cmd::DrainAll);
    r.wr(kGenctrl, 1); // SWERR_INT_EN
    r.dev.software_error({Status::CompletionRecordFault});
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD | INTC_SWERR);
    r.wr(kIntcause, 0);
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD | INTC_SWERR) << "0 clears nothing";
    r.wr(kIntcause, INTC_CMD);
    EXPECT_EQ(r.rd(kIntcause), INTC_SWERR);
    EXPECT_EQ(r.ack(), INTC_SWERR) << "idxd_misc_thread writes back what it read";
    EXPECT_EQ(r.rd(kIntcause), 0u);
    r.wr(kIntcause, 0x7fffffe0u); // reserved bits: logged, ignored
    EXPECT_EQ(r.rd(kIntcause), 0u);
    EXPECT_FALSE(r.log.guest_errors.empty());
}

TEST(Interrupts, EveryCauseSendsAMessage)
{
    Rig r;
    r.run(Cmd::DrainAll);
    r.run(Cmd::DrainAll); // INTCAUSE.CMD still set: the handler re-reads after clearing
    EXPECT_EQ(r.irq.raised.size(), 2u);
}

TEST(Interrupts, MaskedVectorLeavesTheCauseForLater)
{
    Rig r;
    r.irq.messages = false; // the host left it pending
    r.run(Cmd::DrainAll);
    EXPECT_EQ(r.rd(kIntcause), INTC_CMD);
    EXPECT_EQ(r.dev.counters().interrupts, 0u);
}

TEST(Interrupts, CompletionVectorsAreTheDataPaths)
{
    Rig r;
    EXPECT_TRUE(r.dev.completion_interrupt(3));
    EXPECT_FALSE(r.dev.completion_interrupt(9)) << "no such MSI-X entry";
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{3});
    EXPECT_EQ(r.rd(kIntcause), 0u) << "completions are no INTCAUSE";
    EXPECT_EQ(r.dev.counters().interrupts, 1u);
}

struct Recorder : Observer {
    void command_started(Cmd c, uint32_t op) override { started.push_back({c, op}); }
    void command_done(Cmd c, CmdErr e, uint16_t) override { done.push_back({c, e}); }
    void interrupt(unsigned v, bool sent) override { vectors.push_back({v, sent}); }
    void refused(uint32_t at) override { refusals.push_back(at); }
    std::vector<std::pair<Cmd, uint32_t>> started;
    std::vector<std::pair<Cmd, CmdErr>> done;
    std::vector<std::pair<unsigned, bool>> vectors;
    std::vector<uint32_t> refusals;
};

TEST(Interrupts, TheObserverSeesCommandsAndMessages)
{
    Recorder o;
    Rig r(Config{}, &o);
    r.run(Cmd::EnableWq, 3);
    r.wr(kCmd, 0, 4); // command 0
    ASSERT_EQ(o.started.size(), 2u);
    EXPECT_EQ(o.started[0].first, Cmd::EnableWq);
    EXPECT_EQ(o.started[0].second, 3u);
    EXPECT_EQ(o.done[0].second, CmdErr::DevNotEnabled);
    EXPECT_EQ(o.done[1].second, CmdErr::InvalidCommand);
    EXPECT_EQ(o.vectors, (std::vector<std::pair<unsigned, bool>>{{0, true}}));
    r.bring_up();
    r.wr(kGencfg, 1);
    EXPECT_EQ(o.refusals, std::vector<uint32_t>{kGencfg});
}

// An MSI-X message the guest aimed at the device's own BAR: QEMU delivers it as a write
// there, inside the model's call out.
class Reentrant : public FakeInterrupts
{
  public:
    bool notify(unsigned vector) override
    {
        if (dev) {
            dev->mmio_write(kCmd, Rig::command(Cmd::ResetDevice, 0, true), 4);
            reads.push_back(dev->mmio_read(kGensts, 4));
        }
        return FakeInterrupts::notify(vector);
    }
    Dsa* dev = nullptr;
    std::vector<uint64_t> reads;
};

TEST(Interrupts, TheDevicesOwnMessageCannotReachItsRegisters)
{
    FakeMemory mem(4096);
    FakeTimers timers;
    Reentrant irq;
    FakeLog log;
    Dsa dev(Config{}, Host{mem, timers, irq, log});
    irq.dev = &dev;
    dev.set_bus_master(true);
    const Layout l = Dsa::layout(Config{});
    dev.mmio_write(l.grpcfg + kGrpWqs, 1, 8);
    dev.mmio_write(l.grpcfg + kGrpEngines, 1, 8);
    dev.mmio_write(kCmd, Rig::command(Cmd::EnableDevice, 0, true), 4);
    EXPECT_EQ(dev.state(), DeviceState::Enabled) << "the reset inside the message was refused";
    EXPECT_EQ(irq.reads, std::vector<uint64_t>{0}) << "and so was the read";
    EXPECT_EQ(dev.counters().commands, 1u);
    EXPECT_EQ(dev.invariant_violation(), nullptr);
    EXPECT_GE(log.guest_errors.size(), 2u);
}

} // namespace
} // namespace dmalab::dsa::testing
