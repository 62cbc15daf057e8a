// SPDX-License-Identifier: GPL-2.0-or-later
// The parts dmalab-ioat can pose as: a PCI device ID and the DMACAPABILITY bits that go
// with it. Linux's ioatdma decides from the ID which operations it keeps
// (ioat3_dma_probe(), drivers/dma/ioat/init.c, v6.1), so the two are chosen together.
#pragma once

#include <cstdint>
#include <string_view>

#include "dmalab/ioat/spec/pci.h"
#include "dmalab/ioat/spec/registers.h"

namespace dmalab::ioat
{

struct Personality {
    std::string_view name;
    uint16_t device_id;
    uint32_t dmacap;
};

inline constexpr Personality kPersonalities[] = {
    // Xeon Scalable CBDMA (the default): is_xeon_cb32() clears XOR, PQ and RAID16SS whatever
    // DMACAPABILITY says, and with neither left the channels are DMA_PRIVATE. Linux's VFIO
    // selftests' CBDMA driver expects this ID.
    {"skx", DMALAB_IOAT_DEVICE_SKX, 0},
    // Atom C2000 "BWD0": neither is_xeon_cb32() nor is_bwd_noraid(), so XOR, PQ and the
    // 16-source forms stay and async_tx (md RAID) offloads to it. No DWBES: with it,
    // ioat_intr_quirk() masks the P/Q validation bits in CHANERR_MSK and Linux reads
    // write-back status only for PQ_VAL (desc_get_errstat(), dma.c), so an XOR_VAL
    // mismatch would go unreported.
    {"bwd", DMALAB_IOAT_DEVICE_BWD0, CAP_FILL_BLOCK | CAP_XOR | CAP_PQ | CAP_RAID16SS},
};

constexpr const Personality* find_personality(std::string_view name)
{
    for (const Personality& p : kPersonalities)
        if (p.name == name)
            return &p;
    return nullptr;
}

} // namespace dmalab::ioat
