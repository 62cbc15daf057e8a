// SPDX-License-Identifier: GPL-2.0-or-later
// The parts of the VT-d unit, named after the spec, and what they share. Unit (unit.h) is
// their face; Parts (unit.cc) composes them and owns the register bank:
//   Events            the fault and invalidation-completion event messages (7.3, 6.5.2.9)
//   FaultRecording    fault-recording registers and FSTS (7.2, 10.4.9-14)
//   Translator        context cache, walks, IOTLB, runs, walk costs (3.6, 9; translation.cc,
//                     translation_run.cc)
//   InterruptRemapping interrupt requests, the remapping table and its entry cache (5, 9.10;
//                     interrupt_remapping.cc)
//   Invalidations     what an invalidation costs and drops, and the fault plan's say (6.5)
//   InvalidationQueue queued invalidation and its wait descriptors (6.5.2)
//   RegisterCommands  the global command register and register-based invalidation (6.5.1)
// Each saves and restores its own state; none holds a lock or calls out other than through
// Shared::call_out.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "cache.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd
{

// CAP.ND = 2: the domain ids the unit supports. A context entry naming a larger one is
// invalid (reserved), so nothing is ever cached under one.
inline constexpr unsigned kDomainIds = 256;

inline uint64_t pow2(unsigned n)
{
    return n >= 64 ? 0 : uint64_t{1} << n;
}

// What every part reaches: the configuration, the host, the registers, the counters and the
// fault plan.
struct Shared {
    Shared(const Config& c, const Host& h) : config(c), host(h) {}

    Config config;
    Host host;
    Counters counters;
    faults::Injector* injector = nullptr;
    RegBank<Parts>* regs = nullptr;
    unsigned depth = 0; // nesting of calls out; register accesses inside one are refused
    // The root table SRTP latched is a scalable-mode one (TTM 01): the unit translates in
    // scalable mode, and its queue takes only 256-bit descriptors (6.5.2).
    bool sm_root = false;

    uint64_t now() const { return host.timers.now_ns(); }
    uint64_t reg(unsigned index) const { return regs->get(index); }
    void set(unsigned index, uint64_t v) { regs->set(index, v); }
    bool queue_on() const { return reg(vtd::reg("GSTS")) & G_QIE; }
    // What decides whether a queued descriptor is valid (what the unit advertises).
    DecodeLimits limits() const { return {kMamv, config.ir, kMhmv, config.dt, config.sm}; }
    // A call out of the model (guest memory, an interrupt message): while it runs, the unit
    // refuses register accesses that come back to it (its own DMA or message aimed at it).
    template <class F> auto call_out(F&& f)
    {
        depth++;
        auto r = f();
        depth--;
        return r;
    }
};

enum class Event : uint8_t { Fault, Invalidation };

class Events
{
  public:
    explicit Events(Shared& s) : s_(s) {}
    // The event's condition arose: a message, or IP set while the event is masked (IM).
    void raise(Event e);
    // FECTL / IECTL written: a pending event goes out once unmasked.
    void write_ctl(Event e);
    // The condition is gone: nothing pending any more.
    void clear_pending(Event e);

  private:
    void send(Event e);
    Shared& s_;
};

class FaultRecording
{
  public:
    FaultRecording(Shared& s, Events& events) : s_(s), events_(events) {}
    void record(uint16_t sid, uint32_t pasid, uint64_t iova, bool write, FaultReason reason);
    // The queue refused a descriptor (FSTS.IQE) or a device-TLB invalidation timed out
    // (FSTS.ITE): the bit, and the fault event if it was clear.
    void queue_error() { queue_status(FSTS_IQE); }
    void queue_timeout() { queue_status(FSTS_ITE); }
    uint64_t read_fsts(uint64_t stored);
    // FSTS or a record written: true when IQE or ITE went from set to clear (the queue
    // resumes).
    bool status_written(uint64_t old_fsts);
    void reset() { next_record_ = 0; }
    void save(StateWriter& w) const { w.u8(static_cast<uint8_t>(next_record_)); }
    bool load(StateReader& r);

  private:
    void queue_status(uint32_t bit);

    Shared& s_;
    Events& events_;
    unsigned next_record_ = 0; // the fault-recording register the next fault goes to
};

// What the context cache holds for a requester. In scalable mode that is its context entry
// together with the PASID entry of its RID_PASID (the unit's context cache is also its
// PASID cache): the domain, the stage and the table are the PASID entry's.
struct ContextInfo {
    uint16_t sid = 0;
    uint16_t did = 0;
    TT tt = TT::Untranslated; // scalable mode: Untranslated, or Passthrough (PGTT 100)
    uint8_t aw = 0;           // 1: 39-bit 3-level, 2: 48-bit 4-level (first stage: always 2)
    bool fpd = false;
    uint64_t slptptr = 0; // the tables' root (first stage: FLPTR)
    bool sm = false;      // from scalable-mode tables
    bool fs = false;      // first-stage tables (PGTT 001)
    bool nxe = false;     // first stage: XD is a field (PASID entry NXE), else reserved
    uint32_t pasid = 0;   // RID_PASID (scalable mode)
};

struct TlbEntry {
    uint16_t did;
    uint8_t shift;
    bool r, w;
    uint64_t vpn;  // iova >> shift (first stage: of the address's low 48 bits)
    uint64_t page; // output address
    uint32_t pasid = 0;
    // First stage: the leaf's D was set when the entry was filled. A write through an
    // entry filled clean walks again, to set D in the tables (9.7, as the CPU's TLB).
    bool d = true;
};

// A paging-structure cache entry (6.2.4): the table a non-leaf entry names, with the
// permissions the walk had gathered down to it (and including it).
struct PscEntry {
    uint64_t table = 0;
    uint64_t region = 0; // the input address >> the level's shift (what the tag holds)
    uint32_t pasid = 0;
    bool r = false, w = false;
};

class Caches
{
  public:
    Caches(const Config& c, Prng& prng)
        : context(c.context_entries, 4, kDomainIds, c.replacement, prng),
          iotlb(c.iotlb_entries, c.iotlb_ways, kDomainIds, c.replacement, prng),
          psc{psc_of(c.pde_cache, c, prng), psc_of(c.pdpe_cache, c, prng),
              psc_of(c.pml4e_cache, c, prng)}
    {
    }
    static uint64_t context_tag(uint16_t sid) { return uint64_t{1} << 63 | sid; }
    // vpn < 2^36 (input addresses below 2^48) in bits 55:20, did below kDomainIds in bits
    // 11:4, the page size in bits 1:0, and the PASID's bits 14:0 in bits 19:12 and 62:56.
    // Entries of PASIDs that share those bits share tags: a lookup compares the entry's
    // PASID (iotlb_find) and a fill replaces what holds its tag.
    static uint64_t iotlb_tag(uint16_t did, uint32_t pasid, uint64_t vpn, unsigned shift)
    {
        static_assert(kDomainIds <= 256);
        return uint64_t{1} << 63 | uint64_t{(pasid >> 8) & 0x7f} << 56 | vpn << 20 |
               uint64_t{pasid & 0xff} << 12 | uint64_t{did} << 4 | (shift - 12) / 9;
    }
    unsigned context_set(uint16_t sid) const { return context.set_of(sid); }
    unsigned iotlb_set(uint64_t tag) const { return iotlb.set_of(tag); }
    void clear()
    {
        context.drop_all();
        iotlb.drop_all();
        for (auto& p : psc)
            if (p)
                p->drop_all();
    }

    // The paging-structure caches, by the level of the entries they hold: psc[0] PDEs
    // (level 2, a 2 MiB region each), psc[1] PDPEs (level 3, 1 GiB), psc[2] PML4Es (level
    // 4, 512 GiB); null when configured off. Tagged by the region, the domain, the PASID's
    // bits 14:0 (an entry's own PASID is compared) and the stage (first or second).
    static constexpr unsigned kPscLevels = 3;
    static unsigned psc_shift(unsigned i) { return 21 + 9 * i; }
    static uint64_t psc_tag(uint16_t did, uint32_t pasid, bool fs, uint64_t region)
    {
        static_assert(kDomainIds <= 256);
        // region < 2^27 (input addresses below 2^48, regions of 2 MiB at least)
        return uint64_t{1} << 63 | uint64_t{fs} << 62 | uint64_t{pasid & 0x7fff} << 40 |
               uint64_t{did} << 28 | region;
    }

    SetAssoc<ContextInfo> context;
    SetAssoc<TlbEntry> iotlb;
    std::unique_ptr<SetAssoc<PscEntry>> psc[kPscLevels];

  private:
    static std::unique_ptr<SetAssoc<PscEntry>> psc_of(unsigned entries, const Config& c, Prng& prng)
    {
        if (entries == 0)
            return nullptr;
        return std::make_unique<SetAssoc<PscEntry>>(entries, 4, kDomainIds, c.replacement, prng);
    }
};

class Translator
{
  public:
    Translator(Shared& s, FaultRecording& faults);
    ~Translator();

    Translation translate(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm);
    Translation translation_request(uint16_t sid, uint32_t pasid, uint64_t iova);
    Unit::Run translate_run(uint16_t sid, uint32_t pasid, uint64_t iova, uint64_t len,
                            unsigned perm);
    uint64_t take_cost(uint16_t sid);

    bool enabled() const { return te_; }
    void set_enabled(bool on) { te_ = on; }
    bool has_root() const { return root_valid_; }
    bool scalable() const { return s_.sm_root; }
    // An address's low 48 bits: what the IOTLB tags (first-stage input is canonical).
    static uint64_t in48(uint64_t iova) { return iova & (pow2(48) - 1); }
    // SRTP latched RTADDR: a usable root table (legacy or scalable-mode), or none (DMA then
    // faults).
    void set_root(bool valid, uint64_t root, bool sm)
    {
        root_valid_ = valid;
        root_ = root;
        s_.sm_root = sm;
    }
    Caches& caches() { return caches_; }
    // Drops the shortcuts into the caches (after any change to them).
    void forget()
    {
        front_.valid = false;
        last_context_ = nullptr;
    }
    void reset();
    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    struct Walk {
        uint64_t page = 0; // output address of the page
        unsigned shift = 12;
        bool r = false, w = false;
        bool d = true; // first stage: the leaf's D (a write to a clean page walks again)
    };
    // The context entry for sid, from the cache or the tables; None when it is usable.
    FaultReason context_for(uint16_t sid, ContextInfo& out);
    // context_for's misses: the legacy tables, or the scalable-mode ones down to the PASID
    // entry of RID_PASID.
    FaultReason context_legacy(uint16_t sid, ContextInfo& out, uint64_t haw_mask);
    // Scalable mode's context; with rid_pasid false, only as far as the context entry (what
    // a request with a PASID reaches before the entry's PASIDE refuses it).
    FaultReason context_sm(uint16_t sid, ContextInfo& out, uint64_t haw_mask,
                           bool rid_pasid = true);
    // Host address bits beyond the configured width, which no table pointer may set.
    uint64_t haw_mask() const;
    FaultReason pasid_entry(const SmContextEntry& ce, ContextInfo& out, uint64_t haw_mask);
    FaultReason walk(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out, bool count);
    // The paging-structure caches' lowest entry on the way to iova in ctx's tables of
    // `levels` levels: the level it is at (2 to 4; 0 when none is cached) and the entry.
    // Counted as a use (and, with count, as a hit or a miss) when found.
    unsigned psc_find(const ContextInfo& ctx, uint64_t iova, unsigned levels, PscEntry& out,
                      bool count);
    // Caches the non-leaf entry at `level` (2 to 4) on the way to iova: it names `table`,
    // and the walk down to it allows r and w.
    void psc_fill(const ContextInfo& ctx, uint64_t iova, unsigned level, uint64_t table, bool r,
                  bool w);
    bool psc_on() const { return caches_.psc[0] || caches_.psc[1] || caches_.psc[2]; }
    // A second-stage walk (9.8), with the legacy reasons.
    FaultReason walk_ss(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
                        bool count);
    // A first-stage walk (9.7): the request is a user one; sets A, and D for a write, in the
    // entries it uses unless perm is 0 (a query or the audit).
    FaultReason walk_fs(const ContextInfo& ctx, uint64_t iova, unsigned perm, Walk& out,
                        bool count);
    enum class AdUpdate : uint8_t { Done, Changed, Failed };
    AdUpdate update_ad(uint64_t at, uint64_t expected, uint64_t desired);
    // The check of the request's address against the context's input width: None, or the
    // fault.
    static FaultReason check_input(const ContextInfo& ctx, uint64_t iova);
    // One paging entry, from memory or (inside translate_run) from what the run has read.
    DmaResult read_entry(uint64_t table, uint64_t idx, unsigned level, SlPte& pte);
    template <class E> DmaResult read_entry128(uint64_t addr, E& out);
    // translate_run's common case, 4 KiB pages under the leaf table the call already read:
    // from iova on, at most max_pages that continue the run (at `out`, with permissions r0
    // and w0), each as translate() would do it; how many. It stops at the first page it
    // would not take, changing nothing for it.
    uint64_t extend_run(uint16_t sid, uint64_t iova, unsigned perm, uint64_t max_pages,
                        uint64_t out, bool r0, bool w0);
    // Whether `why` is a walk's refusal for a not-present entry.
    static bool not_present(const ContextInfo& ctx, FaultReason why);
    // translate() outside the interrupt address range.
    Translation lookup(uint16_t sid, uint64_t iova, unsigned perm);
    // translate() of a request with a PASID (refused: no PASIDs are offered).
    Translation lookup_pasid(uint16_t sid, uint32_t pasid, uint64_t iova, unsigned perm);
    // With translation off, or for a pass-through context: the address itself, read and write.
    static Translation identity(uint64_t iova);
    // The translation fault the fault plan injects into this request, or None.
    FaultReason injected(uint16_t sid, uint64_t iova, unsigned perm);
    // A request on the page the latest translation used (front_).
    Translation from_front(uint16_t sid, uint64_t iova, unsigned perm);
    // The IOTLB entry for iova in ctx's domain, at whichever page size is cached; or none.
    TlbEntry* iotlb_find(const ContextInfo& ctx, uint64_t iova);
    // An IOTLB miss: walks ctx's tables and caches the leaf in `e` (the cache's copy in
    // `slot`); the walk's fault, or None.
    FaultReason fill(uint16_t sid, const ContextInfo& ctx, uint64_t iova, unsigned perm,
                     TlbEntry& e, TlbEntry*& slot);
    // translate()'s last step: the answer for a page the IOTLB holds in `slot`.
    Translation answer(uint16_t sid, uint64_t iova, unsigned perm, const TlbEntry& e,
                       const ContextInfo& ctx, TlbEntry* slot);
    // Which tables an entry came from, for the reason a refusal of a cached page gives.
    enum class Stage : uint8_t { Legacy, SmSecond, First };
    static Stage stage_of(const ContextInfo& c)
    {
        return c.fs ? Stage::First : c.sm ? Stage::SmSecond : Stage::Legacy;
    }
    // The fault for a request that needs perm of a page allowing r and w, or None.
    static FaultReason denied(Stage stage, unsigned perm, bool r, bool w);
    Translation refuse(uint16_t sid, uint64_t iova, unsigned perm, FaultReason reason, bool record,
                       uint32_t pasid = kNoPasid);
    void audit(uint16_t sid, const ContextInfo& ctx, uint64_t iova, uint64_t cached, bool r,
               bool w);
    void charge(uint16_t sid, uint64_t ns);

    Shared& s_;
    FaultRecording& faults_;
    Prng prng_; // random replacement
    Caches caches_;
    bool te_ = false; // GSTS.TES
    bool root_valid_ = false;
    uint64_t root_ = 0;

    // The IOTLB entry the latest translation used, with what its context said: checked
    // first, so a run of hits on one page costs no set lookup. Every invalidation,
    // eviction and reset clears it; the audit bypasses it.
    struct Front {
        bool valid = false;
        uint16_t sid = 0;
        uint64_t base = 0, mask = 0, page = 0;
        bool r = false, w = false, fpd = false;
        TlbEntry* entry = nullptr;
        Stage stage = Stage::Legacy;
        bool d = true; // the entry's D (TlbEntry::d)
    };
    Front front_;
    ContextInfo* last_context_ = nullptr; // the context-cache entry used last
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
        // A walk from `root` (of `levels` levels) reached iova's leaf table `table` with
        // permissions r and w, by reading the levels above or from the PDE cache.
        void reached_leaf_table(uint64_t root, unsigned levels, uint64_t iova, uint64_t table,
                                bool r, bool w)
        {
            have_upper = true;
            upper_root = root;
            upper_levels = levels;
            upper_region = iova >> 21;
            upper_table = table;
            upper_r = r;
            upper_w = w;
        }
    };
    std::unique_ptr<Memo> memo_ = std::make_unique<Memo>();
    // Walk time not yet taken, per requester: a small open-addressed table (a unit serves
    // few requesters; beyond kCostSlots of them, costs are not tracked).
    static constexpr unsigned kCostSlots = 64;
    struct Cost {
        uint32_t key = 0; // sid + 1, 0 for a free slot
        uint64_t ns = 0;
    };
    Cost costs_[kCostSlots];
};

class InterruptRemapping
{
  public:
    InterruptRemapping(Shared& s, FaultRecording& faults);

    // GCMD.SIRTP: latches IRTA; the unit uses that table until the next SIRTP (10.4.4).
    void set_table();
    // GCMD.IRE and GCMD.CFI took effect (GSTS.IRES, GSTS.CFIS).
    void set_enabled(bool on);
    void set_compat(bool on) { cfi_ = on; }
    bool enabled() const { return ire_; }
    bool has_table() const { return table_valid_; }
    Interrupt remap(const InterruptRequest& req);
    // An interrupt entry cache invalidation takes effect: the entries it dropped.
    uint64_t invalidate(const IecInv& inv);
    uint64_t cached() const { return iec_.valid(); }
    void reset();
    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    struct Entry {
        uint64_t lo = 0, hi = 0;
        uint32_t index = 0;
    };
    static uint64_t tag(uint32_t index) { return uint64_t{1} << 63 | index; }
    // The entry for a remappable request: its index, and the entry from the cache or the
    // table; None when it can be used (the SID check aside).
    FaultReason index_of(const InterruptRequest& req, uint32_t& index) const;
    FaultReason entry_for(uint32_t index, Irte& out);
    Interrupt deliver(const Irte& e, uint32_t index) const;
    Interrupt finish(const InterruptRequest& req, Interrupt out, bool fpd);
    static void count_requester(Counters& c, const InterruptRequest& req);

    Shared& s_;
    FaultRecording& faults_;
    Prng prng_; // random replacement
    SetAssoc<Entry> iec_;
    bool ire_ = false; // GSTS.IRES
    bool cfi_ = false; // GSTS.CFIS
    // The table SIRTP latched: base, entries (2^(S+1)), extended interrupt mode.
    bool table_valid_ = false;
    uint64_t table_ = 0;
    uint32_t entries_ = 0;
    bool eime_ = false;
};

// An invalidation as the parts that start one describe it to Invalidations.
struct InvRequest {
    InvKind kind;
    Gran g;
    uint64_t addr = 0; // IOTLB, page-selective: the address and mask (pages 2^am); interrupt
    unsigned am = 0;   // entry cache, index-selective: the index and mask (entries 2^am)
};

class Invalidations
{
  public:
    Invalidations(Shared& s, Translator& t, InterruptRemapping& ir) : s_(s), t_(t), ir_(ir) {}
    // Its modelled cost (Config's inv_* and wait costs).
    uint64_t cost(const InvRequest& r) const;
    // Lets the fault plan delay (`due`) or drop it as it starts; true when dropped.
    bool inject(const InvRequest& r, uint64_t& due);
    // Takes effect now: the entries it names leave the caches. How many did.
    uint64_t context(Gran g, uint16_t did, uint16_t sid, uint8_t fm, bool queued);
    // ih: the invalidation hint of a page-selective one (only leaf entries changed), which
    // keeps the paging-structure caches.
    uint64_t iotlb(Gran g, uint16_t did, uint64_t addr, unsigned am, bool ih, bool queued);
    uint64_t pasid_cache(const PcInv& inv);
    uint64_t piotlb(const PiotlbInv& inv);
    uint64_t iec(const IecInv& inv);
    // Forwarded to the device, which caches nothing the unit can see: counted and traced.
    void devtlb(const DevTlbInv& inv);

  private:
    // Drops the paging-structure cache entries of `did` that `pred` (given the entry and the
    // first and last address of its region) accepts; how many.
    template <class Pred> uint64_t drop_psc(uint16_t did, Pred&& pred);

    Shared& s_;
    Translator& t_;
    InterruptRemapping& ir_;
};

class InvalidationQueue
{
  public:
    InvalidationQueue(Shared& s, Invalidations& inv, FaultRecording& faults, Events& events)
        : s_(s), inv_(inv), faults_(faults), events_(events)
    {
    }
    void write_iqt();
    void write_ics();
    // GCMD.QIE set (the head starts at 0) or cleared (pending descriptors are dropped).
    void enable();
    void disable();
    // Goes on if idle (after QIE, IQT, or IQE cleared).
    void kick();
    void run(); // the queue's timer
    void reset();
    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    bool wide() const; // 256-bit descriptors (IQA.DW, scalable mode)
    uint32_t entries() const;
    uint32_t head() const;
    uint32_t tail() const;
    void set_head(uint32_t h);
    bool fetch(InvDesc& d);
    void error(const InvDesc& d);
    static InvRequest request_of(const Decoded& d, const InvDesc& raw);
    uint64_t submitted_at(uint32_t h, uint64_t now);
    // The descriptor in progress takes effect (its time has come).
    void perform(uint64_t now);
    // run()'s two halves. finish(): the descriptor in progress, if due, takes effect and
    // IQH moves on; false when the step ends here (not due: the timer is armed; the queue
    // went off; the budget is spent). start(): the descriptor at IQH is fetched, checked
    // and given its due time; false when there is none (or IQE was raised for it).
    bool finish(uint64_t now, unsigned& budget);
    bool start(uint64_t now);
    void wait_done(const WaitInv& w, uint64_t now);
    void time_out();

    Shared& s_;
    Invalidations& inv_;
    FaultRecording& faults_;
    Events& events_;
    // The descriptor in progress, when it is due, and when the wait it belongs to was
    // submitted.
    bool busy_ = false;
    bool invalidated_ = false; // this call performed an invalidation (hold_waits)
    InvDesc desc_;
    uint64_t due_ = 0;
    uint64_t submitted_ = 0;
    bool drop_ = false;    // the fault plan dropped it: it completes without invalidating
    bool timeout_ = false; // a device-TLB invalidation that times out when due (ITE)
    // The modelled end of the descriptor before: the next one starts at the later of this
    // and its own submission, never at the (late) moment the host's timer fired.
    uint64_t end_ = 0;
    // IQT writes not yet reached by the queue: (tail index, virtual time), oldest first.
    std::vector<std::pair<uint32_t, uint64_t>> marks_;
};

class RegisterCommands
{
  public:
    RegisterCommands(Shared& s, Invalidations& inv, Translator& t, InvalidationQueue& q,
                     InterruptRemapping& ir)
        : s_(s), inv_(inv), t_(t), queue_(q), ir_(ir)
    {
    }
    void write_gcmd(uint64_t written, uint64_t bytes);
    void write_ccmd(uint64_t old, uint64_t written, uint64_t bytes);
    void write_iotlb(uint64_t old, uint64_t written, uint64_t bytes);
    void timer(Timer t); // Context or Iotlb
    void reset();
    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    // One of the two register-based invalidations (CCMD, IOTLB registers): its register,
    // what it invalidates, its request and actual granularity fields, its timer, and its
    // state while it runs.
    struct Command {
        unsigned reg;
        InvKind kind;
        Field request, actual;
        Timer timer;
        uint64_t due = 0;
        bool drop = false;
    };
    // GCMD's interrupt remapping commands (SIRTP, IRE, CFI): GSTS after them.
    uint32_t interrupt_commands(uint32_t cmd, uint32_t sts);
    void start(Command& c, uint64_t old, uint64_t written, uint64_t bytes);
    void finish(Command& c);
    // Performs it; the granularity it actually did.
    Gran perform(const Command& c, Gran g, uint64_t v);

    Shared& s_;
    Invalidations& inv_;
    Translator& t_;
    InvalidationQueue& queue_;
    InterruptRemapping& ir_;
    Command cc_{reg("CCMD"), InvKind::Context, field(fields::CCMD, "CIRG"),
                field(fields::CCMD, "CAIG"), Timer::Context};
    Command iotlb_{reg("IOTLB"), InvKind::Iotlb, field(fields::IOTLB, "IIRG"),
                   field(fields::IOTLB, "IAIG"), Timer::Iotlb};
};

} // namespace dmalab::vtd
