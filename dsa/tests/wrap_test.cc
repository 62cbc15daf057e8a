// SPDX-License-Identifier: GPL-2.0-or-later
// Every range of every operation that goes past 2^64, in steps of every size: the operation
// faults at the wrap (03h, FAULT_ADDR 0), and nothing is read or written at address 0, where
// the address of what lies beyond the top comes to modulo 2^64. The top page is a window
// that reads as zeros (so compares and deltas run on to the wrap) and counts what it takes.

#include "operations.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace ops;

constexpr uint64_t kTop = 0 - uint64_t{4096}; // the last page below 2^64
constexpr uint32_t kSize = 2 * 4096;          // one page below the top, one past it
constexpr uint8_t kMark = 0x5a;               // what address 0 holds, and keeps

struct Range {
    const char* name;
    Opcode op;
    unsigned word; // the descriptor word that holds the range's address
};

constexpr Range kRanges[] = {
    {"memmove source", Opcode::Memmove, 2},
    {"memmove destination", Opcode::Memmove, 3},
    {"fill destination", Opcode::Fill, 3},
    {"compare first source", Opcode::Compare, 2},
    {"compare second source", Opcode::Compare, 3},
    {"compare-pattern source", Opcode::ComparePattern, 2},
    {"create-delta first source", Opcode::CreateDelta, 2},
    {"create-delta second source", Opcode::CreateDelta, 3},
    {"apply-delta destination", Opcode::ApplyDelta, 3},
    {"dualcast source", Opcode::Dualcast, 2},
    {"dualcast first destination", Opcode::Dualcast, 3},
    {"dualcast second destination", Opcode::Dualcast, 5},
    {"crc source", Opcode::CrcGen, 2},
    {"copy-crc source", Opcode::CopyCrc, 2},
    {"copy-crc destination", Opcode::CopyCrc, 3},
};

// The operation with every range in RAM (zeros, so compares match), then `r.word` moved to
// the top page.
Desc descriptor(Rig& rig, const Range& r)
{
    Desc d(r.op, kRecord);
    d.completion(kRec).size(kSize);
    switch (r.op) {
    case Opcode::ComparePattern:
        d.src(kSrc).word(3, 0);
        break;
    case Opcode::Fill:
        d.word(2, 0x0123456789abcdefull).dst(kDst);
        break;
    case Opcode::CreateDelta:
        d.src(kSrc).dst(kSrc2).word(5, kDelta).word(6, 80);
        break;
    case Opcode::ApplyDelta:
        // One entry a quadword, in order: the destination is written to its end.
        for (unsigned q = 0; q < kSize / 8; q++)
            put_entry(rig, kDelta + 10 * q, static_cast<uint16_t>(q), kPattern);
        d.word(2, kDelta).dst(kDst).word(5, 10 * (kSize / 8));
        break;
    case Opcode::Dualcast:
        d.src(kSrc).dst(kDst).word(5, kDst2);
        break;
    case Opcode::CrcGen:
        d.src(kSrc);
        break;
    default:
        d.src(kSrc).dst(kDst);
        break;
    }
    return d.word(r.word, kTop);
}

TEST(Wrap, EveryRangePast2To64FaultsAtTheWrapAndLeavesAddress0Alone)
{
    for (const uint64_t step : {uint64_t{256}, uint64_t{4096}, uint64_t{1} << 20}) {
        for (const Range& range : kRanges) {
            SCOPED_TRACE(std::string(range.name) + ", steps of " + std::to_string(step));
            Config c;
            c.step_bytes = step;
            Rig r(c, nullptr, 2u << 20);
            r.bring_up();
            uint64_t written = 0;
            r.mem.add_window(
                {kTop, 4096, [&written](uint64_t, const uint8_t*, size_t n) { written += n; }});
            r.fill(0, kMark, kRec);
            const Record rec = r.run_desc(0, descriptor(r, range), kRec);
            EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
            EXPECT_EQ(rec.fault_addr, 0u);
            EXPECT_LE(written, 4096u) << "what lies below the top, at most";
            const uint8_t* low = r.at(0);
            EXPECT_TRUE(std::all_of(low, low + kRec, [](uint8_t b) { return b == kMark; }))
                << "address 0 written";
            const uint8_t* dst = r.at(kDst + 4096);
            EXPECT_TRUE(std::all_of(dst, dst + 4096, [](uint8_t b) { return b == 0; }))
                << "address 0's bytes landed in the destination";
        }
    }
}

} // namespace
} // namespace dmalab::dsa::testing
