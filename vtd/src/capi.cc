// SPDX-License-Identifier: GPL-2.0-or-later
// C ABI adapter of the VT-d model (vtd_core.h).

#include "dmalab/vtd_core.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "dmalab/c_abi.h"
#include "dmalab/host_adapter.h"
#include "dmalab/vtd/faults.h"
#include "dmalab/vtd/unit.h"

using namespace dmalab;

namespace
{

// The unit's events to the C trace points (vtd_core.h).
class TraceAdapter final : public vtd::Observer
{
  public:
    explicit TraceAdapter(void* opaque) : opaque_(opaque) {}
    void fault(uint16_t sid, uint64_t iova, bool write, vtd::FaultReason reason,
               bool recorded) override
    {
        dmalab_vtd_trace_fault(opaque_, sid, iova, write, static_cast<uint8_t>(reason), recorded);
    }
    void invalidated(vtd::InvKind kind, vtd::Gran g, uint16_t did, uint64_t addr, unsigned am,
                     uint64_t dropped, bool queued) override
    {
        dmalab_vtd_trace_invalidated(opaque_, vtd::inv_letter(kind), static_cast<uint8_t>(g), did,
                                     addr, am, dropped, queued);
    }
    void unmapped(bool devtlb, uint16_t sid, uint64_t first, uint64_t last) override
    {
        dmalab_vtd_unmapped(opaque_, devtlb, sid, first, last);
    }
    void wait_done(uint64_t modelled, uint64_t achieved) override
    {
        dmalab_vtd_trace_wait_done(opaque_, modelled, achieved);
    }
    void stale(uint16_t sid, uint64_t iova, uint64_t cached, uint64_t now,
               vtd::FaultReason f) override
    {
        dmalab_vtd_trace_stale(opaque_, sid, iova, cached, now, static_cast<uint8_t>(f));
    }
    void queue_error(uint32_t head, uint64_t lo, uint64_t hi) override
    {
        dmalab_vtd_trace_queue_error(opaque_, head, lo, hi);
    }
    void queue_timeout(uint32_t head, uint16_t sid, uint32_t discarded) override
    {
        dmalab_vtd_trace_queue_timeout(opaque_, head, sid, discarded);
    }
    void event_refused(bool fault, uint64_t address, uint32_t data) override
    {
        dmalab_vtd_trace_event_refused(opaque_, fault, address, data);
    }
    void interrupt(const vtd::InterruptRequest& q, const vtd::Interrupt& o, bool recorded) override
    {
        dmalab_vtd_trace_interrupt(opaque_, q.sid, q.address, q.data, o.ok, o.remapped, o.index,
                                   o.address, o.data, static_cast<uint8_t>(o.fault_reason),
                                   recorded);
    }
    void iec_invalidated(bool global, uint32_t index, unsigned im, uint64_t dropped) override
    {
        dmalab_vtd_trace_iec_invalidated(opaque_, global, index, im, dropped);
    }
    void ir_state(bool enabled, uint64_t table, unsigned entries, bool x2apic) override
    {
        dmalab_vtd_trace_ir_state(opaque_, enabled, table, entries, x2apic);
    }
    void mmio(bool write, uint32_t offset, unsigned size, uint64_t value)
    {
        dmalab_vtd_trace_mmio(opaque_, write, offset, size, value);
    }

  private:
    void* opaque_;
};

static_assert(DMALAB_VTD_NO_PASID == kNoPasid);
static_assert(DMALAB_VTD_LRU == static_cast<int>(vtd::Replacement::Lru) &&
              DMALAB_VTD_FIFO == static_cast<int>(vtd::Replacement::Fifo) &&
              DMALAB_VTD_RANDOM == static_cast<int>(vtd::Replacement::Random));

// The members DmalabVtdConfig shares with vtd::Config, which names them alike
// (replacement is an enum on one side).
// clang-format off
#define DMALAB_VTD_CONFIG_MEMBERS(X) \
    X(aw_bits) X(iotlb_entries) X(iotlb_ways) X(context_entries) X(qi) X(pt) X(audit) \
    X(inv_desc_ns) X(inv_page_ns) X(wait_ns) X(queue_step) X(seed) X(walk_read_ns) X(ir) \
    X(eim) X(iec_entries) X(iec_inv_ns) X(dt) X(cm) X(devtlb_timeout_ns) X(sm) X(fs) \
    X(pde_cache) X(pdpe_cache) X(pml4e_cache)
// clang-format on

// c.replacement must be in range (dmalab_vtd_check).
vtd::Config to_config(const DmalabVtdConfig& c)
{
    vtd::Config cfg;
#define DMALAB_COPY(m) cfg.m = c.m;
    DMALAB_VTD_CONFIG_MEMBERS(DMALAB_COPY)
#undef DMALAB_COPY
    cfg.replacement = static_cast<vtd::Replacement>(c.replacement);
    return cfg;
}

// The counters' names (QOM property names) and where each lives.
struct CounterDef {
    const char* name;
    uint64_t vtd::Counters::*field;
};
constexpr CounterDef kCounters[] = {
    {"translations", &vtd::Counters::translations},
    {"iotlb-hits", &vtd::Counters::iotlb_hits},
    {"iotlb-misses", &vtd::Counters::iotlb_misses},
    {"iotlb-evictions", &vtd::Counters::iotlb_evictions},
    {"context-hits", &vtd::Counters::context_hits},
    {"context-misses", &vtd::Counters::context_misses},
    {"context-evictions", &vtd::Counters::context_evictions},
    {"page-walks", &vtd::Counters::page_walks},
    {"walk-reads", &vtd::Counters::walk_reads},
    {"faults", &vtd::Counters::faults},
    {"faults-recorded", &vtd::Counters::faults_recorded},
    {"faults-overflowed", &vtd::Counters::faults_overflowed},
    {"faults-coalesced", &vtd::Counters::faults_coalesced},
    {"inv-register", &vtd::Counters::inv_register},
    {"inv-queued", &vtd::Counters::inv_queued},
    {"iotlb-dropped", &vtd::Counters::iotlb_dropped},
    {"waits", &vtd::Counters::waits},
    {"wait-modelled-ns", &vtd::Counters::wait_modelled_ns},
    {"wait-achieved-ns", &vtd::Counters::wait_achieved_ns},
    {"wait-max-achieved-ns", &vtd::Counters::wait_max_achieved_ns},
    {"wait-status-failed", &vtd::Counters::wait_status_failed},
    {"queue-errors", &vtd::Counters::queue_errors},
    {"queue-timeouts", &vtd::Counters::queue_timeouts},
    {"fault-events", &vtd::Counters::fault_events},
    {"inv-events", &vtd::Counters::inv_events},
    {"events-refused", &vtd::Counters::events_refused},
    {"audit-checks", &vtd::Counters::audit_checks},
    {"audit-stale", &vtd::Counters::audit_stale},
    {"walk-cost-ns", &vtd::Counters::walk_cost_ns},
    {"interrupts", &vtd::Counters::interrupts},
    {"ir-remapped", &vtd::Counters::ir_remapped},
    {"ir-compat", &vtd::Counters::ir_compat},
    {"ir-passed", &vtd::Counters::ir_passed},
    {"ir-faults", &vtd::Counters::ir_faults},
    {"iec-hits", &vtd::Counters::iec_hits},
    {"iec-misses", &vtd::Counters::iec_misses},
    {"iec-evictions", &vtd::Counters::iec_evictions},
    {"iec-inv-global", &vtd::Counters::iec_inv_global},
    {"iec-inv-index", &vtd::Counters::iec_inv_index},
    {"iec-dropped", &vtd::Counters::iec_dropped},
    {"devtlb-inv", &vtd::Counters::devtlb_inv},
    {"devtlb-pages", &vtd::Counters::devtlb_pages},
    {"iotlb-negative", &vtd::Counters::iotlb_negative},
    {"fs-ad-updates", &vtd::Counters::fs_ad_updates},
    {"translation-requests", &vtd::Counters::ats_requests},
    {"untranslated-only", &vtd::Counters::ats_untranslated_only},
    {"psc-misses", &vtd::Counters::psc_misses},
    {"psc-dropped", &vtd::Counters::psc_dropped},
    {"inv-leaf-hints", &vtd::Counters::inv_leaf_hints},
};
// The counters by granularity (and the scalable-mode ones by kind) follow the table above.
struct ArrayCounterDef {
    const char* name;
    uint64_t (*get)(const vtd::Counters&);
};
constexpr ArrayCounterDef kGranCounters[] = {
    {"cc-inv-global", [](const vtd::Counters& c) { return c.cc_inv[1]; }},
    {"cc-inv-domain", [](const vtd::Counters& c) { return c.cc_inv[2]; }},
    {"cc-inv-device", [](const vtd::Counters& c) { return c.cc_inv[3]; }},
    {"iotlb-inv-global", [](const vtd::Counters& c) { return c.iotlb_inv[1]; }},
    {"iotlb-inv-domain", [](const vtd::Counters& c) { return c.iotlb_inv[2]; }},
    {"iotlb-inv-page", [](const vtd::Counters& c) { return c.iotlb_inv[3]; }},
    {"pc-inv-domain", [](const vtd::Counters& c) { return c.pc_inv[0]; }},
    {"pc-inv-pasid", [](const vtd::Counters& c) { return c.pc_inv[1]; }},
    {"pc-inv-global", [](const vtd::Counters& c) { return c.pc_inv[3]; }},
    {"piotlb-inv-pasid", [](const vtd::Counters& c) { return c.piotlb_inv[0]; }},
    {"piotlb-inv-page", [](const vtd::Counters& c) { return c.piotlb_inv[1]; }},
    {"pde-cache-hits", [](const vtd::Counters& c) { return c.psc_hits[0]; }},
    {"pdpe-cache-hits", [](const vtd::Counters& c) { return c.psc_hits[1]; }},
    {"pml4e-cache-hits", [](const vtd::Counters& c) { return c.psc_hits[2]; }},
};
constexpr unsigned kPlain = sizeof kCounters / sizeof kCounters[0];
constexpr unsigned kAll = kPlain + sizeof kGranCounters / sizeof kGranCounters[0];

} // namespace

struct DmalabVtd {
    DmalabVtd(const vtd::Config& config, const DmalabHost& h)
        : host(h), trace(h.opaque), unit(config, {host, host, host, host, &trace})
    {
        injected = {h.opaque, "dmalab-vtd"};
        injected.listen(injector);
    }

    HostAdapter host;
    TraceAdapter trace;
    vtd::Unit unit;
    faults::Injector injector;
    InjectionTrace injected;
};

extern "C" {

DMALAB_C_COMMON_ENTRIES(vtd, DmalabVtd, unit)

uint64_t dmalab_vtd_mmio_read(DmalabVtd* unit, uint32_t offset, unsigned size)
{
    uint64_t value = unit->unit.mmio_read(offset, size);
    unit->trace.mmio(false, offset, size, value);
    return value;
}

void dmalab_vtd_mmio_write(DmalabVtd* unit, uint32_t offset, uint64_t value, unsigned size)
{
    unit->trace.mmio(true, offset, size, value);
    unit->unit.mmio_write(offset, value, size);
}

void dmalab_vtd_default_config(DmalabVtdConfig* out)
{
    vtd::Config d;
    *out = {};
#define DMALAB_COPY(m) out->m = d.m;
    DMALAB_VTD_CONFIG_MEMBERS(DMALAB_COPY)
#undef DMALAB_COPY
    out->replacement = static_cast<uint8_t>(d.replacement);
}

const char* dmalab_vtd_check(const DmalabVtdConfig* config)
{
    if (config->replacement > DMALAB_VTD_RANDOM)
        return "replacement must be lru, fifo or random";
    return vtd::check(to_config(*config));
}

DmalabVtd* dmalab_vtd_new(const DmalabVtdConfig* config, const DmalabHost* host, const char** why)
{
    *why = dmalab_vtd_check(config);
    if (*why)
        return nullptr;
    return new (std::nothrow) DmalabVtd(to_config(*config), *host);
}

unsigned dmalab_vtd_timer_count(void)
{
    return vtd::kTimerCount;
}

void dmalab_vtd_reset(DmalabVtd* unit)
{
    unit->unit.reset();
    unit->injector.reset(); // the plan replays from the start
}

static DmalabVtdTranslation to_c(const vtd::Translation& t)
{
    return {t.iova,
            t.addr,
            t.mask,
            t.ok,
            t.translated,
            t.read,
            t.write,
            static_cast<uint8_t>(t.fault_reason),
            t.untranslated_only};
}

DmalabVtdTranslation dmalab_vtd_translate(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                          uint64_t iova, unsigned perm)
{
    return to_c(unit->unit.translate(sid, pasid, iova, perm & 3));
}

DmalabVtdTranslation dmalab_vtd_translation_request(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                                    uint64_t iova)
{
    return to_c(unit->unit.translation_request(sid, pasid, iova));
}

DmalabVtdTranslation dmalab_vtd_translate_run(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                              uint64_t iova, uint64_t len, unsigned perm,
                                              uint64_t* run)
{
    vtd::Unit::Run r = unit->unit.translate_run(sid, pasid, iova, len, perm & 3);
    *run = r.len;
    return to_c(r.first);
}

uint64_t dmalab_vtd_take_cost(DmalabVtd* unit, uint16_t sid)
{
    return unit->unit.take_cost(sid);
}

bool dmalab_vtd_enabled(DmalabVtd* unit)
{
    return unit->unit.translation_enabled();
}

bool dmalab_vtd_remap_interrupt(DmalabVtd* unit, uint16_t sid, bool sid_known, uint64_t address,
                                uint32_t data, bool record, uint64_t* out_address,
                                uint32_t* out_data)
{
    vtd::Interrupt i = unit->unit.remap_interrupt({address, data, sid, sid_known, record});
    *out_address = i.address;
    *out_data = i.data;
    return i.ok;
}

bool dmalab_vtd_ir_enabled(DmalabVtd* unit)
{
    return unit->unit.interrupt_remapping_enabled();
}

const char* dmalab_vtd_set_costs(DmalabVtd* unit, uint64_t desc_ns, uint64_t page_ns,
                                 uint64_t wait_ns, uint64_t iec_ns)
{
    return unit->unit.set_costs({desc_ns, page_ns, wait_ns, iec_ns});
}

void dmalab_vtd_set_audit(DmalabVtd* unit, bool on)
{
    unit->unit.set_audit(on);
}

void dmalab_vtd_set_hold_waits(DmalabVtd* unit, bool on)
{
    unit->unit.set_hold_waits(on);
}

unsigned dmalab_vtd_counter_count(void)
{
    return kAll;
}

const char* dmalab_vtd_counter_name(unsigned index)
{
    if (index < kPlain)
        return kCounters[index].name;
    if (index < kAll)
        return kGranCounters[index - kPlain].name;
    return nullptr;
}

uint64_t dmalab_vtd_counter(DmalabVtd* unit, unsigned index)
{
    const vtd::Counters& c = unit->unit.counters();
    if (index < kPlain)
        return c.*(kCounters[index].field);
    if (index < kAll)
        return kGranCounters[index - kPlain].get(c);
    return 0;
}

char* dmalab_vtd_ir_requesters(DmalabVtd* unit)
{
    return malloc_string(vtd::ir_requesters_text(unit->unit.counters()));
}

char* dmalab_vtd_set_fault_plan(DmalabVtd* unit, const char* text, const char* id)
{
    std::string err;
    if (!faults::apply_plan(unit->injector, text, vtd::fault_spec(), id ? id : "", &err))
        return malloc_string(err);
    unit->unit.set_injector(text && *text ? &unit->injector : nullptr);
    return nullptr;
}

// The unit's state, length first, then the fault plan's counts and generators (the plan
// itself is configuration: the destination is given it).
uint8_t* dmalab_vtd_save(DmalabVtd* unit, uint32_t* len)
{
    StateWriter u;
    unit->unit.save(u);
    StateWriter w;
    w.blob(u);
    unit->injector.save(w);
    return malloc_copy(w, len);
}

bool dmalab_vtd_load(DmalabVtd* unit, const uint8_t* data, uint32_t len)
{
    StateReader r({data, len});
    StateReader u(r.blob());
    return r.ok() && unit->unit.load(u) && unit->injector.load(r) && r.finished();
}

} // extern "C"
