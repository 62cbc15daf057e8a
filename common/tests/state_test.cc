// SPDX-License-Identifier: GPL-2.0-or-later
// Migration byte strings: round trips, and short or malformed input refused.

#include <gtest/gtest.h>

#include <cstring>

#include "dmalab/le.h"
#include "dmalab/prng.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"

namespace dmalab
{
namespace
{

TEST(State, RoundTrip)
{
    StateWriter w;
    w.u8(1);
    w.u16(0x2233);
    w.u32(0x44556677);
    w.u64(0x8899aabbccddeeffull);
    w.boolean(true);
    StateReader r(w.bytes);
    EXPECT_EQ(r.u8(), 1);
    EXPECT_EQ(r.u16(), 0x2233);
    EXPECT_EQ(r.u32(), 0x44556677u);
    EXPECT_EQ(r.u64(), 0x8899aabbccddeeffull);
    EXPECT_TRUE(r.boolean());
    EXPECT_TRUE(r.finished());
}

TEST(State, ShortInputFails)
{
    StateWriter w;
    w.u32(5);
    StateReader r(w.bytes);
    r.u64();
    EXPECT_FALSE(r.ok());
    EXPECT_FALSE(r.finished());
}

TEST(State, TrailingBytesAndBadBooleansFail)
{
    StateWriter w;
    w.u8(2);
    StateReader r(w.bytes);
    r.boolean();
    EXPECT_FALSE(r.ok());
    StateWriter w2;
    w2.u16(1);
    StateReader r2(w2.bytes);
    r2.u8();
    EXPECT_FALSE(r2.finished());
}

TEST(Time, SaturatingArithmetic)
{
    EXPECT_EQ(sat_add(1, 2), 3u);
    EXPECT_EQ(sat_add(kTimeLimit - 1, 5), kTimeLimit);
    EXPECT_EQ(sat_add(~0ull, ~0ull), kTimeLimit);
    EXPECT_EQ(transfer_ns(1000, 1000000000), 1000u);
    EXPECT_EQ(transfer_ns(1, 3), 333333334u) << "rounded up: never early";
    EXPECT_EQ(transfer_ns(~0ull, 1), kTimeLimit);
    EXPECT_EQ(transfer_ns(5, 0), 0u);
    EXPECT_EQ(bytes_in(1000, 1000000000), 1000u);
    EXPECT_EQ(bytes_in(~0ull, ~0ull), ~0ull);
    // bytes_in and transfer_ns agree: at transfer_ns(n) at least n bytes are allowed.
    for (uint64_t bw : {1ull, 3ull, 999999937ull, 1ull << 40})
        for (uint64_t n : {1ull, 4095ull, 1ull << 20})
            EXPECT_GE(bytes_in(transfer_ns(n, bw), bw), n) << bw << " " << n;
}

TEST(Prng, SeededAndMigratable)
{
    Prng a(7), b(7), c(8);
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
    Prng d(0);
    d.set_state(a.state());
    EXPECT_EQ(a.next(), d.next());
    for (int i = 0; i < 1000; i++)
        EXPECT_LE(a.upto(10), 10u);
    EXPECT_EQ(a.upto(0), 0u);
}

// Guest structures are little-endian bytes, whatever the host's order.
TEST(LittleEndian, LoadsAndStoresByteByByte)
{
    const uint8_t bytes[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
    EXPECT_EQ(load_le(bytes, 8), 0x8807060504030201ull);
    EXPECT_EQ(load_le(bytes, 4), 0x04030201ull);
    EXPECT_EQ(load_le(bytes, 1), 0x01ull);
    uint8_t out[8] = {};
    store_le(out, 0x8807060504030201ull, 8);
    EXPECT_EQ(0, std::memcmp(out, bytes, 8));
    uint8_t four[5] = {0, 0, 0, 0, 0xee};
    store_le(four, 0x11223344aabbccddull, 4);
    EXPECT_EQ(four[0], 0xdd);
    EXPECT_EQ(four[3], 0xaa);
    EXPECT_EQ(four[4], 0xee) << "only n bytes are written";
}

} // namespace
} // namespace dmalab
