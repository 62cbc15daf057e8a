// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans on dmalab-dsa (docs/faults.rst): decided when an engine starts a descriptor
// that passed its checks, with its pace drawn; the occasion's unit is the WQ it came through
// and its key the completion record's address (a descriptor sent through a portal has no
// address of its own). Batch and Drain descriptors take no faults; a batch's descriptors do.
// Also the DMA race detector's marks, which follow the same start and end.

#include "dmalab/dsa/faults.h"

#include <algorithm>

#include "execute.h"
#include "parts.h"

namespace dmalab::dsa
{

namespace
{

using faults::kind_bit;

using K = faults::Kind;
constexpr uint32_t kHolds =
    kind_bit(K::DelayData) | kind_bit(K::DelayCompletion) | kind_bit(K::Reorder);
// Every operation's: its time, its failure, its interrupt.
constexpr uint32_t kAnyOp = kHolds | kind_bit(K::Fail) | kind_bit(K::DropInterrupt);
// Only for operations whose whole outcome is what they write (no result, no CRC): what it
// writes cut short or changed.
constexpr uint32_t kWrites = kind_bit(K::Corrupt) | kind_bit(K::Shorten);

bool writes_only(Opcode op)
{
    return op == Opcode::Memmove || op == Opcode::Fill || op == Opcode::Dualcast;
}

// The ranges an occasion names: what the operation reads at word 2 and what it writes (or
// reads second) at word 3, as long as its transfer (the written one: exec::dest_extent);
// none for operations without.
struct Ranges {
    bool src = false, dst = false;
};

Ranges ranges_of(Opcode op)
{
    switch (op) {
    case Opcode::Memmove:
    case Opcode::Compare:
    case Opcode::CreateDelta:
    case Opcode::Dualcast:
    case Opcode::CopyCrc:
    case Opcode::ApplyDelta:
    case Opcode::DifInsert:
    case Opcode::DifStrip:
    case Opcode::DifUpdate:
        return {true, true};
    case Opcode::ComparePattern:
    case Opcode::CrcGen:
    case Opcode::DifCheck:
        return {true, false};
    case Opcode::Fill:
    case Opcode::CacheFlush:
        return {false, true};
    default:
        return {};
    }
}

} // namespace

faults::ModelSpec fault_spec(unsigned wqs)
{
    faults::ModelSpec s;
    s.type = "dmalab-dsa";
    s.kinds = kAnyOp | kWrites;
    s.unit_selector = "wq";
    s.unit_limit = wqs;
    for (const OpRow& r : op_rows())
        if (r.plan_name)
            s.ops.push_back({r.plan_name, static_cast<uint8_t>(r.op)});
    s.chanerr_mask = 0;
    // A page fault (BYTES_COMPLETED 0, FAULT_ADDR the first range) or a hardware error:
    // what a descriptor meets on real hardware, and idxd reports as a failed transfer.
    s.fail_codes = {static_cast<uint8_t>(Status::PageFaultNoBof),
                    static_cast<uint8_t>(Status::HwError)};
    s.max_delay_ns = kMaxDelayNs;
    s.release_kinds = kHolds;
    return s;
}

void DataPath::inject(Work& w, uint64_t now)
{
    const Opcode op = w.op();
    if (!injector_ || !op_row(op) || !op_row(op)->plan_name)
        return;
    const Ranges rg = ranges_of(op);
    const uint64_t len = exec::extent(w);
    faults::Occasion o{};
    // A copy down (its destination inside its source) writes its tail first: it has no
    // prefix to cut, and the kinds that act on what an operation writes pass it by.
    o.kinds =
        kAnyOp | (writes_only(op) && !(op == Opcode::Memmove && (w.result & 1)) ? kWrites : 0);
    o.unit = w.wq;
    o.op = static_cast<uint8_t>(op);
    o.key = w.completion();
    if (rg.src) {
        o.start[0] = w.word(2);
        o.end[0] =
            faults::range_end(w.word(2), op == Opcode::ApplyDelta ? w.word(5) & 0xffffffff : len);
    }
    if (rg.dst) {
        o.start[1] = w.word(3);
        o.end[1] = faults::range_end(w.word(3), exec::dest_extent(w));
    }
    Work::Injected& j = w.injected;
    injector_->decide(o, now, [&](const faults::Rule& r) {
        // A hold the guest may end (the doorbell's release): none left when the release
        // came first; otherwise release() takes it back.
        uint64_t hold = r.ns;
        const bool releasable = r.until_release && j.release_rule == Work::Injected::kNoRelease;
        if (r.until_release && injector_->released(r.index))
            hold = 0;
        else if (releasable)
            j.release_rule = r.index;
        switch (r.kind) {
        case K::DelayData:
        case K::Reorder:
            // The data waits, and the completion with it: later work on other engines
            // overtakes it.
            w.pace.data_at = sat_add(w.pace.data_at, hold);
            w.pace.done_at = sat_add(w.pace.done_at, hold);
            if (releasable)
                j.held_data_ns = hold;
            break;
        case K::DelayCompletion:
            w.pace.done_at = sat_add(w.pace.done_at, hold);
            if (releasable)
                j.held_done_ns = hold;
            break;
        case K::Fail:
            if (w.status == Status::None) {
                w.status = static_cast<Status>(r.chanerr);
                w.data_done = true;
                w.fault_addr = rg.src ? w.word(2) : rg.dst ? w.word(3) : 0;
                w.fault_write = !rg.src && rg.dst && w.status == Status::PageFaultNoBof;
            }
            break;
        case K::Corrupt:
            j.corrupt_xor = r.xor_mask;
            break;
        case K::Shorten:
            j.move_limit = std::min(j.move_limit, r.bytes);
            break;
        case K::DropInterrupt:
            j.drop_interrupt = true;
            break;
        default:
            break;
        }
    });
}

bool DataPath::release(unsigned rule)
{
    bool ended = false;
    const uint64_t now = s_.now();
    for (unsigned i = 0; i < engines_.size(); i++) {
        Engine& e = engines_[i];
        if (!e.work || e.work->injected.release_rule != rule)
            continue;
        Work& w = *e.work;
        Work::Injected& j = w.injected;
        w.pace.data_at -= std::min(w.pace.data_at, j.held_data_ns);
        w.pace.done_at -= std::min(w.pace.done_at, j.held_data_ns + j.held_done_ns);
        j.release_rule = Work::Injected::kNoRelease;
        j.held_data_ns = j.held_done_ns = 0;
        ended = true;
        // The timer stood at the end of the hold.
        arm(i, now);
    }
    return ended;
}

void DataPath::mark_race(unsigned engine, const Work& w)
{
    Observer* o = s_.host.observer;
    const Opcode op = w.op();
    if (o && (op == Opcode::Memmove || op == Opcode::Dualcast || op == Opcode::CopyCrc))
        o->started(engine, w.completion(), w.word(2), w.word(3), w.size());
}

bool DataPath::corrupt(unsigned engine, Engine& e, Work& w)
{
    const uint8_t x = w.injected.corrupt_xor;
    w.injected.corrupt_xor = 0;
    if (!x || w.status != Status::Success || w.done == 0)
        return true;
    const uint64_t at = w.word(3) + w.done - 1;
    const uint64_t epoch = e.epoch;
    uint8_t b = 0;
    const MemAttrs a = attrs(engine);
    DmaResult r = s_.call_out([&] { return s_.host.memory.read(at, &b, 1, a); });
    if (e.epoch != epoch)
        return false;
    b ^= x;
    if (r.ok())
        s_.call_out([&] { return s_.host.memory.write(at, &b, 1, a); });
    return e.epoch == epoch;
}

} // namespace dmalab::dsa
