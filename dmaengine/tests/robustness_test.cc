// SPDX-License-Identifier: GPL-2.0-or-later
// Whatever a guest does, the model keeps its invariants: pseudo-random guest programs (the
// fuzzer's interpreter, fixed seeds so a failure reproduces) run without a crash, a leaked
// mapping, a stray interrupt vector or work that does not drain.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../fuzz/program.h"

namespace dmalab::ioat::fuzz
{
namespace
{

TEST(Robustness, RandomGuestPrograms)
{
    std::mt19937_64 rng(20261130);
    for (int i = 0; i < 300; i++) {
        std::vector<uint8_t> bytes(64 + rng() % 4096);
        for (auto& b : bytes)
            b = static_cast<uint8_t>(rng());
        Program(bytes.data(), bytes.size()).run();
    }
}

// A guest that builds a valid self-looping chain and issues the maximum count: bounded steps.
TEST(Robustness, SelfLoopWithMaximalCount)
{
    // One channel, small xfercap, 1 us per descriptor, default timing, MSI-X.
    std::vector<uint8_t> prog = {0, 0, 1, 0, 0, 0, 0};
    auto put16 = [&](uint16_t v) {
        prog.push_back(static_cast<uint8_t>(v));
        prog.push_back(static_cast<uint8_t>(v >> 8));
    };
    auto put64 = [&](uint64_t v) {
        for (int i = 0; i < 8; i++)
            prog.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    // Descriptor at 0x1000: size 16, copy 0x2000 -> 0x3000, next = itself.
    prog.push_back(6), put16(0x1000), put64(0x0000000000000010ull); // size, ctl
    prog.push_back(6), put16(0x1008), put64(0x2000);
    prog.push_back(6), put16(0x1010), put64(0x3000);
    prog.push_back(6), put16(0x1018), put64(0x1000);
    // CHAINADDR = 0x1000, DMACOUNT = 0xffff on channel 0.
    prog.push_back(0), put16(0x80 + CHAINADDR), prog.push_back(3), put64(0x1000);
    prog.push_back(0), put16(0x80 + DMACOUNT), prog.push_back(1), put64(0xffff);
    Program(prog.data(), prog.size(), true).run();
}

} // namespace
} // namespace dmalab::ioat::fuzz
