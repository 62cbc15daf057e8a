// SPDX-License-Identifier: GPL-2.0-or-later
// What goes wrong on the way, and how long the way takes: addresses the IOMMU refuses,
// nothing decodes or that wrap past 2^64 (§8.2, status 03h and 20h), a completion record that
// cannot be written (SWERR 1Ah), interrupts the MSI-X permissions suppress; then the modelled
// clock: bandwidth, latency and seeded jitter, the step budget a busy guest cannot exceed, and
// migration with a transfer half done.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kSrc = 0x10000, kDst = 0x40000, kRec = 0x1000;
constexpr uint64_t kTop = 0 - uint64_t{4096}; // the last page below 2^64

Desc move(uint64_t src, uint64_t dst, uint32_t n, uint32_t flags = kRecord)
{
    // The record's address only with CRAV: without it the field is reserved.
    Desc d(Opcode::Memmove, flags);
    d.completion(flags & flag::CRAV ? kRec : 0).src(src).dst(dst).size(n);
    return d;
}

void fill_source(Rig& r, size_t n = 0x20000)
{
    for (size_t i = 0; i < n; i++)
        r.at(kSrc)[i] = static_cast<uint8_t>(i * 31 + 7);
}

bool copied(Rig& r, uint64_t off, size_t n)
{
    return std::memcmp(r.at(kSrc + off), r.at(kDst + off), n) == 0;
}

bool zero(Rig& r, uint64_t at, size_t n)
{
    const uint8_t* p = r.at(at);
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// A device window at the top of the address space: reads see zeros, writes are counted.
void window_at_top(Rig& r, uint64_t* written = nullptr)
{
    r.mem.add_window({kTop, 4096, [written](uint64_t, const uint8_t*, size_t n) {
                          if (written)
                              *written += n;
                      }});
}

// ---- Faults ----

TEST(Faults, ASourceInAnIommuHoleIsAPageFault)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kSrc + 0x2000, 0x1000, true);
    const Record rec = r.run_desc(0, move(kSrc, kDst, 0x4000), kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.status & cr::STATUS_FAULT_WRITE, 0) << "the fault was a read";
    EXPECT_EQ(rec.fault_addr, kSrc + 0x2000);
    EXPECT_EQ(rec.bytes, 0x2000u) << "the bytes before the fault";
    EXPECT_TRUE(copied(r, 0, 0x2000));
    EXPECT_TRUE(zero(r, kDst + 0x2000, 0x2000)) << "nothing after the fault";
    EXPECT_EQ(rec.result, 0) << "a forward copy";
    EXPECT_EQ(r.dev.counters().descriptor_errors, 1u);
}

TEST(Faults, ADestinationInAnIommuHoleIsAWriteFault)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kDst + 0x1000, 0x1000, true);
    const Record rec = r.run_desc(0, move(kSrc, kDst, 0x4000), kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.status, 0x80 | 0x03) << "bit 7: the faulting access was a write";
    EXPECT_EQ(rec.fault_addr, kDst + 0x1000);
    EXPECT_EQ(rec.bytes, 0x1000u);
    EXPECT_TRUE(copied(r, 0, 0x1000));
}

TEST(Faults, AnUnassignedAddressIsAHardwareError)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    r.mem.add_hole(kSrc + 0x1000, 0x1000, false);
    const Record rec = r.run_desc(0, move(kSrc, kDst, 0x4000), kRec);
    EXPECT_EQ(rec.code(), Status::HwError);
    EXPECT_EQ(rec.fault_addr, kSrc + 0x1000);
    EXPECT_EQ(rec.bytes, 0x1000u);
}

TEST(Faults, AnAddressBeyondRamIsAHardwareError)
{
    Rig r;
    r.bring_up();
    const uint64_t beyond = r.mem.ram.size();
    const Record rec = r.run_desc(0, move(beyond - 0x800, kDst, 0x1000), kRec);
    EXPECT_EQ(rec.code(), Status::HwError);
    EXPECT_EQ(rec.fault_addr, beyond);
    EXPECT_EQ(rec.bytes, 0x800u);
}

TEST(Faults, AMemmoveThatWrapsPast2To64IsAPageFault)
{
    // What lies below 2^64 moves; the wrap is the fault, at address 0.
    Rig r;
    r.bring_up();
    window_at_top(r);
    r.fill(kDst, 0xaa, 0x2000);
    const Record rec = r.run_desc(0, move(kTop, kDst, 0x2000), kRec);
    EXPECT_EQ(rec.code(), Status::PageFaultNoBof);
    EXPECT_EQ(rec.status & cr::STATUS_FAULT_WRITE, 0);
    EXPECT_EQ(rec.bytes, 0x1000u);
    EXPECT_EQ(rec.fault_addr, 0u);
    EXPECT_TRUE(zero(r, kDst, 0x1000)) << "the window's zeros were copied";
    EXPECT_EQ(r.at(kDst + 0x1000)[0], 0xaa);
}

TEST(Faults, AMemmoveWhoseDestinationWrapsIsAWriteFault)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    uint64_t written = 0;
    window_at_top(r, &written);
    const Record rec = r.run_desc(0, move(kSrc, kTop, 0x2000), kRec);
    EXPECT_EQ(rec.status, 0x80 | 0x03);
    EXPECT_EQ(rec.bytes, 0x1000u);
    EXPECT_EQ(written, 0x1000u);
    EXPECT_TRUE(zero(r, 0, 0x1000)) << "nothing lands at address 0";
}

// The same in steps of one page: the first moves the page below 2^64, and the next starts
// where the range has already wrapped. It faults there rather than go on at address 0.
TEST(Faults, AMemmoveThatWrapsFaultsAtTheWrapInStepsOfAPage)
{
    Config c;
    c.step_bytes = 4096;
    for (const bool dst_wraps : {false, true}) {
        SCOPED_TRACE(dst_wraps ? "the destination wraps" : "the source wraps");
        Rig r(c);
        r.bring_up();
        fill_source(r);
        uint64_t written = 0;
        window_at_top(r, &written);
        r.fill(0, 0x5a, 0x1000);
        r.fill(kDst, 0xaa, 0x3000);
        const Record rec =
            r.run_desc(0, dst_wraps ? move(kSrc, kTop, 0x3000) : move(kTop, kDst, 0x3000), kRec);
        EXPECT_EQ(rec.status, (dst_wraps ? 0x80 : 0) | 0x03);
        EXPECT_EQ(rec.bytes, 0x1000u);
        EXPECT_EQ(rec.fault_addr, 0u);
        EXPECT_EQ(written, dst_wraps ? 0x1000u : 0u);
        EXPECT_EQ(r.at(0)[0], 0x5a) << "nothing lands at address 0";
        EXPECT_EQ(r.at(0)[0xfff], 0x5a) << "nothing lands at address 0";
        EXPECT_EQ(r.at(kDst + 0x1000)[0], 0xaa) << "nothing read from address 0 lands";
    }
}

TEST(Faults, AnOverlappingCopyWhoseDestinationWrapsFaultsBeforeAByte)
{
    // The source is the last two pages below 2^64 and the destination starts inside it: the
    // copy runs from the end down, and that end lies past 2^64, at address 0 modulo 2^64.
    Rig r;
    r.bring_up();
    uint64_t written = 0;
    r.mem.add_window(
        {kTop - 4096, 2 * 4096, [&written](uint64_t, const uint8_t*, size_t n) { written += n; }});
    r.fill(0, 0x5a, kRec);
    const Record rec = r.run_desc(0, move(kTop - 4096, kTop, 0x2000), kRec);
    EXPECT_EQ(rec.status, 0x80 | 0x03);
    EXPECT_EQ(rec.result, 1u) << "a copy down";
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_EQ(rec.fault_addr, 0u);
    EXPECT_EQ(written, 0u);
    for (uint64_t a = 0; a < kRec; a++)
        ASSERT_EQ(r.at(0)[a], 0x5a) << "byte " << a << " at address 0 and up";
}

TEST(Faults, BuffersThatOverlapBelow2To64AreRefusedWhereOneEndsThere)
{
    // The source is the last two pages below 2^64, the destination the two pages before its
    // second: they share a page, however their ends compare modulo 2^64.
    Rig r;
    r.bring_up();
    Desc d(Opcode::CopyCrc, kRecord);
    d.completion(kRec).src(kTop - 4096).dst(kTop - 2 * 4096).size(0x2000);
    EXPECT_EQ(r.run_desc(0, d, kRec).code(), Status::OverlappingBuffers);
}

TEST(Faults, AFillThatWrapsPast2To64IsAPageFault)
{
    // Ranges that wrap fail where they wrap, for every operation (ops.cc, execute.cc).
    Rig r;
    r.bring_up();
    uint64_t written = 0;
    window_at_top(r, &written);
    Desc d(Opcode::Fill, kRecord);
    d.completion(kRec).word(2, 0x5a5a5a5a5a5a5a5aull).dst(kTop).size(0x2000);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.status, 0x80 | 0x03);
    EXPECT_EQ(rec.bytes, 0x1000u);
    EXPECT_EQ(written, 0x1000u);
    EXPECT_TRUE(zero(r, 0, 0x1000)) << "the fill went on at address 0";
}

TEST(Faults, ARecordAddressInAHoleIsASoftwareError)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    r.wr(kGenctrl, 1); // SWERR_INT_EN
    constexpr uint64_t bad = 0x5000;
    r.mem.add_hole(bad, 0x1000, true);
    Desc d = move(kSrc, kDst, 0x1000);
    d.completion(bad);
    r.run_desc(0, d, bad);
    EXPECT_TRUE(copied(r, 0, 0x1000)) << "the operation itself ran";
    const uint64_t sw0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(sw0 & SWERR_VALID);
    EXPECT_EQ(field_of(sw0, fields::SWERR0, "ERROR"),
              static_cast<uint64_t>(Status::CompletionRecordFault));
    EXPECT_EQ(field_of(sw0, fields::SWERR0, "WQ_IDX"), 0u);
    EXPECT_EQ(field_of(sw0, fields::SWERR0, "OPERATION"), static_cast<uint64_t>(Opcode::Memmove));
    EXPECT_EQ(r.rd(offset("SWERR2"), 8), bad) << "the record's address";
    EXPECT_EQ(r.rd(kIntcause) & INTC_SWERR, INTC_SWERR);
    EXPECT_EQ(r.dev.counters().records, 0u);
}

TEST(Faults, ARecordAimedAtADeviceWindowGoesToTheWindow)
{
    Rig r;
    r.bring_up();
    fill_source(r);
    constexpr uint64_t win = 0x60000;
    std::vector<uint8_t> seen(32, 0xff);
    size_t bytes = 0;
    r.mem.add_window({win, 0x1000, [&](uint64_t off, const uint8_t* p, size_t n) {
                          bytes += n;
                          if (off + n <= seen.size())
                              std::memcpy(seen.data() + off, p, n);
                      }});
    Desc d = move(kSrc, kDst, 0x1000);
    d.completion(win);
    r.run_desc(0, d, kRec);
    EXPECT_EQ(bytes, 32u) << "the whole record, once";
    EXPECT_EQ(seen[0], static_cast<uint8_t>(Status::Success));
    EXPECT_EQ(r.rd(kSwerr) & SWERR_VALID, 0u);
    EXPECT_TRUE(copied(r, 0, 0x1000));
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Faults, AnIgnoredVectorGetsNoCompletionInterrupt)
{
    Rig r;
    r.bring_up();
    r.wr(r.perm(1), 1u << 2); // IGNORE
    Desc d(Opcode::Noop, kRecord | flag::RCI);
    d.completion(kRec).handle(1);
    const Record rec = r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::Success) << "the record is written all the same";
    EXPECT_EQ(std::count(r.irq.raised.begin(), r.irq.raised.end(), 1u), 0);
    d.completion(kRec + 32).handle(2);
    r.run_desc(0, d, kRec + 32);
    EXPECT_EQ(std::count(r.irq.raised.begin(), r.irq.raised.end(), 2u), 1)
        << "another vector is not suppressed";
}

// ---- The modelled clock ----

Config paced(uint64_t latency = 0, uint64_t jitter = 0, uint64_t seed = 0)
{
    Config c;
    c.bandwidth = 1000000000; // a byte per ns, over all streams
    c.latency_ns = latency;
    c.jitter_ns = jitter;
    c.seed = seed;
    c.step_bytes = 4096;
    return c;
}

TEST(Faults, DataMovesAtTheBandwidthAndTheRecordFollowsTheLatency)
{
    constexpr uint64_t latency = 5000;
    Rig r(paced(latency));
    r.bring_up();
    fill_source(r);
    constexpr uint32_t size = 0x10000;
    r.submit(0, move(kSrc, kDst, size));
    // A memmove reads and writes each byte: two streams share the bandwidth.
    const uint64_t transfer = 2 * size; // ns at a byte per ns
    while (r.pending() && r.timers.next()->second <= transfer / 2)
        r.step();
    size_t moved = 0;
    while (moved < size && r.at(kDst)[moved] == r.at(kSrc)[moved])
        moved++;
    // Never ahead of the rate, and behind it by no more than one step.
    EXPECT_LE(moved, size / 2) << "at half time";
    EXPECT_GE(moved, size / 2 - r.config.step_bytes) << "at half time";
    EXPECT_TRUE(zero(r, kDst + size / 2, size / 2));
    while (r.pending() && r.record(kRec).status == 0)
        r.step();
    EXPECT_EQ(r.record(kRec).code(), Status::Success);
    EXPECT_TRUE(copied(r, 0, size));
    EXPECT_EQ(r.timers.now, latency + transfer);
}

// The time of each completion record, in order.
struct RecordTimes : Observer {
    void record(unsigned, uint64_t, Status, bool ok) override
    {
        if (ok)
            at.push_back(timers->now);
    }
    const FakeTimers* timers = nullptr;
    std::vector<uint64_t> at;
};

std::vector<uint64_t> completion_times(const Config& c)
{
    RecordTimes times;
    Rig r(c, &times);
    times.timers = &r.timers;
    r.bring_up();
    for (unsigned i = 0; i < 8; i++) {
        Desc d = move(kSrc + 0x1000 * i, kDst + 0x1000 * i, 0x1000);
        d.completion(kRec + 32 * i);
        r.submit(0, d);
    }
    r.run_until_idle();
    return times.at;
}

TEST(Faults, TheSameSeedGivesTheSameCompletionTimes)
{
    const auto a = completion_times(paced(1000, 20000, 5));
    ASSERT_EQ(a.size(), 8u);
    EXPECT_EQ(a, completion_times(paced(1000, 20000, 5)));
    uint64_t prev = 0;
    for (uint64_t t : a) {
        // Each starts when the one before it ends: 8 us of data, 1 us latency, some jitter.
        EXPECT_GE(t - prev, 9000u);
        EXPECT_LE(t - prev, 9000u + 20000u + 8192u);
        prev = t;
    }
}

TEST(Faults, AnotherSeedDrawsOtherJitter)
{
    EXPECT_NE(completion_times(paced(1000, 20000, 5)), completion_times(paced(1000, 20000, 6)));
    EXPECT_EQ(completion_times(paced(1000, 0, 5)), completion_times(paced(1000, 0, 6)))
        << "without jitter the seed changes nothing";
}

TEST(Faults, AFullWqCannotMakeOneExpiryMoveMoreThanStepBytes)
{
    Config c;
    c.step_bytes = 0x4000;
    Rig r(c);
    r.bring_up();
    fill_source(r);
    // The destination is a device window, so every byte written is counted where it lands.
    constexpr uint64_t win = 0x80000;
    uint64_t written = 0;
    r.mem.add_window({win, 0x10000, [&](uint64_t, const uint8_t*, size_t n) { written += n; }});
    auto top_up = [&] {
        while (WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(0, kWqStatus))) < 16)
            r.submit(0, move(kSrc, win, 0x10000, 0));
    };
    top_up();
    for (unsigned n = 0; n < 100; n++) {
        const uint64_t before = written;
        r.step();
        EXPECT_LE(written - before, c.step_bytes) << "expiry " << n;
        top_up();
    }
    EXPECT_GE(written, 99 * c.step_bytes) << "the budget was used";
}

TEST(Faults, AFullWqCannotMakeOneExpiryRunMoreThanStepDescriptors)
{
    Config c = queued(); // the WQ fills between expiries
    c.step_descriptors = 4;
    Rig r(c);
    r.bring_up();
    auto top_up = [&] {
        while (WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(0, kWqStatus))) < 16)
            r.submit(0, Desc(Opcode::Noop));
    };
    top_up();
    for (unsigned n = 0; n < 50; n++) {
        const uint64_t done = r.dev.counters().descriptors;
        r.step();
        EXPECT_LE(r.dev.counters().descriptors - done, c.step_descriptors) << "expiry " << n;
        top_up();
    }
    EXPECT_GE(r.dev.counters().descriptors, 40u * c.step_descriptors) << "the budget was used";
    EXPECT_EQ(r.dev.counters().dropped, 0u) << "the guest never overfilled the WQ";
}

TEST(Faults, AnEngineOutOfBudgetGoesOnStepGapLater)
{
    // Config: after a step's budget, the engine goes on step_gap_ns later on the modelled
    // clock, however full the guest keeps its WQ.
    Config c = queued(); // the WQ fills between expiries
    c.step_descriptors = 4;
    c.step_gap_ns = 500;
    Rig r(c);
    r.bring_up();
    auto top_up = [&] {
        while (WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(0, kWqStatus))) < 16)
            r.submit(0, Desc(Opcode::Noop));
    };
    top_up();
    unsigned early = 0; // expiries less than step_gap_ns after the one before
    r.step();
    for (unsigned n = 1; n < 20; n++) {
        top_up();
        const uint64_t now = r.timers.now;
        r.step();
        early += r.timers.now - now < c.step_gap_ns;
    }
    EXPECT_EQ(early, 0u) << "of 19; the clock stands at " << r.timers.now << " ns";
    EXPECT_GE(r.timers.now, 19 * c.step_gap_ns);
}

// ---- Migration mid-transfer ----

std::vector<uint8_t> saved(const Rig& r)
{
    StateWriter w;
    r.dev.save(w);
    return w.bytes;
}

bool load(Rig& r, const std::vector<uint8_t>& bytes)
{
    StateReader rd(bytes);
    return r.dev.load(rd);
}

// Where WQCFG entries sit in the stream (state.cc, as migration_test.cc finds them).
constexpr size_t wq_at(unsigned wq, uint32_t reg_offset)
{
    return 4 + 2 + 8 + 4 + 8 * kRegCount + 4 * (wq * (kWqcfgStride / 4) + reg_offset / 4);
}

// A device with a 64 KiB memmove partway (its engine's timer armed) and one queued.
void mid_copy(Rig& r)
{
    r.bring_up();
    fill_source(r);
    r.submit(0, move(kSrc, kDst, 0x10000, kRecord | flag::RCI).handle(1));
    Desc second = move(kSrc + 0x10000, kDst + 0x10000, 0x2000, kRecord | flag::RCI);
    second.completion(kRec + 32).handle(1);
    r.submit(0, second);
    for (unsigned i = 0; i < 6; i++)
        r.step();
    ASSERT_FALSE(zero(r, kDst, 0x1000));
    ASSERT_TRUE(zero(r, kDst + 0xf000, 0x1000));
}

TEST(Faults, MigrationMidTransferEndsTheSameOnBothSides)
{
    const Config c = paced(3000, 700, 9);
    Rig a(c);
    mid_copy(a);
    const auto bytes = saved(a);
    Rig b(c);
    b.timers.now = a.timers.now;
    b.mem.ram = a.mem.ram; // guest memory migrates on its own
    ASSERT_TRUE(load(b, bytes));
    EXPECT_EQ(saved(b), bytes);
    ASSERT_TRUE(b.pending()) << "the engine's timer is armed again";
    EXPECT_EQ(b.timers.next()->second, a.timers.next()->second);
    a.run_until_idle();
    b.run_until_idle();
    EXPECT_EQ(a.mem.ram, b.mem.ram);
    EXPECT_EQ(b.record(kRec).code(), Status::Success);
    EXPECT_EQ(b.record(kRec + 32).code(), Status::Success);
    EXPECT_TRUE(copied(b, 0, 0x12000));
    EXPECT_EQ(a.timers.now, b.timers.now) << "the same completion times, jitter included";
    EXPECT_EQ(a.dev.counters(), b.dev.counters());
    EXPECT_EQ(std::count(b.irq.raised.begin(), b.irq.raised.end(), 1u), 2);
    EXPECT_EQ(saved(a), saved(b));
}

TEST(Faults, LoadRefusesADisabledWqHoldingDescriptors)
{
    auto with_wq0_disabled = [](bool holding) {
        Rig a(queued());
        a.bring_up();
        if (holding)
            for (unsigned i = 0; i < 3; i++)
                a.submit(0, Desc(Opcode::Noop), i); // queued: no timer has run
        auto bytes = saved(a);
        const size_t at = wq_at(0, kWqStatus);
        bytes[at + 3] &= 0x3f; // WQ_STATE (bits 31:30): Disabled; OCCUPANCY kept
        Rig b;
        return load(b, bytes);
    };
    EXPECT_TRUE(with_wq0_disabled(false)) << "an enabled device with a disabled, empty WQ";
    EXPECT_FALSE(with_wq0_disabled(true));
}

TEST(Faults, LoadRefusesAnEngineFurtherAlongThanItsTransfer)
{
    const Config c = paced();
    Rig a(c);
    a.bring_up();
    const Desc d = move(kSrc, kDst, 0x10000);
    a.submit(0, d);
    for (unsigned i = 0; i < 3; i++)
        a.step();
    const auto good = saved(a);
    // The engine's descriptor: its 64 bytes, then WQ (1), number (8), in-batch (1), index in
    // the batch (2), then DONE (8) (datapath_state.cc).
    std::vector<uint8_t> raw(64);
    std::memcpy(raw.data(), d.raw.word, 64);
    const auto it = std::search(good.begin(), good.end(), raw.begin(), raw.end());
    ASSERT_NE(it, good.end());
    const size_t done_at = static_cast<size_t>(it - good.begin()) + 64 + 1 + 8 + 1 + 2;
    uint64_t done = 0;
    std::memcpy(&done, good.data() + done_at, 8);
    ASSERT_GT(done, 0u);
    ASSERT_LT(done, 0x10000u) << "DONE sits where the test looks";
    auto with_done = [&](uint64_t v) {
        auto bytes = good;
        std::memcpy(bytes.data() + done_at, &v, 8);
        Rig b(c);
        return load(b, bytes);
    };
    EXPECT_TRUE(with_done(done + 0x1000)) << "progress within the transfer";
    EXPECT_FALSE(with_done(0x10001));
    EXPECT_FALSE(with_done(~0ull));
}

} // namespace
} // namespace dmalab::dsa::testing
