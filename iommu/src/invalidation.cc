// SPDX-License-Identifier: GPL-2.0-or-later
// The unit's invalidation: register-based (6.5.1) and queued (6.5.2), their modelled
// costs, and what they drop from the caches.

#include "unit_parts.h"

#include <algorithm>
#include <utility>

#include "dmalab/le.h"
#include "dmalab/vtd/faults.h"

namespace dmalab::vtd
{

// ---- Register-based invalidation (6.5.1) ----

// Starts a register-based invalidation (6.5.1). Its command bit (bit 63 of both CCMD and
// IOTLB: ICC, IVT) stays set until the invalidation completes, in timer().
void Unit::start_register_command(unsigned reg, InvKind kind, unsigned request_shift,
                                  unsigned actual_shift, unsigned timer_id, uint64_t& due,
                                  uint64_t old, uint64_t written, uint64_t bytes)
{
    constexpr uint64_t kBusy = uint64_t{1} << 63;
    const char* name = kind == InvKind::Context ? "CCMD" : "IOTLB";
    if (!(bytes & kBusy) || !(written & kBusy))
        return;
    if (old & kBusy) {
        logf(host_.log, LogKind::GuestError, "vtd: %s written while an invalidation is busy", name);
        regs_->set(reg, old);
        return;
    }
    uint64_t v = regs_->get(reg);
    if (regs_->get(R_GSTS) & G_QIE) {
        logf(host_.log, LogKind::GuestError,
             "vtd: %s: register-based invalidation while queued invalidation is on; ignored", name);
        regs_->set(reg, v & ~kBusy);
        return;
    }
    Gran g = static_cast<Gran>((v >> request_shift) & 3);
    unsigned am = kind == InvKind::Iotlb ? regs_->get(R_IVA) & IVA_AM : 0;
    uint64_t now = host_.timers.now_ns();
    due = sat_add(now, cost(kind, g, am));
    inject_invalidation(kind, g == Gran::Selective, regs_->get(R_IVA) & IVA_ADDR, am, due,
                        kind == InvKind::Context ? cc_drop_ : iotlb_drop_);
    regs_->set(reg, (v | kBusy) & ~(uint64_t{3} << actual_shift));
    if (due <= now)
        timer(timer_id);
    else
        host_.timers.arm(timer_id, due);
}

void Unit::write_ccmd(uint64_t old, uint64_t written, uint64_t bytes)
{
    start_register_command(R_CCMD, InvKind::Context, CCMD_CIRG_SHIFT, CCMD_CAIG_SHIFT,
                           kContextTimer, cc_due_, old, written, bytes);
}

void Unit::write_iotlb(uint64_t old, uint64_t written, uint64_t bytes)
{
    start_register_command(R_IOTLB, InvKind::Iotlb, IOTLB_IIRG_SHIFT, IOTLB_IAIG_SHIFT, kIotlbTimer,
                           iotlb_due_, old, written, bytes);
}

void Unit::timer(unsigned id)
{
    if (id == kQueueTimer) {
        queue_run();
    } else if (id == kContextTimer) {
        finish_register_command(R_CCMD, kContextTimer, cc_due_, cc_drop_, CCMD_CIRG_SHIFT,
                                CCMD_CAIG_SHIFT, [&](Gran g, uint64_t v) {
                                    do_cc(g, v & 0xffff, (v >> CCMD_SID_SHIFT) & 0xffff,
                                          (v >> CCMD_FM_SHIFT) & 3, false);
                                    return g;
                                });
    } else if (id == kIotlbTimer) {
        finish_register_command(R_IOTLB, kIotlbTimer, iotlb_due_, iotlb_drop_, IOTLB_IIRG_SHIFT,
                                IOTLB_IAIG_SHIFT, [&](Gran g, uint64_t v) {
                                    uint64_t iva = regs_->get(R_IVA);
                                    unsigned am = iva & IVA_AM;
                                    if (g == Gran::Selective && am > kMamv)
                                        return Gran::Reserved; // beyond CAP.MAMV: not performed
                                    do_iotlb(g, (v >> IOTLB_DID_SHIFT) & 0xffff, iva & IVA_ADDR, am,
                                             false);
                                    return g;
                                });
    }
}

// Completes a register-based invalidation once its time has come: performs it (`perform`
// returns the granularity it actually did) unless the fault plan dropped it, reports that
// granularity (CAIG, IAIG; 0 when the request was invalid) and clears the busy bit.
template <typename Perform>
void Unit::finish_register_command(unsigned reg, unsigned timer_id, uint64_t due, bool& drop,
                                   unsigned request_shift, unsigned actual_shift, Perform perform)
{
    constexpr uint64_t kBusy = uint64_t{1} << 63; // ICC, IVT
    uint64_t v = regs_->get(reg);
    if (!(v & kBusy))
        return;
    if (due > host_.timers.now_ns()) {
        host_.timers.arm(timer_id, due);
        return;
    }
    Gran g = static_cast<Gran>((v >> request_shift) & 3);
    bool dropped = std::exchange(drop, false);
    if (g != Gran::Reserved && !dropped)
        g = perform(g, v);
    v = (v & ~kBusy & ~(uint64_t{3} << actual_shift)) | uint64_t{static_cast<uint8_t>(g)}
                                                            << actual_shift;
    regs_->set(reg, v);
}

uint64_t Unit::cost(InvKind kind, Gran g, unsigned am) const
{
    if (kind == InvKind::Wait)
        return config_.wait_ns;
    uint64_t c = config_.inv_desc_ns;
    if (kind == InvKind::Iotlb) {
        uint64_t pages;
        if (g == Gran::Selective) {
            pages = pow2(am > kMamv ? kMamv : am);
        } else {
            pages = caches_->iotlb.valid(); // entries a wider invalidation may drop
        }
        c = sat_add(c, pages > kTimeLimit / (config_.inv_page_ns + 1)
                           ? kTimeLimit
                           : pages * config_.inv_page_ns);
    }
    return c;
}

void Unit::inject_invalidation(InvKind kind, bool selective, uint64_t addr, unsigned am,
                               uint64_t& due, bool& drop)
{
    drop = false;
    if (!injector_)
        return;
    using faults::Kind;
    faults::Occasion o{};
    o.kinds = 1u << static_cast<unsigned>(Kind::DelayInvalidation);
    // A wait is never dropped: Linux would wait for its status write forever.
    if (kind != InvKind::Wait)
        o.kinds |= 1u << static_cast<unsigned>(Kind::DropInvalidation);
    o.unit = ~0u;
    o.op = kind == InvKind::Context ? kFaultOpContext
           : kind == InvKind::Iotlb ? kFaultOpIotlb
                                    : kFaultOpWait;
    o.key = addr;
    if (kind == InvKind::Iotlb && selective) {
        uint64_t size = pow2(12 + (am > kMamv ? kMamv : am));
        o.start[0] = addr & ~(size - 1);
        o.end[0] = o.start[0] + std::min(size, ~uint64_t{0} - o.start[0]);
    }
    injector_->decide(o, host_.timers.now_ns(), [&](const faults::Rule& r) {
        if (r.kind == Kind::DelayInvalidation)
            due = sat_add(due, r.ns);
        else
            drop = true;
    });
    if (due > kTimeLimit)
        due = kTimeLimit;
}

uint64_t Unit::do_cc(Gran g, uint16_t did, uint16_t sid, uint8_t fm, bool queued)
{
    uint16_t fmask = static_cast<uint16_t>((0x7u << (3 - fm)) & 0x7u); // 6.5.1.1, FM
    forget();
    // Each granularity costs what it names, not the cache's size: a domain's entries are on
    // its list, and a device-selective one names at most 8 source ids (FM masks 3 bits).
    uint64_t n = 0;
    auto& cc = caches_->context;
    if (g == Gran::Global) {
        n = cc.drop_all();
    } else if (g == Gran::Domain) {
        n = cc.drop_group_if(did, [](const Context&) { return true; });
    } else if (g == Gran::Selective) {
        uint16_t first = static_cast<uint16_t>(sid & ~fmask);
        for (uint16_t f = 0; f <= fmask; f++)
            if (!(f & ~fmask)) {
                uint16_t s = static_cast<uint16_t>(first | f);
                n += cc.drop(caches_->context_set(s), Caches::context_tag(s));
            }
    }
    counters_.cc_inv[static_cast<unsigned>(g)]++;
    (queued ? counters_.inv_queued : counters_.inv_register)++;
    if (host_.observer)
        host_.observer->invalidated(InvKind::Context, g, did, sid, fm, n, queued);
    return n;
}

uint64_t Unit::do_iotlb(Gran g, uint16_t did, uint64_t addr, unsigned am, bool queued)
{
    uint64_t size = pow2(12 + am);
    uint64_t first = addr & ~(size - 1);
    uint64_t last = first + (size - 1);
    forget();
    auto& tlb = caches_->iotlb;
    uint64_t n = 0;
    if (g == Gran::Global) {
        n = tlb.drop_all();
    } else if (g == Gran::Domain) {
        n = tlb.drop_group_if(did, [](const TlbEntry&) { return true; });
    } else if (g == Gran::Selective && !(first >> 48)) {
        // No entry maps an address at or above 2^48 (translate refuses those).
        last = std::min(last, pow2(48) - 1);
        // An entry of any page size that overlaps [first, last] is one of these tags. Look
        // them up when there are fewer of them than the domain has entries, else walk the
        // domain's list: the cost is the smaller of the two, whatever the IOTLB's size.
        static constexpr unsigned kShifts[] = {12, 21, 30};
        uint64_t probes = 0;
        for (unsigned shift : kShifts)
            probes += (last >> shift) - (first >> shift) + 1;
        if (probes <= tlb.group_size(did)) {
            for (unsigned shift : kShifts)
                for (uint64_t vpn = first >> shift; vpn <= last >> shift; vpn++) {
                    uint64_t tag = Caches::iotlb_tag(did, vpn, shift);
                    n += tlb.drop(caches_->iotlb_set(tag), tag);
                }
        } else {
            n = tlb.drop_group_if(did, [&](const TlbEntry& e) {
                uint64_t lo = e.vpn << e.shift;
                uint64_t hi = lo + (pow2(e.shift) - 1);
                return lo <= last && first <= hi;
            });
        }
    }
    counters_.iotlb_inv[static_cast<unsigned>(g)]++;
    counters_.iotlb_dropped += n;
    (queued ? counters_.inv_queued : counters_.inv_register)++;
    if (host_.observer)
        host_.observer->invalidated(InvKind::Iotlb, g, did, first, am, n, queued);
    return n;
}

// ---- Queued invalidation (6.5.2) ----

uint32_t Unit::queue_entries() const
{
    return 256u << (regs_->get(R_IQA) & IQA_QS);
}

void Unit::write_iqt(uint64_t, uint64_t, uint64_t)
{
    uint32_t tail = (regs_->get(R_IQT) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
    if (marks_.size() >= 64)
        marks_.erase(marks_.begin()); // a later mark then stands for the oldest writes
    marks_.emplace_back(tail, host_.timers.now_ns());
    if (!(regs_->get(R_GSTS) & G_QIE))
        return;
    if (tail >= queue_entries()) {
        logf(host_.log, LogKind::GuestError, "vtd: IQT %u beyond the %u-entry queue", tail,
             queue_entries());
        queue_error({});
        return;
    }
    queue_kick();
}

void Unit::queue_kick()
{
    if (!q_busy_)
        queue_run();
}

bool Unit::queue_fetch(InvDesc& d)
{
    uint32_t head = (regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
    // IQA bits at and above the host address width are ignored (VT-d 10.4.23), so the base
    // is below 2^aw_bits and base + head * 16 (head < 2^15) cannot pass 2^64.
    uint64_t base = regs_->get(R_IQA) & IQA_BASE & (pow2(config_.aw_bits) - 1);
    uint64_t addr = base + uint64_t{head} * InvDesc::kSize;
    uint8_t raw[InvDesc::kSize] = {};
    depth_++;
    DmaResult r = host_.memory.read(addr, raw, sizeof raw, {});
    depth_--;
    d = InvDesc::from(raw);
    return r.ok();
}

void Unit::queue_error(const InvDesc& d)
{
    q_busy_ = false;
    host_.timers.cancel(kQueueTimer);
    counters_.queue_errors++;
    if (host_.observer)
        host_.observer->queue_error(
            static_cast<uint32_t>((regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK), d.lo,
            d.hi);
    uint64_t fsts = regs_->get(R_FSTS);
    if (fsts & FSTS_IQE)
        return;
    regs_->set(R_FSTS, fsts | FSTS_IQE);
    fault_event();
}

void Unit::queue_run()
{
    unsigned budget = config_.queue_step;
    for (;;) {
        uint64_t now = host_.timers.now_ns();
        if (q_busy_) {
            if (q_due_ > now) {
                host_.timers.arm(kQueueTimer, q_due_);
                return;
            }
            // The descriptor takes effect now.
            const InvDesc& d = q_desc_;
            bool dropped = std::exchange(q_drop_, false);
            if (d.type() == QI_CC && !dropped) {
                do_cc(d.granularity(), d.domain_id(), d.source_id(), d.function_mask(), true);
            } else if (d.type() == QI_IOTLB && !dropped) {
                do_iotlb(d.granularity(), d.domain_id(), d.address(), d.address_mask(), true);
            } else if (d.type() == QI_WAIT) {
                if (d.status_write()) {
                    uint8_t data[4];
                    store_le(data, d.status_data(), 4);
                    depth_++;
                    DmaResult r = host_.memory.write(d.status_address(), data, 4, {});
                    depth_--;
                    if (!r.ok()) {
                        counters_.wait_status_failed++;
                        logf(host_.log, LogKind::GuestError,
                             "vtd: wait status write to 0x%llx failed (%s)",
                             static_cast<unsigned long long>(d.status_address()),
                             to_string(r.error));
                    }
                }
                if (d.interrupt_flag()) {
                    uint64_t ics = regs_->get(R_ICS);
                    regs_->set(R_ICS, ics | ICS_IWC);
                    if (!(ics & ICS_IWC))
                        inv_event();
                }
                uint64_t modelled = q_due_ - q_submitted_;
                uint64_t achieved = now - q_submitted_;
                counters_.waits++;
                counters_.wait_modelled_ns += modelled;
                counters_.wait_achieved_ns += achieved;
                if (achieved > counters_.wait_max_achieved_ns)
                    counters_.wait_max_achieved_ns = achieved;
                if (host_.observer)
                    host_.observer->wait_done(modelled, achieved);
            }
            q_busy_ = false;
            q_end_ = q_due_;
            if (!(regs_->get(R_GSTS) & G_QIE))
                return; // the status write or the event turned the queue off
            uint32_t head = (regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
            head = (head + 1) % queue_entries();
            regs_->set(R_IQH, uint64_t{head} << IQ_INDEX_SHIFT);
            if (--budget == 0) {
                uint32_t tail = (regs_->get(R_IQT) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
                if (head != tail)
                    host_.timers.arm(kQueueTimer, sat_add(now, 1));
                return;
            }
        }
        if (!(regs_->get(R_GSTS) & G_QIE) || (regs_->get(R_FSTS) & FSTS_IQE))
            return;
        uint32_t head = (regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
        uint32_t tail = (regs_->get(R_IQT) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
        if (head == tail)
            return;
        if (head >= queue_entries() || tail >= queue_entries()) {
            queue_error({});
            return;
        }
        InvDesc d;
        if (!queue_fetch(d)) {
            logf(host_.log, LogKind::GuestError, "vtd: invalidation descriptor %u unreadable",
                 head);
            queue_error({});
            return;
        }
        // A context-cache, IOTLB or wait descriptor with its reserved bits clear, the first
        // two with a granularity, a page-selective IOTLB one within CAP.MAMV; anything else
        // (device-TLB, interrupt entry cache, 256-bit types) is not supported: IQE (FSTS).
        Gran g = d.granularity();
        InvKind kind = d.type() == QI_CC      ? InvKind::Context
                       : d.type() == QI_IOTLB ? InvKind::Iotlb
                                              : InvKind::Wait;
        bool valid = d.reserved_clear();
        if (kind != InvKind::Wait)
            valid = valid && g != Gran::Reserved;
        if (kind == InvKind::Iotlb && g == Gran::Selective && d.address_mask() > kMamv)
            valid = false;
        if (!valid) {
            logf(host_.log, LogKind::GuestError,
                 "vtd: invalid invalidation descriptor %u: 0x%016llx 0x%016llx", head,
                 static_cast<unsigned long long>(d.hi), static_cast<unsigned long long>(d.lo));
            queue_error(d);
            return;
        }
        uint64_t c = cost(kind, g, d.address_mask());
        // When was this descriptor made visible: the first IQT write that covered it.
        q_submitted_ = now;
        while (!marks_.empty()) {
            auto [mark_tail, at] = marks_.front();
            uint32_t n = queue_entries();
            // Descriptors head .. mark_tail-1 were covered by this write.
            uint32_t ahead = (mark_tail + n - head) % n;
            if (ahead == 0 || mark_tail >= n) {
                marks_.erase(marks_.begin()); // already passed
                continue;
            }
            q_submitted_ = at;
            break;
        }
        q_desc_ = d;
        // The model's own timeline: a host timer that fired late for the descriptor before
        // delays this one only if that one's modelled end is still ahead of it (it never
        // is), so lateness shows once, in the achieved time, and does not add up.
        q_due_ = sat_add(std::max(q_submitted_, q_end_), c);
        inject_invalidation(kind, g == Gran::Selective, d.address(), d.address_mask(), q_due_,
                            q_drop_);
        q_busy_ = true;
    }
}

void Unit::write_ics(uint64_t, uint64_t, uint64_t)
{
    if (!(regs_->get(R_ICS) & ICS_IWC))
        regs_->set(R_IECTL, regs_->get(R_IECTL) & ~uint64_t{CTL_IP});
}

void Unit::write_iectl(uint64_t, uint64_t, uint64_t)
{
    uint64_t v = regs_->get(R_IECTL);
    if (!(v & CTL_IM) && (v & CTL_IP)) {
        regs_->set(R_IECTL, v & ~uint64_t{CTL_IP});
        send(R_IECTL, R_IEDATA, R_IEADDR);
    }
}

void Unit::inv_event()
{
    uint64_t v = regs_->get(R_IECTL);
    if (v & CTL_IM) {
        regs_->set(R_IECTL, v | CTL_IP);
        return;
    }
    send(R_IECTL, R_IEDATA, R_IEADDR);
}

} // namespace dmalab::vtd
