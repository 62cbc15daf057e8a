// SPDX-License-Identifier: GPL-2.0-or-later
// How a descriptor ends (DSA spec, "Completion Record", "Interrupts", "Software Error"): its
// completion record when CRAV asks for one (on success only with RCR), its interrupt when RCI
// asks, and SWERR for an error it has no record to report in. The record's status byte is
// written last, after the rest of the record, so software that polls it reads a whole record.

#include "execute.h"
#include "parts.h"

namespace dmalab::dsa
{

namespace
{

// A status that reports the operation's own outcome rather than a failure.
bool succeeded(Status s)
{
    return s == Status::Success || s == Status::SuccessFalsePredicate;
}

// Outcomes that need no completion record unless RCR asks for one, and no software error
// without one: success, a false predicate, and a batch some of whose descriptors failed
// (they reported for themselves).
bool quiet_outcome(Status s)
{
    return succeeded(s) || s == Status::BatchFail;
}

// BYTES_COMPLETED: 0 for an operation that ran to its end; where it stopped otherwise (a
// fault, the first difference of a compare, a Create Delta whose record overflowed, the
// block a DIF check failed); for a batch, the descriptors it processed.
uint32_t bytes_completed(const Work& w)
{
    if (w.op() == Opcode::Batch)
        return static_cast<uint32_t>(w.done);
    if (!succeeded(w.status))
        return static_cast<uint32_t>(w.done);
    const bool stopped =
        ((w.op() == Opcode::Compare || w.op() == Opcode::ComparePattern) && w.result == 1) ||
        (w.op() == Opcode::CreateDelta && w.result == 2);
    return stopped ? static_cast<uint32_t>(w.done) : 0;
}

// The CR flag: RESULT against what the descriptor expects. Compare and Compare Pattern
// carry an expected RESULT (its bit 0: 0 or 1 are their only results); Create Delta a mask
// of acceptable ones.
void predicate(Work& w)
{
    if (!(w.flags() & flag::CR) || w.status != Status::Success)
        return;
    bool expected;
    if (w.op() == Opcode::CreateDelta)
        expected = (w.word(7) >> w.result) & 1;
    else
        expected = (w.word(5) & 1) == w.result; // bits 7:1 of EXPECTED_RESULT are ignored
    if (!expected)
        w.status = Status::SuccessFalsePredicate;
}

} // namespace

bool DataPath::write_record(Engine& e, const Work& w)
{
    uint8_t rec[kCompletionRecordSize] = {};
    uint8_t status = static_cast<uint8_t>(w.status) & cr::STATUS_CODE_MASK;
    if (w.fault_write)
        status |= cr::STATUS_FAULT_WRITE;
    const uint64_t w0 = field(cr::W0, "STATUS").put(status) |
                        field(cr::W0, "RESULT").put(w.result) |
                        field(cr::W0, "BYTES_COMPLETED").put(bytes_completed(w));
    store_le(rec, w0, 8);
    store_le(rec + 8, w.fault_addr, 8);
    const std::array<uint64_t, 2> tail = exec::record_tail(w);
    store_le(rec + 16, tail[0], 8);
    store_le(rec + 24, tail[1], 8);
    const uint64_t at = w.completion();
    const uint64_t epoch = e.epoch;
    const MemAttrs a = attrs(0);
    // The rest first, then the quadword that holds STATUS.
    DmaResult r = s_.call_out([&] { return s_.host.memory.write(at + 8, rec + 8, 24, a); });
    if (e.epoch == epoch && r.ok())
        r = s_.call_out([&] { return s_.host.memory.write(at, rec, 8, a); });
    if (r.ok())
        s_.counters.records++;
    if (Observer* o = s_.host.observer)
        o->record(w.wq, at, static_cast<Status>(status & cr::STATUS_CODE_MASK), r.ok());
    return r.ok();
}

void DataPath::report(const Work& w, Status code)
{
    SwError err(code, w.wq);
    err.desc_valid = true;
    err.operation = static_cast<uint8_t>(w.op());
    err.batch = w.in_batch;
    err.batch_index = w.batch_index;
    err.fault_write = w.fault_write;
    const uint64_t mode = t_.wq(w.wq).get(wq_reg("WQCFG_MODE"));
    err.priv = mode & WQCFG_PRIV;
    err.pasid = static_cast<uint32_t>(WQCFG_PASID.get(mode));
    err.invalid_flags = code == Status::InvalidFlags ? static_cast<uint32_t>(w.word2) : 0;
    err.fault_addr = code == Status::CompletionRecordFault ? w.completion() : w.fault_addr;
    e_.software_error(err);
}

bool DataPath::interrupt(Engine& e, const Work& w, bool ims)
{
    const uint64_t epoch = e.epoch;
    std::optional<unsigned> v = ims || !vector_of ? std::nullopt : vector_of(w.int_handle());
    if (!v)
        return true; // refused with InvalidIntHandle before it ran
    // An MSI-X permission entry with IGNORE set suppresses the vector's completion interrupts.
    const uint64_t perm = t_.perm(*v).get();
    if (!field(fields::MSIX_PERM, "IGNORE").get(perm))
        e_.notify(*v);
    return e.epoch == epoch;
}

bool DataPath::complete(Engine& e, Work& w)
{
    const uint64_t epoch = e.epoch;
    // Its race marks end before the guest can see it complete.
    if (Observer* o = s_.host.observer)
        o->ended(index_of(e));
    predicate(w);
    s_.counters.descriptors++;
    s_.counters.bytes += w.op() == Opcode::Batch ? 0 : w.done;
    if (!succeeded(w.status))
        s_.counters.descriptor_errors++;
    const bool ok = quiet_outcome(w.status);
    if (Observer* o = s_.host.observer)
        o->completed(w.wq, static_cast<uint8_t>(w.op()), w.status, w.done);
    const uint32_t flags = w.flags();
    // A misaligned record address is as good as none, whichever check failed first: no
    // record is written there (one 8 bytes below 2^64 would wrap to address 0).
    const bool recordable =
        (flags & flag::CRAV) && !(w.completion() & (kCompletionRecordAlign - 1));
    if (!recordable) {
        if (!ok)
            report(w, w.status);
    } else if ((flags & flag::RCR) || !ok) {
        if (!write_record(e, w) && e.epoch == epoch)
            report(w, Status::CompletionRecordFault);
    }
    if (e.epoch != epoch)
        return false;
    if ((flags & flag::RCI) && w.status != Status::InvalidIntHandle && !w.injected.drop_interrupt)
        return interrupt(e, w, e.ims);
    return true;
}

} // namespace dmalab::dsa
