// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-dsa's PCI identity and BAR layout: Intel DSA 1.0 as Sapphire Rapids has it. Plain C,
// shared by the C++ model and the QEMU glue, so the numbers live in one place.
#ifndef DMALAB_DSA_PCI_H
#define DMALAB_DSA_PCI_H

enum {
    DMALAB_DSA_VENDOR_INTEL = 0x8086,
    DMALAB_DSA_DEVICE_SPR = 0x0b25,     // DSA 1.0, Sapphire Rapids: idxd binds as "dsa"
    DMALAB_DSA_DEVICE_IAX_SPR = 0x0cfe, // IAA 1.0 of the same part: for reference only
    // Base class 08h (system peripheral), subclass 80h (other), programming interface 00h.
    DMALAB_DSA_CLASS_CODE = 0x088000,

    // BAR 0 (64-bit memory): the registers (spec/registers.h) and the configuration tables
    // OFFSETS points at (spec/config.h). idxd maps the whole BAR. 64 KiB is what SPR's DSA
    // decodes; nothing in the architecture fixes it beyond holding what OFFSETS names.
    DMALAB_DSA_BAR_REGS = 0,
    DMALAB_DSA_BAR0_SIZE = 0x10000,
    // dmalab's test-only fault doorbell (docs/faults.rst), where dmalab-ioat has it: above
    // the largest configuration's tables, mapped only when asked for (fault-doorbell=on).
    DMALAB_DSA_FAULT_DOORBELL = 0x2000,
    DMALAB_DSA_FAULT_DOORBELL_SIZE = 0x20,

    // BAR 2 (64-bit memory): the WQ portals. WQ n owns 4 pages from n * 0x4000, one portal
    // each (idxd_get_wq_portal_full_offset): unlimited then limited, first for descriptors
    // whose interrupt handle names an MSI-X entry, then for IMS. A limited portal refuses a
    // shared-WQ submission once the WQ holds WQCFG.WQ_THRESHOLD descriptors; an unlimited one
    // admits up to WQCFG.WQ_SIZE. Any 64-byte aligned offset in the page is the same portal
    // (idxd walks the offset to spread write-combining buffers). Linux maps the limited MSI-X
    // portal of each WQ, for kernel and user clients alike.
    DMALAB_DSA_BAR_PORTALS = 2,
    DMALAB_DSA_PORTAL_SIZE = 0x1000,
    DMALAB_DSA_PORTALS_PER_WQ = 4,
    DMALAB_DSA_WQ_PORTAL_STRIDE = DMALAB_DSA_PORTALS_PER_WQ * DMALAB_DSA_PORTAL_SIZE,
    DMALAB_DSA_PORTAL_UNLIMITED_MSIX = 0x0000,
    DMALAB_DSA_PORTAL_LIMITED_MSIX = 0x1000,
    DMALAB_DSA_PORTAL_UNLIMITED_IMS = 0x2000,
    DMALAB_DSA_PORTAL_LIMITED_IMS = 0x3000,
    // SPR's DSA: 8 WQs, so BAR 2 spans 8 * 16 KiB.
    DMALAB_DSA_SPR_WQS = 8,
    DMALAB_DSA_BAR2_SIZE = DMALAB_DSA_SPR_WQS * DMALAB_DSA_WQ_PORTAL_STRIDE,
    DMALAB_DSA_SUBMISSION_SIZE = 64, // one MOVDIR64B or ENQCMD(S) store: a descriptor
};

#endif
