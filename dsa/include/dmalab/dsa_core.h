/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C ABI of the dmalab Intel DSA 1.0 model, for the QEMU glue in devices/dsa/. The model owns
 * all emulation logic; the caller supplies the host services of dmalab/host_c.h.
 */
#ifndef DMALAB_DSA_CORE_H
#define DMALAB_DSA_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dmalab/dsa/spec/pci.h"
#include "dmalab/host_c.h"
#include "dmalab/race_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DmalabDsa DmalabDsa;

/* The geometry and timing (dmalab::dsa::Config, device.h, says what each does). */
typedef struct DmalabDsaConfig {
    uint32_t wqs;
    uint32_t engines;
    uint32_t groups;
    uint32_t total_wq_size;
    uint32_t msix_vectors;
    uint8_t max_xfer_shift;
    uint8_t max_batch_shift;
    uint8_t read_buffers;
    bool int_handles;
    uint64_t opcap;
    uint64_t command_ns;
    uint64_t command_jitter_ns;
    uint64_t seed;
    uint64_t bandwidth; /* bytes per second over every range a descriptor touches */
    uint64_t latency_ns;
    uint64_t jitter_ns;
    uint64_t step_bytes;
    uint32_t step_descriptors;
    uint64_t step_gap_ns;
    bool sync_start;
    /* Not the model's: BAR 0 + DMALAB_DSA_FAULT_DOORBELL is the test-only fault doorbell. */
    bool fault_doorbell;
} DmalabDsaConfig;

/* The model's counters since it was created (device.h, Counters). */
typedef struct DmalabDsaCounters {
    uint64_t commands;
    uint64_t command_errors;
    uint64_t swerrs;
    uint64_t swerr_overflows;
    uint64_t halts;
    uint64_t interrupts;
    uint64_t refused_writes;
    uint64_t submitted;
    uint64_t dropped;
    uint64_t aborted;
    uint64_t descriptors;
    uint64_t descriptor_errors;
    uint64_t bytes;
    uint64_t batches;
    uint64_t records;
} DmalabDsaCounters;

/*
 * What the model does, for QEMU's trace events: functions the model calls and the program
 * that links it defines (QEMU: devices/dsa/dsa-host.c; dmalab's own tests:
 * dsa/testing/trace_none.cc). opaque is the host's (DmalabHost.opaque).
 */
void dmalab_dsa_trace_command(void *opaque, bool done, unsigned cmd, uint32_t operand,
                              unsigned err);
void dmalab_dsa_trace_submitted(void *opaque, unsigned wq, unsigned opcode);
void dmalab_dsa_trace_dropped(void *opaque, unsigned wq, const char *why);
void dmalab_dsa_trace_completed(void *opaque, unsigned wq, unsigned opcode, unsigned status,
                                uint64_t done);
void dmalab_dsa_trace_record(void *opaque, unsigned wq, uint64_t addr, unsigned status, bool ok);
void dmalab_dsa_trace_swerr(void *opaque, unsigned error, int wq, bool recorded);
void dmalab_dsa_trace_halted(void *opaque, unsigned reset_type);
void dmalab_dsa_trace_refused(void *opaque, uint32_t offset);

/* Fills *config with the model's defaults (Sapphire Rapids' DSA). */
void dmalab_dsa_default_config(DmalabDsaConfig *config);
/* Why the configuration is invalid, or NULL. */
const char *dmalab_dsa_check(const DmalabDsaConfig *config);
/* NULL when the configuration is invalid; *why then says which part. */
DmalabDsa *dmalab_dsa_new(const DmalabDsaConfig *config, const DmalabHost *host,
                          const char **why);
void dmalab_dsa_free(DmalabDsa *dev);
/* Timers the model uses: the host calls dmalab_dsa_timer(dev, i) when timer i expires. */
unsigned dmalab_dsa_timer_count(const DmalabDsaConfig *config);
/* BAR 2's size for this configuration (a power of two). */
uint64_t dmalab_dsa_portals_size(const DmalabDsaConfig *config);

/* BAR 0: registers and configuration tables, any size at any offset. */
uint64_t dmalab_dsa_mmio_read(DmalabDsa *dev, uint32_t offset, unsigned size);
void dmalab_dsa_mmio_write(DmalabDsa *dev, uint32_t offset, uint64_t value, unsigned size);
/* BAR 2: the WQ portals. A descriptor is eight ascending 8-byte writes (MOVDIR64B). */
uint64_t dmalab_dsa_portal_read(DmalabDsa *dev, uint32_t offset, unsigned size);
void dmalab_dsa_portal_write(DmalabDsa *dev, uint32_t offset, uint64_t value, unsigned size);
void dmalab_dsa_timer(DmalabDsa *dev, unsigned timer);
/* Power-on state (FLR too); Bus Master Enable reads as off until set again. */
void dmalab_dsa_reset(DmalabDsa *dev);
/* The PCI command register's Bus Master Enable, which Enable Device requires. */
void dmalab_dsa_set_bus_master(DmalabDsa *dev, bool on);

/* Migration: a malloc'ed blob (free with free()), and its loader. */
uint8_t *dmalab_dsa_save(DmalabDsa *dev, uint32_t *len);
bool dmalab_dsa_load(DmalabDsa *dev, const uint8_t *data, uint32_t len);

void dmalab_dsa_counters(DmalabDsa *dev, DmalabDsaCounters *out);

/*
 * Fault plans (docs/faults.rst). Applies the plan in `text` (NULL or "": none) to this
 * device, whose qdev id is `id`: NULL, or why the plan is refused (malloc'd; free it).
 */
char *dmalab_dsa_set_fault_plan(DmalabDsa *dev, const char *text, const char *id);
/* Injections since the plan was set or the device reset. */
uint64_t dmalab_dsa_faults_injected(DmalabDsa *dev);
/* The newest injections, a line each (malloc'd; free it). */
char *dmalab_dsa_fault_log(DmalabDsa *dev);
/*
 * The DMA race detector (docs/race-detector.rst): marks each Memory Move, Dualcast and Copy
 * with CRC in flight in `table` (NULL: none), slot = engine, as device `device`.
 */
void dmalab_dsa_set_race_table(DmalabDsa *dev, DmalabRaceTable *table, uint32_t device);
/* Why the model's state breaks an invariant the device keeps, or NULL (for tests). */
const char *dmalab_dsa_invariant_violation(DmalabDsa *dev);

#ifdef __cplusplus
}
#endif

#endif
