// SPDX-License-Identifier: GPL-2.0-or-later
// The DIF operations (DSA spec, "DIF Operations"): Insert, Check, Strip and Update through
// WQ 0 on every block size, against protection information this file computes itself (dif.h):
// the data and tuples each leaves in guest memory, its record (status, BYTES_COMPLETED, the
// tags of its next block), and where a page fault stops it. The checks' verdicts and the
// descriptor checks are dif_checks_test.cc's.

#include "dif.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace dif_ops;

TEST(Dif, TheTestsOwnCrcHasThePublishedCheckValue)
{
    // CRC-16/T10-DIF of the ASCII digits 1 to 9 is 0xD0DB (the CRC catalogue's check value).
    EXPECT_EQ(crc16(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xd0dbu);
    const uint8_t zeros[512] = {};
    EXPECT_EQ(crc16(zeros, sizeof zeros), 0u) << "no initial value, no final xor";
}

TEST(Dif, InsertThenCheckRoundTripsOnEveryBlockSize)
{
    for (unsigned code = 0; code < 4; code++) {
        SCOPED_TRACE(kBlock[code]);
        const uint32_t block = kBlock[code], n = 3;
        DifRig r;
        scribble(r, kSrc, block * n, code);
        r.fill(kDst + n * (block + 8), 0xee, 1);
        Fields f{.size_code = code, .dst_ref = 0x1000, .dst_app = 0xbeef};
        Record rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, block * n, f), kRec);
        EXPECT_EQ(rec.code(), Status::Success);
        EXPECT_EQ(rec.bytes, 0u);
        EXPECT_EQ(rec.word2, 0u) << "Insert has no source tags";
        EXPECT_EQ(tags_of(rec.word3), (Tags{0x1003, 0, 0xbeef})) << "the next block's tags";
        for (unsigned k = 0; k < n; k++) {
            const uint64_t out = kDst + k * (block + 8);
            EXPECT_EQ(std::memcmp(r.at(out), r.at(kSrc + k * block), block), 0) << "block " << k;
            const Tuple want{crc16(r.at(kSrc + k * block), block), 0xbeef, 0x1000 + k};
            EXPECT_EQ(tuple_at(r, out + block), want) << "block " << k;
        }
        EXPECT_EQ(*r.at(kDst + n * (block + 8)), 0xee) << "nothing after the last tuple";

        Fields c{.size_code = code, .src_ref = 0x1000, .src_app = 0xbeef};
        rec = r.run_desc(0, dif_desc(Opcode::DifCheck, kDst, 0, (block + 8) * n, c), kRec);
        EXPECT_EQ(rec.code(), Status::Success);
        EXPECT_EQ(rec.result, 0u);
        EXPECT_EQ(rec.bytes, 0u);
        EXPECT_EQ(tags_of(rec.word2), (Tags{0x1003, 0, 0xbeef}));
        EXPECT_EQ(rec.word3, 0u) << "Check has no destination tags";
    }
}

TEST(Dif, InsertWithInvertedSeedAndResultStampsTheInvertedGuard)
{
    DifRig r;
    scribble(r, kSrc, 512);
    Fields f{.size_code = 0, .flags = kInvertSeed | kInvertResult, .dst_ref = 7};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 512, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(tuple_at(r, kDst + 512).guard,
              static_cast<uint16_t>(~crc16(r.at(kSrc), 512, 0xffff)));
    // Only the seed inverted:
    f.flags = kInvertSeed;
    r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 512, f), kRec);
    EXPECT_EQ(tuple_at(r, kDst + 512).guard, crc16(r.at(kSrc), 512, 0xffff));
}

TEST(Dif, InsertCountsTheApplicationTagWhenAskedAndMasksIt)
{
    // The mask's 1 bits are written as 0 (Intel DML's reference and tests).
    DifRig r;
    scribble(r, kSrc, 4 * 520);
    Fields f{.size_code = 1,
             .dest_flags = kAppIncrement | kRefFixed,
             .dst_ref = 0xfffffffe,
             .dst_mask = 0xf000,
             .dst_app = 0x1ffe};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 4 * 520, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    for (unsigned k = 0; k < 4; k++) {
        const Tuple t = tuple_at(r, kDst + k * 528 + 520);
        EXPECT_EQ(t.app, (0x1ffe + k) & 0x0fff) << "block " << k;
        EXPECT_EQ(t.ref, 0xfffffffeu) << "fixed";
    }
    EXPECT_EQ(tags_of(rec.word3), (Tags{0xfffffffe, 0xf000, 0x2002})) << "unmasked, counted";
}

TEST(Dif, TheReferenceTagWrapsAt32Bits)
{
    DifRig r;
    scribble(r, kSrc, 3 * 512);
    Fields f{.dst_ref = 0xffffffff};
    r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 3 * 512, f), kRec);
    EXPECT_EQ(tuple_at(r, kDst + 512).ref, 0xffffffffu);
    EXPECT_EQ(tuple_at(r, kDst + 520 + 512).ref, 0u);
    EXPECT_EQ(tuple_at(r, kDst + 2 * 520 + 512).ref, 1u);
}

TEST(Dif, StripCopiesTheDataWithoutTheTuples)
{
    for (unsigned code = 0; code < 4; code++) {
        SCOPED_TRACE(kBlock[code]);
        const uint32_t block = kBlock[code], n = 4;
        DifRig r;
        protect(r, kSrc, block, n, 0x20, 0x4242);
        r.fill(kDst + n * block, 0xee, 8);
        Fields f{.size_code = code, .src_ref = 0x20, .src_app = 0x4242};
        const Record rec =
            r.run_desc(0, dif_desc(Opcode::DifStrip, kSrc, kDst, (block + 8) * n, f), kRec);
        EXPECT_EQ(rec.code(), Status::Success);
        EXPECT_EQ(rec.bytes, 0u);
        for (unsigned k = 0; k < n; k++)
            EXPECT_EQ(std::memcmp(r.at(kDst + k * block), r.at(kSrc + k * (block + 8)), block), 0)
                << "block " << k;
        EXPECT_EQ(*r.at(kDst + n * block), 0xee) << "the destination is the data only";
        EXPECT_EQ(tags_of(rec.word2), (Tags{0x24, 0, 0x4242}));
        EXPECT_EQ(rec.word3, 0u);
        EXPECT_EQ(r.dev.counters().bytes, (block + 8) * n) << "source bytes";
    }
}

TEST(Dif, UpdateChecksTheSourceAndWritesNewTags)
{
    for (unsigned code : {0u, 3u}) {
        const uint32_t block = kBlock[code], n = 3;
        DifRig r;
        protect(r, kSrc, block, n, 100, 0x1111);
        Fields f{.size_code = code,
                 .dest_flags = kAppIncrement,
                 .src_ref = 100,
                 .src_app = 0x1111,
                 .dst_ref = 0x5000,
                 .dst_app = 0x2220};
        const Record rec =
            r.run_desc(0, dif_desc(Opcode::DifUpdate, kSrc, kDst, (block + 8) * n, f), kRec);
        EXPECT_EQ(rec.code(), Status::Success);
        for (unsigned k = 0; k < n; k++) {
            const uint64_t in = kSrc + k * (block + 8), out = kDst + k * (block + 8);
            EXPECT_EQ(std::memcmp(r.at(out), r.at(in), block), 0) << "block " << k;
            const Tuple want{crc16(r.at(in), block), static_cast<uint16_t>(0x2220 + k), 0x5000 + k};
            EXPECT_EQ(tuple_at(r, out + block), want) << "block " << k;
        }
        EXPECT_EQ(tags_of(rec.word2), (Tags{103, 0, 0x1111})) << "the source's next tags";
        EXPECT_EQ(tags_of(rec.word3), (Tags{0x5003, 0, 0x2223})) << "the destination's";
    }
}

TEST(Dif, UpdatePassesTheSourcesFieldsThroughWhenAsked)
{
    // A source whose guards are wrong, their check disabled: passed through they stay wrong,
    // made anew they are right.
    DifRig r;
    protect(r, kSrc, 512, 2, 9, 0xabcd);
    for (unsigned k = 0; k < 2; k++)
        put_tuple(r, kSrc + k * 520 + 512, {0x1234, 0xabcd, 9 + k});
    Fields f{.src_flags = kGuardCheckOff,
             .dest_flags = kGuardPass | kAppPass | kRefPass,
             .src_ref = 9,
             .src_app = 0xabcd,
             .dst_ref = 0x777,
             .dst_app = 0x5555};
    Record rec = r.run_desc(0, dif_desc(Opcode::DifUpdate, kSrc, kDst, 2 * 520, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    for (unsigned k = 0; k < 2; k++)
        EXPECT_EQ(tuple_at(r, kDst + k * 520 + 512), (Tuple{0x1234, 0xabcd, 9 + k}));

    f.dest_flags = kRefPass; // only the reference tag kept
    rec = r.run_desc(0, dif_desc(Opcode::DifUpdate, kSrc, kDst, 2 * 520, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    for (unsigned k = 0; k < 2; k++) {
        const Tuple want{crc16(r.at(kSrc + k * 520), 512), 0x5555, 9 + k};
        EXPECT_EQ(tuple_at(r, kDst + k * 520 + 512), want) << "block " << k;
    }
}

TEST(Dif, BlocksRunWholeWhateverTheEnginesStep)
{
    // A step of 64 bytes is shorter than any block: each stretch still ends on a block's
    // boundary, and the operation completes as in one piece.
    Config c;
    c.step_bytes = 64;
    c.bandwidth = 1u << 20;
    DifRig r(c);
    protect(r, kSrc, 4104, 3, 1, 2);
    Fields f{.size_code = 3, .src_ref = 1, .src_app = 2, .dst_ref = 50, .dst_app = 60};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifUpdate, kSrc, kDst, 3 * 4112, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    for (unsigned k = 0; k < 3; k++) {
        const uint64_t in = kSrc + k * 4112, out = kDst + k * 4112;
        EXPECT_EQ(std::memcmp(r.at(out), r.at(in), 4104), 0);
        EXPECT_EQ(tuple_at(r, out + 4104), (Tuple{crc16(r.at(in), 4104), 60, 50 + k}));
    }
}

// ---- Page faults ----

TEST(Dif, APageFaultReadingStopsAtTheBlockItFallsIn)
{
    // 512-byte blocks from a page's start: eight fill the first page, the ninth faults.
    DifRig r;
    scribble(r, kSrc, 4096);
    r.mem.add_hole(kSrc + 4096, 4096, true);
    r.fill(kDst + 8 * 520, 0xee, 520);
    Fields f{.dst_ref = 40, .dst_app = 3};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 16 * 512, f), kRec);
    EXPECT_EQ(rec.status, static_cast<uint8_t>(Status::PageFaultNoBof)) << "a read: bit 7 clear";
    EXPECT_EQ(rec.bytes, 8u * 512) << "source bytes of the whole blocks done";
    EXPECT_EQ(rec.fault_addr, kSrc + 4096);
    EXPECT_EQ(tags_of(rec.word3), (Tags{48, 0, 3})) << "the seeds to resume with";
    for (unsigned k = 0; k < 8; k++)
        EXPECT_EQ(tuple_at(r, kDst + k * 520 + 512).ref, 40 + k);
    EXPECT_EQ(*r.at(kDst + 8 * 520), 0xee) << "nothing of the block that faulted";
}

TEST(Dif, APageFaultInsideABlockCountsOnlyTheBlocksBeforeIt)
{
    // 528-byte units: the seventh ends at 3696, the eighth crosses into the page that faults.
    DifRig r;
    protect(r, kSrc, 520, 7, 0, 0);
    r.mem.add_hole(kSrc + 4096, 4096, true);
    Fields f{.size_code = 1};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifCheck, kSrc, 0, 10 * 528, f), kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.bytes, 7u * 528);
    EXPECT_EQ(rec.fault_addr, kSrc + 4096);
    EXPECT_EQ(tags_of(rec.word2).ref, 7u);
}

TEST(Dif, APageFaultWritingSaysSoInStatusBit7)
{
    DifRig r;
    protect(r, kSrc, 512, 12, 0, 0);
    r.mem.add_hole(kDst + 4096, 4096, true);
    Fields f{};
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifUpdate, kSrc, kDst, 12 * 520, f), kRec);
    EXPECT_EQ(rec.status, static_cast<uint8_t>(Status::PageFaultNoBof) | 0x80);
    EXPECT_EQ(rec.bytes, 7u * 520) << "the eighth block crosses into the hole";
    EXPECT_EQ(rec.fault_addr, kDst + 4096);
    EXPECT_EQ(tags_of(rec.word2).ref, 7u);
    EXPECT_EQ(tags_of(rec.word3).ref, 7u);
}

TEST(Dif, ResumingFromTheRecordFinishesTheJob)
{
    // What accel-config's dsa_reprep_dif does after a page fault: the addresses and size
    // moved on by BYTES_COMPLETED (and its blocks), the record's tags as the new seeds.
    DifRig r;
    scribble(r, kSrc, 12 * 512);
    r.mem.add_hole(kSrc + 4096, 4096, true);
    Fields f{.dest_flags = kAppIncrement, .dst_ref = 0x100, .dst_app = 0x10};
    Record rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, kDst, 12 * 512, f), kRec);
    ASSERT_EQ(rec.code(), Status::PageFaultNoBof);
    r.mem.holes.clear();
    const uint32_t done = rec.bytes, blocks = done / 512;
    f.dst_ref = tags_of(rec.word3).ref;
    f.dst_app = tags_of(rec.word3).app;
    r.fill(kRec, 0, 32);
    rec = r.run_desc(
        0, dif_desc(Opcode::DifInsert, kSrc + done, kDst + blocks * 520, 12 * 512 - done, f), kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    for (unsigned k = 0; k < 12; k++) {
        const Tuple want{crc16(r.at(kSrc + k * 512), 512), static_cast<uint16_t>(0x10 + k),
                         0x100 + k};
        EXPECT_EQ(tuple_at(r, kDst + k * 520 + 512), want) << "block " << k;
    }
}

TEST(Dif, ABlockThatWouldCross2To64FaultsThere)
{
    DifRig r;
    Fields f{};
    const uint64_t top = ~uint64_t{0} - 100;
    const Record rec = r.run_desc(0, dif_desc(Opcode::DifCheck, top, 0, 4 * 520, f), kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.fault_addr, 0u) << "where the block would go on, past the top";
}

// A range that ends exactly at 2^64: its last block is the one below the top, and the next
// would start at 2^64 itself, which is no address. The descriptor faults there, and nothing
// is read or written at address 0, where the sum of address and offset wraps to.
TEST(Dif, ARangeEndingAt2To64GoesNoFurther)
{
    const uint64_t top = uint64_t{0} - 520;
    for (const bool insert : {true, false}) {
        SCOPED_TRACE(insert ? "insert: the destination ends at 2^64" : "check: the source does");
        DifRig r;
        size_t written = 0;
        r.mem.add_window({top, 520, [&](uint64_t, const uint8_t*, size_t n) { written += n; }});
        r.fill(0, 0x5a, 0x800);
        Fields f{};
        Record rec;
        if (insert)
            rec = r.run_desc(0, dif_desc(Opcode::DifInsert, kSrc, top, 3 * 512, f), kRec);
        else // the window reads as zeros: a block of zeros with a tuple of zeros checks
            rec = r.run_desc(0, dif_desc(Opcode::DifCheck, top, 0, 3 * 520, f), kRec);
        EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
        EXPECT_EQ(rec.bytes, insert ? 512u : 520u) << "the block below the top done";
        EXPECT_EQ(rec.fault_addr, 0u);
        EXPECT_EQ(written, insert ? 520u : 0u);
        for (uint64_t a = 0; a < 0x800; a++)
            ASSERT_EQ(*r.at(a), 0x5a) << "byte " << a;
    }
}

} // namespace
} // namespace dmalab::dsa::testing
