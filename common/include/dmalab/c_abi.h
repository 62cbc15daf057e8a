// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers for the models' C ABIs: results handed to the C glue in malloc'd buffers, which
// it releases with free() or g_free() (GLib's allocator is malloc since 2.46).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dmalab/faults.h"
#include "dmalab/host_c.h"
#include "dmalab/state.h"

namespace dmalab
{

// The writer's bytes; nullptr when out of memory.
inline uint8_t* malloc_copy(const StateWriter& w, uint32_t* len)
{
    auto* out = static_cast<uint8_t*>(std::malloc(w.bytes.empty() ? 1 : w.bytes.size()));
    if (!out)
        return nullptr;
    std::memcpy(out, w.bytes.data(), w.bytes.size());
    *len = static_cast<uint32_t>(w.bytes.size());
    return out;
}

// A NUL-terminated copy; nullptr when out of memory.
inline char* malloc_string(const std::string& s)
{
    auto* out = static_cast<char*>(std::malloc(s.size() + 1));
    if (out)
        std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

// Reports a fault injector's injections to the C trace point dmalab_trace_injected.
struct InjectionTrace {
    void* opaque = nullptr;
    const char* device = "";

    void listen(faults::Injector& injector)
    {
        injector.set_listener(
            [](void* self, const faults::Event& e, const faults::Rule& r) {
                auto* t = static_cast<InjectionTrace*>(self);
                dmalab_trace_injected(t->opaque, t->device, r.name.c_str(),
                                      faults::kind_name(r.kind), e.unit, e.key);
            },
            this);
    }
};

} // namespace dmalab

// The entry points both models' C ABIs have alike (vtd_core.h and ioat_core.h declare
// them): dmalab_<prefix>_free, _timer, _faults_injected and _fault_log, for a handle type
// with the model in member `model` and its `injector`.
// clang-format off
#define DMALAB_C_COMMON_ENTRIES(prefix, Handle, model)                                   \
    void dmalab_##prefix##_free(Handle* h) { delete h; }                                 \
    void dmalab_##prefix##_timer(Handle* h, unsigned timer) { h->model.timer(timer); }   \
    uint64_t dmalab_##prefix##_faults_injected(Handle* h) { return h->injector.total(); }\
    char* dmalab_##prefix##_fault_log(Handle* h)                                         \
    { return ::dmalab::malloc_string(::dmalab::faults::log_text(h->injector)); }
// clang-format on
