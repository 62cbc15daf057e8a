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

class TraceAdapter final : public vtd::Observer
{
  public:
    TraceAdapter(void* opaque, const DmalabVtdTrace* t) : opaque_(opaque)
    {
        if (t)
            t_ = *t;
    }
    void fault(uint16_t sid, uint64_t iova, bool write, vtd::FaultReason reason,
               bool recorded) override
    {
        if (t_.fault)
            t_.fault(opaque_, sid, iova, write, static_cast<uint8_t>(reason), recorded);
    }
    void invalidated(vtd::InvKind kind, vtd::Gran g, uint16_t did, uint64_t addr, unsigned am,
                     uint64_t dropped, bool queued) override
    {
        if (t_.invalidated)
            t_.invalidated(opaque_, vtd::inv_letter(kind), static_cast<uint8_t>(g), did, addr, am,
                           dropped, queued);
    }
    void wait_done(uint64_t modelled, uint64_t achieved) override
    {
        if (t_.wait_done)
            t_.wait_done(opaque_, modelled, achieved);
    }
    void stale(uint16_t sid, uint64_t iova, uint64_t cached, uint64_t now,
               vtd::FaultReason f) override
    {
        if (t_.stale)
            t_.stale(opaque_, sid, iova, cached, now, static_cast<uint8_t>(f));
    }
    void queue_error(uint32_t head, uint64_t lo, uint64_t hi) override
    {
        if (t_.queue_error)
            t_.queue_error(opaque_, head, lo, hi);
    }
    void event_refused(bool fault, uint64_t address, uint32_t data) override
    {
        if (t_.event_refused)
            t_.event_refused(opaque_, fault, address, data);
    }
    void interrupt(const vtd::InterruptRequest& q, const vtd::Interrupt& o, bool recorded) override
    {
        if (t_.interrupt)
            t_.interrupt(opaque_, q.sid, q.address, q.data, o.ok, o.remapped, o.index, o.address,
                         o.data, static_cast<uint8_t>(o.fault_reason), recorded);
    }
    void iec_invalidated(bool global, uint32_t index, unsigned im, uint64_t dropped) override
    {
        if (t_.iec_invalidated)
            t_.iec_invalidated(opaque_, global, index, im, dropped);
    }
    void ir_state(bool enabled, uint64_t table, unsigned entries, bool x2apic) override
    {
        if (t_.ir_state)
            t_.ir_state(opaque_, enabled, table, entries, x2apic);
    }

  private:
    void* opaque_;
    DmalabVtdTrace t_{};
};

vtd::Config to_config(const DmalabVtdConfig& c)
{
    vtd::Config cfg;
    cfg.aw_bits = c.aw_bits;
    cfg.iotlb_entries = c.iotlb_entries;
    cfg.iotlb_ways = c.iotlb_ways;
    cfg.replacement = c.replacement == DMALAB_VTD_FIFO     ? vtd::Replacement::Fifo
                      : c.replacement == DMALAB_VTD_RANDOM ? vtd::Replacement::Random
                                                           : vtd::Replacement::Lru;
    cfg.context_entries = c.context_entries;
    cfg.qi = c.qi;
    cfg.pt = c.pt;
    cfg.audit = c.audit;
    cfg.inv_desc_ns = c.inv_desc_ns;
    cfg.inv_page_ns = c.inv_page_ns;
    cfg.wait_ns = c.wait_ns;
    cfg.queue_step = c.queue_step;
    cfg.seed = c.seed;
    cfg.walk_read_ns = c.walk_read_ns;
    cfg.ir = c.ir;
    cfg.eim = c.eim;
    cfg.iec_entries = c.iec_entries;
    cfg.iec_inv_ns = c.iec_inv_ns;
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
};
// The by-granularity arrays follow the table above.
constexpr const char* kGranCounters[] = {
    "cc-inv-global",    "cc-inv-domain",    "cc-inv-device",
    "iotlb-inv-global", "iotlb-inv-domain", "iotlb-inv-page",
};
constexpr unsigned kPlain = sizeof kCounters / sizeof kCounters[0];
constexpr unsigned kAll = kPlain + sizeof kGranCounters / sizeof kGranCounters[0];

} // namespace

struct DmalabVtd {
    DmalabVtd(const vtd::Config& config, const DmalabHost& h, const DmalabVtdTrace* t)
        : host(h), trace(h.opaque, t), unit(config, {host, host, host, host, &trace}),
          host_opaque(h.opaque)
    {
        if (t)
            trace_injected = t->injected;
        injector.set_listener(
            [](void* opaque, const faults::Event& e, const faults::Rule& r) {
                auto* self = static_cast<DmalabVtd*>(opaque);
                if (self->trace_injected)
                    self->trace_injected(self->host_opaque, r.name.c_str(),
                                         faults::kind_name(r.kind), e.unit, e.key);
            },
            this);
    }

    HostAdapter host;
    TraceAdapter trace;
    vtd::Unit unit;
    faults::Injector injector;
    void* host_opaque;
    void (*trace_injected)(void*, const char*, const char*, uint32_t, uint64_t) = nullptr;
};

extern "C" {

void dmalab_vtd_default_config(DmalabVtdConfig* out)
{
    vtd::Config d;
    *out = {};
    out->aw_bits = d.aw_bits;
    out->iotlb_entries = d.iotlb_entries;
    out->iotlb_ways = d.iotlb_ways;
    out->replacement = DMALAB_VTD_LRU;
    out->context_entries = d.context_entries;
    out->qi = d.qi;
    out->pt = d.pt;
    out->audit = d.audit;
    out->inv_desc_ns = d.inv_desc_ns;
    out->inv_page_ns = d.inv_page_ns;
    out->wait_ns = d.wait_ns;
    out->queue_step = d.queue_step;
    out->seed = d.seed;
    out->walk_read_ns = d.walk_read_ns;
    out->ir = d.ir;
    out->eim = d.eim;
    out->iec_entries = d.iec_entries;
    out->iec_inv_ns = d.iec_inv_ns;
}

const char* dmalab_vtd_check(const DmalabVtdConfig* config)
{
    if (config->replacement > DMALAB_VTD_RANDOM)
        return "replacement must be lru, fifo or random";
    return vtd::check(to_config(*config));
}

DmalabVtd* dmalab_vtd_new(const DmalabVtdConfig* config, const DmalabHost* host,
                          const DmalabVtdTrace* trace, const char** why)
{
    *why = dmalab_vtd_check(config);
    if (*why)
        return nullptr;
    return new (std::nothrow) DmalabVtd(to_config(*config), *host, trace);
}

void dmalab_vtd_free(DmalabVtd* unit)
{
    delete unit;
}

unsigned dmalab_vtd_timer_count(void)
{
    return vtd::kTimerCount;
}

uint64_t dmalab_vtd_mmio_read(DmalabVtd* unit, uint32_t offset, unsigned size)
{
    return unit->unit.mmio_read(offset, size);
}

void dmalab_vtd_mmio_write(DmalabVtd* unit, uint32_t offset, uint64_t value, unsigned size)
{
    unit->unit.mmio_write(offset, value, size);
}

void dmalab_vtd_timer(DmalabVtd* unit, unsigned timer)
{
    unit->unit.timer(timer);
}

void dmalab_vtd_reset(DmalabVtd* unit)
{
    unit->unit.reset();
    unit->injector.reset(); // the plan replays from the start
}

DmalabVtdTranslation dmalab_vtd_translate(DmalabVtd* unit, uint16_t sid, uint64_t iova,
                                          unsigned perm)
{
    vtd::Translation t = unit->unit.translate(sid, iova, perm & 3);
    return {t.iova,       t.addr, t.mask,  t.ok,
            t.translated, t.read, t.write, static_cast<uint8_t>(t.fault_reason)};
}

DmalabVtdTranslation dmalab_vtd_translate_run(DmalabVtd* unit, uint16_t sid, uint64_t iova,
                                              uint64_t len, unsigned perm, uint64_t* run)
{
    vtd::Unit::Run r = unit->unit.translate_run(sid, iova, len, perm & 3);
    const vtd::Translation& t = r.first;
    *run = r.len;
    return {t.iova,       t.addr, t.mask,  t.ok,
            t.translated, t.read, t.write, static_cast<uint8_t>(t.fault_reason)};
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

unsigned dmalab_vtd_counter_count(void)
{
    return kAll;
}

const char* dmalab_vtd_counter_name(unsigned index)
{
    if (index < kPlain)
        return kCounters[index].name;
    if (index < kAll)
        return kGranCounters[index - kPlain];
    return nullptr;
}

uint64_t dmalab_vtd_counter(DmalabVtd* unit, unsigned index)
{
    const vtd::Counters& c = unit->unit.counters();
    if (index < kPlain)
        return c.*(kCounters[index].field);
    if (index < kPlain + 3)
        return c.cc_inv[1 + index - kPlain];
    if (index < kAll)
        return c.iotlb_inv[1 + index - kPlain - 3];
    return 0;
}

char* dmalab_vtd_set_fault_plan(DmalabVtd* unit, const char* text, const char* id)
{
    std::string err;
    if (!faults::apply_plan(unit->injector, text, vtd::fault_spec(), id ? id : "", &err))
        return malloc_string(err);
    unit->unit.set_injector(text && *text ? &unit->injector : nullptr);
    return nullptr;
}

uint64_t dmalab_vtd_faults_injected(DmalabVtd* unit)
{
    return unit->injector.total();
}

char* dmalab_vtd_fault_log(DmalabVtd* unit)
{
    return malloc_string(faults::log_text(unit->injector));
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
