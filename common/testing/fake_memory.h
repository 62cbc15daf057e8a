// SPDX-License-Identifier: GPL-2.0-or-later
// Test doubles for the models' host interfaces: guest RAM with holes, a manual clock, and an
// interrupt recorder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "dmalab/dma_memory.h"

namespace dmalab::testing
{

class FakeMemory : public DmaMemory
{
  public:
    explicit FakeMemory(size_t size) : ram(size, 0) {}

    // Makes [addr, addr+len) inaccessible to the device.
    void add_hole(uint64_t addr, uint64_t len) { holes.emplace_back(addr, len); }

    bool accessible(uint64_t addr, size_t len) const
    {
        if (addr > ram.size() || len > ram.size() - addr)
            return false;
        for (auto [h, hl] : holes)
            if (addr < h + hl && h < addr + len)
                return false;
        return true;
    }

    bool read(uint64_t addr, void* buf, size_t len) override
    {
        reads++;
        if (!accessible(addr, len))
            return false;
        std::memcpy(buf, ram.data() + addr, len);
        return true;
    }

    bool write(uint64_t addr, const void* buf, size_t len) override
    {
        writes++;
        if (!accessible(addr, len))
            return false;
        std::memcpy(ram.data() + addr, buf, len);
        return true;
    }

    void* map(uint64_t addr, size_t* len, Access) override
    {
        if (!mappable || !accessible(addr, 1))
            return nullptr;
        size_t n = std::min<size_t>(*len, map_limit);
        while (n > 1 && !accessible(addr, n))
            n /= 2; // shrink to an accessible prefix; good enough for tests
        *len = n;
        maps++;
        outstanding++;
        return ram.data() + addr;
    }

    void unmap(void*, size_t, Access, size_t) override { outstanding--; }

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

    std::vector<uint8_t> ram;
    std::vector<std::pair<uint64_t, uint64_t>> holes;
    bool mappable = true;
    size_t map_limit = SIZE_MAX; // longest contiguous mapping handed out
    unsigned reads = 0, writes = 0, maps = 0;
    int outstanding = 0; // maps not yet unmapped
};

class FakeScheduler : public Scheduler
{
  public:
    uint64_t now_ns() const override { return now; }
    void schedule_at(uint64_t when_ns) override
    {
        requests++;
        if (!pending || when_ns < when)
            when = when_ns;
        pending = true;
    }

    uint64_t now = 0;
    uint64_t when = 0;
    bool pending = false;
    unsigned requests = 0;
};

class FakeInterrupts : public InterruptSink
{
  public:
    void raise(unsigned vector) override { raised.push_back(vector); }
    std::vector<unsigned> raised;
};

} // namespace dmalab::testing
