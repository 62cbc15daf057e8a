// SPDX-License-Identifier: GPL-2.0-or-later
// The C host callbacks (host_c.h) seen through the models' C++ interfaces.
#pragma once

#include "dmalab/ats_memory.h"
#include "dmalab/dma_memory.h"
#include "dmalab/host_c.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/timers.h"

namespace dmalab
{

static_assert(static_cast<int>(DmaError::None) == DMALAB_DMA_OK);
static_assert(static_cast<int>(DmaError::Unassigned) == DMALAB_DMA_UNASSIGNED);
static_assert(static_cast<int>(DmaError::IommuFault) == DMALAB_DMA_IOMMU_FAULT);
static_assert(static_cast<int>(DmaError::TargetError) == DMALAB_DMA_TARGET_ERROR);
static_assert(static_cast<int>(DmaError::Wrap) == DMALAB_DMA_WRAP);

class HostAdapter final : public DmaMemory,
                          public AtsPort,
                          public Timers,
                          public Interrupts,
                          public Log
{
  public:
    explicit HostAdapter(const DmalabHost& h) : h_(h) {}

    DmaResult read(uint64_t addr, void* buf, size_t len, const MemAttrs& a) override
    {
        DmalabMemAttrs ca = to_c(a);
        return from_c(h_.dma_read(h_.opaque, addr, buf, len, &ca));
    }
    DmaResult write(uint64_t addr, const void* buf, size_t len, const MemAttrs& a) override
    {
        DmalabMemAttrs ca = to_c(a);
        return from_c(h_.dma_write(h_.opaque, addr, buf, len, &ca));
    }
    Mapping map(uint64_t addr, size_t len, Access dir, const MemAttrs& a) override
    {
        DmalabMemAttrs ca = to_c(a);
        size_t n = len;
        void* p = h_.dma_map ? h_.dma_map(h_.opaque, addr, &n, dir == Access::Write, &ca) : nullptr;
        if (!p || n == 0)
            return {};
        return {p, n};
    }
    void unmap(const Mapping& m, Access dir, size_t accessed) override
    {
        h_.dma_unmap(h_.opaque, m.host, m.len, dir == Access::Write, accessed);
    }
    uint64_t take_cost() override { return h_.dma_cost ? h_.dma_cost(h_.opaque) : 0; }
    Reply translate(uint64_t page, Access dir, const MemAttrs& a) override
    {
        if (!h_.ats_translate)
            return {};
        DmalabMemAttrs ca = to_c(a);
        Reply r;
        uint8_t e = h_.ats_translate(h_.opaque, page, dir == Access::Write, &ca, &r.addr,
                                     &r.untranslated_only);
        r.error = e <= DMALAB_DMA_WRAP ? static_cast<DmaError>(e) : DmaError::TargetError;
        return r;
    }
    uint64_t now_ns() const override { return h_.clock->now_ns(h_.clock_opaque); }
    void arm(unsigned timer, uint64_t when_ns) override
    {
        h_.clock->timer_arm(h_.clock_opaque, timer, when_ns);
    }
    void cancel(unsigned timer) override { h_.clock->timer_cancel(h_.clock_opaque, timer); }
    bool notify(unsigned vector) override { return h_.notify && h_.notify(h_.opaque, vector); }
    bool set_level(bool asserted) override
    {
        return h_.set_level && h_.set_level(h_.opaque, asserted);
    }
    bool send_msi(uint64_t address, uint32_t data, const MemAttrs& a) override
    {
        DmalabMemAttrs ca = to_c(a);
        return h_.send_msi && h_.send_msi(h_.opaque, address, data, &ca);
    }
    void message(LogKind kind, const char* text) override
    {
        h_.log(h_.opaque, kind == LogKind::GuestError ? DMALAB_LOG_GUEST_ERROR : DMALAB_LOG_UNIMP,
               text);
    }

  private:
    static DmalabMemAttrs to_c(const MemAttrs& a)
    {
        return {a.requester_id, a.pasid, a.stream, a.translated};
    }
    static DmaResult from_c(const DmalabDmaResult& r)
    {
        DmaError e =
            r.error <= DMALAB_DMA_WRAP ? static_cast<DmaError>(r.error) : DmaError::TargetError;
        return {e, r.fault_reason, r.fault_addr, r.done};
    }

    DmalabHost h_;
};

} // namespace dmalab
