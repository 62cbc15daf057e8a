// SPDX-License-Identifier: GPL-2.0-or-later
// The host services a model instance reaches the world through, one set per instance; each
// model names it with its own observer type. All must outlive the model.
#pragma once

#include "dmalab/dma_memory.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/timers.h"

namespace dmalab
{

template <class Observer> struct ModelHost {
    DmaMemory& memory; // what the device's DMA reaches (for dmalab-vtd: untranslated memory)
    Timers& timers;
    Interrupts& irq;
    Log& log;
    Observer* observer = nullptr; // trace points and race marks, or none
};

} // namespace dmalab
