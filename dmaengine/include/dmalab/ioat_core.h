/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C ABI of the dmalab I/OAT model, for the QEMU glue in devices/. The model owns all
 * emulation logic; the caller supplies guest-memory access, time and interrupts.
 */
#ifndef DMALAB_IOAT_CORE_H
#define DMALAB_IOAT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DmalabIoat DmalabIoat;

typedef struct DmalabIoatConfig {
    uint32_t channels;
    uint8_t xfercap_log;
    uint8_t cbver;
    uint32_t dmacap;
    uint64_t step_bytes;
    uint32_t step_descriptors;
    uint64_t bandwidth;  /* bytes per second a channel moves, 0 for unlimited */
    uint64_t latency_ns; /* added to every descriptor's completion time */
} DmalabIoatConfig;

typedef struct DmalabIoatHost {
    void* opaque;
    /* Whole-range guest accesses through the device's DMA address space; false on failure. */
    bool (*dma_read)(void* opaque, uint64_t addr, void* buf, size_t len);
    bool (*dma_write)(void* opaque, uint64_t addr, const void* buf, size_t len);
    /* Direct mapping: NULL if not mappable; *len shrinks to the contiguous part mapped. */
    void* (*dma_map)(void* opaque, uint64_t addr, size_t* len, bool is_write);
    void (*dma_unmap)(void* opaque, void* host, size_t len, bool is_write, size_t accessed);
    uint64_t (*now_ns)(void* opaque);
    /* Call dmalab_ioat_run() at or after when_ns. */
    void (*schedule_at)(void* opaque, uint64_t when_ns);
    void (*raise_irq)(void* opaque, unsigned vector);
} DmalabIoatHost;

typedef struct DmalabIoatStats {
    uint64_t descriptors;
    uint64_t bytes;
    uint64_t errors;
    uint64_t interrupts;
} DmalabIoatStats;

/* Fills *config with the model's defaults. */
void dmalab_ioat_default_config(DmalabIoatConfig* config);
/* NULL when the configuration is invalid; *why then says which part. */
DmalabIoat* dmalab_ioat_new(const DmalabIoatConfig* config, const DmalabIoatHost* host,
                            const char** why);
void dmalab_ioat_free(DmalabIoat* dev);

uint64_t dmalab_ioat_mmio_read(DmalabIoat* dev, uint32_t offset, unsigned size);
void dmalab_ioat_mmio_write(DmalabIoat* dev, uint32_t offset, uint64_t value, unsigned size);
/* The scheduled step. */
void dmalab_ioat_run(DmalabIoat* dev);
void dmalab_ioat_reset(DmalabIoat* dev);

/* Sum over all channels when channel < 0. */
void dmalab_ioat_stats(DmalabIoat* dev, int channel, DmalabIoatStats* out);
/* MMIO window the model decodes (registers only; the MSI-X table is the glue's). */
uint32_t dmalab_ioat_register_window(void);

#ifdef __cplusplus
}
#endif

#endif
