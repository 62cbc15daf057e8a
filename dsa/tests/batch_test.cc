// SPDX-License-Identifier: GPL-2.0-or-later
// The Batch descriptor: its checks (count, list alignment), its descriptors each with their own
// record and interrupt, Batch Fail and the fence that abandons the rest, a list that faults,
// and the step budget a long list runs under (DSA spec, "Batch", "Fence").

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kRec = 0x1000;      // descriptor i's record at kRec + 32 * i
constexpr uint64_t kBatchRec = 0x3000; // the batch's own record
constexpr uint64_t kList = 0x4000;
constexpr uint64_t kSrc = 0x10000, kDst = 0x20000;
constexpr uint32_t kPiece = 256; // bytes each memmove of a list moves

uint64_t rec(unsigned i)
{
    return kRec + 32 * i;
}

// Descriptor i of a list: a memmove of its own piece, its record at rec(i).
Desc copy(unsigned i, uint32_t flags = kRecord)
{
    Desc d(Opcode::Memmove, flags);
    d.completion(rec(i)).src(kSrc + kPiece * i).dst(kDst + kPiece * i).size(kPiece);
    return d;
}

Desc batch(uint32_t count, uint32_t flags = kRecord, uint64_t list = kList)
{
    Desc d(Opcode::Batch, flags);
    d.completion(kBatchRec).src(list).size(count);
    return d;
}

// The descriptors, as software lays out a batch's list: 64 bytes each, contiguous.
void put_list(Rig& r, const std::vector<Desc>& subs, uint64_t at = kList)
{
    for (size_t i = 0; i < subs.size(); i++)
        r.poke(at + 64 * i, subs[i].raw.word, 64);
}

void fill_source(Rig& r)
{
    for (unsigned i = 0; i < 0x10000; i++)
        r.at(kSrc)[i] = static_cast<uint8_t>(i * 13 + 5);
}

bool piece_copied(Rig& r, unsigned i)
{
    return std::memcmp(r.at(kSrc + kPiece * i), r.at(kDst + kPiece * i), kPiece) == 0;
}

bool piece_untouched(Rig& r, unsigned i)
{
    const uint8_t* p = r.at(kDst + kPiece * i);
    return std::all_of(p, p + kPiece, [](uint8_t b) { return b == 0; });
}

// The order completion records are written in.
struct RecordOrder : Observer {
    void record(unsigned, uint64_t addr, Status, bool ok) override
    {
        if (ok)
            addrs.push_back(addr);
    }
    std::vector<uint64_t> addrs;
};

TEST(Batch, EveryDescriptorRunsWithItsOwnRecordThenTheBatchs)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    constexpr unsigned n = 8;
    std::vector<Desc> subs;
    for (unsigned i = 0; i < n; i++)
        subs.push_back(copy(i));
    put_list(r, subs);
    const Record b = r.run_desc(0, batch(n), kBatchRec);
    for (unsigned i = 0; i < n; i++) {
        EXPECT_EQ(r.record(rec(i)).code(), Status::Success) << "descriptor " << i;
        EXPECT_EQ(r.record(rec(i)).bytes, 0u) << "descriptor " << i;
        EXPECT_TRUE(piece_copied(r, i)) << "descriptor " << i;
    }
    EXPECT_EQ(b.status, static_cast<uint8_t>(Status::Success));
    // A batch's BYTES_COMPLETED counts descriptors, all of them on success (§8.3.2).
    EXPECT_EQ(b.bytes, n);
    EXPECT_EQ(r.dev.counters().batches, 1u);
    EXPECT_EQ(r.dev.counters().descriptors, n + 1) << "the batch and each of its descriptors";
    EXPECT_EQ(r.dev.counters().records, n + 1);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Batch, TheBatchsRecordComesAfterItsDescriptorsRecords)
{
    RecordOrder order;
    Rig r(Config{}, &order);
    r.bring_up();
    put_list(r, {copy(0), copy(1), copy(2)});
    r.run_desc(0, batch(3), kBatchRec);
    EXPECT_EQ(order.addrs, (std::vector<uint64_t>{rec(0), rec(1), rec(2), kBatchRec}));
}

TEST(Batch, CountsOfZeroAndOneAreOutOfRange)
{
    // DSA 1.0 has no single-entry batch (GENCAP.BATCH1 came with rev 3.0).
    for (uint32_t count : {0u, 1u}) {
        Rig r;
        r.bring_up();
        put_list(r, {copy(0), copy(1)});
        const Record b = r.run_desc(0, batch(count), kBatchRec);
        EXPECT_EQ(b.code(), Status::DescCountRange) << "count " << count;
        EXPECT_EQ(r.record(rec(0)).status, 0) << "nothing of the list runs, count " << count;
        EXPECT_TRUE(piece_untouched(r, 0)) << "count " << count;
    }
}

TEST(Batch, ACountAboveTheWqsMaximumIsOutOfRange)
{
    // bring_up() gives WQ 0 a MAX_BATCH_SHIFT of 5: 32 descriptors, no more.
    auto status_of = [](uint32_t count) {
        Rig r;
        r.bring_up();
        std::vector<Desc> subs(count, Desc(Opcode::Noop));
        put_list(r, subs);
        return r.run_desc(0, batch(count), kBatchRec).code();
    };
    EXPECT_EQ(status_of(32), Status::Success);
    EXPECT_EQ(status_of(33), Status::DescCountRange);
}

TEST(Batch, AListAddressNotAlignedTo64BytesIsRefused)
{
    for (uint64_t off : {8u, 32u, 63u}) {
        Rig r;
        r.bring_up();
        put_list(r, {copy(0), copy(1)}, kList + off);
        const Record b = r.run_desc(0, batch(2, kRecord, kList + off), kBatchRec);
        EXPECT_EQ(b.code(), Status::DescListAlign) << "offset " << off;
        EXPECT_EQ(r.dev.counters().descriptors, 1u) << "offset " << off;
    }
}

TEST(Batch, ABatchInsideABatchIsAnUnsupportedOpcode)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    Desc inner = batch(2);
    inner.completion(rec(1));
    put_list(r, {copy(0), inner, copy(2)});
    const Record b = r.run_desc(0, batch(3), kBatchRec);
    EXPECT_EQ(r.record(rec(1)).code(), Status::UnsupportedOpcode);
    EXPECT_EQ(r.record(rec(0)).code(), Status::Success);
    EXPECT_EQ(r.record(rec(2)).code(), Status::Success);
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_EQ(b.bytes, 3u);
    EXPECT_EQ(r.dev.counters().batches, 1u) << "the inner batch never ran as one";
}

TEST(Batch, ADrainInsideABatchIsAnUnsupportedOpcode)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    Desc drain(Opcode::Drain, kRecord);
    drain.completion(rec(1));
    put_list(r, {copy(0), drain, copy(2)});
    const Record b = r.run_desc(0, batch(3), kBatchRec);
    EXPECT_EQ(r.record(rec(1)).code(), Status::UnsupportedOpcode);
    EXPECT_EQ(r.record(rec(2)).code(), Status::Success);
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_EQ(b.bytes, 3u);
}

TEST(Batch, AFailureWithoutAFenceLetsTheRestRun)
{
    // Without a fence, a descriptor that fails stops nothing (§3.9).
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kSrc + kPiece, kPiece, true);
    put_list(r, {copy(0), copy(1), copy(2), copy(3)});
    const Record b = r.run_desc(0, batch(4), kBatchRec);
    EXPECT_EQ(r.record(rec(1)).code(), Status::PageFaultNoBof);
    for (unsigned i : {0u, 2u, 3u}) {
        EXPECT_EQ(r.record(rec(i)).code(), Status::Success) << "descriptor " << i;
        EXPECT_TRUE(piece_copied(r, i)) << "descriptor " << i;
    }
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_EQ(b.bytes, 4u) << "every descriptor was processed";
}

TEST(Batch, AFenceAfterAFailureAbandonsItAndWhatFollows)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kSrc + kPiece, kPiece, true);
    put_list(r, {copy(0), copy(1), copy(2), copy(3, kRecord | flag::FENCE), copy(4)});
    const Record b = r.run_desc(0, batch(5), kBatchRec);
    EXPECT_EQ(r.record(rec(1)).code(), Status::PageFaultNoBof);
    EXPECT_EQ(r.record(rec(2)).code(), Status::Success) << "no fence on it: it runs";
    for (unsigned i : {3u, 4u}) {
        // Abandoned descriptors write no record and move no data.
        EXPECT_EQ(r.record(rec(i)).status, 0) << "descriptor " << i;
        EXPECT_TRUE(piece_untouched(r, i)) << "descriptor " << i;
    }
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_EQ(b.bytes, 3u) << "the descriptors processed before the fence";
}

TEST(Batch, AFenceAfterSuccessesJustRuns)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    put_list(r, {copy(0), copy(1, kRecord | flag::FENCE), copy(2, kRecord | flag::FENCE)});
    const Record b = r.run_desc(0, batch(3), kBatchRec);
    for (unsigned i = 0; i < 3; i++)
        EXPECT_EQ(r.record(rec(i)).code(), Status::Success) << "descriptor " << i;
    EXPECT_EQ(b.code(), Status::Success);
    EXPECT_EQ(b.bytes, 3u);
}

TEST(Batch, AFenceAfterAFalsePredicateAbandonsTheRest)
{
    // A Compare's Check Result exists so that a fence can stop a batch on a false predicate
    // (§8.3.6): status 02h is not Success, for Batch Fail and for the fence alike.
    Rig r;
    r.bring_up();
    fill_source(r);
    r.fill(kDst, 0xee, kPiece);
    Desc cmp(Opcode::Compare, kRecord | flag::CR);
    cmp.completion(rec(0)).src(kSrc).word(3, kDst).size(kPiece).word(5, 0); // expects equal
    put_list(r, {cmp, copy(1, kRecord | flag::FENCE)});
    const Record b = r.run_desc(0, batch(2), kBatchRec);
    ASSERT_EQ(r.record(rec(0)).code(), Status::SuccessFalsePredicate);
    EXPECT_EQ(r.record(rec(1)).status, 0) << "the fenced descriptor is abandoned";
    EXPECT_TRUE(piece_untouched(r, 1));
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_EQ(b.bytes, 1u);
}

TEST(Batch, AListInAHoleEndsTheBatchWithAPageFault)
{
    // accel-config's dsa_reprep_batch resumes from DESCRIPTORS_COMPLETED after a 06h.
    Rig r;
    r.bring_up();
    fill_source(r);
    put_list(r, {copy(0), copy(1), copy(2), copy(3)});
    r.mem.add_hole(kList + 2 * 64, 2 * 64, true);
    const Record b = r.run_desc(0, batch(4), kBatchRec);
    EXPECT_EQ(b.code(), Status::BatchPageFault);
    EXPECT_EQ(b.fault_addr, kList + 2 * 64);
    EXPECT_EQ(b.bytes, 2u);
    EXPECT_EQ(r.record(rec(1)).code(), Status::Success);
    EXPECT_EQ(r.record(rec(2)).status, 0);
    EXPECT_TRUE(piece_untouched(r, 2));
}

TEST(Batch, AListThatEndsAt2To64GoesNoFurther)
{
    // The list's first descriptor is the last 64 bytes below 2^64 (a window: it reads as
    // zeros, a NOOP); the second would be at 2^64 itself. The batch faults there and reads
    // nothing at address 0, where list address plus offset wraps to.
    Rig r;
    r.bring_up();
    fill_source(r);
    const uint64_t top = uint64_t{0} - 64;
    r.mem.add_window({top, 64, [](uint64_t, const uint8_t*, size_t) {}});
    put_list(r, {copy(0)}, 0);
    const Record b = r.run_desc(0, batch(2, kRecord, top), kBatchRec);
    EXPECT_EQ(b.code(), Status::BatchPageFault);
    EXPECT_EQ(b.fault_addr, 0u);
    EXPECT_EQ(b.bytes, 1u) << "the NOOP";
    EXPECT_TRUE(piece_untouched(r, 0)) << "the descriptor at address 0 did not run";
}

TEST(Batch, AListFaultIsReportedEvenWithoutRcr)
{
    Rig r;
    r.bring_up();
    put_list(r, {Desc(Opcode::Noop), Desc(Opcode::Noop)});
    r.mem.add_hole(kList + 64, 64, true);
    const Record b = r.run_desc(0, batch(2, flag::CRAV), kBatchRec);
    EXPECT_EQ(b.code(), Status::BatchPageFault) << "only success and Batch Fail stay quiet";
    EXPECT_EQ(b.bytes, 1u);
}

TEST(Batch, ABatchFailWithoutRcrWritesNoBatchRecord)
{
    // Rev 3.0's Table 8-3: with RCR clear a record is written only for a status other than
    // 01h, 02h and 05h. The descriptors that failed report in their own records.
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kSrc + kPiece, kPiece, true);
    put_list(r, {copy(0, flag::CRAV), copy(1, flag::CRAV), copy(2, flag::CRAV)});
    const Record b = r.run_desc(0, batch(3, flag::CRAV), kBatchRec);
    EXPECT_EQ(b.status, 0) << "Batch Fail without RCR: no batch record";
    EXPECT_EQ(r.record(rec(1)).code(), Status::PageFaultNoBof);
    EXPECT_EQ(r.record(rec(0)).status, 0) << "success without RCR: no record";
    EXPECT_EQ(r.record(rec(2)).status, 0);
    EXPECT_TRUE(piece_copied(r, 2));
    EXPECT_EQ(r.dev.counters().records, 1u);
    EXPECT_EQ(r.rd(kSwerr) & SWERR_VALID, 0u) << "nothing for SWERR either";
}

TEST(Batch, OneStepRunsAtMostStepDescriptorsOfAList)
{
    Config c;
    c.step_descriptors = 64;
    Rig r(c);
    r.configure();
    r.wq(0, 16, kDedicated, 0, limits(21, 10)); // batches of up to 1024 (GENCAP's maximum)
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    constexpr uint64_t list = 0x80000;
    put_list(r, std::vector<Desc>(1024, Desc(Opcode::Noop)), list);
    r.submit(0, batch(1024, kRecord, list));
    unsigned expiries = 0;
    for (; r.pending() && expiries < 1000; expiries++) {
        const uint64_t before = r.dev.counters().descriptors;
        r.step();
        EXPECT_LE(r.dev.counters().descriptors - before, c.step_descriptors)
            << "expiry " << expiries;
    }
    EXPECT_GE(expiries, 1024u / c.step_descriptors);
    const Record b = r.record(kBatchRec);
    EXPECT_EQ(b.code(), Status::Success);
    EXPECT_EQ(b.bytes, 1024u);
    EXPECT_EQ(r.dev.counters().descriptors, 1025u);
}

TEST(Batch, EachDescriptorRaisesItsOwnInterruptAndTheBatchLast)
{
    Rig r;
    r.bring_up();
    std::vector<Desc> subs;
    for (unsigned i = 0; i < 3; i++) {
        Desc d(Opcode::Noop, kRecord | flag::RCI);
        d.completion(rec(i)).handle(static_cast<uint16_t>(2 + i));
        subs.push_back(d);
    }
    subs.push_back(Desc(Opcode::Noop)); // asks for none
    put_list(r, subs);
    Desc b = batch(4, kRecord | flag::RCI);
    b.handle(1);
    r.irq.raised.clear(); // the commands' interrupts
    r.run_desc(0, b, kBatchRec);
    EXPECT_EQ(r.irq.raised, (std::vector<unsigned>{2, 3, 4, 1}));
}

TEST(Batch, ADescriptorWithABadInterruptHandleFailsTheBatch)
{
    Rig r;
    r.bring_up();
    Desc d(Opcode::Noop, kRecord | flag::RCI);
    d.completion(rec(1)).handle(200); // no such MSI-X entry
    put_list(r, {Desc(Opcode::Noop), d});
    r.irq.raised.clear(); // the commands' interrupts
    const Record b = r.run_desc(0, batch(2), kBatchRec);
    EXPECT_EQ(r.record(rec(1)).code(), Status::InvalidIntHandle);
    EXPECT_EQ(b.code(), Status::BatchFail);
    EXPECT_TRUE(r.irq.raised.empty()) << "no interrupt for a handle that names none";
}

TEST(Batch, AFenceOnTheBatchItselfIsAnInvalidFlag)
{
    // FENCE means something only inside a batch; elsewhere it is reserved (Table 8-3).
    Rig r;
    r.bring_up();
    put_list(r, {Desc(Opcode::Noop), Desc(Opcode::Noop)});
    const Record b = r.run_desc(0, batch(2, kRecord | flag::FENCE), kBatchRec);
    EXPECT_EQ(b.code(), Status::InvalidFlags);
    EXPECT_EQ(b.word2 & 0xffffff, flag::FENCE) << "INVALID_FLAGS names it";
}

} // namespace
} // namespace dmalab::dsa::testing
