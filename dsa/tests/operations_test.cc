// SPDX-License-Identifier: GPL-2.0-or-later
// Every operation the model runs (DSA spec, "Operations"), through WQ 0 as idxd sets it up:
// the data each leaves in guest memory and the completion record it writes (status,
// RESULT, BYTES_COMPLETED and the operation-specific quadword), then the record and
// interrupt requests every operation shares (CRAV, RCR, RCI).

#include <numeric>

#include "operations.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace ops;

// A memmove of `n` bytes from `src` to `dst` (not overlapping), with its data and record.
void expect_memmove(uint64_t src, uint64_t dst, uint32_t n)
{
    Rig r(Config{}, nullptr, 2u << 20);
    r.bring_up();
    scribble(r, src, n);
    r.fill(dst - 1, 0xee, 1);
    r.fill(dst + n, 0xee, 1);
    Desc d(Opcode::Memmove, kRecord);
    d.completion(kRec).src(src).dst(dst).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success) << n << " bytes";
    EXPECT_EQ(rec.result, 0u) << "a copy that ran forwards";
    EXPECT_EQ(rec.bytes, 0u) << "0 for an operation that ran to its end";
    EXPECT_EQ(std::memcmp(r.at(src), r.at(dst), n), 0) << n << " bytes";
    EXPECT_EQ(*r.at(dst - 1), 0xee) << "nothing before the destination";
    EXPECT_EQ(*r.at(dst + n), 0xee) << "nothing after the destination";
    EXPECT_EQ(r.dev.counters().bytes, n);
}

TEST(Operations, MemmoveOfOneByte)
{
    expect_memmove(kSrc, kDst, 1);
}

TEST(Operations, MemmoveOfSevenBytes)
{
    expect_memmove(kSrc + 3, kDst + 5, 7);
}

TEST(Operations, MemmoveOfAPage)
{
    expect_memmove(kSrc, kDst, 4096);
}

TEST(Operations, MemmoveAcrossPagesWithUnalignedEnds)
{
    // Source and destination cross page boundaries at different offsets.
    expect_memmove(kSrc + 0xffd, kDst + 0x7, 3 * 4096 + 11);
}

TEST(Operations, MemmoveOf64KiB)
{
    expect_memmove(kSrc, kDst, 64 * 1024);
}

TEST(Operations, OverlappingMemmoveWithTheDestinationInsideTheSourceIsAMemmove)
{
    // GENCAP.OVERLAP_COPY: as if the source went to a temporary buffer first.
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 10000;
    scribble(r, kSrc, n + 100);
    std::vector<uint8_t> want(r.at(kSrc), r.at(kSrc) + n + 100);
    std::memmove(want.data() + 100, want.data(), n);
    Desc d(Opcode::Memmove, kRecord);
    d.completion(kRec).src(kSrc).dst(kSrc + 100).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), r.at(kSrc)))
        << "the source's bytes, unharmed by the copy's own writes";
}

TEST(Operations, OverlappingMemmoveWithTheDestinationBelowTheSourceIsAMemmove)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 10000;
    scribble(r, kSrc, n + 100);
    std::vector<uint8_t> want(r.at(kSrc), r.at(kSrc) + n + 100);
    std::memmove(want.data(), want.data() + 100, n);
    Desc d(Opcode::Memmove, kRecord);
    d.completion(kRec).src(kSrc + 100).dst(kSrc).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 0u) << "copied forwards";
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), r.at(kSrc)));
}

TEST(Operations, AReversedOverlappingMemmoveStoppedByAFaultSaysSoInResult)
{
    // RESULT 1 on a partial completion: the copy ran from the end, so BYTES_COMPLETED
    // counts the tail done and software resumes with the same addresses and a smaller
    // size (accel-config's dsa_reprep_memcpy).
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 3 * 4096;
    scribble(r, kSrc, n + 4096);
    std::vector<uint8_t> src(r.at(kSrc), r.at(kSrc) + n);
    r.mem.add_hole(kSrc, 4096, true); // the source's first page faults
    Desc d(Opcode::Memmove, kRecord);
    d.completion(kRec).src(kSrc).dst(kSrc + 4096).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.result, 1u) << "the copy ran backwards";
    EXPECT_EQ(rec.bytes, 2u * 4096) << "the two pages above the fault";
    EXPECT_EQ(rec.fault_addr, kSrc);
    EXPECT_TRUE(std::equal(src.begin() + 4096, src.end(), r.at(kSrc + 2 * 4096)))
        << "the tail is in place";
}

TEST(Operations, FillRepeatsThePatternLittleEndianFromTheFirstByte)
{
    Rig r;
    r.bring_up();
    r.fill(kDst, 0xee, 32);
    Desc d(Opcode::Fill, kRecord);
    d.completion(kRec).src(kPattern).dst(kDst + 1).size(20);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    const uint8_t want[] = {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0xef, 0xcd,
                            0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0xef, 0xcd, 0xab, 0x89};
    EXPECT_EQ(std::memcmp(r.at(kDst + 1), want, sizeof want), 0)
        << "the pattern's byte 0 at the destination's first byte, wherever it is aligned";
    EXPECT_EQ(*r.at(kDst), 0xee);
    EXPECT_EQ(*r.at(kDst + 21), 0xee) << "nothing past the transfer size";
}

TEST(Operations, FillOfAnOddSizeAcrossPages)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 2 * 4096 + 13;
    constexpr uint64_t dst = kDst + 4093;
    r.fill(dst + n, 0xee, 8);
    Desc d(Opcode::Fill, kRecord);
    d.completion(kRec).src(kPattern).dst(dst).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (r.at(dst)[i] != pattern_byte(kPattern, i))
            bad = i;
    EXPECT_EQ(bad, n) << "first wrong byte of the fill";
    EXPECT_EQ(*r.at(dst + n), 0xee) << "nothing past the transfer size";
}

TEST(Operations, CompareOfEqualBuffers)
{
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 10000);
    scribble(r, kSrc2, 10000);
    Desc d(Opcode::Compare, kRecord);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(10000);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 0u) << "equal";
    EXPECT_EQ(rec.bytes, 0u);
}

TEST(Operations, CompareReportsTheOffsetOfTheFirstDifference)
{
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 10000);
    scribble(r, kSrc2, 10000);
    r.at(kSrc2)[6001] ^= 0x10;
    r.at(kSrc2)[9000] ^= 0x10; // a later difference changes nothing
    Desc d(Opcode::Compare, kRecord);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(10000);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 1u) << "not equal";
    EXPECT_EQ(rec.bytes, 6001u) << "the first differing byte's offset";
}

TEST(Operations, CompareDifferingInTheFirstByte)
{
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 64);
    scribble(r, kSrc2, 64);
    r.at(kSrc2)[0] ^= 1;
    Desc d(Opcode::Compare, kRecord);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(64);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 1u);
    EXPECT_EQ(rec.bytes, 0u);
}

TEST(Operations, ComparePatternOfAMatchingBuffer)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 5000;
    for (size_t i = 0; i < n; i++)
        r.at(kSrc)[i] = pattern_byte(kPattern, i);
    Desc d(Opcode::ComparePattern, kRecord);
    d.completion(kRec).src(kSrc).word(3, kPattern).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 0u);
    EXPECT_EQ(rec.bytes, 0u);
}

TEST(Operations, ComparePatternReportsTheFirstDifference)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 5000;
    for (size_t i = 0; i < n; i++)
        r.at(kSrc)[i] = pattern_byte(kPattern, i);
    r.at(kSrc)[4099] ^= 0x80;
    Desc d(Opcode::ComparePattern, kRecord);
    d.completion(kRec).src(kSrc).word(3, kPattern).size(n);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 1u);
    EXPECT_EQ(rec.bytes, 4099u);
}

// A Compare of two 256-byte buffers differing at byte 40, with CR and EXPECTED_RESULT.
Record compare_expecting(uint8_t expected, bool differ)
{
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 256);
    scribble(r, kSrc2, 256);
    if (differ)
        r.at(kSrc2)[40] ^= 1;
    Desc d(Opcode::Compare, kRecord | flag::CR);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(256).word(5, expected);
    return r.run_desc(0, d, kRec);
}

TEST(Operations, CompareWithCheckResultMismatchIsSuccessWithFalsePredicate)
{
    const Record rec = compare_expecting(0, true);
    EXPECT_EQ(rec.code(), Status::SuccessFalsePredicate) << "status 02h";
    EXPECT_EQ(rec.result, 1u) << "RESULT still says what the compare found";
    EXPECT_EQ(rec.bytes, 40u);
}

TEST(Operations, CompareWithCheckResultMatchIsSuccess)
{
    EXPECT_EQ(compare_expecting(1, true).code(), Status::Success) << "expected unequal";
    EXPECT_EQ(compare_expecting(0, false).code(), Status::Success) << "expected equal";
    EXPECT_EQ(compare_expecting(1, false).code(), Status::SuccessFalsePredicate)
        << "expected unequal, found equal";
}

TEST(Operations, CheckResultLooksOnlyAtBitZeroOfTheExpectedResult)
{
    // Compare, "Bits 7:1 of Expected Result are ignored" (Table 8-17); Compare Pattern
    // behaves the same.
    EXPECT_EQ(compare_expecting(0xfe, false).code(), Status::Success)
        << "bit 0 clear: equal expected, equal found";
    EXPECT_EQ(compare_expecting(0x03, true).code(), Status::Success)
        << "bit 0 set: unequal expected, unequal found";
    EXPECT_EQ(compare_expecting(0xfe, true).code(), Status::SuccessFalsePredicate);
}

TEST(Operations, ComparePatternWithCheckResultMismatch)
{
    Rig r;
    r.bring_up();
    r.fill(kSrc, 0x5a, 64);
    Desc d(Opcode::ComparePattern, kRecord | flag::CR);
    d.completion(kRec).src(kSrc).word(3, 0x5a5a5a5a5a5a5a5aull).size(64).word(5, 1);
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::SuccessFalsePredicate);
}

TEST(Operations, DualcastWritesBothDestinations)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 5000;
    scribble(r, kSrc, n);
    r.fill(kDst + n, 0xee, 1);
    r.fill(kDst2 + n, 0xee, 1);
    Desc d(Opcode::Dualcast, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst).size(n).word(5, kDst2);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst), n), 0) << "destination 1";
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst2), n), 0) << "destination 2";
    EXPECT_EQ(*r.at(kDst + n), 0xee);
    EXPECT_EQ(*r.at(kDst2 + n), 0xee);
}

// CRC Generation of `n` bytes at kSrc with `seed`: CRC_VAL, or ~0 if it failed.
uint32_t crc_of(Rig& r, uint32_t n, uint32_t seed, uint64_t src = kSrc)
{
    Desc d(Opcode::CrcGen, kRecord);
    d.completion(kRec).src(src).size(n).word(5, seed);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.word2 >> 32, 0u) << "CRC_VAL is 32 bits";
    return rec.code() == Status::Success ? static_cast<uint32_t>(rec.word2) : ~0u;
}

TEST(Operations, CrcGenerationGivesCrc32csCheckValue)
{
    Rig r;
    r.bring_up();
    r.poke(kSrc, "123456789", 9);
    EXPECT_EQ(crc_of(r, 9, 0), 0xe3069283u) << "CRC-32C of \"123456789\", seed 0";
    EXPECT_EQ(crc_of(r, 9, 0x12345678), 0x27d87b6au) << "seed 0x12345678";
}

TEST(Operations, CrcGenerationOfAccelConfigsBuffer)
{
    // accel-config's init_crcgen: 4 KiB of one quadword repeated, its default seed.
    Rig r;
    r.bring_up();
    for (unsigned i = 0; i < 4096; i += 8)
        std::memcpy(r.at(kSrc + i), &kPattern, 8);
    EXPECT_EQ(crc_of(r, 4096, 0x12345678), 0x1b6f4410u);
}

TEST(Operations, CrcGenerationChainsThroughItsSeed)
{
    // crc(B, seed = crc(A)) == crc(A followed by B): how software resumes a partial CRC.
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 10000);
    const uint32_t whole = crc_of(r, 10000, 0);
    const uint32_t a = crc_of(r, 3333, 0);
    EXPECT_EQ(crc_of(r, 10000 - 3333, a, kSrc + 3333), whole);
}

TEST(Operations, CopyWithCrcCopiesAndReportsTheSourcesCrc)
{
    Rig r;
    r.bring_up();
    constexpr uint32_t n = 6000;
    scribble(r, kSrc, n);
    const uint32_t want = crc_of(r, n, 0x9abcdef0);
    Desc d(Opcode::CopyCrc, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst + 3).size(n).word(5, 0x9abcdef0);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.word2, want) << "the same CRC as CRC Generation's";
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst + 3), n), 0);
}

TEST(Operations, CopyWithCrcOfTheCheckString)
{
    Rig r;
    r.bring_up();
    r.poke(kSrc, "123456789", 9);
    Desc d(Opcode::CopyCrc, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst).size(9);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.word2, 0xe3069283u);
    EXPECT_EQ(std::memcmp(r.at(kDst), "123456789", 9), 0);
}

TEST(Operations, NoopSucceeds)
{
    Rig r;
    r.bring_up();
    Desc d(Opcode::Noop, kRecord);
    d.completion(kRec);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(r.dev.counters().descriptors, 1u);
    EXPECT_EQ(r.dev.counters().records, 1u);
}

TEST(Operations, WithoutRcrASuccessWritesNoRecord)
{
    // CRAV without RCR: a record only for an operation that did not succeed.
    Rig r;
    r.bring_up();
    scribble(r, kSrc, 100);
    Desc d(Opcode::Memmove, flag::CRAV);
    d.completion(kRec).src(kSrc).dst(kDst).size(100);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.status, 0u) << "no record";
    EXPECT_EQ(r.dev.counters().records, 0u);
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst), 100), 0) << "the copy itself happened";
}

TEST(Operations, WithoutRcrAFailureStillWritesARecord)
{
    Rig r;
    r.bring_up();
    r.mem.add_hole(kSrc, 4096, true);
    Desc d(Opcode::Memmove, flag::CRAV);
    d.completion(kRec).src(kSrc).dst(kDst).size(100);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(r.dev.counters().records, 1u);
}

TEST(Operations, RciInterruptsOnTheVectorTheHandleNames)
{
    // Without interrupt handles the handle is the MSI-X index: idxd gives WQ n handle n + 1
    // (idxd_wq_request_irq).
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    Desc d(Opcode::Noop, kRecord | flag::RCI);
    d.completion(kRec).handle(1);
    r.run_desc(0, d, kRec);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{1u}) << "one message, vector 1";
    r.irq.raised.clear();
    d.handle(5);
    r.run_desc(0, d, kRec);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{5u}) << "the handle picks the vector";
}

TEST(Operations, WithoutRciNoInterrupt)
{
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    Desc d(Opcode::Noop, kRecord);
    d.completion(kRec);
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::Success);
    EXPECT_TRUE(r.irq.raised.empty());
}

TEST(Operations, RciWithoutARecordStillInterrupts)
{
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    scribble(r, kSrc, 64);
    Desc d(Opcode::Memmove, flag::RCI);
    d.src(kSrc).dst(kDst).size(64).handle(2);
    r.submit(0, d);
    r.run_until_idle();
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{2u});
    EXPECT_EQ(std::memcmp(r.at(kSrc), r.at(kDst), 64), 0);
}

// A completion record written to a device window: every write, in order, and how many
// completion interrupts had gone out when it came.
struct RecordWrites {
    struct One {
        uint64_t offset;
        std::vector<uint8_t> data;
        size_t raised;
    };
    std::vector<One> writes;
};

constexpr uint64_t kWin = 0xa0000;

void watch_record(Rig& r, RecordWrites& w)
{
    r.mem.add_window(
        {kWin, kCompletionRecordSize, [&r, &w](uint64_t off, const uint8_t* p, size_t n) {
             w.writes.push_back({off, {p, p + n}, r.irq.raised.size()});
         }});
}

TEST(Operations, TheRecordIsWrittenWholeWithItsStatusByteLast)
{
    // Software polls the status byte: when it is non-zero the rest must be there.
    Rig r;
    r.bring_up();
    RecordWrites w;
    watch_record(r, w);
    r.poke(kSrc, "123456789", 9);
    Desc d(Opcode::CrcGen, kRecord);
    d.completion(kWin).src(kSrc).size(9);
    r.submit(0, d);
    r.run_until_idle();
    ASSERT_FALSE(w.writes.empty());
    std::vector<unsigned> covered(kCompletionRecordSize, 0);
    for (size_t i = 0; i < w.writes.size(); i++) {
        const auto& one = w.writes[i];
        for (size_t k = 0; k < one.data.size(); k++)
            covered.at(one.offset + k)++;
        if (i + 1 < w.writes.size()) {
            EXPECT_GT(one.offset, 0u) << "write " << i << " comes before the status byte's";
        }
    }
    EXPECT_EQ(std::count(covered.begin(), covered.end(), 1u), kCompletionRecordSize)
        << "each of the 32 bytes written exactly once";
    const auto& last = w.writes.back();
    ASSERT_EQ(last.offset, 0u);
    EXPECT_EQ(last.data.at(0), static_cast<uint8_t>(Status::Success));
}

TEST(Operations, TheRecordIsWrittenBeforeTheInterrupt)
{
    // idxd's interrupt thread reads the record when the vector fires (idxd_wq_thread).
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    RecordWrites w;
    watch_record(r, w);
    Desc d(Opcode::Noop, kRecord | flag::RCI);
    d.completion(kWin).handle(1);
    r.submit(0, d);
    r.run_until_idle();
    ASSERT_FALSE(w.writes.empty());
    for (const auto& one : w.writes)
        EXPECT_EQ(one.raised, 0u) << "no interrupt before the record write at " << one.offset;
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{1u});
}

TEST(Operations, TheRecordsReservedBytesAreWrittenAsZero)
{
    Rig r;
    r.bring_up();
    r.fill(kRec, 0xff, 32);
    r.poke(kSrc, "123456789", 9);
    Desc d(Opcode::CrcGen, kRecord);
    d.completion(kRec).src(kSrc).size(9);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(r.at(kRec)[2], 0u);
    EXPECT_EQ(r.at(kRec)[3], 0u);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.fault_addr, 0u);
    EXPECT_EQ(rec.word2, 0xe3069283u);
    EXPECT_EQ(rec.word3, 0u);
}

} // namespace
} // namespace dmalab::dsa::testing
