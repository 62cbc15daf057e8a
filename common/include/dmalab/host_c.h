/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host interfaces of every dmalab model, as a C ABI for QEMU's glue: guest memory with
 * results, timers, interrupts and logging. The C++ side is the other headers of
 * common/include/dmalab; the adapter between the two is host_adapter.h.
 */
#ifndef DMALAB_HOST_C_H
#define DMALAB_HOST_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DMALAB_DMA_OK = 0,
    DMALAB_DMA_UNASSIGNED = 1,
    DMALAB_DMA_IOMMU_FAULT = 2,
    DMALAB_DMA_TARGET_ERROR = 3,
    DMALAB_DMA_WRAP = 4,
};

typedef struct DmalabDmaResult {
    uint8_t error;        /* DMALAB_DMA_* */
    uint8_t fault_reason; /* the IOMMU's reason code, with DMALAB_DMA_IOMMU_FAULT */
    uint64_t fault_addr;  /* first bus address that failed */
    uint64_t done;        /* bytes transferred before the failure */
} DmalabDmaResult;

typedef struct DmalabMemAttrs {
    uint16_t requester_id;
    uint32_t pasid;  /* ~0 for none */
    uint16_t stream; /* the model's engine (I/OAT: channel) */
    bool translated; /* PCIe ATS translated request: addr is a translation's, used as is */
} DmalabMemAttrs;

enum { DMALAB_LOG_GUEST_ERROR = 0, DMALAB_LOG_UNIMP = 1 };

/* Virtual time and the model's timers: an interface with its own opaque pointer. */
typedef struct DmalabClock {
    uint64_t (*now_ns)(void* opaque);
    void (*timer_arm)(void* opaque, unsigned timer, uint64_t when_ns);
    void (*timer_cancel)(void* opaque, unsigned timer);
} DmalabClock;

/* Entries marked optional may be NULL: the model then has none of that. */
typedef struct DmalabHost {
    void* opaque; /* for every callback but the clock's */
    DmalabDmaResult (*dma_read)(void* opaque, uint64_t addr, void* buf, size_t len,
                                const DmalabMemAttrs* attrs);
    DmalabDmaResult (*dma_write)(void* opaque, uint64_t addr, const void* buf, size_t len,
                                 const DmalabMemAttrs* attrs);
    /* Optional. Maps a prefix of plain RAM; NULL (and *len untouched) when the first byte
     * is not RAM. */
    void* (*dma_map)(void* opaque, uint64_t addr, size_t* len, bool is_write,
                     const DmalabMemAttrs* attrs);
    /* With dma_map. */
    void (*dma_unmap)(void* opaque, void* host, size_t len, bool is_write, size_t accessed);
    /* Optional: modelled upstream time of the accesses since the last call (IOMMU walks). */
    uint64_t (*dma_cost)(void* opaque);
    /* Optional: a PCIe ATS translation request for the 4 KiB page at `page`: DMALAB_DMA_OK
     * and the page's translated address in *addr, or the error that refused it. With
     * *untranslated_only set (the completion's U, false unless set; VT-d sets it for its
     * interrupt address range), the access is allowed with untranslated requests only and
     * *addr is not used: the model then reaches the page at `page`, untranslated. */
    uint8_t (*ats_translate)(void* opaque, uint64_t page, bool is_write,
                             const DmalabMemAttrs* attrs, uint64_t* addr, bool* untranslated_only);
    const DmalabClock* clock;
    void* clock_opaque;
    /* Optional: the function's own interrupt vectors (MSI-X, MSI) and pin. */
    bool (*notify)(void* opaque, unsigned vector);
    bool (*set_level)(void* opaque, bool asserted);
    /* Optional: a message the model addresses itself (VT-d's event interrupts). */
    bool (*send_msi)(void* opaque, uint64_t address, uint32_t data, const DmalabMemAttrs* attrs);
    void (*log)(void* opaque, int kind, const char* text);
} DmalabHost;

/*
 * A fault plan's rule fired (docs/faults.rst), in `device` ("dmalab-ioat", "dmalab-vtd");
 * unit and key as in the device's fault-log. A trace point the models call and the program
 * that links them defines (QEMU: devices/glue.c; dmalab's own tests and tools:
 * common/testing/trace_none.cc). opaque is the host's.
 */
void dmalab_trace_injected(void* opaque, const char* device, const char* rule, const char* kind,
                           uint32_t unit, uint64_t key);

#ifdef __cplusplus
}
#endif

#endif
