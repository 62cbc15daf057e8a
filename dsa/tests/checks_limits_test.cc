// SPDX-License-Identifier: GPL-2.0-or-later
// The descriptor checks on sizes, addresses and handles (DSA spec, "Descriptor Checks";
// status codes 13h-1Ch), and errors without a record (SWERR). checks_test.cc has the
// opcode, flag and reserved-field checks.

#include "checks.h"

namespace dmalab::dsa::testing
{
namespace
{

using namespace checks;

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
