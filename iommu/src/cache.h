// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's translation caches: a set-associative store with a replacement policy, used for
// the context cache (keyed by source id) and the IOTLB (keyed by domain and page). Lookups
// and fills allocate nothing; the storage is sized once.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dmalab/prng.h"
#include "dmalab/timers.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd
{

template <class Entry> class SetAssoc
{
  public:
    SetAssoc(unsigned entries, unsigned ways, Replacement policy, Prng& prng)
        : ways_(ways), sets_(entries / ways), policy_(policy), prng_(prng), tags_(entries, 0),
          stamps_(entries, 0), entries_(entries)
    {
    }

    unsigned sets() const { return sets_; }
    // The set for a key: a multiplicative hash mapped onto [0, sets) without a division.
    unsigned set_of(uint64_t key) const
    {
        uint64_t h = key * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
        return static_cast<unsigned>((static_cast<u128>(h) * sets_) >> 64);
    }

    // The entry tagged `tag` (never 0) in set `set`, or nullptr. Counts as a use. The tags
    // of a set are contiguous, so a lookup touches one or two cache lines.
    Entry* find(unsigned set, uint64_t tag)
    {
        size_t base = size_t{set} * ways_;
        const uint64_t* t = &tags_[base];
        for (unsigned w = 0; w < ways_; w++)
            if (t[w] == tag) {
                if (policy_ == Replacement::Lru)
                    stamps_[base + w] = ++clock_;
                return &entries_[base + w];
            }
        return nullptr;
    }

    // Places `e` under `tag` in set `set`: where it went, and whether a valid entry was
    // evicted for it.
    std::pair<Entry*, bool> insert(unsigned set, uint64_t tag, const Entry& e)
    {
        size_t base = size_t{set} * ways_;
        unsigned victim = 0;
        bool evict = true;
        for (unsigned w = 0; w < ways_; w++)
            if (tags_[base + w] == 0) {
                victim = w;
                evict = false;
                break;
            }
        if (evict) {
            if (policy_ == Replacement::Random) {
                victim = static_cast<unsigned>(prng_.upto(ways_ - 1));
            } else {
                for (unsigned w = 1; w < ways_; w++)
                    if (stamps_[base + w] < stamps_[base + victim])
                        victim = w;
            }
        }
        tags_[base + victim] = tag;
        stamps_[base + victim] = ++clock_;
        entries_[base + victim] = e;
        return {&entries_[base + victim], evict};
    }

    // A use of an entry found earlier (and not dropped or replaced since).
    void touch(Entry* e)
    {
        if (policy_ == Replacement::Lru)
            stamps_[static_cast<size_t>(e - entries_.data())] = ++clock_;
    }

    // Drops every entry `pred` accepts; returns how many.
    template <class Pred> uint64_t drop_if(Pred&& pred)
    {
        uint64_t n = 0;
        for (size_t i = 0; i < tags_.size(); i++)
            if (tags_[i] && pred(entries_[i])) {
                tags_[i] = 0;
                n++;
            }
        return n;
    }

    uint64_t valid() const
    {
        uint64_t n = 0;
        for (uint64_t t : tags_)
            n += t != 0;
        return n;
    }

  private:
    unsigned ways_;
    unsigned sets_;
    Replacement policy_;
    Prng& prng_;
    uint64_t clock_ = 0;
    std::vector<uint64_t> tags_;   // 0: empty
    std::vector<uint64_t> stamps_; // last use (LRU) or fill (FIFO)
    std::vector<Entry> entries_;
};

} // namespace dmalab::vtd
