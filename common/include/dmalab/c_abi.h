// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers for the models' C ABIs: results handed to the C glue in malloc'd buffers, which
// it releases with free() or g_free() (GLib's allocator is malloc since 2.46).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dmalab/faults.h"
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

// A model's C trace table (a struct of optional callbacks) and the opaque pointer they
// take; a missing table or entry traces nothing.
template <typename Table> class CTrace
{
  public:
    CTrace(void* opaque, const Table* t) : opaque_(opaque)
    {
        if (t)
            t_ = *t;
    }

  protected:
    template <typename Fn, typename... Args> void call(Fn Table::*entry, Args... args) const
    {
        if (t_.*entry)
            (t_.*entry)(opaque_, args...);
    }

  private:
    void* opaque_;
    Table t_{};
};

// A fault injector's injections, each to a C trace callback (fn may be NULL).
struct InjectionTrace {
    void (*fn)(void* opaque, const char* rule, const char* kind, uint32_t unit,
               uint64_t key) = nullptr;
    void* opaque = nullptr;

    void listen(faults::Injector& injector)
    {
        injector.set_listener(
            [](void* self, const faults::Event& e, const faults::Rule& r) {
                auto* t = static_cast<InjectionTrace*>(self);
                if (t->fn)
                    t->fn(t->opaque, r.name.c_str(), faults::kind_name(r.kind), e.unit, e.key);
            },
            this);
    }
};

} // namespace dmalab

// The entry points both models' C ABIs have alike (vtd_core.h and ioat_core.h declare
// them): dmalab_<prefix>_free, _mmio_read, _mmio_write, _timer, _faults_injected and
// _fault_log, for a handle type with the model in member `model` and its `injector`.
// clang-format off
#define DMALAB_C_COMMON_ENTRIES(prefix, Handle, model)                                   \
    void dmalab_##prefix##_free(Handle* h) { delete h; }                                 \
    uint64_t dmalab_##prefix##_mmio_read(Handle* h, uint32_t offset, unsigned size)      \
    { return h->model.mmio_read(offset, size); }                                         \
    void dmalab_##prefix##_mmio_write(Handle* h, uint32_t offset, uint64_t value,        \
                                      unsigned size)                                     \
    { h->model.mmio_write(offset, value, size); }                                        \
    void dmalab_##prefix##_timer(Handle* h, unsigned timer) { h->model.timer(timer); }   \
    uint64_t dmalab_##prefix##_faults_injected(Handle* h) { return h->injector.total(); }\
    char* dmalab_##prefix##_fault_log(Handle* h)                                         \
    { return ::dmalab::malloc_string(::dmalab::faults::log_text(h->injector)); }
// clang-format on
