// SPDX-License-Identifier: GPL-2.0-or-later
// The I/OAT DMA engine model: global registers, channels, interrupts, and the timed steps that
// move data. Reaches the world only through common/'s host interfaces.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dmalab/dma_memory.h"
#include "dmalab/interrupts.h"
#include "dmalab/ioat/policy.h"
#include "dmalab/ioat/spec/registers.h"
#include "dmalab/log.h"
#include "dmalab/model_host.h"
#include "dmalab/regbank.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"

namespace dmalab::ioat
{

class Channel;

struct Config {
    unsigned channels = 4;
    uint8_t xfercap_log = 20; // 1 MiB per descriptor; 0 would mean unlimited, Linux refuses it
    uint8_t cbver = kCbVer33;
    uint32_t dmacap = 0; // only what the model implements is advertised
    // Work one channel does in one step: it stops after moving step_bytes or starting
    // step_descriptors descriptors, and goes on step_gap_ns later in virtual time.
    uint64_t step_bytes = 1u << 20;
    unsigned step_descriptors = 256;
    uint64_t step_gap_ns = 1000;
    // Run a channel's first step inside the register write that starts it (DMACOUNT,
    // RESUME) instead of from a timer at the same virtual time. Bounded like any step.
    bool sync_start = true;
    // The default policy (TimingPolicy): a descriptor completes latency_ns + size / bandwidth
    // + [0, jitter_ns] after it starts; its data moves at `bandwidth` (0: unlimited).
    uint64_t bandwidth = 0;
    uint64_t latency_ns = 0;
    uint64_t jitter_ns = 0;
    uint64_t seed = 0;
};

// The largest latency or jitter the model accepts, so that no sum of times overflows.
inline constexpr uint64_t kMaxDelayNs = uint64_t{1} << 50; // about 13 days

struct OpStats {
    uint64_t descriptors = 0; // operations completed (an extended descriptor is not one)
    uint64_t bytes = 0;       // bytes of their blocks processed
};

struct ChannelStats {
    uint64_t descriptors = 0; // completed, null ones included
    uint64_t bytes = 0;
    uint64_t errors = 0;     // times the channel halted on an error
    uint64_t interrupts = 0; // interrupt messages sent, and INTx assertions
    OpStats ops[kOpKinds];   // the same by operation (OpKind)
};

// What the model does, for tracing. Every method has an empty default.
class Observer
{
  public:
    virtual ~Observer() = default;
    virtual void decided(const DescriptorInfo&, const Decision&) {}
    virtual void completed(unsigned /*channel*/, uint64_t /*desc*/, uint64_t /*bytes*/, OpKind) {}
    virtual void halted(unsigned /*channel*/, uint32_t /*chanerr*/, const DmaResult&) {}
    // The channel wrote (or failed to write: ok false) `status` to its completion area.
    virtual void status(unsigned /*channel*/, uint64_t /*where*/, uint64_t /*status*/, bool /*ok*/)
    {
    }
    virtual void stepped(unsigned /*channel*/, uint64_t /*bytes*/, unsigned /*descs*/,
                         uint64_t /*next_ns, 0: idle*/)
    {
    }
    virtual void interrupt(unsigned /*vector*/, bool /*sent*/) {}
};

using Host = ModelHost<Observer>;

class Ioat
{
  public:
    Ioat(const Config& config, const Host& host);
    ~Ioat();
    Ioat(const Ioat&) = delete;
    Ioat& operator=(const Ioat&) = delete;

    // Why the model cannot represent `config`, or nullptr when it can.
    static const char* check(const Config& config);
    // Two timers per channel: timer i runs channel i's steps, timer channels + i delivers
    // the interrupt INTRDELAY held back.
    static unsigned timer_count(const Config& config) { return 2 * config.channels; }

    uint64_t mmio_read(uint32_t offset, unsigned size);
    void mmio_write(uint32_t offset, uint64_t value, unsigned size);
    // CHANERR_INT and CHANERRMSK_INT, in PCI Express extended configuration space, are
    // the host's: no internal error is modelled, so CHANERR_INT only ever reads 0 and
    // the mask is plain storage (PCI config write masks in the glue, devices/ioat/ioat.c).

    // A timer the model armed has expired.
    void timer(unsigned id);
    // The guest released fault rule `rule` through the fault doorbell: every descriptor the
    // rule holds goes on now. May call out (DMA, interrupts), like a register write. True
    // when a channel held one.
    bool release(unsigned rule);
    // Power-on state: registers, channels, pending timers and the policy's generator.
    void reset();

    // Replaces the per-descriptor policy (nullptr: back to the TimingPolicy). The model does
    // not own it; it must outlive the model or be replaced first.
    void set_policy(DescriptorPolicy* policy);
    TimingPolicy& timing() { return timing_; }

    // Migration. load() accepts only what save() of a model with the same configuration
    // produced, and re-arms the timers the state needs. A policy set with set_policy() is
    // not part of the state: its owner migrates it.
    void save(StateWriter& w) const;
    bool load(StateReader& r);

    const Config& config() const { return config_; }
    unsigned channel_count() const { return static_cast<unsigned>(channels_.size()); }
    ChannelStats stats(unsigned channel) const;
    ChanState channel_state(unsigned channel) const;

    // Used by Channel.
    const Host& host() const { return host_; }
    uint64_t now() const { return host_.timers.now_ns(); }
    DescriptorPolicy& policy() { return *policy_; }
    // INTRDELAY: how long an interrupt waits for others to join it (0: none).
    uint64_t interrupt_delay_ns() const;
    // Returns whether a message was sent or the INTx line rose.
    bool channel_interrupt(unsigned channel);

    // Register hooks (named in the register table).
    uint64_t read_intrctrl(uint64_t stored);
    void write_intrctrl(uint64_t old_value, uint64_t written, uint64_t bytes);

  private:
    // Recomputes the INTx level; true when it rose and the host raised the line.
    bool update_line();

    Config config_;
    Host host_;
    TimingPolicy timing_;
    DescriptorPolicy* policy_;
    RegBank<Ioat> regs_;
    std::vector<std::unique_ptr<Channel>> channels_;
    bool line_ = false; // the INTx level last reported
};

} // namespace dmalab::ioat
