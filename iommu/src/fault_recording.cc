// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's fault recording and event messages (7.2, 7.3).

#include "unit_parts.h"

#include <algorithm>

#include "dmalab/le.h"

namespace dmalab::vtd
{

// ---- Faults (7.2, 7.3) ----

// The upper address registers (FEUADDR, IEUADDR) only matter in extended interrupt mode
// (x2APIC destinations through interrupt remapping, VT-d 10.4.14), which this unit lacks.
void Unit::send(uint32_t ctl_reg, uint32_t data_reg, uint32_t addr_reg)
{
    uint64_t addr = regs_->get(addr_reg);
    uint32_t data = static_cast<uint32_t>(regs_->get(data_reg));
    bool fault = ctl_reg == R_FECTL;
    // The event registers hold an interrupt message (VT-d 10.4.12-13, 10.4.24-25): on x86 a
    // write to the interrupt address range 0xFEEx_xxxx, which the platform turns into an
    // interrupt and never into a memory write. A message aimed anywhere else (RAM, another
    // device's registers, the unit's own) is not an interrupt: it is refused, not written.
    if ((addr >> 20) != 0xFEE) {
        counters_.events_refused++;
        logf(host_.log, LogKind::GuestError,
             "vtd: %s event message to 0x%llx (data 0x%x) is outside the interrupt range "
             "0xfee00000-0xfeefffff; not sent",
             fault ? "fault" : "invalidation", static_cast<unsigned long long>(addr), data);
        if (host_.observer)
            host_.observer->event_refused(fault, addr, data);
        return;
    }
    depth_++;
    bool sent = host_.irq.send_msi(addr, data, {});
    depth_--;
    if (sent)
        (fault ? counters_.fault_events : counters_.inv_events)++;
}

void Unit::fault_event()
{
    uint64_t v = regs_->get(R_FECTL);
    if (v & CTL_IM) {
        regs_->set(R_FECTL, v | CTL_IP);
        return;
    }
    send(R_FECTL, R_FEDATA, R_FEADDR);
}

void Unit::write_fectl(uint64_t, uint64_t, uint64_t)
{
    uint64_t v = regs_->get(R_FECTL);
    if (!(v & CTL_IM) && (v & CTL_IP)) {
        regs_->set(R_FECTL, v & ~uint64_t{CTL_IP});
        send(R_FECTL, R_FEDATA, R_FEADDR);
    }
}

void Unit::write_fsts(uint64_t old, uint64_t, uint64_t)
{
    uint64_t now = read_fsts(regs_->get(R_FSTS));
    if (!(now & (FSTS_PFO | FSTS_PPF | FSTS_IQE | FSTS_ICE | FSTS_ITE)))
        regs_->set(R_FECTL, regs_->get(R_FECTL) & ~uint64_t{CTL_IP});
    if ((old & FSTS_IQE) && !(now & FSTS_IQE) && (regs_->get(R_GSTS) & G_QIE))
        queue_kick(); // 6.5.2.10: processing resumes at IQH
}

void Unit::write_frcd(uint64_t, uint64_t, uint64_t)
{
    write_fsts(regs_->get(R_FSTS), 0, 0);
}

void Unit::record_fault(uint16_t sid, uint64_t iova, bool write, uint8_t reason)
{
    uint64_t fsts = regs_->get(R_FSTS);
    if (fsts & FSTS_PFO) {
        counters_.faults_overflowed++;
        return;
    }
    bool pending = read_fsts(fsts) & FSTS_PPF;
    unsigned slot = next_record_ % kFaultRecords;
    // A request refused again while its record is still pending is not recorded twice
    // (7.2.1 lets hardware coalesce faults from one requester to one page): QEMU splits a
    // faulting access into many small ones, and each would otherwise take a record.
    unsigned last = R_FRCD0 + 2 * ((slot + kFaultRecords - 1) % kFaultRecords);
    uint64_t hi = FRCD_F | (write ? 0 : FRCD_T_READ) | uint64_t{reason} << FRCD_FR_SHIFT | sid;
    if (regs_->get(last + 1) == hi && regs_->get(last) == (iova & ~uint64_t{0xfff})) {
        counters_.faults_coalesced++;
        return;
    }
    unsigned reg = R_FRCD0 + 2 * slot;
    if (regs_->get(reg + 1) & FRCD_F) {
        counters_.faults_overflowed++;
        regs_->set(R_FSTS, fsts | FSTS_PFO);
        fault_event();
        return;
    }
    regs_->set(reg, iova & ~uint64_t{0xfff});
    regs_->set(reg + 1, hi);
    next_record_ = (slot + 1) % kFaultRecords;
    counters_.faults_recorded++;
    if (!pending) {
        // 10.4.9: FRI names the record of the first pending fault.
        regs_->set(R_FSTS,
                   (fsts & ~(uint64_t{0xff} << FSTS_FRI_SHIFT)) | uint64_t{slot} << FSTS_FRI_SHIFT);
        fault_event();
    }
}

} // namespace dmalab::vtd
