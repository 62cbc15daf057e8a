// SPDX-License-Identifier: GPL-2.0-or-later
// A VT-d DMA-remapping unit in legacy (root/context table) mode: registers, second-level
// translation through a context cache and a set-associative IOTLB, register-based and queued
// invalidation that take modelled virtual time, fault recording and its events. Reaches the
// world only through common/'s host interfaces; not thread-safe (the caller serialises).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dmalab/dma_memory.h"
#include "dmalab/faults.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/prng.h"
#include "dmalab/regbank.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"
#include "dmalab/vtd/entries.h"
#include "dmalab/vtd/registers.h"

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
    uint64_t fault_events = 0, inv_events = 0; // interrupt messages sent
    uint64_t events_refused = 0;               // messages not aimed at the interrupt address range
    uint64_t audit_checks = 0, audit_stale = 0;
    uint64_t walk_cost_ns = 0; // modelled time of all walks (walk_read_ns per entry read)
};

// The outcome of one translation request.
struct Translation {
    bool ok = false;
    bool translated = false; // false: identity (translation off, or pass-through)
    uint64_t iova = 0;       // the request's page (aligned to mask + 1)
    uint64_t addr = 0;       // output address of that page
    uint64_t mask = 0;       // page size - 1
    bool read = false, write = false;
    uint8_t fault_reason = 0; // with !ok
};

// The invalidations the unit performs (6.5): of the context cache, of the IOTLB, and the
// queue's invalidation wait.
enum class InvKind : uint8_t { Context, Iotlb, Wait };

// The letter a trace shows for a kind: 'c', 'i', 'w'.
inline char inv_letter(InvKind k)
{
    return k == InvKind::Context ? 'c' : k == InvKind::Iotlb ? 'i' : 'w';
}

// What the unit does, for tracing. Every method has an empty default.
class Observer
{
  public:
    virtual ~Observer() = default;
    virtual void fault(uint16_t /*sid*/, uint64_t /*iova*/, bool /*write*/, uint8_t /*reason*/,
                       bool /*recorded*/)
    {
    }
    // A context-cache or IOTLB invalidation took effect.
    virtual void invalidated(InvKind, Gran, uint16_t /*did*/, uint64_t /*addr*/, unsigned /*am*/,
                             uint64_t /*dropped*/, bool /*queued*/)
    {
    }
    virtual void wait_done(uint64_t /*modelled_ns*/, uint64_t /*achieved_ns*/) {}
    // The audit found a hit on an IOTLB entry that no longer matches the tables.
    virtual void stale(uint16_t /*sid*/, uint64_t /*iova*/, uint64_t /*cached*/, uint64_t /*now*/,
                       uint8_t /*now_fault*/)
    {
    }
    virtual void queue_error(uint32_t /*head*/, uint64_t /*lo*/, uint64_t /*hi*/) {}
    // An event message (fault or invalidation completion) aimed outside 0xFEEx_xxxx.
    virtual void event_refused(bool /*fault*/, uint64_t /*address*/, uint32_t /*data*/) {}
};

struct Host {
    DmaMemory& memory; // physical memory: tables, the queue, wait status (untranslated)
    Timers& timers;
    Interrupts& irq; // send_msi for the fault and invalidation events
    Log& log;
    Observer* observer = nullptr;
};

enum Timer : unsigned { kQueueTimer, kContextTimer, kIotlbTimer, kTimerCount };

class Caches;
struct TlbEntry;

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
    static constexpr unsigned kRead = 1, kWrite = 2;
    Translation translate(uint16_t sid, uint64_t iova, unsigned perm);
    bool translation_enabled() const { return te_; }

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
    Run translate_run(uint16_t sid, uint64_t iova, uint64_t len, unsigned perm);

    // The modelled walk time requests from `sid` caused since the last call, and resets it.
    uint64_t take_cost(uint16_t sid);

    const Counters& counters() const { return counters_; }
    const Config& config() const { return config_; }
    void set_audit(bool on) { config_.audit = on; }
    // Fault injection (docs/faults.rst): invalidations and translations consult the
    // injector's plan from now on (nullptr: none). The unit does not own it.
    void set_injector(faults::Injector* injector) { injector_ = injector; }

    // Invalidation costs, changeable at run time (apply to operations started later).
    const char* set_costs(uint64_t desc_ns, uint64_t page_ns, uint64_t wait_ns);

    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    friend struct Regs;
    friend class Caches;
    struct Context;
    struct Walk;

    // Register hooks.
    uint64_t read_fsts(uint64_t stored);
    void write_gcmd(uint64_t old, uint64_t written, uint64_t bytes);
    void start_register_command(unsigned reg, InvKind kind, unsigned request_shift,
                                unsigned actual_shift, unsigned timer_id, uint64_t& due,
                                uint64_t old, uint64_t written, uint64_t bytes);
    template <typename Perform>
    void finish_register_command(unsigned reg, unsigned timer_id, uint64_t due, bool& drop,
                                 unsigned request_shift, unsigned actual_shift, Perform perform);
    void write_ccmd(uint64_t old, uint64_t written, uint64_t bytes);
    void write_iotlb(uint64_t old, uint64_t written, uint64_t bytes);
    void write_fsts(uint64_t old, uint64_t written, uint64_t bytes);
    void write_fectl(uint64_t old, uint64_t written, uint64_t bytes);
    void write_iqt(uint64_t old, uint64_t written, uint64_t bytes);
    void write_ics(uint64_t old, uint64_t written, uint64_t bytes);
    void write_iectl(uint64_t old, uint64_t written, uint64_t bytes);
    void write_frcd(uint64_t old, uint64_t written, uint64_t bytes);

    bool context_for(uint16_t sid, Context& out, uint8_t& reason);
    bool walk(const Context& ctx, uint64_t iova, unsigned perm, Walk& out, uint8_t& reason,
              bool count);
    // One paging entry, from memory or (inside translate_run) from what the run has read.
    DmaResult read_entry(uint64_t table, uint64_t idx, unsigned level, SlPte& pte);
    template <class E> DmaResult read_entry128(uint64_t addr, E& out);
    // translate_run's common case, 4 KiB pages under the leaf table the call already read:
    // from iova on, at most max_pages that continue the run (at `out`, with permissions r0
    // and w0), each as translate() would do it; how many. It stops at the first page it
    // would not take, changing nothing for it.
    uint64_t extend_run(uint16_t sid, uint64_t iova, unsigned perm, uint64_t max_pages,
                        uint64_t out, bool r0, bool w0);
    // translate()'s last step: the answer for a page the IOTLB holds in `slot`.
    Translation answer(uint16_t sid, uint64_t iova, unsigned perm, unsigned shift, uint64_t page,
                       bool r, bool w, bool fpd, TlbEntry* slot);
    Translation refuse(uint16_t sid, uint64_t iova, unsigned perm, uint8_t reason, bool record);
    void audit(uint16_t sid, const Context& ctx, uint64_t iova, uint64_t cached, bool r, bool w);
    void record_fault(uint16_t sid, uint64_t iova, bool write, uint8_t reason);
    void fault_event();
    void inv_event();
    void send(uint32_t ctl_reg, uint32_t data_reg, uint32_t addr_reg);

    // Invalidation engine.
    uint64_t cost(InvKind kind, Gran g, unsigned am) const;
    uint64_t do_cc(Gran g, uint16_t did, uint16_t sid, uint8_t fm, bool queued);
    uint64_t do_iotlb(Gran g, uint16_t did, uint64_t addr, unsigned am, bool queued);
    // Lets the fault plan delay (`due`) or drop an invalidation as it starts; `addr` and
    // `am` name a page-selective IOTLB invalidation's range.
    void inject_invalidation(InvKind kind, bool selective, uint64_t addr, unsigned am,
                             uint64_t& due, bool& drop);
    void queue_kick();
    void queue_run();
    bool queue_fetch(InvDesc& d);
    void queue_error(const InvDesc& d);
    uint32_t queue_entries() const;

    Config config_;
    Host host_;
    std::unique_ptr<Caches> caches_;
    std::unique_ptr<RegBank<Unit>> regs_;
    Counters counters_;
    Prng prng_;
    unsigned depth_ = 0; // nesting of host calls; register accesses inside one are refused

    // The IOTLB entry the latest translation used, with what its context said: checked
    // first, so a run of hits on one page costs no set lookup. Every invalidation,
    // eviction and reset clears it; the audit bypasses it.
    struct Front {
        bool valid = false;
        uint16_t sid = 0;
        uint64_t base = 0, mask = 0, page = 0;
        bool r = false, w = false, fpd = false;
        TlbEntry* entry = nullptr;
    };
    Front front_;
    // translate_run's reads: the entry last read at each level, and the whole last leaf
    // table (a run's pages are mostly in one).
    struct Memo {
        bool on = false;
        uint64_t at[5] = {};
        SlPte value[5] = {};
        bool have[5] = {};
        uint64_t leaf = 0;
        bool have_leaf = false;
        uint8_t leaf_bytes[4096] = {};
        // The levels above the last leaf table: which walk reached it, and the
        // permissions it had gathered on the way.
        bool have_upper = false;
        uint64_t upper_root = 0, upper_region = 0, upper_table = 0;
        unsigned upper_levels = 0;
        bool upper_r = false, upper_w = false;
    };
    std::unique_ptr<Memo> memo_ = std::make_unique<Memo>();
    Context* last_context_ = nullptr; // the context-cache entry used last
    bool te_ = false;                 // GSTS.TES
    // Walk time not yet taken, per requester: a small open-addressed table (a unit serves
    // few requesters; beyond kCostSlots of them, costs are not tracked).
    static constexpr unsigned kCostSlots = 64;
    struct Cost {
        uint32_t key = 0; // sid + 1, 0 for a free slot
        uint64_t ns = 0;
    };
    Cost costs_[kCostSlots];
    void charge(uint16_t sid, uint64_t ns);
    // Drops the shortcuts above (after any change to the caches).
    void forget()
    {
        front_.valid = false;
        last_context_ = nullptr;
    }

    bool root_valid_ = false; // SRTP latched a usable root table
    uint64_t root_ = 0;
    unsigned next_record_ = 0; // the fault-recording register the next fault goes to

    // The queue: the descriptor in progress, when it is due, and when the wait it belongs
    // to was submitted.
    bool q_busy_ = false;
    InvDesc q_desc_;
    uint64_t q_due_ = 0;
    uint64_t q_submitted_ = 0;
    // The modelled end of the descriptor before: the next one starts at the later of this
    // and its own submission, never at the (late) moment the host's timer fired.
    uint64_t q_end_ = 0;
    // IQT writes not yet reached by the queue: (tail index, virtual time), oldest first.
    std::vector<std::pair<uint32_t, uint64_t>> marks_;
    // Register-based commands in progress and when they complete.
    uint64_t cc_due_ = 0, iotlb_due_ = 0;
    // Fault injection: the plan, and the invalidations in progress it dropped (they
    // complete without invalidating anything).
    faults::Injector* injector_ = nullptr;
    bool q_drop_ = false, cc_drop_ = false, iotlb_drop_ = false;
};

} // namespace dmalab::vtd
