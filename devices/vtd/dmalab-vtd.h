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

/*
 * pasid below: the request's PASID, or DMALAB_NO_PASID for none (a request
 * with one is refused: dmalab-vtd offers no PASIDs yet). These two paths
 * carry it; DMA through the device's IOMMU region has none.
 */
#define DMALAB_NO_PASID 0xffffffffu

/*
 * For a DMA engine that knows how much it is about to move: translates the
 * pages of [iova, iova + *len) through dmalab-vtd, each as the unit would
 * translate it for a DMA access (faults recorded), and returns true with the
 * guest-physical address of iova and, in *len, how many bytes from there are
 * one contiguous run. False when dmalab-vtd does not translate the range for
 * this device (it is not the IOMMU, translation is off, the range touches the
 * interrupt window) and the caller takes the ordinary path; true with *len 0
 * when the first page faults.
 */
bool dmalab_vtd_dma_run(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                        bool is_write, uint64_t *gpa, uint64_t *len);

/*
 * A PCIe ATS translation request of dev's for the 4 KiB page at iova, for a
 * write or a read, answered by dmalab-vtd's unit (translation on or off):
 * true with *result DMALAB_DMA_OK and the page's translated address in *addr,
 * or with *untranslated_only set (the interrupt window: the completion's
 * R=0, W=1, U=1) and *addr the page itself, not to be used as a translation;
 * true with *result DMALAB_DMA_UNASSIGNED when the answer does not allow the
 * access. False, touching nothing, when dmalab-vtd is not the IOMMU or dev's
 * bus mastering is off: the caller answers as before.
 */
bool dmalab_vtd_ats_request(PCIDevice *dev, uint32_t pasid, uint64_t iova,
                            bool is_write, uint8_t *result, uint64_t *addr,
                            bool *untranslated_only);

#endif
