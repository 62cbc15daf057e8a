// SPDX-License-Identifier: GPL-2.0-or-later
// How a copy reaches memory: one mapping per page and direction when guest pages are
// scattered (as behind an IOMMU), linear in the length, and a page that cannot be mapped
// goes through the bounce buffer on its own.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

TEST(Copy, OneMappingPerPageAndDirectionWhenPagesAreScattered)
{
    for (uint32_t pages : {16u, 64u, 256u}) {
        Rig r(rig_config(), 16u << 20);
        r.mem.map_limit = 4096; // every page is its own run, as with a scattered IOVA range
        r.setup(0, kCompletion);
        r.fill(kSrc, pages * 4096, 6);
        r.put_desc(kRing, pages * 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
        r.set_chainaddr(0, kRing);
        r.issue(0, 1);
        r.run_until_idle();
        EXPECT_TRUE(r.same(kSrc, kDst, pages * 4096));
        EXPECT_EQ(r.mem.maps, 2 * pages) << "linear: one map per page and direction";
        EXPECT_EQ(r.mem.reads, 1u) << "only the descriptor fetch reads through the bounce path";
    }
}

// A range that ends exactly at 2^64 does not wrap: the model tries it and the memory
// refuses it (here: nothing there), a write data error. Found by the fuzzer, in the fake
// memory, whose end-of-range arithmetic overflowed.
TEST(Copy, ARangeEndingAtTheTopOfTheAddressSpace)
{
    Rig r;
    r.setup(0, kCompletion);
    r.fill(kSrc, 3, 7);
    r.put_desc(kRing, 3, ctl::COMPL_WRITE, kSrc, ~uint64_t{0} - 2, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.chanerr(0), CHANERR_WRITE_DATA_ERR);
}

TEST(Copy, AnUnmappablePageIsBouncedAlone)
{
    Rig r;
    r.mem.map_limit = 4096;
    r.setup(0, kCompletion);
    r.fill(kSrc, 64 * 4096, 8);
    // Page 10 of the destination is device memory: mapped access refused, writes accepted.
    std::vector<uint8_t> seen;
    r.mem.add_window({kDst + 10 * 4096, 4096, [&](uint64_t, const uint8_t* p, size_t n) {
                          seen.insert(seen.end(), p, p + n);
                      }});
    r.put_desc(kRing, 64 * 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.chanerr(0), 0u);
    EXPECT_EQ(seen.size(), 4096u) << "exactly that page went through the bounce buffer";
    EXPECT_TRUE(std::equal(seen.begin(), seen.end(), r.mem.ram.begin() + kSrc + 10 * 4096));
    EXPECT_TRUE(r.same(kSrc, kDst, 10 * 4096));
    EXPECT_TRUE(r.same(kSrc + 11 * 4096, kDst + 11 * 4096, 53 * 4096));
    EXPECT_EQ(r.mem.writes, 2u) << "the bounced page and the completion";
    EXPECT_GE(r.mem.maps, 2u * 63) << "the other pages were mapped";
}

TEST(Copy, ContiguousMemoryIsOneMappingPerPiece)
{
    Rig r(rig_config(), 16u << 20);
    r.setup(0, kCompletion);
    r.fill(kSrc, 1u << 20, 6);
    r.put_desc(kRing, 1u << 20, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.set_chainaddr(0, kRing);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_TRUE(r.same(kSrc, kDst, 1u << 20));
    EXPECT_EQ(r.mem.maps, 2u);
}

} // namespace
} // namespace dmalab::ioat::testing
