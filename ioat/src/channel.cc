// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT channel behaviour: registers, commands and migration. Register-visible state changes
// inside the register access that causes it; data moves only in step() (channel_step.cc),
// from the channel's timer, in bounded pieces.

#include "channel.h"

#include <algorithm>

#include "dmalab/copy.h"
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

bool Channel::wrong_size(uint32_t offset, unsigned size) const
{
    struct Exact {
        uint32_t offset;
        unsigned width;
    };
    static constexpr Exact kExact[] = {
        {channel_offset("CHANCMD"), reg_spec(kChannelRegisters, "CHANCMD").width},
        {channel_offset("DMACOUNT"), reg_spec(kChannelRegisters, "DMACOUNT").width}};
    for (const Exact& e : kExact)
        if (offset < e.offset + e.width && e.offset < offset + size &&
            (offset != e.offset || size != e.width))
            return true;
    return false;
}

void Channel::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    // Linux writes CHANCMD with writeb and DMACOUNT with writew (drivers/dma/ioat/dma.h,
    // dma.c). Half a doorbell, or a command merged with the register beside it, is not a
    // command the channel can act on.
    if (wrong_size(offset, size)) {
        logf(device_.host().log, LogKind::GuestError,
             "dmalab-ioat channel %u: %u-byte write at 0x%x splits or merges CHANCMD/DMACOUNT",
             index_, size, offset);
        halt(CHANERR_CHANCMD_ERR);
        return;
    }
    regs_.write(offset, value, size);
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
    if (irq_at_) {
        irq_at_.reset();
        device_.host().timers.cancel(interrupt_timer_id());
    }
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
    if (cmd & CHANCMD_START) {
        // A CB1 command; CB2 and later start channels through CHAINADDR and DMACOUNT.
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
        return;
    }
    if (cmd & CHANCMD_APPEND) {
        // Descriptors were appended: a running or idle channel looks at DMACOUNT again,
        // as its doorbell makes it. (Linux v6.1 never writes APPEND: it rings DMACOUNT.)
        if ((state_ == ChanState::Active || state_ == ChanState::Done) &&
            (work_ || processed_ != regs_.get(channel_reg("DMACOUNT")))) {
            state_ = ChanState::Active;
            kick();
        }
    }
}

void Channel::write_dmacount(uint64_t old_value, uint64_t written, uint64_t)
{
    // A running channel's count only moves forward (mod 2^16) past what it has completed:
    // Linux adds to it and restarts from 0 only after a halt, suspend or reset
    // (__ioat_issue_pending, __ioat_restart_chan). A count that moved back would take
    // descriptors already given to the engine away from it.
    if (state_ == ChanState::Active && static_cast<uint16_t>(written - processed_) <
                                           static_cast<uint16_t>(old_value - processed_)) {
        halt(CHANERR_DESCRIPTOR_COUNT_ERR);
        return;
    }
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

bool Channel::release(unsigned rule)
{
    if (!work_ || work_->plan.release_rule != rule)
        return false;
    Decision& p = work_->plan;
    p.data_at -= std::min(p.data_at, p.held_data_ns);
    p.done_at -= std::min(p.done_at, p.held_done_ns);
    p.release_rule = Decision::kNoRelease;
    p.held_data_ns = p.held_done_ns = 0;
    if (state_ != ChanState::Active)
        return true; // suspended: RESUME goes on from here
    if (in_step_) {
        rerun_ = true;
        return true;
    }
    // The timer stood at the end of the hold.
    disarm_timer();
    if (device_.config().sync_start)
        step();
    else
        arm(device_.now());
    return true;
}

void Channel::start_from_chainaddr()
{
    // A descriptor in progress is started again from the new chain, as Linux restarts from
    // the first descriptor it has not seen complete.
    epoch_++;
    work_.reset();
    next_desc_ = regs_.get(channel_reg("CHAINADDR"));
    processed_ = 0;
    // A new chain has completed nothing: until one of its descriptors does, CHANSTS and a
    // halt's status name no descriptor (address 0). ioatdma relies on it when the chain's
    // first descriptor fails (__cleanup(), drivers/dma/ioat/dma.c, skips a 0): a status
    // naming the old chain's last descriptor lies behind its tail, and __cleanup() stops at
    // BUG_ON(active && !seen_current).
    last_completed_ = 0;
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

} // namespace dmalab::ioat
