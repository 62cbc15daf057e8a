// SPDX-License-Identifier: GPL-2.0-or-later
// The context of a request (3.4, 9.1-9.4): the root and context entries of legacy mode, and
// scalable mode's root, context, PASID directory and PASID table entries, read from guest
// memory into the ContextInfo a walk starts from.

#include "dmalab/vtd/faults.h"
#include "parts.h"

namespace dmalab::vtd
{

// The 128-bit entry (root or context, 9.1 and 9.3) at addr; zeros where the read failed.
template <class E> DmaResult Translator::read_entry128(uint64_t addr, E& out)
{
    uint8_t raw[E::kSize] = {};
    DmaResult r = s_.call_out([&] { return s_.host.memory.read(addr, raw, sizeof raw, {}); });
    out = E::from(raw);
    return r;
}

FaultReason Translator::context_for(uint16_t sid, ContextInfo& out)
{
    if (last_context_ && last_context_->sid == sid) {
        s_.counters.context_hits++;
        caches_.context.touch(last_context_);
        out = *last_context_;
        return FaultReason::None;
    }
    unsigned set = caches_.context_set(sid);
    if (ContextInfo* c = caches_.context.find(set, Caches::context_tag(sid))) {
        s_.counters.context_hits++;
        last_context_ = c;
        out = *c;
        return FaultReason::None;
    }
    s_.counters.context_misses++;
    charge(sid, 2 * s_.config.walk_read_ns); // the root and the context entry
    FaultReason why =
        s_.sm_root ? context_sm(sid, out, haw_mask()) : context_legacy(sid, out, haw_mask());
    if (why != FaultReason::None)
        return why;
    auto [where, evicted] = caches_.context.insert(set, Caches::context_tag(sid), out.did, out);
    if (evicted) {
        s_.counters.context_evictions++;
        forget();
    }
    last_context_ = where;
    return FaultReason::None;
}

FaultReason Translator::context_legacy(uint16_t sid, ContextInfo& out, uint64_t haw_mask)
{
    if (!root_valid_ || (root_ & haw_mask))
        return FaultReason::RootTable;
    RootEntry re;
    if (!read_entry128(root_ + (sid >> 8) * RootEntry::kSize, re).ok())
        return FaultReason::RootTable;
    if (!re.present())
        return FaultReason::RootNotPresent;
    if (re.reserved_set(haw_mask))
        return FaultReason::RootReserved;
    ContextEntry ce;
    if (!read_entry128(re.context_table_pointer() + (sid & 0xffu) * ContextEntry::kSize, ce).ok())
        return FaultReason::ContextTable;
    if (!ce.present())
        return FaultReason::ContextNotPresent;
    out.fpd = ce.fault_processing_disable();
    if (ce.reserved_set(haw_mask) || ce.domain_id() >= kDomainIds)
        return FaultReason::ContextReserved;
    out.sid = sid;
    out.tt = ce.translation_type();
    out.aw = ce.address_width();
    out.did = static_cast<uint16_t>(ce.domain_id());
    out.slptptr = ce.slptptr();
    bool aw_ok = out.aw == 1 || (out.aw == 2 && s_.config.aw_bits >= 48);
    // TT=01 (device-TLB enabled, with ECAP.DT): untranslated requests are translated as with
    // TT=00; the unit models no translation requests of the device's own.
    bool tables = out.tt == TT::Untranslated || (out.tt == TT::All && s_.config.dt);
    if (!(tables && aw_ok) && !(out.tt == TT::Passthrough && s_.config.pt))
        return FaultReason::ContextInvalid;
    return FaultReason::None;
}

// Scalable mode (9.2, 9.4): the root entry's half for the devfn, the 256-bit context
// entry, then RID_PASID's PASID directory and table entries. Any FPD on the way holds.
uint64_t Translator::haw_mask() const
{
    return ~(pow2(s_.config.aw_bits) - 1);
}

FaultReason Translator::context_sm(uint16_t sid, ContextInfo& out, uint64_t haw_mask,
                                   bool rid_pasid)
{
    if (!root_valid_ || (root_ & haw_mask))
        return sm(SmFault::RootTableAddress);
    const bool upper = sid & 0x80;
    SmRootEntry re;
    if (!read_entry128(root_ + (sid >> 8) * SmRootEntry::kSize, re).ok())
        return sm(SmFault::RootAccess);
    if (!re.present(upper))
        return sm(SmFault::RootNotPresent);
    if (re.reserved_set(upper, haw_mask))
        return sm(SmFault::RootReserved);
    SmContextEntry ce;
    uint64_t at = re.context_table_pointer(upper) + (sid & 0x7fu) * SmContextEntry::kSize;
    if (!read_entry128(at, ce).ok())
        return sm(SmFault::ContextAccess);
    if (!ce.present())
        return sm(SmFault::ContextNotPresent);
    out.fpd = ce.fault_processing_disable();
    // DTE needs ECAP.DT; page requests (PRE, ECAP.PRS) and PASID-tagged requests (PASIDE,
    // ECAP.PASID) are not offered, so those bits are reserved too.
    if (ce.reserved_set(haw_mask) || (ce.device_tlb() && !s_.config.dt) || ce.page_requests() ||
        ce.pasid_enable())
        return sm(SmFault::ContextReserved);
    out.sid = sid;
    out.sm = true;
    return rid_pasid ? pasid_entry(ce, out, haw_mask) : FaultReason::None;
}

FaultReason Translator::pasid_entry(const SmContextEntry& ce, ContextInfo& out, uint64_t haw_mask)
{
    const uint32_t pasid = ce.rid_pasid();
    if ((pasid >> 6) >= ce.dir_entries())
        return sm(SmFault::RidPasid);
    charge(out.sid, 2 * s_.config.walk_read_ns); // the directory and the PASID entry
    uint8_t raw[PasidEntry::kSize] = {};
    uint64_t dir_at = ce.dir_pointer() + uint64_t{pasid >> 6} * PasidDirEntry::kSize;
    if (!s_.call_out([&] {
               return s_.host.memory.read(dir_at, raw, PasidDirEntry::kSize, {});
           }).ok())
        return sm(SmFault::DirAccess);
    PasidDirEntry de = PasidDirEntry::from(raw);
    if (!de.present())
        return sm(SmFault::DirNotPresent);
    out.fpd = out.fpd || de.fault_processing_disable();
    if (de.reserved_set(haw_mask))
        return sm(SmFault::DirReserved);
    uint64_t pe_at = de.table_pointer() + uint64_t{pasid & 63} * PasidEntry::kSize;
    if (!s_.call_out([&] { return s_.host.memory.read(pe_at, raw, sizeof raw, {}); }).ok())
        return sm(SmFault::PasidAccess);
    PasidEntry pe = PasidEntry::from(raw);
    if (!pe.present())
        return sm(SmFault::PasidNotPresent);
    out.fpd = out.fpd || pe.fault_processing_disable();
    if (pe.reserved_set() || pe.domain_id() >= kDomainIds)
        return sm(SmFault::PasidReserved);
    out.pasid = pasid;
    out.did = static_cast<uint16_t>(pe.domain_id());
    out.tt = TT::Untranslated;
    switch (pe.pgtt()) {
    case Pgtt::FirstStage:
        // 4-level tables only (FLPM 0): CAP.FL5LP is not advertised.
        if (!s_.config.fs || pe.flpm() != 0)
            return sm(SmFault::PasidInvalid);
        out.fs = true;
        out.nxe = pe.nxe();
        out.aw = 2;
        out.slptptr = pe.flptr();
        return FaultReason::None;
    case Pgtt::SecondStage:
        out.aw = pe.address_width();
        if (!(out.aw == 1 || (out.aw == 2 && s_.config.aw_bits >= 48)))
            return sm(SmFault::PasidInvalid);
        out.slptptr = pe.slptptr();
        return FaultReason::None;
    case Pgtt::PassThrough:
        if (!s_.config.pt)
            return sm(SmFault::PasidInvalid);
        out.tt = TT::Passthrough;
        return FaultReason::None;
    default: // nested (not advertised) and the reserved encodings
        return sm(SmFault::PasidInvalid);
    }
}

} // namespace dmalab::vtd
