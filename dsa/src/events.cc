// SPDX-License-Identifier: GPL-2.0-or-later
// What the device tells software outside completion records (DSA spec, "Interrupt Cause",
// "Software Error", "General Status"): the causes in INTCAUSE behind MSI-X vector 0, the
// software error record, and the Halted state. idxd's misc interrupt thread reads INTCAUSE,
// writes back what it read, and looks at HALT first, then SWERR, then CMD
// (idxd_misc_thread).

#include "parts.h"

namespace dmalab::dsa
{

namespace
{
using fields::GENCTRL;
using fields::SWERR0;
using fields::SWERR1;

constexpr uint64_t kSwerrIntEn = field_mask(GENCTRL, "SWERR_INT_EN");
constexpr uint64_t kHaltIntEn = field_mask(GENCTRL, "HALT_INT_EN");
} // namespace

bool Events::notify(unsigned vector)
{
    bool sent = s_.call_out([&] { return s_.host.irq.notify(vector); });
    if (sent)
        s_.counters.interrupts++;
    if (Observer* o = s_.host.observer)
        o->interrupt(vector, sent);
    return sent;
}

void Events::raise(uint32_t cause)
{
    // Every new cause sends a message, whether or not INTCAUSE already held it: the
    // handler reads INTCAUSE again after clearing it, so an extra message costs a loop.
    s_.set(reg("INTCAUSE"), s_.reg(reg("INTCAUSE")) | cause);
    notify(0);
}

void Events::software_error(const SwError& e)
{
    s_.counters.swerrs++;
    uint64_t w0 = s_.reg(reg("SWERR0"));
    const bool record = !(w0 & SWERR_VALID);
    if (record) {
        // The first error since software cleared VALID fills the whole record.
        w0 = SWERR_VALID;
        w0 |= field(SWERR0, "ERROR").put(static_cast<uint8_t>(e.error));
        if (e.wq) {
            w0 |= field(SWERR0, "WQ_IDX_VALID").put(1);
            w0 |= field(SWERR0, "WQ_IDX").put(*e.wq);
        }
        if (e.desc_valid) {
            w0 |= field(SWERR0, "DESC_VALID").put(1);
            w0 |= field(SWERR0, "OPERATION").put(e.operation);
            w0 |= field(SWERR0, "BATCH").put(e.batch);
            w0 |= field(SWERR0, "FAULT_RW").put(e.fault_write);
            w0 |= field(SWERR0, "PRIV").put(e.priv);
            w0 |= field(SWERR0, "PASID").put(e.pasid);
        }
        uint64_t w1 = field(SWERR1, "INVALID_FLAGS").put(e.invalid_flags);
        if (e.desc_valid && e.batch)
            w1 |= field(SWERR1, "BATCH_IDX").put(e.batch_index);
        s_.set(reg("SWERR0"), w0);
        s_.set(reg("SWERR1"), w1);
        s_.set(reg("SWERR2"), e.fault_addr);
        s_.set(reg("SWERR3"), 0);
    } else {
        // A second error while the record is valid: only OVERFLOW says it happened.
        s_.set(reg("SWERR0"), w0 | SWERR_OVERFLOW);
        s_.counters.swerr_overflows++;
    }
    if (Observer* o = s_.host.observer)
        o->software_error(e, record);
    if (s_.reg(reg("GENCTRL")) & kSwerrIntEn)
        raise(INTC_SWERR);
}

void Events::halt(ResetType type)
{
    if (s_.state() == DeviceState::Halted)
        return; // the first fatal error decides what reset brings the device back
    s_.set_state(DeviceState::Halted, type);
    t_.disable_all_wqs();
    if (on_halt)
        on_halt();
    s_.counters.halts++;
    if (Observer* o = s_.host.observer)
        o->halted(type);
    if (s_.reg(reg("GENCTRL")) & kHaltIntEn)
        raise(INTC_HALT);
}

} // namespace dmalab::dsa
