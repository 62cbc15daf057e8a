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
#include <utility>

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

using Row = std::array<uint8_t, 256>;

constexpr Row make_row(uint8_t a)
{
    Row r{};
    for (unsigned b = 0; b < 256; b++)
        r[b] = mul_slow(a, static_cast<uint8_t>(b));
    return r;
}

// One constant per row, each evaluated on its own: the whole table in one constant
// expression exceeds clang's limit on evaluation steps (-fconstexpr-steps, 2^20 by
// default), which the fuzz build, compiled with clang, hit.
template <unsigned A> inline constexpr Row kRow = make_row(static_cast<uint8_t>(A));

template <size_t... A> constexpr std::array<const uint8_t*, 256> rows(std::index_sequence<A...>)
{
    return {kRow<A>.data()...};
}

inline constexpr std::array<const uint8_t*, 256> kMul = rows(std::make_index_sequence<256>{});

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
    const uint8_t* row = kMul[coef];
    for (size_t i = 0; i < n; i++)
        q[i] ^= row[d[i]];
}

} // namespace dmalab::ioat::gf256
