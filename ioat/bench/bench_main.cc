// SPDX-License-Identifier: GPL-2.0-or-later
// The I/OAT benchmarks' main: each model run's throughput as a ratio of its host
// baselines' in the same run (common/testing/bench_ratio.h), and one descriptor's round
// trip against a host memcpy.

#include <cstdio>

#include "../../common/testing/bench_ratio.h"

namespace
{

constexpr dmalab::bench::Pair kPairs[] = {
    {"model_copy", "host_memcpy"}, {"model_copy_ats", "model_copy"}, {"model_xor", "host_xor"},
    {"model_pq", "host_pq"},       {"model_pq", "isal_pq"},
};

void round_trip(const dmalab::bench::Rates& rate)
{
    auto at = [&](const char* name) {
        auto it = rate.find(name);
        if (it == rate.end())
            return 0.0;
        auto v = it->second.find("16384");
        return v == it->second.end() ? 0.0 : v->second;
    };
    double host = at("host_memcpy_one"), trip = at("round_trip");
    if (host > 0 && trip > 0)
        std::printf("  16 KiB, one descriptor's round trip: %.2f us against %.2f us for "
                    "a host memcpy (%.2fx)\n",
                    16384 / trip * 1e6, 16384 / host * 1e6, host / trip);
}

} // namespace

int main(int argc, char** argv)
{
    return dmalab::bench::main_with_ratios(argc, argv, kPairs, round_trip);
}
