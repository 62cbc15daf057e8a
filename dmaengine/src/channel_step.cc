// SPDX-License-Identifier: GPL-2.0-or-later
// What a channel's step() does, from its timer, in bounded pieces: fetch a descriptor,
// validate it, move its data, write the completion and signal it, or halt with CHANERR
// (channel.cc has the registers, commands and migration).

#include <algorithm>

#include "channel.h"
#include "copy.h"
#include "dmalab/le.h"

namespace dmalab::ioat
{

namespace
{

DmaDescriptor decode(const uint8_t raw[kDescriptorSize])
{
    DmaDescriptor d;
    d.size = static_cast<uint32_t>(load_le(raw, 4));
    d.ctl = static_cast<uint32_t>(load_le(raw + 4, 4));
    d.src_addr = load_le(raw + 8, 8);
    d.dst_addr = load_le(raw + 16, 8);
    d.next = load_le(raw + 24, 8);
    d.rsv1 = load_le(raw + 32, 8);
    d.rsv2 = load_le(raw + 40, 8);
    d.user1 = load_le(raw + 48, 8);
    d.user2 = load_le(raw + 56, 8);
    return d;
}

// The CHANERR bit for a failed data access.
uint32_t data_error(CopyResult::Side side)
{
    return side == CopyResult::Source ? CHANERR_READ_DATA_ERR : CHANERR_WRITE_DATA_ERR;
}

} // namespace

void Channel::step()
{
    armed_at_.reset();
    if (state_ != ChanState::Active)
        return;
    const uint64_t now = device_.now();
    const uint64_t epoch = epoch_;
    Budget budget{device_.config().step_bytes, device_.config().step_descriptors};
    const Budget full = budget;
    uint64_t wake = 0; // when the channel next has something to do; 0: budget, go on soon
    bool more = false;
    in_step_ = true;
    rerun_ = false;
    while (state_ == ChanState::Active && still(epoch)) {
        if (!work_) {
            if (processed_ == regs_.get(channel_reg("DMACOUNT"))) {
                state_ = ChanState::Done;
                break;
            }
            if (budget.descriptors == 0) {
                more = true;
                break;
            }
            if (!fetch(budget))
                break; // halted, or reset under us
            continue;
        }
        if (!work_->data_done) {
            Next n = data_phase(budget, now, wake);
            if (n == Next::Stop)
                break;
            if (n == Next::Later) {
                more = wake == 0;
                break;
            }
        }
        if (work_->plan.done_at > now) {
            wake = work_->plan.done_at;
            break;
        }
        complete();
    }
    in_step_ = false;
    if (!still(epoch)) {
        // Reset or restarted under us (by the step's own DMA). A restart that asked to
        // run while the step was on goes on strictly later, like any other.
        if (state_ == ChanState::Active && rerun_)
            arm(sat_add(now, std::max<uint64_t>(device_.config().step_gap_ns, 1)));
        rerun_ = false;
        return;
    }
    uint64_t bytes = full.bytes - budget.bytes;
    unsigned descs = full.descriptors - budget.descriptors;
    uint64_t next = 0;
    if (state_ == ChanState::Active) {
        // More to do at once (budget spent, or DMACOUNT moved during the step): strictly
        // later in virtual time, so a guest ring that feeds itself cannot hold the main loop.
        if (more || (rerun_ && !work_) || wake == 0)
            next = sat_add(now, std::max<uint64_t>(device_.config().step_gap_ns, 1));
        else
            next = wake;
        // At the end of representable time (kTimeLimit) the channel stalls rather than
        // asking to run again at the same instant.
        if (next > now)
            arm(next);
        else
            next = 0;
    }
    rerun_ = false;
    if (Observer* o = device_.host().observer)
        o->stepped(index_, bytes, descs, next);
}

bool Channel::fetch(Budget& budget)
{
    const uint64_t epoch = epoch_;
    uint64_t addr = next_desc_;
    regs_.set(channel_reg("CDAR"), addr);
    if (addr & (kDescriptorAlign - 1)) {
        halt(CHANERR_NEXT_DESC_ALIGN_ERR);
        return false;
    }
    uint8_t raw[kDescriptorSize];
    DmaResult r = device_.host().memory.read(addr, raw, sizeof raw, attrs());
    if (!still(epoch))
        return false;
    if (!r.ok()) {
        halt(CHANERR_NEXT_ADDR_ERR, r);
        return false;
    }
    budget.descriptors--;
    DmaDescriptor desc = decode(raw);
    uint32_t err = validate(desc);
    if (err & ~static_cast<uint32_t>(regs_.get(channel_reg("CHANERR_MSK")))) {
        halt(err);
        return false;
    }
    Work w;
    w.addr = addr;
    w.desc = desc;
    bool moves = !err && !(desc.ctl & ctl::NULL_DESC);
    DescriptorInfo info{index_,   addr,          started_++,    ctl::op(desc.ctl),
                        desc.ctl, desc.src_addr, desc.dst_addr, moves ? desc.size : 0u};
    const uint64_t now = device_.now();
    uint64_t start = std::max(submitted_at(static_cast<uint16_t>(processed_ + 1), now),
                              std::min(model_end_, now));
    w.plan = device_.policy().decide(info, start);
    w.len = std::min<uint64_t>(info.len, w.plan.move_limit);
    w.data_done = !moves && !w.plan.fail;
    if (Observer* o = device_.host().observer)
        o->decided(info, w.plan);
    work_ = w;
    return true;
}

uint32_t Channel::validate(const DmaDescriptor& d) const
{
    if (ctl::op(d.ctl) != OP_COPY)
        return CHANERR_CONTROL_ERR; // only memcpy/null are implemented and advertised
    if (d.ctl & ctl::NULL_DESC) {
        // The hardware rejects a null descriptor of size 0; Linux gives its null descriptors
        // a non-zero size for that reason (__ioat_start_null_desc, drivers/dma/ioat/dma.c).
        return d.size == 0 ? CHANERR_LENGTH_ERR : 0;
    }
    if (d.size == 0 || d.size > (uint64_t{1} << device_.config().xfercap_log))
        return CHANERR_LENGTH_ERR;
    // A range that wraps past 2^64 is refused before any byte moves.
    if (wraps(d.src_addr, d.size))
        return CHANERR_SRC_ADDR_ERR;
    if (wraps(d.dst_addr, d.size))
        return CHANERR_DEST_ADDR_ERR;
    return 0;
}

Channel::Next Channel::data_phase(Budget& budget, uint64_t now, uint64_t& wake)
{
    Work& w = *work_;
    if (now < w.plan.data_at) {
        wake = w.plan.data_at;
        return Next::Later;
    }
    if (w.plan.fail) {
        halt(w.plan.fail);
        return Next::Stop;
    }
    const uint64_t bw = w.plan.bandwidth;
    const uint64_t allowed = bw ? std::min(w.len, bytes_in(now - w.plan.data_at, bw)) : w.len;
    if (w.moved < allowed) {
        if (budget.bytes == 0) {
            wake = 0;
            return Next::Later;
        }
        const uint64_t epoch = epoch_;
        uint64_t n = std::min(allowed - w.moved, budget.bytes);
        CopyResult r = copy(device_.host().memory, attrs(), w.desc.dst_addr + w.moved,
                            w.desc.src_addr + w.moved, n, [&] { return still(epoch) && work_; });
        if (!still(epoch) || !work_) // reset, or halted by its own DMA (CHANCMD)
            return Next::Stop;
        // What the piece's translations cost upstream (IOTLB misses behind an IOMMU)
        // delays the descriptor's completion.
        w.plan.done_at = sat_add(w.plan.done_at, device_.host().memory.take_cost());
        w.moved += r.bytes;
        budget.bytes -= std::min(budget.bytes, std::max<uint64_t>(r.bytes, 1));
        if (r.failed != CopyResult::None) {
            uint32_t err = data_error(r.failed);
            if (err & ~static_cast<uint32_t>(regs_.get(channel_reg("CHANERR_MSK")))) {
                halt(err, r.error);
                return Next::Stop;
            }
            w.moved = w.len; // masked: the rest of the descriptor is given up
        }
    }
    if (w.moved < w.len) {
        if (w.moved < allowed) {
            wake = 0; // the budget ran out
            return Next::Later;
        }
        // Bandwidth-limited: on when the next piece has had time to arrive.
        uint64_t target = std::min(w.len, w.moved + device_.config().step_bytes);
        wake = sat_add(w.plan.data_at, transfer_ns(target, bw));
        return Next::Later;
    }
    w.data_done = true;
    if (w.plan.corrupt_xor && w.len) {
        uint64_t at = w.desc.dst_addr + w.len - 1;
        uint8_t b;
        const uint64_t epoch = epoch_;
        if (device_.host().memory.read(at, &b, 1, attrs()).ok() && still(epoch)) {
            b ^= w.plan.corrupt_xor;
            device_.host().memory.write(at, &b, 1, attrs());
        }
        if (!still(epoch) || !work_)
            return Next::Stop;
    }
    return Next::Now;
}

void Channel::complete()
{
    Work w = *work_;
    work_.reset();
    processed_++;
    // It completes when both its completion time and its data phase have passed.
    model_end_ =
        std::max(w.plan.done_at, sat_add(w.plan.data_at, transfer_ns(w.len, w.plan.bandwidth)));
    last_completed_ = w.addr;
    next_desc_ = w.desc.next;
    stats_.descriptors++;
    stats_.bytes += w.moved; // a failed descriptor counts no bytes
    if (Observer* o = device_.host().observer)
        o->completed(index_, w.addr, w.moved);
    const uint64_t epoch = epoch_;
    bool caught_up = processed_ == regs_.get(channel_reg("DMACOUNT"));
    if (w.desc.ctl & ctl::COMPL_WRITE) {
        ChanState st = caught_up ? ChanState::Done : ChanState::Active;
        bool ok =
            write_completion((w.addr & CHANSTS_COMPLETED_ADDR_MASK) | static_cast<uint64_t>(st));
        if (!still(epoch))
            return;
        if (!ok) {
            // The status cannot be written where software looks for it: halt, with the error
            // interrupt if enabled, and no second try at the same address.
            halt(CHANERR_COMPLETION_ADDR_ERR, {}, false);
            return;
        }
    }
    // A lost interrupt (fault plans): the status is there for software that polls, as
    // ioatdma's timer does (ioat_timer_event, drivers/dma/ioat/dma.c).
    if ((w.desc.ctl & ctl::INT_EN) && !w.plan.drop_interrupt)
        signal_interrupt();
}

void Channel::halt(uint32_t chanerr, const DmaResult& why, bool write_status)
{
    const uint64_t epoch = epoch_;
    regs_.set(channel_reg("CHANERR"), regs_.get(channel_reg("CHANERR")) | chanerr);
    state_ = ChanState::Halted;
    work_.reset();
    stats_.errors++;
    disarm_timer();
    if (Observer* o = device_.host().observer)
        o->halted(index_, chanerr, why);
    // The completion area then holds the last good descriptor with HALTED status: Linux's
    // ioat_cleanup() checks for that and hands the failed descriptor to ioat_eh(). If that
    // write fails too, CHANERR says so, and the error interrupt still goes out.
    if (write_status && (chanctrl() & CHANCTRL_ERR_COMPLETION_EN)) {
        bool ok = write_completion((last_completed_ & CHANSTS_COMPLETED_ADDR_MASK) |
                                   static_cast<uint64_t>(ChanState::Halted));
        if (!still(epoch))
            return;
        if (!ok)
            regs_.set(channel_reg("CHANERR"),
                      regs_.get(channel_reg("CHANERR")) | CHANERR_COMPLETION_ADDR_ERR);
    }
    if (chanctrl() & CHANCTRL_ERR_INT_EN)
        signal_interrupt();
}

bool Channel::write_completion(uint64_t status)
{
    uint64_t where = regs_.get(channel_reg("CHANCMP"));
    uint8_t buf[8];
    store_le(buf, status, 8);
    if (wraps(where, sizeof buf))
        return false;
    return device_.host().memory.write(where, buf, sizeof buf, attrs()).ok();
}

void Channel::signal_interrupt()
{
    if (!armed_) {
        irq_pending_ = true;
        return;
    }
    armed_ = false;
    if (device_.channel_interrupt(index_))
        stats_.interrupts++;
}

} // namespace dmalab::ioat
