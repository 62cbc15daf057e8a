// SPDX-License-Identifier: GPL-2.0-or-later
// Test doubles for the models' host interfaces: guest RAM with holes and device windows, a
// manual clock with numbered timers, an interrupt recorder and a log recorder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dmalab/dma_memory.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/timers.h"

namespace dmalab::testing
{

class FakeMemory : public DmaMemory
{
  public:
    explicit FakeMemory(size_t size) : ram(size, 0) {}

    // Makes [addr, addr+len) inaccessible to the device (an IOMMU fault when `fault` is set,
    // else unassigned).
    void add_hole(uint64_t addr, uint64_t len, bool fault = false)
    {
        holes.push_back({addr, len, fault});
    }
    // A device window: accesses go to `on_write` / read as zero, never mapped directly.
    struct Window {
        uint64_t addr, len;
        std::function<void(uint64_t offset, const uint8_t* data, size_t len)> on_write;
    };
    void add_window(Window w) { windows.push_back(std::move(w)); }

    // The first byte of [addr, addr+len) the device cannot reach as RAM, if any.
    std::optional<uint64_t> first_bad(uint64_t addr, uint64_t len) const
    {
        if (wraps(addr, len))
            return addr;
        if (len == 0)
            return std::nullopt;
        // Inclusive ends: a range may end exactly at 2^64 (addr + len is then 0).
        uint64_t last = addr + (len - 1);
        uint64_t bad = last;
        bool any = false;
        if (last >= ram.size()) {
            bad = std::max<uint64_t>(addr, ram.size());
            any = true;
        }
        for (const auto& h : holes)
            if (h.len && addr <= h.addr + (h.len - 1) && h.addr <= last) {
                bad = std::min(bad, std::max(addr, h.addr));
                any = true;
            }
        if (!any)
            return std::nullopt;
        return bad;
    }
    bool accessible(uint64_t addr, uint64_t len) const { return !first_bad(addr, len); }

    DmaResult read(uint64_t addr, void* buf, size_t len, const MemAttrs& a) override
    {
        reads++;
        last_attrs = a;
        if (Window* w = window_at(addr, len)) {
            std::memset(buf, 0, len);
            (void)w;
            return DmaResult::success(len);
        }
        return access(addr, len, [&](uint64_t off, size_t n) {
            std::memcpy(static_cast<uint8_t*>(buf) + off, ram.data() + addr + off, n);
        });
    }

    DmaResult write(uint64_t addr, const void* buf, size_t len, const MemAttrs& a) override
    {
        writes++;
        last_attrs = a;
        if (Window* w = window_at(addr, len)) {
            w->on_write(addr - w->addr, static_cast<const uint8_t*>(buf), len);
            return DmaResult::success(len);
        }
        return access(addr, len, [&](uint64_t off, size_t n) {
            std::memcpy(ram.data() + addr + off, static_cast<const uint8_t*>(buf) + off, n);
        });
    }

    Mapping map(uint64_t addr, size_t len, Access, const MemAttrs&) override
    {
        if (before_map)
            before_map(addr); // what a vCPU does meanwhile
        cost += cost_per_map;
        if (!mappable || window_at(addr, 1) || !accessible(addr, 1))
            return {};
        size_t n = std::min<size_t>(len, map_limit);
        if (auto bad = first_bad(addr, n))
            n = static_cast<size_t>(*bad - addr);
        for (const auto& w : windows)
            if (w.addr > addr && w.addr < addr + n)
                n = static_cast<size_t>(w.addr - addr);
        maps++;
        outstanding++;
        return {ram.data() + addr, n};
    }

    void unmap(const Mapping&, Access, size_t) override { outstanding--; }
    uint64_t take_cost() override
    {
        uint64_t c = cost;
        cost = 0;
        return c;
    }

    template <class T> void put(uint64_t addr, const T& v)
    {
        std::memcpy(&ram[addr], &v, sizeof v);
    }
    template <class T> T get(uint64_t addr) const
    {
        T v;
        std::memcpy(&v, &ram[addr], sizeof v);
        return v;
    }

    struct Hole {
        uint64_t addr, len;
        bool fault;
    };
    std::vector<uint8_t> ram;
    std::vector<Hole> holes;
    std::vector<Window> windows;
    bool mappable = true;
    size_t map_limit = SIZE_MAX;                   // longest contiguous mapping handed out
    std::function<void(uint64_t addr)> before_map; // called as map() starts
    unsigned reads = 0, writes = 0, maps = 0;
    int outstanding = 0;       // maps not yet unmapped
    uint64_t cost = 0;         // what take_cost() reports next (as an IOMMU's walks)
    uint64_t cost_per_map = 0; // added to `cost` by every map()
    MemAttrs last_attrs;

  private:
    Window* window_at(uint64_t addr, uint64_t len)
    {
        for (auto& w : windows)
            if (addr >= w.addr && addr - w.addr < w.len && len <= w.len - (addr - w.addr))
                return &w;
        return nullptr;
    }
    template <class F> DmaResult access(uint64_t addr, size_t len, F&& move)
    {
        auto bad = first_bad(addr, len);
        if (!bad) {
            move(0, len);
            return DmaResult::success(len);
        }
        uint64_t good = *bad - addr;
        if (good)
            move(0, static_cast<size_t>(good));
        DmaError e = DmaError::Unassigned;
        for (const auto& h : holes)
            if (*bad >= h.addr && *bad - h.addr < h.len && h.fault)
                e = DmaError::IommuFault;
        if (wraps(addr, len))
            e = DmaError::Wrap;
        return DmaResult::failure(e, *bad, good, e == DmaError::IommuFault ? 5 : 0);
    }
};

class FakeTimers : public Timers
{
  public:
    // A host clock (KVM, or TCG without -icount) moves between two reads; `tick` ns per
    // read model that. 0: the modelled clock, still inside an access.
    uint64_t now_ns() const override { return now += tick; }
    void arm(unsigned timer, uint64_t when_ns) override
    {
        arms++;
        if (when_ns > kTimeLimit)
            over_limit = true;
        pending[timer] = when_ns;
    }
    void cancel(unsigned timer) override { pending.erase(timer); }

    // The earliest pending timer, if any.
    std::optional<std::pair<unsigned, uint64_t>> next() const
    {
        std::optional<std::pair<unsigned, uint64_t>> best;
        for (auto [id, when] : pending)
            if (!best || when < best->second)
                best = {id, when};
        return best;
    }

    mutable uint64_t now = 0;
    uint64_t tick = 0;

  private:
    // Timer entries come and go on every step: a pool reuses their nodes instead of a heap
    // allocation per arm (the fuzzers arm millions; under ASan each allocation records a
    // stack trace).
    std::pmr::unsynchronized_pool_resource pool_;

  public:
    std::pmr::map<unsigned, uint64_t> pending{&pool_};
    unsigned arms = 0;
    bool over_limit = false;
};

class FakeInterrupts : public Interrupts
{
  public:
    bool notify(unsigned vector) override
    {
        if (!messages)
            return false;
        raised.push_back(vector);
        return true;
    }
    bool set_level(bool asserted) override
    {
        bool rose = asserted && !level;
        level = asserted;
        if (rose)
            rises++;
        return rose && intx;
    }
    bool send_msi(uint64_t address, uint32_t data, const MemAttrs&) override
    {
        msis.emplace_back(address, data);
        return true;
    }

    bool messages = true; // MSI/MSI-X enabled
    bool intx = false;    // INTx in use
    std::vector<unsigned> raised;
    bool level = false;
    unsigned rises = 0;
    std::vector<std::pair<uint64_t, uint32_t>> msis;
};

class FakeLog : public Log
{
  public:
    void message(LogKind kind, const char* text) override
    {
        (kind == LogKind::GuestError ? guest_errors : unimplemented).emplace_back(text);
    }
    std::vector<std::string> guest_errors, unimplemented;
};

} // namespace dmalab::testing
