// SPDX-License-Identifier: GPL-2.0-or-later
// How a model interrupts. A PCI function signals numbered sources that the host delivers as
// MSI-X or MSI messages, or as the level of its INTx line; a unit that builds its own
// messages from registers (VT-d's fault and invalidation events) sends an address/data pair.
#pragma once

#include <cstdint>

#include "dmalab/dma_memory.h"

namespace dmalab
{

class Interrupts
{
  public:
    virtual ~Interrupts() = default;
    // Message source `vector` of the function: an MSI-X table entry, or with MSI its single
    // message. True when a message went out now; false when it was masked (left pending) or
    // the function has no message interrupts enabled.
    virtual bool notify(unsigned vector) = 0;
    // The function's shared interrupt level, for INTx. True when this raised the line (INTx
    // in use and the level went from low to high).
    virtual bool set_level(bool asserted) = 0;
    // A DWORD write of `data` to `address` in the interrupt range, as this requester. True
    // when it was delivered.
    virtual bool send_msi(uint64_t address, uint32_t data, const MemAttrs& attrs) = 0;
};

} // namespace dmalab
