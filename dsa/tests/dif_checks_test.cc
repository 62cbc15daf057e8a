// SPDX-License-Identifier: GPL-2.0-or-later
// The DIF operations' verdicts and refusals: each check of a source tuple (guard,
// application tag, reference tag) failing with status 09h, RESULT naming what failed and
// BYTES_COMPLETED the block; the flags that disable checks or skip blocks (the F detects);
// and the descriptor checks a DIF descriptor meets before it runs (flags, reserved bits,
// transfer size, overlap).

#include "dif.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace dif_ops;

// Four protected 512-byte blocks at kSrc (reference tags 0x30..0x33, application tag
// 0x6060) and DIF Check's fields for them.
struct Checked : DifRig {
    Checked() { protect(*this, kSrc, 512, 4, 0x30, 0x6060); }
    static constexpr uint64_t block(unsigned k) { return kSrc + k * 520; }
    static constexpr uint64_t tuple(unsigned k) { return block(k) + 512; }
    Tuple get(unsigned k) { return tuple_at(*this, tuple(k)); }
    void set(unsigned k, const Tuple& t) { put_tuple(*this, tuple(k), t); }
    Record check(const Fields& f, Opcode op = Opcode::DifCheck)
    {
        return run_desc(0, dif_desc(op, kSrc, kDst, 4 * 520, f), kRec);
    }
};

constexpr Fields kFields{.src_ref = 0x30, .src_app = 0x6060};

Fields with_src_flags(uint8_t flags)
{
    Fields f = kFields;
    f.src_flags = flags;
    return f;
}

void expect_dif_error(const Record& rec, uint8_t result, unsigned block, const char* what)
{
    EXPECT_EQ(rec.code(), Status::DifError) << what;
    EXPECT_EQ(rec.result, result) << what;
    EXPECT_EQ(rec.bytes, block * 520u) << what << ": the source bytes before the block";
    EXPECT_EQ(tags_of(rec.word2).ref, 0x30 + block) << what << ": the failing block's tags";
}

TEST(DifChecks, AGuardMismatchIsADifErrorAtItsBlock)
{
    Checked r;
    r.at(Checked::block(2))[100] ^= 1; // the data changed under its guard
    expect_dif_error(r.check(kFields), kGuardBad, 2, "guard");
}

TEST(DifChecks, AnApplicationTagMismatchIsADifErrorAtItsBlock)
{
    Checked r;
    Tuple t = r.get(1);
    t.app ^= 0x0100;
    r.set(1, t);
    expect_dif_error(r.check(kFields), kAppBad, 1, "application tag");
    // The mask's 1 bits are not compared: masking the changed bit, the block passes.
    Fields f = kFields;
    f.src_mask = 0x0f00;
    EXPECT_EQ(r.check(f).code(), Status::Success);
    f.src_mask = 0xffff; // nothing compared
    t = r.get(3);
    t.app = 0x1234;
    r.set(3, t);
    EXPECT_EQ(r.check(f).code(), Status::Success);
}

TEST(DifChecks, AReferenceTagMismatchIsADifErrorAtItsBlock)
{
    Checked r;
    Tuple t = r.get(3);
    t.ref = 0x30; // the seed again: not incremented
    r.set(3, t);
    expect_dif_error(r.check(kFields), kRefBad, 3, "reference tag");
}

TEST(DifChecks, FixedReferenceTagsAreCheckedAsFixed)
{
    Checked r;
    for (unsigned k = 0; k < 4; k++)
        r.set(k, {r.get(k).guard, 0x6060, 0x30});
    expect_dif_error(r.check(kFields), kRefBad, 1, "incrementing expected");
    EXPECT_EQ(r.check(with_src_flags(kRefFixed)).code(), Status::Success);
    EXPECT_EQ(tags_of(r.check(with_src_flags(kRefFixed)).word2).ref, 0x30u) << "fixed";
}

TEST(DifChecks, IncrementingApplicationTagsAreCheckedAsIncrementing)
{
    Checked r;
    expect_dif_error(r.check(with_src_flags(kAppIncrement)), kAppBad, 1, "fixed tags");
    for (unsigned k = 0; k < 4; k++)
        r.set(k, {r.get(k).guard, static_cast<uint16_t>(0x6060 + k), 0x30 + k});
    EXPECT_EQ(r.check(with_src_flags(kAppIncrement)).code(), Status::Success);
    expect_dif_error(r.check(kFields), kAppBad, 1, "incrementing tags, fixed expected");
}

TEST(DifChecks, EveryCheckABlockFailsIsInResult)
{
    Checked r;
    r.set(1, {0, 0, 0});
    expect_dif_error(r.check(kFields), kGuardBad | kAppBad | kRefBad, 1, "all three");
}

TEST(DifChecks, DisabledChecksPass)
{
    Checked r;
    Tuple t = r.get(0);
    t.guard ^= 0xffff;
    r.set(0, t);
    EXPECT_EQ(r.check(with_src_flags(kGuardCheckOff)).code(), Status::Success);
    t.ref = 0xdead;
    r.set(0, t);
    expect_dif_error(r.check(with_src_flags(kGuardCheckOff)), kRefBad, 0, "ref still checked");
    EXPECT_EQ(r.check(with_src_flags(kGuardCheckOff | kRefCheckOff)).code(), Status::Success);
}

TEST(DifChecks, InvertedSeedAndResultAreCheckedSo)
{
    Checked r;
    for (unsigned k = 0; k < 4; k++)
        r.set(k, {static_cast<uint16_t>(~crc16(r.at(Checked::block(k)), 512, 0xffff)), 0x6060,
                  0x30 + k});
    Fields f = kFields;
    f.flags = kInvertSeed | kInvertResult;
    EXPECT_EQ(r.check(f).code(), Status::Success);
    expect_dif_error(r.check(kFields), kGuardBad, 0, "plain guards expected");
}

TEST(DifChecks, AnAllOnesApplicationTagSkipsTheBlockWithApplicationTagFDetect)
{
    Checked r;
    r.set(2, {0x1111, 0xffff, 0x2222}); // nothing in it right
    expect_dif_error(r.check(kFields), kGuardBad | kAppBad | kRefBad, 2, "no F detect");
    EXPECT_EQ(r.check(with_src_flags(kAppFDetect)).code(), Status::Success);
    expect_dif_error(r.check(with_src_flags(kAppRefFDetect)), kGuardBad | kAppBad | kRefBad, 2,
                     "the reference tag is not all ones");
}

TEST(DifChecks, AllOnesTagsSkipTheBlockWithApplicationAndReferenceTagFDetect)
{
    Checked r;
    r.set(1, {0x1111, 0xffff, 0xffffffff});
    EXPECT_EQ(r.check(with_src_flags(kAppRefFDetect)).code(), Status::Success);
    EXPECT_EQ(r.check(with_src_flags(kAppFDetect)).code(), Status::Success);
    expect_dif_error(r.check(kFields), kGuardBad | kAppBad | kRefBad, 1, "no F detect");
}

TEST(DifChecks, AnAllOnesTupleIsSkippedOrAnErrorWithAllFDetect)
{
    Checked r;
    r.set(3, {0xffff, 0xffff, 0xffffffff});
    EXPECT_EQ(r.check(with_src_flags(kAllFDetect)).code(), Status::Success);
    expect_dif_error(r.check(with_src_flags(kAllFDetect | kAllFError)), kAllFBad, 3, "all F");
    expect_dif_error(r.check(with_src_flags(kAllFError)), kGuardBad | kAppBad | kRefBad, 3,
                     "enabling the error alone detects nothing");
    // A tuple all ones but its guard is not all F.
    r.set(3, {0xfffe, 0xffff, 0xffffffff});
    expect_dif_error(r.check(with_src_flags(kAllFDetect | kAllFError)),
                     kGuardBad | kAppBad | kRefBad, 3, "not all F");
}

TEST(DifChecks, StripWritesNothingOfTheBlockThatFails)
{
    Checked r;
    r.at(Checked::block(2))[7] ^= 0x80;
    r.fill(kDst, 0xee, 4 * 512);
    expect_dif_error(r.check(kFields, Opcode::DifStrip), kGuardBad, 2, "strip");
    for (unsigned k = 0; k < 2; k++)
        EXPECT_EQ(std::memcmp(r.at(kDst + k * 512), r.at(Checked::block(k)), 512), 0);
    EXPECT_EQ(*r.at(kDst + 2 * 512), 0xee);
    EXPECT_EQ(*r.at(kDst + 4 * 512 - 1), 0xee);
}

TEST(DifChecks, UpdateChecksItsSourceFirst)
{
    Checked r;
    Tuple t = r.get(1);
    t.ref++;
    r.set(1, t);
    r.fill(kDst + 520, 0xee, 520);
    const Record rec = r.check(kFields, Opcode::DifUpdate);
    expect_dif_error(rec, kRefBad, 1, "update");
    EXPECT_EQ(tags_of(rec.word3).ref, 1u) << "the destination's tags for that block";
    EXPECT_EQ(*r.at(kDst + 520), 0xee) << "nothing of it written";
}

TEST(DifChecks, ADifErrorWithoutARecordGoesToSwerr)
{
    Checked r;
    r.set(0, {0, 0, 0});
    Desc d = dif_desc(Opcode::DifCheck, kSrc, 0, 4 * 520, kFields);
    d.raw.word[0] &= ~(uint64_t{kRecord} << 32);
    d.completion(0);
    r.submit(0, d);
    r.run_until_idle();
    const uint64_t swerr = r.rd(kSwerr, 8);
    EXPECT_EQ(field_of(swerr, fields::SWERR0, "VALID"), 1u);
    EXPECT_EQ(field_of(swerr, fields::SWERR0, "ERROR"), static_cast<uint8_t>(Status::DifError));
    EXPECT_EQ(field_of(swerr, fields::SWERR0, "OPERATION"), 0x12u);
}

// ---- Descriptor checks ----

// `op` on protected blocks of its size at kSrc, their tags from 0.
Status status_of(Opcode op, uint32_t size, const Fields& f, uint64_t dst = kDst)
{
    DifRig r;
    protect(r, kSrc, kBlock[f.size_code], 8, 0, 0);
    return r.run_desc(0, dif_desc(op, kSrc, dst, size, f), kRec).code();
}

TEST(DifChecks, TheDefaultOpcapOffersEveryDifOperation)
{
    Rig r;
    const uint64_t opcap = r.rd(offset("OPCAP", 0), 8);
    for (unsigned op = 0x12; op <= 0x15; op++)
        EXPECT_TRUE(opcap >> op & 1) << "opcode 0x" << std::hex << op;
    for (Opcode op : {Opcode::DifCheck, Opcode::DifStrip, Opcode::DifUpdate})
        EXPECT_EQ(status_of(op, 2 * 520, {}), Status::Success);
    EXPECT_EQ(status_of(Opcode::DifInsert, 2 * 512, {}), Status::Success);
}

TEST(DifChecks, ASizeNotAMultipleOfTheSourceBlockIsRefused)
{
    for (Opcode op : {Opcode::DifCheck, Opcode::DifStrip, Opcode::DifUpdate}) {
        EXPECT_EQ(status_of(op, 2 * 520 + 8, {}), Status::XferSizeRange) << "a tuple more";
        EXPECT_EQ(status_of(op, 1024, {}), Status::XferSizeRange) << "blocks without tuples";
        EXPECT_EQ(status_of(op, 2 * 528, {.size_code = 1}), Status::Success);
    }
    EXPECT_EQ(status_of(Opcode::DifInsert, 520, {}), Status::XferSizeRange);
    EXPECT_EQ(status_of(Opcode::DifInsert, 1040, {.size_code = 1}), Status::Success);
    EXPECT_EQ(status_of(Opcode::DifCheck, 0, {}), Status::XferSizeRange) << "nothing";
}

TEST(DifChecks, ReservedFlagBitsAreRefused)
{
    for (unsigned bit = 4; bit < 8; bit++) {
        Fields f;
        f.flags = static_cast<uint8_t>(1u << bit);
        EXPECT_EQ(status_of(Opcode::DifCheck, 520, f), Status::NonzeroReserved)
            << "DIF flags bit " << bit;
    }
    for (unsigned bit = 0; bit < 3; bit++) {
        Fields f;
        f.dest_flags = static_cast<uint8_t>(1u << bit);
        EXPECT_EQ(status_of(Opcode::DifInsert, 512, f), Status::NonzeroReserved)
            << "destination DIF flags bit " << bit;
        EXPECT_EQ(status_of(Opcode::DifUpdate, 520, f), Status::NonzeroReserved)
            << "destination DIF flags bit " << bit;
    }
}

TEST(DifChecks, FieldsAnOperationDoesNotHaveAreReserved)
{
    auto refused = [](Opcode op, unsigned word, uint64_t v, uint32_t size) {
        DifRig r;
        Desc d = dif_desc(op, kSrc, kDst, size, {});
        d.word(word, d.raw.word[word] | v);
        return r.run_desc(0, d, kRec).code() == Status::NonzeroReserved;
    };
    EXPECT_TRUE(refused(Opcode::DifCheck, 3, kDst, 520)) << "Check has no destination";
    EXPECT_TRUE(refused(Opcode::DifCheck, 5, 1u << 8, 520)) << "nor destination flags";
    EXPECT_TRUE(refused(Opcode::DifCheck, 7, 1, 520)) << "nor destination tags";
    EXPECT_TRUE(refused(Opcode::DifStrip, 7, uint64_t{1} << 63, 520));
    EXPECT_TRUE(refused(Opcode::DifInsert, 5, 0x80, 512)) << "Insert has no source flags";
    EXPECT_TRUE(refused(Opcode::DifInsert, 6, 1, 512)) << "nor source tags";
    for (unsigned byte = 3; byte < 8; byte++)
        EXPECT_TRUE(refused(Opcode::DifUpdate, 5, uint64_t{1} << (8 * byte), 520))
            << "byte " << 40 + byte;
}

TEST(DifChecks, OverlappingSourceAndDestinationAreRefused)
{
    // The destination as long as the blocks become: Insert's reaches further than its source.
    EXPECT_EQ(status_of(Opcode::DifStrip, 2 * 520, {}, kSrc + 1000), Status::OverlappingBuffers);
    EXPECT_EQ(status_of(Opcode::DifUpdate, 2 * 520, {}, kSrc - 1039), Status::OverlappingBuffers);
    EXPECT_EQ(status_of(Opcode::DifUpdate, 2 * 520, {}, kSrc - 1040), Status::Success);
    EXPECT_EQ(status_of(Opcode::DifInsert, 2 * 512, {}, kSrc - 1039), Status::OverlappingBuffers);
    EXPECT_EQ(status_of(Opcode::DifInsert, 2 * 512, {}, kSrc - 1040), Status::Success);
    EXPECT_EQ(status_of(Opcode::DifStrip, 2 * 520, {}, kSrc - 1024), Status::Success);
}

TEST(DifChecks, FlagsFollowWhatEachOperationWrites)
{
    // Strict ordering and cache control only where the operation writes; no CR.
    for (Opcode op : {Opcode::DifInsert, Opcode::DifStrip, Opcode::DifUpdate}) {
        DifRig r;
        Desc d = dif_desc(op, kSrc, kDst, op == Opcode::DifInsert ? 512 : 520, {});
        d.raw.word[0] |= uint64_t{flag::STORD | flag::CC} << 32;
        EXPECT_NE(r.run_desc(0, d, kRec).code(), Status::InvalidFlags);
    }
    for (uint32_t bad : {flag::STORD, flag::CC, flag::CR, flag::ADDR2_TCS}) {
        DifRig r;
        Desc d = dif_desc(Opcode::DifCheck, kSrc, 0, 520, {});
        d.raw.word[0] |= uint64_t{bad} << 32;
        const Record rec = r.run_desc(0, d, kRec);
        EXPECT_EQ(rec.code(), Status::InvalidFlags);
        EXPECT_EQ(rec.word2, bad) << "INVALID_FLAGS, not tags";
    }
}

} // namespace
} // namespace dmalab::dsa::testing
