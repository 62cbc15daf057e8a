// SPDX-License-Identifier: GPL-2.0-or-later
// Fault injection at the descriptor policy seam.

#include "dmalab/ioat/faults.h"

#include <algorithm>

#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/device.h"
#include "dmalab/ioat/spec/registers.h"
#include "dmalab/timers.h"

namespace dmalab::ioat
{
namespace
{

using faults::kind_bit;

constexpr uint32_t kDescriptorKinds =
    kind_bit(faults::Kind::DelayData) | kind_bit(faults::Kind::DelayCompletion) |
    kind_bit(faults::Kind::Reorder) | kind_bit(faults::Kind::Fail) |
    kind_bit(faults::Kind::Corrupt) | kind_bit(faults::Kind::Shorten) |
    kind_bit(faults::Kind::DropInterrupt);

} // namespace

faults::ModelSpec fault_spec(unsigned channels)
{
    faults::ModelSpec s;
    s.type = "dmalab-ioat";
    s.kinds = kDescriptorKinds | kind_bit(faults::Kind::DropInvalidation);
    s.unit_selector = "channel";
    s.unit_limit = channels;
    s.ops = {{"copy", OP_COPY},
             {"null", kFaultOpNull},
             {"fill", OP_FILL},
             {"xor", OP_XOR},
             {"xor-val", OP_XOR_VAL},
             {"pq", OP_PQ},
             {"pq-val", OP_PQ_VAL},
             {"pq-update", OP_PQ_UP},
             {"pq-16s", OP_PQ_16S},
             {"pq-val-16s", OP_PQ_VAL_16S},
             {"device-tlb", kFaultOpDevTlb}};
    s.chanerr_mask = CHANERR_ALL;
    s.max_delay_ns = kMaxDelayNs;
    s.release_kinds = kind_bit(faults::Kind::DelayData) | kind_bit(faults::Kind::DelayCompletion) |
                      kind_bit(faults::Kind::Reorder);
    return s;
}

bool drops_invalidation(faults::Injector& injector, uint64_t first, uint64_t last, uint64_t now)
{
    faults::Occasion o{};
    o.kinds = kind_bit(faults::Kind::DropInvalidation);
    o.unit = ~0u; // no channel's
    o.op = kFaultOpDevTlb;
    o.key = first;
    o.start[0] = first;
    o.end[0] = last == UINT64_MAX ? UINT64_MAX : last + 1;
    bool drop = false;
    injector.decide(o, now, [&](const faults::Rule&) { drop = true; });
    return drop;
}

Decision FaultPolicy::decide(const DescriptorInfo& d, uint64_t now)
{
    Decision x = base_.decide(d, now);
    faults::Occasion o{};
    o.kinds = kDescriptorKinds;
    o.unit = d.channel;
    o.op = d.kind == OpKind::Null ? kFaultOpNull : d.op;
    o.key = d.addr;
    o.start[0] = d.src;
    o.end[0] = faults::range_end(d.src, d.len);
    o.start[1] = d.dst;
    o.end[1] = faults::range_end(d.dst, d.len);
    injector_.decide(o, now, [&](const faults::Rule& r) {
        // A hold the guest ends with the doorbell's release: none left when the release came
        // first; otherwise the channel takes it back when the release comes (Channel::release).
        uint64_t hold = r.ns;
        bool releasable = r.until_release && x.release_rule == Decision::kNoRelease;
        if (r.until_release && injector_.released(r.index))
            hold = 0;
        else if (releasable)
            x.release_rule = r.index;
        switch (r.kind) {
        case faults::Kind::DelayData:
            // The completion waits for the data phase, so it moves with it.
            x.data_at = sat_add(x.data_at, hold);
            if (releasable)
                x.held_data_ns = hold;
            break;
        case faults::Kind::DelayCompletion:
            x.done_at = sat_add(x.done_at, hold);
            if (releasable)
                x.held_done_ns = hold;
            break;
        case faults::Kind::Reorder:
            // The whole descriptor waits: data and completion. Work that other channels
            // start later finishes first, which an in-order engine never shows.
            x.data_at = sat_add(x.data_at, hold);
            x.done_at = sat_add(x.done_at, hold);
            if (releasable)
                x.held_data_ns = x.held_done_ns = hold;
            break;
        case faults::Kind::Fail:
            x.fail |= r.chanerr;
            break;
        case faults::Kind::Corrupt:
            x.corrupt_xor = r.xor_mask;
            break;
        case faults::Kind::Shorten:
            x.move_limit = std::min(x.move_limit, r.bytes);
            break;
        case faults::Kind::DropInterrupt:
            x.drop_interrupt = true;
            break;
        default:
            break;
        }
    });
    return x;
}

// The base policy migrates with its owner (the device, for its timing model).
void FaultPolicy::save(StateWriter& w) const
{
    injector_.save(w);
}

void FaultPolicy::load(StateReader& r)
{
    if (!injector_.load(r))
        r.reject();
}

void FaultPolicy::reset()
{
    base_.reset();
    injector_.reset();
}

} // namespace dmalab::ioat
