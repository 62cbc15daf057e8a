// SPDX-License-Identifier: GPL-2.0-or-later
// What every model's benchmark main shares: Google Benchmark's console output, then each
// model run's throughput as a ratio of its host baseline's in the same run (a median with
// --benchmark_repetitions), for the pairs the benchmark names.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dmalab::bench
{

// A host baseline: fn(dst, src, size) over `total` bytes in pieces of the benchmark's
// argument, from one buffer that holds the sources then the destinations, as the models'
// guest memory holds them (two separate allocations made memcpy several times slower on a
// project machine).
template <class Fn> void host_loop(benchmark::State& state, uint64_t total, Fn fn)
{
    const auto size = static_cast<size_t>(state.range(0));
    std::vector<uint8_t> buf(2 * total, 1);
    uint8_t* src = buf.data();
    uint8_t* dst = buf.data() + total;
    for (auto _ : state) {
        for (uint64_t off = 0; off < total; off += size)
            fn(dst + off, src + off, size);
        benchmark::DoNotOptimize(dst);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total));
}

// A model benchmark and a host baseline that does the same work on the same layout.
struct Pair {
    const char* model;
    const char* baseline;
};

// Throughput by benchmark name and argument, bytes per second.
using Rates = std::map<std::string, std::map<std::string, double>>;

class RatioReporter : public benchmark::ConsoleReporter
{
  public:
    RatioReporter(std::span<const Pair> pairs, std::function<void(const Rates&)> more = {})
        : pairs_(pairs), more_(std::move(more))
    {
    }

    void ReportRuns(const std::vector<Run>& runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median")
                continue;
            auto it = r.counters.find("bytes_per_second");
            if (it == r.counters.end())
                continue;
            rate_[r.run_name.function_name][r.run_name.args] = it->second.value;
        }
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        std::printf("\nmodel throughput / host baseline throughput (same run):\n");
        for (const Pair& p : pairs_) {
            for (const auto& [arg, model] : rate_[p.model]) {
                double base = rate_[p.baseline][arg];
                if (base > 0 && model > 0)
                    std::printf("  %-14s / %-15s %8s-byte blocks: %.2fx  (model %.0f MB/s, "
                                "baseline %.0f MB/s)\n",
                                p.model, p.baseline, arg.c_str(), model / base, model / 1e6,
                                base / 1e6);
            }
        }
        if (more_)
            more_(rate_);
    }

  private:
    std::span<const Pair> pairs_;
    std::function<void(const Rates&)> more_;
    Rates rate_;
};

// A benchmark program's main: the benchmarks registered, reported with their ratios.
inline int main_with_ratios(int argc, char** argv, std::span<const Pair> pairs,
                            std::function<void(const Rates&)> more = {})
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    RatioReporter reporter(pairs, std::move(more));
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}

} // namespace dmalab::bench
