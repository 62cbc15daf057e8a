// SPDX-License-Identifier: GPL-2.0-or-later
// Whatever a guest does, the model keeps its invariants: pseudo-random guest programs (the
// fuzzer's interpreter, fixed seeds so a failure reproduces) run without a crash, a leaked
// mapping, a stray interrupt vector or work that does not drain; and programs that bring a
// WQ up before their random part, so the data path runs in most of them.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../fuzz/program.h"

namespace dmalab::dsa::fuzz
{
namespace
{

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n)
{
    std::vector<uint8_t> bytes(n);
    for (auto& b : bytes)
        b = static_cast<uint8_t>(rng());
    return bytes;
}

TEST(Robustness, RandomGuestPrograms)
{
    std::mt19937_64 rng(20261207);
    for (int i = 0; i < 300; i++) {
        const auto bytes = random_bytes(rng, 64 + rng() % 4096);
        Program(bytes.data(), bytes.size()).run();
    }
}

// The configuration bytes, the plan's, then: the quick configuration (op 3), Enable Device
// and Enable WQ 0 (op 2, commands 1 and 6), then random operations.
TEST(Robustness, RandomProgramsOnAnEnabledWq)
{
    // clang-format off
    static const uint8_t kPrologue[] = {
        // 2 WQs, 1 engine, 1 group, 17 slots, 3 vectors, 4 KiB transfers, batches of 16,
        // no handles, commands at once, unlimited bandwidth, no latency, seed 3, 8 a step,
        // sync start; then the fuzzer's fault plan in force
        1, 0, 0, 16, 1, 11, 3, 0, 0, 0, 0, 0, 0, 3, 7, 1,
        1,
        3, 5, 5,          // op 3: group 0 with both WQs and the engine, priorities 5
        2, 1, 0, 0, 0, 0, // op 2: operand 0, no INT_REQ, command 1: Enable Device
        2, 1, 0, 0, 0, 5, // op 2: operand 0, no INT_REQ, command 6: Enable WQ 0
    };
    // clang-format on
    std::mt19937_64 rng(7);
    Counters sum;
    for (int i = 0; i < 300; i++) {
        auto bytes = random_bytes(rng, 64 + rng() % 2048);
        bytes.insert(bytes.begin(), std::begin(kPrologue), std::end(kPrologue));
        const Counters c = Program(bytes.data(), bytes.size()).run();
        sum.submitted += c.submitted;
        sum.descriptors += c.descriptors;
        sum.records += c.records;
    }
    // The programs reach the data path: descriptors taken, run and recorded.
    EXPECT_GT(sum.submitted, 300u);
    EXPECT_GT(sum.descriptors, 300u);
    EXPECT_GT(sum.records, 30u);
}

} // namespace
} // namespace dmalab::dsa::fuzz
