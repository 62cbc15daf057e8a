// SPDX-License-Identifier: GPL-2.0-or-later
// I/OAT device level: global registers, channel dispatch, interrupts, the scheduled step.

#include "dmalab/ioat/device.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "channel.h"

namespace dmalab::ioat
{

namespace
{

// Register indices: positions in the table global_regs() builds.
enum : size_t {
    R_CHANCNT,
    R_XFERCAP,
    R_GENCTRL,
    R_INTRCTRL,
    R_ATTNSTATUS,
    R_CBVER,
    R_PERPORTOFFSET,
    R_INTRDELAY,
    R_CS_STATUS,
    R_DMACAPABILITY,
    R_DCAOFFSET
};

// The global register table depends on the configuration (channel count, version,
// capabilities), so each device builds its own.
std::vector<RegDef<Ioat>> global_regs(const Config& c)
{
    constexpr uint64_t intrctrl_rw = INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL;
    // clang-format off
    std::vector<RegDef<Ioat>> defs = {
        // name            offset         width reset                       rw                w1c read hook
        {"CHANCNT",        CHANCNT,       1,    c.channels,                 0,                0,  nullptr},
        {"XFERCAP",        XFERCAP,       1,    c.xfercap_log,              0,                0,  nullptr},
        {"GENCTRL",        GENCTRL,       1,    0,                          GENCTRL_DEBUG_EN, 0,  nullptr},
        {"INTRCTRL",       INTRCTRL,      1,    0,                          intrctrl_rw,      0,  &Ioat::read_intrctrl},
        {"ATTNSTATUS",     ATTNSTATUS,    4,    0,                          0,                0,  &Ioat::read_attnstatus},
        {"CBVER",          CBVER,         1,    c.cbver,                    0,                0,  nullptr},
        {"PERPORTOFFSET",  PERPORTOFFSET, 2,    kChannelStride,             0,                0,  nullptr},
        {"INTRDELAY",      INTRDELAY,     2,    INTRDELAY_COALESCE_SUPPORT, INTRDELAY_MASK,   0,  nullptr},
        {"CS_STATUS",      CS_STATUS,     2,    0,                          0,                0,  nullptr},
        {"DMACAPABILITY",  DMACAPABILITY, 4,    c.dmacap,                   0,                0,  nullptr},
        {"DCAOFFSET",      DCAOFFSET,     2,    0,                          0,                0,  nullptr},
    };
    // clang-format on
    return defs;
}

} // namespace

const char* Ioat::check(const Config& c)
{
    if (c.channels < 1 || c.channels > kMaxChannels)
        return "channels must be between 1 and 16";
    if (c.xfercap_log < 1 || c.xfercap_log > 31)
        return "xfercap must be 1..31";
    if (c.step_bytes == 0 || c.step_descriptors == 0)
        return "the step budget must be non-zero";
    return nullptr;
}

Ioat::Ioat(const Config& config, DmaMemory& memory, Scheduler& scheduler, InterruptSink& irq)
    : config_(config), memory_(memory), scheduler_(scheduler), irq_(irq),
      global_defs_(global_regs(config)), regs_(*this, global_defs_, kChannelStride)
{
    assert(check(config_) == nullptr && "validate the configuration with Ioat::check()");
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
    attnstatus_ = 0;
    next_channel_ = 0;
}

uint64_t Ioat::mmio_read(uint32_t offset, unsigned size)
{
    if (offset < kChannelStride)
        return regs_.read(offset, size);
    unsigned ch = offset / kChannelStride - 1;
    if (ch < channels_.size())
        return channels_[ch]->mmio_read(offset % kChannelStride, size);
    return 0;
}

void Ioat::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    if (offset < kChannelStride) {
        regs_.write(offset, value, size);
        return;
    }
    unsigned ch = offset / kChannelStride - 1;
    if (ch < channels_.size())
        channels_[ch]->mmio_write(offset % kChannelStride, value, size);
}

uint64_t Ioat::read_intrctrl(uint64_t stored)
{
    uint64_t v = stored;
    if (attnstatus_) {
        v |= INTRCTRL_INT_STATUS;
        if (stored & INTRCTRL_MASTER_INT_EN)
            v |= INTRCTRL_INT;
    }
    return v;
}

uint64_t Ioat::read_attnstatus(uint64_t)
{
    // Reading reports and clears the channels that asked for attention (the single-vector
    // handler, ioat_dma_do_interrupt, reads it once per interrupt).
    uint32_t v = attnstatus_;
    attnstatus_ = 0;
    return v;
}

void Ioat::channel_interrupt(unsigned channel)
{
    attnstatus_ |= 1u << channel;
    if (!(regs_.get(R_INTRCTRL) & INTRCTRL_MASTER_INT_EN))
        return;
    // With MSI-X each channel has its own vector; otherwise everything goes through vector 0
    // and software finds the channel in ATTNSTATUS.
    bool per_channel = regs_.get(R_INTRCTRL) & INTRCTRL_MSIX_VECTOR_CONTROL;
    irq_.raise(per_channel ? channel : 0);
}

uint64_t Ioat::completion_time(uint64_t start_ns, uint64_t bytes) const
{
    uint64_t t = start_ns + config_.latency_ns;
    if (config_.bandwidth) {
        // bytes <= 2^31 (XFERCAP), so neither product overflows.
        const uint64_t bw = config_.bandwidth;
        t += bytes / bw * 1000000000u + bytes % bw * 1000000000u / bw;
    }
    return t;
}

void Ioat::schedule_step(uint64_t when_ns)
{
    if (step_pending_ && step_at_ <= when_ns)
        return;
    step_pending_ = true;
    step_at_ = when_ns;
    scheduler_.schedule_at(when_ns);
}

void Ioat::kick()
{
    schedule_step(now());
}

void Ioat::run()
{
    step_pending_ = false;
    unsigned n = channel_count();
    if (n == 0)
        return;
    Budget budget{config_.step_bytes, config_.step_descriptors};
    // Round-robin, starting one channel further each step, so one busy channel cannot starve
    // the others when the budget runs out.
    for (unsigned i = 0; i < n && !budget.exhausted(); i++)
        channels_[(next_channel_ + i) % n]->run(budget);
    next_channel_ = (next_channel_ + 1) % n;
    // The next step: now if a channel can go on, else the earliest completion due.
    uint64_t t = now();
    std::optional<uint64_t> next;
    for (auto& c : channels_)
        if (auto e = c->next_event())
            next = std::min(next.value_or(*e), *e);
    if (next)
        schedule_step(std::max(*next, t));
}

ChannelStats Ioat::stats(unsigned channel) const
{
    return channels_.at(channel)->stats();
}

ChanState Ioat::channel_state(unsigned channel) const
{
    return channels_.at(channel)->state();
}

} // namespace dmalab::ioat
