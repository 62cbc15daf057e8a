// SPDX-License-Identifier: GPL-2.0-or-later
// The checks a descriptor passes before it runs (DSA spec, "Descriptor Checks" and each
// operation's own; status codes 10h-1Ch). A descriptor that fails one completes with that
// status in its record, BYTES_COMPLETED 0 and nothing done, or, without a usable record
// address, in SWERR. Batch and Drain inside a batch are batch_test.cc's.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kRec = 0x1000, kSrc = 0x10000, kSrc2 = 0x20000, kDst = 0x40000, kDst2 = 0x60000,
                   kDelta = 0x80000;

// A valid 64-byte memmove through WQ 0 with a record.
Desc memmove(uint32_t flags = kRecord)
{
    Desc d(Opcode::Memmove, flags);
    d.completion(kRec).src(kSrc).dst(kDst).size(64);
    return d;
}

// `d` through WQ 0 of a device brought up as idxd does (optionally with WQ 0's limits).
Record run(const Desc& d, const Config& c = Config{}, uint32_t lim = ~0u)
{
    Rig r(c);
    r.configure();
    if (lim != ~0u)
        r.wq(0, 16, kDedicated, 0, lim);
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.fill(kSrc, 0x11, 64);
    r.fill(kDst, 0xee, 64);
    Record rec = r.run_desc(0, d, kRec);
    if (rec.code() >= Status::UnsupportedOpcode) {
        EXPECT_EQ(*r.at(kDst), 0xee) << "a refused descriptor writes no data";
        EXPECT_EQ(rec.bytes, 0u) << "nor processes any";
    }
    return rec;
}

Status status_of(const Desc& d, const Config& c = Config{}, uint32_t lim = ~0u)
{
    return run(d, c, lim).code();
}

// A refusal for InvalidFlags, and which bits the record names.
void expect_invalid_flags(const Desc& d, uint32_t bad)
{
    const Record rec = run(d);
    EXPECT_EQ(rec.code(), Status::InvalidFlags) << "status 11h";
    EXPECT_EQ(rec.word2, bad) << "INVALID_FLAGS names the offending bits";
    EXPECT_EQ(rec.bytes, 0u);
}

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

TEST(Checks, DifOperationsAreUnsupported)
{
    // DSA 1.0 defines them; this model does not offer them (kModelOps, OPCAP).
    for (Opcode op : {Opcode::DifCheck, Opcode::DifInsert, Opcode::DifStrip, Opcode::DifUpdate}) {
        Desc d(op, kRecord);
        d.completion(kRec).src(kSrc).dst(kDst).size(512);
        EXPECT_EQ(status_of(d), Status::UnsupportedOpcode)
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

// ---- Transfer size (13h) ----

TEST(Checks, ATransferSizeOfZeroIsOutOfRange)
{
    Desc d = memmove();
    d.size(0);
    const Record rec = run(d);
    EXPECT_EQ(rec.code(), Status::XferSizeRange);
    EXPECT_EQ(rec.bytes, 0u);
}

TEST(Checks, ZeroSizeIsOutOfRangeForEveryOperationThatMovesData)
{
    Desc fill(Opcode::Fill, kRecord);
    fill.completion(kRec).dst(kDst);
    Desc flush(Opcode::CacheFlush, kRecord);
    flush.completion(kRec).dst(kDst);
    Desc crc(Opcode::CrcGen, kRecord);
    crc.completion(kRec).src(kSrc);
    Desc cmp(Opcode::Compare, kRecord);
    cmp.completion(kRec).src(kSrc).word(3, kSrc2);
    for (const Desc& d : {fill, flush, crc, cmp})
        EXPECT_EQ(status_of(d), Status::XferSizeRange)
            << "opcode 0x" << std::hex << (d.raw.word[0] >> 56);
}

TEST(Checks, ATransferAboveTheWqsMaximumIsOutOfRange)
{
    // WQCFG.MAX_XFER_SHIFT 12: 4 KiB is the most WQ 0 takes, though GENCAP allows 2 GiB.
    Desc d = memmove();
    d.size(4096);
    EXPECT_EQ(status_of(d, Config{}, limits(12, 5)), Status::Success) << "exactly the limit";
    d.size(4097);
    EXPECT_EQ(status_of(d, Config{}, limits(12, 5)), Status::XferSizeRange);
}

TEST(Checks, ATransferAboveIdxdsDefaultMaximumIsOutOfRange)
{
    Desc d = memmove();
    d.size((2u << 20) + 1); // limits(21, 5): 2 MiB
    EXPECT_EQ(status_of(d), Status::XferSizeRange);
}

TEST(Checks, ADeltaTransferAbove512KiBIsOutOfRange)
{
    // 16-bit quadword offsets reach 512 KiB, whatever the WQ allows.
    Desc create(Opcode::CreateDelta, kRecord);
    create.completion(kRec).src(kSrc).word(3, kSrc2).size(0x80008).word(5, kDelta).word(6, 80);
    EXPECT_EQ(status_of(create), Status::XferSizeRange);
    Desc apply(Opcode::ApplyDelta, kRecord);
    apply.completion(kRec).word(2, kDelta).dst(kDst).size(0x80008).word(5, 10);
    EXPECT_EQ(status_of(apply), Status::XferSizeRange);
}

// ---- Completion record address (1Bh) ----

TEST(Checks, AMisalignedCompletionRecordGoesToSwerr)
{
    Rig r;
    r.bring_up();
    r.fill(kRec, 0xee, 64);
    r.fill(kSrc, 0x11, 64);
    r.fill(kDst, 0xee, 64);
    Desc d = memmove();
    d.completion(kRec + 16);
    r.submit(0, d);
    r.run_until_idle();
    EXPECT_EQ(*r.at(kRec + 16), 0xee) << "no record at a misaligned address";
    EXPECT_EQ(r.dev.counters().records, 0u);
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x1bu);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "DESC_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "OPERATION"), 3u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX"), 0u);
    EXPECT_EQ(*r.at(kDst), 0xee) << "the memmove did not run";
}

TEST(Checks, ACompletionRecordOffBy8IsMisaligned)
{
    for (uint64_t off : {8u, 24u, 1u}) {
        Desc d = memmove();
        d.completion(kRec + off);
        Rig r;
        r.bring_up();
        r.submit(0, d);
        r.run_until_idle();
        EXPECT_EQ(field_of(r.rd(kSwerr, 8), fields::SWERR0, "ERROR"), 0x1bu) << "+" << off;
    }
}

TEST(Checks, ACompletionAddressWithoutCravIsReserved)
{
    // Table 5-4: the Completion Record Address is reserved when CRAV is 0. With no record
    // to write, the error goes to SWERR.
    Rig r;
    r.bring_up();
    Desc d = memmove(0);
    d.completion(kRec + 4);
    r.submit(0, d);
    r.run_until_idle();
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x12u);
    EXPECT_EQ(r.dev.counters().records, 0u);
}

TEST(Checks, ACompletionRecordTcSelectorWithoutCravIsInvalid)
{
    // Table 5-4: the Completion Record TC Selector is reserved when CRAV is 0.
    Rig r;
    r.bring_up();
    Desc d(Opcode::Memmove, flag::CR_TCS);
    d.src(kSrc).dst(kDst).size(64);
    r.submit(0, d);
    r.run_until_idle();
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x11u);
    EXPECT_EQ(field_of(r.rd(kSwerr + 8, 8), fields::SWERR1, "INVALID_FLAGS"), flag::CR_TCS);
}

// ---- Interrupt handle (19h) ----

TEST(Checks, AnInterruptHandleBeyondTheMsixTableIsInvalid)
{
    // Without interrupt handles the handle is an MSI-X index: 9 vectors, 0-8.
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    r.fill(kSrc, 0x11, 64);
    r.fill(kDst, 0xee, 64);
    Desc d = memmove(kRecord | flag::RCI);
    d.handle(9);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::InvalidIntHandle) << "status 19h, in the record";
    EXPECT_TRUE(r.irq.raised.empty()) << "no interrupt through a handle that names none";
    EXPECT_EQ(*r.at(kDst), 0xee) << "the memmove did not run";
}

TEST(Checks, AnInterruptHandleWithoutRciIsReserved)
{
    // Table 5-4: the Completion Interrupt Handle is reserved when RCI is 0 (idxd sets it
    // only with RCI: idxd_submit_desc).
    Desc d = memmove();
    d.handle(1);
    EXPECT_EQ(status_of(d), Status::NonzeroReserved);
}

TEST(Checks, TheLastMsixIndexIsAValidHandle)
{
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    Desc d = memmove(kRecord | flag::RCI);
    d.handle(8);
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::Success);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{8u});
}

TEST(Checks, ARefusedDescriptorStillInterruptsWhenAsked)
{
    // Only a failure of interrupt delivery itself suppresses the interrupt.
    Rig r;
    r.bring_up();
    r.irq.raised.clear();
    Desc d = memmove(kRecord | flag::RCI);
    d.size(0).handle(1);
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::XferSizeRange);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{1u});
}

// ---- Dualcast (17h) ----

TEST(Checks, DualcastDestinationsDifferingInTheLow12BitsAreRefused)
{
    for (uint64_t skew : {8u, 0x800u, 0xfffu}) {
        Desc d(Opcode::Dualcast, kRecord);
        d.completion(kRec).src(kSrc).dst(kDst).size(64).word(5, kDst2 + skew);
        EXPECT_EQ(status_of(d), Status::DualcastAlign)
            << "second destination +0x" << std::hex << skew;
    }
}

TEST(Checks, DualcastDestinationsDifferingOnlyAbove11BitsAreAccepted)
{
    Desc d(Opcode::Dualcast, kRecord);
    d.completion(kRec).src(kSrc).dst(kDst + 0x123).size(64).word(5, kDst2 + 0x5123);
    EXPECT_EQ(status_of(d), Status::Success);
}

// ---- Overlapping buffers (16h) ----

Desc dualcast(uint64_t src, uint64_t d1, uint64_t d2, uint32_t n)
{
    Desc d(Opcode::Dualcast, kRecord);
    d.completion(kRec).src(src).dst(d1).size(n).word(5, d2);
    return d;
}

TEST(Checks, DualcastSourceOverlappingADestinationIsRefused)
{
    EXPECT_EQ(status_of(dualcast(kSrc, kSrc + 0x40, kDst2 + 0x40, 0x100)),
              Status::OverlappingBuffers)
        << "source and destination 1";
    EXPECT_EQ(status_of(dualcast(kSrc + 0x40, kDst, kSrc, 0x100)), Status::OverlappingBuffers)
        << "source and destination 2";
}

TEST(Checks, DualcastDestinationsOverlappingEachOtherAreRefused)
{
    EXPECT_EQ(status_of(dualcast(kSrc, kDst, kDst + 0x1000, 0x2000)), Status::OverlappingBuffers);
}

TEST(Checks, DualcastBuffersThatOnlyTouchAreAccepted)
{
    // Adjacent, not overlapping: each ends where the next starts.
    EXPECT_EQ(status_of(dualcast(kSrc, kSrc + 0x1000, kSrc + 0x2000, 0x1000)), Status::Success);
}

TEST(Checks, CopyWithCrcOverlappingIsRefused)
{
    Desc d(Opcode::CopyCrc, kRecord);
    d.completion(kRec).src(kSrc).dst(kSrc + 63).size(64);
    EXPECT_EQ(status_of(d), Status::OverlappingBuffers);
    d.dst(kSrc + 64);
    EXPECT_EQ(status_of(d), Status::Success) << "adjacent is not overlapping";
}

TEST(Checks, MemmoveMayOverlap)
{
    // GENCAP.OVERLAP_COPY: the one operation whose buffers may overlap.
    Desc d = memmove();
    d.dst(kSrc + 8);
    EXPECT_EQ(status_of(d), Status::Success);
    d.dst(kSrc);
    EXPECT_EQ(status_of(d), Status::Success) << "source and destination the same";
}

Desc create_delta(uint64_t delta, uint32_t max, uint32_t size = 512)
{
    Desc d(Opcode::CreateDelta, kRecord);
    d.completion(kRec).src(kSrc).word(3, kSrc2).size(size).word(5, delta).word(6, max);
    return d;
}

TEST(Checks, CreateDeltaWhoseRecordMayReachASourceIsRefused)
{
    // The check is on the maximum record, not on what this comparison would write.
    EXPECT_EQ(status_of(create_delta(kSrc + 512 - 8, 80)), Status::OverlappingBuffers)
        << "the first source";
    EXPECT_EQ(status_of(create_delta(kSrc2 - 79, 80)), Status::OverlappingBuffers)
        << "the second source";
    EXPECT_EQ(status_of(create_delta(kSrc2 - 80, 80)), Status::Success) << "just below";
}

Desc apply_delta(uint64_t delta, uint32_t rec_size, uint64_t dst = kDst, uint32_t size = 64)
{
    Desc d(Opcode::ApplyDelta, kRecord);
    d.completion(kRec).word(2, delta).dst(dst).size(size).word(5, rec_size);
    return d;
}

TEST(Checks, ApplyDeltaWhoseRecordOverlapsTheDestinationIsRefused)
{
    EXPECT_EQ(status_of(apply_delta(kDst + 60, 10)), Status::OverlappingBuffers);
    EXPECT_EQ(status_of(apply_delta(kDst - 9, 10)), Status::OverlappingBuffers);
}

// ---- Delta alignment (1Ch) and record sizes (15h) ----

TEST(Checks, CreateDeltaNeedsQuadwordAlignedSourcesAndSize)
{
    Desc d = create_delta(kDelta, 80);
    d.src(kSrc + 4);
    EXPECT_EQ(status_of(d), Status::AddressAlign) << "first source";
    d = create_delta(kDelta, 80);
    d.word(3, kSrc2 + 1);
    EXPECT_EQ(status_of(d), Status::AddressAlign) << "second source";
    EXPECT_EQ(status_of(create_delta(kDelta, 80, 500)), Status::AddressAlign) << "size";
}

TEST(Checks, ApplyDeltaNeedsAQuadwordAlignedDestinationAndSize)
{
    EXPECT_EQ(status_of(apply_delta(kDelta, 10, kDst + 2)), Status::AddressAlign) << "destination";
    EXPECT_EQ(status_of(apply_delta(kDelta, 10, kDst, 60)), Status::AddressAlign) << "size";
}

TEST(Checks, CreateDeltaNeedsRoomForEightEntries)
{
    EXPECT_EQ(status_of(create_delta(kDelta, 79)), Status::DeltaSizeRange);
    EXPECT_EQ(status_of(create_delta(kDelta, 0)), Status::DeltaSizeRange);
    EXPECT_EQ(status_of(create_delta(kDelta, 80)), Status::Success);
}

TEST(Checks, CreateDeltaRecordAboveTheWqsMaximumIsRefused)
{
    EXPECT_EQ(status_of(create_delta(kDelta, 4097), Config{}, limits(12, 5)),
              Status::DeltaSizeRange);
    EXPECT_EQ(status_of(create_delta(kDelta, 4096), Config{}, limits(12, 5)), Status::Success);
}

TEST(Checks, ApplyDeltaNeedsAtLeastOneEntry)
{
    EXPECT_EQ(status_of(apply_delta(kDelta, 0)), Status::DeltaSizeRange);
    EXPECT_EQ(status_of(apply_delta(kDelta, 9)), Status::DeltaSizeRange);
}

TEST(Checks, ApplyDeltaRecordAboveTheWqsMaximumIsRefused)
{
    EXPECT_EQ(status_of(apply_delta(kDelta, 4097), Config{}, limits(12, 5)),
              Status::DeltaSizeRange);
}

// ---- Errors without a record ----

TEST(Checks, AnErrorWithoutCravGoesToSwerrWithTheDescriptorsIdentity)
{
    Rig r;
    r.group(0, 0b100, 1);
    r.wq(2, 16);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 2), CmdErr::Success);
    r.ack();
    r.wr(kGenctrl, 1); // SWERR_INT_EN, as idxd_unmask_error_interrupts
    r.irq.raised.clear();
    Desc d(Opcode::Dualcast, 0);
    d.src(kSrc).dst(kDst).size(64).word(5, kDst2 + 8);
    r.submit(2, d);
    r.run_until_idle();
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x17u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "DESC_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "OPERATION"), 0x09u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX"), 2u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "BATCH"), 0u);
    EXPECT_EQ(r.rd(kIntcause) & INTC_SWERR, INTC_SWERR);
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0u}) << "vector 0, the misc interrupt";
    EXPECT_EQ(r.dev.counters().records, 0u);
}

TEST(Checks, ASuccessWithoutCravReportsNothing)
{
    Rig r;
    r.bring_up();
    Desc d = memmove(0);
    d.completion(0);
    r.submit(0, d);
    r.run_until_idle();
    EXPECT_FALSE(r.rd(kSwerr, 8) & SWERR_VALID);
    EXPECT_EQ(r.dev.counters().swerrs, 0u);
}

} // namespace
} // namespace dmalab::dsa::testing
