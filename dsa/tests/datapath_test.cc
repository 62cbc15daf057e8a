// SPDX-License-Identifier: GPL-2.0-or-later
// The data path end to end as idxd's dmaengine drives it: a memcpy through the limited
// portal, its record, its interrupt on the WQ's vector.

#include <random>
#include <vector>

#include "../src/work.h"
#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kSrc = 0x10000, kDst = 0x20000, kRec = 0x1000;

TEST(DataPath, AMemcpyAsIdxdSendsIt)
{
    Rig r;
    r.bring_up();
    for (unsigned i = 0; i < 8192; i++)
        r.at(kSrc)[i] = static_cast<uint8_t>(i * 7 + 1);
    // idxd_dma_submit_memcpy: CRAV | RCR | RCI, the WQ's handle (its index + 1).
    Desc d(Opcode::Memmove, kRecord | flag::RCI);
    d.completion(kRec).src(kSrc).dst(kDst).size(8192).handle(1);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u) << "0 for an operation that ran to its end";
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst), 8192), 0);
    EXPECT_EQ(std::count(r.irq.raised.begin(), r.irq.raised.end(), 1u), 1);
    EXPECT_EQ(r.dev.counters().descriptors, 1u);
    EXPECT_EQ(r.dev.counters().bytes, 8192u);
    EXPECT_EQ(r.dev.counters().records, 1u);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(DataPath, CrcOfTheCheckString)
{
    Rig r;
    r.bring_up();
    r.poke(kSrc, "123456789", 9);
    Desc d(Opcode::CrcGen, kRecord);
    d.completion(kRec).src(kSrc).size(9);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.word2, 0xe3069283u) << "CRC-32C's check value, seed 0";
}

TEST(DataPath, TheHostsCrcInstructionAndTheTableAgree)
{
    std::mt19937_64 rng(43);
    std::vector<uint8_t> buf(5000);
    for (auto& b : buf)
        b = static_cast<uint8_t>(rng());
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 4095, 5000}) {
        const auto seed = static_cast<uint32_t>(rng());
        EXPECT_EQ(crc32c(seed, buf.data(), n), crc32c_bytewise(seed, buf.data(), n)) << n;
    }
    const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(~crc32c_bytewise(~0u, check, 9), 0xe3069283u);
}

} // namespace
} // namespace dmalab::dsa::testing
