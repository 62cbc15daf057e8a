// SPDX-License-Identifier: GPL-2.0-or-later
// The data path's migration state and its invariants: what the WQs hold, the 64-byte write
// being assembled, and each engine's descriptor, batch, pace and timer. A load takes only
// what the device could have reached: descriptors of enabled WQs, in submission order,
// within the WQs' sizes, progress within each transfer.

#include "execute.h"
#include "parts.h"

namespace dmalab::dsa
{

namespace
{

bool known(Status s)
{
    const auto v = static_cast<uint8_t>(s);
    return v <= static_cast<uint8_t>(Status::DifError) ||
           (v >= static_cast<uint8_t>(Status::UnsupportedOpcode) &&
            v <= static_cast<uint8_t>(Status::TranslationFailed));
}

} // namespace

template <class IO, class W> void DataPath::io_work(IO& io, W& w)
{
    for (auto& word : w.d.word)
        io(word);
    io(w.wq);
    io(w.seq);
    io(w.in_batch);
    io(w.batch_index);
    io(w.done);
    io(w.started);
    io(w.data_done);
    io(w.pace.data_at);
    io(w.pace.bandwidth);
    io(w.pace.done_at);
    io(w.result);
    io(w.fault_write);
    io(w.fault_addr);
    io(w.word2);
    io(w.crc);
    io(w.delta);
    io(w.next_offset);
    io(w.injected.release_rule);
    io(w.injected.held_data_ns);
    io(w.injected.held_done_ns);
    io(w.injected.move_limit);
    io(w.injected.corrupt_xor);
    io(w.injected.drop_interrupt);
}

void DataPath::save(StateWriter& out) const
{
    StateSave io{out};
    for (const Wq& w : wqs_) {
        io(w.next_seq);
        out.u32(static_cast<uint32_t>(w.q.size()));
        for (const Entry& e : w.q) {
            for (const uint64_t& word : e.d.word)
                io(word);
            io(e.seq);
            io(e.ims);
        }
    }
    out.u32(rr_);
    io(asm_.active);
    io(asm_.base);
    out.u32(asm_.have);
    for (const uint64_t& word : asm_.word)
        io(word);
    auto work = [&](const Work& w) {
        io_work(io, w);
        out.u8(static_cast<uint8_t>(w.status));
    };
    for (const Engine& e : engines_) {
        e.pacer->save(out);
        out.boolean(e.armed_at.has_value());
        out.u64(e.armed_at.value_or(0));
        io(e.ims);
        out.boolean(e.work.has_value());
        if (e.work)
            work(*e.work);
        out.boolean(e.batch.has_value());
        if (e.batch) {
            work(e.batch->desc);
            io(e.batch->next);
            io(e.batch->completed);
            io(e.batch->failed);
        }
    }
}

bool DataPath::load(StateReader& in)
{
    StateLoad io{in};
    for (Wq& w : wqs_) {
        io(w.next_seq);
        const uint32_t n = in.u32();
        if (n > 0xffff) {
            in.reject();
            return false;
        }
        for (uint32_t i = 0; i < n && in.ok(); i++) {
            Entry e;
            for (uint64_t& word : e.d.word)
                io(word);
            io(e.seq);
            io(e.ims);
            w.q.push_back(e);
        }
    }
    rr_ = in.u32();
    io(asm_.active);
    io(asm_.base);
    asm_.have = in.u32();
    for (uint64_t& word : asm_.word)
        io(word);
    auto work = [&](Work& w) {
        io_work(io, w);
        w.status = static_cast<Status>(in.u8());
    };
    for (Engine& e : engines_) {
        e.pacer->load(in);
        const bool armed = in.boolean();
        const uint64_t at = in.u64();
        e.armed_at = armed ? std::optional<uint64_t>(at) : std::nullopt;
        io(e.ims);
        if (in.boolean()) {
            e.work.emplace();
            work(*e.work);
        }
        if (in.boolean()) {
            e.batch.emplace(Batch{Work{}, 0, 0, false});
            work(e.batch->desc);
            io(e.batch->next);
            io(e.batch->completed);
            io(e.batch->failed);
        }
    }
    return in.ok();
}

void DataPath::resume()
{
    for (unsigned i = 0; i < engines_.size(); i++)
        if (engines_[i].armed_at)
            s_.host.timers.arm(kFirstTimer + i, *engines_[i].armed_at);
}

const char* DataPath::invariant_violation() const
{
    if (rr_ >= wqs_.size())
        return "the dispatch pointer names no WQ";
    if (asm_.active &&
        (asm_.base % DMALAB_DSA_SUBMISSION_SIZE || asm_.have == 0 ||
         asm_.have >= kDescriptorWords || asm_.base / DMALAB_DSA_WQ_PORTAL_STRIDE >= wqs_.size()))
        return "a portal write is half assembled where no descriptor can start";
    if (!asm_.active && asm_.have)
        return "a finished portal write left pieces behind";
    for (unsigned wq = 0; wq < wqs_.size(); wq++) {
        const Wq& w = wqs_[wq];
        if (w.q.size() > t_.wq(wq).get(wq_reg("WQCFG_SIZE")))
            return "a WQ holds more descriptors than its size";
        if (!w.q.empty() && !wq_enabled(wq))
            return "a disabled WQ holds descriptors";
        if (WQCFG_OCCUPANCY.get(t_.wq(wq).get(wq_reg("WQCFG_STATUS"))) != w.q.size())
            return "WQCFG.OCCUPANCY disagrees with what the WQ holds";
        uint64_t last = 0;
        for (size_t i = 0; i < w.q.size(); i++) {
            if ((i && w.q[i].seq <= last) || w.q[i].seq >= w.next_seq)
                return "a WQ's descriptors are out of submission order";
            last = w.q[i].seq;
        }
    }
    auto bad_work = [&](const Work& w) -> const char* {
        if (w.wq >= wqs_.size() || !wq_enabled(w.wq) || w.seq >= wqs_[w.wq].next_seq)
            return "an engine runs a descriptor no enabled WQ gave it";
        if (!known(w.status))
            return "an engine's descriptor has a status the device never writes";
        if (!w.started && (w.status != Status::None || w.done || w.data_done))
            return "an engine's descriptor moved before it started";
        if (w.pace.data_at > w.pace.done_at || w.pace.done_at > kTimeLimit)
            return "an engine's descriptor is paced beyond the model's time limit";
        if (w.op() != Opcode::Batch && op_row(w.op()) && w.status == Status::None &&
            w.done > exec::extent(w))
            return "an engine's descriptor has processed more than its transfer";
        if (w.delta > static_cast<uint32_t>(w.word(6)) && w.op() == Opcode::CreateDelta)
            return "a delta record grew beyond its maximum size";
        if (w.started && w.status == Status::None) {
            // Running: it passed its checks when it started, and will again (its handle
            // aside: a release may have come since), and has gone as its run could.
            const OpRow* row = op_row(w.op());
            uint32_t bad = 0;
            const auto any_vector = [](uint16_t) { return std::optional<unsigned>(0); };
            if (!row || check(w, limits(w.wq), any_vector, bad) != Status::None ||
                !exec::reachable(w))
                return "an engine runs a descriptor its checks refuse, or further than it can";
            // Only Batch and Drain outlast their data phase without a status.
            if (w.data_done ? w.op() != Opcode::Batch && w.op() != Opcode::Drain : !row->exec)
                return "an engine's descriptor ended its data phase with no status";
        }
        // What a plan cuts or corrupts is a destination written from its start.
        if ((w.injected.corrupt_xor || w.injected.move_limit != UINT64_MAX) &&
            ((w.op() != Opcode::Memmove && w.op() != Opcode::Fill && w.op() != Opcode::Dualcast) ||
             (w.op() == Opcode::Memmove && (w.result & 1))))
            return "a plan cuts or corrupts an operation it cannot";
        return nullptr;
    };
    for (const Engine& e : engines_) {
        if (e.armed_at && *e.armed_at > kTimeLimit)
            return "an engine's timer is beyond the model's time limit";
        if (e.work) {
            if (const char* why = bad_work(*e.work))
                return why;
            if (e.work->in_batch != e.batch.has_value())
                return "an engine runs a batch's descriptor outside a batch";
            if (e.batch && e.work->seq != e.batch->desc.seq)
                return "a batch's descriptor is numbered apart from its batch";
        }
        if (e.batch) {
            const Batch& b = *e.batch;
            if (const char* why = bad_work(b.desc))
                return why;
            if (b.desc.op() != Opcode::Batch || b.next > b.desc.size() || b.completed > b.next ||
                b.desc.in_batch)
                return "a batch is further along than its list";
        }
    }
    return nullptr;
}

} // namespace dmalab::dsa
