/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat's PCI identity and BAR0 layout. Plain C, shared by the C++ model and the
 * QEMU glue, so the numbers live in one place.
 */
#ifndef DMALAB_IOAT_PCI_H
#define DMALAB_IOAT_PCI_H

enum {
    DMALAB_IOAT_VENDOR_INTEL = 0x8086,
    DMALAB_IOAT_DEVICE_SKX = 0x2021,  /* Xeon Scalable: CB3.2 to Linux, DMA_PRIVATE */
    DMALAB_IOAT_DEVICE_BWD0 = 0x0c50, /* Atom C2000: CB3.3, keeps RAID offload */
    DMALAB_IOAT_REVISION = 0x04,

    /* BAR0: registers at 0, MSI-X table and PBA where CB3.3 parts keep them. */
    DMALAB_IOAT_BAR0_SIZE = 0x4000,
    DMALAB_IOAT_REG_WINDOW = 0x1000,
    DMALAB_IOAT_MSIX_TABLE = 0x1000,
    DMALAB_IOAT_MSIX_PBA = 0x1800,
    /* The test-only fault doorbell, mapped with fault-doorbell=on (docs/faults.rst). */
    DMALAB_IOAT_FAULT_DOORBELL = 0x2000,
    DMALAB_IOAT_FAULT_DOORBELL_SIZE = 0x20,
    DMALAB_IOAT_MAX_CHANNELS = 16,

    /* PCI Express extended configuration space. */
    DMALAB_IOAT_CFG_CHANERR_INT = 0x180,
    DMALAB_IOAT_CFG_CHANERRMSK_INT = 0x184,
    DMALAB_IOAT_CFG_END = 0x188,
};

#endif
