// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's translation caches: a set-associative store with a replacement policy, used for
// the context cache (keyed by source id) and the IOTLB (keyed by domain and page). Lookups
// and fills allocate nothing; the storage is sized once.
#pragma once

#include <cstdint>
#include <vector>

#include "dmalab/prng.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd
{

template <class Entry> class SetAssoc
{
  public:
    SetAssoc(unsigned entries, unsigned ways, Replacement policy, Prng& prng)
        : ways_(ways), sets_(entries / ways), policy_(policy), prng_(prng), slots_(entries)
    {
    }

    unsigned sets() const { return sets_; }

    // The valid entry in set `set` that `match` accepts, or nullptr. Counts as a use.
    template <class Match> Entry* find(unsigned set, Match&& match)
    {
        Slot* s = &slots_[size_t{set} * ways_];
        for (unsigned w = 0; w < ways_; w++)
            if (s[w].valid && match(s[w].entry)) {
                if (policy_ == Replacement::Lru)
                    s[w].stamp = ++clock_;
                return &s[w].entry;
            }
        return nullptr;
    }

    // Places `e` in set `set`; true when a valid entry was evicted for it.
    bool insert(unsigned set, const Entry& e)
    {
        Slot* s = &slots_[size_t{set} * ways_];
        unsigned victim = 0;
        bool evict = true;
        for (unsigned w = 0; w < ways_; w++)
            if (!s[w].valid) {
                victim = w;
                evict = false;
                break;
            }
        if (evict) {
            if (policy_ == Replacement::Random) {
                victim = static_cast<unsigned>(prng_.upto(ways_ - 1));
            } else {
                for (unsigned w = 1; w < ways_; w++)
                    if (s[w].stamp < s[victim].stamp)
                        victim = w;
            }
        }
        s[victim] = {e, ++clock_, true};
        return evict;
    }

    // Drops every entry `pred` accepts; returns how many.
    template <class Pred> uint64_t drop_if(Pred&& pred)
    {
        uint64_t n = 0;
        for (Slot& s : slots_)
            if (s.valid && pred(s.entry)) {
                s.valid = false;
                n++;
            }
        return n;
    }

    uint64_t valid() const
    {
        uint64_t n = 0;
        for (const Slot& s : slots_)
            n += s.valid;
        return n;
    }

  private:
    struct Slot {
        Entry entry{};
        uint64_t stamp = 0; // last use (LRU) or fill (FIFO)
        bool valid = false;
    };
    unsigned ways_;
    unsigned sets_;
    Replacement policy_;
    Prng& prng_;
    uint64_t clock_ = 0;
    std::vector<Slot> slots_;
};

} // namespace dmalab::vtd
