// SPDX-License-Identifier: GPL-2.0-or-later
// A model instance on fake host services, with helpers to build descriptor chains and drive
// channels the way Linux's ioatdma does.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../common/testing/fake_memory.h"
#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/device.h"
#include "../testing/descriptors.h"
#include "../testing/offsets.h"

namespace dmalab::ioat::testing
{

using namespace dmalab::testing; // the fakes

// The rig's configuration: the model's defaults, except that a doorbell schedules the
// channel's first step on a timer (sync_start off) instead of running it inside the
// register write, so a test can look at the channel between the two. Tests of sync start
// turn it on.
inline Config rig_config()
{
    Config c;
    c.sync_start = false;
    return c;
}

// The rig with the RAID personality's operations (bwd: fill, XOR, PQ, 16-source PQ).
inline Config raid_config()
{
    Config c = rig_config();
    c.dmacap = CAP_FILL_BLOCK | CAP_XOR | CAP_PQ | CAP_RAID16SS;
    return c;
}

struct Rig {
    explicit Rig(Config c = rig_config(), size_t ram = 16u << 20, Observer* observer = nullptr)
        : mem(ram), config(c), dev(c, Host{mem, timers, irq, log, observer})
    {
    }

    static uint32_t chan(unsigned ch, uint32_t reg) { return kChannelStride * (ch + 1) + reg; }

    uint64_t rd(unsigned ch, uint32_t reg, unsigned size)
    {
        return dev.mmio_read(chan(ch, reg), size);
    }
    void wr(unsigned ch, uint32_t reg, uint64_t v, unsigned size)
    {
        dev.mmio_write(chan(ch, reg), v, size);
    }
    ChanState state(unsigned ch)
    {
        return static_cast<ChanState>(rd(ch, CHANSTS, 8) & CHANSTS_STATUS_MASK);
    }
    uint64_t completed_addr(unsigned ch)
    {
        return rd(ch, CHANSTS, 8) & CHANSTS_COMPLETED_ADDR_MASK;
    }
    uint32_t chanerr(unsigned ch) { return static_cast<uint32_t>(rd(ch, CHANERR, 4)); }

    // What ioat_alloc_chan_resources() programs before starting a channel, with MSI-X.
    void setup(unsigned ch, uint64_t completion)
    {
        dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL, 1);
        wr(ch, CHANCMD, CHANCMD_RESET, 1);
        wr(ch, CHANCTRL,
           CHANCTRL_INT_REARM | CHANCTRL_ERR_INT_EN | CHANCTRL_ANY_ERR_ABORT_EN |
               CHANCTRL_ERR_COMPLETION_EN,
           2);
        wr(ch, CHANCMP, completion & 0xffffffff, 4);
        wr(ch, CHANCMP + 4, completion >> 32, 4);
    }
    void set_chainaddr(unsigned ch, uint64_t a)
    {
        wr(ch, CHAINADDR, a & 0xffffffff, 4);
        wr(ch, CHAINADDR + 4, a >> 32, 4);
    }
    void issue(unsigned ch, uint16_t count) { wr(ch, DMACOUNT, count, 2); }
    void rearm(unsigned ch) { wr(ch, CHANCTRL, CHANCTRL_INT_REARM, 2); }

    void put_desc(uint64_t at, uint32_t size, uint32_t ctl, uint64_t src, uint64_t dst,
                  uint64_t next)
    {
        DmaDescriptor d{};
        d.size = size;
        d.ctl = ctl;
        d.src_addr = src;
        d.dst_addr = dst;
        d.next = next;
        mem.put(at, d);
    }

    void put_raw(uint64_t at, const RawDescriptor& d) { mem.put(at, d); }
    static RawDescriptor raw(uint32_t size, uint32_t ctl, uint64_t next)
    {
        return raw_descriptor(size, ctl, next);
    }
    uint64_t put_xor(uint64_t at, uint8_t op, uint32_t size, uint64_t dst,
                     const std::vector<uint64_t>& srcs, uint32_t extra = 0)
    {
        return testing::put_xor(mem, at, op, size, dst, srcs, extra);
    }
    uint64_t put_pq(uint64_t at, uint8_t op, uint32_t size, uint64_t p, uint64_t q,
                    const std::vector<uint64_t>& srcs, const std::vector<uint8_t>& coef,
                    uint32_t extra = 0, uint64_t sed = 0)
    {
        return testing::put_pq(mem, at, op, size, p, q, srcs, coef, extra, sed);
    }
    // The null descriptor Linux puts after an XOR to carry its completion and interrupt.
    uint64_t put_null(uint64_t at, uint32_t ctl_bits = ctl::INT_EN | ctl::COMPL_WRITE)
    {
        put_desc(at, 1, ctl::NULL_DESC | ctl_bits, 0, 0, at + 64);
        return at + 64;
    }
    std::vector<uint8_t> bytes(uint64_t at, size_t len) const
    {
        return {mem.ram.begin() + at, mem.ram.begin() + at + len};
    }

    bool pending() const { return !timers.pending.empty(); }
    // Runs the earliest pending timer, at the time it asked for (or now, if later). Returns
    // the timer that ran.
    unsigned step()
    {
        auto next = timers.next();
        EXPECT_TRUE(next.has_value());
        if (!next)
            return ~0u;
        timers.pending.erase(next->first);
        timers.now = std::max(timers.now, next->second);
        dev.timer(next->first);
        return next->first;
    }
    // Runs timers until none is pending; returns how many ran.
    unsigned run_until_idle(unsigned limit = 1000000)
    {
        unsigned steps = 0;
        while (pending() && steps < limit) {
            step();
            steps++;
        }
        return steps;
    }

    void fill(uint64_t at, size_t len, uint8_t seed)
    {
        for (size_t i = 0; i < len; i++)
            mem.ram[at + i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    }
    bool same(uint64_t a, uint64_t b, size_t len)
    {
        return std::equal(mem.ram.begin() + a, mem.ram.begin() + a + len, mem.ram.begin() + b);
    }

    FakeMemory mem;
    FakeTimers timers;
    FakeInterrupts irq;
    FakeLog log;
    Config config;
    Ioat dev;
};

inline constexpr uint32_t kCopyIrq = ctl::INT_EN | ctl::COMPL_WRITE;

// Where the tests keep things in guest memory.
inline constexpr uint64_t kCompletion = 0x1000;
inline constexpr uint64_t kRing = 0x10000;
inline constexpr uint64_t kSrc = 0x100000;
inline constexpr uint64_t kDst = 0x400000;

} // namespace dmalab::ioat::testing
