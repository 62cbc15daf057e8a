// SPDX-License-Identifier: GPL-2.0-or-later
// The benchmarks' main: Google Benchmark's console output, then each model run's throughput
// as a ratio of its host baselines' in the same run.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace
{

// A model benchmark and a host baseline that does the same work on the same layout.
struct Pair {
    const char* model;
    const char* baseline;
};

constexpr Pair kPairs[] = {
    {"model_copy", "host_memcpy"}, {"model_copy_ats", "model_copy"}, {"model_xor", "host_xor"},
    {"model_pq", "host_pq"},       {"model_pq", "isal_pq"},
};

class RatioReporter : public benchmark::ConsoleReporter
{
  public:
    void ReportRuns(const std::vector<Run>& runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            // With --benchmark_repetitions, the median stands for the runs.
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median")
                continue;
            auto it = r.counters.find("bytes_per_second");
            if (it == r.counters.end())
                continue;
            std::string name = r.run_name.function_name;
            std::string arg = r.run_name.args;
            rate_[name][arg] = it->second.value;
        }
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        std::printf("\nmodel throughput / host baseline throughput (same run):\n");
        for (const Pair& p : kPairs) {
            for (const auto& [arg, model] : rate_[p.model]) {
                double base = rate_[p.baseline][arg];
                if (base > 0 && model > 0)
                    std::printf("  %-10s / %-11s %8s-byte blocks: %.2fx  (model %.0f MB/s, "
                                "baseline %.0f MB/s)\n",
                                p.model, p.baseline, arg.c_str(), model / base, model / 1e6,
                                base / 1e6);
            }
        }
        double host = rate_["host_memcpy_one"]["16384"], trip = rate_["round_trip"]["16384"];
        if (host > 0 && trip > 0)
            std::printf("  16 KiB, one descriptor's round trip: %.2f us against %.2f us for "
                        "a host memcpy (%.2fx)\n",
                        16384 / trip * 1e6, 16384 / host * 1e6, host / trip);
    }

  private:
    std::map<std::string, std::map<std::string, double>> rate_;
};

} // namespace

int main(int argc, char** argv)
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
