// SPDX-License-Identifier: GPL-2.0-or-later
// Reads an arbitrary byte string as what a guest could do to an I/OAT device: register writes
// and reads of any size and value, descriptor and data bytes in memory, holes in memory, and
// scheduled steps. Shared by the libFuzzer target and the robustness unit test; it checks the
// invariants that must hold whatever the guest does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "../../common/testing/fake_memory.h"
#include "dmalab/ioat/device.h"

namespace dmalab::ioat::fuzz
{

// Every step completes or starts at least one descriptor (or halts a channel), and a channel
// has at most 65535 descriptors issued: twice that many steps per channel drain anything.
inline constexpr unsigned kStepDescriptors = 16;
inline constexpr unsigned kDrainLimit = 2 * 65536 + 16;

[[noreturn]] inline void violated(const char* what)
{
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
}

class Program
{
  public:
    Program(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

    void run()
    {
        testing::FakeMemory mem(64u << 10);
        testing::FakeTimers timers;
        testing::FakeInterrupts irq;
        testing::FakeLog log;
        Config c;
        c.channels = 1 + byte() % 4;
        c.xfercap_log = static_cast<uint8_t>(8 + byte() % 8);
        c.step_bytes = 4096;
        c.step_descriptors = kStepDescriptors;
        c.latency_ns = byte() % 4 * 1000;
        Ioat dev(c, Host{mem, timers, irq, log, nullptr});

        while (p_ < end_) {
            uint8_t op = byte();
            switch (op % 10) {
            case 0:
            case 1:
            case 2: { // register write, any size, any value
                uint32_t off = u16() % 0x400;
                unsigned size = 1u << (byte() % 4);
                dev.mmio_write(off, u64(), size);
                break;
            }
            case 3: { // register write of a small value (plausible addresses and counts)
                uint32_t off = u16() % 0x400;
                dev.mmio_write(off, u16(), 1u << (byte() % 4));
                break;
            }
            case 4:
                dev.mmio_read(u16() % 0x400, 1u << (byte() % 4));
                break;
            case 5: { // scheduled steps
                unsigned n = 1 + byte() % 8;
                for (unsigned i = 0; i < n && !timers.pending.empty(); i++)
                    step(dev, mem, timers, irq, c);
                break;
            }
            case 6: // memory: raw bytes
                mem.put<uint64_t>(u16() % (mem.ram.size() - 8), u64());
                break;
            case 7: // memory: a plausible pointer or size
                mem.put<uint64_t>(u16() % (mem.ram.size() - 8), u16());
                break;
            case 8: // a hole where the device cannot reach
                if (mem.holes.size() < 4)
                    mem.add_hole(u16(), 1 + byte() * 64u);
                break;
            case 9:
                mem.map_limit = 1 + u16();
                mem.mappable = byte() & 1;
                break;
            }
        }
        // Whatever was queued finishes in a bounded number of steps.
        unsigned steps = 0;
        while (!timers.pending.empty()) {
            step(dev, mem, timers, irq, c);
            if (++steps > kDrainLimit * c.channels)
                violated("work did not drain in bounded steps");
        }
    }

  private:
    static void step(Ioat& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
                     testing::FakeInterrupts& irq, const Config& c)
    {
        auto [id, when] = *timers.next();
        timers.pending.erase(id);
        if (when <= timers.now && timers.now != 0 && false)
            violated("a step asked to run again at once");
        timers.now = std::max(timers.now, when); // the step runs when it asked to
        dev.timer(id);
        if (timers.over_limit)
            violated("a timer beyond the time limit");
        if (mem.outstanding != 0)
            violated("a mapping was not released");
        for (unsigned v : irq.raised)
            if (v >= c.channels)
                violated("interrupt vector beyond the channel count");
        irq.raised.clear();
        for (unsigned ch = 0; ch < c.channels; ch++) {
            uint64_t sts = dev.mmio_read(kChannelStride * (ch + 1) + CHANSTS, 8);
            if ((sts & CHANSTS_STATUS_MASK) > static_cast<uint64_t>(ChanState::Halted))
                violated("CHANSTS state out of range");
        }
    }

    uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
    uint16_t u16() { return static_cast<uint16_t>(byte() | byte() << 8); }
    uint64_t u64()
    {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= uint64_t{byte()} << (8 * i);
        return v;
    }

    const uint8_t* p_;
    const uint8_t* end_;
};

} // namespace dmalab::ioat::fuzz
