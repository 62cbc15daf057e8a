// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT channel behaviour. Register-visible state changes inside the register access that
// causes it; data moves only in step(), from the channel's timer, in bounded pieces.

#include "channel.h"

#include <algorithm>

#include "copy.h"
#include "dmalab/le.h"

namespace dmalab::ioat
{

namespace
{

using A = FieldAccess;

// clang-format off
constexpr std::array<RegDef<Channel>, R_CHANNEL_REG_COUNT> kChannelRegs = {{
    // id             name           offset       width reset        fields                 read hook               write hook
    {R_CHANCTRL,    "CHANCTRL",    CHANCTRL,    2,    0,           fields::CHANCTRL,      nullptr,                &Channel::write_chanctrl},
    {R_DMA_COMP,    "DMA_COMP",    DMA_COMP,    2,    DMA_COMP_V2, fields::DMA_COMP,      nullptr,                nullptr},
    {R_CHANCMD,     "CHANCMD",     CHANCMD,     1,    0,           fields::CHANCMD,       nullptr,                &Channel::write_chancmd},
    {R_DMACOUNT,    "DMACOUNT",    DMACOUNT,    2,    0,           fields::DMACOUNT,      nullptr,                &Channel::write_dmacount},
    {R_CHANSTS,     "CHANSTS",     CHANSTS,     8,    0,           fields::CHANSTS,       &Channel::read_chansts, nullptr},
    {R_CHAINADDR,   "CHAINADDR",   CHAINADDR,   8,    0,           fields::ADDRESS,       nullptr,                nullptr},
    {R_CHANCMP,     "CHANCMP",     CHANCMP,     8,    0,           fields::ADDRESS,       nullptr,                nullptr},
    {R_CDAR,        "CDAR",        CDAR,        8,    0,           fields::CDAR,          nullptr,                nullptr},
    {R_CHANERR,     "CHANERR",     CHANERR,     4,    0,           fields::CHANERR,       nullptr,                nullptr},
    {R_CHANERR_MSK, "CHANERR_MSK", CHANERR_MSK, 4,    0,           fields::CHANERR_MSK,   nullptr,                nullptr},
    {R_DCACTRL,     "DCACTRL",     DCACTRL,     4,    0,           fields::DCACTRL,       nullptr,                nullptr},
}};
// clang-format on
static_assert(well_formed(kChannelRegs, kChannelStride));

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
    uint64_t chanctrl = regs_.get(R_CHANCTRL);
    uint64_t chancmp = regs_.get(R_CHANCMP);
    uint64_t errmask = regs_.get(R_CHANERR_MSK);
    uint64_t dcactrl = regs_.get(R_DCACTRL);
    bool armed = armed_;
    regs_.reset();
    regs_.set(R_CHANCTRL, chanctrl);
    regs_.set(R_CHANCMP, chancmp);
    regs_.set(R_CHANERR_MSK, errmask);
    regs_.set(R_DCACTRL, dcactrl);
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
            bool more = work_ || processed_ != regs_.get(R_DMACOUNT);
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
        if (regs_.get(R_CHANERR) != 0)
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
    mark(static_cast<uint16_t>(regs_.get(R_DMACOUNT)), device_.now());
    if (processed_ != regs_.get(R_DMACOUNT) || work_) {
        // ACTIVE before this write returns: ioat_alloc_chan_resources() polls CHANSTS for only
        // ~20 us after starting the null descriptor.
        state_ = ChanState::Active;
        kick();
    }
}

void Channel::start_from_chainaddr()
{
    // A descriptor in progress is started again from the new chain, as Linux restarts from
    // the first descriptor it has not seen complete.
    epoch_++;
    work_.reset();
    next_desc_ = regs_.get(R_CHAINADDR);
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
            if (processed_ == regs_.get(R_DMACOUNT)) {
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
    regs_.set(R_CDAR, addr);
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
    if (err & ~static_cast<uint32_t>(regs_.get(R_CHANERR_MSK))) {
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
            if (err & ~static_cast<uint32_t>(regs_.get(R_CHANERR_MSK))) {
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
    bool caught_up = processed_ == regs_.get(R_DMACOUNT);
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
    regs_.set(R_CHANERR, regs_.get(R_CHANERR) | chanerr);
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
            regs_.set(R_CHANERR, regs_.get(R_CHANERR) | CHANERR_COMPLETION_ADDR_ERR);
    }
    if (chanctrl() & CHANCTRL_ERR_INT_EN)
        signal_interrupt();
}

bool Channel::write_completion(uint64_t status)
{
    uint64_t where = regs_.get(R_CHANCMP);
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

void Channel::save(StateWriter& w) const
{
    for (unsigned i = 0; i < R_CHANNEL_REG_COUNT; i++)
        w.u64(regs_.get(i));
    w.u8(static_cast<uint8_t>(state_));
    w.u64(next_desc_);
    w.u64(last_completed_);
    w.u16(processed_);
    w.u64(started_);
    w.boolean(armed_);
    w.boolean(irq_pending_);
    w.boolean(work_.has_value());
    if (work_) {
        const Work& k = *work_;
        w.u64(k.addr);
        w.u32(k.desc.size);
        w.u32(k.desc.ctl);
        w.u64(k.desc.src_addr);
        w.u64(k.desc.dst_addr);
        w.u64(k.desc.next);
        w.u64(k.plan.data_at);
        w.u64(k.plan.bandwidth);
        w.u64(k.plan.done_at);
        w.u32(k.plan.fail);
        w.u64(k.plan.move_limit);
        w.u8(k.plan.corrupt_xor);
        w.boolean(k.plan.drop_interrupt);
        w.u64(k.len);
        w.u64(k.moved);
        w.boolean(k.data_done);
    }
    w.u64(stats_.descriptors);
    w.u64(stats_.bytes);
    w.u64(stats_.errors);
    w.u64(stats_.interrupts);
    w.u64(model_end_);
    w.u8(static_cast<uint8_t>(nmarks_));
    for (unsigned i = 0; i < nmarks_; i++) {
        w.u16(marks_[i].count);
        w.u64(marks_[i].at);
    }
}

bool Channel::load(StateReader& r)
{
    power_on_reset();
    for (unsigned i = 0; i < R_CHANNEL_REG_COUNT; i++)
        regs_.set(i, r.u64());
    uint8_t st = r.u8();
    if (st > static_cast<uint8_t>(ChanState::Halted))
        r.reject();
    state_ = static_cast<ChanState>(st & 3);
    next_desc_ = r.u64();
    last_completed_ = r.u64();
    processed_ = r.u16();
    started_ = r.u64();
    armed_ = r.boolean();
    irq_pending_ = r.boolean();
    if (r.boolean()) {
        Work k;
        k.addr = r.u64();
        k.desc.size = r.u32();
        k.desc.ctl = r.u32();
        k.desc.src_addr = r.u64();
        k.desc.dst_addr = r.u64();
        k.desc.next = r.u64();
        k.plan.data_at = std::min(r.u64(), kTimeLimit);
        k.plan.bandwidth = r.u64();
        k.plan.done_at = std::min(r.u64(), kTimeLimit);
        k.plan.fail = r.u32() & CHANERR_ALL;
        k.plan.move_limit = r.u64();
        k.plan.corrupt_xor = r.u8();
        k.plan.drop_interrupt = r.boolean();
        k.len = r.u64();
        k.moved = r.u64();
        k.data_done = r.boolean();
        // The same checks a fetched descriptor passed: a stream cannot smuggle in a range
        // the device would have refused.
        // (A descriptor whose error CHANERR_MSK masked moves nothing: len 0.)
        if (k.len > k.desc.size || k.moved > k.len || wraps(k.desc.src_addr, k.len) ||
            wraps(k.desc.dst_addr, k.len) || (k.len && validate(k.desc) != 0))
            r.reject();
        work_ = k;
    }
    stats_.descriptors = r.u64();
    stats_.bytes = r.u64();
    stats_.errors = r.u64();
    stats_.interrupts = r.u64();
    model_end_ = std::min(r.u64(), kTimeLimit);
    nmarks_ = r.u8();
    if (nmarks_ > kMarks)
        r.reject();
    for (unsigned i = 0; i < nmarks_ && i < kMarks; i++) {
        marks_[i].count = r.u16();
        marks_[i].at = std::min(r.u64(), kTimeLimit);
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
