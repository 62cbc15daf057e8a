// SPDX-License-Identifier: GPL-2.0-or-later
// Arithmetic in GF(2^8) with the RAID-6 polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d), the
// field in which a PQ descriptor's Q is the sum of coef[i] * source[i] (Linux's async_tx
// passes powers of the generator 2 as coefficients, and arbitrary ones when it recovers data).
// The product table is computed at compile time: 64 KiB of read-only data, one 256-byte row
// per coefficient.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace dmalab::ioat::gf256
{

inline constexpr unsigned kPoly = 0x11d;

constexpr uint8_t mul_slow(uint8_t a, uint8_t b)
{
    unsigned r = 0;
    unsigned x = a;
    for (unsigned y = b; y; y >>= 1) {
        if (y & 1)
            r ^= x;
        x <<= 1;
        if (x & 0x100)
            x ^= kPoly;
    }
    return static_cast<uint8_t>(r);
}

using Table = std::array<std::array<uint8_t, 256>, 256>;

consteval Table make_table()
{
    Table t{};
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++)
            t[a][b] = mul_slow(static_cast<uint8_t>(a), static_cast<uint8_t>(b));
    return t;
}

inline constexpr Table kMul = make_table();

// q[i] ^= coef * d[i] for i < n.
inline void mul_add(uint8_t* q, const uint8_t* d, size_t n, uint8_t coef)
{
    if (coef == 0)
        return;
    if (coef == 1) {
        for (size_t i = 0; i < n; i++)
            q[i] ^= d[i];
        return;
    }
    const uint8_t* row = kMul[coef].data();
    for (size_t i = 0; i < n; i++)
        q[i] ^= row[d[i]];
}

} // namespace dmalab::ioat::gf256
