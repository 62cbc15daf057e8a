/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C ABI of the dmalab I/OAT model, for the QEMU glue in devices/. The model owns all
 * emulation logic; the caller supplies the host services of dmalab/host_c.h.
 */
#ifndef DMALAB_IOAT_CORE_H
#define DMALAB_IOAT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dmalab/host_c.h"
#include "dmalab/ioat/spec/pci.h"
#include "dmalab/race_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DmalabIoat DmalabIoat;

typedef struct DmalabIoatConfig {
    uint32_t channels;
    uint8_t xfercap_log;
    uint8_t cbver;
    uint32_t dmacap;
    uint64_t step_bytes;       /* data one channel moves in one step */
    uint32_t step_descriptors; /* descriptors one channel starts in one step */
    uint64_t step_gap_ns;      /* virtual time between steps of a busy channel */
    bool sync_start;           /* first step inside the doorbell write */
    uint64_t bandwidth;        /* bytes per second a channel moves, 0 for unlimited */
    uint64_t latency_ns;       /* added to every descriptor's completion time */
    uint64_t jitter_ns;        /* plus a uniform [0, jitter_ns] drawn from `seed` */
    uint64_t seed;
} DmalabIoatConfig;

/*
 * What the model does, for QEMU's trace events: functions the model calls and the program
 * that links it defines (QEMU: devices/ioat/ioat-host.c; dmalab's own tests and tools:
 * ioat/testing/trace_none.cc), so that a missing one is a link error. opaque is the
 * host's (DmalabHost.opaque); op is the operation's name as the counters have it ("copy",
 * "pq-16s" ...).
 */
/* A register access as the model took it: what a read returned or a write wrote. */
void dmalab_ioat_trace_mmio(void *opaque, bool write, uint32_t offset, unsigned size,
                            uint64_t value);
void dmalab_ioat_trace_decided(void *opaque, unsigned channel, uint64_t desc, const char *op,
                               uint64_t len, uint64_t data_at, uint64_t done_at, uint32_t fail);
void dmalab_ioat_trace_completed(void *opaque, unsigned channel, uint64_t desc, const char *op,
                                 uint64_t bytes);
void dmalab_ioat_trace_halted(void *opaque, unsigned channel, uint32_t chanerr, int dma_error,
                              uint64_t fault_addr);
void dmalab_ioat_trace_status(void *opaque, unsigned channel, uint64_t where, uint64_t status,
                              bool ok);
void dmalab_ioat_trace_stepped(void *opaque, unsigned channel, uint64_t bytes, unsigned descs,
                               uint64_t next_ns);
/* PCIe ATS: a device-TLB invalidation and the entries it took away; an audited hit the
 * IOMMU would no longer give (now_ok false: no translation now). */
void dmalab_ioat_trace_ats_invalidated(void *opaque, uint64_t first, uint64_t last,
                                       unsigned dropped);
void dmalab_ioat_trace_ats_stale(void *opaque, uint64_t page, uint64_t cached, bool now_ok,
                                 uint64_t now);

/* The operations the counters tell apart; dmalab_ioat_op_name() names each. */
enum { DMALAB_IOAT_OP_KINDS = 9 };

typedef struct DmalabIoatStats {
    uint64_t descriptors;
    uint64_t bytes;
    uint64_t errors;
    uint64_t interrupts;
    uint64_t op_descriptors[DMALAB_IOAT_OP_KINDS]; /* the first two by operation */
    uint64_t op_bytes[DMALAB_IOAT_OP_KINDS];
} DmalabIoatStats;

/* Fills *config with the model's defaults. */
void dmalab_ioat_default_config(DmalabIoatConfig *config);
/*
 * The part the device poses as (docs/ioat.rst, "Personalities"): sets config->dmacap and
 * *device_id for `name` (NULL: the default, skx). NULL when known; otherwise a message
 * naming the known ones.
 */
const char *dmalab_ioat_personality(const char *name, DmalabIoatConfig *config,
                                    uint16_t *device_id);
/* The name of operation `op` in counters ("copy", "xor", ...); NULL past the last. */
const char *dmalab_ioat_op_name(unsigned op);
/* Why the configuration is invalid, or NULL. */
const char *dmalab_ioat_check(const DmalabIoatConfig *config);
/* NULL when the configuration is invalid; *why then says which part. */
DmalabIoat *dmalab_ioat_new(const DmalabIoatConfig *config, const DmalabHost *host,
                            const char **why);
void dmalab_ioat_free(DmalabIoat *dev);
/* Timers the model uses: the host calls dmalab_ioat_timer(dev, i) when timer i expires. */
unsigned dmalab_ioat_timer_count(const DmalabIoatConfig *config);

/*
 * Offsets in BAR 0: the registers below DMALAB_IOAT_REG_WINDOW, the test-only fault doorbell
 * (docs/faults.rst) at DMALAB_IOAT_FAULT_DOORBELL. A write can call out (DMA, interrupts):
 * a doorbell starting a channel with sync_start, a release of a held rule.
 */
uint64_t dmalab_ioat_mmio_read(DmalabIoat *dev, uint32_t offset, unsigned size);
void dmalab_ioat_mmio_write(DmalabIoat *dev, uint32_t offset, uint64_t value, unsigned size);
void dmalab_ioat_timer(DmalabIoat *dev, unsigned timer);
void dmalab_ioat_reset(DmalabIoat *dev);

/*
 * Default-policy timing, changeable at run time (applies to descriptors started later).
 * NULL when applied; otherwise why not, and nothing changed.
 */
const char *dmalab_ioat_set_timing(DmalabIoat *dev, uint64_t bandwidth, uint64_t latency_ns,
                                   uint64_t jitter_ns);
/* The longest a single descriptor can take under the default policy (saturating). */
uint64_t dmalab_ioat_longest_descriptor_ns(const DmalabIoatConfig *config);

/* Migration: a malloc'ed blob (free with free()), and its loader. */
uint8_t *dmalab_ioat_save(DmalabIoat *dev, uint32_t *len);
bool dmalab_ioat_load(DmalabIoat *dev, const uint8_t *data, uint32_t len);

/*
 * Fault plans (docs/faults.rst). Applies the plan in `text` (NULL or "": none) to this
 * device, whose QOM id is `id` (NULL: none). NULL when applied; otherwise a message naming
 * the problem (free with free()), and the plan in force stays as it was.
 */
char *dmalab_ioat_set_fault_plan(DmalabIoat *dev, const char *text, const char *id);
/* Injections since the plan was set or the device reset. */
uint64_t dmalab_ioat_faults_injected(DmalabIoat *dev);
/* The newest injections, a line each, oldest first (free with free()). */
char *dmalab_ioat_fault_log(DmalabIoat *dev);

/*
 * The DMA race detector (docs/race-detector.rst): marks each descriptor in flight in
 * `table` (a mapping shared with the detector's plugin; NULL: stop), channel i in slot i.
 */
void dmalab_ioat_set_race_table(DmalabIoat *dev, DmalabRaceTable *table, uint32_t device);

/* Sum over all channels when channel < 0. */
void dmalab_ioat_stats(DmalabIoat *dev, int channel, DmalabIoatStats *out);

/*
 * PCIe Address Translation Services (docs/ioat.rst): with the capability's Enable bit set
 * the model caches translations in its device-TLB (the host's ats_translate answers its
 * requests) and reaches memory with translated requests. `audit` checks every hit against
 * a fresh request. The host calls this whenever the guest writes the bit, after a reset
 * and after loading state; the cache starts empty each time ATS is turned on.
 */
void dmalab_ioat_set_ats(DmalabIoat *dev, bool enabled, bool audit);
/* A device-TLB invalidation from the IOMMU, of the IOVAs [first, last]. */
void dmalab_ioat_ats_invalidate(DmalabIoat *dev, uint64_t first, uint64_t last);

typedef struct DmalabIoatAtsStats {
    uint64_t requests;      /* translation requests (misses) */
    uint64_t refused;       /* of those, answered with no translation */
    uint64_t hits;          /* accesses translated by the device-TLB */
    uint64_t invalidations; /* device-TLB invalidations received */
    uint64_t dropped;       /* entries they took away */
    uint64_t audits;        /* hits checked (audit on) */
    uint64_t stale;         /* hits the IOMMU would no longer give */
    uint64_t untranslated;  /* accesses sent untranslated: the page's answer had U */
} DmalabIoatAtsStats;
void dmalab_ioat_ats_stats(DmalabIoat *dev, DmalabIoatAtsStats *out);

#ifdef __cplusplus
}
#endif

#endif
