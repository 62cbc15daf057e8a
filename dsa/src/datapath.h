// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA data path: BAR 2's portals, the descriptors each WQ holds, and the engines that run
// them. One class in three files: portals.cc (submission and the WQs' contents), engines.cc
// (dispatch and timed steps, batches, drains), completion.cc (records, interrupts, software
// errors). It calls out (DMA, interrupts) only through Shared::call_out, so an access the
// device's own traffic aims at its BARs is refused, and it checks after every call out that
// nothing reset or aborted its work meanwhile (an epoch per engine).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "work.h"

namespace dmalab::faults
{
class Injector;
}

namespace dmalab::dsa
{

struct Shared;
class Tables;
class Events;
class Commands;

class DataPath
{
  public:
    DataPath(Shared& s, Tables& t, Events& e);
    ~DataPath();

    // ---- BAR 2 (portals.cc) ----
    uint64_t portal_read(uint32_t offset, unsigned size);
    void portal_write(uint32_t offset, uint64_t value, unsigned size);

    // ---- For the commands ----
    // The submission number WQ `wq` gives its next descriptor: descriptors submitted
    // before now have lower ones.
    uint64_t mark(unsigned wq) const;
    // True when no descriptor of `wq` numbered below `mark` is queued or running.
    bool quiet(unsigned wq, uint64_t mark) const;
    // Drops what `wq` holds, queued and running, without completion records (Abort WQ,
    // Reset WQ, a WQ disabled after its drain).
    void abort(unsigned wq);
    void abort_all();
    // Called after every completion: a drain waiting in the commands may end.
    std::function<void()> on_progress;
    // The MSI-X vector an interrupt handle names, if any (the commands grant handles).
    std::function<std::optional<unsigned>(uint16_t)> vector_of;

    // ---- Fault plans (faults.cc) ----
    void set_injector(faults::Injector* injector) { injector_ = injector; }
    bool release(unsigned rule);

    // ---- The device ----
    void timer(unsigned engine);
    void reset();
    // The engines' timers follow the command timer (0): engine e is timer 1 + e.
    static constexpr unsigned kFirstTimer = 1;
    const char* invariant_violation() const;
    void save(StateWriter& w) const;
    bool load(StateReader& r);
    void resume(); // after a load: the engines' timers

  private:
    // A descriptor a WQ holds: its words, its number, and whether it came through an IMS
    // portal (its interrupt handle then names an IMS entry, which this device has none of).
    struct Entry {
        RawDescriptor d;
        uint64_t seq = 0;
        bool ims = false;
    };
    struct Wq {
        std::deque<Entry> q;
        uint64_t next_seq = 0;
    };
    // A batch an engine runs: the batch descriptor, and how far along its list it is.
    struct Batch {
        Work desc;
        uint32_t next = 0;      // index of the next descriptor to fetch
        uint32_t completed = 0; // descriptors that completed (BYTES_COMPLETED)
        bool failed = false;    // one did not succeed: the batch's status is Batch Fail
    };
    struct Engine {
        std::optional<Work> work; // the descriptor running (in a batch: its current one)
        std::optional<Batch> batch;
        bool ims = false;
        uint64_t epoch = 0; // moves on every abort and reset of the engine's work
        std::optional<uint64_t> armed_at;
        std::unique_ptr<Pacer> pacer;
        uint8_t scratch[2][Exec::kPiece];
    };
    struct Budget {
        uint64_t bytes;
        unsigned descriptors;
    };

    // portals.cc
    void submit(unsigned wq, bool ims, const RawDescriptor& d);
    void drop(unsigned wq, const char* why, Status code);
    void set_occupancy(unsigned wq);
    bool wq_enabled(unsigned wq) const;
    // engines.cc
    // Arms every engine with work to take (but `except`, -1: none), from its timer; the
    // first idle one it armed (an engine holding a drain that waits is not idle), or -1.
    int dispatch(int except = -1);
    bool take(unsigned engine);
    void arm(unsigned engine, uint64_t when);
    void disarm(unsigned engine);
    void run(unsigned engine, Engine& e, Budget& budget, uint64_t now, uint64_t& wake);
    bool start(Engine& e, Work& w, uint64_t now);
    bool data_phase(unsigned engine, Engine& e, Work& w, Budget& budget, uint64_t now,
                    uint64_t& wake);
    bool drain_blocked(unsigned engine, const Work& w) const;
    // What engine `e` holds: its batch, or the descriptor it runs.
    static const Work* holding(const Engine& e);
    bool batch_next(Engine& e, Budget& budget);
    void drop_job(Engine& e);
    unsigned index_of(const Engine& e) const { return static_cast<unsigned>(&e - engines_.data()); }
    // faults.cc: what the plan does to `w`, which an engine starts now; the race detector's
    // mark; the corruption a rule asked for, once `w` has succeeded.
    void inject(Work& w, uint64_t now);
    void mark_race(unsigned engine, const Work& w);
    bool corrupt(unsigned engine, Engine& e, Work& w);
    Limits limits(unsigned wq) const;
    MemAttrs attrs(unsigned wq) const;
    // completion.cc
    bool complete(Engine& e, Work& w);
    bool write_record(Engine& e, const Work& w);
    void report(const Work& w, Status code);
    bool interrupt(Engine& e, const Work& w, bool ims);

    Shared& s_;
    Tables& t_;
    Events& e_;
    std::vector<Wq> wqs_;
    std::vector<Engine> engines_;
    unsigned rr_ = 0; // the WQ dispatch looks at first among equals
    faults::Injector* injector_ = nullptr;
    // The 64-byte write being assembled: MOVDIR64B arrives as eight 8-byte writes,
    // ascending, with nothing in between (the BQL held across them).
    struct Assembly {
        bool active = false;
        uint32_t base = 0;
        unsigned have = 0;
        uint64_t word[kDescriptorWords] = {};
    } asm_;

    template <class IO, class W> static void io_work(IO& io, W& w);
};

} // namespace dmalab::dsa
