// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA model behind its C ABI (dsa_core.h): the configuration and counters as C structs,
// the host's callbacks through HostAdapter, the Observer's events as the C trace points.

#include <new>

#include "dmalab/c_abi.h"
#include "dmalab/dsa/device.h"
#include "dmalab/dsa/faults.h"
#include "dmalab/dsa_core.h"
#include "dmalab/fault_front.h"
#include "dmalab/host_adapter.h"
#include "dmalab/race_marks.h"

using namespace dmalab;

namespace
{

class TraceAdapter final : public dsa::Observer
{
  public:
    explicit TraceAdapter(void* opaque) : opaque_(opaque) {}
    void command_started(dsa::Cmd c, uint32_t operand) override
    {
        dmalab_dsa_trace_command(opaque_, false, static_cast<unsigned>(c), operand, 0);
    }
    void command_done(dsa::Cmd c, dsa::CmdErr e, uint16_t result) override
    {
        dmalab_dsa_trace_command(opaque_, true, static_cast<unsigned>(c), result,
                                 static_cast<unsigned>(e));
    }
    void software_error(const dsa::SwError& e, bool recorded) override
    {
        dmalab_dsa_trace_swerr(opaque_, static_cast<unsigned>(e.error), e.wq ? *e.wq : -1,
                               recorded);
    }
    void halted(dsa::ResetType t) override
    {
        dmalab_dsa_trace_halted(opaque_, static_cast<unsigned>(t));
    }
    void refused(uint32_t offset) override { dmalab_dsa_trace_refused(opaque_, offset); }
    void submitted(unsigned wq, uint8_t opcode) override
    {
        dmalab_dsa_trace_submitted(opaque_, wq, opcode);
    }
    void dropped(unsigned wq, const char* why) override
    {
        dmalab_dsa_trace_dropped(opaque_, wq, why);
    }
    void completed(unsigned wq, uint8_t opcode, dsa::Status st, uint64_t done) override
    {
        dmalab_dsa_trace_completed(opaque_, wq, opcode, static_cast<unsigned>(st), done);
    }
    void record(unsigned wq, uint64_t addr, dsa::Status st, bool ok) override
    {
        dmalab_dsa_trace_record(opaque_, wq, addr, static_cast<unsigned>(st), ok);
    }
    void started(unsigned engine, uint64_t key, uint64_t src, uint64_t dst, uint64_t len) override
    {
        marks.start(engine, key, src, dst, len);
    }
    void ended(unsigned engine) override { marks.finish(engine); }

    RaceMarks marks; // the race detector's table, when attached

  private:
    void* opaque_;
};

dsa::Config to_config(const DmalabDsaConfig& c)
{
    dsa::Config m;
    m.wqs = c.wqs;
    m.engines = c.engines;
    m.groups = c.groups;
    m.total_wq_size = c.total_wq_size;
    m.msix_vectors = c.msix_vectors;
    m.max_xfer_shift = c.max_xfer_shift;
    m.max_batch_shift = c.max_batch_shift;
    m.read_buffers = c.read_buffers;
    m.int_handles = c.int_handles;
    m.opcap = c.opcap;
    m.command_ns = c.command_ns;
    m.command_jitter_ns = c.command_jitter_ns;
    m.seed = c.seed;
    m.bandwidth = c.bandwidth;
    m.latency_ns = c.latency_ns;
    m.jitter_ns = c.jitter_ns;
    m.step_bytes = c.step_bytes;
    m.step_descriptors = c.step_descriptors;
    m.step_gap_ns = c.step_gap_ns;
    m.sync_start = c.sync_start;
    return m;
}

} // namespace

struct DmalabDsa {
    DmalabDsa(const dsa::Config& config, const DmalabHost& h, bool doorbell)
        : host(h), trace(h.opaque), model(config, {host, host, host, host, &trace}),
          front(
              h.opaque, host, "dmalab-dsa", "dmalab-dsa-faults", DMALAB_DSA_FAULT_DOORBELL,
              [](void* opaque, unsigned rule) {
                  return static_cast<DmalabDsa*>(opaque)->model.release(rule);
              },
              this),
          injector(front.injector), doorbell(doorbell)
    {
    }
    HostAdapter host;
    TraceAdapter trace;
    dsa::Dsa model;
    FaultFront front;
    faults::Injector& injector;
    bool doorbell; // BAR 0's doorbell window is the fault doorbell's
};

static_assert(DMALAB_DSA_FAULT_DOORBELL_SIZE == faults::doorbell::kWindow);

extern "C" {

void dmalab_dsa_default_config(DmalabDsaConfig* out)
{
    const dsa::Config d;
    *out = DmalabDsaConfig{d.wqs,
                           d.engines,
                           d.groups,
                           d.total_wq_size,
                           d.msix_vectors,
                           d.max_xfer_shift,
                           d.max_batch_shift,
                           d.read_buffers,
                           d.int_handles,
                           d.opcap,
                           d.command_ns,
                           d.command_jitter_ns,
                           d.seed,
                           d.bandwidth,
                           d.latency_ns,
                           d.jitter_ns,
                           d.step_bytes,
                           d.step_descriptors,
                           d.step_gap_ns,
                           d.sync_start,
                           false};
}

const char* dmalab_dsa_check(const DmalabDsaConfig* config)
{
    return dsa::Dsa::check(to_config(*config));
}

DmalabDsa* dmalab_dsa_new(const DmalabDsaConfig* config, const DmalabHost* host, const char** why)
{
    const dsa::Config cfg = to_config(*config);
    *why = dsa::Dsa::check(cfg);
    if (*why)
        return nullptr;
    return new (std::nothrow) DmalabDsa(cfg, *host, config->fault_doorbell);
}

DMALAB_C_COMMON_ENTRIES(dsa, DmalabDsa, model)

unsigned dmalab_dsa_timer_count(const DmalabDsaConfig* config)
{
    return dsa::Dsa::timer_count(to_config(*config));
}

uint64_t dmalab_dsa_portals_size(const DmalabDsaConfig* config)
{
    return dsa::Dsa::portals_size(to_config(*config));
}

// BAR 0: the registers and tables, and with fault_doorbell the doorbell's window.
uint64_t dmalab_dsa_mmio_read(DmalabDsa* dev, uint32_t offset, unsigned size)
{
    if (dev->doorbell && dev->front.in_doorbell(offset))
        return dev->front.read(offset, size);
    return dev->model.mmio_read(offset, size);
}

void dmalab_dsa_mmio_write(DmalabDsa* dev, uint32_t offset, uint64_t value, unsigned size)
{
    if (dev->doorbell && dev->front.in_doorbell(offset))
        dev->front.write(offset, value, size);
    else
        dev->model.mmio_write(offset, value, size);
}

uint64_t dmalab_dsa_portal_read(DmalabDsa* dev, uint32_t offset, unsigned size)
{
    return dev->model.portal_read(offset, size);
}

void dmalab_dsa_portal_write(DmalabDsa* dev, uint32_t offset, uint64_t value, unsigned size)
{
    dev->model.portal_write(offset, value, size);
}

void dmalab_dsa_reset(DmalabDsa* dev)
{
    dev->model.reset();
    dev->injector.reset();
    dev->trace.marks.clear();
    dev->front.doorbell.reset();
}

void dmalab_dsa_set_bus_master(DmalabDsa* dev, bool on)
{
    dev->model.set_bus_master(on);
}

uint8_t* dmalab_dsa_save(DmalabDsa* dev, uint32_t* len)
{
    StateWriter m;
    dev->model.save(m);
    return dev->front.save(m, len);
}

bool dmalab_dsa_load(DmalabDsa* dev, const uint8_t* data, uint32_t len)
{
    return dev->front.load(data, len, [&](StateReader& m) { return dev->model.load(m); });
}

char* dmalab_dsa_set_fault_plan(DmalabDsa* dev, const char* text, const char* id)
{
    if (char* why = dev->front.set_plan(text, dsa::fault_spec(dev->model.config().wqs), id))
        return why;
    dev->model.set_injector(text && *text ? &dev->injector : nullptr);
    return nullptr;
}

void dmalab_dsa_set_race_table(DmalabDsa* dev, DmalabRaceTable* table, uint32_t device)
{
    dev->trace.marks.reattach(table, device);
}

void dmalab_dsa_counters(DmalabDsa* dev, DmalabDsaCounters* out)
{
    const dsa::Counters& c = dev->model.counters();
    *out = DmalabDsaCounters{c.commands, c.command_errors, c.swerrs,         c.swerr_overflows,
                             c.halts,    c.interrupts,     c.refused_writes, c.submitted,
                             c.dropped,  c.aborted,        c.descriptors,    c.descriptor_errors,
                             c.bytes,    c.batches,        c.records};
}

const char* dmalab_dsa_invariant_violation(DmalabDsa* dev)
{
    return dev->model.invariant_violation();
}

} // extern "C"
