// SPDX-License-Identifier: GPL-2.0-or-later
// What a channel's step() does, from its timer, in bounded pieces: fetch a descriptor,
// validate it, move its data, write the completion and signal it, or halt with CHANERR
// (channel.cc has the registers, commands and migration).

#include <algorithm>

#include "channel.h"
#include "dmalab/copy.h"
#include "dmalab/le.h"

namespace dmalab::ioat
{

namespace
{

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

bool Channel::read_descriptor(uint64_t addr, RawDescriptor& out)
{
    const uint64_t epoch = epoch_;
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
    for (unsigned i = 0; i < kDescriptorWords; i++)
        out.word[i] = load_le(raw + 8 * i, 8);
    return true;
}

bool Channel::fetch_extensions(Operation& op, Budget& budget)
{
    const uint64_t epoch = epoch_;
    if (needs_ext(op)) {
        // The extended descriptor is the next one in the ring, and DMACOUNT covers both:
        // Linux issues an operation's descriptors with one count (ioat_tx_submit_unlock
        // adds them all to head). A count that stops between the two is malformed.
        if (static_cast<uint16_t>(regs_.get(channel_reg("DMACOUNT")) - processed_) < 2) {
            halt(CHANERR_DESCRIPTOR_COUNT_ERR);
            return false;
        }
        RawDescriptor ext;
        if (!read_descriptor(op.next, ext))
            return false;
        budget.descriptors -= std::min(budget.descriptors, 1u);
        add_ext(op, ext);
    }
    if (unsigned n = sed_bytes(op)) {
        // Bit 14, "Super extended descriptor Address Error" in Linux's chanerr_str
        // (drivers/dma/ioat/dma.c).
        RawDescriptor halves[2] = {};
        if (op.sed & (kSedAlign - 1)) {
            halt(CHANERR_SED_ADDR_ERR);
            return false;
        }
        uint8_t raw[2 * kDescriptorSize];
        DmaResult r = wraps(op.sed, n) ? DmaResult::failure(DmaError::Wrap, op.sed)
                                       : device_.host().memory.read(op.sed, raw, n, attrs());
        if (!still(epoch))
            return false;
        if (!r.ok()) {
            halt(CHANERR_SED_ADDR_ERR, r);
            return false;
        }
        for (unsigned i = 0; i < n / 8; i++)
            halves[i / kDescriptorWords].word[i % kDescriptorWords] = load_le(raw + 8 * i, 8);
        add_sed(op, halves);
    }
    return true;
}

uint32_t Channel::check(const Operation& op) const
{
    const Config& c = device_.config();
    if (uint32_t err = control_error(op.ctl, c.dmacap))
        return err;
    return range_error(op, c.xfercap_log);
}

bool Channel::fetch(Budget& budget)
{
    uint64_t addr = next_desc_;
    regs_.set(channel_reg("CDAR"), addr);
    RawDescriptor raw;
    if (!read_descriptor(addr, raw))
        return false;
    budget.descriptors--;
    Operation op = decode_base(raw);
    uint32_t err = control_error(op.ctl, device_.config().dmacap);
    // Extended descriptors only for an operation that decoded; one refused for its control
    // word (and masked) takes its own descriptor only.
    if (!err && !fetch_extensions(op, budget))
        return false; // halted, or reset under us
    if (!err)
        err = range_error(op, device_.config().xfercap_log);
    if (err & ~error_mask()) {
        halt(err);
        return false;
    }
    start(addr, op, err);
    return true;
}

void Channel::start(uint64_t addr, const Operation& op, uint32_t err)
{
    Work w;
    w.addr = addr;
    w.op = op;
    bool moves = !err && op.moves_data();
    uint64_t dst = op.p_on() ? op.dst : op.q;
    DescriptorInfo info{index_, addr,      started_++, ctl::op(op.ctl),
                        op.ctl, op.src[0], dst,        moves ? block_len(op) : 0,
                        op.kind};
    const uint64_t now = device_.now();
    uint64_t begin = std::max(submitted_at(static_cast<uint16_t>(processed_ + 1), now),
                              std::min(model_end_, now));
    w.plan = device_.policy().decide(info, begin);
    w.len = std::min<uint64_t>(info.len, w.plan.move_limit);
    w.data_done = !moves && !w.plan.fail;
    if (Observer* o = device_.host().observer)
        o->decided(info, w.plan);
    work_ = w;
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
        // The budget counts bytes of the operation's block: a copy's bytes, an XOR's
        // result (its sources are read that many times over).
        BlockResult r = process(w, std::min(allowed - w.moved, budget.bytes), epoch);
        if (!still(epoch) || !work_) // reset, or halted by its own DMA (CHANCMD)
            return Next::Stop;
        // What the piece's translations cost upstream (IOTLB misses behind an IOMMU)
        // delays the descriptor's completion.
        w.plan.done_at = sat_add(w.plan.done_at, device_.host().memory.take_cost());
        w.moved += r.bytes;
        w.mismatch |= r.mismatch;
        budget.bytes -= std::min(budget.bytes, std::max<uint64_t>(r.bytes, 1));
        if (r.failed != CopyResult::None) {
            uint32_t err = data_error(r.failed);
            if (err & ~error_mask()) {
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
    return finish_data(w) ? Next::Now : Next::Stop;
}

BlockResult Channel::process(Work& w, uint64_t n, uint64_t epoch)
{
    auto alive = [&] { return still(epoch) && work_; };
    if (op_spec(w.op.kind).exec != Executor::Copy)
        return engine_.run(device_.host().memory, attrs(), w.op, w.moved, n, alive);
    CopyResult c =
        copy(device_.host().memory, attrs(), w.op.dst + w.moved, w.op.src[0] + w.moved, n, alive);
    BlockResult r;
    r.bytes = c.bytes;
    r.failed = c.failed;
    r.error = c.error;
    r.stopped = c.stopped;
    return r;
}

// After the last byte: a corruption a fault plan asked for, and a validation's verdict.
// False when the channel halted or was reset meanwhile.
bool Channel::finish_data(Work& w)
{
    const uint64_t epoch = epoch_;
    if (w.plan.corrupt_xor && w.len && !is_validate(w.op.kind)) {
        uint64_t at = (w.op.p_on() ? w.op.dst : w.op.q) + w.len - 1;
        uint8_t b;
        if (device_.host().memory.read(at, &b, 1, attrs()).ok() && still(epoch)) {
            b ^= w.plan.corrupt_xor;
            device_.host().memory.write(at, &b, 1, attrs());
        }
        if (!still(epoch) || !work_)
            return false;
    }
    if (!w.mismatch)
        return true;
    uint32_t err = ((w.mismatch & kMismatchP) ? CHANERR_XOR_P_OR_CRC_ERR : 0) |
                   ((w.mismatch & kMismatchQ) ? CHANERR_XOR_Q_ERR : 0);
    if (w.op.ctl & ctl::WB_EN) {
        // Descriptor write-back error status: the result bits in the top byte of the
        // descriptor's first dword (the size's other bits stay), which Linux reads in
        // desc_get_errstat(); it masks the CHANERR bits then (ioat_intr_quirk, init.c).
        uint32_t status = dwbes::WBES | ((w.mismatch & kMismatchP) ? dwbes::P_VAL_ERR : 0) |
                          ((w.mismatch & kMismatchQ) ? dwbes::Q_VAL_ERR : 0);
        uint8_t b = static_cast<uint8_t>((w.op.size | status) >> 24);
        DmaResult r = device_.host().memory.write(w.addr + 3, &b, 1, attrs());
        if (!still(epoch) || !work_)
            return false;
        if (!r.ok()) {
            halt(CHANERR_COMPLETION_ADDR_ERR, r);
            return false;
        }
    }
    // Without write-back (or with the bits unmasked) the channel halts with the result in
    // CHANERR: Linux's ioat_eh() turns XOR_P_OR_CRC_ERR and XOR_Q_ERR on an XOR_VAL or
    // PQ_VAL descriptor into SUM_CHECK_P_RESULT and SUM_CHECK_Q_RESULT and goes on.
    if (err & ~error_mask()) {
        halt(err);
        return false;
    }
    return true;
}

void Channel::complete()
{
    Work w = *work_;
    work_.reset();
    processed_ = static_cast<uint16_t>(processed_ + w.op.ring_descs);
    // It completes when both its completion time and its data phase have passed.
    model_end_ =
        std::max(w.plan.done_at, sat_add(w.plan.data_at, transfer_ns(w.len, w.plan.bandwidth)));
    // The completion names the base descriptor, never its extension: Linux's __ioat_cleanup()
    // compares it with each operation's first descriptor and skips the extended one.
    last_completed_ = w.addr;
    next_desc_ = w.op.next;
    stats_.descriptors++;
    stats_.bytes += w.moved; // a failed descriptor counts no bytes
    OpStats& by_op = stats_.ops[static_cast<unsigned>(w.op.kind)];
    by_op.descriptors++;
    by_op.bytes += w.moved;
    if (Observer* o = device_.host().observer)
        o->completed(index_, w.addr, w.moved, w.op.kind);
    const uint64_t epoch = epoch_;
    bool caught_up = processed_ == regs_.get(channel_reg("DMACOUNT"));
    if (w.op.ctl & ctl::COMPL_WRITE) {
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
    if ((w.op.ctl & ctl::INT_EN) && !w.plan.drop_interrupt)
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
    // The status is one naturally aligned quadword (Linux allocates it from a pool aligned to
    // the cache line: ioat_probe(), drivers/dma/ioat/init.c).
    bool ok = !wraps(where, sizeof buf) && !(where & (sizeof buf - 1)) &&
              device_.host().memory.write(where, buf, sizeof buf, attrs()).ok();
    if (Observer* o = device_.host().observer)
        o->status(index_, where, status, ok);
    return ok;
}

void Channel::signal_interrupt()
{
    if (!armed_) {
        irq_pending_ = true;
        return;
    }
    // INTRDELAY: the interrupt waits that long, and what completes meanwhile goes with it.
    if (irq_at_)
        return;
    uint64_t delay = device_.interrupt_delay_ns();
    if (delay == 0) {
        send_interrupt();
        return;
    }
    irq_at_ = std::min(sat_add(device_.now(), delay), kTimeLimit);
    device_.host().timers.arm(interrupt_timer_id(), *irq_at_);
}

void Channel::send_interrupt()
{
    armed_ = false;
    if (device_.channel_interrupt(index_))
        stats_.interrupts++;
}

void Channel::interrupt_timer()
{
    if (!irq_at_)
        return;
    irq_at_.reset();
    if (armed_)
        send_interrupt();
}

} // namespace dmalab::ioat
