// SPDX-License-Identifier: GPL-2.0-or-later
// The VT-d model's trace points (vtd_core.h) for programs without QEMU's trace backend:
// dmalab's own tests, benchmarks and fuzzers trace nothing.

#include "dmalab/vtd_core.h"

extern "C" {

void dmalab_vtd_trace_mmio(void*, bool, uint32_t, unsigned, uint64_t) {}

void dmalab_vtd_trace_fault(void*, uint16_t, uint64_t, bool, uint8_t, bool) {}

void dmalab_vtd_trace_invalidated(void*, char, uint8_t, uint16_t, uint64_t, unsigned, uint64_t,
                                  bool)
{
}

void dmalab_vtd_unmapped(void*, bool, uint16_t, uint64_t, uint64_t) {}

void dmalab_vtd_trace_wait_done(void*, uint64_t, uint64_t) {}

void dmalab_vtd_trace_stale(void*, uint16_t, uint64_t, uint64_t, uint64_t, uint8_t) {}

void dmalab_vtd_trace_queue_error(void*, uint32_t, uint64_t, uint64_t) {}
void dmalab_vtd_trace_queue_timeout(void*, uint32_t, uint16_t, uint32_t) {}

void dmalab_vtd_trace_event_refused(void*, bool, uint64_t, uint32_t) {}

void dmalab_vtd_trace_interrupt(void*, uint16_t, uint64_t, uint32_t, bool, bool, uint32_t, uint64_t,
                                uint32_t, uint8_t, bool)
{
}

void dmalab_vtd_trace_iec_invalidated(void*, bool, uint32_t, unsigned, uint64_t) {}

void dmalab_vtd_trace_ir_state(void*, bool, uint64_t, unsigned, bool) {}

} // extern "C"
