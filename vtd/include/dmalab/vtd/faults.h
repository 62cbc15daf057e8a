// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-vtd's faults: which plan rules it accepts. The unit consults its injector where
// an invalidation starts and where a translation is requested (Unit::set_injector).
#pragma once

#include "dmalab/faults.h"

namespace dmalab::vtd
{

// The "op" values of dmalab-vtd's occasions.
enum : uint8_t {
    kFaultOpContext,    // a context-cache invalidation (CCMD or descriptor)
    kFaultOpIotlb,      // an IOTLB invalidation
    kFaultOpWait,       // an invalidation wait descriptor
    kFaultOpRead,       // a translation for a read
    kFaultOpWrite,      // a translation for a write
    kFaultOpIec,        // an interrupt entry cache invalidation (descriptor)
    kFaultOpDevTlb,     // a device-TLB invalidation (descriptor)
    kFaultOpPasidCache, // a PASID-cache invalidation (descriptor, scalable mode)
};

// The largest delay a plan may add to an invalidation: Linux waits 10 s for a register
// invalidation before it declares the unit broken.
inline constexpr uint64_t kMaxFaultDelayNs = 1000000000; // 1 s

faults::ModelSpec fault_spec();

} // namespace dmalab::vtd
