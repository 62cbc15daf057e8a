// SPDX-License-Identifier: GPL-2.0-or-later
// Little-endian loads and stores of guest memory structures (descriptors, table entries,
// status words): the guest's layout, whatever the host's byte order.
#pragma once

#include <cstdint>

namespace dmalab
{

// The n-byte (n <= 8) little-endian value at p.
inline uint64_t load_le(const uint8_t* p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

// Stores the low n bytes of v at p, least significant first.
inline void store_le(uint8_t* p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}

} // namespace dmalab
