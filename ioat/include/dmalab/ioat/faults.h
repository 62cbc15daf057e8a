// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-ioat's faults: which plan rules it accepts, and the descriptor policy that applies
// them on top of another policy (normally the timing model).
#pragma once

#include "dmalab/faults.h"
#include "dmalab/ioat/policy.h"

namespace dmalab::ioat
{

// The "op" a null descriptor matches (its opcode field says copy).
inline constexpr uint8_t kFaultOpNull = 0xff;

// The "op" of a device-TLB invalidation (ats=on) that a drop-invalidation rule matches.
inline constexpr uint8_t kFaultOpDevTlb = 0xfe;

// What a dmalab-ioat with this many channels accepts in a plan.
faults::ModelSpec fault_spec(unsigned channels);

// Whether a rule drops the device-TLB invalidation of the IOVAs [first, last] that the
// IOMMU sent (a device that acknowledges an invalidation it did not carry out).
bool drops_invalidation(faults::Injector& injector, uint64_t first, uint64_t last,
                        uint64_t now);

// Asks `base` first, then lets every rule that fires on the descriptor change the decision.
class FaultPolicy final : public DescriptorPolicy
{
  public:
    FaultPolicy(DescriptorPolicy& base, faults::Injector& injector)
        : base_(base), injector_(injector)
    {
    }

    Decision decide(const DescriptorInfo& d, uint64_t now) override;
    void save(StateWriter& w) const override;
    void load(StateReader& r) override;
    void reset() override;

  private:
    DescriptorPolicy& base_;
    faults::Injector& injector_;
};

} // namespace dmalab::ioat
