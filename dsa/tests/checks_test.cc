// SPDX-License-Identifier: GPL-2.0-or-later
// The checks a descriptor passes before it runs (DSA spec, "Descriptor Checks" and each
// operation's own; status codes 10h-1Ch). A descriptor that fails one completes with that
// status in its record, BYTES_COMPLETED 0 and nothing done, or, without a usable record
// address, in SWERR. Batch and Drain inside a batch are batch_test.cc's; the limits,
// addresses and handles (13h onwards) are checks_limits_test.cc's.

#include "checks.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace checks;

// ---- Operation codes (10h) ----

TEST(Checks, AnUndefinedOpcodeIsUnsupported)
{
    for (unsigned op : {0x0au, 0x0fu, 0x16u, 0x1fu, 0x21u, 0x80u, 0xffu}) {
        Desc d(static_cast<Opcode>(op), kRecord);
        d.completion(kRec);
        const Record rec = run(d);
        EXPECT_EQ(rec.code(), Status::UnsupportedOpcode) << "opcode 0x" << std::hex << op;
        EXPECT_EQ(rec.bytes, 0u);
    }
}

TEST(Checks, DifOperationsLeftOutOfOpcapAreUnsupported)
{
    // The default OPCAP offers them (operations_dif_test.cc); a device configured without
    // them refuses them.
    Config c;
    for (Opcode op : {Opcode::DifCheck, Opcode::DifInsert, Opcode::DifStrip, Opcode::DifUpdate})
        c.opcap &= ~opcap_bit(op);
    for (Opcode op : {Opcode::DifCheck, Opcode::DifInsert, Opcode::DifStrip, Opcode::DifUpdate}) {
        Desc d(op, kRecord);
        d.completion(kRec).src(kSrc).dst(kDst).size(512);
        EXPECT_EQ(status_of(d, c), Status::UnsupportedOpcode)
            << "opcode 0x" << std::hex << static_cast<unsigned>(op);
    }
}

TEST(Checks, AnOperationOpcapDoesNotOfferIsUnsupported)
{
    Config c;
    c.opcap &= ~opcap_bit(Opcode::Fill);
    Desc d(Opcode::Fill, kRecord);
    d.completion(kRec).src(0x1111).dst(kDst).size(64);
    EXPECT_EQ(status_of(d, c), Status::UnsupportedOpcode);
    EXPECT_EQ(status_of(memmove(), c), Status::Success) << "the others still run";
}

// ---- Flags (11h) ----

TEST(Checks, FenceOutsideABatchIsInvalid)
{
    expect_invalid_flags(memmove(kRecord | flag::FENCE), flag::FENCE);
}

TEST(Checks, BofIsInvalidWhenTheWqHasNoBof)
{
    expect_invalid_flags(memmove(kRecord | flag::BOF), flag::BOF);
}

TEST(Checks, BofIsValidWhenTheWqHasBof)
{
    Config c;
    c.block_on_fault = true;
    Rig r(c);
    r.group(0, 1, 1);
    r.wq(0, 16, kDedicated | kBofBit);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    EXPECT_EQ(r.run_desc(0, memmove(kRecord | flag::BOF), kRec).code(), Status::Success);
}

TEST(Checks, DestinationReadbackIsInvalid)
{
    // GENCAP.DEST_READBACK is not offered.
    expect_invalid_flags(memmove(kRecord | flag::DRDBK), flag::DRDBK);
}

TEST(Checks, OperationSpecificFlagBitsAreInvalid)
{
    // Bits 16-23 carry DSA 2.0's CRC, DIF and Drain extensions: reserved in 1.0.
    for (unsigned bit = 16; bit < 24; bit++)
        expect_invalid_flags(memmove(kRecord | 1u << bit), 1u << bit);
}

TEST(Checks, DsaTwoFlagBitsAreInvalid)
{
    for (unsigned bit : {5u, 6u, 15u})
        expect_invalid_flags(memmove(kRecord | 1u << bit), 1u << bit);
}

TEST(Checks, CheckResultOnAnOperationWithoutAResultIsInvalid)
{
    expect_invalid_flags(memmove(kRecord | flag::CR), flag::CR);
}

TEST(Checks, CacheControlOnCacheFlushIsInvalidWithoutCacheCtrlCache)
{
    Desc d(Opcode::CacheFlush, kRecord | flag::CC);
    d.completion(kRec).dst(kDst).size(64);
    expect_invalid_flags(d, flag::CC);
}

TEST(Checks, CacheControlOnAWriteIsValid)
{
    // GENCAP.CACHE_CTRL_MEM is offered: CC steers a memmove's writes.
    EXPECT_EQ(status_of(memmove(kRecord | flag::CC)), Status::Success);
}

TEST(Checks, StrictOrderingOnAnOperationThatWritesNothingIsInvalid)
{
    // Table 5-3: Strict Ordering is allowed only where the operation writes memory.
    Desc cmp(Opcode::Compare, kRecord | flag::STORD);
    cmp.completion(kRec).src(kSrc).word(3, kSrc2).size(64);
    expect_invalid_flags(cmp, flag::STORD);
    Desc crc(Opcode::CrcGen, kRecord | flag::STORD);
    crc.completion(kRec).src(kSrc).size(64);
    expect_invalid_flags(crc, flag::STORD);
    Desc noop(Opcode::Noop, kRecord | flag::STORD);
    noop.completion(kRec);
    expect_invalid_flags(noop, flag::STORD);
}

TEST(Checks, ATcSelectorForAnAddressTheOperationLacksIsInvalid)
{
    // Table 5-3: each Address n TC Selector only where the descriptor has address n.
    Desc move = memmove(kRecord | flag::ADDR3_TCS);
    expect_invalid_flags(move, flag::ADDR3_TCS);
    Desc fill(Opcode::Fill, kRecord | flag::ADDR1_TCS); // address 1 is the pattern
    fill.completion(kRec).src(0x1111).dst(kDst).size(64);
    expect_invalid_flags(fill, flag::ADDR1_TCS);
    Desc noop(Opcode::Noop, kRecord | flag::ADDR1_TCS);
    noop.completion(kRec);
    expect_invalid_flags(noop, flag::ADDR1_TCS);
}

TEST(Checks, TcSelectorsForTheOperationsAddressesAreValid)
{
    EXPECT_EQ(status_of(memmove(kRecord | flag::ADDR1_TCS | flag::ADDR2_TCS | flag::CR_TCS)),
              Status::Success);
    Desc d(Opcode::Dualcast, kRecord | flag::ADDR1_TCS | flag::ADDR2_TCS | flag::ADDR3_TCS);
    d.completion(kRec).src(kSrc).dst(kDst).size(64).word(5, kDst2);
    EXPECT_EQ(status_of(d), Status::Success);
}

TEST(Checks, EveryOffendingFlagIsNamed)
{
    expect_invalid_flags(memmove(kRecord | flag::FENCE | flag::DRDBK | 1u << 20),
                         flag::FENCE | flag::DRDBK | 1u << 20);
}

TEST(Checks, CrcGenerationWithoutRcrIsInvalid)
{
    // Its result is only in the record: CRAV and RCR are required.
    Desc d(Opcode::CrcGen, flag::CRAV);
    d.completion(kRec).src(kSrc).size(64);
    expect_invalid_flags(d, flag::RCR);
}

TEST(Checks, CopyWithCrcWithoutRcrIsInvalid)
{
    Desc d(Opcode::CopyCrc, flag::CRAV);
    d.completion(kRec).src(kSrc).dst(kDst).size(64);
    expect_invalid_flags(d, flag::RCR);
}

TEST(Checks, CreateDeltaWithoutRcrIsInvalid)
{
    Desc d(Opcode::CreateDelta, flag::CRAV);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(64).word(5, kDelta).word(6, 80);
    expect_invalid_flags(d, flag::RCR);
}

TEST(Checks, CompareWithoutRcrIsInvalid)
{
    // Compare's verdict is only in the record: Table 5-5 and "Compare" require CRAV and RCR.
    Desc d(Opcode::Compare, flag::CRAV);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(64);
    expect_invalid_flags(d, flag::RCR);
}

TEST(Checks, ComparePatternWithoutRcrIsInvalid)
{
    Desc d(Opcode::ComparePattern, flag::CRAV);
    d.completion(kRec).src(kSrc).word(3, 0x1111111111111111ull).size(64);
    expect_invalid_flags(d, flag::RCR);
}

TEST(Checks, CrcGenerationWithoutAnyRecordGoesToSwerr)
{
    Rig r;
    r.bring_up();
    Desc d(Opcode::CrcGen, 0);
    d.src(kSrc).size(64);
    r.submit(0, d);
    r.run_until_idle();
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x11u);
    EXPECT_EQ(field_of(r.rd(kSwerr + 8, 8), fields::SWERR1, "INVALID_FLAGS"),
              flag::CRAV | flag::RCR)
        << "both required flags are missing";
}

TEST(Checks, DrainWithoutRcrOrRciIsInvalid)
{
    // A Drain must report somehow (Table 5-5).
    Desc d(Opcode::Drain, flag::CRAV);
    d.completion(kRec);
    const Record rec = run(d);
    EXPECT_EQ(rec.code(), Status::InvalidFlags);
    EXPECT_NE(rec.word2 & (flag::RCR | flag::RCI), 0u) << "INVALID_FLAGS points at the two";
}

TEST(Checks, DrainWithRcrIsValid)
{
    Desc d(Opcode::Drain, kRecord);
    d.completion(kRec);
    EXPECT_EQ(status_of(d), Status::Success);
}

TEST(Checks, RcrWithoutCravIsInvalidAndGoesToSwerr)
{
    // No record address: the error is reported in SWERR, the record never written.
    Rig r;
    r.bring_up();
    Desc d = memmove(flag::RCR);
    d.completion(0); // reserved without CRAV (Table 5-4): left 0
    r.submit(0, d);
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().records, 0u) << "CRAV clear: no record";
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x11u);
    EXPECT_EQ(field_of(r.rd(kSwerr + 8, 8), fields::SWERR1, "INVALID_FLAGS"), flag::RCR);
    EXPECT_EQ(*r.at(kDst), 0u) << "nothing copied";
}

TEST(Checks, AnotherFailureWithAMisalignedRecordAddressGoesToSwerr)
{
    // The record address is refused (1Bh) only after the flags (11h): a descriptor that
    // fails on its flags and names a record 8 bytes below 2^64 gets no record written
    // there, nor its last 24 bytes at address 0, where the record would wrap to.
    Rig r;
    r.bring_up();
    uint64_t written = 0;
    const uint64_t top = 0 - uint64_t{4096};
    r.mem.add_window({top, 4096, [&written](uint64_t, const uint8_t*, size_t n) { written += n; }});
    r.fill(0, 0x5a, 64);
    Desc d = memmove(kRecord | flag::FENCE); // a fence outside a batch: 11h
    d.completion(0 - uint64_t{8});
    r.submit(0, d);
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().records, 0u);
    EXPECT_EQ(written, 0u);
    EXPECT_TRUE(std::all_of(r.at(0), r.at(64), [](uint8_t b) { return b == 0x5a; }))
        << "the record's tail at address 0";
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x11u) << "the descriptor's own error";
    EXPECT_EQ(*r.at(kDst), 0u) << "nothing copied";
}

// ---- Reserved fields (12h) ----

TEST(Checks, MemmoveWithAnUnusedQuadwordSetIsRefused)
{
    for (unsigned w : {5u, 6u, 7u}) {
        Desc d = memmove();
        d.word(w, 1ull << (w * 7));
        EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "quadword " << w;
    }
}

TEST(Checks, BytesThirtyEightAndThirtyNineAreReserved)
{
    Desc d = memmove();
    d.word(4, d.raw.word[4] | 1ull << 48);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "byte 38";
    d = memmove();
    d.word(4, d.raw.word[4] | 1ull << 63);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "byte 39";
}

TEST(Checks, TheBitsBetweenPasidAndPrivAreReserved)
{
    Desc d = memmove();
    d.word(0, d.raw.word[0] | 1ull << 20);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "bit 20";
    d = memmove();
    d.word(0, d.raw.word[0] | 1ull << 30);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "bit 30";
}

TEST(Checks, PasidAndPrivOfADedicatedWqsDescriptorAreIgnored)
{
    // A dedicated WQ takes both from WQCFG: they are fields, not reserved bits.
    Desc d = memmove();
    d.word(0, d.raw.word[0] | 0xabcde | 1ull << 31);
    EXPECT_EQ(status_of(d), Status::Success);
}

TEST(Checks, NoopWithAnAddressOrSizeIsRefused)
{
    for (unsigned w : {2u, 3u, 5u}) {
        Desc d(Opcode::Noop, kRecord);
        d.completion(kRec).word(w, 0x40);
        EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "quadword " << w;
    }
    Desc d(Opcode::Noop, kRecord);
    d.completion(kRec).size(64);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "a No-op has no transfer size";
}

TEST(Checks, CompareExpectedResultHasEightBits)
{
    Desc d(Opcode::Compare, kRecord);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(64).word(5, 0x100);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved);
    d.word(5, 0xff);
    EXPECT_EQ(status_of(d), Status::Success) << "byte 40 itself is the field";
}

TEST(Checks, CrcGenerationBytesFortyFourOnAreReserved)
{
    // DSA 1.0's CRC Generation: a 4-byte seed at byte 40, bytes 44-63 reserved, and no
    // destination in quadword 3.
    Desc base(Opcode::CrcGen, kRecord);
    base.completion(kRec).src(kSrc).size(64).word(5, 0xffffffff);
    EXPECT_EQ(status_of(base), Status::Success);
    Desc d = base;
    d.word(5, 0x1ffffffffull);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "byte 44";
    d = base;
    d.word(6, 1);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "quadword 6";
    d = base;
    d.dst(kDst);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved) << "quadword 3";
}

TEST(Checks, CacheFlushWithASourceIsRefused)
{
    Desc d(Opcode::CacheFlush, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst).size(64);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved);
}

TEST(Checks, DualcastBeyondItsSecondDestinationIsReserved)
{
    Desc d(Opcode::Dualcast, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst).size(64).word(5, kDst2).word(6, 1);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved);
}

} // namespace
} // namespace dmalab::dsa::testing
