// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT channel behaviour. The channel's register-visible state changes inside the register
// access that causes it; data moves only in run(), called from the device's scheduled step.

#include "channel.h"

#include <cstring>

#include "copy.h"

namespace dmalab::ioat
{

namespace
{

// Register indices: positions in kChannelRegs below.
enum : size_t {
    R_CHANCTRL,
    R_DMA_COMP,
    R_CHANCMD,
    R_DMACOUNT,
    R_CHANSTS,
    R_CHAINADDR,
    R_CHANCMP,
    R_CDAR,
    R_CHANERR,
    R_CHANERR_MSK,
    R_DCACTRL,
    R_COUNT
};

constexpr uint16_t kChanctrlRw = CHANCTRL_PRIORITY_MASK | CHANCTRL_COMPL_DCA_EN |
                                 CHANCTRL_DESC_ADDR_SNOOP_CONTROL | CHANCTRL_ERR_INT_EN |
                                 CHANCTRL_ANY_ERR_ABORT_EN | CHANCTRL_ERR_COMPLETION_EN;

// clang-format off
const RegDef<Channel> kChannelRegs[R_COUNT] = {
    // name         offset       width reset        rw                  w1c          read hook               write hook
    {"CHANCTRL",    CHANCTRL,    2,    0,           kChanctrlRw,        0,           nullptr,                &Channel::write_chanctrl},
    {"DMA_COMP",    DMA_COMP,    2,    DMA_COMP_V2, 0,                  0,           nullptr,                nullptr},
    {"CHANCMD",     CHANCMD,     1,    0,           0,                  0,           &Channel::read_zero,    &Channel::write_chancmd},
    {"DMACOUNT",    DMACOUNT,    2,    0,           0xffff,             0,           nullptr,                &Channel::write_dmacount},
    {"CHANSTS",     CHANSTS,     8,    0,           0,                  0,           &Channel::read_chansts, nullptr},
    {"CHAINADDR",   CHAINADDR,   8,    0,           ~0ull,              0,           nullptr,                nullptr},
    {"CHANCMP",     CHANCMP,     8,    0,           ~0ull,              0,           nullptr,                nullptr},
    {"CDAR",        CDAR,        8,    0,           0,                  0,           nullptr,                nullptr},
    {"CHANERR",     CHANERR,     4,    0,           0,                  CHANERR_ALL, nullptr,                nullptr},
    {"CHANERR_MSK", CHANERR_MSK, 4,    0,           CHANERR_ALL,        0,           nullptr,                nullptr},
    {"DCACTRL",     DCACTRL,     4,    0,           0x0001ffff,         0,           nullptr,                nullptr},
};
// clang-format on

uint64_t le64(const uint8_t* p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint32_t le32(const uint8_t* p)
{
    return static_cast<uint32_t>(le64(p) & 0xffffffffu);
}

DmaDescriptor decode(const uint8_t raw[kDescriptorSize])
{
    DmaDescriptor d;
    d.size = le32(raw + 0);
    d.ctl = static_cast<uint32_t>(le64(raw) >> 32);
    d.src_addr = le64(raw + 8);
    d.dst_addr = le64(raw + 16);
    d.next = le64(raw + 24);
    d.rsv1 = le64(raw + 32);
    d.rsv2 = le64(raw + 40);
    d.user1 = le64(raw + 48);
    d.user2 = le64(raw + 56);
    return d;
}

} // namespace

Channel::Channel(Ioat& device, unsigned index)
    : device_(device), index_(index), regs_(*this, kChannelRegs, kChannelStride)
{
}

void Channel::reset()
{
    // CHANERR_MSK and DCACTRL are configuration the driver sets once; a channel reset keeps
    // them (Linux programs the BWD error mask at interrupt setup, before later resets).
    uint64_t errmask = regs_.get(R_CHANERR_MSK);
    uint64_t dcactrl = regs_.get(R_DCACTRL);
    regs_.reset();
    regs_.set(R_CHANERR_MSK, errmask);
    regs_.set(R_DCACTRL, dcactrl);
    reset_state();
}

void Channel::power_on_reset()
{
    regs_.reset();
    reset_state();
}

void Channel::reset_state()
{
    state_ = ChanState::Halted;
    next_desc_ = 0;
    last_completed_ = 0;
    processed_ = 0;
    armed_ = false;
    irq_pending_ = false;
    in_flight_.reset();
}

uint16_t Channel::chanctrl() const
{
    return static_cast<uint16_t>(regs_.get(R_CHANCTRL));
}

uint64_t Channel::read_chansts(uint64_t)
{
    return (last_completed_ & CHANSTS_COMPLETED_ADDR_MASK) | static_cast<uint64_t>(state_);
}

uint64_t Channel::read_zero(uint64_t)
{
    return 0;
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
        state_ = ChanState::Halted;
        return;
    }
    if (cmd & CHANCMD_SUSPEND) {
        // Visible immediately: ioat_quiesce() spins until CHANSTS leaves ACTIVE/DONE.
        if (state_ == ChanState::Active || state_ == ChanState::Done)
            state_ = ChanState::Suspended;
        return;
    }
    if (cmd & CHANCMD_RESUME) {
        if (state_ == ChanState::Suspended) {
            state_ = processed_ != regs_.get(R_DMACOUNT) ? ChanState::Active : ChanState::Done;
            if (state_ == ChanState::Active)
                device_.kick();
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
    if (processed_ != regs_.get(R_DMACOUNT) &&
        (state_ == ChanState::Active || state_ == ChanState::Done)) {
        // ACTIVE before this write returns: ioat_alloc_chan_resources() polls CHANSTS for only
        // ~20 us after starting the null descriptor.
        state_ = ChanState::Active;
        device_.kick();
    }
}

void Channel::start_from_chainaddr()
{
    // A descriptor still in flight is started again from the new chain, as Linux restarts
    // from the first descriptor it has not seen complete.
    in_flight_.reset();
    next_desc_ = regs_.get(R_CHAINADDR);
    processed_ = 0;
    state_ = ChanState::Done;
}

std::optional<uint64_t> Channel::next_event() const
{
    if (state_ != ChanState::Active)
        return std::nullopt;
    if (in_flight_)
        return in_flight_->done_at;
    if (processed_ != regs_.get(R_DMACOUNT))
        return device_.now();
    return std::nullopt;
}

void Channel::run(Budget& budget)
{
    const uint64_t now = device_.now();
    while (state_ == ChanState::Active && !budget.exhausted()) {
        if (in_flight_) {
            if (in_flight_->done_at > now)
                return; // the device schedules a step for then
            InFlight f = *in_flight_;
            in_flight_.reset();
            complete(f.addr, f.desc, f.bytes);
            continue;
        }
        if (processed_ == regs_.get(R_DMACOUNT))
            break;
        uint64_t addr = next_desc_;
        regs_.set(R_CDAR, addr);
        if (addr & (kDescriptorAlign - 1)) {
            halt(CHANERR_NEXT_DESC_ALIGN_ERR);
            return;
        }
        uint8_t raw[kDescriptorSize];
        if (!device_.memory().read(addr, raw, sizeof(raw))) {
            halt(CHANERR_NEXT_ADDR_ERR);
            return;
        }
        DmaDescriptor desc = decode(raw);
        Outcome out = execute(desc);
        budget.charge(out.bytes);
        if (out.chanerr & ~static_cast<uint32_t>(regs_.get(R_CHANERR_MSK))) {
            halt(out.chanerr);
            return;
        }
        uint64_t done_at = device_.completion_time(now, out.bytes);
        if (done_at > now)
            in_flight_ = InFlight{addr, desc, out.bytes, done_at};
        else
            complete(addr, desc, out.bytes);
    }
    if (state_ == ChanState::Active && !in_flight_ && processed_ == regs_.get(R_DMACOUNT))
        state_ = ChanState::Done;
}

Channel::Outcome Channel::execute(const DmaDescriptor& desc)
{
    Outcome out;
    if (ctl::op(desc.ctl) != OP_COPY) {
        // Only memcpy/null are implemented and advertised (DMACAPABILITY).
        out.chanerr = CHANERR_CONTROL_ERR;
        return out;
    }
    if (desc.ctl & ctl::NULL_DESC)
        return out; // no data phase; completion and interrupt as requested
    uint64_t max = 1ull << device_.config().xfercap_log;
    if (desc.size == 0 || desc.size > max) {
        out.chanerr = CHANERR_LENGTH_ERR;
        return out;
    }
    CopyResult r = copy(device_.memory(), desc.dst_addr, desc.src_addr, desc.size);
    out.bytes = r.bytes;
    if (r.failed == CopyResult::Source)
        out.chanerr = CHANERR_READ_DATA_ERR;
    else if (r.failed == CopyResult::Destination)
        out.chanerr = CHANERR_WRITE_DATA_ERR;
    return out;
}

void Channel::complete(uint64_t desc_addr, const DmaDescriptor& desc, uint64_t bytes)
{
    processed_++;
    last_completed_ = desc_addr;
    next_desc_ = desc.next;
    stats_.descriptors++;
    stats_.bytes += bytes;
    bool caught_up = processed_ == regs_.get(R_DMACOUNT);
    if (desc.ctl & ctl::COMPL_WRITE) {
        ChanState st = caught_up ? ChanState::Done : ChanState::Active;
        write_completion((desc_addr & CHANSTS_COMPLETED_ADDR_MASK) | static_cast<uint64_t>(st));
    }
    if (desc.ctl & ctl::INT_EN)
        signal_interrupt();
}

void Channel::halt(uint32_t chanerr)
{
    regs_.set(R_CHANERR, regs_.get(R_CHANERR) | chanerr);
    state_ = ChanState::Halted;
    stats_.errors++;
    // The completion area then holds the last good descriptor with HALTED status: Linux's
    // ioat_cleanup() checks for that and hands the failed descriptor to ioat_eh().
    if (chanctrl() & CHANCTRL_ERR_COMPLETION_EN)
        write_completion((last_completed_ & CHANSTS_COMPLETED_ADDR_MASK) |
                         static_cast<uint64_t>(ChanState::Halted));
    if (chanctrl() & CHANCTRL_ERR_INT_EN)
        signal_interrupt();
}

void Channel::write_completion(uint64_t status)
{
    uint64_t where = regs_.get(R_CHANCMP);
    uint8_t buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = static_cast<uint8_t>(status >> (8 * i));
    if (!device_.memory().write(where, buf, sizeof(buf))) {
        // Recorded, not recursed: the channel is stopped, but no second completion is tried.
        regs_.set(R_CHANERR, regs_.get(R_CHANERR) | CHANERR_COMPLETION_ADDR_ERR);
        if (state_ != ChanState::Halted) {
            state_ = ChanState::Halted;
            stats_.errors++;
        }
    }
}

void Channel::signal_interrupt()
{
    if (!armed_) {
        irq_pending_ = true;
        return;
    }
    armed_ = false;
    stats_.interrupts++;
    device_.channel_interrupt(index_);
}

} // namespace dmalab::ioat
