// SPDX-License-Identifier: GPL-2.0-or-later
// One I/OAT DMA channel: its register window, the CHANSTS state machine, and the walk along
// the guest's descriptor chain that DMACOUNT drives.
#pragma once

#include <cstdint>
#include <optional>

#include "dmalab/ioat/descriptor.h"
#include "dmalab/ioat/device.h"

namespace dmalab::ioat
{

class Channel
{
  public:
    Channel(Ioat& device, unsigned index);

    uint64_t mmio_read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    void mmio_write(uint32_t offset, uint64_t value, unsigned size)
    {
        regs_.write(offset, value, size);
    }

    // CHANCMD reset: keeps the error mask and DCA control, like the driver expects.
    void reset();
    // Device reset: every register back to its reset value.
    void power_on_reset();
    // When this channel next has something to do: the device's current time if it can run
    // now, the completion time of its descriptor in flight, or nothing while it is idle or
    // stopped.
    std::optional<uint64_t> next_event() const;
    // Runs descriptors until the channel catches up, halts, waits for a completion that is
    // not due yet, or the budget is spent.
    void run(Budget& budget);

    ChanState state() const { return state_; }
    const ChannelStats& stats() const { return stats_; }

    // Register hooks (named in the register table).
    uint64_t read_chansts(uint64_t stored);
    uint64_t read_zero(uint64_t stored);
    void write_chanctrl(uint64_t old_value, uint64_t written, uint64_t bytes);
    void write_chancmd(uint64_t old_value, uint64_t written, uint64_t bytes);
    void write_dmacount(uint64_t old_value, uint64_t written, uint64_t bytes);

  private:
    struct Outcome {
        uint32_t chanerr = 0; // 0: the descriptor completed
        uint64_t bytes = 0;
    };
    Outcome execute(const DmaDescriptor& desc);
    void start_from_chainaddr();
    void reset_state();
    void complete(uint64_t desc_addr, const DmaDescriptor& desc, uint64_t bytes);
    void halt(uint32_t chanerr);
    void write_completion(uint64_t status);
    void signal_interrupt();
    uint16_t chanctrl() const;

    Ioat& device_;
    const unsigned index_;
    RegBank<Channel> regs_;

    ChanState state_ = ChanState::Halted;
    uint64_t next_desc_ = 0;      // bus address of the next descriptor to fetch
    uint64_t last_completed_ = 0; // CHANSTS completed-descriptor address
    uint16_t processed_ = 0;      // descriptors run since the last (re)start, modulo 2^16
    bool armed_ = false;          // the next interrupt event may send a message
    bool irq_pending_ = false;    // an event arrived while disarmed
    // A descriptor whose data has moved but whose completion is not due yet.
    struct InFlight {
        uint64_t addr;
        DmaDescriptor desc;
        uint64_t bytes;
        uint64_t done_at;
    };
    std::optional<InFlight> in_flight_;
    ChannelStats stats_;
};

} // namespace dmalab::ioat
