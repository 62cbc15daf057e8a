// SPDX-License-Identifier: GPL-2.0-or-later
// What a fault plan may ask of dmalab-vtd.

#include "dmalab/vtd/faults.h"

#include "dmalab/vtd/spec/registers.h"

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
             {"device-tlb", kFaultOpDevTlb},
             {"pasid-cache", kFaultOpPasidCache}};
    // The reasons a translation can really give (7.1.3): legacy mode's, then scalable
    // mode's.
    for (auto r = static_cast<uint8_t>(FaultReason::RootNotPresent);
         r <= static_cast<uint8_t>(FaultReason::PageReserved); r++)
        s.reasons.push_back(r);
    for (SmFault f : {SmFault::RootTableAddress,
                      SmFault::RootAccess,
                      SmFault::RootNotPresent,
                      SmFault::RootReserved,
                      SmFault::ContextAccess,
                      SmFault::ContextNotPresent,
                      SmFault::ContextReserved,
                      SmFault::ContextInvalid,
                      SmFault::RidPasid,
                      SmFault::DirAccess,
                      SmFault::DirNotPresent,
                      SmFault::DirReserved,
                      SmFault::PasidAccess,
                      SmFault::PasidNotPresent,
                      SmFault::PasidReserved,
                      SmFault::PasidInvalid,
                      SmFault::FsAccess,
                      SmFault::FsNotPresent,
                      SmFault::FsReserved,
                      SmFault::FsPointer,
                      SmFault::SsAccess,
                      SmFault::SsReserved,
                      SmFault::SsPointer,
                      SmFault::NonCanonical,
                      SmFault::UserSupervisor,
                      SmFault::AddressBeyondAw,
                      SmFault::Write,
                      SmFault::Read})
        s.reasons.push_back(static_cast<uint8_t>(f));
    s.max_delay_ns = kMaxFaultDelayNs;
    return s;
}

} // namespace dmalab::vtd
