// SPDX-License-Identifier: GPL-2.0-or-later
// A VT-d DMA-remapping unit in legacy (root/context table) or scalable mode (PASID tables,
// first- and second-stage tables): registers, second-level
// translation through a context cache and a set-associative IOTLB, interrupt remapping
// through an interrupt entry cache (when configured), register-based and queued
// invalidation that take modelled virtual time, fault recording and its events. Reaches the
// world only through common/'s host interfaces; not thread-safe (the caller serialises).
// The unit is made of parts named after the spec (vtd/src/parts.h); this is its face.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dmalab/dma_memory.h"
#include "dmalab/faults.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/model_host.h"
#include "dmalab/prng.h"
#include "dmalab/regbank.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"
#include "dmalab/vtd/spec/entries.h"
#include "dmalab/vtd/spec/registers.h"

namespace dmalab::vtd
{

enum class Replacement : uint8_t { Lru, Fifo, Random };

struct Config {
    uint8_t aw_bits = 48;         // 39 (3-level tables) or 48 (3- and 4-level)
    unsigned iotlb_entries = 512; // a multiple of iotlb_ways
    unsigned iotlb_ways = 8;
    Replacement replacement = Replacement::Lru;
    unsigned context_entries = 64; // context cache, a multiple of 4 (4-way)
    bool qi = true;                // advertise queued invalidation
    bool pt = true;                // advertise pass-through
    bool audit = false;            // check every IOTLB hit against the tables in memory
    // Run time (set_hold_waits): a wait descriptor never completes in the call that performed
    // an invalidation queued before it, so that the host tells copies of translations kept
    // outside the unit (QEMU's IOMMU notifiers: vhost, device-TLBs) before the guest sees
    // the wait's status. Off: the queue runs every due descriptor in one go.
    bool hold_waits = false;
    // Modelled cost of invalidation, in virtual nanoseconds: every descriptor (or register
    // command), every page a page-selective IOTLB invalidation names or every IOTLB entry a
    // wider one drops, and every wait descriptor.
    uint64_t inv_desc_ns = 200;
    uint64_t inv_page_ns = 10;
    uint64_t wait_ns = 500;
    // Queue descriptors completed in one timer step at most; the rest go on strictly later.
    unsigned queue_step = 64;
    uint64_t seed = 0; // random replacement
    // Modelled cost of one read of a root, context or paging entry on a cache miss. The
    // unit charges it to the requester (take_cost), so a DMA engine behind the unit can
    // add its IOTLB and context misses to its own timing.
    uint64_t walk_read_ns = 100;
    // Paging-structure caches (6.2.4): entries of the unit's caches of non-leaf paging
    // entries, tagged by domain (and PASID, and stage), one cache per level: PDEs (each
    // names a 2 MiB region's leaf table), PDPEs (1 GiB) and PML4Es (512 GiB). A walk starts
    // below the lowest level it finds cached, so a miss under a cached PDE reads one entry.
    // Page-selective IOTLB invalidations drop the entries covering their range unless they
    // carry the invalidation hint (IH: only leaves changed). Each a multiple of 4 (4-way),
    // at most 4096; 0 turns that level's cache off. The sizes are not published for any
    // Intel part: these are chosen.
    unsigned pde_cache = 32;
    unsigned pdpe_cache = 8;
    unsigned pml4e_cache = 4;
    // Interrupt remapping (ECAP.IR, chapter 5): off by default. With it, ECAP.EIM (x2APIC
    // destinations) unless eim is false. It needs queued invalidation: the interrupt entry
    // cache is invalidated only through the queue.
    bool ir = false;
    bool eim = true;
    unsigned iec_entries = 256; // interrupt entry cache, a multiple of 4 (4-way)
    uint64_t iec_inv_ns = 200;  // modelled cost of one interrupt entry cache invalidation
    // Device-TLBs (ECAP.DT, 6.5.2.5): context entries may say TT=01 (device-TLB enabled),
    // and device-TLB invalidation descriptors are accepted, each costing inv_desc_ns
    // whatever its range. Off by default; needs queued invalidation, the only way to
    // invalidate a device-TLB.
    bool dt = false;
    // The device-TLB invalidation completion time-out (6.5.2.5 and the Invalidation
    // Time-out Error, FSTS.ITE): a device-TLB descriptor that would take longer (a fault
    // plan's delay-invalidation) times out after this long instead. 0: never.
    uint64_t devtlb_timeout_ns = 0;
    // Caching mode (CAP.CM, 6.1): the unit may cache not-present entries, so software
    // invalidates after making an entry present (Linux then also runs strict). With it the
    // unit does: a translation refused because a paging entry is not present leaves a
    // negative 4 KiB IOTLB entry that refuses the page until an invalidation drops it.
    bool cm = false;
    // Scalable mode (ECAP.SMTS, chapter 9.2-9.7): RTADDR.TTM=01 root tables, PASID
    // directories and tables, 256-bit queued descriptors, PASID-cache and PASID-based IOTLB
    // invalidation; second-stage and pass-through PASID entries (ECAP.SLTS, with PT), and
    // first-stage ones (ECAP.FLTS) when fs is on. Needs queued invalidation. Requests
    // carry no PASID: each uses its context entry's RID_PASID.
    bool sm = false;
    bool fs = true;
};

// The largest per-operation cost the model accepts: Linux gives up (panics) on a register
// invalidation that takes 10 s, and a page-selective one may name 2^18 pages.
inline constexpr uint64_t kMaxCostNs = 1000000000; // 1 s

// Why the configuration is invalid, or nullptr.
const char* check(const Config& c);

struct Counters {
    uint64_t translations = 0; // requests that reached the translation path with TE on
    uint64_t iotlb_hits = 0, iotlb_misses = 0, iotlb_evictions = 0;
    uint64_t context_hits = 0, context_misses = 0, context_evictions = 0;
    uint64_t page_walks = 0, walk_reads = 0; // walks started, paging entries read
    uint64_t faults = 0;                     // translation requests refused
    uint64_t faults_recorded = 0;            // of those, written to a fault-recording register
    uint64_t faults_overflowed = 0;          // lost to a full set of records (FSTS.PFO)
    uint64_t faults_coalesced = 0;           // repeats of the pending record (same requester, page)
    uint64_t cc_inv[4] = {};                 // context-cache invalidations by granularity (1..3)
    uint64_t iotlb_inv[4] = {};              // IOTLB invalidations by granularity (1..3)
    uint64_t inv_register = 0, inv_queued = 0; // how they arrived
    uint64_t iotlb_dropped = 0;                // entries removed by invalidations
    uint64_t waits = 0;                        // wait descriptors completed
    uint64_t wait_modelled_ns = 0;             // sum over waits: IQT write to due time (model)
    uint64_t wait_achieved_ns = 0;             // sum over waits: IQT write to completion (clock)
    uint64_t wait_max_achieved_ns = 0;
    uint64_t wait_status_failed = 0;           // status writes that could not be done
    uint64_t queue_errors = 0;                 // IQE raised
    uint64_t queue_timeouts = 0;               // ITE raised (a device-TLB invalidation timed out)
    uint64_t fault_events = 0, inv_events = 0; // interrupt messages sent
    uint64_t events_refused = 0;               // messages not aimed at the interrupt address range
    uint64_t audit_checks = 0, audit_stale = 0;
    uint64_t walk_cost_ns = 0; // modelled time of all walks (walk_read_ns per entry read)
    // Interrupt remapping: requests seen, delivered through an entry, passed through in
    // compatibility format (or with remapping off), blocked (faults); the entry cache; its
    // invalidations by granularity (global, index) and the entries they dropped.
    uint64_t interrupts = 0, ir_remapped = 0, ir_compat = 0, ir_passed = 0, ir_faults = 0;
    // Remapped requests by requester: the first kIrRequesters requester ids that had one,
    // in that order, then all others together (a request without a requester id is
    // another's): what one device's interrupts did, apart from the IOAPIC's and the rest.
    static constexpr unsigned kIrRequesters = 8;
    struct RequesterCount {
        uint16_t sid;
        uint64_t remapped;
        bool operator==(const RequesterCount&) const = default;
    };
    RequesterCount ir_requesters[kIrRequesters] = {};
    unsigned ir_requesters_seen = 0;
    uint64_t ir_remapped_other = 0;
    uint64_t iec_hits = 0, iec_misses = 0, iec_evictions = 0;
    uint64_t iec_inv_global = 0, iec_inv_index = 0, iec_dropped = 0;
    // Device-TLB invalidation descriptors completed, and the pages they named.
    uint64_t devtlb_inv = 0, devtlb_pages = 0;
    // Caching mode: negative IOTLB entries filled (not-present pages cached).
    uint64_t iotlb_negative = 0;
    // Scalable mode: PASID-cache invalidations by granularity (domain 0, PASID 1, global
    // 3), PASID-based IOTLB invalidations (all of a PASID 0, pages 1), and first-stage
    // accessed/dirty bits the unit set in paging entries.
    uint64_t pc_inv[4] = {};
    uint64_t piotlb_inv[2] = {};
    uint64_t fs_ad_updates = 0;
    // PCIe ATS translation requests (Unit::translation_request), and of those the ones for
    // the interrupt address range, answered untranslated-only.
    uint64_t ats_requests = 0, ats_untranslated_only = 0;
    // Paging-structure caches: walks that started below a cached PDE, PDPE or PML4E (the
    // lowest level found), walks that found none (with the caches on), entries dropped by
    // invalidations, and page-selective invalidations whose hint (IH) kept them.
    uint64_t psc_hits[3] = {}; // PDE, PDPE, PML4E
    uint64_t psc_misses = 0, psc_dropped = 0, inv_leaf_hints = 0;

    // Member by member: the struct has padding (RequesterCount, ir_requesters_seen), whose
    // bytes two units that counted the same need not share.
    bool operator==(const Counters&) const = default;
};

// Counters::ir_requesters as text: "BB:DD.F=N" words, then "other=N" when some were not
// kept apart; "" before any remapped request.
std::string ir_requesters_text(const Counters& c);

// The interrupt address range (3.14, "Handling Requests to Interrupt Address Range"):
// requests without a PASID, all of a device's here, to 0xFEE0_0000-0xFEEF_FFFF are
// interrupt requests (chapter 5), never DMA, whatever the page tables map there.
inline constexpr uint64_t kInterruptRangeBase = 0xfee00000, kInterruptRangeSize = 0x100000;
inline constexpr bool in_interrupt_range(uint64_t addr)
{
    return addr - kInterruptRangeBase < kInterruptRangeSize;
}

// The outcome of one translation request.
struct Translation {
    bool ok = false;
    bool translated = false; // false: identity (translation off, or pass-through)
    uint64_t iova = 0;       // the request's page (aligned to mask + 1)
    uint64_t addr = 0;       // output address of that page
    uint64_t mask = 0;       // page size - 1
    bool read = false, write = false;
    FaultReason fault_reason = FaultReason::None; // with !ok
    // The page is in the interrupt address range: the requester reaches it with untranslated
    // requests only, and addr is no address to use (an ATS completion's U, "Untranslated
    // Access Only", PCIe Base 10.2.3.4).
    bool untranslated_only = false;
};

// The outcome of one interrupt request (chapter 5): the message to deliver, or why it is
// blocked.
struct Interrupt {
    bool ok = false;
    uint64_t address = 0; // bits 63:32 carry the destination's bits 31:8 (x2APIC)
    uint32_t data = 0;
    uint32_t index = 0;    // the interrupt index, for a remappable request
    bool remapped = false; // delivered through an entry (else passed through unchanged)
    FaultReason fault_reason = FaultReason::None; // with !ok
};
// An interrupt request as the platform sees it: who sent it (when known), the DWORD write.
struct InterruptRequest {
    uint64_t address = 0;
    uint32_t data = 0;
    uint16_t sid = 0;
    bool sid_known = true; // false: no requester id (the entries' SVT checks are skipped)
    bool record = true;    // false: a query (QEMU's KVM routes): nothing counted or recorded
};

// The invalidations the unit performs (6.5): of the context cache, of the IOTLB, of the
// interrupt entry cache, of a device's TLB, and the queue's invalidation wait.
// Scalable mode adds the PASID cache; its PASID-based IOTLB and device-TLB invalidations
// are IOTLB and DevTlb ones.
enum class InvKind : uint8_t { Context, Iotlb, Wait, Iec, DevTlb, PasidCache };

// The letter a trace shows for a kind: 'c', 'i', 'w', 'e', 'd', 'p' (in InvKind's order).
inline char inv_letter(InvKind k)
{
    constexpr char kLetters[] = "ciwedp";
    auto i = static_cast<unsigned>(k);
    return i < sizeof kLetters - 1 ? kLetters[i] : '?';
}

// What the unit does, for tracing. Every method has an empty default.
class Observer
{
  public:
    virtual ~Observer() = default;
    virtual void fault(uint16_t /*sid*/, uint64_t /*iova*/, bool /*write*/, FaultReason,
                       bool /*recorded*/)
    {
    }
    // A context-cache or IOTLB invalidation took effect.
    virtual void invalidated(InvKind, Gran, uint16_t /*did*/, uint64_t /*addr*/, unsigned /*am*/,
                             uint64_t /*dropped*/, bool /*queued*/)
    {
    }
    // What an invalidation that took effect took away, for copies of translations kept
    // outside the unit (QEMU's IOMMU notifiers): IOVAs first..last of every domain (the
    // unit does not know which devices a domain holds), or with devtlb, of requester
    // sid's device-TLB only. Context-cache, global and domain invalidations give 0..max.
    virtual void unmapped(bool /*devtlb*/, uint16_t /*sid*/, uint64_t /*first*/, uint64_t /*last*/)
    {
    }
    virtual void wait_done(uint64_t /*modelled_ns*/, uint64_t /*achieved_ns*/) {}
    // The audit found a hit on an IOTLB entry that no longer matches the tables.
    // now_fault: why the tables refuse the page now (None: they map it elsewhere).
    virtual void stale(uint16_t /*sid*/, uint64_t /*iova*/, uint64_t /*cached*/, uint64_t /*now*/,
                       FaultReason /*now_fault*/)
    {
    }
    virtual void queue_error(uint32_t /*head*/, uint64_t /*lo*/, uint64_t /*hi*/) {}
    // A device-TLB invalidation of `sid` at `head` timed out (ITE): the queue dropped the
    // `discarded` descriptors behind it, waits included, and stopped until ITE is cleared.
    virtual void queue_timeout(uint32_t /*head*/, uint16_t /*sid*/, uint32_t /*discarded*/) {}
    // An event message (fault or invalidation completion) aimed outside 0xFEEx_xxxx.
    virtual void event_refused(bool /*fault*/, uint64_t /*address*/, uint32_t /*data*/) {}
    // An interrupt request delivered (`out` its message) or blocked (`out.fault_reason`,
    // and whether a fault was recorded).
    virtual void interrupt(const InterruptRequest&, const Interrupt& /*out*/, bool /*recorded*/) {}
    // An interrupt entry cache invalidation took effect (global, or 2^im entries from index).
    virtual void iec_invalidated(bool /*global*/, uint32_t /*index*/, unsigned /*im*/,
                                 uint64_t /*dropped*/)
    {
    }
    // Interrupt remapping switched on or off, or a table latched (GCMD.IRE, SIRTP).
    virtual void ir_state(bool /*enabled*/, uint64_t /*table*/, unsigned /*entries*/,
                          bool /*x2apic*/)
    {
    }
};

// memory: physical memory (tables, the queue, wait status); irq: send_msi for the fault
// and invalidation events.
using Host = ModelHost<Observer>;

// The unit's timers, by number (Timers names a model's timers by small integers).
enum class Timer : unsigned { Queue, Context, Iotlb };
inline constexpr unsigned kTimerCount = 3;

struct Parts;

class Unit
{
  public:
    Unit(const Config& config, const Host& host);
    ~Unit();
    Unit(const Unit&) = delete;
    Unit& operator=(const Unit&) = delete;

    uint64_t mmio_read(uint32_t offset, unsigned size);
    void mmio_write(uint32_t offset, uint64_t value, unsigned size);
    void timer(unsigned id);
    void reset();

    // Translates a request from `sid` (bus << 8 | devfn) that needs the permissions in
    // `perm` (kRead | kWrite). A refused request is a fault, recorded unless the context
    // entry disables it. perm = 0 is a query: what the tables say, with nothing recorded.
    // `pasid` is the request's PASID, or kNoPasid for a request without one. The unit offers
    // no requests-with-PASID (ECAP.PASID clear; PASIDE is reserved in its context entries):
    // with translation on, one is refused, with reason 31h under a legacy root table and
    // 45h (the context entry's PASIDE clear) under a scalable-mode one, and its fault
    // record carries the PASID (FRCD.PP, PV).
    // The interrupt address range is never translated: an address there is refused with
    // untranslated_only set and nothing counted or recorded (the platform takes its writes
    // to remap_interrupt), and no answer elsewhere covers it (a large page mapped over it is
    // answered in smaller pieces), so that nothing that keeps an answer uses it there.
    static constexpr unsigned kRead = 1, kWrite = 2;
    Translation translate(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm);
    bool translation_enabled() const;

    // A PCIe ATS translation request from `sid` for the page at `iova` (4.2.3): what its
    // completion carries. For the interrupt address range, translation on or off: R=0, W=1,
    // U=1 (untranslated_only, ok, read false, write true, the page's own address), so the
    // device sends its writes there untranslated, as interrupt requests, and reads nothing;
    // the tables are not consulted. Elsewhere: a query's answer (translate() with perm 0),
    // the tables' translation and permissions or a refusal, nothing recorded.
    Translation translation_request(uint16_t sid, uint32_t pasid, uint64_t iova);

    // The pages of [iova, iova + len) translated one after another, each exactly as a
    // translate() call for it would be (IOTLB, context cache, counters, modelled costs,
    // faults), for a DMA engine that knows how much it is about to move. `first` is the first
    // page's answer; `len` how many bytes from iova map to one contiguous output run with
    // the same permissions (0 when the first page faults). It stops at the first page that
    // faults (that fault is recorded, as the access about to reach it would) or that is not
    // contiguous. Within one call each paging entry is read from memory once, although every
    // walk still counts and costs its reads: the walks happen at one instant, so they see
    // the same tables.
    struct Run {
        Translation first;
        uint64_t len = 0;
    };
    static constexpr uint64_t kMaxRun = uint64_t{2} << 20; // pages per call: 512
    Run translate_run(uint16_t sid, uint32_t pasid, uint64_t iova, uint64_t len, unsigned perm);

    // The modelled walk time requests from `sid` caused since the last call, and resets it.
    uint64_t take_cost(uint16_t sid);

    // An interrupt request (a DWORD write to 0xFEEx_xxxx from a device, the IOAPIC, or a
    // route QEMU builds for KVM): the message to deliver, or a blocked request (recorded as
    // a fault unless a query or the entry's FPD says not).
    Interrupt remap_interrupt(const InterruptRequest& req);
    bool interrupt_remapping_enabled() const;

    const Counters& counters() const;
    const Config& config() const;
    void set_audit(bool on);
    void set_hold_waits(bool on);
    // Fault injection (docs/faults.rst): invalidations and translations consult the
    // injector's plan from now on (nullptr: none). The unit does not own it.
    void set_injector(faults::Injector* injector);

    // Invalidation costs, changeable at run time (apply to operations started later).
    struct Costs {
        uint64_t desc_ns, page_ns, wait_ns, iec_ns;
    };
    const char* set_costs(const Costs& c);

    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    std::unique_ptr<Parts> p_;
};

} // namespace dmalab::vtd
