// SPDX-License-Identifier: GPL-2.0-or-later
// One I/OAT DMA channel: its register window, the CHANSTS state machine, and the walk along
// the guest's descriptor chain that DMACOUNT drives, one descriptor at a time, each in a data
// phase and a completion timed by the device's policy.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/device.h"
#include "engine.h"
#include "operation.h"

namespace dmalab::ioat
{

class Channel
{
  public:
    Channel(Ioat& device, unsigned index);

    uint64_t mmio_read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    // A command (CHANCMD) or doorbell (DMACOUNT) written in pieces or together with another
    // register is refused as a whole: the channel halts with CHANCMD_ERR.
    void mmio_write(uint32_t offset, uint64_t value, unsigned size);

    // CHANCMD reset: keeps what the driver programs once and relies on afterwards.
    void reset();
    // Device reset: every register back to its reset value, nothing pending.
    void power_on_reset();
    // The channel's timer expired: one bounded step.
    void step();
    // Its interrupt timer expired: the interrupt INTRDELAY held back goes out.
    void interrupt_timer();
    // The guest released fault rule `rule` (docs/faults.rst, "until": "release"): a
    // descriptor it holds goes on now, its first step inside the release with sync-start.
    // True when the channel held one.
    bool release(unsigned rule);

    ChanState state() const { return state_; }
    const ChannelStats& stats() const { return stats_; }
    // The time the channel's timer is armed for, if it is.
    std::optional<uint64_t> wake() const { return armed_at_; }

    void save(StateWriter& w) const;
    bool load(StateReader& r);

    // Register hooks (named in the register table).
    uint64_t read_chansts(uint64_t stored);
    void write_chanctrl(uint64_t old_value, uint64_t written, uint64_t bytes);
    void write_chancmd(uint64_t old_value, uint64_t written, uint64_t bytes);
    void write_dmacount(uint64_t old_value, uint64_t written, uint64_t bytes);

  private:
    // An operation the channel has started and not yet completed.
    struct Work {
        uint64_t addr = 0; // its base descriptor
        Operation op;
        Decision plan;
        uint64_t len = 0;   // bytes of its block it processes
        uint64_t moved = 0; // bytes processed so far
        bool data_done = false;
        uint8_t mismatch = 0; // validating forms: kMismatchP, kMismatchQ found so far
    };
    struct Budget {
        uint64_t bytes;
        unsigned descriptors;
    };
    enum class Next { Stop, Later, Now };

    bool fetch(Budget& budget);
    bool read_descriptor(uint64_t addr, RawDescriptor& out);
    bool fetch_extensions(Operation& op, Budget& budget);
    void start(uint64_t addr, const Operation& op, uint32_t err);
    // The CHANERR bits a decoded operation earns on this device (0: none).
    uint32_t check(const Operation& op) const;
    Next data_phase(Budget& budget, uint64_t now, uint64_t& wake);
    BlockResult process(Work& w, uint64_t n, uint64_t epoch);
    bool finish_data(Work& w);
    void complete();
    void halt(uint32_t chanerr, const DmaResult& why = {}, bool write_status = true);
    // False when the status could not be written (wrapping or unreachable address).
    bool write_completion(uint64_t status);
    void signal_interrupt();
    void send_interrupt();
    unsigned interrupt_timer_id() const { return device_.config().channels + index_; }
    bool wrong_size(uint32_t offset, unsigned size) const;
    void start_from_chainaddr();
    void reset_state();
    void kick();
    void arm(uint64_t when);
    void disarm_timer();
    uint16_t chanctrl() const { return static_cast<uint16_t>(regs_.get(channel_reg("CHANCTRL"))); }
    uint32_t error_mask() const
    {
        return static_cast<uint32_t>(regs_.get(channel_reg("CHANERR_MSK")));
    }
    MemAttrs attrs() const;
    // True while nothing has reset or restarted the channel since `epoch` was read: a host
    // callback (DMA, interrupt) can reach back into the device.
    bool still(uint64_t epoch) const { return epoch_ == epoch; }

    Ioat& device_;
    const unsigned index_;
    RegBank<Channel> regs_;

    ChanState state_ = ChanState::Halted;
    uint64_t next_desc_ = 0;      // bus address of the next descriptor to fetch
    uint64_t last_completed_ = 0; // CHANSTS completed-descriptor address
    uint16_t processed_ = 0;      // descriptors completed since the last (re)start, mod 2^16
    uint64_t started_ = 0;        // descriptors started since power-on (for the policy)
    bool armed_ = false;          // the next interrupt event may send a message
    bool irq_pending_ = false;    // an event arrived while disarmed
    std::optional<Work> work_;
    std::optional<uint64_t> armed_at_; // the channel's timer
    std::optional<uint64_t> irq_at_;   // when an interrupt INTRDELAY holds back goes out
    bool in_step_ = false;
    bool rerun_ = false; // asked to run again while in its step
    uint64_t epoch_ = 0;
    ChannelStats stats_;
    Engine engine_;
    bool loadable(const Work& k) const;
    template <class IO, class O> static void io_op(IO& io, O& op);
    template <class IO, class W> static void io_work(IO& io, W& work);
    template <class IO, class C> static void io_progress(IO& io, C& channel);
    template <class IO, class M> static void io_mark(IO& io, M& mark);
    template <class IO, class S> static void io_stats(IO& io, S& stats);

    // The channel's own timeline, so that a host timer that fires late does not push every
    // later descriptor back: a descriptor starts at the later of when software made it
    // visible (the DMACOUNT write that covered it) and when the one before it was modelled
    // to complete, not when a step happened to fetch it.
    uint64_t model_end_ = 0; // modelled completion of the last descriptor, 0 after a (re)start
    struct Mark {
        uint16_t count; // DMACOUNT written
        uint64_t at;    // virtual time of the write
    };
    static constexpr unsigned kMarks = 16;
    Mark marks_[kMarks] = {};
    unsigned nmarks_ = 0; // oldest first; when full, the oldest is dropped
    void mark(uint16_t count, uint64_t at);
    uint64_t submitted_at(uint16_t seq, uint64_t now); // DMACOUNT write that covered `seq`
};

} // namespace dmalab::ioat
