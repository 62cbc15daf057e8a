// SPDX-License-Identifier: GPL-2.0-or-later
// Bulk data movement between two guest ranges: mapped directly where both sides are RAM,
// through a small bounce buffer where one is not (device memory, or a range that fails, so
// the failure is found and reported).
#pragma once

#include <cstdint>
#include <functional>

#include "dmalab/dma_memory.h"

namespace dmalab
{

struct CopyResult {
    enum Side { None, Source, Destination };
    uint64_t bytes = 0; // moved, in order from the start, before any failure
    Side failed = None;
    DmaResult error;      // what failed, with failed != None
    bool stopped = false; // `alive` turned false: the caller's state changed under it
};

// Copies up to `len` bytes from src to dst. Each piece is translated once, when it moves, so
// a range that turns unreachable midway fails there with the bytes before it moved. `alive`
// is asked after every host call; when it answers false the copy stops at once. Overlapping
// ranges give an unspecified result, as on the hardware. The caller has checked that neither
// range wraps past 2^64.
CopyResult copy(DmaMemory& mem, const MemAttrs& attrs, uint64_t dst, uint64_t src, uint64_t len,
                const std::function<bool()>& alive);

} // namespace dmalab
