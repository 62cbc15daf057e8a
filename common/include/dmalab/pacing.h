// SPDX-License-Identifier: GPL-2.0-or-later
// When a unit of work's data moves and when it completes, for any engine: the data phase
// starts when the work starts and moves at a modelled rate; completion follows it after a
// fixed latency and a seeded uniform jitter, so a run replays exactly from its seed.
#pragma once

#include <cstdint>

#include "dmalab/prng.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"

namespace dmalab
{

class Pacer
{
  public:
    struct Params {
        uint64_t bandwidth = 0; // bytes per second, 0 for unlimited
        uint64_t latency_ns = 0;
        uint64_t jitter_ns = 0;
        uint64_t seed = 0;
    };
    struct Pace {
        uint64_t data_at;   // when the first byte may move
        uint64_t bandwidth; // the data phase's rate (0: unlimited)
        uint64_t done_at;   // data_at + len / bandwidth + latency + jitter, saturated
    };

    explicit Pacer(const Params& p) : p_(p), prng_(p.seed) {}

    // The pace of `len` bytes of work starting at `now`; draws one jitter.
    Pace next(uint64_t len, uint64_t now)
    {
        uint64_t jitter = prng_.upto(p_.jitter_ns);
        uint64_t done =
            sat_add(sat_add(sat_add(now, transfer_ns(len, p_.bandwidth)), p_.latency_ns), jitter);
        return {now, p_.bandwidth, done};
    }
    // The longest `len` bytes may take (jitter at its bound).
    static uint64_t longest_ns(const Params& p, uint64_t len)
    {
        return sat_add(sat_add(transfer_ns(len, p.bandwidth), p.latency_ns), p.jitter_ns);
    }

    void save(StateWriter& w) const { w.u64(prng_.state()); }
    void load(StateReader& r) { prng_.set_state(r.u64()); }
    void reset() { prng_.set_state(p_.seed); }
    const Params& params() const { return p_; }
    void set_params(const Params& p) { p_ = p; }

  private:
    Params p_;
    Prng prng_;
};

} // namespace dmalab
