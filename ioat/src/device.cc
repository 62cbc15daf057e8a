// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT device level: global registers, channel dispatch, interrupts, timers, migration.

#include "dmalab/ioat/device.h"

#include <algorithm>
#include <cassert>

#include "channel.h"

namespace dmalab::ioat
{

namespace
{

constexpr RegHook<Ioat> kGlobalHooks[] = {
    {"INTRCTRL", &Ioat::read_intrctrl, &Ioat::write_intrctrl},
};
constexpr auto kGlobalRegs = bank_table<Ioat, kGlobalRegCount>(kGlobalRegisters, kGlobalHooks);
static_assert(well_formed(kGlobalRegs, kChannelStride));

TimingPolicy::Params timing_params(const Config& c)
{
    return {c.bandwidth, c.latency_ns, c.jitter_ns, c.seed};
}

} // namespace

Decision TimingPolicy::decide(const DescriptorInfo& d, uint64_t now)
{
    Pacer::Pace pace = pacer_.next(d.len, now);
    Decision x;
    x.data_at = pace.data_at;
    x.bandwidth = pace.bandwidth;
    x.done_at = pace.done_at;
    return x;
}

const char* Ioat::check(const Config& c)
{
    if (c.channels < 1 || c.channels > kMaxChannels)
        return "channels must be between 1 and 16";
    if (c.xfercap_log < 1 || c.xfercap_log > 31)
        return "xfercap must be 1..31";
    if (c.step_bytes == 0 || c.step_descriptors == 0)
        return "the step budget must be non-zero";
    if (c.latency_ns > kMaxDelayNs || c.jitter_ns > kMaxDelayNs || c.step_gap_ns > kMaxDelayNs)
        return "latency-ns, jitter-ns and step-gap-ns must be at most 2^50 ns (about 13 days)";
    return nullptr;
}

Ioat::Ioat(const Config& config, const Host& host)
    : config_(config), host_(host), timing_(timing_params(config)), policy_(&timing_),
      regs_(*this, kGlobalRegs, kChannelStride, host.log, "dmalab-ioat")
{
    assert(check(config_) == nullptr && "validate the configuration with Ioat::check()");
    regs_.set_reset_value(global_reg("CHANCNT"), config_.channels);
    regs_.set_reset_value(global_reg("XFERCAP"), config_.xfercap_log);
    regs_.set_reset_value(global_reg("CBVER"), config_.cbver);
    regs_.set_reset_value(global_reg("DMACAPABILITY"), config_.dmacap);
    for (unsigned i = 0; i < config_.channels; i++)
        channels_.push_back(std::make_unique<Channel>(*this, i));
    reset();
}

Ioat::~Ioat() = default;

void Ioat::reset()
{
    regs_.reset();
    for (auto& c : channels_)
        c->power_on_reset();
    timing_.reset();
    policy_->reset();
    update_line();
}

void Ioat::set_policy(DescriptorPolicy* policy)
{
    policy_ = policy ? policy : &timing_;
}

void Ioat::timer(unsigned id)
{
    const size_t n = channels_.size();
    if (id < n)
        channels_[id]->step();
    else if (id < 2 * n)
        channels_[id - n]->interrupt_timer();
}

uint64_t Ioat::interrupt_delay_ns() const
{
    // Microseconds: Linux writes intr_coalesce (its sysfs attribute, in microseconds per
    // pending descriptor) times the descriptors still pending (__ioat_cleanup,
    // drivers/dma/ioat/dma.c).
    return (regs_.get(global_reg("INTRDELAY")) & INTRDELAY_MASK) * 1000;
}

bool Ioat::release(unsigned rule)
{
    // Every channel hears it, whatever an earlier one did (its step may call out).
    bool ended = false;
    for (auto& c : channels_)
        ended |= c->release(rule);
    return ended;
}

uint64_t Ioat::mmio_read(uint32_t offset, unsigned size)
{
    if (offset < kChannelStride) {
        uint64_t v = regs_.read(offset, size);
        update_line(); // a read of ATTNSTATUS clears it
        return v;
    }
    unsigned ch = offset / kChannelStride - 1;
    if (ch < channels_.size())
        return channels_[ch]->mmio_read(offset % kChannelStride, size);
    logf(host_.log, LogKind::GuestError, "dmalab-ioat: read of undecoded offset 0x%x", offset);
    return 0;
}

void Ioat::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    if (offset < kChannelStride) {
        regs_.write(offset, value, size);
        return;
    }
    unsigned ch = offset / kChannelStride - 1;
    if (ch < channels_.size()) {
        channels_[ch]->mmio_write(offset % kChannelStride, value, size);
        return;
    }
    logf(host_.log, LogKind::GuestError, "dmalab-ioat: write of undecoded offset 0x%x", offset);
}

uint64_t Ioat::read_intrctrl(uint64_t stored)
{
    uint64_t v = stored;
    if (regs_.get(global_reg("ATTNSTATUS"))) {
        v |= INTRCTRL_INT_STATUS;
        if (stored & INTRCTRL_MASTER_INT_EN)
            v |= INTRCTRL_INT;
    }
    return v;
}

void Ioat::write_intrctrl(uint64_t, uint64_t, uint64_t)
{
    update_line();
}

bool Ioat::update_line()
{
    // The shared interrupt (INTx) is high while a channel asks for attention and interrupts
    // are enabled; the single-vector handler (ioat_dma_do_interrupt) reads ATTNSTATUS, which
    // clears it and so lowers the line.
    bool level = (regs_.get(global_reg("INTRCTRL")) & INTRCTRL_MASTER_INT_EN) &&
                 regs_.get(global_reg("ATTNSTATUS"));
    if (level == line_)
        return false;
    line_ = level;
    return host_.irq.set_level(level) && level;
}

bool Ioat::channel_interrupt(unsigned channel)
{
    regs_.set(global_reg("ATTNSTATUS"), regs_.get(global_reg("ATTNSTATUS")) | 1u << channel);
    uint64_t intrctrl = regs_.get(global_reg("INTRCTRL"));
    const bool master = intrctrl & INTRCTRL_MASTER_INT_EN;
    const bool per_channel = intrctrl & INTRCTRL_MSIX_VECTOR_CONTROL;
    // The master enable gates the shared interrupt (INTx, and the one message of MSI or of
    // MSI-X without vector control), which Linux's ioatdma always sets. Per-channel MSI-X
    // vectors are not gated by it: they have their own mask bits, and a driver written
    // against real CBDMA (Linux's vfio selftest driver for CB3.x, which sets only
    // MSIX_VECTOR_CONTROL) gets its per-channel messages without it.
    if (!master && !per_channel)
        return false;
    // INTx: the level follows ATTNSTATUS. A rising line counts as an interrupt sent.
    bool sent = master && update_line();
    // Messages: with MSI-X vector control each channel has its own vector; otherwise
    // everything goes through vector 0 and software finds the channel in ATTNSTATUS.
    unsigned vector = per_channel ? channel : 0;
    bool msg = host_.irq.notify(vector);
    if (Observer* o = host_.observer)
        o->interrupt(vector, msg || sent);
    return msg || sent;
}

ChannelStats Ioat::stats(unsigned channel) const
{
    return channels_.at(channel)->stats();
}

ChanState Ioat::channel_state(unsigned channel) const
{
    return channels_.at(channel)->state();
}

namespace
{
constexpr uint32_t kStateMagic = 0x494f4154; // "IOAT"
// 2: CHANERR_INT and its mask left the stream; 3: holds a release ends (fault plans);
// 4: the operation in progress (XOR, PQ, fill), counters by operation, a held interrupt.
constexpr uint16_t kStateVersion = 4;
} // namespace

void Ioat::save(StateWriter& w) const
{
    w.u32(kStateMagic);
    w.u16(kStateVersion);
    w.u8(static_cast<uint8_t>(channels_.size()));
    for (unsigned i = 0; i < kGlobalRegCount; i++)
        w.u64(regs_.get(i));
    // The model's own policy; one set with set_policy() migrates with whoever owns it.
    timing_.save(w);
    for (const auto& c : channels_)
        c->save(w);
}

bool Ioat::load(StateReader& r)
{
    reset();
    if (r.u32() != kStateMagic || r.u16() != kStateVersion || r.u8() != channels_.size())
        r.reject();
    for (unsigned i = 0; i < kGlobalRegCount && r.ok(); i++) {
        uint64_t v = r.u64();
        // What the properties set (channels, xfercap, cbver, dmacap) is the destination's
        // own configuration: a stream from a device configured otherwise is refused, never
        // taken over.
        if (i == global_reg("CHANCNT") || i == global_reg("XFERCAP") || i == global_reg("CBVER") ||
            i == global_reg("DMACAPABILITY")) {
            if (v != regs_.get(i))
                r.reject();
            continue;
        }
        regs_.set(i, v);
    }
    timing_.load(r);
    for (auto& c : channels_)
        if (r.ok() && !c->load(r))
            r.reject();
    if (!r.finished()) {
        reset();
        return false;
    }
    // The INTx level follows from the registers: the destination's line starts low.
    line_ = false;
    update_line();
    return true;
}

} // namespace dmalab::ioat
