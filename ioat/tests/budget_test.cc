// SPDX-License-Identifier: GPL-2.0-or-later
// Bounded work: a register access never moves data, and each scheduled step stops at its
// budget, whatever the guest queued.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

TEST(Budget, TensOfThousandsOfMaximalDescriptorsFromOneDmacountWrite)
{
    Config c = rig_config();
    c.xfercap_log = 16; // 64 KiB descriptors keep the test quick; the bound is the same
    c.step_bytes = 256u << 10;
    const uint64_t max = 1ull << c.xfercap_log;
    constexpr unsigned kCount = 40000;
    constexpr uint64_t kRing = 0x100000;
    constexpr uint64_t kSrc = 0x1000000, kDst = 0x1100000;
    Rig r(c, 32u << 20);
    r.setup(0, 0x1000);
    // A chain of maximal copies, all between the same two buffers.
    for (unsigned i = 0; i < kCount; i++)
        r.put_desc(kRing + 64ull * i, static_cast<uint32_t>(max), i + 1 == kCount ? kCopyIrq : 0,
                   kSrc, kDst, kRing + 64ull * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, kCount);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u) << "the MMIO write must not run descriptors";

    unsigned steps = 0;
    uint64_t prev = 0, most = 0;
    while (r.pending()) {
        r.step();
        uint64_t now = r.dev.stats(0).bytes;
        most = std::max(most, now - prev);
        prev = now;
        ASSERT_LT(++steps, 1000000u);
    }
    // Each step stopped once its budget was spent: at most one descriptor past it.
    EXPECT_LE(most, c.step_bytes + max - 1);
    EXPECT_EQ(steps, kCount * max / c.step_bytes);
    EXPECT_EQ(r.dev.stats(0).descriptors, kCount);
    EXPECT_EQ(r.state(0), ChanState::Done);
}

TEST(Budget, NullDescriptorsAreBoundedByCount)
{
    Config c = rig_config();
    c.step_descriptors = 100;
    Rig r(c);
    r.setup(0, 0x1000);
    // A chain that points at itself: the guest can keep a channel busy, never the host.
    r.put_desc(0x10000, 1, ctl::NULL_DESC, 0, 0, 0x10000);
    r.set_chainaddr(0, 0x10000);
    r.issue(0, 0xffff);
    r.step();
    EXPECT_EQ(r.dev.stats(0).descriptors, 100u);
    EXPECT_TRUE(r.pending());
    EXPECT_EQ(r.run_until_idle(), 655u);
    EXPECT_EQ(r.dev.stats(0).descriptors, 0xffffu);
}

TEST(Budget, BusyChannelDoesNotStarveOthers)
{
    Config c = rig_config();
    c.step_bytes = 1u << 20;
    Rig r(c, 32u << 20);
    r.setup(0, 0x1000);
    r.setup(1, 0x1040);
    for (unsigned i = 0; i < 200; i++)
        r.put_desc(0x100000 + 64 * i, 1u << 20, 0, 0x1000000, 0x1100000, 0x100000 + 64 * (i + 1));
    r.put_desc(0x200000, 64, kCopyIrq, 0x1000000, 0x1200000, 0x200040);
    r.set_chainaddr(0, 0x100000);
    r.set_chainaddr(1, 0x200000);
    r.issue(0, 200);
    r.issue(1, 1);
    for (int step = 0; step < 2 && r.dev.stats(1).descriptors == 0; step++) {
        r.step();
    }
    EXPECT_EQ(r.dev.stats(1).descriptors, 1u);
    EXPECT_LT(r.dev.stats(0).descriptors, 200u);
}

} // namespace
} // namespace dmalab::ioat::testing
