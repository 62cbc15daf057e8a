// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers for the models' C ABIs: results handed to the C glue in malloc'd buffers, which
// it releases with free() or g_free() (GLib's allocator is malloc since 2.46).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

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

} // namespace dmalab
