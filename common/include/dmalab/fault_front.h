// SPDX-License-Identifier: GPL-2.0-or-later
// What a DMA engine's C ABI keeps for fault plans (docs/faults.rst): the injector its model
// asks, the test-only doorbell in a window of its BAR 0, and the trace of every injection.
// Migration saves them after the model's own state: the plan's counts, arms and generators,
// and the doorbell's selection (the plan itself is configuration: the destination has it).
#pragma once

#include <cstdint>
#include <string>

#include "dmalab/c_abi.h"
#include "dmalab/fault_doorbell.h"
#include "dmalab/faults.h"
#include "dmalab/state.h"

namespace dmalab
{

class FaultFront
{
  public:
    // `type` names the device in trace events; the doorbell sits at BAR 0 + `doorbell_at`.
    // release(opaque, rule) ends the holds of a released rule (the model's); it may call out.
    FaultFront(void* trace_opaque, Log& log, const char* type, const char* doorbell_name,
               uint32_t doorbell_at, faults::Doorbell::ReleaseHook release, void* opaque)
        : doorbell(injector, log, doorbell_name), at_(doorbell_at)
    {
        injected_ = {trace_opaque, type};
        injected_.listen(injector);
        doorbell.set_release_hook(release, opaque);
    }
    FaultFront(const FaultFront&) = delete;
    FaultFront& operator=(const FaultFront&) = delete;

    // Whether BAR 0's `offset` is the doorbell's (the glue maps it only when asked to).
    bool in_doorbell(uint32_t offset) const { return offset - at_ < faults::doorbell::kWindow; }
    uint64_t read(uint32_t offset, unsigned size) { return doorbell.read(offset - at_, size); }
    void write(uint32_t offset, uint64_t value, unsigned size)
    {
        doorbell.write(offset - at_, value, size);
    }

    // The plan in `text` (nullptr or "": none) for device `id`: nullptr, or why not (malloc).
    char* set_plan(const char* text, const faults::ModelSpec& spec, const char* id)
    {
        std::string err;
        if (!faults::apply_plan(injector, text, spec, id ? id : "", &err))
            return malloc_string(err);
        return nullptr;
    }

    // The model's state `model`, length first, then ours: a malloc'd blob.
    uint8_t* save(const StateWriter& model, uint32_t* len) const
    {
        StateWriter w;
        w.blob(model);
        injector.save(w);
        w.u32(doorbell.selected());
        return malloc_copy(w, len);
    }
    // The reverse: load_model(reader) takes the model's part.
    template <class F> bool load(const uint8_t* data, uint32_t len, F&& load_model)
    {
        StateReader r({data, len});
        StateReader m(r.blob());
        if (!r.ok() || !load_model(m) || !injector.load(r))
            return false;
        const uint32_t selected = r.u32();
        if (!r.finished())
            return false;
        doorbell.select(selected & 0xffff);
        return true;
    }

    faults::Injector injector;
    faults::Doorbell doorbell;

  private:
    uint32_t at_;
    InjectionTrace injected_;
};

} // namespace dmalab
