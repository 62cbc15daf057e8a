// SPDX-License-Identifier: GPL-2.0-or-later
// The shared trace point of the models' C ABI (host_c.h) for programs without QEMU's
// trace backend: dmalab's own tests, benchmarks and fuzzers trace nothing.

#include "dmalab/host_c.h"

extern "C" void dmalab_trace_injected(void*, const char*, const char*, const char*, uint32_t,
                                      uint64_t)
{
}
