// SPDX-License-Identifier: GPL-2.0-or-later
// BAR 2's portals and what each WQ holds (DSA spec, "Work Queues", "Portals"). WQ n owns four
// pages from n * 16 KiB (spec/pci.h); a descriptor arrives whole, in one 64-byte write at any
// 64-byte aligned offset of a page. QEMU delivers MOVDIR64B's store as eight 8-byte writes,
// ascending, under one hold of the BQL; the model assembles exactly that and refuses any
// other shape.

#include <algorithm>

#include "parts.h"

namespace dmalab::dsa
{

namespace
{

constexpr uint32_t kStride = DMALAB_DSA_WQ_PORTAL_STRIDE;
constexpr uint32_t kSubmission = DMALAB_DSA_SUBMISSION_SIZE;

bool ims_portal(uint32_t offset)
{
    const uint32_t page = offset % kStride;
    return page >= DMALAB_DSA_PORTAL_UNLIMITED_IMS;
}

} // namespace

DataPath::DataPath(Shared& s, Tables& t, Events& e) : s_(s), t_(t), e_(e)
{
    wqs_.resize(s.config.wqs);
    engines_.resize(s.config.engines);
    for (size_t i = 0; i < engines_.size(); i++) {
        // Each engine draws its own jitter, from its own seed.
        Pacer::Params p{s.config.bandwidth, s.config.latency_ns, s.config.jitter_ns,
                        s.config.seed + 1 + i};
        engines_[i].pacer = std::make_unique<Pacer>(p);
    }
}

DataPath::~DataPath() = default;

void DataPath::reset()
{
    for (unsigned i = 0; i < engines_.size(); i++) {
        disarm(i);
        drop_job(engines_[i]);
        engines_[i].pacer->reset();
    }
    for (Wq& w : wqs_)
        w = Wq{};
    rr_ = 0;
    asm_ = Assembly{};
}

uint64_t DataPath::portal_read(uint32_t offset, unsigned)
{
    // Portals take writes only; a read returns nothing and changes nothing.
    logf(s_.host.log, LogKind::GuestError, "dsa: read of portal offset 0x%x", offset);
    return 0;
}

void DataPath::portal_write(uint32_t offset, uint64_t value, unsigned size)
{
    // What is not a whole 64-byte store is ignored without a word to software, as are
    // stores to a disabled WQ, to a shared WQ and to an IMS portal of a device without IMS
    // (DSA spec, "Portals"): the log and the `dropped` counter say so here.
    if (s_.depth) {
        logf(s_.host.log, LogKind::GuestError,
             "dsa: portal write at 0x%x from the device itself refused", offset);
        return;
    }
    const bool next_piece = asm_.active && size == 8 && offset == asm_.base + 8 * asm_.have;
    if (!next_piece) {
        if (asm_.active) {
            // The store in progress ended early: it never became a descriptor.
            const unsigned was = asm_.base / kStride;
            asm_ = Assembly{};
            drop(was, "a portal write shorter than 64 bytes", Status::None);
        }
        if (offset / kStride >= wqs_.size()) {
            logf(s_.host.log, LogKind::GuestError, "dsa: write at 0x%x: no WQ has this portal",
                 offset);
            return;
        }
        if (size != 8 || offset % kSubmission) {
            drop(offset / kStride, "a portal write that is not a 64-byte store", Status::None);
            return;
        }
        asm_.active = true;
        asm_.base = offset;
        asm_.have = 0;
    }
    asm_.word[asm_.have++] = value;
    if (asm_.have < kDescriptorWords)
        return;
    RawDescriptor d;
    std::copy(std::begin(asm_.word), std::end(asm_.word), d.word);
    const uint32_t base = asm_.base;
    asm_ = Assembly{};
    submit(base / kStride, ims_portal(base), d);
}

bool DataPath::wq_enabled(unsigned wq) const
{
    return s_.state() == DeviceState::Enabled && t_.wq(wq).enabled();
}

void DataPath::submit(unsigned wq, bool ims, const RawDescriptor& d)
{
    const WqEntry& cfg = t_.wq(wq);
    if (ims) {
        drop(wq, "a descriptor for an IMS portal (the device has no IMS)", Status::None);
        return;
    }
    if (!wq_enabled(wq)) {
        drop(wq, "a descriptor for a disabled WQ", Status::None);
        return;
    }
    const uint64_t mode = cfg.get(wq_reg("WQCFG_MODE"));
    if (static_cast<WqMode>(field(fields::WQCFG_MODE, "MODE").get(mode)) != WqMode::Dedicated) {
        // A shared WQ takes ENQCMD(S) submissions only, which carry a PASID and get an
        // answer; a plain 64-byte store carries neither.
        drop(wq, "a 64-byte store to a shared WQ's portal", Status::None);
        return;
    }
    Wq& w = wqs_[wq];
    if (w.q.size() >= cfg.get(wq_reg("WQCFG_SIZE"))) {
        // The one drop software hears of (idxd never overfills: it holds WQ_SIZE
        // descriptors per dedicated WQ, idxd_wq_alloc_resources).
        drop(wq, "a descriptor for a full dedicated WQ", Status::DedicatedWqFull);
        return;
    }
    Entry e;
    e.d = d;
    e.seq = w.next_seq++;
    e.ims = ims;
    w.q.push_back(e);
    set_occupancy(wq);
    s_.counters.submitted++;
    if (Observer* o = s_.host.observer)
        o->submitted(wq, static_cast<uint8_t>(e.d.word[0] >> 56));
    const int first = dispatch();
    if (!s_.config.sync_start || first < 0)
        return;
    // The first engine this write gave work to runs its first step now (the others stay
    // armed, and find nothing left if it took the descriptor). Which one, dispatch() says:
    // on the host's clock its time and ours differ.
    disarm(static_cast<unsigned>(first));
    timer(static_cast<unsigned>(first));
}

void DataPath::drop(unsigned wq, const char* why, Status code)
{
    s_.counters.dropped++;
    logf(s_.host.log, LogKind::GuestError, "dsa: WQ %u: %s dropped", wq, why);
    if (Observer* o = s_.host.observer)
        o->dropped(wq, why);
    if (code != Status::None)
        e_.software_error(SwError{code, static_cast<uint8_t>(wq)});
}

void DataPath::set_occupancy(unsigned wq)
{
    t_.wq(wq).set_occupancy(static_cast<uint16_t>(wqs_[wq].q.size()));
}

uint64_t DataPath::mark(unsigned wq) const
{
    return wqs_[wq].next_seq;
}

bool DataPath::quiet(unsigned wq, uint64_t mark) const
{
    const Wq& w = wqs_[wq];
    if (!w.q.empty() && w.q.front().seq < mark)
        return false;
    for (const Engine& e : engines_)
        if (const Work* w = holding(e); w && w->wq == wq && w->seq < mark)
            return false;
    return true;
}

void DataPath::abort(unsigned wq)
{
    Wq& w = wqs_[wq];
    s_.counters.aborted += w.q.size();
    w.q.clear();
    set_occupancy(wq);
    for (unsigned i = 0; i < engines_.size(); i++) {
        Engine& e = engines_[i];
        if (const Work* w = holding(e); w && w->wq == wq) {
            s_.counters.aborted++;
            disarm(i);
            drop_job(e);
        }
    }
    dispatch();
}

void DataPath::abort_all()
{
    for (unsigned wq = 0; wq < wqs_.size(); wq++)
        abort(wq);
}

} // namespace dmalab::dsa
