// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA model's Memory Move, Fill, Compare and CRC Generation against the host's own loops
// over the same bytes (memcpy, a fill of the 8-byte pattern, memcmp, the host's CRC32
// instruction), in the same run; bench_main.cc prints the ratios (the target: a memmove at
// least 0.8 of host memcpy from 64 KiB up). The model runs as idxd drives it: descriptors
// of `size` bytes through a dedicated WQ's portal, each with a completion record, the
// engine's timers driven to the end; fake guest memory is directly mappable, as guest RAM
// is in QEMU.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "../../common/testing/bench_ratio.h"
#include "../../common/testing/fake_memory.h"
#include "../src/work.h"
#include "dmalab/dsa/device.h"

namespace
{

using namespace dmalab;
using namespace dmalab::dsa;

constexpr uint64_t kRecords = 0x10000; // a 32-byte record per descriptor in flight
constexpr uint64_t kSrc = 0x100000;
constexpr uint64_t kTotal = 8u << 20; // bytes per iteration, whatever the descriptor size
constexpr uint64_t kDst = kSrc + kTotal;
constexpr unsigned kWqSize = 128;
constexpr uint64_t kPattern = 0x0123456789abcdefull;

// A device with WQ 0 (dedicated, kWqSize slots, 2 GiB transfers) and engine 0 in group 0,
// enabled as idxd enables it.
struct Device {
    Device() : mem(kDst + kTotal), dev(config(), Host{mem, timers, irq, log, nullptr})
    {
        const Layout l = Dsa::layout(dev.config());
        dev.set_bus_master(true);
        dev.mmio_write(l.grpcfg, 1, 8);        // GRPWQCFG: WQ 0
        dev.mmio_write(l.grpcfg + 0x20, 1, 8); // GRPENGCFG: engine 0
        dev.mmio_write(l.grpcfg + 0x28, uint64_t{96} << 20, 8);
        dev.mmio_write(l.wqcfg, kWqSize, 4);           // WQ_SIZE
        dev.mmio_write(l.wqcfg + 8, 1, 4);             // dedicated
        dev.mmio_write(l.wqcfg + 12, 31 | 10 << 5, 4); // 2 GiB, batches of 1,024
        dev.mmio_write(offset("CMD"), static_cast<uint64_t>(Cmd::EnableDevice) << 20, 4);
        dev.mmio_write(offset("CMD"), static_cast<uint64_t>(Cmd::EnableWq) << 20, 4);
        for (uint64_t i = 0; i < kTotal; i++)
            mem.ram[kSrc + i] = mem.ram[kDst + i] = static_cast<uint8_t>(i * 7);
    }
    static Config config()
    {
        Config c;
        c.wqs = 1;
        c.msix_vectors = 2;
        c.total_wq_size = kWqSize;
        return c;
    }
    void submit(const RawDescriptor& d)
    {
        for (unsigned i = 0; i < kDescriptorWords; i++)
            dev.portal_write(DMALAB_DSA_PORTAL_LIMITED_MSIX + 8 * i, d.word[i], 8);
    }
    void drain()
    {
        while (auto next = timers.next()) {
            timers.pending.erase(next->first);
            timers.now = std::max(timers.now, next->second);
            dev.timer(next->first);
        }
    }
    // kTotal bytes as descriptors of `size` bytes of `op`, a WQ's worth at a time.
    void run(Opcode op, uint32_t size)
    {
        const unsigned count = static_cast<unsigned>(kTotal / size);
        for (unsigned i = 0; i < count;) {
            for (unsigned k = 0; k < kWqSize && i < count; k++, i++) {
                RawDescriptor d{};
                d.word[0] = uint64_t{static_cast<uint8_t>(op)} << 56 |
                            uint64_t{flag::CRAV | flag::RCR} << 32;
                d.word[1] = kRecords + 32ull * k;
                d.word[2] = op == Opcode::Fill ? kPattern : kSrc + uint64_t{i} * size;
                d.word[3] = op == Opcode::CrcGen ? 0 : kDst + uint64_t{i} * size;
                d.word[4] = size;
                submit(d);
            }
            drain();
        }
    }

    testing::FakeMemory mem;
    testing::FakeTimers timers;
    testing::FakeInterrupts irq;
    testing::FakeLog log;
    Dsa dev;
};

void model(benchmark::State& state, Opcode op)
{
    Device d;
    const auto size = static_cast<uint32_t>(state.range(0));
    for (auto _ : state) {
        d.run(op, size);
        benchmark::ClobberMemory();
    }
    // Every descriptor ran, and none failed: else the figure is not the model's work.
    const Counters& c = d.dev.counters();
    if (c.descriptor_errors || c.dropped ||
        c.descriptors != state.iterations() * (kTotal / static_cast<uint64_t>(size)))
        state.SkipWithError("not every descriptor ran");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kTotal));
}

// The host's loops over the same layout (bench_ratio.h).
template <class Fn> void host(benchmark::State& state, Fn fn)
{
    dmalab::bench::host_loop(state, kTotal, fn);
}

void model_memmove(benchmark::State& s)
{
    model(s, Opcode::Memmove);
}
void model_fill(benchmark::State& s)
{
    model(s, Opcode::Fill);
}
void model_compare(benchmark::State& s)
{
    model(s, Opcode::Compare);
}
void model_crc(benchmark::State& s)
{
    model(s, Opcode::CrcGen);
}

void host_memcpy(benchmark::State& s)
{
    host(s, [](uint8_t* d, const uint8_t* src, size_t n) { std::memcpy(d, src, n); });
}
void host_fill(benchmark::State& s)
{
    host(s, [](uint8_t* d, const uint8_t*, size_t n) {
        for (size_t i = 0; i + 8 <= n; i += 8)
            std::memcpy(d + i, &kPattern, 8);
    });
}
void host_memcmp(benchmark::State& s)
{
    host(s, [](uint8_t* d, const uint8_t* src, size_t n) {
        benchmark::DoNotOptimize(std::memcmp(d, src, n));
    });
}
void host_crc(benchmark::State& s)
{
    host(s, [](uint8_t*, const uint8_t* src, size_t n) {
        benchmark::DoNotOptimize(crc32c(~0u, src, n));
    });
}

#define SIZES ->Arg(4096)->Arg(65536)->Arg(1 << 20)
BENCHMARK(model_memmove) SIZES;
BENCHMARK(host_memcpy) SIZES;
BENCHMARK(model_fill) SIZES;
BENCHMARK(host_fill) SIZES;
BENCHMARK(model_compare) SIZES;
BENCHMARK(host_memcmp) SIZES;
BENCHMARK(model_crc) SIZES;
BENCHMARK(host_crc) SIZES;

} // namespace
