// SPDX-License-Identifier: GPL-2.0-or-later
// A DSA model on fake host services, with helpers that do what Linux's idxd does: write the
// group and WQ configuration (idxd_device_config), issue a command and wait for CMDSTS
// (idxd_cmd_exec), acknowledge INTCAUSE (idxd_misc_thread).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "../../common/testing/fake_memory.h"
#include "dmalab/dsa/device.h"

namespace dmalab::dsa::testing
{

using namespace dmalab::testing; // the fakes

inline constexpr uint32_t kCmd = offset("CMD");
inline constexpr uint32_t kCmdsts = offset("CMDSTS");
inline constexpr uint32_t kGensts = offset("GENSTS");
inline constexpr uint32_t kIntcause = offset("INTCAUSE");
inline constexpr uint32_t kGenctrl = offset("GENCTRL");
inline constexpr uint32_t kGencfg = offset("GENCFG");
inline constexpr uint32_t kSwerr = offset("SWERR0");

// WQCFG dwords and GRPCFG quadwords, relative to their entry.
inline constexpr uint32_t kWqSize = wqcfg_offset("WQCFG_SIZE");
inline constexpr uint32_t kWqThreshold = wqcfg_offset("WQCFG_THRESHOLD");
inline constexpr uint32_t kWqMode = wqcfg_offset("WQCFG_MODE");
inline constexpr uint32_t kWqLimits = wqcfg_offset("WQCFG_LIMITS");
inline constexpr uint32_t kWqStatus = wqcfg_offset("WQCFG_STATUS");
inline constexpr uint32_t kGrpWqs = grpcfg_offset("GRPWQCFG");
inline constexpr uint32_t kGrpEngines = grpcfg_offset("GRPENGCFG");
inline constexpr uint32_t kGrpFlags = grpcfg_offset("GRPFLAGS");

// WQCFG_MODE values as idxd_wq_config_write builds them.
inline constexpr uint32_t kDedicated = 1;
inline constexpr uint32_t kBofBit = 1u << 1;
inline constexpr uint32_t kPriorityShift = 4;
inline uint32_t limits(unsigned xfer_shift, unsigned batch_shift)
{
    return xfer_shift | batch_shift << 5;
}
// GRPFLAGS: read buffers allowed and reserved.
inline uint64_t rdbufs(unsigned allowed, unsigned reserved = 0)
{
    return uint64_t{allowed} << 20 | uint64_t{reserved} << 8;
}

// Field `name` of a register value, for tests that name what they check.
inline uint64_t field_of(uint64_t reg, std::span<const Field> fields, std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return f.get(reg);
    ADD_FAILURE() << "no field " << name;
    return 0;
}

inline CmdErr err_of(uint32_t cmdsts)
{
    return static_cast<CmdErr>(CMDSTS_ERR.get(cmdsts));
}
// Disable, Drain, Abort and Reset WQ name WQs by block and mask (idxd_wq_disable).
inline uint32_t wq_operand(unsigned wq)
{
    return 1u << (wq % 16) | (wq / 16) << 16;
}

// A descriptor, built field by field as idxd and accel-config fill them.
struct Desc {
    explicit Desc(Opcode op, uint32_t flags = 0)
    {
        raw.word[0] = uint64_t{static_cast<uint8_t>(op)} << 56 | uint64_t{flags} << 32;
    }
    Desc& completion(uint64_t addr)
    {
        raw.word[1] = addr;
        return *this;
    }
    Desc& word(unsigned i, uint64_t v)
    {
        raw.word[i] = v;
        return *this;
    }
    Desc& src(uint64_t a) { return word(2, a); }
    Desc& dst(uint64_t a) { return word(3, a); }
    Desc& size(uint32_t n)
    {
        raw.word[4] = (raw.word[4] & ~0xffffffffull) | n;
        return *this;
    }
    Desc& handle(uint16_t h)
    {
        raw.word[4] = (raw.word[4] & 0xffffffffull) | uint64_t{h} << 32;
        return *this;
    }
    RawDescriptor raw{};
};
// The flags idxd's dmaengine path sets (op_flag_setup): a record always, an interrupt on
// request.
inline constexpr uint32_t kRecord = flag::CRAV | flag::RCR;

// A completion record as software reads it.
struct Record {
    uint8_t status = 0; // the whole byte: code and FAULT_WRITE
    uint8_t result = 0;
    uint32_t bytes = 0;
    uint64_t fault_addr = 0;
    uint64_t word2 = 0;
    uint64_t word3 = 0;
    Status code() const { return static_cast<Status>(status & cr::STATUS_CODE_MASK); }
};

// A device whose portal writes only queue (sync_start off): what a WQ holds stays there
// until the engines' timers run.
inline Config queued(Config c = Config{})
{
    c.sync_start = false;
    return c;
}

struct Rig {
    explicit Rig(const Config& c = Config{}, Observer* observer = nullptr, size_t ram = 1u << 20)
        : mem(ram), config(c), layout(Dsa::layout(c)), dev(c, Host{mem, timers, irq, log, observer})
    {
        // idxd_pci_probe: pci_set_master() before the device is touched.
        dev.set_bus_master(true);
    }

    uint64_t rd(uint32_t at, unsigned size = 4) { return dev.mmio_read(at, size); }
    void wr(uint32_t at, uint64_t v, unsigned size = 4) { dev.mmio_write(at, v, size); }

    uint32_t wqcfg(unsigned wq, uint32_t reg) const
    {
        return layout.wqcfg + wq * kWqcfgStride + reg;
    }
    uint32_t grpcfg(unsigned g, uint32_t reg) const
    {
        return layout.grpcfg + g * kGrpcfgStride + reg;
    }
    uint32_t perm(unsigned v) const { return layout.msix_perm + v * kMsixPermStride; }

    DeviceState state() { return static_cast<DeviceState>(GENSTS_STATE.get(rd(kGensts))); }
    bool wq_enabled(unsigned wq)
    {
        return WQCFG_STATE.get(rd(wqcfg(wq, kWqStatus))) == static_cast<uint64_t>(WqState::Enabled);
    }

    // ---- Commands ----

    static uint32_t command(Cmd c, uint32_t operand, bool int_req)
    {
        return static_cast<uint32_t>(CMD_CODE.put(static_cast<uint8_t>(c)) |
                                     CMD_OPERAND.put(operand)) |
               (int_req ? CMD_INT_REQ : 0);
    }
    void issue(Cmd c, uint32_t operand = 0, bool int_req = true)
    {
        wr(kCmd, command(c, operand, int_req));
    }
    bool active() { return rd(kCmdsts) & CMDSTS_ACTIVE; }
    // Runs the modelled clock until CMDSTS.ACTIVE clears; CMDSTS then.
    uint32_t wait()
    {
        for (unsigned n = 0; active(); n++) {
            if (!pending() || n > 1000) {
                ADD_FAILURE() << "the command never completes";
                break;
            }
            step();
        }
        return static_cast<uint32_t>(rd(kCmdsts));
    }
    // idxd_cmd_exec: a command with INT_REQ, its completion, and CMDSTS.ERR.
    CmdErr run(Cmd c, uint32_t operand = 0, bool int_req = true)
    {
        issue(c, operand, int_req);
        return err_of(wait());
    }
    uint16_t result() { return static_cast<uint16_t>(CMDSTS_RESULT.get(rd(kCmdsts))); }

    // ---- Configuration, as idxd_device_config writes it ----

    void group(unsigned g, uint64_t wqs, uint64_t engines, uint64_t flags = ~0ull)
    {
        wr(grpcfg(g, kGrpWqs), wqs, 8);
        wr(grpcfg(g, kGrpEngines), engines, 8);
        wr(grpcfg(g, kGrpFlags), flags == ~0ull ? rdbufs(config.read_buffers) : flags, 8);
    }
    void wq(unsigned w, uint16_t size, uint32_t mode = kDedicated, uint16_t threshold = 0,
            uint32_t lim = ~0u)
    {
        wr(wqcfg(w, kWqSize), size);
        wr(wqcfg(w, kWqThreshold), threshold);
        wr(wqcfg(w, kWqMode), mode);
        wr(wqcfg(w, kWqLimits), lim == ~0u ? limits(21, 5) : lim); // idxd's defaults: 2 MiB, 32
    }
    // Group 0 with WQ 0 and engine 0, WQ 0 dedicated with 16 slots.
    void configure()
    {
        group(0, 1, 1);
        wq(0, 16);
    }
    // configure(), Enable Device, Enable WQ 0.
    void bring_up()
    {
        configure();
        ASSERT_EQ(run(Cmd::EnableDevice), CmdErr::Success);
        ASSERT_EQ(run(Cmd::EnableWq, 0), CmdErr::Success);
        ack();
    }

    // idxd_misc_thread: reads INTCAUSE and writes back what it read; returns it.
    uint32_t ack()
    {
        auto cause = static_cast<uint32_t>(rd(kIntcause));
        if (cause)
            wr(kIntcause, cause);
        return cause;
    }

    // ---- The data path ----

    // WQ `wq`'s limited MSI-X portal, where idxd submits (idxd_wq_map_portal), at 64-byte
    // slot `slot` of its page.
    static uint32_t portal(unsigned wq, unsigned slot = 0)
    {
        return wq * DMALAB_DSA_WQ_PORTAL_STRIDE + DMALAB_DSA_PORTAL_LIMITED_MSIX + 64 * slot;
    }
    // One MOVDIR64B, as QEMU delivers it: eight 8-byte writes, ascending.
    void submit(unsigned wq, const Desc& d, unsigned slot = 0)
    {
        for (unsigned i = 0; i < kDescriptorWords; i++)
            dev.portal_write(portal(wq, slot) + 8 * i, d.raw.word[i], 8);
    }
    // Guest RAM.
    void poke(uint64_t at, const void* p, size_t n) { std::memcpy(mem.ram.data() + at, p, n); }
    void fill(uint64_t at, uint8_t v, size_t n) { std::memset(mem.ram.data() + at, v, n); }
    uint8_t* at(uint64_t a) { return mem.ram.data() + a; }
    Record record(uint64_t a)
    {
        Record r;
        const uint8_t* p = at(a);
        r.status = p[0];
        r.result = p[1];
        std::memcpy(&r.bytes, p + 4, 4);
        std::memcpy(&r.fault_addr, p + 8, 8);
        std::memcpy(&r.word2, p + 16, 8);
        std::memcpy(&r.word3, p + 24, 8);
        return r;
    }
    // The descriptor runs to its end: timers until none is pending.
    Record run_desc(unsigned wq, const Desc& d, uint64_t rec)
    {
        submit(wq, d);
        run_until_idle();
        return record(rec);
    }

    // ---- The clock ----

    bool pending() const { return !timers.pending.empty(); }
    void step()
    {
        auto next = timers.next();
        ASSERT_TRUE(next.has_value());
        timers.pending.erase(next->first);
        timers.now = std::max(timers.now, next->second);
        dev.timer(next->first);
    }
    void run_until_idle(unsigned limit = 100000)
    {
        for (unsigned n = 0; pending() && n < limit; n++)
            step();
        EXPECT_FALSE(pending()) << "still busy after " << limit << " timer expiries";
    }

    // Every dword of BAR 0 up to the end of the tables.
    std::vector<uint32_t> dump()
    {
        std::vector<uint32_t> out;
        for (uint32_t at = 0; at < layout.end; at += 4)
            out.push_back(static_cast<uint32_t>(rd(at)));
        return out;
    }

    FakeMemory mem;
    FakeTimers timers;
    FakeInterrupts irq;
    FakeLog log;
    Config config;
    Layout layout;
    Dsa dev;
};

} // namespace dmalab::dsa::testing
