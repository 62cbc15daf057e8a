/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C ABI of the dmalab VT-d model, for the QEMU glue in devices/. The model owns all
 * emulation logic; the caller supplies the host services of dmalab/host_c.h (memory here is
 * physical memory: root, context and page tables, the invalidation queue, wait status) and
 * serialises every call (the model is not thread-safe).
 */
#ifndef DMALAB_VTD_CORE_H
#define DMALAB_VTD_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dmalab/host_c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DmalabVtd DmalabVtd;

enum { DMALAB_VTD_LRU = 0, DMALAB_VTD_FIFO = 1, DMALAB_VTD_RANDOM = 2 };
enum { DMALAB_VTD_REG_SIZE = 0x1000 };

typedef struct DmalabVtdConfig {
    uint8_t aw_bits; /* 39 or 48 */
    uint32_t iotlb_entries;
    uint32_t iotlb_ways;
    uint8_t replacement; /* DMALAB_VTD_LRU, _FIFO or _RANDOM */
    uint32_t context_entries;
    bool qi;
    bool pt;
    bool audit;
    uint64_t inv_desc_ns;
    uint64_t inv_page_ns;
    uint64_t wait_ns;
    uint32_t queue_step;
    uint64_t seed;
    uint64_t walk_read_ns;      /* modelled cost of one table-entry read on a miss */
    bool ir;                    /* interrupt remapping (ECAP.IR); needs qi */
    bool eim;                   /* with ir: extended interrupt mode (ECAP.EIM, x2APIC) */
    uint32_t iec_entries;       /* interrupt entry cache, a multiple of 4 */
    uint64_t iec_inv_ns;        /* modelled cost of an interrupt entry cache invalidation */
    bool dt;                    /* device-TLBs (ECAP.DT): TT=01 and device-TLB descriptors */
    bool cm;                    /* caching mode (CAP.CM): not-present pages cached */
    uint64_t devtlb_timeout_ns; /* a device-TLB invalidation times out (ITE) after; 0 never */
    bool sm;                    /* scalable mode (ECAP.SMTS): PASID tables; needs qi */
    bool fs;                    /* with sm: first-stage tables offered (ECAP.FLTS) */
    uint32_t pde_cache;         /* paging-structure caches: PDE entries (0: none), */
    uint32_t pdpe_cache;        /* PDPE entries and PML4E entries; each a multiple */
    uint32_t pml4e_cache;       /* of 4, at most 4096 */
} DmalabVtdConfig;

/*
 * What the unit does, for QEMU's trace events: functions the model calls and the program
 * that links it defines (QEMU: devices/vtd/vtd-host.c; dmalab's own tests and tools:
 * vtd/testing/trace_none.cc), so that a missing one is a link error. opaque is the
 * host's (DmalabHost.opaque).
 */
/* A register access as the unit took it: what a read returned or a write wrote. */
void dmalab_vtd_trace_mmio(void* opaque, bool write, uint32_t offset, unsigned size,
                           uint64_t value);
void dmalab_vtd_trace_fault(void* opaque, uint16_t sid, uint64_t iova, bool write, uint8_t reason,
                            bool recorded);
/* kind: 'c' context cache, 'i' IOTLB (also PASID-based), 'd' a device-TLB (did is then the
 * requester's source-id, am the log2 of the pages), 'p' the PASID cache (addr the PASID);
 * gran 1 global, 2 domain, 3 selective; for 'p' the descriptor's G: 0 domain, 1 PASID,
 * 3 global */
void dmalab_vtd_trace_invalidated(void* opaque, char kind, uint8_t gran, uint16_t did,
                                  uint64_t addr, unsigned am, uint64_t dropped, bool queued);
/* Not only a trace point: what an invalidation took away (vtd/unit.h, Observer::unmapped),
 * which QEMU's glue tells its IOMMU notifiers once its lock is dropped. */
void dmalab_vtd_unmapped(void* opaque, bool devtlb, uint16_t sid, uint64_t first, uint64_t last);
void dmalab_vtd_trace_wait_done(void* opaque, uint64_t modelled_ns, uint64_t achieved_ns);
void dmalab_vtd_trace_stale(void* opaque, uint16_t sid, uint64_t iova, uint64_t cached,
                            uint64_t now, uint8_t now_fault);
void dmalab_vtd_trace_queue_error(void* opaque, uint32_t head, uint64_t lo, uint64_t hi);
void dmalab_vtd_trace_queue_timeout(void* opaque, uint32_t head, uint16_t sid, uint32_t discarded);
/* An event message aimed outside the interrupt range was refused (not sent). */
void dmalab_vtd_trace_event_refused(void* opaque, bool fault, uint64_t address, uint32_t data);
/* An interrupt request: delivered as (out_address, out_data), remapped through entry
 * `index` or passed through, or blocked with `reason` (recorded or not). */
void dmalab_vtd_trace_interrupt(void* opaque, uint16_t sid, uint64_t address, uint32_t data,
                                bool ok, bool remapped, uint32_t index, uint64_t out_address,
                                uint32_t out_data, uint8_t reason, bool recorded);
/* An interrupt entry cache invalidation took effect. QEMU's glue also tells the platform's
 * IEC listeners (KVM's routes) once its lock is dropped. */
void dmalab_vtd_trace_iec_invalidated(void* opaque, bool global, uint32_t index, unsigned im,
                                      uint64_t dropped);
/* Interrupt remapping switched, or a table latched. */
void dmalab_vtd_trace_ir_state(void* opaque, bool enabled, uint64_t table, unsigned entries,
                               bool x2apic);

enum { DMALAB_VTD_QUERY = 0, DMALAB_VTD_READ = 1, DMALAB_VTD_WRITE = 2 };
/* The pasid of a request without a PASID. */
#define DMALAB_VTD_NO_PASID 0xffffffffu

typedef struct DmalabVtdTranslation {
    uint64_t iova; /* the request's page */
    uint64_t addr; /* its output address */
    uint64_t mask; /* page size - 1 */
    bool ok;
    bool translated; /* false: identity (translation off or pass-through) */
    bool read;
    bool write;
    uint8_t fault_reason;
    /* The interrupt address range 0xFEEx_xxxx: reached with untranslated requests only
     * (ATS's U); addr is no address to use. */
    bool untranslated_only;
} DmalabVtdTranslation;

void dmalab_vtd_default_config(DmalabVtdConfig* config);
/* Why the configuration is invalid, or NULL. */
const char* dmalab_vtd_check(const DmalabVtdConfig* config);
DmalabVtd* dmalab_vtd_new(const DmalabVtdConfig* config, const DmalabHost* host, const char** why);
void dmalab_vtd_free(DmalabVtd* unit);
unsigned dmalab_vtd_timer_count(void);

uint64_t dmalab_vtd_mmio_read(DmalabVtd* unit, uint32_t offset, unsigned size);
void dmalab_vtd_mmio_write(DmalabVtd* unit, uint32_t offset, uint64_t value, unsigned size);
void dmalab_vtd_timer(DmalabVtd* unit, unsigned timer);
void dmalab_vtd_reset(DmalabVtd* unit);

/* perm: DMALAB_VTD_READ | DMALAB_VTD_WRITE, or DMALAB_VTD_QUERY; pasid: the request's PASID or
 * DMALAB_VTD_NO_PASID (a request with one is refused: the unit offers none; vtd/unit.h). No
 * translation is given for the interrupt address range (!ok, untranslated_only), nor one
 * whose page covers it. */
DmalabVtdTranslation dmalab_vtd_translate(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                          uint64_t iova, unsigned perm);
/* A PCIe ATS translation request (vtd/unit.h, Unit::translation_request): for the interrupt
 * address range ok, untranslated_only, read false and write true (the completion's R=0, W=1,
 * U=1: the device writes there untranslated, as interrupt requests, and reads nothing);
 * elsewhere what dmalab_vtd_translate answers a query. */
DmalabVtdTranslation dmalab_vtd_translation_request(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                                    uint64_t iova);
bool dmalab_vtd_enabled(DmalabVtd* unit);
/* [iova, iova + len) page by page, each as dmalab_vtd_translate would (Unit::translate_run):
 * the first page's translation (iova, addr, mask and so on, for that page) and in *run how
 * many bytes from iova map to one contiguous run starting at addr + (iova - first.iova). */
DmalabVtdTranslation dmalab_vtd_translate_run(DmalabVtd* unit, uint16_t sid, uint32_t pasid,
                                              uint64_t iova, uint64_t len, unsigned perm,
                                              uint64_t* run);
/* Modelled walk time requests from `sid` caused since the last call (then 0 again). */
uint64_t dmalab_vtd_take_cost(DmalabVtd* unit, uint16_t sid);

/*
 * An interrupt request (a DWORD write of `data` to `address`) from `sid` (sid_known false:
 * no requester id, the entries' source checks are skipped). True with the message to
 * deliver in *out_address and *out_data, false when the unit blocks it (a fault, recorded
 * when `record`).
 */
bool dmalab_vtd_remap_interrupt(DmalabVtd* unit, uint16_t sid, bool sid_known, uint64_t address,
                                uint32_t data, bool record, uint64_t* out_address,
                                uint32_t* out_data);
bool dmalab_vtd_ir_enabled(DmalabVtd* unit);

/* NULL when applied; otherwise why not, and nothing changed. */
const char* dmalab_vtd_set_costs(DmalabVtd* unit, uint64_t desc_ns, uint64_t page_ns,
                                 uint64_t wait_ns, uint64_t iec_ns);
void dmalab_vtd_set_audit(DmalabVtd* unit, bool on);
/* On while something outside the unit keeps translations the host must tell of each
 * invalidation (QEMU's IOMMU notifiers): a queued wait then completes in a later call
 * than the invalidations before it, once the host has told them (vtd/unit.h, hold_waits). */
void dmalab_vtd_set_hold_waits(DmalabVtd* unit, bool on);

/* Counters by index, 0 .. count-1: a name and a value (see docs/vtd.rst). */
unsigned dmalab_vtd_counter_count(void);
const char* dmalab_vtd_counter_name(unsigned index);
uint64_t dmalab_vtd_counter(DmalabVtd* unit, unsigned index);
/* Remapped interrupts by requester, "BB:DD.F=N" words in the order the requesters were
 * first seen, then "other=N" when some were not kept apart (free with free()). */
char* dmalab_vtd_ir_requesters(DmalabVtd* unit);

/*
 * Fault plans (docs/faults.rst): applies the plan in `text` (NULL or "": none) to this unit,
 * whose QOM id is `id` (NULL: none). NULL when applied; otherwise a message naming the
 * problem (free with free()), and the plan in force stays as it was.
 */
char* dmalab_vtd_set_fault_plan(DmalabVtd* unit, const char* text, const char* id);
/* Injections since the plan was set or the unit reset. */
uint64_t dmalab_vtd_faults_injected(DmalabVtd* unit);
/* The newest injections, a line each, oldest first (free with free()). */
char* dmalab_vtd_fault_log(DmalabVtd* unit);

/* Migration: a malloc'ed blob (free with free()), and its loader. */
uint8_t* dmalab_vtd_save(DmalabVtd* unit, uint32_t* len);
bool dmalab_vtd_load(DmalabVtd* unit, const uint8_t* data, uint32_t len);

#ifdef __cplusplus
}
#endif

#endif
