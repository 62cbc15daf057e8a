// SPDX-License-Identifier: GPL-2.0-or-later
// Fault recording (7.2) and the unit's two event messages (7.3 fault events, 6.5.2.9
// invalidation completion events).

#include "parts.h"

namespace dmalab::vtd
{

namespace
{

// Each event's control, data and address registers (10.4.10-13, 10.4.25-27).
struct EventRegs {
    unsigned ctl, data, addr, upper;
};
constexpr EventRegs kFaultEvent{reg("FECTL"), reg("FEDATA"), reg("FEADDR"), reg("FEUADDR")};
constexpr EventRegs kInvEvent{reg("IECTL"), reg("IEDATA"), reg("IEADDR"), reg("IEUADDR")};

constexpr const EventRegs& regs_of(Event e)
{
    return e == Event::Fault ? kFaultEvent : kInvEvent;
}

} // namespace

// ---- Event messages ----

// The upper address registers (FEUADDR, IEUADDR) hold an x2APIC destination's bits 31:8
// when the unit supports extended interrupt mode (ECAP.EIM, 10.4.13); otherwise they are
// not looked at. The unit's own events are never remapped (5.1.6).
void Events::send(Event e)
{
    const EventRegs& r = regs_of(e);
    uint64_t addr = s_.reg(r.addr);
    if (s_.config.ir && s_.config.eim)
        addr |= s_.reg(r.upper) << 32;
    uint32_t data = static_cast<uint32_t>(s_.reg(r.data));
    bool fault = e == Event::Fault;
    // The event registers hold an interrupt message (VT-d 10.4.12-13, 10.4.24-25): on x86 a
    // write to the interrupt address range 0xFEEx_xxxx, which the platform turns into an
    // interrupt and never into a memory write. A message aimed anywhere else (RAM, another
    // device's registers, the unit's own) is not an interrupt: it is refused, not written.
    if (((addr & 0xffffffff) >> 20) != intr::kFee) {
        s_.counters.events_refused++;
        logf(s_.host.log, LogKind::GuestError,
             "vtd: %s event message to 0x%llx (data 0x%x) is outside the interrupt range "
             "0xfee00000-0xfeefffff; not sent",
             fault ? "fault" : "invalidation", static_cast<unsigned long long>(addr), data);
        if (s_.host.observer)
            s_.host.observer->event_refused(fault, addr, data);
        return;
    }
    bool sent = s_.call_out([&] { return s_.host.irq.send_msi(addr, data, {}); });
    if (sent)
        (fault ? s_.counters.fault_events : s_.counters.inv_events)++;
}

void Events::raise(Event e)
{
    unsigned ctl = regs_of(e).ctl;
    uint64_t v = s_.reg(ctl);
    if (v & CTL_IM) {
        s_.set(ctl, v | CTL_IP);
        return;
    }
    send(e);
}

void Events::write_ctl(Event e)
{
    unsigned ctl = regs_of(e).ctl;
    uint64_t v = s_.reg(ctl);
    if (!(v & CTL_IM) && (v & CTL_IP)) {
        s_.set(ctl, v & ~uint64_t{CTL_IP});
        send(e);
    }
}

void Events::clear_pending(Event e)
{
    unsigned ctl = regs_of(e).ctl;
    s_.set(ctl, s_.reg(ctl) & ~uint64_t{CTL_IP});
}

// ---- Fault recording (7.2) ----

uint64_t FaultRecording::read_fsts(uint64_t stored)
{
    stored &= ~uint64_t{FSTS_PPF};
    for (unsigned i = 0; i < kFaultRecords; i++)
        if (s_.reg(reg("FRCD_HI") + i) & FRCD_F)
            stored |= FSTS_PPF;
    return stored;
}

bool FaultRecording::status_written(uint64_t old_fsts)
{
    uint64_t now = read_fsts(s_.reg(reg("FSTS")));
    if (!(now & (FSTS_PFO | FSTS_PPF | FSTS_IQE | FSTS_ICE | FSTS_ITE)))
        events_.clear_pending(Event::Fault);
    return (old_fsts & (FSTS_IQE | FSTS_ITE)) && !(now & (FSTS_IQE | FSTS_ITE));
}

// An FSTS error bit of the queue, and the fault event if the bit was clear.
void FaultRecording::queue_status(uint32_t bit)
{
    uint64_t fsts = s_.reg(reg("FSTS"));
    if (fsts & bit)
        return;
    s_.set(reg("FSTS"), fsts | bit);
    events_.raise(Event::Fault);
}

void FaultRecording::record(uint16_t sid, uint32_t pasid, uint64_t iova, bool write,
                            FaultReason reason)
{
    uint64_t fsts = s_.reg(reg("FSTS"));
    if (fsts & FSTS_PFO) {
        s_.counters.faults_overflowed++;
        return;
    }
    bool pending = read_fsts(fsts) & FSTS_PPF;
    unsigned slot = next_record_ % kFaultRecords;
    // A request refused again while its record is still pending is not recorded twice
    // (7.2.1 lets hardware coalesce faults from one requester to one page): QEMU splits a
    // faulting access into many small ones, and each would otherwise take a record.
    unsigned last = (slot + kFaultRecords - 1) % kFaultRecords;
    uint64_t hi = FRCD_F | (write ? 0 : FRCD_T_READ) |
                  field(fields::FRCD_HI, "FR").put(static_cast<uint8_t>(reason)) |
                  field(fields::FRCD_HI, "SID").put(sid);
    if (pasid != kNoPasid) // a request with a PASID: PP and its value (10.4.14)
        hi |= field(fields::FRCD_HI, "PP").put(1) | field(fields::FRCD_HI, "PV").put(pasid);
    uint64_t page = iova & field_mask(fields::FRCD_LO, "FI");
    if (s_.reg(reg("FRCD_HI") + last) == hi && s_.reg(reg("FRCD_LO") + last) == page) {
        s_.counters.faults_coalesced++;
        return;
    }
    if (s_.reg(reg("FRCD_HI") + slot) & FRCD_F) {
        s_.counters.faults_overflowed++;
        s_.set(reg("FSTS"), fsts | FSTS_PFO);
        events_.raise(Event::Fault);
        return;
    }
    s_.set(reg("FRCD_LO") + slot, page);
    s_.set(reg("FRCD_HI") + slot, hi);
    next_record_ = (slot + 1) % kFaultRecords;
    s_.counters.faults_recorded++;
    if (!pending) {
        // 10.4.9: FRI names the record of the first pending fault.
        s_.set(reg("FSTS"), (fsts & ~FSTS_FRI.mask()) | FSTS_FRI.put(slot));
        events_.raise(Event::Fault);
    }
}

bool FaultRecording::load(StateReader& r)
{
    unsigned next = r.u8();
    if (next >= kFaultRecords)
        return false;
    next_record_ = next;
    return true;
}

} // namespace dmalab::vtd
