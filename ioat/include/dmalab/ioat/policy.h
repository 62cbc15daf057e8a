// SPDX-License-Identifier: GPL-2.0-or-later
// The per-descriptor policy seam. For every descriptor a channel starts, a policy decides
// when its data moves, at what rate, when it completes, and whether it fails or is written
// short or corrupted. Order follows from the times: a channel completes its own descriptors
// in order, and across channels whichever completion time comes first wins. The default,
// TimingPolicy, models latency, bandwidth and seeded jitter; fault injection plugs in here.
#pragma once

#include <cstdint>

#include "dmalab/ioat/ops.h"
#include "dmalab/pacing.h"
#include "dmalab/state.h"

namespace dmalab::ioat
{

struct DescriptorInfo {
    unsigned channel;
    uint64_t addr;  // bus address of the descriptor
    uint64_t index; // descriptors this channel has started since the device was reset
    uint8_t op;     // the opcode, as the control word has it
    uint32_t ctl;
    uint64_t src; // its first source
    uint64_t dst; // its destination (PQ forms: P, or Q when P is disabled)
    uint64_t len; // bytes of each range it processes (0 for a null descriptor)
    OpKind kind;
};

struct Decision {
    uint64_t data_at = 0;   // when its first byte may move (virtual ns)
    uint64_t bandwidth = 0; // rate of its data phase in bytes/s; 0: as fast as steps allow
    uint64_t done_at = 0;   // earliest completion; it also waits for the data phase to end
    uint32_t fail = 0;      // CHANERR bits: fail when the data phase would start, moving nothing
    uint64_t move_limit = ~0ull; // move at most this many bytes, then complete as if whole
    uint8_t corrupt_xor = 0;     // xored into the last byte moved, when non-zero
    bool drop_interrupt = false; // its completion raises no interrupt (status still written)
    // A hold the guest may end early (a fault rule with "until": "release", docs/faults.rst):
    // the rule's index in the plan file, and what the hold added to data_at and done_at.
    static constexpr uint32_t kNoRelease = ~0u;
    uint32_t release_rule = kNoRelease;
    uint64_t held_data_ns = 0;
    uint64_t held_done_ns = 0;
};

class DescriptorPolicy
{
  public:
    virtual ~DescriptorPolicy() = default;
    virtual Decision decide(const DescriptorInfo& d, uint64_t now) = 0;
    // What the policy must carry across migration (its generator state).
    virtual void save(StateWriter&) const {}
    virtual void load(StateReader&) {}
    virtual void reset() {}
};

// The default: every descriptor paced by a Pacer (dmalab/pacing.h), completing at start +
// size / bandwidth + latency + a uniform jitter in [0, jitter_ns].
class TimingPolicy final : public DescriptorPolicy
{
  public:
    using Params = Pacer::Params;
    explicit TimingPolicy(const Params& p) : pacer_(p) {}

    Decision decide(const DescriptorInfo& d, uint64_t now) override;
    void save(StateWriter& w) const override { pacer_.save(w); }
    void load(StateReader& r) override { pacer_.load(r); }
    void reset() override { pacer_.reset(); }
    const Params& params() const { return pacer_.params(); }
    void set_params(const Params& p) { pacer_.set_params(p); }

  private:
    Pacer pacer_;
};

} // namespace dmalab::ioat
