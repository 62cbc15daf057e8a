// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the VT-d unit against arbitrary guest behaviour. The input is read as a
// program: register writes and reads of any size and value (IRTA among them), guest-memory
// contents (root, context and page tables, the invalidation queue with interrupt entry cache
// descriptors, interrupt remapping table entries, all at small plausible addresses),
// translation requests, interrupt requests, timer expiries, resets and save/load round trips,
// half of them under a fault plan that delays and drops invalidations and fails translations;
// half the units remap interrupts, and half of those with queued invalidation run in
// scalable mode (PASID entries and PASID-based descriptors among the memory contents). Invariants:
// no timer beyond the time limit, a busy step never re-arms for the same instant, queued work
// drains in bounded steps, a saved state reloads to the same bytes, a delivered interrupt is a
// message to 0xFEEx_xxxx and a blocked one has an interrupt remapping reason, and no
// translation is given for the interrupt address range or over it (an ATS translation
// request there is answered R=0, W=1, U=1). Build: CXX=clang++
// meson setup build-fuzz -Dfuzz=enabled -Dqemu=disabled Run:   build-fuzz/vtd/fuzz/vtd-fuzz
// -max_len=2048 -max_total_time=60

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../../common/testing/fuzz.h"
#include "dmalab/vtd/faults.h"
#include "dmalab/vtd/unit.h"

namespace
{

using namespace dmalab;
using namespace dmalab::vtd;

using dmalab::fuzz::violated;

class Program : dmalab::fuzz::Input
{
  public:
    Program(const uint8_t* data, size_t size) : Input(data, size) {}

    void run()
    {
        testing::FakeMemory mem(256u << 10);
        testing::FakeTimers timers;
        testing::FakeInterrupts irq;
        testing::FakeLog log;
        Config c = config();
        if (check(c))
            return;
        // A window onto the unit's own registers, as a status write or table could aim.
        Unit* self = nullptr;
        mem.add_window({0x3f000, 0x1000, [&self](uint64_t off, const uint8_t* d, size_t n) {
                            uint64_t v = 0;
                            for (size_t i = 0; i < n && i < 8; i++)
                                v |= uint64_t{d[i]} << (8 * i);
                            self->mmio_write(static_cast<uint32_t>(off), v, n >= 8 ? 8 : 4);
                        }});
        Unit unit(c, Host{mem, timers, irq, log, nullptr});
        self = &unit;
        faults::Injector injector;
        maybe_plan(unit, injector);
        unsigned trips = 0;
        while (more()) {
            operation(unit, mem, timers, c, trips);
            if (timers.over_limit)
                violated("a timer armed beyond the time limit");
        }
        // Whatever is queued finishes: at most one step per queue entry and command.
        for (uint64_t steps = 0; !timers.pending.empty(); steps++) {
            if (steps > 3 * 32768 + 16)
                violated("queued work did not drain in bounded steps");
            step(unit, timers);
        }
    }

  private:
    // The unit's configuration, from the program's first bytes.
    Config config()
    {
        Config c;
        c.aw_bits = byte() & 1 ? 48 : 39;
        c.iotlb_ways = 1u << (byte() % 4);
        c.iotlb_entries = c.iotlb_ways * (1u << (byte() % 5));
        c.context_entries = 4u << (byte() % 3);
        c.replacement = static_cast<Replacement>(byte() % 3);
        c.qi = byte() & 1;
        c.pt = byte() & 1;
        c.audit = byte() & 1;
        c.inv_desc_ns = byte() % 4 * 100;
        c.inv_page_ns = byte() % 3;
        c.wait_ns = byte() % 4 * 100;
        c.queue_step = 1 + byte() % 16;
        c.seed = byte();
        uint8_t ir = byte();
        c.ir = c.qi && (ir & 1);
        c.eim = ir & 2;
        c.iec_entries = 4u << (ir >> 2) % 4;
        c.dt = c.qi && (ir & 0x10); // device-TLBs: TT=01 and device-TLB descriptors
        c.cm = ir & 0x20;           // caching mode: negative IOTLB entries
        c.iec_inv_ns = byte() % 4 * 100;
        // device-TLB invalidations the plan delays past this time out (ITE)
        c.devtlb_timeout_ns = ir & 0x40 ? 1 + byte() % 4 * 1000 : 0;
        // scalable mode; first-stage tables unless the seed is odd (they need 48 bits)
        c.sm = c.qi && (ir & 0x80);
        c.fs = c.aw_bits == 48 && !(c.seed & 1);
        // paging-structure caches, from the seed's other bits: small (evicting) unless a
        // bit turns one off (a seed of 0, the stored seeds', has all three)
        static constexpr unsigned kPde[] = {4, 8, 0, 32};
        c.pde_cache = kPde[c.seed >> 1 & 3];
        c.pdpe_cache = c.seed >> 3 & 1 ? 0 : 4;
        c.pml4e_cache = c.seed >> 4 & 1 ? 0 : 4;
        return c;
    }

    // Half the programs run under a fault plan that delays and drops invalidations and
    // fails translations at random (seeded by the input).
    void maybe_plan(Unit& unit, faults::Injector& injector)
    {
        if (!(byte() & 1))
            return;
        unsigned seed = byte();
        unsigned delay = u16();
        std::string plan = R"({"seed": )" + std::to_string(seed) + R"(, "rules": [
            {"kind": "delay-invalidation", "delay": )" +
                           std::to_string(delay) + R"(,
             "probability": 0.5},
            {"kind": "drop-invalidation", "probability": 0.3},
            {"kind": "translation-fault", "reason": 5, "op": "write", "probability": 0.1},
            {"kind": "translation-fault", "reason": 2, "probability": 0.05},
            {"kind": "drop-invalidation", "op": "interrupt-cache", "probability": 0.2}]})";
        std::string err;
        auto p = faults::parse_plan(plan, fault_spec(), "vtd", &err);
        if (!p)
            violated("the harness's own plan is refused");
        injector.set_plan(*p);
        unit.set_injector(&injector);
    }

    // One operation of the program.
    void operation(Unit& unit, testing::FakeMemory& mem, testing::FakeTimers& timers,
                   const Config& c, unsigned& trips)
    {
        unsigned op = byte() % 14;
        switch (op) {
        case 0:
        case 1: { // register write
            uint32_t off = u16() % 0x300;
            unsigned size = 1u << (byte() % 4);
            unit.mmio_write(off, u64(), size);
            break;
        }
        // Every value is read into its own variable first: the order in which a
        // compiler evaluates function arguments or operands is unspecified, and the
        // same input must mean the same program with any compiler.
        case 2: { // a register write with a small value (addresses, indices)
            uint32_t off = u16() % 0x300 & ~3u;
            uint64_t value = u16();
            unsigned shift = byte() % 24;
            unit.mmio_write(off, value << shift, 8);
            break;
        }
        case 3: {
            uint32_t off = u16() % 0x300;
            unsigned size = 1u << (byte() % 4);
            unit.mmio_read(off, size);
            break;
        }
        case 4:
        case 5:
        case 13:
            memory(mem, op);
            break;
        case 6:
        case 7:
            translation(unit);
            break;
        case 8: { // timer expiries
            unsigned n = 1 + byte() % 8;
            for (unsigned i = 0; i < n && !timers.pending.empty(); i++)
                step(unit, timers);
            break;
        }
        case 9:
            timers.now += u16();
            break;
        case 10:
            if (byte() % 8 == 0)
                unit.reset();
            break;
        case 11:
            if (trips++ < 4)
                dmalab::fuzz::round_trip<Unit, Host>(unit, mem, c);
            break;
        case 12:
            interrupt(unit);
            break;
        }
    }

    // Guest memory: a raw word (4), a plausible entry (5), a device-TLB or interrupt cache
    // descriptor or a remapping table entry (13).
    void memory(testing::FakeMemory& mem, unsigned op)
    {
        switch (op) {
        case 4: { // memory: raw
            size_t at = u16() * 4u % (mem.ram.size() - 8);
            mem.put<uint64_t>(at, u64());
            break;
        }
        case 5: { // memory: a plausible entry (pointer | low flags)
            uint64_t page = uint64_t{u16() % 64u}; // inside the 256 KiB
            uint64_t v = page << 12 | byte();
            if (byte() & 1) {
                uint64_t did = byte();
                uint64_t aw = byte() % 3u;
                v |= did << 8 | aw; // hi: DID, AW
            }
            size_t at = u16() * 4u % (mem.ram.size() - 8);
            mem.put<uint64_t>(at, v);
            break;
        }
        case 13: { // memory: a device-TLB or interrupt cache descriptor, or an IRTE
            size_t at = u16() * 16u % (mem.ram.size() - 16);
            uint8_t what = byte();
            if (what & 8) {
                scalable(mem, at, what);
                break;
            }
            uint64_t index = u16();
            uint64_t bits = byte();
            uint64_t low = byte();
            uint64_t hi = u64() & 0xfffff;
            uint64_t lo = what & 4   ? index << 32 | (bits & 0x1f) << 16 | 3 // SID, MIP
                          : what & 1 ? index << 32 | (bits & 0x1f) << 27 | (low & 1) << 4 | 4
                                     : index << 32 | bits << 16 | low; // DST, V, P..DLM
            mem.put<uint64_t>(at, lo);
            mem.put<uint64_t>(at + 8, what & 2 ? hi : 0);
            break;
        }
        }
    }

    // Scalable mode's structures at `at`: a PASID entry (a table, a stage, an address
    // width, a domain, a first-stage pointer and its flags) or, in 32 bytes, a PASID-cache,
    // PASID-based IOTLB or PASID-based device-TLB descriptor with its granularity, domain
    // and PASID (and an upper half that is mostly 0).
    void scalable(testing::FakeMemory& mem, size_t at, uint8_t what)
    {
        uint64_t page = u16() % 64u, page2 = u16() % 64u;
        uint64_t bits = byte();
        uint64_t did = byte();
        uint64_t pasid = u16();
        uint64_t hi = u64();
        at &= ~size_t{31};
        if (what & 16) {
            at = at / 64 * 64 % (mem.ram.size() - 64);
            mem.put<uint64_t>(at, page << 12 | (bits & 7) << 6 | (bits >> 3 & 7) << 2 | 1);
            mem.put<uint64_t>(at + 8, did);
            mem.put<uint64_t>(at + 16, page2 << 12 | (bits >> 6) << 2);
            return;
        }
        static constexpr uint64_t kTypes[] = {6, 7, 1u << 9}; // type 8: 0 with TYPE_HI 1
        uint64_t lo = pasid << 32 | did << 16 | (bits & 3) << 4 | kTypes[(bits >> 2) % 3];
        mem.put<uint64_t>(at, lo);
        mem.put<uint64_t>(at + 8, what & 2 ? hi : 0);
        mem.put<uint64_t>(at + 16, what & 32 ? hi : 0);
        mem.put<uint64_t>(at + 24, 0);
    }

    // A translation request, or a DMA engine's run. Bits of the permission byte otherwise
    // unused aim some at the 16 MiB around the interrupt address range, and make some ATS
    // translation requests.
    void translation(Unit& unit)
    {
        unsigned bus = byte() % 4;
        unsigned devfn = byte();
        uint64_t page = u16();
        unsigned shift = byte() % 40;
        uint8_t pb = byte();
        unsigned perm = pb % 4;
        uint16_t sid = static_cast<uint16_t>(bus << 8 | devfn);
        uint64_t iova = (pb >> 2 & 7) == 7 ? 0xfe000000 + (page << 8) : page << shift;
        if (byte() % 4 == 0) {
            // A DMA engine's whole piece: never longer than asked or kMaxRun, never into
            // the interrupt address range.
            uint64_t len = uint64_t{u16()} << (byte() % 12);
            Unit::Run run = unit.translate_run(sid, kNoPasid, iova, len, perm);
            if (run.len > len || run.len > Unit::kMaxRun || (!run.first.ok && run.len))
                __builtin_trap();
            if (run.len && iova < kInterruptRangeBase + kInterruptRangeSize &&
                kInterruptRangeBase - iova < run.len)
                violated("a run reaches into the interrupt address range");
        } else if (pb & 0x20) {
            // The completion for the interrupt address range is R=0, W=1, U=1, always.
            Translation t = unit.translation_request(sid, kNoPasid, iova);
            if (in_interrupt_range(iova) != t.untranslated_only ||
                (t.untranslated_only && (!t.ok || t.read || !t.write)))
                violated("a translation request of the interrupt range not untranslated-only");
            check_outside(t, iova);
        } else {
            check_outside(unit.translate(sid, kNoPasid, iova, perm), iova);
        }
    }
    // No translation is given for the interrupt address range, nor one that covers it.
    static void check_outside(const Translation& t, uint64_t iova)
    {
        if (in_interrupt_range(iova)
                ? t.ok && !t.untranslated_only
                : t.ok && t.iova <= kInterruptRangeBase + (kInterruptRangeSize - 1) &&
                      kInterruptRangeBase <= t.iova + t.mask)
            violated("a translation of (or over) the interrupt address range");
    }

    // An interrupt request: mostly 0xFEEx_xxxx in either format, sometimes anything.
    void interrupt(Unit& unit)
    {
        uint8_t kind = byte();
        uint64_t handle = u16();
        uint64_t low = byte() & 0xf;
        uint64_t address = 0xfee00000 | handle << 4 | low;
        if (kind % 8 == 0)
            address = u64();
        uint32_t data = kind & 8 ? u16() : static_cast<uint32_t>(u64());
        uint16_t sid = u16();
        InterruptRequest req{address, data, sid, (kind & 16) == 0, (kind & 32) == 0};
        bool on = unit.interrupt_remapping_enabled();
        Interrupt out = unit.remap_interrupt(req);
        // With remapping off the unit passes any write on unchanged (the platform decides
        // what it means); with it on, only an interrupt message leaves.
        if (out.ok && on && ((out.address & 0xffffffff) >> 20) != 0xfee)
            violated("an interrupt delivered outside the interrupt range");
        if (out.remapped && !on)
            violated("an interrupt remapped with remapping off");
        if (!out.ok && !is_interrupt_fault(out.fault_reason))
            violated("an interrupt blocked without an interrupt remapping reason");
        if (out.ok && !on && (out.address != address || out.data != data))
            violated("an interrupt changed with remapping off");
    }

    static void step(Unit& unit, testing::FakeTimers& timers)
    {
        auto [id, when] = *timers.next();
        timers.pending.erase(id);
        timers.now = std::max(timers.now, when);
        unit.timer(id);
        auto again = timers.pending.find(id);
        if (again != timers.pending.end() && again->second <= timers.now)
            violated("a step asked to run again at the same instant");
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    Program(data, size).run();
    return 0;
}
