// SPDX-License-Identifier: GPL-2.0-or-later
// Saving a model in the middle of a busy ring and loading it into a new one: no descriptor
// lost or run twice, the data verifies, and malformed state is refused.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

constexpr unsigned kCount = 32;

void busy_ring(Rig& r)
{
    r.setup(0, kCompletion);
    r.fill(kSrc, kCount * 4096, 7);
    for (unsigned i = 0; i < kCount; i++)
        r.put_desc(kRing + 64 * i, 4096, ctl::COMPL_WRITE | (i + 1 == kCount ? ctl::INT_EN : 0),
                   kSrc + 4096 * i, kDst + 4096 * i, kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, kCount);
}

TEST(Migration, MidRingStateMovesToANewModel)
{
    Config c = rig_config();
    c.bandwidth = 100000000; // 4 KiB takes 40960 ns: descriptors are caught mid-copy
    c.latency_ns = 3000;
    c.step_bytes = 1024;
    c.jitter_ns = 500;
    c.seed = 3;
    Rig a(c);
    busy_ring(a);
    while (a.completed_addr(0) < kRing + 64 * (kCount / 2))
        a.step();
    a.step(); // and into the next descriptor's data phase
    StateWriter w;
    a.dev.save(w);

    Rig b(c);
    b.mem.ram = a.mem.ram; // guest memory migrates beside the device
    b.timers.now = a.timers.now;
    StateReader rd(w.bytes);
    ASSERT_TRUE(b.dev.load(rd));
    EXPECT_TRUE(b.pending()) << "an active channel asks for its step again";
    EXPECT_EQ(b.state(0), a.state(0));
    EXPECT_EQ(b.completed_addr(0), a.completed_addr(0));
    b.run_until_idle();
    a.run_until_idle();
    EXPECT_EQ(b.state(0), ChanState::Done);
    EXPECT_EQ(b.completed_addr(0), kRing + 64 * (kCount - 1));
    EXPECT_TRUE(b.same(kSrc, kDst, kCount * 4096));
    EXPECT_EQ(b.dev.stats(0).descriptors, kCount) << "none lost, none run twice";
    EXPECT_EQ(b.irq.raised, std::vector<unsigned>{0});
    // The source, had it gone on, ends in the same state at the same time.
    EXPECT_EQ(a.timers.now, b.timers.now);
    EXPECT_TRUE(a.mem.ram == b.mem.ram);
}

// RAID operations in flight: an XOR with its extended descriptor, a 16-source PQ with its SED,
// and a PQ_VAL whose mismatch was found in a piece before the save. The destination finishes
// them exactly as the source would, reports the mismatch, and delivers the interrupt INTRDELAY
// was holding.
TEST(Migration, RaidOperationsInFlightMoveToANewModel)
{
    Config c = raid_config();
    c.bandwidth = 200000000; // 64 KiB takes 327,680 ns
    c.step_bytes = 4096;
    constexpr uint32_t kBlock = 64 << 10;
    constexpr uint64_t kP = 0x800000, kQ = 0x900000, kSed = 0x20000;
    std::vector<uint64_t> s;
    std::vector<uint8_t> coef;
    for (unsigned i = 0; i < 16; i++) {
        s.push_back(kSrc + i * kBlock);
        coef.push_back(static_cast<uint8_t>(1 + i * 13));
    }
    Rig a(c);
    a.setup(0, kCompletion);
    a.dev.mmio_write(INTRDELAY, 50, 2);
    a.fill(kSrc, 16 * kBlock, 9);
    uint64_t at = a.put_xor(kRing, OP_XOR, kBlock, kDst, {s.begin(), s.begin() + 7},
                            ctl::COMPL_WRITE | ctl::INT_EN);
    at = a.put_pq(at, OP_PQ_16S, kBlock, kP, kQ, s, coef, ctl::COMPL_WRITE, kSed);
    // The parity of the first seven sources, wrong in its first piece only.
    constexpr uint64_t kParity = 0xa00000;
    for (unsigned i = 0; i < 7; i++)
        for (uint32_t k = 0; k < kBlock; k++)
            a.mem.ram[kParity + k] ^= a.mem.ram[s[i] + k];
    a.mem.ram[kParity + 7] ^= 1;
    at = a.put_xor(at, OP_XOR_VAL, kBlock, kParity, {s.begin(), s.begin() + 7}, ctl::COMPL_WRITE);
    const uint16_t count = static_cast<uint16_t>((at - kRing) / 64);
    a.set_chainaddr(0, kRing);
    a.issue(0, count);
    std::vector<uint8_t> stream[3], ram[3];
    unsigned saved = 0;
    // Three save points: inside the XOR; inside the PQ16 with the XOR's interrupt held
    // (50 us from 327 us); inside the XOR_VAL, past the piece it found wrong.
    const uint64_t at_ns[3] = {100000, 350000, 800000};
    uint64_t times[3] = {};
    while (a.pending() && saved < 3) {
        a.step();
        if (a.timers.now >= at_ns[saved]) {
            StateWriter w;
            a.dev.save(w);
            stream[saved] = w.bytes;
            ram[saved] = a.mem.ram;
            times[saved] = a.timers.now;
            saved++;
            ASSERT_TRUE(a.pending());
        }
    }
    ASSERT_EQ(saved, 3u);
    a.run_until_idle();
    for (unsigned i = 0; i < 3; i++) {
        SCOPED_TRACE(i);
        Rig b(c);
        b.mem.ram = ram[i]; // guest memory migrates beside the device
        b.timers.now = times[i];
        StateReader rd(stream[i]);
        ASSERT_TRUE(b.dev.load(rd));
        b.run_until_idle();
        EXPECT_TRUE(b.mem.ram == a.mem.ram);
        EXPECT_EQ(b.state(0), a.state(0));
        EXPECT_EQ(b.chanerr(0), CHANERR_XOR_P_OR_CRC_ERR) << "the mismatch the source found";
        EXPECT_EQ(b.timers.now, a.timers.now);
        EXPECT_EQ(b.dev.stats(0).interrupts, a.dev.stats(0).interrupts);
        EXPECT_EQ(b.dev.stats(0).descriptors, a.dev.stats(0).descriptors);
    }
    EXPECT_EQ(a.dev.stats(0).ops[static_cast<unsigned>(OpKind::Pq16)].descriptors, 1u);
}

TEST(Migration, MalformedStateIsRefused)
{
    Config lat = rig_config();
    lat.latency_ns = 1000; // the first descriptor is in progress after one step
    Rig a(lat);
    busy_ring(a);
    a.step();
    StateWriter w;
    a.dev.save(w);

    for (size_t cut : {size_t{0}, size_t{5}, w.bytes.size() / 2, w.bytes.size() - 1}) {
        Rig b(lat);
        std::vector<uint8_t> part(w.bytes.begin(), w.bytes.begin() + cut);
        StateReader rd(part);
        EXPECT_FALSE(b.dev.load(rd)) << "cut at " << cut;
        EXPECT_EQ(b.state(0), ChanState::Halted) << "a refused load leaves a reset device";
        EXPECT_FALSE(b.pending());
    }
    // Another channel count.
    Config two = lat;
    two.channels = 2;
    Rig b(two);
    StateReader rd(w.bytes);
    EXPECT_FALSE(b.dev.load(rd));
    // A descriptor in progress whose range would wrap.
    std::vector<uint8_t> bad = w.bytes;
    bool flipped = false;
    for (size_t i = 0; i + 8 <= bad.size() && !flipped; i++) {
        uint64_t v;
        std::memcpy(&v, &bad[i], 8);
        // The in-progress operation's first source, then its 15 unused ones.
        bool unused =
            i + 8 * kMaxSources <= bad.size() &&
            std::all_of(&bad[i + 8], &bad[i + 8 * kMaxSources], [](uint8_t b) { return b == 0; });
        if (v == kSrc && unused) {
            v = ~0ull - 16;
            std::memcpy(&bad[i], &v, 8);
            flipped = true;
        }
    }
    ASSERT_TRUE(flipped);
    Rig c(lat);
    StateReader rd2(bad);
    EXPECT_FALSE(c.dev.load(rd2));
}

// A descriptor in progress at an address no fetch could have had (not 64-byte aligned): its
// error status write-back at address + 3 would pass 2^64 and land at address 2.
TEST(Migration, AnUnalignedDescriptorInProgressIsRefused)
{
    Config c = raid_config();
    c.dmacap |= CAP_DWBES;
    c.bandwidth = 100000000; // 16 KiB takes 163,840 ns
    c.step_bytes = 4096;
    constexpr uint32_t kBlock = 16 << 10;
    constexpr uint64_t kP = 0x800000, kQ = 0x900000;
    Rig a(c);
    a.setup(0, kCompletion);
    a.fill(kSrc, 3 * kBlock, 9);
    // P and Q are zeros, so the validation mismatches and writes its status back.
    a.put_pq(kRing, OP_PQ_VAL, kBlock, kP, kQ, {kSrc, kSrc + kBlock, kSrc + 2 * kBlock}, {1, 2, 3},
             ctl::WB_EN | ctl::COMPL_WRITE);
    a.set_chainaddr(0, kRing);
    a.issue(0, 1);
    while (a.pending() && a.timers.now < 50000)
        a.step();
    ASSERT_TRUE(a.pending());
    StateWriter w;
    a.dev.save(w);
    // The operation's address is followed by its control word in the stream.
    const uint32_t ctl_word = a.mem.get<uint32_t>(kRing + 4);
    std::vector<uint8_t> bad = w.bytes;
    bool patched = false;
    for (size_t i = 0; i + 12 <= bad.size() && !patched; i++) {
        uint64_t v;
        uint32_t next;
        std::memcpy(&v, &bad[i], 8);
        std::memcpy(&next, &bad[i + 8], 4);
        if (v == kRing && next == ctl_word) {
            v = ~uint64_t{0};
            std::memcpy(&bad[i], &v, 8);
            patched = true;
        }
    }
    ASSERT_TRUE(patched);
    Rig b(c);
    b.mem.ram = a.mem.ram;
    b.fill(0, 16, 5);
    const auto low = b.bytes(0, 16);
    b.timers.now = a.timers.now;
    StateReader rd(bad);
    EXPECT_FALSE(b.dev.load(rd));
    b.run_until_idle();
    EXPECT_EQ(b.bytes(0, 16), low) << "nothing lands at address 0";
}

// What properties set is the destination's own: a destination started with another
// xfercap, CB version or capability set refuses the stream instead of taking the source's.
TEST(Migration, RegistersFromPropertiesMustMatchTheDestination)
{
    Config src = rig_config();
    Rig a(src);
    busy_ring(a);
    StateWriter w;
    a.dev.save(w);
    Config xfercap = src, cbver = src, dmacap = src;
    xfercap.xfercap_log = src.xfercap_log - 1;
    cbver.cbver = static_cast<uint8_t>(src.cbver - 1);
    dmacap.dmacap = src.dmacap ^ 1;
    for (const Config& dst : {xfercap, cbver, dmacap}) {
        Rig b(dst);
        StateReader rd(w.bytes);
        EXPECT_FALSE(b.dev.load(rd));
        EXPECT_EQ(b.dev.mmio_read(XFERCAP, 1), dst.xfercap_log);
        EXPECT_EQ(b.dev.mmio_read(CBVER, 1), dst.cbver);
        EXPECT_EQ(b.dev.mmio_read(DMACAPABILITY, 4), dst.dmacap);
    }
    Rig same(src);
    StateReader rd(w.bytes);
    EXPECT_TRUE(same.dev.load(rd));
}

TEST(Migration, StateAfterLoadSavesIdentically)
{
    Rig a;
    busy_ring(a);
    a.step();
    StateWriter w1;
    a.dev.save(w1);
    Rig b;
    StateReader rd(w1.bytes);
    ASSERT_TRUE(b.dev.load(rd));
    StateWriter w2;
    b.dev.save(w2);
    EXPECT_EQ(w1.bytes, w2.bytes);
}

} // namespace
} // namespace dmalab::ioat::testing
