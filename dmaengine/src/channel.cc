// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT channel behaviour: registers, commands and migration. Register-visible state changes
// inside the register access that causes it; data moves only in step() (channel_step.cc),
// from the channel's timer, in bounded pieces.

#include "channel.h"

#include <algorithm>

#include "copy.h"
#include "dmalab/le.h"

namespace dmalab::ioat
{

namespace
{

constexpr RegHook<Channel> kChannelHooks[] = {
    {"CHANCTRL", nullptr, &Channel::write_chanctrl},
    {"CHANCMD", nullptr, &Channel::write_chancmd},
    {"DMACOUNT", nullptr, &Channel::write_dmacount},
    {"CHANSTS", &Channel::read_chansts, nullptr},
};
constexpr auto kChannelRegs =
    bank_table<Channel, kChannelRegCount>(kChannelRegisters, kChannelHooks);
static_assert(well_formed(kChannelRegs, kChannelStride));

} // namespace

Channel::Channel(Ioat& device, unsigned index)
    : device_(device), index_(index),
      regs_(*this, kChannelRegs, kChannelStride, device.host().log, "dmalab-ioat channel")
{
}

MemAttrs Channel::attrs() const
{
    MemAttrs a;
    a.stream = static_cast<uint16_t>(index_);
    return a;
}

void Channel::reset()
{
    // Linux programs these once, at channel allocation and interrupt set-up, and keeps using
    // them after the resets of its error and timeout recovery (ioat_eh, ioat_timer_event ->
    // ioat_reset_hw -> ioat_restart_channel, drivers/dma/ioat/dma.c): the completion address,
    // the interrupt and error-reporting controls, the error mask and DCA control.
    uint64_t chanctrl = regs_.get(channel_reg("CHANCTRL"));
    uint64_t chancmp = regs_.get(channel_reg("CHANCMP"));
    uint64_t errmask = regs_.get(channel_reg("CHANERR_MSK"));
    uint64_t dcactrl = regs_.get(channel_reg("DCACTRL"));
    bool armed = armed_;
    regs_.reset();
    regs_.set(channel_reg("CHANCTRL"), chanctrl);
    regs_.set(channel_reg("CHANCMP"), chancmp);
    regs_.set(channel_reg("CHANERR_MSK"), errmask);
    regs_.set(channel_reg("DCACTRL"), dcactrl);
    reset_state();
    // An interrupt arm the driver gave and no event used stays: after a timeout recovery the
    // driver does not re-arm before the next completion it waits for.
    armed_ = armed;
}

void Channel::power_on_reset()
{
    regs_.reset();
    reset_state();
    started_ = 0;
    stats_ = {};
}

void Channel::reset_state()
{
    epoch_++;
    state_ = ChanState::Halted;
    next_desc_ = 0;
    last_completed_ = 0;
    processed_ = 0;
    armed_ = false;
    irq_pending_ = false;
    work_.reset();
    rerun_ = false;
    model_end_ = 0;
    nmarks_ = 0;
    disarm_timer();
}

void Channel::mark(uint16_t count, uint64_t at)
{
    if (nmarks_ == kMarks) {
        // A later write then stands for the oldest: its descriptors start no earlier.
        std::copy(marks_ + 1, marks_ + kMarks, marks_);
        nmarks_--;
    }
    marks_[nmarks_++] = {count, at};
}

uint64_t Channel::submitted_at(uint16_t seq, uint64_t now)
{
    // Marks before `seq` (mod 2^16) are spent; the first at or after it covered it.
    unsigned spent = 0;
    while (spent < nmarks_ && static_cast<uint16_t>(marks_[spent].count - seq) >= 0x8000)
        spent++;
    std::copy(marks_ + spent, marks_ + nmarks_, marks_);
    nmarks_ -= spent;
    return nmarks_ ? std::min(marks_[0].at, now) : now;
}

uint64_t Channel::read_chansts(uint64_t)
{
    return (last_completed_ & CHANSTS_COMPLETED_ADDR_MASK) | static_cast<uint64_t>(state_);
}

void Channel::write_chanctrl(uint64_t, uint64_t written, uint64_t)
{
    // INT_REARM is an action, not state: it allows one more interrupt message. An event that
    // arrived while disarmed is delivered now, so a completion racing with Linux's cleanup
    // tasklet (ioat_cleanup_event re-arms after reading the completion area) is not lost.
    if (!(written & CHANCTRL_INT_REARM))
        return;
    armed_ = true;
    if (irq_pending_) {
        irq_pending_ = false;
        signal_interrupt();
    }
}

void Channel::write_chancmd(uint64_t, uint64_t written, uint64_t)
{
    uint8_t cmd = static_cast<uint8_t>(written);
    if (cmd & CHANCMD_RESET) {
        // Completes at once: Linux polls for the RESET bit to clear (ioat_reset_sync).
        reset();
        return;
    }
    if (cmd & (CHANCMD_START | CHANCMD_APPEND)) {
        // CB1 commands; CB2 and later start channels through DMACOUNT.
        halt(CHANERR_CHANCMD_ERR);
        return;
    }
    if (cmd & CHANCMD_ABORT) {
        epoch_++;
        work_.reset();
        state_ = ChanState::Halted;
        disarm_timer();
        return;
    }
    if (cmd & CHANCMD_SUSPEND) {
        // Visible immediately: ioat_quiesce() spins until CHANSTS leaves ACTIVE/DONE. A
        // descriptor in progress stays where it is and goes on at RESUME.
        if (state_ == ChanState::Active || state_ == ChanState::Done) {
            state_ = ChanState::Suspended;
            disarm_timer();
        }
        return;
    }
    if (cmd & CHANCMD_RESUME) {
        if (state_ == ChanState::Suspended) {
            // Nothing fetched after the resume starts before it.
            model_end_ = std::max(model_end_, device_.now());
            bool more = work_ || processed_ != regs_.get(channel_reg("DMACOUNT"));
            state_ = more ? ChanState::Active : ChanState::Done;
            if (more)
                kick();
        }
    }
}

void Channel::write_dmacount(uint64_t, uint64_t, uint64_t)
{
    switch (state_) {
    case ChanState::Halted:
        // A halted channel restarts only once software has cleared its errors.
        if (regs_.get(channel_reg("CHANERR")) != 0)
            return;
        [[fallthrough]];
    case ChanState::Suspended:
        // Starting from a stopped state: the chain begins at CHAINADDR and DMACOUNT counts
        // from zero again (Linux's __ioat_restart_chan resets its dmacount to 0).
        start_from_chainaddr();
        break;
    case ChanState::Active:
    case ChanState::Done:
        break;
    }
    mark(static_cast<uint16_t>(regs_.get(channel_reg("DMACOUNT"))), device_.now());
    if (processed_ != regs_.get(channel_reg("DMACOUNT")) || work_) {
        // ACTIVE before this write returns: ioat_alloc_chan_resources() polls CHANSTS for only
        // ~20 us after starting the null descriptor.
        state_ = ChanState::Active;
        kick();
    }
}

void Channel::release(unsigned rule)
{
    if (!work_ || work_->plan.release_rule != rule)
        return;
    Decision& p = work_->plan;
    p.data_at -= std::min(p.data_at, p.held_data_ns);
    p.done_at -= std::min(p.done_at, p.held_done_ns);
    p.release_rule = Decision::kNoRelease;
    p.held_data_ns = p.held_done_ns = 0;
    if (state_ != ChanState::Active)
        return; // suspended: RESUME goes on from here
    if (in_step_) {
        rerun_ = true;
        return;
    }
    // The timer stood at the end of the hold.
    disarm_timer();
    if (device_.config().sync_start)
        step();
    else
        arm(device_.now());
}

void Channel::start_from_chainaddr()
{
    // A descriptor in progress is started again from the new chain, as Linux restarts from
    // the first descriptor it has not seen complete.
    epoch_++;
    work_.reset();
    next_desc_ = regs_.get(channel_reg("CHAINADDR"));
    processed_ = 0;
    state_ = ChanState::Done;
    model_end_ = 0;
    nmarks_ = 0;
    disarm_timer();
}

void Channel::kick()
{
    if (in_step_) {
        rerun_ = true; // the step reschedules itself, strictly later
        return;
    }
    if (work_ && armed_at_)
        return; // its timer is already set for the descriptor in progress
    if (device_.config().sync_start && !work_) {
        // The first bounded step runs inside the doorbell write, saving the host's
        // round trip to its timer; further work still waits for the timer.
        disarm_timer();
        step();
        return;
    }
    arm(device_.now());
}

void Channel::arm(uint64_t when)
{
    when = std::min(when, kTimeLimit);
    if (armed_at_ && *armed_at_ <= when)
        return;
    armed_at_ = when;
    device_.host().timers.arm(index_, when);
}

void Channel::disarm_timer()
{
    if (armed_at_) {
        armed_at_.reset();
        device_.host().timers.cancel(index_);
    }
}

// What the migration stream holds besides the registers, in stream order: one list each
// for save and load.
template <class IO, class C> void Channel::io_progress(IO& io, C& c)
{
    io(c.next_desc_);
    io(c.last_completed_);
    io(c.processed_);
    io(c.started_);
    io(c.armed_);
    io(c.irq_pending_);
}

template <class IO, class M> void Channel::io_mark(IO& io, M& m)
{
    io(m.count);
    io(m.at);
}

template <class IO, class W> void Channel::io_work(IO& io, W& k)
{
    io(k.addr);
    io(k.desc.size);
    io(k.desc.ctl);
    io(k.desc.src_addr);
    io(k.desc.dst_addr);
    io(k.desc.next);
    io(k.plan.data_at);
    io(k.plan.bandwidth);
    io(k.plan.done_at);
    io(k.plan.fail);
    io(k.plan.move_limit);
    io(k.plan.corrupt_xor);
    io(k.plan.drop_interrupt);
    io(k.plan.release_rule);
    io(k.plan.held_data_ns);
    io(k.plan.held_done_ns);
    io(k.len);
    io(k.moved);
    io(k.data_done);
}

template <class IO, class S> void Channel::io_stats(IO& io, S& s)
{
    io(s.descriptors);
    io(s.bytes);
    io(s.errors);
    io(s.interrupts);
}

void Channel::save(StateWriter& w) const
{
    for (unsigned i = 0; i < kChannelRegCount; i++)
        w.u64(regs_.get(i));
    w.u8(static_cast<uint8_t>(state_));
    StateSave save(w);
    io_progress(save, *this);
    w.boolean(work_.has_value());
    if (work_)
        io_work(save, *work_);
    io_stats(save, stats_);
    w.u64(model_end_);
    w.u8(static_cast<uint8_t>(nmarks_));
    for (unsigned i = 0; i < nmarks_; i++)
        io_mark(save, marks_[i]);
}

bool Channel::load(StateReader& r)
{
    power_on_reset();
    for (unsigned i = 0; i < kChannelRegCount; i++)
        regs_.set(i, r.u64());
    uint8_t st = r.u8();
    if (st > static_cast<uint8_t>(ChanState::Halted))
        r.reject();
    state_ = static_cast<ChanState>(st & 3);
    StateLoad load(r);
    io_progress(load, *this);
    if (r.boolean()) {
        Work k;
        io_work(load, k);
        k.plan.data_at = std::min(k.plan.data_at, kTimeLimit);
        k.plan.done_at = std::min(k.plan.done_at, kTimeLimit);
        k.plan.fail &= CHANERR_ALL;
        // The same checks a fetched descriptor passed: a stream cannot smuggle in a range
        // the device would have refused.
        // (A descriptor whose error CHANERR_MSK masked moves nothing: len 0.)
        if (k.len > k.desc.size || k.moved > k.len || wraps(k.desc.src_addr, k.len) ||
            wraps(k.desc.dst_addr, k.len) || (k.len && validate(k.desc) != 0))
            r.reject();
        work_ = k;
    }
    io_stats(load, stats_);
    model_end_ = std::min(r.u64(), kTimeLimit);
    nmarks_ = r.u8();
    if (nmarks_ > kMarks)
        r.reject();
    for (unsigned i = 0; i < nmarks_ && i < kMarks; i++) {
        io_mark(load, marks_[i]);
        marks_[i].at = std::min(marks_[i].at, kTimeLimit);
    }
    if (!r.ok()) {
        power_on_reset();
        return false;
    }
    if (state_ == ChanState::Active)
        arm(device_.now());
    return true;
}

} // namespace dmalab::ioat
