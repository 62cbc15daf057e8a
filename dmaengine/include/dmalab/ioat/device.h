// SPDX-License-Identifier: GPL-2.0-or-later
// The I/OAT DMA engine model: global registers, channels, interrupts and the scheduled step
// that moves data. Reaches the world only through DmaMemory, Scheduler and InterruptSink.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dmalab/dma_memory.h"
#include "dmalab/ioat/registers.h"
#include "dmalab/regbank.h"

namespace dmalab::ioat
{

class Channel;

struct Config {
    unsigned channels = 4;
    uint8_t xfercap_log = 20; // 1 MiB per descriptor; 0 would mean unlimited, Linux refuses it
    uint8_t cbver = kCbVer33;
    uint32_t dmacap = 0; // only what the model implements is advertised
    // Work one scheduled step may do, over all channels: a step stops starting descriptors
    // once it has moved step_bytes or run step_descriptors of them.
    uint64_t step_bytes = 1u << 20;
    unsigned step_descriptors = 256;
    // When a descriptor completes: latency_ns + size / bandwidth after the channel starts it
    // (both 0: within the same step). Its data moves when it starts; its completion (CHANSTS,
    // completion write, interrupt) waits until then, and the channel starts nothing else
    // meanwhile. Completion-timing models and fault injection hook in at Ioat::completion_time.
    uint64_t bandwidth = 0; // bytes per second, 0 for unlimited
    uint64_t latency_ns = 0;
};

struct ChannelStats {
    uint64_t descriptors = 0; // completed, null ones included
    uint64_t bytes = 0;
    uint64_t errors = 0;     // times the channel halted on an error
    uint64_t interrupts = 0; // interrupt messages raised
};

// The per-step work allowance shared by the channels.
struct Budget {
    uint64_t bytes;
    unsigned descriptors;
    bool exhausted() const { return bytes == 0 || descriptors == 0; }
    void charge(uint64_t n)
    {
        bytes = n >= bytes ? 0 : bytes - n;
        descriptors = descriptors ? descriptors - 1 : 0;
    }
};

class Ioat
{
  public:
    Ioat(const Config& config, DmaMemory& memory, Scheduler& scheduler, InterruptSink& irq);
    ~Ioat();
    Ioat(const Ioat&) = delete;
    Ioat& operator=(const Ioat&) = delete;

    // Why the model cannot represent `config`, or nullptr when it can.
    static const char* check(const Config& config);

    uint64_t mmio_read(uint32_t offset, unsigned size);
    void mmio_write(uint32_t offset, uint64_t value, unsigned size);

    // The scheduled step: runs channels round-robin within one Budget and asks the scheduler
    // for another step while work remains.
    void run();
    void reset();

    const Config& config() const { return config_; }
    unsigned channel_count() const { return static_cast<unsigned>(channels_.size()); }
    ChannelStats stats(unsigned channel) const;
    ChanState channel_state(unsigned channel) const;

    // Used by Channel.
    DmaMemory& memory() { return memory_; }
    uint64_t now() const { return scheduler_.now_ns(); }
    // The time a descriptor moving `bytes`, started at `start_ns`, completes.
    uint64_t completion_time(uint64_t start_ns, uint64_t bytes) const;
    void channel_interrupt(unsigned channel);
    // A channel has work it can do now: make sure a step runs soon.
    void kick();

    // Register hooks (named in the register table).
    uint64_t read_intrctrl(uint64_t stored);
    uint64_t read_attnstatus(uint64_t stored);

  private:
    Config config_;
    DmaMemory& memory_;
    Scheduler& scheduler_;
    InterruptSink& irq_;
    std::vector<RegDef<Ioat>> global_defs_; // depends on config_; before regs_, which uses it
    RegBank<Ioat> regs_;
    std::vector<std::unique_ptr<Channel>> channels_;
    uint32_t attnstatus_ = 0;
    unsigned next_channel_ = 0; // round-robin start of the next step
    void schedule_step(uint64_t when_ns);

    bool step_pending_ = false;
    uint64_t step_at_ = 0; // when the pending step was asked for
};

} // namespace dmalab::ioat
