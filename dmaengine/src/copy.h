// SPDX-License-Identifier: GPL-2.0-or-later
// Bulk data movement between two guest ranges, mapped directly where possible.
#pragma once

#include <cstdint>

#include "dmalab/dma_memory.h"

namespace dmalab::ioat
{

struct CopyResult {
    enum Failed { None, Source, Destination };
    Failed failed = None;
    uint64_t bytes = 0; // moved before any failure
};

// Copies len bytes from src to dst. Proceeds in mapped chunks, source first, so a source that
// cannot be read leaves the destination untouched from that chunk on. The result for
// overlapping ranges is unspecified, as it is for the hardware.
CopyResult copy(DmaMemory& mem, uint64_t dst, uint64_t src, uint64_t len);

} // namespace dmalab::ioat
