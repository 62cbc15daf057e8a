// SPDX-License-Identifier: GPL-2.0-or-later
// The engines (DSA spec, "Groups", "Engines"): an engine of a group takes descriptors from
// the group's enabled WQs, the highest WQCFG.PRIORITY first and round robin among equals,
// and runs one at a time in bounded steps on its own timer. A descriptor's data moves at the
// modelled rate from when it starts; it completes at the pace the engine's Pacer drew. A
// batch runs its descriptors in list order on the engine that took it; a drain waits for
// every descriptor its WQ took before it.

#include <algorithm>

#include "execute.h"
#include "parts.h"

namespace dmalab::dsa
{

void DataPath::arm(unsigned engine, uint64_t when)
{
    engines_[engine].armed_at = when;
    s_.host.timers.arm(kFirstTimer + engine, when);
}

void DataPath::disarm(unsigned engine)
{
    engines_[engine].armed_at.reset();
    s_.host.timers.cancel(kFirstTimer + engine);
}

void DataPath::drop_job(Engine& e)
{
    if (e.work && s_.host.observer)
        s_.host.observer->ended(index_of(e));
    e.work.reset();
    e.batch.reset();
    e.epoch++;
}

Limits DataPath::limits(unsigned wq) const
{
    const WqEntry& cfg = t_.wq(wq);
    const uint64_t mode = cfg.get(wq_reg("WQCFG_MODE"));
    const uint64_t lim = cfg.get(wq_reg("WQCFG_LIMITS"));
    Limits l;
    l.opcap = s_.config.opcap;
    l.max_xfer_shift = static_cast<uint8_t>(field(fields::WQCFG_LIMITS, "MAX_XFER_SHIFT").get(lim));
    l.max_batch_shift =
        static_cast<uint8_t>(field(fields::WQCFG_LIMITS, "MAX_BATCH_SHIFT").get(lim));
    l.block_on_fault = field(fields::WQCFG_MODE, "BOF").get(mode);
    l.overlap_copy = true;
    l.cache_control = true;
    l.user_interrupts = (mode & WQCFG_PRIV) || !(mode & WQCFG_PASID_EN) ||
                        field(fields::GENCFG, "USER_INT_EN").get(s_.reg(reg("GENCFG")));
    return l;
}

MemAttrs DataPath::attrs(unsigned engine) const
{
    // The requests carry no PASID yet; the host fills in the requester ID.
    MemAttrs a;
    a.stream = static_cast<uint16_t>(engine);
    return a;
}

// The WQ engine `engine` serves next, if any: of the enabled WQs of its group that hold a
// descriptor, the highest priority, the first at or after rr_ among equals.
bool DataPath::take(unsigned engine)
{
    std::optional<unsigned> best;
    unsigned best_prio = 0;
    const unsigned n = static_cast<unsigned>(wqs_.size());
    for (unsigned k = 0; k < n; k++) {
        const unsigned wq = (rr_ + k) % n;
        if (wqs_[wq].q.empty() || !wq_enabled(wq))
            continue;
        const int g = t_.group_of(wq);
        if (g < 0 || !((t_.group(static_cast<unsigned>(g)).engines() >> engine) & 1))
            continue;
        const unsigned prio = static_cast<unsigned>(
            field(fields::WQCFG_MODE, "PRIORITY").get(t_.wq(wq).get(wq_reg("WQCFG_MODE"))));
        if (!best || prio > best_prio) {
            best = wq;
            best_prio = prio;
        }
    }
    if (!best)
        return false;
    Wq& w = wqs_[*best];
    Engine& e = engines_[engine];
    Work work;
    work.d = w.q.front().d;
    work.seq = w.q.front().seq;
    work.wq = static_cast<uint8_t>(*best);
    e.ims = w.q.front().ims;
    w.q.pop_front();
    set_occupancy(*best);
    e.work = work;
    rr_ = (*best + 1) % n;
    return true;
}

int DataPath::dispatch(int except)
{
    // Every idle engine with a descriptor it may take, and every drain that waits, runs
    // again from its timer: never inside the write or step that made the work.
    const uint64_t now = s_.now();
    int first_idle = -1;
    for (unsigned i = 0; i < engines_.size(); i++) {
        Engine& e = engines_[i];
        if (e.armed_at || static_cast<int>(i) == except)
            continue;
        const bool idle = !holding(e);
        bool go = e.work && e.work->op() == Opcode::Drain;
        if (idle)
            for (unsigned wq = 0; wq < wqs_.size() && !go; wq++) {
                const int g = t_.group_of(wq);
                go = !wqs_[wq].q.empty() && wq_enabled(wq) && g >= 0 &&
                     ((t_.group(static_cast<unsigned>(g)).engines() >> i) & 1);
            }
        if (!go)
            continue;
        arm(i, now);
        if (idle && first_idle < 0)
            first_idle = static_cast<int>(i);
    }
    return first_idle;
}

const Work* DataPath::holding(const Engine& e)
{
    if (e.batch)
        return &e.batch->desc;
    return e.work ? &*e.work : nullptr;
}

bool DataPath::drain_blocked(unsigned engine, const Work& w) const
{
    for (unsigned i = 0; i < engines_.size(); i++) {
        const Work* other = holding(engines_[i]);
        if (i != engine && other && other->wq == w.wq && other->seq < w.seq)
            return true;
    }
    return false;
}

bool DataPath::start(Engine& e, Work& w, uint64_t now)
{
    w.started = true;
    uint32_t bad = 0;
    const bool ims = e.ims;
    auto vector = [&](uint16_t h) -> std::optional<unsigned> {
        // IMS portals' handles name IMS entries; the device has none.
        if (ims || !vector_of)
            return std::nullopt;
        return vector_of(h);
    };
    const Status st = check(w, limits(w.wq), vector, bad);
    if (st != Status::None) {
        w.status = st;
        w.word2 = st == Status::InvalidFlags ? bad : 0;
        w.pace = {now, 0, now};
        w.data_done = true;
        return true;
    }
    const OpRow* row = op_row(w.op());
    const uint64_t len = row->moves ? exec::extent(w) * std::max(row->streams, 1u) : 0;
    w.pace = e.pacer->next(len, now);
    Exec x{s_.host.memory, {}, {}, true, nullptr, nullptr};
    exec::begin(x, w);
    inject(w, now);
    if (w.status == Status::None)
        mark_race(index_of(e), w);
    if (!row->exec) {
        w.data_done = true;
        if (w.status == Status::None && w.op() != Opcode::Drain && w.op() != Opcode::Batch)
            w.status = Status::Success;
    }
    return true;
}

bool DataPath::data_phase(unsigned engine, Engine& e, Work& w, Budget& budget, uint64_t now,
                          uint64_t& wake)
{
    if (now < w.pace.data_at) {
        wake = w.pace.data_at;
        return false;
    }
    const OpRow* row = op_row(w.op());
    // A "shorten" rule's cut: the operation succeeds there.
    const uint64_t ext = std::min(exec::extent(w), w.injected.move_limit);
    const uint64_t bw = w.pace.bandwidth;
    // The data phase's rate covers every stream the operation touches.
    const uint64_t streams = std::max(row->streams, 1u);
    const uint64_t allowed = bw ? std::min(ext, bytes_in(now - w.pace.data_at, bw) / streams) : ext;
    if (w.done < allowed && w.status == Status::None) {
        if (budget.bytes == 0) {
            wake = 0;
            return false;
        }
        const uint64_t epoch = e.epoch;
        const std::function<bool()> alive = [&] { return e.epoch == epoch; };
        Exec x{s_.host.memory, attrs(engine), alive, true, e.scratch[0], e.scratch[1]};
        const uint64_t before = w.done;
        const uint64_t n = std::min(allowed - w.done, budget.bytes);
        const bool ok = s_.call_out([&] { return row->exec(x, w, n); });
        if (!ok || e.epoch != epoch)
            return false; // reset or aborted under it: `w` is gone
        w.pace.done_at = sat_add(w.pace.done_at, s_.host.memory.take_cost());
        budget.bytes -= std::min(budget.bytes, std::max<uint64_t>(w.done - before, 1));
    }
    if (w.status == Status::None && w.done >= ext)
        w.status = Status::Success; // cut short (a cut of 0 bytes at once)
    if (w.status != Status::None) {
        w.data_done = true;
        return true;
    }
    if (w.done < allowed) {
        wake = 0; // the budget ran out
        return false;
    }
    const uint64_t target = std::min(ext, w.done + s_.config.step_bytes);
    wake = sat_add(w.pace.data_at, transfer_ns(target * streams, bw));
    return false;
}

// The batch's next descriptor, read from its list; false when the batch has ended (its own
// completion is then due).
bool DataPath::batch_next(Engine& e, Budget& budget)
{
    Batch& b = *e.batch;
    if (b.next >= b.desc.size())
        return false;
    const uint64_t addr = b.desc.word(2) + uint64_t{b.next} * kDescriptorSize;
    uint8_t raw[kDescriptorSize];
    const uint64_t epoch = e.epoch;
    const DmaResult r =
        wraps(b.desc.word(2), (uint64_t{b.next} + 1) * kDescriptorSize)
            ? DmaResult::failure(DmaError::Wrap, 0)
            : s_.call_out([&] { return s_.host.memory.read(addr, raw, sizeof raw, attrs(0)); });
    if (e.epoch != epoch)
        return false;
    if (budget.descriptors)
        budget.descriptors--;
    if (!r.ok()) {
        // The list could not be read: the batch ends where it stands.
        b.desc.status = Status::BatchPageFault;
        b.desc.fault_addr = r.fault_addr;
        return false;
    }
    Work sub;
    for (unsigned i = 0; i < kDescriptorWords; i++)
        sub.d.word[i] = load_le(raw + 8 * i, 8);
    if ((sub.flags() & flag::FENCE) && b.failed) {
        // A fence after a descriptor that did not succeed: the rest is abandoned.
        return false;
    }
    sub.wq = b.desc.wq;
    sub.seq = b.desc.seq;
    sub.in_batch = true;
    sub.batch_index = static_cast<uint16_t>(b.next++);
    e.work = sub;
    return true;
}

void DataPath::run(unsigned engine, Engine& e, Budget& budget, uint64_t now, uint64_t& wake)
{
    const uint64_t epoch = e.epoch;
    for (;;) {
        if (!e.work && !e.batch) {
            if (budget.descriptors == 0) {
                wake = 0;
                return;
            }
            if (!take(engine)) {
                wake = ~0ull; // idle
                return;
            }
            budget.descriptors--;
        }
        if (!e.work) {
            // A batch between its descriptors: the next one, or the batch's own end.
            if (budget.descriptors == 0) {
                wake = 0;
                return;
            }
            if (batch_next(e, budget))
                continue;
            if (e.epoch != epoch)
                return;
            Batch& b = *e.batch;
            Work done = b.desc;
            if (done.status == Status::None)
                done.status =
                    b.failed || b.completed < done.size() ? Status::BatchFail : Status::Success;
            done.done = b.completed;
            done.data_done = true;
            done.pace.done_at = now;
            e.batch.reset();
            e.work = done;
            s_.counters.batches++;
        }
        Work& w = *e.work;
        if (!wq_enabled(w.wq)) {
            // Its WQ was disabled by a halt: nothing more of it runs.
            s_.counters.aborted++;
            drop_job(e);
            return;
        }
        if (!w.started) {
            start(e, w, now);
            if (w.op() == Opcode::Batch && w.status == Status::None) {
                e.batch = Batch{w, 0, 0, false};
                e.work.reset();
                continue;
            }
        }
        if (w.op() == Opcode::Drain && w.status == Status::None) {
            if (drain_blocked(engine, w)) {
                wake = ~0ull; // woken by the completion it waits for
                return;
            }
            w.status = Status::Success;
        }
        if (!w.data_done && !data_phase(engine, e, w, budget, now, wake))
            return;
        if (w.injected.corrupt_xor && !corrupt(engine, e, w))
            return;
        if (now < w.pace.done_at) {
            wake = w.pace.done_at;
            return;
        }
        const bool sub = w.in_batch;
        if (!complete(e, w))
            return;
        // The status as the record has it: a false predicate fails a batch too.
        const Status st = w.status;
        e.work.reset();
        if (sub) {
            e.batch->completed++;
            if (st != Status::Success)
                e.batch->failed = true;
            continue;
        }
        if (on_progress)
            on_progress();
        if (e.epoch != epoch)
            return;
        dispatch(static_cast<int>(engine)); // this one goes on in its own loop
    }
}

void DataPath::timer(unsigned engine)
{
    if (engine >= engines_.size())
        return;
    Engine& e = engines_[engine];
    e.armed_at.reset();
    const uint64_t now = s_.now();
    const uint64_t epoch = e.epoch;
    Budget budget{s_.config.step_bytes, s_.config.step_descriptors};
    uint64_t wake = ~0ull;
    run(engine, e, budget, now, wake);
    if (e.epoch != epoch && !holding(e)) {
        dispatch(); // reset or aborted under it
        return;
    }
    // Armed for later by what ran (none of run()'s paths does so): keep that. Armed for
    // now, by a completion that found more queued: that, like a spent budget, goes on
    // strictly later on the modelled clock, so a guest that keeps its WQs full cannot hold
    // the main loop.
    if (e.armed_at && *e.armed_at > now)
        return;
    if (!e.armed_at && wake == ~0ull)
        return; // idle, or a drain waiting for a completion to wake it
    const uint64_t gap = sat_add(now, std::max<uint64_t>(s_.config.step_gap_ns, 1));
    const uint64_t next = e.armed_at || wake == 0 || wake <= now ? gap : wake;
    if (next > now)
        arm(engine, next);
    else
        disarm(engine); // the end of representable time: it stalls rather than spin
}

} // namespace dmalab::dsa
