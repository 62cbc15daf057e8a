/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What dmalab's device glue shares with dmalab-vtd's.
 */
#ifndef DMALAB_VTD_H
#define DMALAB_VTD_H

#include "hw/pci/pci_device.h"

/*
 * Modelled table-walk time the device's DMA translations caused since its last
 * call, when dmalab-vtd is the machine's IOMMU; 0 otherwise.
 */
uint64_t dmalab_vtd_dma_cost(PCIDevice *dev);

#endif
