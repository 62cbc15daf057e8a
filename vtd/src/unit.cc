// SPDX-License-Identifier: GPL-2.0-or-later
// The VT-d unit: its parts composed (parts.h), the register bank and the registers' hooks,
// register accesses, reset and migration.

#include <array>

#include "parts.h"

namespace dmalab::vtd
{

struct Parts {
    Parts(const Config& c, const Host& h);

    // Register hooks: each register's behaviour is one of the parts'.
    uint64_t read_fsts(uint64_t stored) { return faults.read_fsts(stored); }
    void write_gcmd(uint64_t, uint64_t written, uint64_t bytes)
    {
        commands.write_gcmd(written, bytes);
    }
    void write_ccmd(uint64_t old, uint64_t written, uint64_t bytes)
    {
        commands.write_ccmd(old, written, bytes);
    }
    void write_iotlb(uint64_t old, uint64_t written, uint64_t bytes)
    {
        commands.write_iotlb(old, written, bytes);
    }
    void write_fsts(uint64_t old, uint64_t, uint64_t) { fsts_written(old); }
    void write_frcd(uint64_t, uint64_t, uint64_t) { fsts_written(s.reg(reg("FSTS"))); }
    void write_fectl(uint64_t, uint64_t, uint64_t) { events.write_ctl(Event::Fault); }
    void write_iqt(uint64_t, uint64_t, uint64_t) { queue.write_iqt(); }
    void write_ics(uint64_t, uint64_t, uint64_t) { queue.write_ics(); }
    void write_iectl(uint64_t, uint64_t, uint64_t) { events.write_ctl(Event::Invalidation); }
    // 6.5.2.10 and 6.5.2.11: once IQE or ITE is cleared, processing resumes at IQH.
    void fsts_written(uint64_t old)
    {
        if (faults.status_written(old) && s.queue_on())
            queue.kick();
    }

    Shared s;
    std::unique_ptr<RegBank<Parts>> regs;
    Events events{s};
    FaultRecording faults{s, events};
    Translator xlate{s, faults};
    InterruptRemapping ir{s, faults};
    Invalidations inv{s, xlate, ir};
    InvalidationQueue queue{s, inv, faults, events};
    RegisterCommands commands{s, inv, xlate, queue, ir};
};

namespace
{

constexpr RegHook<Parts> kHooks[] = {
    {"GCMD", nullptr, &Parts::write_gcmd},
    {"CCMD", nullptr, &Parts::write_ccmd},
    {"FSTS", &Parts::read_fsts, &Parts::write_fsts},
    {"FECTL", nullptr, &Parts::write_fectl},
    {"IQT", nullptr, &Parts::write_iqt},
    {"ICS", nullptr, &Parts::write_ics},
    {"IECTL", nullptr, &Parts::write_iectl},
    {"IOTLB", nullptr, &Parts::write_iotlb},
    {"FRCD_HI", nullptr, &Parts::write_frcd},
};
constexpr auto kTable = bank_table<Parts, kRegCount>(kRegisters, kHooks);
static_assert(well_formed(kTable, kRegWindow));

constexpr uint32_t kStateMagic = 0x56544431; // "VTD1"
constexpr uint16_t kStateVersion = 3;        // 2: the interrupt remapping part; 3: scalable mode

uint64_t cap_value(const Config& c)
{
    uint64_t cap = field(fields::CAP, "ND").put(2); // kDomainIds
    cap |= field(fields::CAP, "CM").put(c.cm);
    cap |= field(fields::CAP, "SAGAW").put(SAGAW_39 | (c.aw_bits >= 48 ? SAGAW_48 : 0));
    cap |= field(fields::CAP, "MGAW").put(c.aw_bits - 1u);
    cap |= field(fields::CAP, "FRO").put(offset("FRCD_LO") / 16);
    cap |= field(fields::CAP, "SLLPS").put(SLLPS_2M | SLLPS_1G);
    cap |= field(fields::CAP, "PSI").put(1);
    cap |= field(fields::CAP, "NFR").put(kFaultRecords - 1);
    cap |= field(fields::CAP, "MAMV").put(kMamv);
    cap |= field(fields::CAP, "FL1GP").put(c.sm && c.fs); // 1 GiB first-stage pages
    return cap;
}

uint64_t ecap_value(const Config& c)
{
    uint64_t ecap = field(fields::ECAP, "C").put(1);
    ecap |= field(fields::ECAP, "IRO").put(offset("IVA") / 16);
    ecap |= field(fields::ECAP, "QI").put(c.qi);
    ecap |= field(fields::ECAP, "DT").put(c.dt);
    ecap |= field(fields::ECAP, "PT").put(c.pt);
    ecap |= field(fields::ECAP, "IR").put(c.ir);
    ecap |= field(fields::ECAP, "EIM").put(c.ir && c.eim);
    ecap |= field(fields::ECAP, "MHMV").put(c.ir ? kMhmv : 0);
    // Scalable mode: second stage always, first stage if fs; page walks are coherent.
    ecap |= field(fields::ECAP, "SMTS").put(c.sm);
    ecap |= field(fields::ECAP, "SLTS").put(c.sm);
    ecap |= field(fields::ECAP, "FLTS").put(c.sm && c.fs);
    ecap |= field(fields::ECAP, "SMPWCS").put(c.sm);
    return ecap;
}

} // namespace

Parts::Parts(const Config& c, const Host& h) : s(c, h)
{
    regs = std::make_unique<RegBank<Parts>>(*this, kTable, kRegWindow, s.host.log, "vtd");
    s.regs = regs.get();
    regs->set_reset_value(reg("CAP"), cap_value(c));
    regs->set_reset_value(reg("ECAP"), ecap_value(c));
}

const char* check(const Config& c)
{
    if (c.aw_bits != 39 && c.aw_bits != 48)
        return "aw-bits must be 39 or 48";
    if (c.iotlb_ways == 0 || c.iotlb_ways > 64)
        return "iotlb-ways must be 1 to 64";
    if (c.iotlb_entries == 0 || c.iotlb_entries > (1u << 20) || c.iotlb_entries % c.iotlb_ways)
        return "iotlb-entries must be a multiple of iotlb-ways, at most 1048576";
    if (c.context_entries < 4 || c.context_entries > 65536 || c.context_entries % 4)
        return "context-entries must be a multiple of 4, from 4 to 65536";
    if (c.inv_desc_ns > kMaxCostNs || c.inv_page_ns > kMaxCostNs || c.wait_ns > kMaxCostNs)
        return "invalidation costs must be at most 1 s (1000000000 ns)";
    if (c.queue_step == 0 || c.queue_step > 4096)
        return "queue-step must be 1 to 4096";
    if (c.walk_read_ns > kMaxCostNs)
        return "walk-read-ns must be at most 1 s (1000000000 ns)";
    if (c.iec_inv_ns > kMaxCostNs)
        return "iec-inv-ns must be at most 1 s (1000000000 ns)";
    for (unsigned n : {c.pde_cache, c.pdpe_cache, c.pml4e_cache})
        if (n % 4 || n > 4096)
            return "pde-cache, pdpe-cache and pml4e-cache must be multiples of 4, at most 4096";
    if (c.iec_entries < 4 || c.iec_entries > 65536 || c.iec_entries % 4)
        return "iec-entries must be a multiple of 4, from 4 to 65536";
    if (c.devtlb_timeout_ns > kMaxCostNs)
        return "devtlb-timeout-ns must be at most 1 s (1000000000 ns)";
    // ECAP.IR needs ECAP.QI: the interrupt entry cache is invalidated only through the queue.
    if (c.ir && !c.qi)
        return "interrupt remapping needs queued invalidation (qi=on)";
    // Scalable mode's PASID cache is invalidated only by a queued descriptor (6.5.2.2).
    if (c.sm && !c.qi)
        return "scalable mode needs queued invalidation (qi=on)";
    // First-stage tables are 4-level (48-bit); software wants an address width that both
    // stages offer (CAP.SAGAW's 48-bit one).
    if (c.sm && c.fs && c.aw_bits != 48)
        return "first-stage tables need aw-bits=48 (or first-stage=off)";
    // A device-TLB is invalidated only by a queued descriptor (6.5.2.5).
    if (c.dt && !c.qi)
        return "device-iotlb needs queued invalidation (qi=on)";
    return nullptr;
}

Unit::Unit(const Config& config, const Host& host) : p_(std::make_unique<Parts>(config, host))
{
    reset();
}

Unit::~Unit() = default;

void Unit::reset()
{
    for (unsigned t = 0; t < kTimerCount; t++)
        p_->s.host.timers.cancel(t);
    p_->regs->reset();
    p_->xlate.reset();
    p_->ir.reset();
    p_->faults.reset();
    p_->queue.reset();
    p_->commands.reset();
}

bool Unit::translation_enabled() const
{
    return p_->xlate.enabled();
}

const Counters& Unit::counters() const
{
    return p_->s.counters;
}

const Config& Unit::config() const
{
    return p_->s.config;
}

void Unit::set_audit(bool on)
{
    p_->s.config.audit = on;
}

void Unit::set_hold_waits(bool on)
{
    p_->s.config.hold_waits = on;
}

void Unit::set_injector(faults::Injector* injector)
{
    p_->s.injector = injector;
}

Translation Unit::translate(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm)
{
    return p_->xlate.translate(sid, pasid, iova, perm);
}

Translation Unit::translation_request(uint16_t sid, uint32_t pasid, uint64_t iova)
{
    return p_->xlate.translation_request(sid, pasid, iova);
}

Unit::Run Unit::translate_run(uint16_t sid, uint32_t pasid, uint64_t iova, uint64_t len,
                              unsigned perm)
{
    return p_->xlate.translate_run(sid, pasid, iova, len, perm);
}

uint64_t Unit::take_cost(uint16_t sid)
{
    return p_->xlate.take_cost(sid);
}

Interrupt Unit::remap_interrupt(const InterruptRequest& req)
{
    return p_->ir.remap(req);
}

bool Unit::interrupt_remapping_enabled() const
{
    return p_->ir.enabled();
}

const char* Unit::set_costs(const Costs& costs)
{
    Config c = p_->s.config;
    c.inv_desc_ns = costs.desc_ns;
    c.inv_page_ns = costs.page_ns;
    c.wait_ns = costs.wait_ns;
    c.iec_inv_ns = costs.iec_ns;
    if (const char* why = check(c))
        return why;
    p_->s.config = c;
    return nullptr;
}

void Unit::timer(unsigned id)
{
    if (id == static_cast<unsigned>(Timer::Queue))
        p_->queue.run();
    else if (id == static_cast<unsigned>(Timer::Context))
        p_->commands.timer(Timer::Context);
    else if (id == static_cast<unsigned>(Timer::Iotlb))
        p_->commands.timer(Timer::Iotlb);
}

// ---- Register accesses ----

uint64_t Unit::mmio_read(uint32_t offset, unsigned size)
{
    // 10.2: registers are accessed as aligned DWORDs or QWORDs.
    if ((size != 4 && size != 8) || offset % size || offset >= kRegWindow) {
        logf(p_->s.host.log, LogKind::GuestError, "vtd: %u-byte read at 0x%x not supported", size,
             offset);
        return 0;
    }
    return p_->regs->read(offset, size);
}

void Unit::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    if ((size != 4 && size != 8) || offset % size || offset >= kRegWindow) {
        logf(p_->s.host.log, LogKind::GuestError, "vtd: %u-byte write at 0x%x ignored", size,
             offset);
        return;
    }
    if (p_->s.depth) {
        // The unit's own status write or message reached its registers.
        logf(p_->s.host.log, LogKind::GuestError, "vtd: write at 0x%x from the unit itself refused",
             offset);
        return;
    }
    p_->regs->write(offset, value, size);
}

// ---- Migration ----

void Unit::save(StateWriter& w) const
{
    w.u32(kStateMagic);
    w.u16(kStateVersion);
    w.u32(kRegCount);
    for (unsigned i = 0; i < kRegCount; i++)
        w.u64(p_->regs->get(i));
    p_->xlate.save(w);
    p_->ir.save(w);
    p_->faults.save(w);
    p_->queue.save(w);
    p_->commands.save(w);
}

bool Unit::load(StateReader& r)
{
    if (r.u32() != kStateMagic || r.u16() != kStateVersion || r.u32() != kRegCount)
        return false;
    uint64_t v[kRegCount];
    for (unsigned i = 0; i < kRegCount; i++)
        v[i] = r.u64();
    if (!r.ok())
        return false;
    reset();
    for (unsigned i = 0; i < kRegCount; i++)
        if (i != reg("VER") && i != reg("CAP") && i != reg("ECAP"))
            p_->regs->set(i, v[i]);
    // Caches start empty, as after any invalidation; work in progress goes on.
    if (!p_->xlate.load(r) || !p_->ir.load(r) || !p_->faults.load(r) || !p_->queue.load(r) ||
        !p_->commands.load(r) || !r.finished()) {
        reset();
        return false;
    }
    return true;
}

} // namespace dmalab::vtd
