// SPDX-License-Identifier: GPL-2.0-or-later
// Reads an arbitrary byte string as what a guest (and the host around it) could do to an
// I/OAT device: register and config writes and reads of any size and value, descriptor and
// data bytes in memory, holes, DMA windows onto the device's own registers and onto its reset,
// device resets mid-ring, timing and policy changes (delays, failures, short and corrupt
// writes, holds), fault-rule releases, save/load round trips, timer expiries, and ATS: the
// device-TLB turned on and off, an IOMMU that remaps and refuses pages behind it, and
// device-TLB invalidations of any range at any time. Shared by
// the libFuzzer target and the robustness unit test; it checks the invariants that must hold
// whatever happens.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../../common/testing/fuzz.h"
#include "dmalab/ats_memory.h"
#include "dmalab/ioat/device.h"
#include "../testing/offsets.h"

namespace dmalab::ioat::fuzz
{

inline constexpr unsigned kStepDescriptors = 16;
inline constexpr uint64_t kStepBytes = 4096;
inline constexpr uint8_t kMaxXfercap = 15;
// A channel has at most 65535 descriptors issued; each takes at most a fetch step, one step
// per kStepBytes of data and a completion step.
inline constexpr uint64_t kDrainLimit = 65536ull * (3 + (1u << kMaxXfercap) / kStepBytes);
inline constexpr uint64_t kWindow = 0xf000;
inline constexpr unsigned kRoundTrips =
    4; // save/load round trips checked per program // device windows, inside the fake's RAM range

// Keeps DMACOUNT's high byte 0 in every write the program makes: at most 255 descriptors
// per start, so an execution stays short. The unit tests drive the full 65535
// (SelfLoopWithMaximalCount, AChainThatNeverCatchesUpIsBounded).
inline uint64_t tame(uint32_t off, uint64_t value, unsigned size, bool full = false)
{
    if (full)
        return value;
    for (unsigned i = 0; i < size; i++) {
        uint32_t at = off + i;
        if (at >= kChannelStride && at % kChannelStride == DMACOUNT + 1)
            value &= ~(uint64_t{0xff} << (8 * i));
    }
    return value;
}

using dmalab::fuzz::violated;

// A policy driven by the input: delays, failures, short and corrupt writes.
class FuzzPolicy final : public DescriptorPolicy
{
  public:
    explicit FuzzPolicy(uint64_t seed) : prng_(seed) {}
    Decision decide(const DescriptorInfo& d, uint64_t now) override
    {
        Decision x;
        uint64_t r = prng_.next();
        x.data_at = now + (r & 0xfff);
        x.bandwidth = (r >> 12) & 1 ? 1 + ((r >> 13) & 0xfffffff) : 0;
        x.done_at = x.data_at + ((r >> 41) & 0x3fff);
        if ((r >> 55) % 16 == 0)
            x.fail = static_cast<uint32_t>(1u << ((r >> 59) % 19));
        if ((r >> 60) % 8 == 0)
            x.move_limit = d.len / 2;
        if ((r >> 63) & 1)
            x.corrupt_xor = static_cast<uint8_t>(r);
        x.drop_interrupt = (r >> 52) % 8 == 0;
        if ((r >> 49) % 4 == 0) { // the data's wait is a hold a release can end
            x.release_rule = static_cast<uint32_t>((r >> 47) % 4);
            x.held_data_ns = r & 0xfff;
        }
        return x;
    }

  private:
    Prng prng_;
};

// The IOMMU behind an ATS device: each page translates to a page of the fake's RAM, moved by
// `shift` pages; with `refuse`, one page in eight (by number) is refused and another is
// answered as VT-d answers its interrupt address range (R=0, W=1, U=1: written untranslated
// at the IOVA, not read), and with `read_only` writes are refused.
class FuzzPort final : public AtsPort
{
  public:
    explicit FuzzPort(uint64_t ram) : pages_(ram / AtsMemory::kPage) {}
    Reply translate(uint64_t page, Access dir, const MemAttrs& attrs) override
    {
        if (attrs.translated)
            violated("a translation request for a translated address");
        uint64_t n = page / AtsMemory::kPage;
        if ((refuse && n % 8 == 0) || (read_only && dir == Access::Write))
            return {DmaError::IommuFault, 0};
        if (refuse && n % 8 == 1)
            return dir == Access::Write ? Reply{DmaError::None, 0, true}
                                        : Reply{DmaError::IommuFault, 0};
        return {DmaError::None, (n + shift) % pages_ * AtsMemory::kPage};
    }
    uint64_t shift = 0;
    bool refuse = false;
    bool read_only = false;

  private:
    uint64_t pages_;
};

class Program : dmalab::fuzz::Input
{
  public:
    // full_counts: DMACOUNT writes as given (up to 65535 descriptors), not tamed.
    Program(const uint8_t* data, size_t size, bool full_counts = false)
        : Input(data, size), full_(full_counts)
    {
    }

    void run()
    {
        testing::FakeMemory mem(64u << 10);
        testing::FakeTimers timers;
        testing::FakeInterrupts irq;
        testing::FakeLog log;
        Config c = config();
        irq.intx = byte() & 1;
        irq.messages = !irq.intx;
        FuzzPort port(mem.ram.size());
        AtsMemory ats(mem, port);
        Ioat dev(c, Host{ats, timers, irq, log, nullptr});
        FuzzPolicy policy(c.seed);

        while (more())
            operation(dev, mem, timers, irq, c, policy, ats, port);
        drain(dev, mem, timers, irq, c);
    }

  private:
    // The device's configuration, from the program's first bytes.
    Config config()
    {
        Config c;
        c.channels = 1 + byte() % 4;
        c.xfercap_log = static_cast<uint8_t>(8 + byte() % (kMaxXfercap - 7));
        c.step_bytes = kStepBytes;
        c.step_descriptors = kStepDescriptors;
        c.latency_ns = byte() % 4 * 1000;
        uint8_t bw = byte();
        c.bandwidth = bw % 4 == 0 ? 0 : uint64_t{bw} << 20;
        c.jitter_ns = byte() % 4 * 500;
        c.seed = byte();
        uint8_t mode = byte();
        c.sync_start = mode & 1; // a doorbell's first step inside the write, or on a timer
        // The operations: copy only (skx), the bwd personality's RAID set, or that with
        // descriptor write-back of validation results.
        if (mode & 6)
            c.dmacap =
                CAP_FILL_BLOCK | CAP_XOR | CAP_PQ | CAP_RAID16SS | ((mode & 4) ? CAP_DWBES : 0);
        return c;
    }

    // One operation of the program.
    void operation(Ioat& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
                   testing::FakeInterrupts& irq, const Config& c, FuzzPolicy& policy,
                   AtsMemory& ats, FuzzPort& port)
    {
        uint8_t op = byte();
        switch (op % 16) {
        case 0:
        case 1:
        case 2: { // register write, any size, any value
            uint32_t off = u16() % 0x400;
            unsigned size = 1u << (byte() % 4);
            dev.mmio_write(off, tame(off, u64(), size, full_), size);
            break;
        }
        case 3: { // register write of a small value (plausible addresses and counts)
            uint32_t off = u16() % 0x400;
            unsigned size = 1u << (byte() % 4);
            dev.mmio_write(off, tame(off, u16(), size, full_), size);
            break;
        }
        case 4: {
            uint32_t off = u16() % 0x400;
            dev.mmio_read(off, 1u << (byte() % 4));
            break;
        }
        case 5: { // timer expiries
            unsigned n = 1 + byte() % 8;
            for (unsigned i = 0; i < n && !timers.pending.empty(); i++)
                step(dev, mem, timers, irq, c);
            break;
        }
        case 6:
        case 7:
        case 8:
        case 9:
        case 10:
        case 11:
            memory(dev, mem, op % 16);
            break;
        case 12: // a reset, or a fault rule's release (from the fault doorbell)
            if (byte() & 1)
                dev.reset();
            else
                dev.release(byte() % 4);
            break;
        case 13: { // a register read (config space, once here, is the glue's now)
            uint32_t off = u16() % 0x400;
            dev.mmio_read(off, 1u << (byte() % 4));
            break;
        }
        case 14: // a save/load round trip; a few per program show as much as many
            if (round_trips_++ < kRoundTrips)
                dmalab::fuzz::round_trip<Ioat, Host>(dev, mem, c);
            break;
        case 15: // policy and timing changes at run time, and ATS
            switch (byte() % 4) {
            case 0:
                dev.set_policy(&policy);
                break;
            case 1:
                dev.set_policy(nullptr);
                dev.timing().set_params(
                    {uint64_t{byte()} << 16, byte() * 100u, byte() * 10u, byte()});
                break;
            case 2:
                ats_control(ats, port);
                break;
            case 3: { // a device-TLB invalidation of any range, however the IOMMU changed
                uint64_t first = u64();
                uint64_t last = byte() & 1 ? first + u16() : u64();
                ats.invalidate(first, last);
                break;
            }
            }
            break;
        }
    }

    // The guest turns ATS on or off, or the IOMMU's tables change (without telling the
    // device: its entries go stale until an invalidation).
    void ats_control(AtsMemory& ats, FuzzPort& port)
    {
        uint8_t b = byte();
        ats.set_enabled(b & 1);
        ats.set_audit(b & 2);
        port.refuse = b & 4;
        port.read_only = b & 8;
        port.shift = b >> 4;
    }

    // What the device's DMA reaches: memory contents (6, 7), holes (8), mappings (9), windows
    // onto its own registers (10) and one that resets it (11).
    void memory(Ioat& dev, testing::FakeMemory& mem, unsigned op)
    {
        switch (op) {
        case 6: { // memory: raw bytes
            size_t at = u16() % (mem.ram.size() - 8);
            mem.put<uint64_t>(at, u64());
            break;
        }
        case 7: { // memory: a plausible pointer or size
            size_t at = u16() % (mem.ram.size() - 8);
            mem.put<uint64_t>(at, u16());
            break;
        }
        case 8: // a hole where the device cannot reach
            if (mem.holes.size() < 4) {
                uint64_t at = u16();
                uint64_t len = 1 + byte() * 64u;
                mem.add_hole(at, len, byte() & 1);
            }
            break;
        case 9:
            mem.map_limit = 64 + u16(); // 1-byte mappings only make runs slow
            mem.mappable = byte() & 1;
            break;
        case 10: // the device's own registers and a release, reachable by its own DMA
            if (mem.windows.size() < 2)
                mem.add_window({kWindow, 0x400, [&dev](uint64_t off, const uint8_t* d, size_t n) {
                                    uint64_t v = 0;
                                    for (size_t i = 0; i < n && i < 8; i++)
                                        v |= uint64_t{d[i]} << (8 * i);
                                    if (off >= 0x3f8) { // the fault doorbell's release, re-entered
                                        dev.release(static_cast<unsigned>(v % 4));
                                        return;
                                    }
                                    dev.mmio_write(static_cast<uint32_t>(off), v,
                                                   1u << (n >= 8   ? 3
                                                          : n >= 4 ? 2
                                                          : n >= 2 ? 1
                                                                   : 0));
                                }});
            break;
        case 11: // DMA that resets the whole device (an FLR through config space)
            if (mem.windows.size() < 2)
                mem.add_window({kWindow + 0x800, 0x100,
                                [&dev](uint64_t, const uint8_t*, size_t) { dev.reset(); }});
            break;
        }
    }

    // Whatever was queued finishes in a bounded number of steps, once the guest stops.
    void drain(Ioat& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
               testing::FakeInterrupts& irq, const Config& c)
    {
        // A copy aimed at a window onto the channel's own registers can restart the channel
        // at the same descriptor on every step, as long as the window is there: a loop the
        // guest built, one bounded step at a time, like a guest that keeps pushing DMACOUNT.
        // (In QEMU the re-entrancy guard refuses a device's DMA to its own BAR.) So the
        // windows go first; nothing else can re-arm a channel.
        mem.windows.clear();
        dev.set_policy(nullptr);
        uint64_t steps = 0;
        while (!timers.pending.empty()) {
            step(dev, mem, timers, irq, c);
            if (++steps > kDrainLimit * c.channels)
                violated("work did not drain in bounded steps");
        }
        // With no timer left, no channel may still be active: it would never run again.
        for (unsigned ch = 0; ch < c.channels; ch++)
            if (dev.channel_state(ch) == ChanState::Active)
                violated("an active channel with no step to come (stalled)");
    }

    static void step(Ioat& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
                     testing::FakeInterrupts& irq, const Config& c)
    {
        dmalab::fuzz::run_next_timer(dev, mem, timers, irq, c.channels,
                                     dmalab::fuzz::Rearm::StrictlyLater);
        for (unsigned ch = 0; ch < c.channels; ch++)
            if (dev.channel_state(ch) > ChanState::Halted)
                violated("channel state out of range");
    }

    bool full_;
    unsigned round_trips_ = 0;
};

} // namespace dmalab::ioat::fuzz
