/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmalab-vtd is not built in: no IOMMU walk costs. */

#include "qemu/osdep.h"
#include "dmalab-vtd.h"

uint64_t dmalab_vtd_dma_cost(PCIDevice *dev)
{
    return 0;
}
