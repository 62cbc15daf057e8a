// SPDX-License-Identifier: GPL-2.0-or-later
// The replay of pcie-bench's random reads (pciebench_replay.h), whatever the calibration:
// after the warm-up, a window the IOTLB can hold whole never misses and one twice that size
// does, and what the misses cost is what the unit charged.

#include <gtest/gtest.h>

#include "pciebench_replay.h"

using namespace dmalab::vtd;

TEST(PcieBenchReplay, AWindowWithinTheIotlbsReachMissesOnlyInTheWarmUp)
{
    // Fully associative IOTLBs, so that the reach is entries x 4 KiB whatever the hash.
    for (unsigned entries : {8u, 32u, 64u}) {
        for (uint64_t walk_read_ns : {1u, 227u}) {
            for (bool contiguous : {false, true}) {
                Config c;
                c.iotlb_entries = c.iotlb_ways = entries;
                c.walk_read_ns = walk_read_ns;
                replay::Options o;
                o.reads = 20000;
                o.addresses = 8192;
                o.window = entries * replay::kPage * 2;
                replay::Layout layout = contiguous
                                            ? replay::contiguous_layout(uint64_t{1} << 32, o.window)
                                            : replay::pciebench_layout();
                SCOPED_TRACE(::testing::Message() << entries << " entries, walk-read-ns "
                                                  << walk_read_ns << ", contiguous " << contiguous);

                replay::Result twice = replay::run(c, layout, o);
                o.window /= 2;
                replay::Result within = replay::run(c, layout, o);

                EXPECT_EQ(within.translations, o.reads);
                EXPECT_EQ(within.iotlb_misses, 0u);
                EXPECT_EQ(within.walk_cost_ns, 0u);
                EXPECT_EQ(within.cost_count[0], o.reads);

                EXPECT_EQ(twice.translations, o.reads);
                EXPECT_GT(twice.iotlb_misses, o.reads / 4); // about half of them
                EXPECT_LT(twice.iotlb_misses, o.reads * 3 / 4);
                EXPECT_GE(twice.walk_reads, twice.iotlb_misses);
                EXPECT_EQ(twice.walk_cost_ns, twice.walk_reads * walk_read_ns);
                EXPECT_EQ(twice.charged_ns, twice.walk_cost_ns);
            }
        }
    }
}
