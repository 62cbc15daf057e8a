// SPDX-License-Identifier: GPL-2.0-or-later
// A model instance on fake host services, with helpers to build descriptor chains and drive
// channels the way Linux's ioatdma does.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../common/testing/fake_memory.h"
#include "dmalab/ioat/descriptor.h"
#include "dmalab/ioat/device.h"
#include "../testing/offsets.h"

namespace dmalab::ioat::testing
{

using dmalab::testing::FakeInterrupts;
using dmalab::testing::FakeLog;
using dmalab::testing::FakeMemory;
using dmalab::testing::FakeTimers;

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
        RawDescriptor d{};
        d.word[0] = size | uint64_t{ctl} << 32;
        d.word[words::NEXT] = next;
        return d;
    }

    // An XOR or XOR_VAL as Linux's __ioat_prep_xor_lock() builds it at `at`: sources in the
    // base descriptor and, beyond five, in the extended one at at + 64. `extra` goes into the
    // control word. Returns the address of the descriptor after it.
    uint64_t put_xor(uint64_t at, uint8_t op, uint32_t size, uint64_t dst,
                     const std::vector<uint64_t>& srcs, uint32_t extra = 0)
    {
        bool ext = srcs.size() > kXorBaseSources;
        uint64_t after = at + (ext ? 128 : 64);
        uint32_t c = uint32_t{op} << ctl::OP_SHIFT |
                     static_cast<uint32_t>(srcs.size() - 2) << ctl::SRC_CNT_SHIFT | extra;
        RawDescriptor base = raw(size, c, ext ? at + 64 : after);
        RawDescriptor e = raw(0, 0, after);
        base.word[words::DST] = dst;
        for (size_t i = 0; i < srcs.size(); i++) {
            if (i < kXorBaseSources)
                base.word[words::XOR_SRC[i]] = srcs[i];
            else
                e.word[words::XOR_EXT_SRC[i - kXorBaseSources]] = srcs[i];
        }
        put_raw(at, base);
        if (ext)
            put_raw(at + 64, e);
        return after;
    }

    // A PQ, PQ_VAL or their 16-source forms as __ioat_prep_pq_lock() and
    // __ioat_prep_pq16_lock() build them; the 16-source forms' SED goes at `sed`.
    uint64_t put_pq(uint64_t at, uint8_t op, uint32_t size, uint64_t p, uint64_t q,
                    const std::vector<uint64_t>& srcs, const std::vector<uint8_t>& coef,
                    uint32_t extra = 0, uint64_t sed = 0)
    {
        bool wide = op == OP_PQ_16S || op == OP_PQ_VAL_16S;
        bool ext = !wide && srcs.size() > kPqBaseSources;
        uint64_t after = at + (ext ? 128 : 64);
        unsigned cnt = static_cast<unsigned>(srcs.size()) - (wide ? kMinPq16Sources : 2);
        uint32_t c = uint32_t{op} << ctl::OP_SHIFT | cnt << ctl::SRC_CNT_SHIFT | extra;
        RawDescriptor base = raw(size, c, ext ? at + 64 : after);
        RawDescriptor e = raw(0, 0, after);
        RawDescriptor halves[2] = {};
        base.word[words::P] = p;
        base.word[words::Q] = q;
        for (size_t i = 0; i < srcs.size(); i++) {
            uint64_t byte = uint64_t{coef[i]} << (8 * (i % 8));
            (i < 8 ? base.word[words::COEF] : halves[0].word[words::SED_A_COEF]) |= byte;
            if (wide && i < 2)
                base.word[words::PQ16_SRC[i]] = srcs[i];
            else if (wide && i < 2 + kSedSourcesA)
                halves[0].word[words::SED_A_SRC[i - 2]] = srcs[i];
            else if (wide)
                halves[1].word[words::SED_B_SRC[i - 2 - kSedSourcesA]] = srcs[i];
            else if (i < kPqBaseSources)
                base.word[words::PQ_SRC[i]] = srcs[i];
            else
                e.word[words::PQ_EXT_SRC[i - kPqBaseSources]] = srcs[i];
        }
        if (wide) {
            base.word[words::PQ16_SED] = sed;
            put_raw(sed, halves[0]);
            if (srcs.size() > 2 + kSedSourcesA)
                put_raw(sed + 64, halves[1]);
        }
        put_raw(at, base);
        if (ext)
            put_raw(at + 64, e);
        return after;
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
