/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmalab-vtd is not built in: no IOMMU walk costs. */

#include "qemu/osdep.h"
#include "dmalab-vtd.h"

uint64_t dmalab_vtd_dma_cost(PCIDevice *dev)
{
    return 0;
}

bool dmalab_vtd_dma_run(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                        bool is_write, uint64_t *gpa, uint64_t *len)
{
    return false;
}

bool dmalab_vtd_ats_request(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                            bool is_write, uint8_t *result, uint64_t *addr,
                            bool *untranslated_only)
{
    return false;
}
