// SPDX-License-Identifier: GPL-2.0-or-later
// A channel's migration state: its registers, its progress through the ring, the operation in
// progress (with its extended and super extended descriptors' share, and what a validation
// has found so far), its timeline and counters. A loaded state passes the checks a fetched
// descriptor passes, so a stream cannot smuggle in what the device would have refused.

#include <algorithm>

#include "channel.h"

namespace dmalab::ioat
{

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

// The kind is not in the stream: it follows from the control word.
template <class IO, class O> void Channel::io_op(IO& io, O& op)
{
    io(op.ctl);
    io(op.size);
    io(op.sources);
    io(op.ring_descs);
    for (auto& a : op.src)
        io(a);
    for (auto& c : op.coef)
        io(c);
    io(op.dst);
    io(op.q);
    io(op.pattern);
    io(op.next);
    io(op.sed);
}

template <class IO, class W> void Channel::io_work(IO& io, W& k)
{
    io(k.addr);
    io_op(io, k.op);
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
    io(k.mismatch);
}

template <class IO, class S> void Channel::io_stats(IO& io, S& s)
{
    io(s.descriptors);
    io(s.bytes);
    io(s.errors);
    io(s.interrupts);
    for (auto& o : s.ops) {
        io(o.descriptors);
        io(o.bytes);
    }
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
    w.boolean(irq_at_.has_value());
    w.u64(irq_at_.value_or(0));
}

// Whether a loaded operation in progress is one this channel could have started.
bool Channel::loadable(const Work& k) const
{
    const Operation& op = k.op;
    // Fetched descriptors are 64-byte aligned, so the write-back at addr + 3 cannot wrap.
    if ((k.addr & (kDescriptorAlign - 1)) || op.sources > kMaxSources || op.ring_descs < 1 ||
        op.ring_descs > 2 || k.mismatch > 3 || k.moved > k.len || k.len > block_len(op))
        return false;
    // One that moves nothing (a masked error) needs nothing more; one that moves data must
    // be whole and pass every check it passed when fetched.
    return k.len == 0 || (consistent(op) && check(op) == 0);
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
        k.op.kind = kind_of(k.op.ctl).value_or(OpKind::Copy);
        k.plan.data_at = std::min(k.plan.data_at, kTimeLimit);
        k.plan.done_at = std::min(k.plan.done_at, kTimeLimit);
        k.plan.fail &= CHANERR_ALL;
        if (!loadable(k))
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
    bool delayed = r.boolean();
    uint64_t irq_at = std::min(r.u64(), kTimeLimit);
    if (!r.ok()) {
        power_on_reset();
        return false;
    }
    if (state_ == ChanState::Active)
        arm(device_.now());
    if (delayed) {
        irq_at_ = irq_at;
        device_.host().timers.arm(interrupt_timer_id(), irq_at);
    }
    return true;
}

} // namespace dmalab::ioat
