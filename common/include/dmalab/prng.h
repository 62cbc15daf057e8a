// SPDX-License-Identifier: GPL-2.0-or-later
// A small seeded generator (SplitMix64) for decisions that must replay exactly: the same seed
// gives the same sequence on every host. Its state is one word, so it migrates trivially.
#pragma once

#include <cstdint>

namespace dmalab
{

class Prng
{
  public:
    explicit Prng(uint64_t seed = 0) : state_(seed) {}

    uint64_t next()
    {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound] (bound inclusive; 0 gives 0 without drawing).
    uint64_t upto(uint64_t bound)
    {
        if (bound == 0)
            return 0;
        if (bound == UINT64_MAX)
            return next();
        return next() % (bound + 1);
    }

    uint64_t state() const { return state_; }
    void set_state(uint64_t s) { state_ = s; }

  private:
    uint64_t state_;
};

} // namespace dmalab
