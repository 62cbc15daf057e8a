// SPDX-License-Identifier: GPL-2.0-or-later
// Copy throughput of the I/OAT model against host memcpy of the same sizes, measured in the
// same run and reported as a ratio by bench_main.cc (the model's target is >= 0.8x host
// memcpy for copies of 64 KiB and more). Fake guest memory is directly mappable, as guest RAM
// is in QEMU.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "../../common/testing/bench_ratio.h"
#include "../../common/testing/fake_memory.h"
#include "dmalab/ats_memory.h"
#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/device.h"
#include "../testing/offsets.h"
#include "bench.h"

namespace
{

using namespace dmalab;
using namespace dmalab::ioat;

constexpr uint64_t kCompletion = 0x1000;
constexpr uint64_t kRing = 0x10000;
constexpr uint64_t kSrc = 0x100000;
constexpr uint64_t kTotal = 8u << 20; // bytes per batch, whatever the descriptor size

// A circular chain of `count` copies at kRing, as Linux's ioat_alloc_ring() builds it: copy
// i moves `size` bytes from kSrc + i * size to dst + i * size, with the control bits ctl_of(i).
template <class Ctl>
void put_ring(testing::FakeMemory& mem, unsigned count, uint32_t size, uint64_t dst, Ctl ctl_of)
{
    for (unsigned i = 0; i < count; i++) {
        DmaDescriptor d{};
        d.size = size;
        d.ctl = ctl_of(i);
        d.src_addr = kSrc + uint64_t{i} * size;
        d.dst_addr = dst + uint64_t{i} * size;
        d.next = kRing + 64ull * ((i + 1) % count);
        mem.put(kRing + 64ull * i, d);
    }
}

void host_memcpy(benchmark::State& state)
{
    dmalab::bench::host_loop(state, kTotal, [](uint8_t* d, const uint8_t* s, size_t n) {
        std::memcpy(d, s, n);
    });
}

// The IOMMU of model_copy_ats: every page translates to itself.
class IdentityPort final : public AtsPort
{
  public:
    Reply translate(uint64_t page, Access, const MemAttrs&) override
    {
        return {DmaError::None, page};
    }
};

// model_copy's batch, through a device-TLB (ats=on) when `ats` is set: the same copies,
// each 4 KiB page looked up (and, past 64 pages, asked for again) before it moves.
void copy_batch(benchmark::State& state, bool ats)
{
    const uint32_t size = static_cast<uint32_t>(state.range(0));
    const unsigned count = static_cast<unsigned>(kTotal / size);
    const uint64_t dst = kSrc + kTotal;
    testing::FakeMemory mem(kSrc + 2 * kTotal);
    IdentityPort port;
    AtsMemory tlb(mem, port);
    tlb.set_enabled(ats);
    testing::FakeTimers timers;
    testing::FakeInterrupts irq;
    testing::FakeLog log;
    Config cfg;
    cfg.step_bytes = kTotal; // one step per batch: measures copying, not step overhead
    cfg.step_descriptors = count;
    Ioat dev(cfg, Host{tlb, timers, irq, log, nullptr});
    const uint32_t ch0 = kChannelStride;
    dev.mmio_write(ch0 + CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_COMPLETION_EN, 2);
    dev.mmio_write(ch0 + CHANCMP, kCompletion, 8);
    put_ring(mem, count, size, dst,
             [&](unsigned i) { return i + 1 == count ? ctl::COMPL_WRITE : 0u; });
    dev.mmio_write(ch0 + CHAINADDR, kRing, 8);
    uint16_t issued = 0;
    for (auto _ : state) {
        issued = static_cast<uint16_t>(issued + count);
        dev.mmio_write(ch0 + DMACOUNT, issued, 2);
        ioat::bench::drain_timers(dev, timers);
    }
    if (dev.channel_state(0) != ChanState::Done)
        state.SkipWithError("channel did not finish");
    else if (ats && tlb.stats().requests == 0)
        state.SkipWithError("the copies did not go through the device-TLB");
    if (ats) // 8 MiB of pages against 64 entries: mostly misses, whatever the block size
        state.counters["tlb_hit_rate"] =
            static_cast<double>(tlb.stats().hits) /
            static_cast<double>(std::max<uint64_t>(1, tlb.stats().hits + tlb.stats().requests));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kTotal));
}

void model_copy(benchmark::State& state)
{
    copy_batch(state, false);
}

void model_copy_ats(benchmark::State& state)
{
    copy_batch(state, true);
}

// Host memcpy of one piece at a time over the same 64 slots as round_trip (the same cache
// footprint), for comparison with it.
void host_memcpy_one(benchmark::State& state)
{
    const size_t size = static_cast<size_t>(state.range(0));
    constexpr unsigned kSlots = 64;
    // One buffer, sources then destinations, as the model's guest memory holds them.
    std::vector<uint8_t> buf(2 * kSlots * size, 1);
    uint8_t* src = buf.data();
    uint8_t* dst = buf.data() + kSlots * size;
    unsigned i = 0;
    for (auto _ : state) {
        std::memcpy(dst + (i % kSlots) * size, src + (i % kSlots) * size, size);
        benchmark::DoNotOptimize(dst);
        benchmark::ClobberMemory();
        i++;
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

// One descriptor's whole round trip in the model, as a driver sees it one copy at a time:
// the DMACOUNT doorbell, the steps, the completion write and the interrupt, then the re-arm.
// Host time per descriptor, beside host_memcpy of the same size.
void round_trip(benchmark::State& state)
{
    const uint32_t size = static_cast<uint32_t>(state.range(0));
    constexpr unsigned kSlots = 64;
    testing::FakeMemory mem(kSrc + 2 * uint64_t{kSlots} * size);
    testing::FakeTimers timers;
    testing::FakeInterrupts irq;
    testing::FakeLog log;
    Ioat dev(Config{}, Host{mem, timers, irq, log, nullptr});
    const uint32_t ch0 = kChannelStride;
    dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL, 1);
    dev.mmio_write(ch0 + CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_COMPLETION_EN, 2);
    dev.mmio_write(ch0 + CHANCMP, kCompletion, 8);
    const uint64_t dst = kSrc + uint64_t{kSlots} * size;
    // Touched, as host_memcpy_one's buffers are: untouched pages all read as one zero page.
    std::fill(mem.ram.begin() + kSrc, mem.ram.begin() + dst, uint8_t{1});
    std::fill(mem.ram.begin() + dst, mem.ram.end(), uint8_t{2});
    put_ring(mem, kSlots, size, dst, [](unsigned) { return ctl::COMPL_WRITE | ctl::INT_EN; });
    dev.mmio_write(ch0 + CHAINADDR, kRing, 8);
    uint16_t issued = 0;
    for (auto _ : state) {
        dev.mmio_write(ch0 + DMACOUNT, ++issued, 2);
        ioat::bench::drain_timers(dev, timers);
        dev.mmio_write(ch0 + CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_COMPLETION_EN, 2);
    }
    if (irq.raised.size() != static_cast<size_t>(state.iterations()) ||
        dev.channel_state(0) != ChanState::Done ||
        dev.stats(0).bytes != uint64_t{size} * state.iterations() || mem.ram[dst + size - 1] != 1)
        state.SkipWithError("a descriptor did not complete with its interrupt");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

BENCHMARK(host_memcpy)->Arg(4096)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(model_copy)->Arg(4096)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(model_copy_ats)->Arg(4096)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(host_memcpy_one)->Arg(16 << 10);
BENCHMARK(round_trip)->Arg(16 << 10);

} // namespace
