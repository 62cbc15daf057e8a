// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the DSA model against arbitrary guest behaviour (see program.h).
// Build: CXX=clang++ meson setup build-fuzz -Dfuzz=enabled -Dqemu=disabled
// Run:   build-fuzz/dsa/fuzz/dsa-fuzz -max_total_time=60

#include "program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    dmalab::dsa::fuzz::Program(data, size).run();
    return 0;
}
