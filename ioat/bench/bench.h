// SPDX-License-Identifier: GPL-2.0-or-later
// What the model's benchmarks share: driving its timers to the end of a batch.
#pragma once

#include <algorithm>

#include "../../common/testing/fake_memory.h"
#include "dmalab/ioat/device.h"

namespace dmalab::ioat::bench
{

// Runs the model's timers until none is pending, each at the time it asked for.
inline void drain_timers(Ioat& dev, dmalab::testing::FakeTimers& timers)
{
    while (auto next = timers.next()) {
        timers.pending.erase(next->first);
        timers.now = std::max(timers.now, next->second);
        dev.timer(next->first);
    }
}

} // namespace dmalab::ioat::bench
