// SPDX-License-Identifier: GPL-2.0-or-later
// C ABI adapter: turns the C host callbacks into the model's C++ interfaces.

#include "dmalab/ioat_core.h"

#include <new>

#include "dmalab/ioat/device.h"

using namespace dmalab;

struct DmalabIoat final : DmaMemory, Scheduler, InterruptSink {
    DmalabIoat(const ioat::Config& config, const DmalabIoatHost& h)
        : host(h), model(config, *this, *this, *this)
    {
    }

    bool read(uint64_t addr, void* buf, size_t len) override
    {
        return host.dma_read(host.opaque, addr, buf, len);
    }
    bool write(uint64_t addr, const void* buf, size_t len) override
    {
        return host.dma_write(host.opaque, addr, buf, len);
    }
    void* map(uint64_t addr, size_t* len, Access dir) override
    {
        return host.dma_map(host.opaque, addr, len, dir == Access::Write);
    }
    void unmap(void* p, size_t len, Access dir, size_t accessed) override
    {
        host.dma_unmap(host.opaque, p, len, dir == Access::Write, accessed);
    }
    uint64_t now_ns() const override { return host.now_ns(host.opaque); }
    void schedule_at(uint64_t when_ns) override { host.schedule_at(host.opaque, when_ns); }
    void raise(unsigned vector) override { host.raise_irq(host.opaque, vector); }

    DmalabIoatHost host;
    ioat::Ioat model;
};

static ioat::Config to_config(const DmalabIoatConfig& c)
{
    ioat::Config cfg;
    cfg.channels = c.channels;
    cfg.xfercap_log = c.xfercap_log;
    cfg.cbver = c.cbver;
    cfg.dmacap = c.dmacap;
    cfg.step_bytes = c.step_bytes;
    cfg.step_descriptors = c.step_descriptors;
    cfg.bandwidth = c.bandwidth;
    cfg.latency_ns = c.latency_ns;
    return cfg;
}

extern "C" {

void dmalab_ioat_default_config(DmalabIoatConfig* out)
{
    ioat::Config d;
    out->channels = d.channels;
    out->xfercap_log = d.xfercap_log;
    out->cbver = d.cbver;
    out->dmacap = d.dmacap;
    out->step_bytes = d.step_bytes;
    out->step_descriptors = d.step_descriptors;
    out->bandwidth = d.bandwidth;
    out->latency_ns = d.latency_ns;
}

DmalabIoat* dmalab_ioat_new(const DmalabIoatConfig* config, const DmalabIoatHost* host,
                            const char** why)
{
    ioat::Config cfg = to_config(*config);
    *why = ioat::Ioat::check(cfg);
    if (*why)
        return nullptr;
    return new (std::nothrow) DmalabIoat(cfg, *host);
}

void dmalab_ioat_free(DmalabIoat* dev)
{
    delete dev;
}

uint64_t dmalab_ioat_mmio_read(DmalabIoat* dev, uint32_t offset, unsigned size)
{
    return dev->model.mmio_read(offset, size);
}

void dmalab_ioat_mmio_write(DmalabIoat* dev, uint32_t offset, uint64_t value, unsigned size)
{
    dev->model.mmio_write(offset, value, size);
}

void dmalab_ioat_run(DmalabIoat* dev)
{
    dev->model.run();
}

void dmalab_ioat_reset(DmalabIoat* dev)
{
    dev->model.reset();
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
    }
}

uint32_t dmalab_ioat_register_window(void)
{
    return ioat::kMsixTableOffset;
}

} // extern "C"
