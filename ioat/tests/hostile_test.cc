// SPDX-License-Identifier: GPL-2.0-or-later
// A guest that aims the device at itself or feeds it forever. The fakes stand in for the
// worst QEMU allows: DMA that lands in the device's own registers without the re-entrancy
// guard, and DMA that resets the device (an FLR through MMCONFIG, a bus reset through the
// port above it) in the middle of a copy.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

constexpr uint64_t kWindow = 0xe00000; // a device window where the fake would have RAM

// The device's own BAR, reachable by its own DMA.
void map_registers(Rig& r)
{
    r.mem.add_window({kWindow, kRegWindow, [&r](uint64_t off, const uint8_t* p, size_t n) {
                          uint64_t v = 0;
                          for (size_t i = 0; i < n && i < 8; i++)
                              v |= uint64_t{p[i]} << (8 * i);
                          r.dev.mmio_write(static_cast<uint32_t>(off), v,
                                           static_cast<unsigned>(std::min<size_t>(n, 8)));
                      }});
}

TEST(Hostile, CopyThatResetsItsOwnChannelWritesNoCompletion)
{
    Rig r;
    r.mem.map_limit = 64; // the copy proceeds in pieces, so the reset lands mid-copy
    map_registers(r);
    r.setup(0, kCompletion);
    uint8_t cmd = CHANCMD_RESET;
    r.mem.put(kSrc, cmd);
    // One copy: the byte that resets channel 0, then more data after it.
    r.put_desc(kRing, 1, kCopyIrq, kSrc, kWindow + Rig::chan(0, CHANCMD), kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle(100);
    EXPECT_EQ(r.state(0), ChanState::Halted) << "a reset channel is halted";
    EXPECT_EQ(r.chanerr(0), 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u) << "no completion after the reset";
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u);
    EXPECT_FALSE(r.pending());
    EXPECT_EQ(r.mem.outstanding, 0);
}

TEST(Hostile, DeviceResetFromInsideACopyStopsEverything)
{
    Rig r;
    r.mem.map_limit = 4096;
    bool reset_done = false;
    // Any write into this window resets the whole device (an FLR by DMA into config space).
    r.mem.add_window({kWindow, 4096, [&](uint64_t, const uint8_t*, size_t) {
                          r.dev.reset();
                          reset_done = true;
                      }});
    for (unsigned ch = 0; ch < 2; ch++)
        r.setup(ch, kCompletion + 64 * ch);
    r.fill(kSrc, 16384, 3);
    // Channel 1 has a long copy in progress; channel 0's copy hits the window.
    r.put_desc(kRing + 0x1000, 1 << 20, kCopyIrq, kSrc, kDst, kRing + 0x1040);
    r.put_desc(kRing, 8192, kCopyIrq, kSrc, kWindow - 4096, kRing + 64);
    r.set_chainaddr(1, kRing + 0x1000);
    r.issue(1, 1);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle(1000);
    EXPECT_TRUE(reset_done);
    for (unsigned ch = 0; ch < 2; ch++) {
        EXPECT_EQ(r.state(ch), ChanState::Halted);
        EXPECT_EQ(r.mem.get<uint64_t>(kCompletion + 64 * ch), 0u);
    }
    EXPECT_TRUE(r.irq.raised.empty());
    EXPECT_FALSE(r.pending()) << "a reset cancels every pending step";
    EXPECT_EQ(r.mem.outstanding, 0);
    // And it works like new.
    r.setup(0, kCompletion);
    r.put_desc(kRing, 4096, kCopyIrq, kSrc, kDst + 0x100000, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst + 0x100000, 4096));
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
}

TEST(Hostile, AChannelRestartedByItsOwnCopyGoesOn)
{
    Rig r;
    r.setup(0, kCompletion);
    // The copy's destination resets channel 0 and starts it again on a second chain: the
    // step that did it ends, and the restarted channel must still get its steps.
    bool done = false;
    r.mem.add_window({kWindow, 64, [&](uint64_t, const uint8_t*, size_t) {
                          if (done)
                              return;
                          done = true;
                          r.wr(0, CHANCMD, CHANCMD_RESET, 1);
                          r.set_chainaddr(0, kRing + 0x1000);
                          r.issue(0, 1);
                      }});
    r.put_desc(kRing, 8, kCopyIrq, kSrc, kWindow, kRing + 64);
    r.put_desc(kRing + 0x1000, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 0x1040);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_TRUE(done);
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.completed_addr(0), kRing + 0x1000);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), (kRing + 0x1000) | 1u);
}

TEST(Hostile, ARingThatFeedsItselfNeverHoldsTheHost)
{
    Config c = rig_config();
    c.step_descriptors = 8;
    c.step_gap_ns = 1000;
    Rig r(c);
    // Every write into the window bumps DMACOUNT past what the channel has done: the ring
    // never runs dry.
    uint16_t count = 2;
    r.mem.add_window({kWindow, 64, [&](uint64_t, const uint8_t*, size_t) {
                          count = static_cast<uint16_t>(count + 1);
                          r.issue(0, count);
                      }});
    r.setup(0, kCompletion);
    r.put_desc(kRing, 8, 0, kSrc, kWindow, kRing); // a descriptor that points at itself
    r.set_chainaddr(0, kRing);
    r.issue(0, count);
    uint64_t last_now = 0;
    for (int i = 0; i < 200; i++) {
        ASSERT_TRUE(r.pending());
        uint64_t before = r.dev.stats(0).descriptors;
        r.step();
        uint64_t now = r.timers.now;
        EXPECT_LE(r.dev.stats(0).descriptors - before, c.step_descriptors);
        ASSERT_TRUE(r.pending());
        EXPECT_GT(r.timers.next()->second, now) << "the next step is strictly later";
        EXPECT_GE(now, last_now);
        last_now = now;
    }
    EXPECT_EQ(r.dev.stats(0).descriptors, 200u * c.step_descriptors);
    EXPECT_EQ(r.timers.now, 199u * c.step_gap_ns);
}

TEST(Hostile, AChainThatNeverCatchesUpIsBounded)
{
    Config c = rig_config();
    c.step_descriptors = 1000;
    Rig r(c);
    r.setup(0, kCompletion);
    r.put_desc(kRing, 1, ctl::NULL_DESC, 0, 0, kRing);
    r.set_chainaddr(0, kRing);
    r.issue(0, 0xffff); // 65535 descriptors from one write
    unsigned steps = r.run_until_idle();
    EXPECT_EQ(steps, 66u);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0xffffu);
    EXPECT_EQ(r.timers.now, 65u * c.step_gap_ns);
}

TEST(Hostile, ALongDescriptorMovesInBoundedPieces)
{
    Config c = rig_config();
    c.xfercap_log = 31;
    c.step_bytes = 1u << 20;
    Rig r(c, 24u << 20);
    r.setup(0, kCompletion);
    r.fill(kSrc, 8u << 20, 9);
    r.put_desc(kRing, 8u << 20, kCopyIrq, kSrc, kDst + (8u << 20), kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    unsigned steps = 0;
    while (r.pending()) {
        r.step();
        steps++;
        if (r.completed_addr(0) == 0) {
            // Never more than a step's worth moved per step.
            size_t moved = 0;
            while (moved < (8u << 20) &&
                   r.mem.ram[kDst + (8u << 20) + moved] == r.mem.ram[kSrc + moved])
                moved++;
            EXPECT_LE(moved, steps * c.step_bytes);
        }
    }
    EXPECT_EQ(steps, 8u);
    EXPECT_TRUE(r.same(kSrc, kDst + (8u << 20), 8u << 20));
}

TEST(Hostile, WrappingRangesAreRefusedBeforeAnyByteMoves)
{
    struct Case {
        uint64_t src, dst;
        uint32_t chanerr;
    };
    const uint64_t top = ~0ull - 0xfff; // the last page of the address space
    for (Case k : {Case{top, kDst, CHANERR_SRC_ADDR_ERR}, Case{kSrc, top, CHANERR_DEST_ADDR_ERR}}) {
        Rig r(rig_config(), 16u << 20);
        r.setup(0, kCompletion);
        r.fill(0, 0x4000, 5); // what a wrap would overwrite: the bottom of memory
        r.put_desc(kRing, 0x2000, kCopyIrq, k.src, k.dst, kRing + 64);
        auto before = r.mem.ram;
        r.set_chainaddr(0, kRing);
        r.issue(0, 1);
        r.run_until_idle();
        EXPECT_EQ(r.chanerr(0), k.chanerr);
        EXPECT_EQ(r.state(0), ChanState::Halted);
        EXPECT_EQ(r.mem.maps, 0u) << "nothing was even mapped";
        before[kCompletion] = r.mem.ram[kCompletion]; // the error completion, allowed
        for (size_t i = 0; i < 8; i++)
            before[kCompletion + i] = r.mem.ram[kCompletion + i];
        EXPECT_TRUE(before == r.mem.ram) << "memory changed";
    }
}

// Ranges that end exactly at 2^64 do not wrap, and the model runs them in steps of a page:
// every step stays below 2^64, and nothing reaches address 0, where base plus progress
// would wrap to.
TEST(Hostile, RangesThatEndAt2To64InStepsStayBelowIt)
{
    constexpr uint32_t kLen = 0x3000;
    constexpr uint64_t kTop = uint64_t{0} - kLen;
    enum Kind { CopyDown, CopyUp, Xor, XorSource, Fill };
    for (Kind k : {CopyDown, CopyUp, Xor, XorSource, Fill}) {
        SCOPED_TRACE(k);
        Config c = raid_config();
        c.step_bytes = 4096;
        Rig r(c);
        r.setup(0, kCompletion);
        r.fill(0, kLen, 5); // where a wrap would land: must stay, but for the completion
        r.fill(kSrc, kLen, 9);
        r.fill(kSrc + kLen, kLen, 3);
        uint64_t written = 0;
        r.mem.add_window(
            {kTop, kLen, [&written](uint64_t, const uint8_t*, size_t n) { written += n; }});
        auto low = r.bytes(0, kLen);
        uint16_t count = 1;
        if (k == CopyDown || k == CopyUp) {
            r.put_desc(kRing, kLen, ctl::COMPL_WRITE, k == CopyDown ? kSrc : kTop,
                       k == CopyDown ? kTop : kDst, kRing + 64);
        } else if (k == Fill) {
            r.put_desc(kRing, kLen, uint32_t{OP_FILL} << ctl::OP_SHIFT | ctl::COMPL_WRITE, 0x55,
                       kTop, kRing + 64);
        } else {
            uint64_t null_at = r.put_xor(kRing, OP_XOR, kLen, k == Xor ? kTop : kDst,
                                         {kSrc, k == Xor ? kSrc + kLen : kTop});
            r.put_null(null_at, ctl::COMPL_WRITE);
            count = static_cast<uint16_t>((null_at - kRing) / 64 + 1);
        }
        r.set_chainaddr(0, kRing);
        r.issue(0, count);
        r.run_until_idle();
        EXPECT_EQ(r.chanerr(0), 0u);
        EXPECT_EQ(r.state(0), ChanState::Done);
        EXPECT_EQ(written, k == CopyUp || k == XorSource ? 0u : kLen);
        if (k == CopyUp) {
            EXPECT_EQ(r.bytes(kDst, kLen), std::vector<uint8_t>(kLen, 0));
        }
        if (k == XorSource) {
            EXPECT_EQ(r.bytes(kDst, kLen), r.bytes(kSrc, kLen)) << "a source of zeros";
        }
        std::copy_n(r.mem.ram.begin() + kCompletion, 8, low.begin() + kCompletion);
        EXPECT_EQ(r.bytes(0, kLen), low) << "nothing lands at address 0";
    }
}

TEST(Hostile, WrappingCompletionAddressIsAnError)
{
    Rig r;
    r.setup(0, ~0ull - 3);
    r.put_desc(kRing, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.chanerr(0), CHANERR_COMPLETION_ADDR_ERR);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.mem.writes, 0u);
}

TEST(Hostile, InterruptThatResetsTheDevice)
{
    // An MSI-X message aimed at the device itself can, through the config space path, reset
    // it while the channel is signalling. Nothing after the reset may touch memory.
    struct ResettingIrq : dmalab::testing::FakeInterrupts {
        Ioat* dev = nullptr;
        bool notify(unsigned v) override
        {
            dev->reset();
            return FakeInterrupts::notify(v);
        }
    };
    ResettingIrq irq;
    FakeMemory mem(16u << 20);
    FakeTimers timers;
    FakeLog log;
    Ioat dev(rig_config(), Host{mem, timers, irq, log, nullptr});
    irq.dev = &dev;
    Rig helper; // only for its descriptor helpers' layout constants
    (void)helper;
    dev.mmio_write(INTRCTRL, INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL, 1);
    const uint32_t ch0 = kChannelStride;
    dev.mmio_write(ch0 + CHANCTRL, CHANCTRL_INT_REARM | CHANCTRL_ERR_COMPLETION_EN, 2);
    dev.mmio_write(ch0 + CHANCMP, kCompletion, 8);
    DmaDescriptor d{};
    d.size = 1;
    d.ctl = ctl::NULL_DESC | ctl::INT_EN;
    d.next = kRing + 64;
    mem.put(kRing, d);
    mem.put(kRing + 64, d); // a second one that must never run
    dev.mmio_write(ch0 + CHAINADDR, kRing, 8);
    dev.mmio_write(ch0 + DMACOUNT, 2, 2);
    while (auto n = timers.next()) {
        timers.pending.erase(n->first);
        dev.timer(n->first);
    }
    EXPECT_EQ(irq.raised.size(), 1u);
    EXPECT_EQ(dev.channel_state(0), ChanState::Halted);
    EXPECT_EQ(dev.stats(0).descriptors, 0u) << "reset: counters are as new";
}

} // namespace
} // namespace dmalab::ioat::testing
