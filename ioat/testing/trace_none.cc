// SPDX-License-Identifier: GPL-2.0-or-later
// The I/OAT model's trace points (ioat_core.h) for programs without QEMU's trace
// backend: dmalab's own tests, benchmarks and fuzzers trace nothing.

#include "dmalab/ioat_core.h"

extern "C" {

void dmalab_ioat_trace_mmio(void*, bool, uint32_t, unsigned, uint64_t) {}

void dmalab_ioat_trace_decided(void*, unsigned, uint64_t, const char*, uint64_t, uint64_t, uint64_t,
                               uint32_t)
{
}

void dmalab_ioat_trace_completed(void*, unsigned, uint64_t, const char*, uint64_t) {}

void dmalab_ioat_trace_halted(void*, unsigned, uint32_t, int, uint64_t) {}

void dmalab_ioat_trace_status(void*, unsigned, uint64_t, uint64_t, bool) {}
void dmalab_ioat_trace_stepped(void*, unsigned, uint64_t, unsigned, uint64_t) {}
void dmalab_ioat_trace_ats_invalidated(void*, uint64_t, uint64_t, unsigned) {}
void dmalab_ioat_trace_ats_stale(void*, uint64_t, uint64_t, bool, uint64_t) {}

} // extern "C"
