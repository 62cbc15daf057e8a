// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA model's trace points (dsa_core.h) for programs without QEMU's trace backend:
// dmalab's own tests, benchmarks and fuzzers trace nothing.

#include "dmalab/dsa_core.h"

extern "C" {

void dmalab_dsa_trace_command(void*, bool, unsigned, uint32_t, unsigned) {}
void dmalab_dsa_trace_submitted(void*, unsigned, unsigned) {}
void dmalab_dsa_trace_dropped(void*, unsigned, const char*) {}
void dmalab_dsa_trace_completed(void*, unsigned, unsigned, unsigned, uint64_t) {}
void dmalab_dsa_trace_record(void*, unsigned, uint64_t, unsigned, bool) {}
void dmalab_dsa_trace_swerr(void*, unsigned, int, bool) {}
void dmalab_dsa_trace_halted(void*, unsigned) {}
void dmalab_dsa_trace_refused(void*, uint32_t) {}

} // extern "C"
