// SPDX-License-Identifier: GPL-2.0-or-later
// Interrupt remapping (chapter 5): interrupt requests in remappable format are delivered as
// the interrupt remapping table entry their index names says (9.10), through an interrupt
// entry cache that only a queued invalidation empties (6.5.2.7); compatibility-format
// requests pass unchanged, unless blocked (CFIS clear, or x2APIC mode). A blocked request
// is recorded in the fault-recording registers with its index (reasons 20h-26h).

#include <algorithm>
#include <cstdio>

#include "parts.h"

namespace dmalab::vtd
{

namespace
{
constexpr Field kHandle = field(intr::ADDR, "HANDLE");
constexpr Field kHandle15 = field(intr::ADDR, "HANDLE15");
constexpr Field kSubhandle = field(intr::DATA, "SUBHANDLE");
constexpr uint64_t kFormat = field_mask(intr::ADDR, "IF");
constexpr uint64_t kShv = field_mask(intr::ADDR, "SHV");
constexpr Field kFee = field(intr::ADDR, "FEE");
} // namespace

InterruptRemapping::InterruptRemapping(Shared& s, FaultRecording& faults)
    : s_(s), faults_(faults), prng_(s.config.seed),
      iec_(s.config.iec_entries, 4, 1, s.config.replacement, prng_)
{
}

void InterruptRemapping::set_table()
{
    uint64_t irta = s_.reg(reg("IRTA"));
    // IRTA bits at and above the host address width are ignored, as for IQA (10.4.23).
    table_ = irta & IRTA_BASE.mask() & (pow2(s_.config.aw_bits) - 1);
    entries_ = 2u << IRTA_S.get(irta);
    eime_ = irta & IRTA_EIME;
    if (eime_ && !s_.config.eim) {
        logf(s_.host.log, LogKind::GuestError,
             "vtd: IRTA.EIME set but ECAP.EIM is clear; xAPIC mode used");
        eime_ = false;
    }
    table_valid_ = true;
    if (s_.host.observer)
        s_.host.observer->ir_state(ire_, table_, entries_, eime_);
}

void InterruptRemapping::set_enabled(bool on)
{
    if (on && !table_valid_)
        logf(s_.host.log, LogKind::GuestError,
             "vtd: interrupt remapping enabled without a table (SIRTP): remappable interrupts "
             "are blocked");
    ire_ = on;
    if (s_.host.observer)
        s_.host.observer->ir_state(ire_, table_, entries_, eime_);
}

// The index a remappable request names (5.1.2.2): the handle, plus the subhandle when SHV.
FaultReason InterruptRemapping::index_of(const InterruptRequest& req, uint32_t& index) const
{
    uint64_t a = req.address;
    index = static_cast<uint32_t>(kHandle.get(a) | kHandle15.get(a) << 15);
    if (a & kShv) {
        // With SHV the data holds the subhandle, and its upper half is reserved.
        if (req.data >> 16)
            return FaultReason::IrRequestReserved;
        index += static_cast<uint32_t>(kSubhandle.get(req.data));
    }
    if (!table_valid_)
        return FaultReason::IrTableError; // IRE without SIRTP: no table to read
    if (index >= entries_)
        return FaultReason::IrIndexBeyond;
    return FaultReason::None;
}

// The entry for `index`: from the interrupt entry cache, or read from the table and, when
// usable, cached. Not present and reserved entries are never cached.
FaultReason InterruptRemapping::entry_for(uint32_t index, Irte& out)
{
    uint64_t t = tag(index);
    unsigned set = iec_.set_of(t);
    if (const Entry* e = iec_.find(set, t)) {
        s_.counters.iec_hits++;
        out = {e->lo, e->hi};
        return FaultReason::None;
    }
    s_.counters.iec_misses++;
    uint64_t addr = table_ + uint64_t{index} * Irte::kSize;
    // A table that reaches past the host address width cannot be read there (no wrap: the
    // base is below 2^aw_bits and index * 16 below 2^20).
    if (addr + Irte::kSize > pow2(s_.config.aw_bits))
        return FaultReason::IrTableError;
    uint8_t raw[Irte::kSize] = {};
    DmaResult r = s_.call_out([&] { return s_.host.memory.read(addr, raw, sizeof raw, {}); });
    if (!r.ok())
        return FaultReason::IrTableError;
    out = Irte::from(raw);
    if (!out.present())
        return FaultReason::IrNotPresent;
    if (out.reserved_set(eime_))
        return FaultReason::IrEntryReserved;
    auto [slot, evicted] = iec_.insert(set, t, 0, Entry{out.lo, out.hi, index});
    (void)slot;
    if (evicted)
        s_.counters.iec_evictions++;
    return FaultReason::None;
}

// The compatibility-format message an entry delivers (5.1.5, 5.1.6): the destination's low
// byte in the address, and its bits 31:8 (x2APIC) in the upper half, as QEMU's APIC and
// KVM's routes take an extended destination.
Interrupt InterruptRemapping::deliver(const Irte& e, uint32_t index) const
{
    uint32_t dest = e.destination(eime_);
    Interrupt out;
    out.ok = true;
    out.remapped = true;
    out.index = index;
    out.address = field(intr::OUT_ADDR, "FEE").put(intr::kFee) |
                  field(intr::OUT_ADDR, "DEST").put(dest & 0xff) |
                  field(intr::OUT_ADDR, "RH").put(e.redirection_hint()) |
                  field(intr::OUT_ADDR, "DM").put(e.destination_mode()) |
                  uint64_t{dest & 0xffffff00u} << 32;
    out.data = static_cast<uint32_t>(field(intr::OUT_DATA, "V").put(e.vector()) |
                                     field(intr::OUT_DATA, "DLM").put(e.delivery_mode()) |
                                     field(intr::OUT_DATA, "LEVEL").put(1) |
                                     field(intr::OUT_DATA, "TM").put(e.trigger_mode()));
    return out;
}

std::string ir_requesters_text(const Counters& c)
{
    std::string out;
    char word[32];
    for (unsigned i = 0; i < c.ir_requesters_seen; i++) {
        const Counters::RequesterCount& r = c.ir_requesters[i];
        std::snprintf(word, sizeof word, "%s%02x:%02x.%u=%llu", out.empty() ? "" : " ", r.sid >> 8,
                      (r.sid >> 3) & 0x1f, r.sid & 7, static_cast<unsigned long long>(r.remapped));
        out += word;
    }
    if (c.ir_remapped_other) {
        std::snprintf(word, sizeof word, "%sother=%llu", out.empty() ? "" : " ",
                      static_cast<unsigned long long>(c.ir_remapped_other));
        out += word;
    }
    return out;
}

// One more remapped request of this requester (Counters::ir_requesters).
void InterruptRemapping::count_requester(Counters& c, const InterruptRequest& req)
{
    if (req.sid_known) {
        for (unsigned i = 0; i < c.ir_requesters_seen; i++) {
            if (c.ir_requesters[i].sid == req.sid) {
                c.ir_requesters[i].remapped++;
                return;
            }
        }
        if (c.ir_requesters_seen < Counters::kIrRequesters) {
            c.ir_requesters[c.ir_requesters_seen++] = {req.sid, 1};
            return;
        }
    }
    c.ir_remapped_other++;
}

// Counts the outcome and records a blocked request's fault (`fpd` suppresses the reasons
// it qualifies), unless the request is a query; tells the observer.
Interrupt InterruptRemapping::finish(const InterruptRequest& req, Interrupt out, bool fpd)
{
    Counters& c = s_.counters;
    bool recorded = false;
    if (!req.record) {
        // A query counts nothing.
    } else if (out.ok) {
        (out.remapped ? c.ir_remapped : ire_ ? c.ir_compat : c.ir_passed)++;
        if (out.remapped)
            count_requester(c, req);
    } else {
        c.ir_faults++;
        FaultReason r = out.fault_reason;
        bool qualified = r == FaultReason::IrNotPresent || r == FaultReason::IrEntryReserved ||
                         r == FaultReason::IrSourceId || r == FaultReason::IrPostedError;
        if (!(qualified && fpd)) {
            uint64_t before = c.faults_recorded;
            // FRCD.FI bits 63:48 hold the index (10.4.14); interrupt requests are writes.
            faults_.record(req.sid, kNoPasid, uint64_t{out.index & 0xffff} << 48, true, r);
            recorded = c.faults_recorded != before;
        }
    }
    if (s_.host.observer)
        s_.host.observer->interrupt(req, out, recorded);
    return out;
}

Interrupt InterruptRemapping::remap(const InterruptRequest& req)
{
    if (req.record)
        s_.counters.interrupts++;
    Interrupt out;
    out.address = req.address;
    out.data = req.data;
    if (!ire_) {
        out.ok = true; // remapping off: every request goes on as it is (5.1)
        return finish(req, out, false);
    }
    // Every interrupt request is a write to 0xFEEx_xxxx below 4 GiB.
    if ((req.address >> 32) || kFee.get(req.address) != intr::kFee) {
        out.fault_reason = FaultReason::IrRequestReserved;
        return finish(req, out, false);
    }
    if (!(req.address & kFormat)) {
        // Compatibility format (5.1.2.1): blocked in x2APIC mode or while CFIS is clear.
        out.ok = !eime_ && cfi_;
        if (!out.ok)
            out.fault_reason = FaultReason::IrCompatBlocked;
        return finish(req, out, false);
    }
    uint32_t index = 0;
    FaultReason why = index_of(req, index);
    Irte e;
    if (why == FaultReason::None)
        why = entry_for(index, e);
    if (why == FaultReason::None && req.sid_known && !e.accepts(req.sid))
        why = FaultReason::IrSourceId;
    if (why != FaultReason::None) {
        out.index = index;
        out.fault_reason = why;
        return finish(req, out, e.fault_processing_disable());
    }
    return finish(req, deliver(e, index), false);
}

uint64_t InterruptRemapping::invalidate(const IecInv& inv)
{
    uint64_t n = 0;
    if (inv.global) {
        n = iec_.drop_all();
    } else {
        uint32_t count = 1u << std::min(inv.im, kMhmv);
        uint32_t first = inv.index & ~(count - 1);
        // Look the entries up when there are fewer of them than the cache holds, else scan.
        if (count <= iec_.valid()) {
            for (uint32_t i = first; i < first + count; i++)
                n += iec_.drop(iec_.set_of(tag(i)), tag(i));
        } else {
            // Every entry is in group 0; an entry's index is in its tag, so the scan
            // compares what it holds.
            n = iec_.drop_group_if(
                0, [&](const Entry& e) { return e.index >= first && e.index - first < count; });
        }
    }
    return n;
}

void InterruptRemapping::reset()
{
    iec_.drop_all();
    ire_ = cfi_ = false;
    table_valid_ = false;
    table_ = 0;
    entries_ = 0;
    eime_ = false;
}

void InterruptRemapping::save(StateWriter& w) const
{
    w.boolean(table_valid_);
    w.u64(table_);
    w.u32(entries_);
    w.boolean(eime_);
    w.u64(prng_.state());
}

bool InterruptRemapping::load(StateReader& r)
{
    table_valid_ = r.boolean();
    table_ = r.u64();
    entries_ = r.u32();
    eime_ = r.boolean();
    prng_.set_state(r.u64());
    if (!r.ok() ||
        (table_valid_ && (entries_ < 2 || entries_ > (1u << 16) || (entries_ & (entries_ - 1)) ||
                          (table_ & ~IRTA_BASE.mask()) || table_ >= pow2(s_.config.aw_bits))) ||
        (eime_ && !s_.config.eim) || (table_valid_ && !s_.config.ir) ||
        (!table_valid_ && (table_ || entries_ || eime_)))
        return false;
    // The cache starts empty, as after a global invalidation.
    uint32_t sts = static_cast<uint32_t>(s_.reg(reg("GSTS")));
    if (!s_.config.ir && (sts & (G_IRE | G_CFI | G_SIRTP)))
        return false;
    ire_ = sts & G_IRE;
    cfi_ = sts & G_CFI;
    return true;
}

} // namespace dmalab::vtd
