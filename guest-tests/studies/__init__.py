# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab measure's studies, one module each: STUDIES maps a study's name to its Study."""

from studies import dma_api, iommu_flush, offload, swiotlb, udp, xdp

STUDIES = {
    "dma-api": dma_api.STUDY,
    "iommu-flush": iommu_flush.STUDY,
    "swiotlb": swiotlb.STUDY,
    "offload": offload.STUDY,
    "udp": udp.STUDY,
    "xdp": xdp.STUDY,
}
