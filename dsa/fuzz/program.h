// SPDX-License-Identifier: GPL-2.0-or-later
// Reads an arbitrary byte string as what a guest (and the host around it) could do to a DSA:
// register and table writes of any size and value, the commands idxd issues with plausible
// and implausible operands, 64-byte portal stores of descriptors built from plausible fields
// (every opcode, flags, addresses in RAM, in holes, in a window onto the device's own BARs,
// wrapping past 2^64; DIF fields in whole blocks; batches whose lists hold batches, drains
// and themselves), portal writes
// of every other shape, memory and holes, Bus Master Enable toggles, halts, resets, save/load
// round trips, timer expiries, and a fault plan of every kind the device takes (its holds
// released at any time). Shared by the libFuzzer target and the robustness unit
// test; it checks the invariants that must hold whatever happens, and that whatever the
// guest queued ends in a bounded number of steps once it stops.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../common/testing/fuzz.h"
#include "dmalab/dsa/device.h"
#include "dmalab/dsa/faults.h"

namespace dmalab::dsa::fuzz
{

using dmalab::fuzz::violated;

inline constexpr uint64_t kRam = 64u << 10;
inline constexpr uint64_t kWindow = 0xe000;       // a window onto BAR 0, inside the fake's range
inline constexpr uint64_t kPortalWindow = 0xf000; // and one onto BAR 2
inline constexpr uint8_t kMaxXferShift = 16;
inline constexpr uint64_t kStepBytes = 4096;
inline constexpr unsigned kRoundTrips = 4;
// Every descriptor a WQ holds (at most its size) runs to its end in at most one step per
// kStepBytes of each range plus a few; batches of at most 2^kMaxBatchShift each the same.
inline constexpr uint8_t kMaxBatchShift = 5;
inline constexpr uint64_t kDrainLimit = 200000;
// Every kind a plan may give the device, each on a fraction of the descriptors.
inline constexpr const char* kPlan = R"({"seed": 7, "rules": [
  {"name": "hold", "kind": "delay-data", "delay": "50us", "until": "release", "probability": 0.3},
  {"name": "late", "kind": "delay-completion", "delay": "20us", "until": "release", "probability": 0.2},
  {"name": "order", "kind": "reorder", "delay": "30us", "probability": 0.1},
  {"name": "fault", "kind": "fail", "status": 3, "probability": 0.1},
  {"name": "hw", "kind": "fail", "status": 32, "probability": 0.05},
  {"name": "xor", "kind": "corrupt", "xor": 255, "probability": 0.2},
  {"name": "cut", "kind": "shorten", "bytes": 100, "probability": 0.2},
  {"name": "quiet", "kind": "drop-interrupt", "probability": 0.2}]})";
inline constexpr unsigned kPlanRules = 8;

class Program : dmalab::fuzz::Input
{
  public:
    Program(const uint8_t* data, size_t size) : Input(data, size) {}

    // The model's counters at the end, for tests that check a program reached the data path.
    Counters run()
    {
        testing::FakeMemory mem(kRam);
        testing::FakeTimers timers;
        testing::FakeInterrupts irq;
        testing::FakeLog log;
        const Config c = config();
        Dsa dev(c, Host{mem, timers, irq, log, nullptr});
        dev.set_bus_master(true);
        if (byte() & 1) {
            std::string err;
            if (!faults::apply_plan(inj_, kPlan, fault_spec(c.wqs), "", &err))
                violated("the fuzzer's plan was refused");
            dev.set_injector(&inj_);
        }
        while (more())
            operation(dev, mem, timers, irq, c);
        drain(dev, mem, timers, irq, c);
        return dev.counters();
    }

  private:
    Config config()
    {
        Config c;
        c.wqs = 1 + byte() % 4;
        c.engines = 1 + byte() % 3;
        c.groups = 1 + byte() % 2;
        c.total_wq_size = 1 + byte() % 64;
        c.msix_vectors = 2 + byte() % c.wqs;
        c.max_xfer_shift = static_cast<uint8_t>(1 + byte() % kMaxXferShift);
        c.max_batch_shift = static_cast<uint8_t>(1 + byte() % kMaxBatchShift);
        c.int_handles = byte() & 1;
        c.command_ns = byte() % 4 * 100;
        c.command_jitter_ns = byte() % 4 * 50;
        c.bandwidth = byte() % 4 == 0 ? 0 : uint64_t{1} << 30;
        c.latency_ns = byte() % 4 * 200;
        c.jitter_ns = byte() % 4 * 100;
        c.seed = byte();
        c.step_bytes = kStepBytes;
        c.step_descriptors = 1 + byte() % 16;
        c.step_gap_ns = 100;
        c.sync_start = byte() & 1;
        return c;
    }

    uint64_t address(testing::FakeMemory& mem)
    {
        switch (byte() % 8) {
        case 0:
            return u64(); // anything, wrapping included
        case 1:
            return kWindow + byte() % 0x100; // the device's own registers
        case 2:
            return kPortalWindow + byte() * 8u; // its portals
        case 3:
            return ~uint64_t{0} - byte(); // the top of the address space
        default:
            return u16() % mem.ram.size();
        }
    }

    // A descriptor of plausible fields: any opcode, flags, addresses and sizes.
    void descriptor(uint64_t* w, testing::FakeMemory& mem)
    {
        static constexpr uint8_t kOps[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                           0x09, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x20, 0x3f};
        const uint8_t op = byte() & 0x80 ? byte() : kOps[byte() % sizeof kOps];
        uint64_t flags = byte() & 0x1f;
        if (byte() & 0x80) {
            flags = u16();
            flags |= uint64_t{byte()} << 16;
        }
        const uint64_t low = byte() & 1 ? u64() & 0xffffffff : 0; // PASID, PRIV, reserved
        w[0] = uint64_t{op} << 56 | flags << 32 | low;
        w[1] = byte() & 7 ? address(mem) & ~uint64_t{31} : address(mem);
        w[2] = address(mem);
        w[3] = address(mem);
        const uint64_t size = byte() & 0x80 ? u64() & 0xffffffff : u16() % 0x2000;
        const uint64_t handle = byte() % 8;
        w[4] = size | handle << 32;
        for (unsigned i = 5; i < kDescriptorWords; i++)
            w[i] = byte() & 1 ? u64() : (byte() & 1 ? address(mem) : u16());
        if (op >= static_cast<uint8_t>(Opcode::DifCheck) &&
            op <= static_cast<uint8_t>(Opcode::DifUpdate) && byte() & 1)
            dif_fields(w, static_cast<Opcode>(op), mem);
    }

    // A DIF descriptor that passes the descriptor checks more often than not, so that its
    // blocks run: a record asked for, flag bytes without their reserved bits, whole blocks
    // in RAM, tags that a zeroed source's tuples match at times.
    void dif_fields(uint64_t* w, Opcode op, testing::FakeMemory& mem)
    {
        w[0] = uint64_t{static_cast<uint8_t>(op)} << 56 | uint64_t{flag::CRAV | flag::RCR} << 32;
        w[1] = (u16() % mem.ram.size()) & ~uint64_t{31};
        w[2] = u16() % mem.ram.size();
        w[3] = u16() % mem.ram.size();
        const unsigned code = byte() % 4;
        const bool reads = op != Opcode::DifInsert;
        const bool stamps = op == Opcode::DifInsert || op == Opcode::DifUpdate;
        w[5] = uint64_t{code | (byte() & 0x0cu)} << 16;
        w[5] |= reads ? byte() : 0u;
        w[5] |= stamps ? uint64_t{byte() & 0xf8u} << 8 : 0;
        w[6] = reads && byte() & 1 ? u64() : 0;
        w[7] = stamps && byte() & 1 ? u64() : 0;
        if (op == Opcode::DifCheck)
            w[3] = 0;
        const uint32_t unit = dif::kBlockSizes[code] + (reads ? dif::kTupleSize : 0);
        w[4] = unit * (1 + byte() % 4u); // no interrupt handle without RCI
    }

    void store(Dsa& dev, uint32_t at, const uint64_t* w)
    {
        for (unsigned i = 0; i < kDescriptorWords; i++)
            dev.portal_write(at + 8 * i, w[i], 8);
    }

    // A 64-byte slot of any portal page, of a WQ or one past them; half the time WQ 0's
    // limited MSI-X portal, where idxd submits.
    uint32_t portal(const Config& c)
    {
        const uint32_t slot = byte() % 64;
        if (byte() & 1)
            return DMALAB_DSA_PORTAL_LIMITED_MSIX + slot * 64;
        const uint32_t wq = byte() % (c.wqs + 1);
        const uint32_t page = byte() % 4;
        return wq * DMALAB_DSA_WQ_PORTAL_STRIDE + page * 0x1000 + slot * 64;
    }

    void operation(Dsa& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
                   testing::FakeInterrupts& irq, const Config& c)
    {
        const Layout l = Dsa::layout(c);
        const uint8_t op = byte();
        switch (op % 16) {
        case 0: { // BAR 0, any size, any value, anywhere
            const uint32_t off = u16() % DMALAB_DSA_BAR0_SIZE;
            const unsigned size = 1u << (byte() % 4);
            dev.mmio_write(off, u64(), size);
            break;
        }
        case 1: { // a table entry, plausible values (idxd's configuration)
            const uint32_t off = l.msix_perm + u16() % (l.end - l.msix_perm);
            dev.mmio_write(off & ~3u, byte() & 1 ? u16() : 1u | uint32_t{byte()} << 4, 4);
            break;
        }
        case 2: { // a command as idxd issues it
            const uint32_t operand = byte() & 1 ? u16() : 1u << (byte() % 4);
            const uint32_t int_req = byte() & 1;
            const uint32_t cmd = 1 + byte() % 14u;
            dev.mmio_write(0xa0, int_req << 31 | cmd << 20 | operand, 4);
            break;
        }
        case 3: { // a quick configuration: group 0 with every WQ and engine, WQ sizes
            dev.mmio_write(l.grpcfg, (1u << c.wqs) - 1, 8);
            dev.mmio_write(l.grpcfg + 0x20, (1u << c.engines) - 1, 8);
            for (unsigned wq = 0; wq < c.wqs; wq++) {
                dev.mmio_write(l.wqcfg + 32 * wq, c.total_wq_size / c.wqs, 4);
                dev.mmio_write(l.wqcfg + 32 * wq + 8, 1 | (byte() % 16) << 4, 4);
                dev.mmio_write(l.wqcfg + 32 * wq + 12, c.max_xfer_shift | c.max_batch_shift << 5,
                               4);
            }
            break;
        }
        case 4:
        case 5:
        case 6: { // a descriptor, whole
            uint64_t w[kDescriptorWords];
            descriptor(w, mem);
            store(dev, portal(c), w);
            break;
        }
        case 7: { // a portal write of any shape
            const uint32_t at = portal(c) + byte() % 64;
            const uint64_t v = u64();
            dev.portal_write(at, v, 1u << (byte() % 4));
            break;
        }
        case 8: { // a descriptor in memory (a batch's list)
            uint64_t w[kDescriptorWords];
            descriptor(w, mem);
            const size_t at = (u16() % (mem.ram.size() - 64)) & ~size_t{63};
            for (unsigned i = 0; i < kDescriptorWords; i++)
                mem.put<uint64_t>(at + 8 * i, w[i]);
            break;
        }
        case 9: { // memory: raw bytes
            const size_t at = u16() % (mem.ram.size() - 8);
            mem.put<uint64_t>(at, u64());
            break;
        }
        case 10: // a hole
            if (mem.holes.size() < 4) {
                const uint64_t at = u16();
                const uint64_t len = 1 + byte() * 64u;
                mem.add_hole(at, len, byte() & 1);
            }
            break;
        case 11: // windows onto the device's own BARs, reachable by its own DMA
            if (mem.windows.empty()) {
                mem.add_window({kWindow, 0x100, [&dev](uint64_t off, const uint8_t* d, size_t n) {
                                    dev.mmio_write(static_cast<uint32_t>(off), value(d, n),
                                                   size_of(n));
                                }});
                mem.add_window(
                    {kPortalWindow, 0x1000, [&dev](uint64_t off, const uint8_t* d, size_t n) {
                         dev.portal_write(static_cast<uint32_t>(off), value(d, n), size_of(n));
                     }});
            }
            break;
        case 12: // timer expiries
            for (unsigned n = 1 + byte() % 8; n && !timers.pending.empty(); n--)
                step(dev, mem, timers, irq, c);
            break;
        case 13:
            switch (byte() % 5) {
            case 4: { // the guest releases a rule through the fault doorbell
                const unsigned rule = byte() % (kPlanRules + 1);
                inj_.release(rule);
                dev.release(rule);
                break;
            }
            case 0:
                dev.reset();
                dev.set_bus_master(true);
                break;
            case 1:
                dev.halt(static_cast<ResetType>(byte() % 4));
                break;
            case 2:
                dev.set_bus_master(byte() & 1);
                break;
            case 3: {
                const bool on = byte() & 1;
                dev.set_pasid(on, byte() & 1);
                break;
            }
            }
            break;
        case 14:
            if (round_trips_++ < kRoundTrips)
                dmalab::fuzz::round_trip<Dsa, Host>(dev, mem, c);
            break;
        case 15: {
            const uint32_t off = u16() % DMALAB_DSA_BAR0_SIZE;
            dev.mmio_read(off, 1u << (byte() % 4));
        }
            dev.portal_read(portal(c), 8);
            break;
        }
        if (const char* why = dev.invariant_violation())
            violated(why);
    }

    static uint64_t value(const uint8_t* d, size_t n)
    {
        uint64_t v = 0;
        for (size_t i = 0; i < n && i < 8; i++)
            v |= uint64_t{d[i]} << (8 * i);
        return v;
    }
    static unsigned size_of(size_t n) { return n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : 1; }

    // Once the guest stops, whatever it queued ends in bounded steps, and nothing waits
    // for a step that never comes.
    void drain(Dsa& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
               testing::FakeInterrupts& irq, const Config& c)
    {
        uint64_t steps = 0;
        while (!timers.pending.empty()) {
            step(dev, mem, timers, irq, c);
            if (++steps > kDrainLimit)
                violated("work did not drain in bounded steps");
        }
        if (dev.mmio_read(0xa8, 4) & CMDSTS_ACTIVE)
            violated("a command stays active with no step to come (stalled)");
        for (unsigned wq = 0; wq < c.wqs; wq++)
            if (dev.wq(wq).occupancy && dev.wq(wq).enabled && dev.wq(wq).engines)
                violated("a WQ holds descriptors with no step to come (stalled)");
    }

    static void step(Dsa& dev, testing::FakeMemory& mem, testing::FakeTimers& timers,
                     testing::FakeInterrupts& irq, const Config& c)
    {
        dmalab::fuzz::run_next_timer(dev, mem, timers, irq, c.msix_vectors,
                                     dmalab::fuzz::Rearm::NotInPast);
        if (const char* why = dev.invariant_violation())
            violated(why);
    }

    unsigned round_trips_ = 0;
    faults::Injector inj_;
};

} // namespace dmalab::dsa::fuzz
