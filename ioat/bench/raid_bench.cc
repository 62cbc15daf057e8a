// SPDX-License-Identifier: GPL-2.0-or-later
// XOR and PQ throughput of the I/OAT model against the host computing the same results in the
// same run: a straightforward host loop (XOR by 64-bit words; Q by the same 256-byte product
// table rows the model uses) and, where Debian's libisal-dev is installed, ISA-L's
// ec_encode_data() (split tables, SIMD) as the fast reference. Eight sources, as md RAID5/6
// over ten disks gives; P and Q written, as async_tx asks when it computes parity.

#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#ifdef DMALAB_HAVE_ISAL
#include <isa-l/erasure_code.h>
#endif

#include "../../common/testing/fake_memory.h"
#include "../src/gf256.h"
#include "../testing/descriptors.h"
#include "../testing/offsets.h"
#include "bench.h"
#include "dmalab/ioat/device.h"

namespace dmalab::ioat::bench
{

namespace
{

using dmalab::testing::FakeMemory;

constexpr unsigned kSources = 8;
constexpr uint64_t kCompletion = 0x1000;
constexpr uint64_t kRing = 0x10000;
constexpr uint64_t kData = 0x100000;
constexpr uint64_t kOut = 1u << 20; // bytes of each result per batch, whatever the block size
// RAID-6's generator powers, as async_gen_syndrome() passes them for data disks 0-7.
constexpr uint8_t kCoef[kSources] = {1, 2, 4, 8, 16, 32, 64, 128};

// One layout for host and model: source s of block i at kData + s * kOut + i * size, then
// every P, then every Q.
constexpr uint64_t src_at(unsigned s, uint64_t off)
{
    return kData + s * kOut + off;
}
constexpr uint64_t p_at(uint64_t off)
{
    return kData + kSources * kOut + off;
}
constexpr uint64_t q_at(uint64_t off)
{
    return kData + (kSources + 1) * kOut + off;
}
constexpr uint64_t kEnd = q_at(kOut);

void fill_sources(uint8_t* base)
{
    uint32_t x = 12345;
    for (uint64_t i = src_at(0, 0); i < p_at(0); i++) {
        x = x * 1103515245u + 12345u;
        base[i] = static_cast<uint8_t>(x >> 16);
    }
}

uint64_t load64(const uint8_t* p)
{
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// P of one block: the sources XORed a 64-bit word at a time, in one pass.
void host_xor_block(uint8_t* base, uint64_t off, size_t size)
{
    for (size_t j = 0; j < size; j += 8) {
        uint64_t v = 0;
        for (unsigned s = 0; s < kSources; s++)
            v ^= load64(base + src_at(s, off) + j);
        std::memcpy(base + p_at(off) + j, &v, sizeof v);
    }
}

void host_xor(benchmark::State& state)
{
    const size_t size = static_cast<size_t>(state.range(0));
    std::vector<uint8_t> buf(kEnd);
    fill_sources(buf.data());
    for (auto _ : state) {
        for (uint64_t off = 0; off < kOut; off += size)
            host_xor_block(buf.data(), off, size);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kOut * kSources));
}

void host_pq(benchmark::State& state)
{
    const size_t size = static_cast<size_t>(state.range(0));
    std::vector<uint8_t> buf(kEnd);
    fill_sources(buf.data());
    uint8_t* base = buf.data();
    for (auto _ : state) {
        for (uint64_t off = 0; off < kOut; off += size) {
            host_xor_block(base, off, size);
            uint8_t* q = base + q_at(off);
            for (size_t j = 0; j < size; j++) {
                uint8_t v = 0;
                for (unsigned s = 0; s < kSources; s++)
                    v ^= gf256::kMul[kCoef[s]][base[src_at(s, off) + j]];
                q[j] = v;
            }
        }
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kOut * kSources));
}

#ifdef DMALAB_HAVE_ISAL
void isal_pq(benchmark::State& state)
{
    const int size = static_cast<int>(state.range(0));
    std::vector<uint8_t> buf(kEnd);
    fill_sources(buf.data());
    uint8_t* base = buf.data();
    // Row 0 all ones (P), row 1 the coefficients (Q).
    unsigned char matrix[2 * kSources];
    for (unsigned s = 0; s < kSources; s++) {
        matrix[s] = 1;
        matrix[kSources + s] = kCoef[s];
    }
    std::vector<unsigned char> tables(32 * 2 * kSources);
    ec_init_tables(kSources, 2, matrix, tables.data());
    for (auto _ : state) {
        for (uint64_t off = 0; off < kOut; off += static_cast<uint64_t>(size)) {
            unsigned char* data[kSources];
            for (unsigned s = 0; s < kSources; s++)
                data[s] = base + src_at(s, off);
            unsigned char* coding[2] = {base + p_at(off), base + q_at(off)};
            ec_encode_data(size, kSources, 2, tables.data(), data, coding);
        }
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kOut * kSources));
}
#endif

// A circular ring of XOR (with_q false) or PQ descriptors, one per block, each with its
// extended descriptor, as ioatdma builds them for eight sources; the last one asks for a
// completion write. Returns the ring slots it used.
unsigned put_raid_ring(FakeMemory& mem, uint32_t size, bool with_q)
{
    const unsigned blocks = static_cast<unsigned>(kOut / size);
    std::vector<uint8_t> coef(kCoef, kCoef + kSources);
    uint64_t at = kRing;
    for (unsigned i = 0; i < blocks; i++) {
        const uint64_t off = uint64_t{i} * size;
        std::vector<uint64_t> srcs;
        for (unsigned s = 0; s < kSources; s++)
            srcs.push_back(src_at(s, off));
        const uint32_t extra = i + 1 == blocks ? ctl::COMPL_WRITE : 0;
        at = with_q ? testing::put_pq(mem, at, OP_PQ, size, p_at(off), q_at(off), srcs, coef, extra)
                    : testing::put_xor(mem, at, OP_XOR, size, p_at(off), srcs, extra);
    }
    // Close the ring: the last extended descriptor leads back to the first.
    mem.put(at - kDescriptorSize + 8 * words::NEXT, kRing);
    return static_cast<unsigned>((at - kRing) / kDescriptorSize);
}

void model_raid(benchmark::State& state, bool with_q)
{
    const uint32_t size = static_cast<uint32_t>(state.range(0));
    FakeMemory mem(kEnd);
    dmalab::testing::FakeTimers timers;
    dmalab::testing::FakeInterrupts irq;
    dmalab::testing::FakeLog log;
    fill_sources(mem.ram.data());
    Config cfg;
    cfg.dmacap = CAP_XOR | CAP_PQ;
    const unsigned slots = put_raid_ring(mem, size, with_q);
    cfg.step_bytes = kOut * kSources; // one step per batch: measures the data, not steps
    cfg.step_descriptors = slots;
    Ioat dev(cfg, Host{mem, timers, irq, log, nullptr});
    const uint32_t ch0 = kChannelStride;
    dev.mmio_write(ch0 + CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_COMPLETION_EN, 2);
    dev.mmio_write(ch0 + CHANCMP, kCompletion, 8);
    dev.mmio_write(ch0 + CHAINADDR, kRing, 8);
    uint16_t issued = 0;
    for (auto _ : state) {
        issued = static_cast<uint16_t>(issued + slots);
        dev.mmio_write(ch0 + DMACOUNT, issued, 2);
        drain_timers(dev, timers);
    }
    if (dev.channel_state(0) != ChanState::Done)
        state.SkipWithError("channel did not finish");
    // The last block's results against the host's own arithmetic.
    const uint64_t off = kOut - size;
    std::vector<uint8_t> want(kEnd);
    fill_sources(want.data());
    host_xor_block(want.data(), off, size);
    bool same = std::memcmp(want.data() + p_at(off), mem.ram.data() + p_at(off), size) == 0;
    if (with_q) {
        for (size_t j = 0; j < size && same; j++) {
            uint8_t v = 0;
            for (unsigned s = 0; s < kSources; s++)
                v ^= gf256::mul_slow(kCoef[s], want[src_at(s, off) + j]);
            same = mem.ram[q_at(off) + j] == v;
        }
    }
    if (!same)
        state.SkipWithError("the model's result differs from the host's");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kOut * kSources));
}

void model_xor(benchmark::State& state)
{
    model_raid(state, false);
}
void model_pq(benchmark::State& state)
{
    model_raid(state, true);
}

} // namespace

BENCHMARK(host_xor)->Arg(4096)->Arg(64 << 10);
BENCHMARK(model_xor)->Arg(4096)->Arg(64 << 10);
BENCHMARK(host_pq)->Arg(4096)->Arg(64 << 10);
#ifdef DMALAB_HAVE_ISAL
BENCHMARK(isal_pq)->Arg(4096)->Arg(64 << 10);
#endif
BENCHMARK(model_pq)->Arg(4096)->Arg(64 << 10);

} // namespace dmalab::ioat::bench
