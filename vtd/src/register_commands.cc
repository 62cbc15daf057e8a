// SPDX-License-Identifier: GPL-2.0-or-later
// The global command register (10.4.4) and register-based invalidation (6.5.1): context-cache
// invalidation through CCMD and IOTLB invalidation through the IOTLB and IVA registers,
// each taking modelled time.

#include <utility>

#include "parts.h"

namespace dmalab::vtd
{

namespace
{
constexpr uint64_t kBusy = uint64_t{1} << 63; // CCMD.ICC and IOTLB.IVT
static_assert(kBusy == CCMD_ICC && kBusy == IOTLB_IVT);
} // namespace

void RegisterCommands::write_gcmd(uint64_t written, uint64_t bytes)
{
    uint32_t cmd = static_cast<uint32_t>(written & bytes);
    uint32_t sts = static_cast<uint32_t>(s_.reg(reg("GSTS")));
    if (!(bytes & 0xff000000u))
        return; // the command bits are in the top byte lanes
    if (cmd & G_SRTP) {
        uint64_t rta = s_.reg(reg("RTADDR"));
        uint64_t ttm = RTADDR_TTM.get(rta);
        // TTM 0 is legacy mode; 1 scalable mode, with ECAP.SMTS; 2 and 3 are reserved.
        bool sm = ttm == 1 && s_.config.sm;
        if (ttm != 0 && !sm) {
            logf(s_.host.log, LogKind::GuestError,
                 "vtd: RTADDR.TTM=%u: not a mode the unit offers (ECAP.SMTS=%u); DMA is blocked",
                 static_cast<unsigned>(ttm), static_cast<unsigned>(s_.config.sm));
            t_.set_root(false, 0, false);
        } else {
            t_.set_root(true, rta & RTADDR_RTA.mask(), sm);
        }
        sts |= G_SRTP; // RTPS
    }
    if ((cmd & G_TE) && !(sts & G_TE)) {
        if (!t_.has_root())
            logf(s_.host.log, LogKind::GuestError,
                 "vtd: translation enabled without a root table: every DMA faults");
        sts |= G_TE;
    } else if (!(cmd & G_TE) && (sts & G_TE)) {
        sts &= ~G_TE;
    }
    if ((cmd & G_QIE) && !(sts & G_QIE)) {
        if (!s_.config.qi) {
            logf(s_.host.log, LogKind::GuestError, "vtd: QIE set but ECAP.QI is clear; ignored");
        } else {
            queue_.enable();
            sts |= G_QIE;
        }
    } else if (!(cmd & G_QIE) && (sts & G_QIE)) {
        queue_.disable();
        sts &= ~G_QIE;
    }
    if (s_.config.ir)
        sts = interrupt_commands(cmd, sts);
    uint32_t unadvertised = G_SFL | G_EAFL | G_WBF | (s_.config.ir ? 0 : G_IRE | G_SIRTP | G_CFI);
    if (cmd & unadvertised)
        logf(s_.host.log, LogKind::Unimplemented,
             "vtd: GCMD 0x%x asks for a feature the unit does not advertise", cmd);
    s_.set(reg("GSTS"), sts);
    t_.set_enabled(sts & G_TE);
    if (sts & G_QIE)
        queue_.kick();
}

// SIRTP latches the table (IRTPS), IRE and CFI are persistent like TE and QIE (10.4.4).
// The unit does not advertise CAP.ESIRTPS: SIRTP leaves the entry cache alone, and software
// follows it with a global invalidation.
uint32_t RegisterCommands::interrupt_commands(uint32_t cmd, uint32_t sts)
{
    if (cmd & G_SIRTP) {
        ir_.set_table();
        sts |= G_SIRTP; // IRTPS
    }
    if (bool on = cmd & G_IRE; on != bool(sts & G_IRE)) {
        ir_.set_enabled(on);
        sts = on ? sts | G_IRE : sts & ~G_IRE;
    }
    if (bool on = cmd & G_CFI; on != bool(sts & G_CFI)) {
        ir_.set_compat(on);
        sts = on ? sts | G_CFI : sts & ~G_CFI;
    }
    return sts;
}

// ---- Register-based invalidation (6.5.1) ----

void RegisterCommands::write_ccmd(uint64_t old, uint64_t written, uint64_t bytes)
{
    start(cc_, old, written, bytes);
}

void RegisterCommands::write_iotlb(uint64_t old, uint64_t written, uint64_t bytes)
{
    start(iotlb_, old, written, bytes);
}

// Starts a register-based invalidation. Its busy bit (ICC, IVT) stays set until the
// invalidation completes, in finish().
void RegisterCommands::start(Command& c, uint64_t old, uint64_t written, uint64_t bytes)
{
    const char* name = c.kind == InvKind::Context ? "CCMD" : "IOTLB";
    if (!(bytes & kBusy) || !(written & kBusy))
        return;
    if (old & kBusy) {
        logf(s_.host.log, LogKind::GuestError, "vtd: %s written while an invalidation is busy",
             name);
        s_.set(c.reg, old);
        return;
    }
    uint64_t v = s_.reg(c.reg);
    if (s_.queue_on()) {
        logf(s_.host.log, LogKind::GuestError,
             "vtd: %s: register-based invalidation while queued invalidation is on; ignored", name);
        s_.set(c.reg, v & ~kBusy);
        return;
    }
    uint64_t iva = s_.reg(reg("IVA"));
    InvRequest req{c.kind, static_cast<Gran>(c.request.get(v)), iva & IVA_ADDR.mask(),
                   c.kind == InvKind::Iotlb ? static_cast<unsigned>(IVA_AM.get(iva)) : 0};
    uint64_t now = s_.now();
    c.due = sat_add(now, inv_.cost(req));
    c.drop = inv_.inject(req, c.due);
    s_.set(c.reg, (v | kBusy) & ~c.actual.mask());
    if (c.due <= now)
        finish(c);
    else
        s_.host.timers.arm(static_cast<unsigned>(c.timer), c.due);
}

void RegisterCommands::timer(Timer t)
{
    finish(t == Timer::Context ? cc_ : iotlb_);
}

// Completes a register-based invalidation once its time has come: performs it unless the
// fault plan dropped it, reports the granularity actually performed (CAIG, IAIG; 0 when the
// request was invalid) and clears the busy bit.
void RegisterCommands::finish(Command& c)
{
    uint64_t v = s_.reg(c.reg);
    if (!(v & kBusy))
        return;
    if (c.due > s_.now()) {
        s_.host.timers.arm(static_cast<unsigned>(c.timer), c.due);
        return;
    }
    auto g = static_cast<Gran>(c.request.get(v));
    bool dropped = std::exchange(c.drop, false);
    if (g != Gran::Reserved && !dropped)
        g = perform(c, g, v);
    s_.set(c.reg, (v & ~kBusy & ~c.actual.mask()) | c.actual.put(static_cast<uint8_t>(g)));
}

Gran RegisterCommands::perform(const Command& c, Gran g, uint64_t v)
{
    if (c.kind == InvKind::Context) {
        inv_.context(g, static_cast<uint16_t>(field(fields::CCMD, "DID").get(v)),
                     static_cast<uint16_t>(field(fields::CCMD, "SID").get(v)),
                     static_cast<uint8_t>(field(fields::CCMD, "FM").get(v)), false);
        return g;
    }
    uint64_t iva = s_.reg(reg("IVA"));
    unsigned am = static_cast<unsigned>(IVA_AM.get(iva));
    if (g == Gran::Selective && am > kMamv)
        return Gran::Reserved; // beyond CAP.MAMV: not performed
    inv_.iotlb(g, static_cast<uint16_t>(field(fields::IOTLB, "DID").get(v)), iva & IVA_ADDR.mask(),
               am, field(fields::IVA, "IH").get(iva) != 0, false);
    return g;
}

void RegisterCommands::reset()
{
    cc_.due = iotlb_.due = 0;
    cc_.drop = iotlb_.drop = false;
}

void RegisterCommands::save(StateWriter& w) const
{
    for (const Command* c : {&cc_, &iotlb_}) {
        w.u64(c->due);
        w.boolean(c->drop);
    }
}

bool RegisterCommands::load(StateReader& r)
{
    for (Command* c : {&cc_, &iotlb_}) {
        c->due = r.u64();
        c->drop = r.boolean();
        if (!r.ok() || c->due > kTimeLimit)
            return false;
    }
    // A command in progress goes on.
    for (Command* c : {&cc_, &iotlb_})
        if (s_.reg(c->reg) & kBusy)
            s_.host.timers.arm(static_cast<unsigned>(c->timer), c->due);
    return true;
}

} // namespace dmalab::vtd
