// SPDX-License-Identifier: GPL-2.0-or-later
// What the operations' tests share (operations_test.cc, operations_delta_test.cc): where
// their buffers lie, and how they fill them.
#pragma once

#include <cstring>

#include "rig.h"

namespace dmalab::dsa::testing::ops
{

constexpr uint64_t kRec = 0x1000, kSrc = 0x10000, kSrc2 = 0x30000, kDst = 0x50000, kDst2 = 0x70000,
                   kDelta = 0x90000;
constexpr uint64_t kPattern = 0x0123456789abcdefull;

// Bytes no two of which repeat within 251, so a misplaced byte shows.
inline void scribble(Rig& r, uint64_t at, size_t n, unsigned seed = 1)
{
    for (size_t i = 0; i < n; i++)
        r.at(at)[i] = static_cast<uint8_t>((i * 7 + seed) % 251);
}

// Byte i of an 8-byte pattern laid down from a transfer's first byte: little-endian.
inline uint8_t pattern_byte(uint64_t pattern, size_t i)
{
    return static_cast<uint8_t>(pattern >> (8 * (i % 8)));
}

// A delta record entry: the quadword offset, little-endian, then the quadword.
inline void put_entry(Rig& r, uint64_t at, uint16_t offset, uint64_t value)
{
    std::memcpy(r.at(at), &offset, 2);
    std::memcpy(r.at(at + 2), &value, 8);
}

} // namespace dmalab::dsa::testing::ops
