// SPDX-License-Identifier: GPL-2.0-or-later
// The VT-d unit: its register table and accesses, global commands, reset and migration
// (see unit.h). Invalidation, fault recording and translation have files of their own.

#include "unit_parts.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "dmalab/le.h"
#include "dmalab/vtd/faults.h"

namespace dmalab::vtd
{

// The register table, with access to the unit's hooks.
struct Regs {
    using D = RegDef<Unit>;
    static constexpr std::array<D, R_COUNT> make()
    {
        std::array<D, R_COUNT> t{};
        t[R_VER] = {R_VER, "VER", VER, 4, kVersion, fields::VER};
        t[R_CAP] = {R_CAP, "CAP", CAP, 8, 0, fields::CAP};
        t[R_ECAP] = {R_ECAP, "ECAP", ECAP, 8, 0, fields::CAP};
        t[R_GCMD] = {R_GCMD, "GCMD", GCMD, 4, 0, fields::GCMD, nullptr, &Unit::write_gcmd};
        t[R_GSTS] = {R_GSTS, "GSTS", GSTS, 4, 0, fields::GSTS};
        t[R_RTADDR] = {R_RTADDR, "RTADDR", RTADDR, 8, 0, fields::RTADDR};
        t[R_CCMD] = {R_CCMD, "CCMD", CCMD, 8, 0, fields::CCMD, nullptr, &Unit::write_ccmd};
        t[R_FSTS] = {R_FSTS, "FSTS", FSTS, 4, 0, fields::FSTS, &Unit::read_fsts, &Unit::write_fsts};
        t[R_FECTL] = {R_FECTL, "FECTL", FECTL, 4, CTL_IM, fields::CTL, nullptr, &Unit::write_fectl};
        t[R_FEDATA] = {R_FEDATA, "FEDATA", FEDATA, 4, 0, fields::DATA32};
        t[R_FEADDR] = {R_FEADDR, "FEADDR", FEADDR, 4, 0, fields::ADDR};
        t[R_FEUADDR] = {R_FEUADDR, "FEUADDR", FEUADDR, 4, 0, fields::DATA32};
        t[R_IQH] = {R_IQH, "IQH", IQH, 8, 0, fields::IQH};
        t[R_IQT] = {R_IQT, "IQT", IQT, 8, 0, fields::IQT, nullptr, &Unit::write_iqt};
        t[R_IQA] = {R_IQA, "IQA", IQA, 8, 0, fields::IQA};
        t[R_ICS] = {R_ICS, "ICS", ICS, 4, 0, fields::ICS, nullptr, &Unit::write_ics};
        t[R_IECTL] = {R_IECTL, "IECTL", IECTL, 4, CTL_IM, fields::CTL, nullptr, &Unit::write_iectl};
        t[R_IEDATA] = {R_IEDATA, "IEDATA", IEDATA, 4, 0, fields::DATA32};
        t[R_IEADDR] = {R_IEADDR, "IEADDR", IEADDR, 4, 0, fields::ADDR};
        t[R_IEUADDR] = {R_IEUADDR, "IEUADDR", IEUADDR, 4, 0, fields::DATA32};
        t[R_IVA] = {R_IVA, "IVA", IVA, 8, 0, fields::IVA};
        t[R_IOTLB] = {R_IOTLB, "IOTLB", IOTLB, 8, 0, fields::IOTLB, nullptr, &Unit::write_iotlb};
        for (unsigned i = 0; i < kFaultRecords; i++) {
            unsigned lo = R_FRCD0 + 2 * i;
            t[lo] = {lo, "FRCD.lo", FRCD + 16 * i, 8, 0, fields::FRCD_LO};
            t[lo + 1] = {lo + 1, "FRCD.hi",       FRCD + 16 * i + 8, 8,
                         0,      fields::FRCD_HI, nullptr,           &Unit::write_frcd};
        }
        return t;
    }
};

namespace
{
constexpr std::array<RegDef<Unit>, R_COUNT> kTable = Regs::make();
static_assert(well_formed(kTable, kRegWindow));
} // namespace

const char* check(const Config& c)
{
    if (c.aw_bits != 39 && c.aw_bits != 48)
        return "aw-bits must be 39 or 48";
    if (c.iotlb_ways == 0 || c.iotlb_ways > 64)
        return "iotlb-ways must be 1 to 64";
    if (c.iotlb_entries == 0 || c.iotlb_entries > (1u << 20) || c.iotlb_entries % c.iotlb_ways)
        return "iotlb-entries must be a multiple of iotlb-ways, at most 1048576";
    if (c.context_entries < 4 || c.context_entries > 65536 || c.context_entries % 4)
        return "context-entries must be a multiple of 4, from 4 to 65536";
    if (c.inv_desc_ns > kMaxCostNs || c.inv_page_ns > kMaxCostNs || c.wait_ns > kMaxCostNs)
        return "invalidation costs must be at most 1 s (1000000000 ns)";
    if (c.queue_step == 0 || c.queue_step > 4096)
        return "queue-step must be 1 to 4096";
    if (c.walk_read_ns > kMaxCostNs)
        return "walk-read-ns must be at most 1 s (1000000000 ns)";
    return nullptr;
}

Unit::Unit(const Config& config, const Host& host)
    : config_(config), host_(host), prng_(config.seed)
{
    caches_ = std::make_unique<Caches>(config_, prng_);
    regs_ = std::make_unique<RegBank<Unit>>(*this, kTable, kRegWindow, host_.log, "vtd");
    uint64_t cap = uint64_t{2} << CAP_ND_SHIFT; // kDomainIds
    cap |= CAP_SAGAW_39 | (config_.aw_bits >= 48 ? CAP_SAGAW_48 : 0);
    cap |= uint64_t{config_.aw_bits - 1u} << CAP_MGAW_SHIFT;
    cap |= uint64_t{FRCD / 16} << CAP_FRO_SHIFT;
    cap |= CAP_SLLPS_2M | CAP_SLLPS_1G | CAP_PSI;
    cap |= uint64_t{kFaultRecords - 1} << CAP_NFR_SHIFT;
    cap |= uint64_t{kMamv} << CAP_MAMV_SHIFT;
    regs_->set_reset_value(R_CAP, cap);
    uint64_t ecap = ECAP_C | uint64_t{IVA / 16} << ECAP_IRO_SHIFT;
    ecap |= (config_.qi ? ECAP_QI : 0) | (config_.pt ? ECAP_PT : 0);
    regs_->set_reset_value(R_ECAP, ecap);
    reset();
}

Unit::~Unit() = default;

void Unit::reset()
{
    for (unsigned t = 0; t < kTimerCount; t++)
        host_.timers.cancel(t);
    regs_->reset();
    caches_->clear();
    forget();
    te_ = false;
    for (Cost& c : costs_)
        c = {};
    root_valid_ = false;
    root_ = 0;
    next_record_ = 0;
    q_busy_ = false;
    q_desc_ = {};
    q_due_ = q_submitted_ = q_end_ = 0;
    marks_.clear();
    cc_due_ = iotlb_due_ = 0;
    q_drop_ = cc_drop_ = iotlb_drop_ = false;
}

const char* Unit::set_costs(uint64_t desc_ns, uint64_t page_ns, uint64_t wait_ns)
{
    Config c = config_;
    c.inv_desc_ns = desc_ns;
    c.inv_page_ns = page_ns;
    c.wait_ns = wait_ns;
    if (const char* why = check(c))
        return why;
    config_ = c;
    return nullptr;
}

// ---- Register accesses ----

uint64_t Unit::mmio_read(uint32_t offset, unsigned size)
{
    // 10.2: registers are accessed as aligned DWORDs or QWORDs.
    if ((size != 4 && size != 8) || offset % size || offset >= kRegWindow) {
        logf(host_.log, LogKind::GuestError, "vtd: %u-byte read at 0x%x not supported", size,
             offset);
        return 0;
    }
    return regs_->read(offset, size);
}

void Unit::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    if ((size != 4 && size != 8) || offset % size || offset >= kRegWindow) {
        logf(host_.log, LogKind::GuestError, "vtd: %u-byte write at 0x%x ignored", size, offset);
        return;
    }
    if (depth_) {
        // The unit's own status write or message reached its registers.
        logf(host_.log, LogKind::GuestError, "vtd: write at 0x%x from the unit itself refused",
             offset);
        return;
    }
    regs_->write(offset, value, size);
}

uint64_t Unit::read_fsts(uint64_t stored)
{
    stored &= ~uint64_t{FSTS_PPF};
    for (unsigned i = 0; i < kFaultRecords; i++)
        if (regs_->get(R_FRCD0 + 2 * i + 1) & FRCD_F)
            stored |= FSTS_PPF;
    return stored;
}

void Unit::write_gcmd(uint64_t, uint64_t written, uint64_t bytes)
{
    uint32_t cmd = static_cast<uint32_t>(written & bytes);
    uint32_t sts = static_cast<uint32_t>(regs_->get(R_GSTS));
    if (!(bytes & 0xff000000u))
        return; // the command bits are in the top byte lanes
    if (cmd & G_SRTP) {
        uint64_t rta = regs_->get(R_RTADDR);
        unsigned ttm = (rta >> RTADDR_TTM_SHIFT) & 3;
        if (ttm != 0) {
            logf(host_.log, LogKind::GuestError,
                 "vtd: RTADDR.TTM=%u: only legacy mode (0) is supported; DMA is blocked", ttm);
            root_valid_ = false;
        } else {
            root_valid_ = true;
            root_ = rta & RTADDR_RTA;
        }
        sts |= G_SRTP; // RTPS
    }
    if ((cmd & G_TE) && !(sts & G_TE)) {
        if (!root_valid_)
            logf(host_.log, LogKind::GuestError,
                 "vtd: translation enabled without a root table: every DMA faults");
        sts |= G_TE;
    } else if (!(cmd & G_TE) && (sts & G_TE)) {
        sts &= ~G_TE;
    }
    if ((cmd & G_QIE) && !(sts & G_QIE)) {
        if (!config_.qi) {
            logf(host_.log, LogKind::GuestError, "vtd: QIE set but ECAP.QI is clear; ignored");
        } else {
            regs_->set(R_IQH, 0); // 10.4.22: the head starts at 0
            sts |= G_QIE;
        }
    } else if (!(cmd & G_QIE) && (sts & G_QIE)) {
        if (q_busy_ || regs_->get(R_IQH) != regs_->get(R_IQT))
            logf(host_.log, LogKind::GuestError,
                 "vtd: queued invalidation disabled with descriptors pending; they are dropped");
        host_.timers.cancel(kQueueTimer);
        q_busy_ = false;
        marks_.clear();
        regs_->set(R_IQH, 0);
        sts &= ~G_QIE;
    }
    if (cmd & (G_SFL | G_EAFL | G_WBF | G_IRE | G_SIRTP | G_CFI))
        logf(host_.log, LogKind::Unimplemented,
             "vtd: GCMD 0x%x asks for a feature the unit does not advertise", cmd);
    regs_->set(R_GSTS, sts);
    te_ = sts & G_TE;
    if (sts & G_QIE)
        queue_kick();
}

// ---- Migration ----

void Unit::save(StateWriter& w) const
{
    w.u32(R_COUNT);
    for (unsigned i = 0; i < R_COUNT; i++)
        w.u64(regs_->get(i));
    w.boolean(root_valid_);
    w.u64(root_);
    w.boolean(q_busy_);
    w.u64(q_desc_.lo);
    w.u64(q_desc_.hi);
    w.u64(q_due_);
    w.u64(q_submitted_);
    w.u64(cc_due_);
    w.u64(iotlb_due_);
    w.u64(prng_.state());
    w.u8(static_cast<uint8_t>(next_record_));
    w.boolean(q_drop_);
    w.boolean(cc_drop_);
    w.boolean(iotlb_drop_);
    w.u64(q_end_);
}

bool Unit::load(StateReader& r)
{
    if (r.u32() != R_COUNT)
        return false;
    uint64_t v[R_COUNT];
    for (unsigned i = 0; i < R_COUNT; i++)
        v[i] = r.u64();
    bool root_valid = r.boolean();
    uint64_t root = r.u64();
    bool q_busy = r.boolean();
    uint64_t q_lo = r.u64(), q_hi = r.u64(), q_due = r.u64(), q_submitted = r.u64();
    uint64_t cc_due = r.u64(), iotlb_due = r.u64(), prng = r.u64();
    unsigned next_record = r.u8();
    bool q_drop = r.boolean(), cc_drop = r.boolean(), iotlb_drop = r.boolean();
    uint64_t q_end = r.u64();
    if (!r.finished() || next_record >= kFaultRecords || q_due > kTimeLimit || q_end > kTimeLimit ||
        cc_due > kTimeLimit || iotlb_due > kTimeLimit)
        return false;
    reset();
    for (unsigned i = 0; i < R_COUNT; i++)
        if (i != R_VER && i != R_CAP && i != R_ECAP)
            regs_->set(i, v[i]);
    root_valid_ = root_valid;
    root_ = root & RTADDR_RTA;
    q_busy_ = q_busy;
    q_desc_ = {q_lo, q_hi};
    q_due_ = q_due;
    q_submitted_ = q_submitted;
    q_end_ = q_end;
    cc_due_ = cc_due;
    iotlb_due_ = iotlb_due;
    prng_.set_state(prng);
    next_record_ = next_record;
    q_drop_ = q_drop;
    cc_drop_ = cc_drop;
    iotlb_drop_ = iotlb_drop;
    forget();
    te_ = regs_->get(R_GSTS) & G_TE;
    // Caches start empty, as after any invalidation; work in progress goes on.
    if (q_busy_)
        host_.timers.arm(kQueueTimer, q_due_);
    if (regs_->get(R_CCMD) & CCMD_ICC)
        host_.timers.arm(kContextTimer, cc_due_);
    if (regs_->get(R_IOTLB) & IOTLB_IVT)
        host_.timers.arm(kIotlbTimer, iotlb_due_);
    return true;
}

} // namespace dmalab::vtd
