// SPDX-License-Identifier: GPL-2.0-or-later
// Create Delta Record and Apply Delta Record (DSA spec, "Create Delta Record", "Apply
// Delta Record"), through WQ 0 as idxd sets it up: the record each writes or reads, the
// data it leaves, RESULT, BYTES_COMPLETED and the record size.

#include "operations.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace ops;

// Two 512-byte sources for the delta operations: the second differs from the first in
// quadwords `diff`.
void delta_sources(Rig& r, std::initializer_list<unsigned> diff)
{
    scribble(r, kSrc, 512);
    std::memcpy(r.at(kSrc2), r.at(kSrc), 512);
    for (unsigned q : diff)
        for (unsigned b = 0; b < 8; b++)
            r.at(kSrc2 + 8 * q)[b] ^= static_cast<uint8_t>(0x11 * (b + 1));
}

Desc create_delta(uint32_t size, uint32_t max, uint32_t flags = kRecord)
{
    Desc d(Opcode::CreateDelta, flags);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(size).word(5, kDelta).word(6, max);
    return d;
}

Desc apply_delta(uint32_t size, uint32_t rec_size, uint64_t delta = kDelta)
{
    Desc d(Opcode::ApplyDelta, kRecord);
    d.completion(kRec).word(2, delta).dst(kDst).size(size).word(5, rec_size);
    return d;
}

TEST(Operations, CreateDeltaRecordsEachDifferingQuadword)
{
    Rig r;
    r.bring_up();
    delta_sources(r, {0, 5, 63});
    const Record rec = r.run_desc(0, create_delta(512, 1024), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 1u) << "differences, all recorded";
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.word2, 30u) << "DELTA_REC_SIZE: 10 bytes per differing quadword";
    const unsigned qs[] = {0, 5, 63};
    for (unsigned i = 0; i < 3; i++) {
        uint16_t off;
        std::memcpy(&off, r.at(kDelta + 10 * i), 2);
        EXPECT_EQ(off, qs[i]) << "entry " << i << ": the offset in quadwords";
        EXPECT_EQ(std::memcmp(r.at(kDelta + 10 * i + 2), r.at(kSrc2 + 8 * qs[i]), 8), 0)
            << "entry " << i << ": the second source's quadword";
    }
}

TEST(Operations, ApplyDeltaReproducesTheSecondSource)
{
    Rig r;
    r.bring_up();
    delta_sources(r, {0, 1, 17, 40, 63});
    const Record made = r.run_desc(0, create_delta(512, 1024), kRec);
    ASSERT_EQ(made.code(), Status::Success);
    ASSERT_EQ(made.word2, 50u);
    std::memcpy(r.at(kDst), r.at(kSrc), 512);
    r.fill(kDst + 512, 0xee, 8);
    r.fill(kRec, 0, 32);
    const Record rec = r.run_desc(0, apply_delta(512, static_cast<uint32_t>(made.word2)), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(std::memcmp(r.at(kDst), r.at(kSrc2), 512), 0) << "the first source, patched";
    EXPECT_EQ(*r.at(kDst + 512), 0xee);
}

TEST(Operations, CreateDeltaOfEqualBuffersIsEmpty)
{
    Rig r;
    r.bring_up();
    delta_sources(r, {});
    r.fill(kDelta, 0xee, 80);
    const Record rec = r.run_desc(0, create_delta(512, 80), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 0u) << "equal";
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.word2, 0u) << "DELTA_REC_SIZE";
    EXPECT_EQ(*r.at(kDelta), 0xee) << "nothing written to the delta record";
}

TEST(Operations, CreateDeltaThatOverflowsStopsAtTheDifferenceThatDidNotFit)
{
    // Nine differences, room for eight: RESULT 2, the record full, BYTES_COMPLETED where
    // the comparison stopped (the ninth difference, which is not counted).
    Rig r;
    r.bring_up();
    delta_sources(r, {0, 2, 4, 6, 8, 10, 12, 14, 16, 30});
    const Record rec = r.run_desc(0, create_delta(512, 80), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 2u) << "overflow";
    EXPECT_EQ(rec.word2, 80u) << "eight entries written";
    EXPECT_EQ(rec.bytes, 16u * 8) << "the ninth differing quadword's offset";
    uint16_t last;
    std::memcpy(&last, r.at(kDelta + 70), 2);
    EXPECT_EQ(last, 14u) << "the eighth difference is the record's last entry";
}

TEST(Operations, CreateDeltaWithCheckResultAgainstTheMask)
{
    // The expected result is a mask: bit n accepts RESULT n.
    Rig r;
    r.bring_up();
    delta_sources(r, {3});
    Desc d = create_delta(512, 80, kRecord | flag::CR);
    d.word(7, 1u << 0); // only "equal" expected
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::SuccessFalsePredicate);
    r.fill(kRec, 0, 32);
    r.fill(kRec, 0, 32);
    d.word(7, 1u << 2); // only an overflow expected
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::SuccessFalsePredicate);
    r.fill(kRec, 0, 32);
    d.word(7, 1u << 1);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success) << "differences were expected";
    EXPECT_EQ(rec.result, 1u);
}

TEST(Operations, ApplyDeltaWithOffsetsOutOfOrderStops)
{
    Rig r;
    r.bring_up();
    r.fill(kDst, 0, 64);
    put_entry(r, kDelta, 3, 0x3333333333333333ull);
    put_entry(r, kDelta + 10, 1, 0x1111111111111111ull);
    const Record rec = r.run_desc(0, apply_delta(64, 20), kRec);
    EXPECT_EQ(rec.code(), Status::DeltaOffsetOrder) << "status 07h";
    EXPECT_EQ(rec.bytes, 10u) << "one entry of the record applied";
    uint64_t q3, q1;
    std::memcpy(&q3, r.at(kDst + 24), 8);
    std::memcpy(&q1, r.at(kDst + 8), 8);
    EXPECT_EQ(q3, 0x3333333333333333ull) << "the first entry was applied";
    EXPECT_EQ(q1, 0u) << "the out-of-order entry was not";
}

TEST(Operations, ApplyDeltaWithARepeatedOffsetStops)
{
    // Create Delta only emits rising offsets: a repeat is out of order too.
    Rig r;
    r.bring_up();
    put_entry(r, kDelta, 2, 1);
    put_entry(r, kDelta + 10, 2, 2);
    const Record rec = r.run_desc(0, apply_delta(64, 20), kRec);
    EXPECT_EQ(rec.code(), Status::DeltaOffsetOrder);
    EXPECT_EQ(rec.bytes, 10u);
}

TEST(Operations, ApplyDeltaWithAnOffsetBeyondTheTransferStops)
{
    Rig r;
    r.bring_up();
    r.fill(kDst, 0, 80);
    put_entry(r, kDelta, 0, 0x0101010101010101ull);
    put_entry(r, kDelta + 10, 8, 0x0808080808080808ull); // byte 64 of a 64-byte transfer
    const Record rec = r.run_desc(0, apply_delta(64, 20), kRec);
    EXPECT_EQ(rec.code(), Status::DeltaOffsetRange) << "status 08h";
    EXPECT_EQ(rec.bytes, 10u);
    EXPECT_EQ(*r.at(kDst), 0x01);
    EXPECT_EQ(*r.at(kDst + 64), 0u) << "nothing written past the transfer";
}

TEST(Operations, ApplyDeltaWithTheLastQuadwordsOffsetSucceeds)
{
    Rig r;
    r.bring_up();
    put_entry(r, kDelta, 7, 0x0707070707070707ull);
    const Record rec = r.run_desc(0, apply_delta(64, 10), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(*r.at(kDst + 56), 0x07);
}

TEST(Operations, CacheFlushSucceeds)
{
    Rig r;
    r.bring_up();
    scribble(r, kDst, 8192);
    Desc d(Opcode::CacheFlush, kRecord);
    d.completion(kRec).dst(kDst).size(8192);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(r.at(kDst)[100], (100 * 7 + 1) % 251) << "a flush changes no data";
}

} // namespace
} // namespace dmalab::dsa::testing
