// SPDX-License-Identifier: GPL-2.0-or-later
// Time and deferred work. A model names its timers by small integers (0 .. N-1, N fixed when
// it is built); each holds at most one pending expiry. Models never move data inside a
// register access without bounding it: longer work waits for a timer.
#pragma once

#include <algorithm>
#include <cstdint>

namespace dmalab
{

// The latest virtual time a model ever asks for. QEMU's clocks are signed 64-bit
// nanoseconds; staying at a quarter of that range leaves room for any host arithmetic.
inline constexpr uint64_t kTimeLimit = uint64_t{1} << 61;

__extension__ typedef unsigned __int128 u128; // GCC and Clang; exact time arithmetic

constexpr uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a >= kTimeLimit || b >= kTimeLimit - a ? kTimeLimit : a + b;
}

// Nanoseconds to move `bytes` at `bytes_per_s` (0: unlimited), saturated at kTimeLimit.
constexpr uint64_t transfer_ns(uint64_t bytes, uint64_t bytes_per_s)
{
    if (bytes_per_s == 0 || bytes == 0)
        return 0;
    u128 ns = static_cast<u128>(bytes) * 1000000000u;
    ns = (ns + bytes_per_s - 1) / bytes_per_s; // rounded up: never early
    return ns >= kTimeLimit ? kTimeLimit : static_cast<uint64_t>(ns);
}

// Bytes `bytes_per_s` moves in `ns` (saturating).
constexpr uint64_t bytes_in(uint64_t ns, uint64_t bytes_per_s)
{
    u128 b = static_cast<u128>(ns) * bytes_per_s / 1000000000u;
    return b > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(b);
}

class Timers
{
  public:
    virtual ~Timers() = default;
    // The virtual clock, in nanoseconds.
    virtual uint64_t now_ns() const = 0;
    // Calls the model's timer entry with `timer` at or after `when_ns` (<= kTimeLimit),
    // replacing any pending expiry of that timer.
    virtual void arm(unsigned timer, uint64_t when_ns) = 0;
    virtual void cancel(unsigned timer) = 0;
};

} // namespace dmalab
