// SPDX-License-Identifier: GPL-2.0-or-later
// What a fault plan may ask of dmalab-vtd.

#include "dmalab/vtd/faults.h"

#include "dmalab/vtd/registers.h"

namespace dmalab::vtd
{

faults::ModelSpec fault_spec()
{
    using faults::Kind;
    auto bit = [](Kind k) { return 1u << static_cast<unsigned>(k); };
    faults::ModelSpec s;
    s.type = "dmalab-vtd";
    s.kinds =
        bit(Kind::DelayInvalidation) | bit(Kind::DropInvalidation) | bit(Kind::TranslationFault);
    s.unit_selector = "requester";
    s.unit_limit = 0x10000;
    s.unit_kinds = bit(Kind::TranslationFault);
    s.ops = {{"context-cache", kFaultOpContext},
             {"iotlb", kFaultOpIotlb},
             {"wait", kFaultOpWait},
             {"read", kFaultOpRead},
             {"write", kFaultOpWrite},
             {"interrupt-cache", kFaultOpIec},
             {"device-tlb", kFaultOpDevTlb}};
    // The reasons a translation can really give in legacy mode (7.1.3).
    for (auto r = static_cast<uint8_t>(FaultReason::RootNotPresent);
         r <= static_cast<uint8_t>(FaultReason::PageReserved); r++)
        s.reasons.push_back(r);
    s.max_delay_ns = kMaxFaultDelayNs;
    return s;
}

} // namespace dmalab::vtd
