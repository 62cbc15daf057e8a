// SPDX-License-Identifier: GPL-2.0-or-later
// C ABI adapter: the C host callbacks become the model's C++ interfaces.

#include "dmalab/ioat_core.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "dmalab/c_abi.h"
#include "dmalab/fault_front.h"
#include "dmalab/host_adapter.h"
#include "dmalab/race_marks.h"
#include "dmalab/ioat/device.h"
#include "dmalab/ioat/faults.h"
#include "dmalab/ioat/personality.h"

using namespace dmalab;

static_assert(DMALAB_IOAT_OP_KINDS == ioat::kOpKinds);

namespace
{

// The model's events to the C trace points (ioat_core.h), and the race detector's marks.
class TraceAdapter final : public ioat::Observer
{
  public:
    explicit TraceAdapter(void* opaque) : opaque_(opaque) {}
    void decided(const ioat::DescriptorInfo& d, const ioat::Decision& x) override
    {
        if (d.len)
            marks.start(d.channel, d.addr, d.src, d.dst, d.len);
        dmalab_ioat_trace_decided(opaque_, d.channel, d.addr, ioat::op_name(d.kind), d.len,
                                  x.data_at, x.done_at, x.fail);
    }
    void completed(unsigned ch, uint64_t desc, uint64_t bytes, ioat::OpKind kind) override
    {
        marks.finish(ch);
        dmalab_ioat_trace_completed(opaque_, ch, desc, ioat::op_name(kind), bytes);
    }
    void halted(unsigned ch, uint32_t chanerr, const DmaResult& r) override
    {
        marks.finish(ch);
        dmalab_ioat_trace_halted(opaque_, ch, chanerr, static_cast<int>(r.error), r.fault_addr);
    }
    void status(unsigned ch, uint64_t where, uint64_t status, bool ok) override
    {
        dmalab_ioat_trace_status(opaque_, ch, where, status, ok);
    }
    void stepped(unsigned ch, uint64_t bytes, unsigned descs, uint64_t next) override
    {
        dmalab_ioat_trace_stepped(opaque_, ch, bytes, descs, next);
    }
    void mmio(bool write, uint32_t offset, unsigned size, uint64_t value)
    {
        dmalab_ioat_trace_mmio(opaque_, write, offset, size, value);
    }

    RaceMarks marks; // the race detector's table, when attached

  private:
    void* opaque_;
};

class AtsTrace final : public AtsObserver
{
  public:
    explicit AtsTrace(void* opaque) : opaque_(opaque) {}
    void stale(uint64_t page, uint64_t cached, bool now_ok, uint64_t now) override
    {
        dmalab_ioat_trace_ats_stale(opaque_, page, cached, now_ok, now);
    }
    void invalidated(uint64_t first, uint64_t last, unsigned dropped) override
    {
        dmalab_ioat_trace_ats_invalidated(opaque_, first, last, dropped);
    }

  private:
    void* opaque_;
};

// The members DmalabIoatConfig shares with ioat::Config, which names them alike.
// clang-format off
#define DMALAB_IOAT_CONFIG_MEMBERS(X) \
    X(channels) X(xfercap_log) X(cbver) X(dmacap) X(step_bytes) X(step_descriptors) \
    X(step_gap_ns) X(sync_start) X(bandwidth) X(latency_ns) X(jitter_ns) X(seed)
// clang-format on

ioat::Config to_config(const DmalabIoatConfig& c)
{
    ioat::Config cfg;
#define DMALAB_COPY(m) cfg.m = c.m;
    DMALAB_IOAT_CONFIG_MEMBERS(DMALAB_COPY)
#undef DMALAB_COPY
    return cfg;
}

} // namespace

struct DmalabIoat {
    DmalabIoat(const ioat::Config& config, const DmalabHost& h)
        : host(h), trace(h.opaque), ats_trace(h.opaque), ats(host, host, &ats_trace),
          model(config, {ats, host, host, host, &trace}),
          front(
              h.opaque, host, "dmalab-ioat", "dmalab-ioat-faults", DMALAB_IOAT_FAULT_DOORBELL,
              [](void* opaque, unsigned rule) {
                  return static_cast<DmalabIoat*>(opaque)->model.release(rule);
              },
              this),
          injector(front.injector), fault_policy(model.timing(), injector)
    {
    }

    HostAdapter host;
    TraceAdapter trace;
    AtsTrace ats_trace;
    AtsMemory ats; // the model's memory: the bus, or with ATS on its device-TLB
    ioat::Ioat model;
    FaultFront front;
    faults::Injector& injector;
    ioat::FaultPolicy fault_policy;
};

extern "C" {

DMALAB_C_COMMON_ENTRIES(ioat, DmalabIoat, model)

static_assert(DMALAB_IOAT_FAULT_DOORBELL_SIZE == faults::doorbell::kWindow);

// BAR 0 as the guest sees it: the registers, and at DMALAB_IOAT_FAULT_DOORBELL the
// test-only doorbell (mapped only with QEMU's fault-doorbell property).
uint64_t dmalab_ioat_mmio_read(DmalabIoat* dev, uint32_t offset, unsigned size)
{
    uint64_t value = dev->front.in_doorbell(offset) ? dev->front.read(offset, size)
                                                    : dev->model.mmio_read(offset, size);
    dev->trace.mmio(false, offset, size, value);
    return value;
}

void dmalab_ioat_mmio_write(DmalabIoat* dev, uint32_t offset, uint64_t value, unsigned size)
{
    dev->trace.mmio(true, offset, size, value);
    if (dev->front.in_doorbell(offset))
        dev->front.write(offset, value, size);
    else
        dev->model.mmio_write(offset, value, size);
}

void dmalab_ioat_default_config(DmalabIoatConfig* out)
{
    ioat::Config d;
    *out = {};
#define DMALAB_COPY(m) out->m = d.m;
    DMALAB_IOAT_CONFIG_MEMBERS(DMALAB_COPY)
#undef DMALAB_COPY
}

const char* dmalab_ioat_personality(const char* name, DmalabIoatConfig* config, uint16_t* device_id)
{
    const ioat::Personality* p = name ? ioat::find_personality(name) : &ioat::kPersonalities[0];
    if (!p) {
        static const std::string known = [] {
            std::string m = "unknown personality; known:";
            for (const ioat::Personality& k : ioat::kPersonalities)
                m.append(" ").append(k.name);
            return m.append(" (the first is the default)");
        }();
        return known.c_str();
    }
    config->dmacap = p->dmacap;
    *device_id = p->device_id;
    return nullptr;
}

const char* dmalab_ioat_op_name(unsigned op)
{
    return op < ioat::kOpKinds ? ioat::op_name(static_cast<ioat::OpKind>(op)) : nullptr;
}

const char* dmalab_ioat_check(const DmalabIoatConfig* config)
{
    return ioat::Ioat::check(to_config(*config));
}

DmalabIoat* dmalab_ioat_new(const DmalabIoatConfig* config, const DmalabHost* host,
                            const char** why)
{
    ioat::Config cfg = to_config(*config);
    *why = ioat::Ioat::check(cfg);
    if (*why)
        return nullptr;
    return new (std::nothrow) DmalabIoat(cfg, *host);
}

unsigned dmalab_ioat_timer_count(const DmalabIoatConfig* config)
{
    return ioat::Ioat::timer_count(to_config(*config));
}

void dmalab_ioat_reset(DmalabIoat* dev)
{
    dev->model.reset(); // the fault policy's reset replays the plan
    dev->ats.clear();
    dev->trace.marks.clear();
    dev->front.doorbell.reset();
}

const char* dmalab_ioat_set_timing(DmalabIoat* dev, uint64_t bandwidth, uint64_t latency_ns,
                                   uint64_t jitter_ns)
{
    ioat::Config c = dev->model.config();
    c.bandwidth = bandwidth;
    c.latency_ns = latency_ns;
    c.jitter_ns = jitter_ns;
    if (const char* why = ioat::Ioat::check(c))
        return why;
    ioat::TimingPolicy::Params p = dev->model.timing().params();
    p.bandwidth = bandwidth;
    p.latency_ns = latency_ns;
    p.jitter_ns = jitter_ns;
    dev->model.timing().set_params(p);
    return nullptr;
}

uint64_t dmalab_ioat_longest_descriptor_ns(const DmalabIoatConfig* config)
{
    ioat::Config c = to_config(*config);
    return Pacer::longest_ns({c.bandwidth, c.latency_ns, c.jitter_ns, c.seed},
                             uint64_t{1} << c.xfercap_log);
}

uint8_t* dmalab_ioat_save(DmalabIoat* dev, uint32_t* len)
{
    StateWriter m;
    dev->model.save(m);
    return dev->front.save(m, len);
}

bool dmalab_ioat_load(DmalabIoat* dev, const uint8_t* data, uint32_t len)
{
    if (!dev->front.load(data, len, [&](StateReader& m) { return dev->model.load(m); }))
        return false;
    dev->ats.clear(); // a cache: the destination asks again
    return true;
}

char* dmalab_ioat_set_fault_plan(DmalabIoat* dev, const char* text, const char* id)
{
    if (char* why = dev->front.set_plan(text, ioat::fault_spec(dev->model.channel_count()), id))
        return why;
    dev->model.set_policy(text && *text ? &dev->fault_policy : nullptr);
    return nullptr;
}

void dmalab_ioat_set_race_table(DmalabIoat* dev, DmalabRaceTable* table, uint32_t device)
{
    dev->trace.marks.reattach(table, device);
}

void dmalab_ioat_stats(DmalabIoat* dev, int channel, DmalabIoatStats* out)
{
    *out = {};
    unsigned n = dev->model.channel_count();
    for (unsigned i = 0; i < n; i++) {
        if (channel >= 0 && static_cast<unsigned>(channel) != i)
            continue;
        ioat::ChannelStats s = dev->model.stats(i);
        out->descriptors += s.descriptors;
        out->bytes += s.bytes;
        out->errors += s.errors;
        out->interrupts += s.interrupts;
        for (unsigned k = 0; k < ioat::kOpKinds; k++) {
            out->op_descriptors[k] += s.ops[k].descriptors;
            out->op_bytes[k] += s.ops[k].bytes;
        }
    }
}

void dmalab_ioat_set_ats(DmalabIoat* dev, bool enabled, bool audit)
{
    dev->ats.set_audit(audit);
    if (enabled != dev->ats.enabled())
        dev->ats.set_enabled(enabled);
}

void dmalab_ioat_ats_invalidate(DmalabIoat* dev, uint64_t first, uint64_t last)
{
    if (!ioat::drops_invalidation(dev->injector, first, last, dev->host.now_ns()))
        dev->ats.invalidate(first, last);
}

void dmalab_ioat_ats_stats(DmalabIoat* dev, DmalabIoatAtsStats* out)
{
    const AtsMemory::Stats& s = dev->ats.stats();
    *out = {s.requests, s.refused, s.hits,  s.invalidations,
            s.dropped,  s.audits,  s.stale, s.untranslated};
}

} // extern "C"
