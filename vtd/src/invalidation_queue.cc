// SPDX-License-Identifier: GPL-2.0-or-later
// Queued invalidation (6.5.2): the queue in guest memory (IQA, IQH, IQT), its descriptors
// (context cache, IOTLB, interrupt entry cache, device-TLB, wait) in modelled time, the wait
// descriptor's status write and completion event, IQE, and ITE.

#include <algorithm>
#include <utility>

#include "dmalab/le.h"
#include "parts.h"

namespace dmalab::vtd
{

bool InvalidationQueue::wide() const
{
    return s_.config.sm && (s_.reg(reg("IQA")) & IQA_DW);
}

// 2^QS pages of 128-bit descriptors, or of 256-bit ones with IQA.DW.
uint32_t InvalidationQueue::entries() const
{
    return (256u << IQA_QS.get(s_.reg(reg("IQA")))) >> wide();
}

// IQH and IQT hold the descriptor's offset in the queue (bits 18:4): with 256-bit
// descriptors the index is bits 18:5, and IQT bit 4 set is an error (10.4.22).
uint32_t InvalidationQueue::head() const
{
    return static_cast<uint32_t>(IQ_INDEX.get(s_.reg(reg("IQH")))) >> wide();
}

uint32_t InvalidationQueue::tail() const
{
    return static_cast<uint32_t>(IQ_INDEX.get(s_.reg(reg("IQT")))) >> wide();
}

void InvalidationQueue::set_head(uint32_t h)
{
    s_.set(reg("IQH"), IQ_INDEX.put(uint64_t{h} << wide()));
}

void InvalidationQueue::enable()
{
    s_.set(reg("IQH"), 0); // 10.4.22: the head starts at 0
}

void InvalidationQueue::disable()
{
    if (busy_ || head() != tail())
        logf(s_.host.log, LogKind::GuestError,
             "vtd: queued invalidation disabled with descriptors pending; they are dropped");
    s_.host.timers.cancel(static_cast<unsigned>(Timer::Queue));
    busy_ = false;
    marks_.clear();
    s_.set(reg("IQH"), 0);
}

void InvalidationQueue::write_iqt()
{
    uint32_t t = tail();
    if (marks_.size() >= 64)
        marks_.erase(marks_.begin()); // a later mark then stands for the oldest writes
    marks_.emplace_back(t, s_.now());
    if (!s_.queue_on())
        return;
    if (t >= entries()) {
        logf(s_.host.log, LogKind::GuestError, "vtd: IQT %u beyond the %u-entry queue", t,
             entries());
        error({});
        return;
    }
    if (wide() && (IQ_INDEX.get(s_.reg(reg("IQT"))) & 1)) {
        logf(s_.host.log, LogKind::GuestError,
             "vtd: IQT bit 4 set with 256-bit descriptors (IQA.DW)");
        error({});
        return;
    }
    kick();
}

void InvalidationQueue::write_ics()
{
    if (!(s_.reg(reg("ICS")) & ICS_IWC))
        events_.clear_pending(Event::Invalidation);
}

void InvalidationQueue::kick()
{
    if (!busy_)
        run();
}

bool InvalidationQueue::fetch(InvDesc& d)
{
    // IQA bits at and above the host address width are ignored (VT-d 10.4.23), so the base
    // is below 2^aw_bits and base + head * 16 (head < 2^15) cannot pass 2^64.
    uint64_t base = s_.reg(reg("IQA")) & IQA_BASE.mask() & (pow2(s_.config.aw_bits) - 1);
    const bool w = wide();
    const size_t size = w ? InvDesc::kWideSize : InvDesc::kSize;
    uint64_t addr = base + uint64_t{head()} * size;
    uint8_t raw[InvDesc::kWideSize] = {};
    DmaResult r = s_.call_out([&] { return s_.host.memory.read(addr, raw, size, {}); });
    d = InvDesc::from(raw, w);
    return r.ok();
}

void InvalidationQueue::error(const InvDesc& d)
{
    busy_ = false;
    s_.host.timers.cancel(static_cast<unsigned>(Timer::Queue));
    s_.counters.queue_errors++;
    if (s_.host.observer)
        s_.host.observer->queue_error(head(), d.lo, d.hi);
    faults_.queue_error();
}

void InvalidationQueue::wait_done(const WaitInv& w, uint64_t now)
{
    if (w.status_write) {
        uint8_t data[4];
        store_le(data, w.status_data, 4);
        DmaResult r = s_.call_out(
            [&] { return s_.host.memory.write(w.status_address, data, sizeof data, {}); });
        if (!r.ok()) {
            s_.counters.wait_status_failed++;
            logf(s_.host.log, LogKind::GuestError, "vtd: wait status write to 0x%llx failed (%s)",
                 static_cast<unsigned long long>(w.status_address), to_string(r.error));
        }
    }
    if (w.intr) {
        uint64_t ics = s_.reg(reg("ICS"));
        s_.set(reg("ICS"), ics | ICS_IWC);
        if (!(ics & ICS_IWC))
            events_.raise(Event::Invalidation);
    }
    uint64_t modelled = due_ - submitted_;
    uint64_t achieved = now - submitted_;
    Counters& c = s_.counters;
    c.waits++;
    c.wait_modelled_ns += modelled;
    c.wait_achieved_ns += achieved;
    c.wait_max_achieved_ns = std::max(c.wait_max_achieved_ns, achieved);
    if (s_.host.observer)
        s_.host.observer->wait_done(modelled, achieved);
}

void InvalidationQueue::perform(uint64_t now)
{
    bool dropped = std::exchange(drop_, false);
    Decoded d = decode(desc_, s_.limits()); // it was valid when fetched
    invalidated_ |= !dropped && !std::holds_alternative<WaitInv>(d);
    if (const auto* cc = std::get_if<CcInv>(&d); cc && !dropped)
        inv_.context(cc->g, cc->did, cc->sid, cc->fm, true);
    else if (const auto* it = std::get_if<IotlbInv>(&d); it && !dropped)
        inv_.iotlb(it->g, it->did, it->addr, it->am, it->ih, true);
    else if (const auto* ie = std::get_if<IecInv>(&d); ie && !dropped)
        inv_.iec(*ie);
    else if (const auto* dt = std::get_if<DevTlbInv>(&d); dt && !dropped)
        inv_.devtlb(*dt);
    else if (const auto* pc = std::get_if<PcInv>(&d); pc && !dropped)
        inv_.pasid_cache(*pc);
    else if (const auto* pi = std::get_if<PiotlbInv>(&d); pi && !dropped)
        inv_.piotlb(*pi);
    else if (const auto* w = std::get_if<WaitInv>(&d))
        wait_done(*w, now);
}

// What Invalidations needs to know of a valid descriptor: its kind, cost and fault plan.
InvRequest InvalidationQueue::request_of(const Decoded& d, const InvDesc& raw)
{
    if (const auto* cc = std::get_if<CcInv>(&d))
        return {InvKind::Context, cc->g};
    if (const auto* it = std::get_if<IotlbInv>(&d))
        return {InvKind::Iotlb, it->g, raw.hi & IVA_ADDR.mask(), it->am};
    if (const auto* ie = std::get_if<IecInv>(&d))
        return {InvKind::Iec, ie->global ? Gran::Global : Gran::Selective, ie->index, ie->im};
    if (const auto* dt = std::get_if<DevTlbInv>(&d))
        return {InvKind::DevTlb, Gran::Selective, dt->addr, dt->pages_log2};
    if (const auto* pc = std::get_if<PcInv>(&d))
        return {InvKind::PasidCache, static_cast<Gran>(pc->g)};
    if (const auto* pi = std::get_if<PiotlbInv>(&d)) // costed as the IOTLB invalidation it is
        return {InvKind::Iotlb, pi->page ? Gran::Selective : Gran::Domain,
                pi->addr & IVA_ADDR.mask(), pi->am};
    return {InvKind::Wait, Gran::Reserved, raw.hi & IVA_ADDR.mask(), 0};
}

// When the descriptor at head h was made visible: the first IQT write that covered it.
uint64_t InvalidationQueue::submitted_at(uint32_t h, uint64_t now)
{
    while (!marks_.empty()) {
        auto [mark_tail, at] = marks_.front();
        uint32_t n = entries();
        // Descriptors head .. mark_tail-1 were covered by this write.
        uint32_t ahead = (mark_tail + n - h) % n;
        if (ahead == 0 || mark_tail >= n) {
            marks_.erase(marks_.begin()); // already passed
            continue;
        }
        return at;
    }
    return now;
}

void InvalidationQueue::run()
{
    unsigned budget = s_.config.queue_step;
    invalidated_ = false;
    for (;;) {
        uint64_t now = s_.now();
        if (busy_ && !finish(now, budget))
            return;
        if (!start(now))
            return;
    }
}

// A device-TLB invalidation did not complete in time (6.5.2.11): FSTS.ITE and the fault
// event. The unit completes none of the wait descriptors behind it: everything up to IQT
// is dropped (IQH moves there), and nothing is fetched until software clears ITE. Linux's
// qi_check_fault() (drivers/iommu/intel/dmar.c) then marks the waits it submitted from the
// descriptor before IQH back to IQT aborted, and submits them again.
void InvalidationQueue::time_out()
{
    Decoded d = decode(desc_, s_.limits());
    const auto* dt = std::get_if<DevTlbInv>(&d);
    uint32_t h = head(), t = tail(), n = entries();
    if (t >= n)
        t = (h + 1) % n; // an IQT the queue refuses: drop only this one
    uint32_t dropped = (t + n - h) % n;
    busy_ = false;
    timeout_ = false;
    end_ = due_;
    set_head(t);
    s_.counters.queue_timeouts++;
    if (s_.host.observer)
        s_.host.observer->queue_timeout(h, dt ? dt->sid : 0, dropped ? dropped : n);
    faults_.queue_timeout();
}

bool InvalidationQueue::finish(uint64_t now, unsigned& budget)
{
    if (due_ > now) {
        s_.host.timers.arm(static_cast<unsigned>(Timer::Queue), due_);
        return false;
    }
    if (timeout_) {
        time_out();
        return false;
    }
    // With hold_waits, the host tells what this call invalidated once it returns; the wait
    // (whose status the guest may read at once) completes in the next call, at once.
    if (s_.config.hold_waits && invalidated_ &&
        std::holds_alternative<WaitInv>(decode(desc_, s_.limits()))) {
        s_.host.timers.arm(static_cast<unsigned>(Timer::Queue), now);
        return false;
    }
    perform(now);
    busy_ = false;
    end_ = due_;
    if (!s_.queue_on())
        return false; // the status write or the event turned the queue off
    uint32_t h = (head() + 1) % entries();
    set_head(h);
    if (--budget == 0) {
        if (h != tail())
            s_.host.timers.arm(static_cast<unsigned>(Timer::Queue), sat_add(now, 1));
        return false;
    }
    return true;
}

bool InvalidationQueue::start(uint64_t now)
{
    if (!s_.queue_on() || (s_.reg(reg("FSTS")) & (FSTS_IQE | FSTS_ITE)))
        return false;
    uint32_t h = head(), t = tail();
    if (h == t)
        return false;
    if (h >= entries() || t >= entries()) {
        error({});
        return false;
    }
    InvDesc raw;
    if (!fetch(raw)) {
        logf(s_.host.log, LogKind::GuestError, "vtd: invalidation descriptor %u unreadable", h);
        error({});
        return false;
    }
    Decoded d = decode(raw, s_.limits());
    // In scalable mode 128-bit descriptors are invalid (6.5.2): software sets IQA.DW
    // before it points the unit at a scalable-mode root table.
    if (s_.sm_root && !wide())
        d = DescError{"a 128-bit descriptor in scalable mode (IQA.DW clear)"};
    if (const auto* e = std::get_if<DescError>(&d)) {
        logf(s_.host.log, LogKind::GuestError,
             "vtd: invalid invalidation descriptor %u: 0x%016llx 0x%016llx (%s; bits "
             "0x%llx 0x%llx)",
             h, static_cast<unsigned long long>(raw.hi), static_cast<unsigned long long>(raw.lo),
             e->why, static_cast<unsigned long long>(e->hi_bits),
             static_cast<unsigned long long>(e->lo_bits));
        error(raw);
        return false;
    }
    InvRequest req = request_of(d, raw);
    submitted_ = submitted_at(h, now);
    desc_ = raw;
    // The model's own timeline: a host timer that fired late for the descriptor before
    // delays this one only if that one's modelled end is still ahead of it (it never
    // is), so lateness shows once, in the achieved time, and does not add up.
    uint64_t begin = std::max(submitted_, end_);
    due_ = sat_add(begin, inv_.cost(req));
    drop_ = inv_.inject(req, due_);
    uint64_t limit = s_.config.devtlb_timeout_ns;
    timeout_ = req.kind == InvKind::DevTlb && limit && due_ - begin > limit;
    if (timeout_)
        due_ = begin + limit;
    busy_ = true;
    return true;
}

void InvalidationQueue::reset()
{
    busy_ = false;
    desc_ = {};
    due_ = submitted_ = end_ = 0;
    drop_ = false;
    timeout_ = false;
    marks_.clear();
}

void InvalidationQueue::save(StateWriter& w) const
{
    w.boolean(busy_);
    w.u64(desc_.lo);
    w.u64(desc_.hi);
    w.u64(desc_.up[0]);
    w.u64(desc_.up[1]);
    w.u64(due_);
    w.u64(submitted_);
    w.boolean(drop_);
    w.u64(end_);
    w.boolean(timeout_);
}

bool InvalidationQueue::load(StateReader& r)
{
    busy_ = r.boolean();
    desc_.lo = r.u64();
    desc_.hi = r.u64();
    desc_.up[0] = r.u64();
    desc_.up[1] = r.u64();
    due_ = r.u64();
    submitted_ = r.u64();
    drop_ = r.boolean();
    end_ = r.u64();
    timeout_ = r.boolean();
    if (!r.ok() || due_ > kTimeLimit || end_ > kTimeLimit)
        return false;
    // A stream cannot put in progress a descriptor the queue would have refused.
    if (busy_ && std::holds_alternative<DescError>(decode(desc_, s_.limits())))
        return false;
    if (busy_)
        s_.host.timers.arm(static_cast<unsigned>(Timer::Queue), due_);
    return true;
}

} // namespace dmalab::vtd
