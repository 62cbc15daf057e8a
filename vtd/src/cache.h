// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's translation caches: a set-associative store with a replacement policy, used for
// the context cache (keyed by source id) and the IOTLB (keyed by domain and page), each entry
// also on its domain's list. Lookups, fills and invalidations allocate nothing; the storage is
// sized once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "dmalab/prng.h"
#include "dmalab/timers.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd
{

// Storage sized once and indexed without the bounds checks that _GLIBCXX_ASSERTIONS (on in
// QEMU's build) adds to std::vector, which cost a sixth of a run of IOTLB misses. SetAssoc's
// indices are bounded by construction: a set's base plus a way below ways_, a link below
// the entry count, a 16-bit group.
template <class T> class Slots
{
  public:
    Slots(size_t n, const T& v) : n_(n), p_(std::make_unique<T[]>(n))
    {
        std::fill_n(p_.get(), n, v);
    }
    T& operator[](size_t i) { return p_.get()[i]; }
    const T& operator[](size_t i) const { return p_.get()[i]; }
    T* begin() { return p_.get(); }
    T* end() { return p_.get() + n_; }
    T* data() { return p_.get(); }
    size_t size() const { return n_; }

  private:
    size_t n_;
    std::unique_ptr<T[]> p_;
};

template <class Entry> class SetAssoc
{
  public:
    // Every entry belongs to one of `groups` groups (the IOTLB's and the context cache's
    // domain id): the entries of a group are kept on a list, so dropping a group's entries
    // costs what the group holds, not what the cache holds. A group at or beyond `groups`
    // holds nothing.
    SetAssoc(unsigned entries, unsigned ways, unsigned groups, Replacement policy, Prng& prng)
        : ways_(ways), sets_(entries / ways), policy_(policy), prng_(prng), tags_(entries, 0),
          stamps_(entries, 0), entries_(entries, Entry{}), links_(entries, Link{}),
          groups_(groups, Group{})
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
        size_t i = slot(set, tag);
        if (i == kNone)
            return nullptr;
        if (policy_ == Replacement::Lru)
            stamps_[i] = ++clock_;
        return &entries_[i];
    }

    // Places `e` under `tag` in set `set`, in `group` (below the group count) and of kind
    // `kind` (below kKinds):
    // where it went, and whether a valid entry was evicted for it.
    std::pair<Entry*, bool> insert(unsigned set, uint64_t tag, uint16_t group, const Entry& e,
                                   unsigned kind = 0)
    {
        Probe p = victim(set);
        return {fill(set, p, tag, group, e, kind), p.evict};
    }

    // find() and insert() in one pass over a set, for a caller that decides in between:
    // probe() changes nothing and says where `tag` is (`hit`) or, if it is not there,
    // which way insert() would fill (`way`, and whether that evicts); use() then counts
    // the hit as find() does, or fill() stores as insert() does.
    struct Probe {
        size_t hit = kNone;
        unsigned way = 0;
        bool evict = true;
        bool found() const { return hit != kNone; }
    };
    Probe probe(unsigned set, uint64_t tag) const
    {
        const size_t base = size_t{set} * ways_;
        const uint64_t* t = &tags_[base];
        uint64_t hits = 0; // without branches on the data: the ways that hold the tag
        for (unsigned w = 0; w < ways_ && w < 64; w++)
            hits |= uint64_t{t[w] == tag} << w;
        if (hits) {
            Probe p;
            p.hit = base + static_cast<unsigned>(__builtin_ctzll(hits));
            return p;
        }
        return victim(set);
    }
    const Entry& at(const Probe& p) const { return entries_[p.hit]; }
    Entry* use(const Probe& p)
    {
        if (policy_ == Replacement::Lru)
            stamps_[p.hit] = ++clock_;
        return &entries_[p.hit];
    }
    Entry* fill(unsigned set, const Probe& p, uint64_t tag, uint16_t group, const Entry& e,
                unsigned kind = 0)
    {
        size_t base = size_t{set} * ways_;
        unsigned victim = p.way;
        if (p.evict) {
            if (policy_ == Replacement::Random)
                victim = static_cast<unsigned>(prng_.upto(ways_ - 1));
            unlink(base + victim);
        } else {
            valid_++;
        }
        size_t i = base + victim;
        tags_[i] = tag;
        stamps_[i] = ++clock_;
        entries_[i] = e;
        link(i, group, kind);
        return &entries_[i];
    }

    // A use of an entry found earlier (and not dropped or replaced since).
    void touch(Entry* e)
    {
        if (policy_ == Replacement::Lru)
            stamps_[static_cast<size_t>(e - entries_.data())] = ++clock_;
    }

    // Drops the entry tagged `tag` in set `set`, if there is one: no use is counted.
    bool drop(unsigned set, uint64_t tag)
    {
        size_t i = slot(set, tag);
        if (i == kNone)
            return false;
        remove(i);
        return true;
    }

    // Drops every entry of `group` that `pred` accepts; returns how many.
    template <class Pred> uint64_t drop_group_if(uint16_t group, Pred&& pred)
    {
        uint64_t n = 0;
        if (group >= groups_.size())
            return 0;
        for (uint32_t i = groups_[group].first; i != kNone;) {
            uint32_t next = links_[i].next;
            if (pred(entries_[i])) {
                remove(i);
                n++;
            }
            i = next;
        }
        return n;
    }

    // How many valid entries of kind `kind` the cache holds (the IOTLB's kinds are page
    // sizes: a lookup for a size none is cached at can be skipped).
    uint64_t kind_size(unsigned kind) const { return kinds_[kind]; }

    // How many valid entries `group` has.
    uint32_t group_size(uint16_t group) const
    {
        return group < groups_.size() ? groups_[group].size : 0;
    }

    // Drops every entry; returns how many.
    uint64_t drop_all()
    {
        uint64_t n = valid_;
        std::fill(tags_.begin(), tags_.end(), 0);
        std::fill(groups_.begin(), groups_.end(), Group{});
        std::fill(std::begin(kinds_), std::end(kinds_), 0);
        valid_ = 0;
        return n;
    }

    // Drops every entry `pred` accepts (a scan of the whole cache); returns how many.
    template <class Pred> uint64_t drop_if(Pred&& pred)
    {
        uint64_t n = 0;
        for (size_t i = 0; i < tags_.size(); i++)
            if (tags_[i] && pred(entries_[i])) {
                remove(i);
                n++;
            }
        return n;
    }

    uint64_t valid() const { return valid_; }

    static constexpr unsigned kKinds = 4;

  private:
    static constexpr uint32_t kNone = ~uint32_t{0};
    // The way insert() fills in `set`: the first empty one, else (LRU, FIFO) the one with
    // the oldest stamp; Random picks when it fills. Ways are at most 64 (Unit's check).
    Probe victim(unsigned set) const
    {
        Probe p;
        const size_t base = size_t{set} * ways_;
        const uint64_t* t = &tags_[base];
        uint64_t empty = 0;
        for (unsigned w = 0; w < ways_ && w < 64; w++)
            empty |= uint64_t{t[w] == 0} << w;
        if (empty) {
            p.way = static_cast<unsigned>(__builtin_ctzll(empty));
            p.evict = false;
            return p;
        }
        const uint64_t* st = &stamps_[base];
        uint64_t oldest = ~uint64_t{0};
        for (unsigned w = 0; w < ways_; w++) {
            bool older = st[w] < oldest;
            oldest = older ? st[w] : oldest;
            p.way = older ? w : p.way;
        }
        return p;
    }
    struct Link {
        uint32_t prev = kNone, next = kNone;
        uint16_t group = 0;
        uint8_t kind = 0;
    };
    struct Group {
        uint32_t first = kNone; // an entry of the group, or kNone
        uint32_t size = 0;
    };

    size_t slot(unsigned set, uint64_t tag) const
    {
        size_t base = size_t{set} * ways_;
        const uint64_t* t = &tags_[base];
        for (unsigned w = 0; w < ways_; w++)
            if (t[w] == tag)
                return base + w;
        return kNone;
    }
    void link(size_t i, uint16_t group, unsigned kind)
    {
        Link& l = links_[i];
        l.group = group;
        l.kind = static_cast<uint8_t>(kind % kKinds);
        kinds_[l.kind]++;
        l.prev = kNone;
        l.next = groups_[group].first;
        if (l.next != kNone)
            links_[l.next].prev = static_cast<uint32_t>(i);
        groups_[group].first = static_cast<uint32_t>(i);
        groups_[group].size++;
    }
    void unlink(size_t i)
    {
        Link& l = links_[i];
        if (l.prev != kNone)
            links_[l.prev].next = l.next;
        else
            groups_[l.group].first = l.next;
        if (l.next != kNone)
            links_[l.next].prev = l.prev;
        groups_[l.group].size--;
        kinds_[l.kind]--;
    }
    void remove(size_t i)
    {
        unlink(i);
        tags_[i] = 0;
        valid_--;
    }

    unsigned ways_;
    unsigned sets_;
    Replacement policy_;
    Prng& prng_;
    uint64_t clock_ = 0;
    uint64_t valid_ = 0;
    Slots<uint64_t> tags_;   // 0: empty
    Slots<uint64_t> stamps_; // last use (LRU) or fill (FIFO)
    Slots<Entry> entries_;
    Slots<Link> links_;           // each valid entry on its group's list
    Slots<Group> groups_;         // each group's list
    uint64_t kinds_[kKinds] = {}; // valid entries of each kind
};

} // namespace dmalab::vtd
