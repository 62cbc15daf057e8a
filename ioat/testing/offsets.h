// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-ioat's register offsets under Linux's names (drivers/dma/ioat/registers.h), for
// the code that drives the device as ioatdma does: the tests, the benchmarks and the fuzz
// target. Each derives from the register maps in registers.h, the one declaration.
#pragma once

#include "dmalab/ioat/spec/registers.h"

namespace dmalab::ioat
{

inline constexpr uint32_t CHANCNT = global_offset("CHANCNT");
inline constexpr uint32_t XFERCAP = global_offset("XFERCAP");
inline constexpr uint32_t GENCTRL = global_offset("GENCTRL");
inline constexpr uint32_t INTRCTRL = global_offset("INTRCTRL");
inline constexpr uint32_t ATTNSTATUS = global_offset("ATTNSTATUS");
inline constexpr uint32_t CBVER = global_offset("CBVER");
inline constexpr uint32_t PERPORTOFFSET = global_offset("PERPORTOFFSET");
inline constexpr uint32_t INTRDELAY = global_offset("INTRDELAY");
inline constexpr uint32_t CS_STATUS = global_offset("CS_STATUS");
inline constexpr uint32_t DMACAPABILITY = global_offset("DMACAPABILITY");
inline constexpr uint32_t DCAOFFSET = global_offset("DCAOFFSET");

inline constexpr uint32_t CHANCTRL = channel_offset("CHANCTRL");
inline constexpr uint32_t DMA_COMP = channel_offset("DMA_COMP");
inline constexpr uint32_t CHANCMD = channel_offset("CHANCMD");
inline constexpr uint32_t DMACOUNT = channel_offset("DMACOUNT");
inline constexpr uint32_t CHANSTS = channel_offset("CHANSTS");
inline constexpr uint32_t CHAINADDR = channel_offset("CHAINADDR");
inline constexpr uint32_t CHANCMP = channel_offset("CHANCMP");
inline constexpr uint32_t CDAR = channel_offset("CDAR");
inline constexpr uint32_t CHANERR = channel_offset("CHANERR");
inline constexpr uint32_t CHANERR_MSK = channel_offset("CHANERR_MSK");
inline constexpr uint32_t DCACTRL = channel_offset("DCACTRL");

} // namespace dmalab::ioat
