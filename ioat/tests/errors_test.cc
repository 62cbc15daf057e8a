// SPDX-License-Identifier: GPL-2.0-or-later
// Guest mistakes and inaccessible memory: architected CHANERR bits, a halted channel, and
// nothing touched beyond what the architecture says.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

constexpr uint64_t kHole = 0x800000;

// Three copies; the second one uses `src`/`dst`. Returns the memory image before the run.
std::vector<uint8_t> three_copies(Rig& r, uint64_t src, uint64_t dst, uint32_t size = 4096)
{
    r.setup(0, kCompletion);
    r.fill(kSrc, 3 * 4096, 5);
    r.put_desc(kRing, 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.put_desc(kRing + 64, size, ctl::COMPL_WRITE, src, dst, kRing + 128);
    r.put_desc(kRing + 128, 4096, kCopyIrq, kSrc + 8192, kDst + 8192, kRing + 192);
    r.set_chainaddr(0, kRing);
    r.issue(0, 3);
    return r.mem.ram;
}

// The first copy completed, the channel halted on the second, the third never ran, and memory
// differs from `before` only in the first copy's destination and the completion area.
void expect_halted_after_first(Rig& r, const std::vector<uint8_t>& before, uint32_t chanerr)
{
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), chanerr);
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | static_cast<uint64_t>(ChanState::Halted));
    EXPECT_TRUE(r.same(kSrc, kDst, 4096));
    for (size_t i = 0; i < before.size(); i++) {
        bool first_dst = i >= kDst && i < kDst + 4096;
        bool completion = i >= kCompletion && i < kCompletion + 8;
        if (!first_dst && !completion && r.mem.ram[i] != before[i]) {
            ADD_FAILURE() << "byte at 0x" << std::hex << i << " changed";
            break;
        }
    }
    EXPECT_EQ(r.dev.stats(0).descriptors, 1u);
    EXPECT_EQ(r.dev.stats(0).errors, 1u);
    // ERR_INT_EN was set by setup(): one error interrupt on the channel's vector.
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
    EXPECT_EQ(r.mem.outstanding, 0);
}

TEST(Errors, UnreadableSource)
{
    Rig r;
    r.mem.add_hole(kHole, 0x10000);
    auto before = three_copies(r, kHole, kDst + 4096);
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_READ_DATA_ERR);
}

TEST(Errors, SourceBeyondGuestMemory)
{
    Rig r;
    auto before = three_copies(r, 0xfff0000000000000ull, kDst + 4096);
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_READ_DATA_ERR);
}

TEST(Errors, UnwritableDestination)
{
    Rig r;
    r.mem.add_hole(kHole, 0x10000);
    auto before = three_copies(r, kSrc + 4096, kHole);
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_WRITE_DATA_ERR);
}

TEST(Errors, UnreadableSourceWithoutDirectMapping)
{
    Rig r;
    r.mem.mappable = false; // every byte goes through the bounce path
    r.mem.add_hole(kHole, 0x10000);
    auto before = three_copies(r, kHole, kDst + 4096);
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_READ_DATA_ERR);
}

TEST(Errors, ZeroAndOversizedLength)
{
    for (uint32_t size : {0u, (1u << 20) + 1}) {
        Rig r;
        auto before = three_copies(r, kSrc + 4096, kDst + 4096, size);
        r.run_until_idle();
        expect_halted_after_first(r, before, CHANERR_LENGTH_ERR);
    }
}

TEST(Errors, UnknownOpcode)
{
    Rig r;
    auto before = three_copies(r, kSrc + 4096, kDst + 4096);
    uint32_t ctl = r.mem.get<uint32_t>(kRing + 64 + 4) | (uint32_t{OP_XOR} << ctl::OP_SHIFT);
    r.mem.put(kRing + 64 + 4, ctl);
    before = r.mem.ram;
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_CONTROL_ERR);
}

TEST(Errors, UnreadableNextDescriptor)
{
    Rig r;
    r.mem.add_hole(kHole, 0x10000);
    auto before = three_copies(r, kSrc + 4096, kDst + 4096);
    r.put_desc(kRing, 4096, ctl::COMPL_WRITE, kSrc, kDst, kHole); // first.next -> hole
    before = r.mem.ram;
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_NEXT_ADDR_ERR);
    EXPECT_EQ(r.rd(0, CDAR, 8), kHole);
}

TEST(Errors, MisalignedNextDescriptor)
{
    Rig r;
    auto before = three_copies(r, kSrc + 4096, kDst + 4096);
    r.put_desc(kRing, 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing + 72);
    before = r.mem.ram;
    r.run_until_idle();
    expect_halted_after_first(r, before, CHANERR_NEXT_DESC_ALIGN_ERR);
}

TEST(Errors, UnwritableCompletionArea)
{
    Rig r;
    r.mem.add_hole(kHole, 0x1000);
    r.setup(0, kHole);
    r.put_desc(kRing, 16, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_COMPLETION_ADDR_ERR);
}

TEST(Errors, HaltedChannelWaitsForErrorsToBeCleared)
{
    Rig r;
    r.mem.add_hole(kHole, 0x10000);
    three_copies(r, kHole, kDst + 4096);
    r.run_until_idle();
    ASSERT_EQ(r.state(0), ChanState::Halted);
    // Restarting without clearing CHANERR does nothing.
    r.put_desc(kRing + 64, 4096, kCopyIrq, kSrc + 4096, kDst + 4096, kRing + 128);
    r.set_chainaddr(0, kRing + 64);
    r.issue(0, 2);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_FALSE(r.pending());
    // ioat_eh(): write CHANERR back, then restart at the failed descriptor from count 0.
    r.wr(0, CHANERR, r.chanerr(0), 4);
    r.issue(0, 2);
    EXPECT_EQ(r.state(0), ChanState::Active);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_TRUE(r.same(kSrc, kDst, 3 * 4096));
}

TEST(Errors, MaskedErrorDoesNotHalt)
{
    Rig r;
    r.mem.add_hole(kHole, 0x10000);
    r.wr(0, CHANERR_MSK, CHANERR_READ_DATA_ERR, 4);
    three_copies(r, kHole, kDst + 4096);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.chanerr(0), 0u);
    EXPECT_EQ(r.dev.stats(0).descriptors, 3u);
}

TEST(Errors, Cb1CommandsAreChancmdErrors)
{
    Rig r;
    r.setup(0, kCompletion);
    r.wr(0, CHANCMD, CHANCMD_START, 1);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_CHANCMD_ERR);
}

TEST(Errors, PartiallyReadableSourceStopsAtTheHole)
{
    Rig r;
    r.mem.map_limit = 4096; // page-sized mappings, as behind an IOMMU
    r.mem.add_hole(kSrc + 8192, 4096);
    r.setup(0, kCompletion);
    r.fill(kSrc, 8192, 1);
    r.put_desc(kRing, 16384, kCopyIrq, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.chanerr(0), CHANERR_READ_DATA_ERR);
    EXPECT_TRUE(r.same(kSrc, kDst, 8192));
    EXPECT_EQ(r.mem.get<uint64_t>(kDst + 8192), 0u);
    EXPECT_EQ(r.dev.stats(0).bytes, 0u); // a failed descriptor counts no bytes
}

} // namespace
} // namespace dmalab::ioat::testing
