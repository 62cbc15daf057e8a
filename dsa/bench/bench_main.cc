// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA benchmarks' main: each model run's throughput as a ratio of its host baseline's in
// the same run (common/testing/bench_ratio.h).

#include "../../common/testing/bench_ratio.h"

namespace
{

constexpr dmalab::bench::Pair kPairs[] = {
    {"model_memmove", "host_memcpy"},
    {"model_fill", "host_fill"},
    {"model_compare", "host_memcmp"},
    {"model_crc", "host_crc"},
};

} // namespace

int main(int argc, char** argv)
{
    return dmalab::bench::main_with_ratios(argc, argv, kPairs);
}
