// SPDX-License-Identifier: GPL-2.0-or-later
// The VT-d unit: registers, translation, invalidation and faults (see unit.h).

#include "dmalab/vtd/unit.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "cache.h"
#include "dmalab/le.h"
#include "dmalab/vtd/faults.h"

namespace dmalab::vtd
{

namespace
{

// Register table indices.
enum : unsigned {
    R_VER,
    R_CAP,
    R_ECAP,
    R_GCMD,
    R_GSTS,
    R_RTADDR,
    R_CCMD,
    R_FSTS,
    R_FECTL,
    R_FEDATA,
    R_FEADDR,
    R_FEUADDR,
    R_IQH,
    R_IQT,
    R_IQA,
    R_ICS,
    R_IECTL,
    R_IEDATA,
    R_IEADDR,
    R_IEUADDR,
    R_IVA,
    R_IOTLB,
    R_FRCD0, // lower and upper qword of each record follow
    R_COUNT = R_FRCD0 + 2 * kFaultRecords,
};

constexpr Field kVerF[] = {{"MIN", 0, 4, FieldAccess::RO}, {"MAX", 4, 4, FieldAccess::RO}};
constexpr Field kCapF[] = {{"CAP", 0, 64, FieldAccess::RO}};
constexpr Field kGcmdF[] = {{"CMD", 23, 9, FieldAccess::WO}};
constexpr Field kGstsF[] = {{"STS", 23, 9, FieldAccess::RO}};
constexpr Field kRtaddrF[] = {{"TTM", 10, 2, FieldAccess::RW}, {"RTA", 12, 52, FieldAccess::RW}};
constexpr Field kCcmdF[] = {{"DID", 0, 16, FieldAccess::RW},  {"SID", 16, 16, FieldAccess::RW},
                            {"FM", 32, 2, FieldAccess::RW},   {"CAIG", 59, 2, FieldAccess::RO},
                            {"CIRG", 61, 2, FieldAccess::RW}, {"ICC", 63, 1, FieldAccess::RO}};
constexpr Field kFstsF[] = {{"PFO", 0, 1, FieldAccess::W1C}, {"PPF", 1, 1, FieldAccess::RO},
                            {"IQE", 4, 1, FieldAccess::W1C}, {"ICE", 5, 1, FieldAccess::W1C},
                            {"ITE", 6, 1, FieldAccess::W1C}, {"FRI", 8, 8, FieldAccess::RO}};
constexpr Field kCtlF[] = {{"IP", 30, 1, FieldAccess::RO}, {"IM", 31, 1, FieldAccess::RW}};
constexpr Field kData32F[] = {{"DATA", 0, 32, FieldAccess::RW}};
constexpr Field kAddrF[] = {{"MA", 2, 30, FieldAccess::RW}};
constexpr Field kIqhF[] = {{"QH", 4, 15, FieldAccess::RO}};
constexpr Field kIqtF[] = {{"QT", 4, 15, FieldAccess::RW}};
constexpr Field kIqaF[] = {{"QS", 0, 3, FieldAccess::RW}, {"IQA", 12, 52, FieldAccess::RW}};
constexpr Field kIcsF[] = {{"IWC", 0, 1, FieldAccess::W1C}};
constexpr Field kIvaF[] = {{"AM", 0, 6, FieldAccess::RW},
                           {"IH", 6, 1, FieldAccess::RW},
                           {"ADDR", 12, 52, FieldAccess::RW}};
constexpr Field kIotlbF[] = {{"DID", 32, 16, FieldAccess::RW}, {"DW", 48, 1, FieldAccess::RW},
                             {"DR", 49, 1, FieldAccess::RW},   {"IAIG", 57, 2, FieldAccess::RO},
                             {"IIRG", 60, 2, FieldAccess::RW}, {"IVT", 63, 1, FieldAccess::RO}};
constexpr Field kFrcdLoF[] = {{"FI", 12, 52, FieldAccess::RO}};
constexpr Field kFrcdHiF[] = {{"SID", 0, 16, FieldAccess::RO},
                              {"FR", 32, 8, FieldAccess::RO},
                              {"T", 62, 1, FieldAccess::RO},
                              {"F", 63, 1, FieldAccess::W1C}};

uint64_t pow2(unsigned n)
{
    return n >= 64 ? 0 : uint64_t{1} << n;
}

} // namespace

// The register table, with access to the unit's hooks.
struct Regs {
    using D = RegDef<Unit>;
    static constexpr std::array<D, R_COUNT> make()
    {
        std::array<D, R_COUNT> t{};
        t[R_VER] = {R_VER, "VER", VER, 4, kVersion, kVerF};
        t[R_CAP] = {R_CAP, "CAP", CAP, 8, 0, kCapF};
        t[R_ECAP] = {R_ECAP, "ECAP", ECAP, 8, 0, kCapF};
        t[R_GCMD] = {R_GCMD, "GCMD", GCMD, 4, 0, kGcmdF, nullptr, &Unit::write_gcmd};
        t[R_GSTS] = {R_GSTS, "GSTS", GSTS, 4, 0, kGstsF};
        t[R_RTADDR] = {R_RTADDR, "RTADDR", RTADDR, 8, 0, kRtaddrF};
        t[R_CCMD] = {R_CCMD, "CCMD", CCMD, 8, 0, kCcmdF, nullptr, &Unit::write_ccmd};
        t[R_FSTS] = {R_FSTS, "FSTS", FSTS, 4, 0, kFstsF, &Unit::read_fsts, &Unit::write_fsts};
        t[R_FECTL] = {R_FECTL, "FECTL", FECTL, 4, CTL_IM, kCtlF, nullptr, &Unit::write_fectl};
        t[R_FEDATA] = {R_FEDATA, "FEDATA", FEDATA, 4, 0, kData32F};
        t[R_FEADDR] = {R_FEADDR, "FEADDR", FEADDR, 4, 0, kAddrF};
        t[R_FEUADDR] = {R_FEUADDR, "FEUADDR", FEUADDR, 4, 0, kData32F};
        t[R_IQH] = {R_IQH, "IQH", IQH, 8, 0, kIqhF};
        t[R_IQT] = {R_IQT, "IQT", IQT, 8, 0, kIqtF, nullptr, &Unit::write_iqt};
        t[R_IQA] = {R_IQA, "IQA", IQA, 8, 0, kIqaF};
        t[R_ICS] = {R_ICS, "ICS", ICS, 4, 0, kIcsF, nullptr, &Unit::write_ics};
        t[R_IECTL] = {R_IECTL, "IECTL", IECTL, 4, CTL_IM, kCtlF, nullptr, &Unit::write_iectl};
        t[R_IEDATA] = {R_IEDATA, "IEDATA", IEDATA, 4, 0, kData32F};
        t[R_IEADDR] = {R_IEADDR, "IEADDR", IEADDR, 4, 0, kAddrF};
        t[R_IEUADDR] = {R_IEUADDR, "IEUADDR", IEUADDR, 4, 0, kData32F};
        t[R_IVA] = {R_IVA, "IVA", IVA, 8, 0, kIvaF};
        t[R_IOTLB] = {R_IOTLB, "IOTLB", IOTLB, 8, 0, kIotlbF, nullptr, &Unit::write_iotlb};
        for (unsigned i = 0; i < kFaultRecords; i++) {
            unsigned lo = R_FRCD0 + 2 * i;
            t[lo] = {lo, "FRCD.lo", FRCD + 16 * i, 8, 0, kFrcdLoF};
            t[lo + 1] = {lo + 1, "FRCD.hi", FRCD + 16 * i + 8, 8,
                         0,      kFrcdHiF,  nullptr,           &Unit::write_frcd};
        }
        return t;
    }
};

namespace
{
constexpr std::array<RegDef<Unit>, R_COUNT> kTable = Regs::make();
static_assert(well_formed(kTable, kRegWindow));
} // namespace

// A context entry as the unit uses it (cached in the context cache).
struct Unit::Context {
    uint16_t sid = 0;
    uint16_t did = 0;
    uint8_t tt = 0;
    uint8_t aw = 0; // 1: 39-bit 3-level, 2: 48-bit 4-level
    bool fpd = false;
    uint64_t slptptr = 0;
};

struct Unit::Walk {
    uint64_t page = 0; // output address of the page
    unsigned shift = 12;
    bool r = false, w = false;
};

namespace
{
struct TlbEntry {
    uint16_t did;
    uint8_t shift;
    bool r, w;
    uint64_t vpn;  // iova >> shift
    uint64_t page; // output address
};
} // namespace

class Caches
{
  public:
    Caches(const Config& c, Prng& prng)
        : context(c.context_entries, 4, c.replacement, prng),
          iotlb(c.iotlb_entries, c.iotlb_ways, c.replacement, prng)
    {
    }
    static uint64_t context_tag(uint16_t sid) { return uint64_t{1} << 63 | sid; }
    // vpn < 2^36 (input addresses below 2^48), did 16 bits, the page size in 2 bits.
    static uint64_t iotlb_tag(uint16_t did, uint64_t vpn, unsigned shift)
    {
        return uint64_t{1} << 63 | vpn << 20 | uint64_t{did} << 4 | (shift - 12) / 9;
    }
    unsigned context_set(uint16_t sid) const { return context.set_of(sid); }
    unsigned iotlb_set(uint64_t tag) const { return iotlb.set_of(tag); }
    void clear()
    {
        context.drop_all();
        iotlb.drop_all();
    }

    SetAssoc<Unit::Context> context;
    SetAssoc<TlbEntry> iotlb;
};

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
    uint64_t cap = uint64_t{2} << CAP_ND_SHIFT;
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
    q_lo_ = q_hi_ = q_due_ = q_submitted_ = q_end_ = 0;
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

// ---- Register-based invalidation (6.5.1) ----

// Starts a register-based invalidation (6.5.1). Its command bit (bit 63 of both CCMD and
// IOTLB: ICC, IVT) stays set until the invalidation completes, in timer().
void Unit::start_register_command(unsigned reg, char kind, unsigned request_shift,
                                  unsigned actual_shift, unsigned timer_id, uint64_t& due,
                                  uint64_t old, uint64_t written, uint64_t bytes)
{
    constexpr uint64_t kBusy = uint64_t{1} << 63;
    const char* name = kind == 'c' ? "CCMD" : "IOTLB";
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
    unsigned am = kind == 'i' ? regs_->get(R_IVA) & IVA_AM : 0;
    uint64_t now = host_.timers.now_ns();
    due = sat_add(now, cost(kind, g, am));
    inject_invalidation(kind, g == Gran::Selective, regs_->get(R_IVA) & IVA_ADDR, am, due,
                        kind == 'c' ? cc_drop_ : iotlb_drop_);
    regs_->set(reg, (v | kBusy) & ~(uint64_t{3} << actual_shift));
    if (due <= now)
        timer(timer_id);
    else
        host_.timers.arm(timer_id, due);
}

void Unit::write_ccmd(uint64_t old, uint64_t written, uint64_t bytes)
{
    start_register_command(R_CCMD, 'c', CCMD_CIRG_SHIFT, CCMD_CAIG_SHIFT, kContextTimer, cc_due_,
                           old, written, bytes);
}

void Unit::write_iotlb(uint64_t old, uint64_t written, uint64_t bytes)
{
    start_register_command(R_IOTLB, 'i', IOTLB_IIRG_SHIFT, IOTLB_IAIG_SHIFT, kIotlbTimer,
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

uint64_t Unit::cost(char kind, Gran g, unsigned am) const
{
    if (kind == 'w')
        return config_.wait_ns;
    uint64_t c = config_.inv_desc_ns;
    if (kind == 'i') {
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

void Unit::inject_invalidation(char kind, bool selective, uint64_t addr, unsigned am, uint64_t& due,
                               bool& drop)
{
    drop = false;
    if (!injector_)
        return;
    using faults::Kind;
    faults::Occasion o{};
    o.kinds = 1u << static_cast<unsigned>(Kind::DelayInvalidation);
    // A wait is never dropped: Linux would wait for its status write forever.
    if (kind != 'w')
        o.kinds |= 1u << static_cast<unsigned>(Kind::DropInvalidation);
    o.unit = ~0u;
    o.op = kind == 'c' ? kFaultOpContext : kind == 'i' ? kFaultOpIotlb : kFaultOpWait;
    o.key = addr;
    if (kind == 'i' && selective) {
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
        host_.observer->invalidated('c', g, did, sid, fm, n, queued);
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
        host_.observer->invalidated('i', g, did, first, am, n, queued);
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
        queue_error(0, 0);
        return;
    }
    queue_kick();
}

void Unit::queue_kick()
{
    if (!q_busy_)
        queue_run();
}

bool Unit::queue_fetch(uint64_t& lo, uint64_t& hi)
{
    uint32_t head = (regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK;
    // IQA bits at and above the host address width are ignored (VT-d 10.4.23), so the base
    // is below 2^aw_bits and base + head * 16 (head < 2^15) cannot pass 2^64.
    uint64_t base = regs_->get(R_IQA) & IQA_BASE & (pow2(config_.aw_bits) - 1);
    uint64_t addr = base + uint64_t{head} * 16;
    uint8_t d[16] = {};
    depth_++;
    DmaResult r = host_.memory.read(addr, d, sizeof d, {});
    depth_--;
    lo = load_le(d, 8);
    hi = load_le(d + 8, 8);
    return r.ok();
}

void Unit::queue_error(uint64_t lo, uint64_t hi)
{
    q_busy_ = false;
    host_.timers.cancel(kQueueTimer);
    counters_.queue_errors++;
    if (host_.observer)
        host_.observer->queue_error(
            static_cast<uint32_t>((regs_->get(R_IQH) >> IQ_INDEX_SHIFT) & IQ_INDEX_MASK), lo, hi);
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
            uint8_t type = q_lo_ & 0xf;
            Gran g = static_cast<Gran>((q_lo_ >> QI_G_SHIFT) & 3);
            uint16_t did = (q_lo_ >> QI_DID_SHIFT) & 0xffff;
            bool dropped = std::exchange(q_drop_, false);
            if (type == QI_CC && !dropped) {
                do_cc(g, did, (q_lo_ >> QI_CC_SID_SHIFT) & 0xffff, (q_lo_ >> QI_CC_FM_SHIFT) & 3,
                      true);
            } else if (type == QI_IOTLB && !dropped) {
                do_iotlb(g, did, q_hi_ & IVA_ADDR, q_hi_ & IVA_AM, true);
            } else if (type == QI_WAIT) {
                if (q_lo_ & QI_WAIT_SW) {
                    uint8_t data[4];
                    store_le(data, q_lo_ >> 32, 4);
                    depth_++;
                    DmaResult r = host_.memory.write(q_hi_ & ~uint64_t{3}, data, 4, {});
                    depth_--;
                    if (!r.ok()) {
                        counters_.wait_status_failed++;
                        logf(host_.log, LogKind::GuestError,
                             "vtd: wait status write to 0x%llx failed (%s)",
                             static_cast<unsigned long long>(q_hi_ & ~uint64_t{3}),
                             to_string(r.error));
                    }
                }
                if (q_lo_ & QI_WAIT_IF) {
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
            queue_error(0, 0);
            return;
        }
        uint64_t lo, hi;
        if (!queue_fetch(lo, hi)) {
            logf(host_.log, LogKind::GuestError, "vtd: invalidation descriptor %u unreadable",
                 head);
            queue_error(0, 0);
            return;
        }
        uint8_t type = lo & 0xf;
        Gran g = static_cast<Gran>((lo >> QI_G_SHIFT) & 3);
        bool valid = false;
        uint64_t c = 0;
        if (type == QI_CC) {
            valid = !(lo & ~QI_CC_LO) && !(hi & ~QI_CC_HI) && g != Gran::Reserved;
            c = cost('c', g, 0);
        } else if (type == QI_IOTLB) {
            valid = !(lo & ~QI_IOTLB_LO) && !(hi & ~QI_IOTLB_HI) && g != Gran::Reserved &&
                    !(g == Gran::Selective && (hi & IVA_AM) > kMamv);
            c = cost('i', g, hi & IVA_AM);
        } else if (type == QI_WAIT) {
            valid = !(lo & ~QI_WAIT_LO) && !(hi & ~QI_WAIT_HI);
            c = cost('w', g, 0);
        }
        if (!valid) {
            logf(host_.log, LogKind::GuestError,
                 "vtd: invalid invalidation descriptor %u: 0x%016llx 0x%016llx", head,
                 static_cast<unsigned long long>(hi), static_cast<unsigned long long>(lo));
            queue_error(lo, hi);
            return;
        }
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
        q_lo_ = lo;
        q_hi_ = hi;
        // The model's own timeline: a host timer that fired late for the descriptor before
        // delays this one only if that one's modelled end is still ahead of it (it never
        // is), so lateness shows once, in the achieved time, and does not add up.
        q_due_ = sat_add(std::max(q_submitted_, q_end_), c);
        inject_invalidation(type == QI_CC      ? 'c'
                            : type == QI_IOTLB ? 'i'
                                               : 'w',
                            g == Gran::Selective, hi & IVA_ADDR, hi & IVA_AM, q_due_, q_drop_);
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

// ---- Faults (7.2, 7.3) ----

// The upper address registers (FEUADDR, IEUADDR) only matter in extended interrupt mode
// (x2APIC destinations through interrupt remapping, VT-d 10.4.14), which this unit lacks.
void Unit::send(uint32_t ctl_reg, uint32_t data_reg, uint32_t addr_reg)
{
    uint64_t addr = regs_->get(addr_reg);
    uint32_t data = static_cast<uint32_t>(regs_->get(data_reg));
    bool fault = ctl_reg == R_FECTL;
    // The event registers hold an interrupt message (VT-d 10.4.12-13, 10.4.24-25): on x86 a
    // write to the interrupt address range 0xFEEx_xxxx, which the platform turns into an
    // interrupt and never into a memory write. A message aimed anywhere else (RAM, another
    // device's registers, the unit's own) is not an interrupt: it is refused, not written.
    if ((addr >> 20) != 0xFEE) {
        counters_.events_refused++;
        logf(host_.log, LogKind::GuestError,
             "vtd: %s event message to 0x%llx (data 0x%x) is outside the interrupt range "
             "0xfee00000-0xfeefffff; not sent",
             fault ? "fault" : "invalidation", static_cast<unsigned long long>(addr), data);
        if (host_.observer)
            host_.observer->event_refused(fault, addr, data);
        return;
    }
    depth_++;
    bool sent = host_.irq.send_msi(addr, data, {});
    depth_--;
    if (sent)
        (fault ? counters_.fault_events : counters_.inv_events)++;
}

void Unit::fault_event()
{
    uint64_t v = regs_->get(R_FECTL);
    if (v & CTL_IM) {
        regs_->set(R_FECTL, v | CTL_IP);
        return;
    }
    send(R_FECTL, R_FEDATA, R_FEADDR);
}

void Unit::write_fectl(uint64_t, uint64_t, uint64_t)
{
    uint64_t v = regs_->get(R_FECTL);
    if (!(v & CTL_IM) && (v & CTL_IP)) {
        regs_->set(R_FECTL, v & ~uint64_t{CTL_IP});
        send(R_FECTL, R_FEDATA, R_FEADDR);
    }
}

void Unit::write_fsts(uint64_t old, uint64_t, uint64_t)
{
    uint64_t now = read_fsts(regs_->get(R_FSTS));
    if (!(now & (FSTS_PFO | FSTS_PPF | FSTS_IQE | FSTS_ICE | FSTS_ITE)))
        regs_->set(R_FECTL, regs_->get(R_FECTL) & ~uint64_t{CTL_IP});
    if ((old & FSTS_IQE) && !(now & FSTS_IQE) && (regs_->get(R_GSTS) & G_QIE))
        queue_kick(); // 6.5.2.10: processing resumes at IQH
}

void Unit::write_frcd(uint64_t, uint64_t, uint64_t)
{
    write_fsts(regs_->get(R_FSTS), 0, 0);
}

void Unit::record_fault(uint16_t sid, uint64_t iova, bool write, uint8_t reason)
{
    uint64_t fsts = regs_->get(R_FSTS);
    if (fsts & FSTS_PFO) {
        counters_.faults_overflowed++;
        return;
    }
    bool pending = read_fsts(fsts) & FSTS_PPF;
    unsigned slot = next_record_ % kFaultRecords;
    // A request refused again while its record is still pending is not recorded twice
    // (7.2.1 lets hardware coalesce faults from one requester to one page): QEMU splits a
    // faulting access into many small ones, and each would otherwise take a record.
    unsigned last = R_FRCD0 + 2 * ((slot + kFaultRecords - 1) % kFaultRecords);
    uint64_t hi = FRCD_F | (write ? 0 : FRCD_T_READ) | uint64_t{reason} << FRCD_FR_SHIFT | sid;
    if (regs_->get(last + 1) == hi && regs_->get(last) == (iova & ~uint64_t{0xfff})) {
        counters_.faults_coalesced++;
        return;
    }
    unsigned reg = R_FRCD0 + 2 * slot;
    if (regs_->get(reg + 1) & FRCD_F) {
        counters_.faults_overflowed++;
        regs_->set(R_FSTS, fsts | FSTS_PFO);
        fault_event();
        return;
    }
    regs_->set(reg, iova & ~uint64_t{0xfff});
    regs_->set(reg + 1, hi);
    next_record_ = (slot + 1) % kFaultRecords;
    counters_.faults_recorded++;
    if (!pending) {
        // 10.4.9: FRI names the record of the first pending fault.
        regs_->set(R_FSTS,
                   (fsts & ~(uint64_t{0xff} << FSTS_FRI_SHIFT)) | uint64_t{slot} << FSTS_FRI_SHIFT);
        fault_event();
    }
}

// ---- Translation (3.6, 9) ----

bool Unit::context_for(uint16_t sid, Context& out, uint8_t& reason)
{
    if (last_context_ && static_cast<Context*>(last_context_)->sid == sid) {
        counters_.context_hits++;
        caches_->context.touch(static_cast<Context*>(last_context_));
        out = *static_cast<Context*>(last_context_);
        return true;
    }
    unsigned set = caches_->context_set(sid);
    if (Context* c = caches_->context.find(set, Caches::context_tag(sid))) {
        counters_.context_hits++;
        last_context_ = c;
        out = *c;
        return true;
    }
    counters_.context_misses++;
    charge(sid, 2 * config_.walk_read_ns); // the root and the context entry
    uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1);
    if (!root_valid_ || (root_ & haw_mask)) {
        reason = FR_ROOT_TABLE;
        return false;
    }
    uint64_t e[2] = {};
    uint8_t raw[16] = {};
    depth_++;
    DmaResult r = host_.memory.read(root_ + (sid >> 8) * 16u, raw, sizeof raw, {});
    depth_--;
    e[0] = load_le(raw, 8);
    e[1] = load_le(raw + 8, 8);
    if (!r.ok()) {
        reason = FR_ROOT_TABLE;
        return false;
    }
    if (!(e[0] & RE_P)) {
        reason = FR_ROOT_NOT_PRESENT;
        return false;
    }
    if ((e[0] & 0xffe) || (e[0] & haw_mask) || e[1]) {
        reason = FR_ROOT_RESERVED;
        return false;
    }
    uint64_t ce_addr = (e[0] & RE_CTP) + (sid & 0xffu) * 16u;
    depth_++;
    r = host_.memory.read(ce_addr, raw, sizeof raw, {});
    depth_--;
    e[0] = load_le(raw, 8);
    e[1] = load_le(raw + 8, 8);
    if (!r.ok()) {
        reason = FR_CONTEXT_TABLE;
        return false;
    }
    if (!(e[0] & CE_P)) {
        reason = FR_CONTEXT_NOT_PRESENT;
        return false;
    }
    out.fpd = e[0] & CE_FPD;
    if ((e[0] & CE_LO_RESERVED) || (e[0] & haw_mask) || (e[1] & CE_HI_RESERVED) ||
        ((e[1] >> CE_HI_DID_SHIFT) & 0xffff) >= 256) {
        reason = FR_CONTEXT_RESERVED;
        return false;
    }
    out.sid = sid;
    out.tt = (e[0] >> CE_TT_SHIFT) & 3;
    out.aw = e[1] & CE_HI_AW;
    out.did = (e[1] >> CE_HI_DID_SHIFT) & 0xffff;
    out.slptptr = e[0] & CE_SLPTPTR;
    bool aw_ok = out.aw == 1 || (out.aw == 2 && config_.aw_bits >= 48);
    if (!(out.tt == TT_UNTRANSLATED && aw_ok) && !(out.tt == TT_PASSTHROUGH && config_.pt)) {
        reason = FR_CONTEXT_INVALID;
        return false;
    }
    auto [where, evicted] = caches_->context.insert(set, Caches::context_tag(sid), out.did, out);
    if (evicted) {
        counters_.context_evictions++;
        forget();
    }
    last_context_ = where;
    return true;
}

bool Unit::walk(const Context& ctx, uint64_t iova, unsigned perm, Walk& out, uint8_t& reason,
                bool count)
{
    unsigned levels = ctx.aw == 1 ? 3 : 4;
    uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
    uint64_t table = ctx.slptptr;
    bool r = true, w = true;
    if (count)
        counters_.page_walks++;
    unsigned top = levels;
    Memo& m = *memo_;
    if (m.on && m.have_upper && m.upper_root == table && m.upper_levels == levels &&
        m.upper_region == iova >> 21) {
        // translate_run: the levels above the leaf table were read for this 2 MiB region
        // earlier in the call and are counted as read again.
        if (count)
            counters_.walk_reads += levels - 1;
        r = m.upper_r;
        w = m.upper_w;
        table = m.upper_table;
        top = 1;
    }
    for (unsigned level = top; level >= 1; level--) {
        unsigned shift = 12 + 9 * (level - 1);
        uint64_t idx = (iova >> shift) & 511;
        uint64_t pte = 0;
        if (table & ~(pow2(config_.aw_bits) - 1)) {
            reason = FR_PAGE_TABLE;
            return false;
        }
        DmaResult res = read_entry(table, idx, level, pte);
        if (count)
            counters_.walk_reads++;
        if (!res.ok()) {
            reason = FR_PAGE_TABLE;
            return false;
        }
        if (!(pte & (SL_R | SL_W))) {
            reason = (perm & kWrite) ? FR_WRITE : FR_READ;
            return false;
        }
        bool leaf = level == 1 || ((pte & SL_PS) && level <= 3);
        uint64_t reserved = haw_mask | SL_SNP | SL_TM;
        if (level == 4 && (pte & SL_PS))
            reserved |= SL_PS;
        if (leaf && level > 1)
            reserved |= (pow2(shift) - 1) & ~uint64_t{0xfff}; // address bits inside the page
        if (pte & reserved) {
            reason = FR_PAGE_RESERVED;
            return false;
        }
        r = r && (pte & SL_R);
        w = w && (pte & SL_W);
        uint64_t addr = pte & 0x000ffffffffff000ull;
        if (leaf) {
            out.page = addr & ~(pow2(shift) - 1);
            out.shift = shift;
            out.r = r;
            out.w = w;
            return true;
        }
        if (m.on && level == 2) {
            m.have_upper = true;
            m.upper_root = ctx.slptptr;
            m.upper_levels = levels;
            m.upper_region = iova >> 21;
            m.upper_table = addr;
            m.upper_r = r;
            m.upper_w = w;
        }
        table = addr;
    }
    reason = FR_PAGE_TABLE; // not reached: level 1 is always a leaf
    return false;
}

DmaResult Unit::read_entry(uint64_t table, uint64_t idx, unsigned level, uint64_t& pte)
{
    Memo& m = *memo_;
    uint8_t raw[8] = {};
    if (m.on && level == 1) {
        if (!m.have_leaf || m.leaf != table) {
            depth_++;
            DmaResult all = host_.memory.read(table, m.leaf_bytes, sizeof m.leaf_bytes, {});
            depth_--;
            m.have_leaf = all.ok();
            m.leaf = table;
        }
        if (m.have_leaf) {
            pte = load_le(m.leaf_bytes + idx * 8, 8);
            return DmaResult::success(8);
        }
    } else if (m.on && m.have[level] && m.at[level] == table + idx * 8) {
        pte = m.value[level];
        return DmaResult::success(8);
    }
    depth_++;
    DmaResult r = host_.memory.read(table + idx * 8, raw, 8, {});
    depth_--;
    pte = load_le(raw, 8);
    if (m.on && r.ok() && level < 5) {
        m.at[level] = table + idx * 8;
        m.value[level] = pte;
        m.have[level] = true;
    }
    return r;
}

Unit::Run Unit::translate_run(uint16_t sid, uint64_t iova, uint64_t len, unsigned perm)
{
    Run run;
    Memo& m = *memo_;
    m.on = true;
    m.have_leaf = false;
    m.have_upper = false;
    for (bool& h : m.have)
        h = false;
    len = std::min(len, kMaxRun);
    run.first = translate(sid, iova, perm);
    if (run.first.ok && len) {
        const Translation& f = run.first;
        const uint64_t out = f.addr + (iova - f.iova);
        uint64_t page_end = f.iova + f.mask; // last byte of the page
        run.len = std::min(len, page_end - iova + 1);
        while (run.len < len && page_end != ~uint64_t{0}) {
            uint64_t next = page_end + 1;
            bool done;
            Translation t = translate_next(sid, next, perm, done);
            if (!done)
                t = translate(sid, next, perm);
            if (!t.ok || t.addr + (next - t.iova) != out + run.len || t.read != f.read ||
                t.write != f.write)
                break;
            page_end = t.iova + t.mask;
            run.len += std::min(len - run.len, page_end - next + 1);
        }
    }
    m.on = false;
    return run;
}

Translation Unit::refuse(uint16_t sid, uint64_t iova, unsigned perm, uint8_t reason, bool record)
{
    Translation t;
    t.fault_reason = reason;
    t.iova = iova & ~uint64_t{0xfff};
    t.mask = 0xfff;
    if (perm == 0)
        return t; // a query records nothing
    counters_.faults++;
    bool write = perm & kWrite;
    if (record)
        record_fault(sid, iova, write, reason);
    if (host_.observer)
        host_.observer->fault(sid, iova, write, reason, record);
    return t;
}

void Unit::audit(uint16_t sid, const Context& ctx, uint64_t iova, uint64_t cached, bool r, bool w)
{
    counters_.audit_checks++;
    Walk now;
    uint8_t reason = 0;
    bool ok = walk(ctx, iova, 0, now, reason, false);
    uint64_t now_addr = ok ? now.page + (iova & (pow2(now.shift) - 1) & ~uint64_t{0xfff}) : 0;
    if (ok && now_addr == cached && now.r == r && now.w == w)
        return;
    counters_.audit_stale++;
    if (host_.observer)
        host_.observer->stale(sid, iova, cached, now_addr, ok ? 0 : reason);
}

Translation Unit::translate(uint16_t sid, uint64_t iova, unsigned perm)
{
    Translation t;
    if (!translation_enabled()) {
        t.ok = true;
        t.iova = iova & ~uint64_t{0xfff};
        t.addr = t.iova;
        t.mask = 0xfff;
        t.read = t.write = true;
        return t;
    }
    counters_.translations++;
    if (injector_ && perm) {
        uint8_t reason = 0;
        faults::Occasion o{};
        o.kinds = 1u << static_cast<unsigned>(faults::Kind::TranslationFault);
        o.unit = sid;
        o.op = (perm & kWrite) ? kFaultOpWrite : kFaultOpRead;
        o.key = iova;
        o.start[0] = iova;
        o.end[0] = iova == ~uint64_t{0} ? iova : iova + 1;
        injector_->decide(o, host_.timers.now_ns(),
                          [&](const faults::Rule& r) { reason = r.reason; });
        if (reason)
            return refuse(sid, iova, perm, reason, true);
    }
    if (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base &&
        !config_.audit) {
        counters_.context_hits++;
        counters_.iotlb_hits++;
        caches_->iotlb.touch(static_cast<TlbEntry*>(front_.entry));
        if ((perm & kWrite) && !front_.w)
            return refuse(sid, iova, perm, FR_WRITE, !front_.fpd);
        if ((perm & kRead) && !front_.r)
            return refuse(sid, iova, perm, FR_READ, !front_.fpd);
        t.ok = true;
        t.translated = true;
        t.mask = front_.mask;
        t.iova = front_.base;
        t.addr = front_.page;
        t.read = front_.r;
        t.write = front_.w;
        return t;
    }
    Context ctx;
    uint8_t reason = 0;
    if (!context_for(sid, ctx, reason))
        return refuse(sid, iova, perm, reason, !ctx.fpd);
    if (ctx.tt == TT_PASSTHROUGH) {
        t.ok = true;
        t.iova = iova & ~uint64_t{0xfff};
        t.addr = t.iova;
        t.mask = 0xfff;
        t.read = t.write = true;
        return t;
    }
    unsigned agaw = ctx.aw == 1 ? 39 : 48;
    if (iova >> agaw)
        return refuse(sid, iova, perm, FR_ADDRESS_BEYOND_AW, !ctx.fpd);

    TlbEntry* hit = nullptr;
    for (unsigned shift : {12u, 21u, 30u}) {
        // No entry of this page size is cached anywhere: the lookup would miss.
        if (caches_->iotlb.kind_size((shift - 12) / 9) == 0)
            continue;
        uint64_t vpn = iova >> shift;
        uint64_t tag = Caches::iotlb_tag(ctx.did, vpn, shift);
        hit = caches_->iotlb.find(caches_->iotlb_set(tag), tag);
        if (hit)
            break;
    }
    TlbEntry e;
    TlbEntry* slot = hit;
    if (hit) {
        counters_.iotlb_hits++;
        e = *hit;
        if (config_.audit)
            audit(sid, ctx, iova, e.page + (iova & (pow2(e.shift) - 1) & ~uint64_t{0xfff}), e.r,
                  e.w);
    } else {
        counters_.iotlb_misses++;
        Walk w;
        uint64_t reads = counters_.walk_reads;
        bool walked = walk(ctx, iova, perm, w, reason, true);
        charge(sid, (counters_.walk_reads - reads) * config_.walk_read_ns);
        if (!walked)
            return refuse(sid, iova, perm, reason, !ctx.fpd);
        e = {ctx.did, static_cast<uint8_t>(w.shift), w.r, w.w, iova >> w.shift, w.page};
        uint64_t tag = Caches::iotlb_tag(ctx.did, e.vpn, w.shift);
        auto [where, evicted] =
            caches_->iotlb.insert(caches_->iotlb_set(tag), tag, ctx.did, e, (w.shift - 12) / 9);
        slot = where;
        // An eviction can only have replaced the front entry, which is set again below;
        // the context cache is untouched.
        if (evicted)
            counters_.iotlb_evictions++;
    }
    return answer(sid, iova, perm, e.shift, e.page, e.r, e.w, ctx.fpd, slot);
}

Translation Unit::answer(uint16_t sid, uint64_t iova, unsigned perm, unsigned shift, uint64_t page,
                         bool r, bool w, bool fpd, void* slot)
{
    front_ = {true, sid, iova & ~(pow2(shift) - 1), pow2(shift) - 1, page, r, w, fpd, slot};
    if ((perm & kWrite) && !w)
        return refuse(sid, iova, perm, FR_WRITE, !fpd);
    if ((perm & kRead) && !r)
        return refuse(sid, iova, perm, FR_READ, !fpd);
    Translation t;
    t.ok = true;
    t.translated = true;
    t.mask = pow2(shift) - 1;
    t.iova = iova & ~t.mask;
    t.addr = page;
    t.read = r;
    t.write = w;
    return t;
}

Translation Unit::translate_next(uint16_t sid, uint64_t iova, unsigned perm, bool& done)
{
    done = false;
    const Memo& m = *memo_;
    auto* ctx = static_cast<Context*>(last_context_);
    // Whatever translate() would treat otherwise goes to it: fault rules and audits, the
    // previous page's front entry, cached large pages (each a lookup of its own), another
    // requester, and a page outside the leaf table this call read whole.
    if (injector_ || config_.audit || !translation_enabled() || !ctx || ctx->sid != sid ||
        ctx->tt != TT_UNTRANSLATED || !m.have_upper || !m.have_leaf || m.leaf != m.upper_table ||
        m.upper_root != ctx->slptptr || m.upper_levels != (ctx->aw == 1 ? 3u : 4u) ||
        m.upper_region != iova >> 21 ||
        (front_.valid && front_.sid == sid && (iova & ~front_.mask) == front_.base) ||
        caches_->iotlb.kind_size(1) || caches_->iotlb.kind_size(2))
        return {};
    const uint64_t vpn = iova >> 12;
    const uint64_t tag = Caches::iotlb_tag(ctx->did, vpn, 12);
    const unsigned set = caches_->iotlb_set(tag);
    TlbEntry* slot = caches_->iotlb.find(set, tag); // a miss changes nothing
    uint64_t page;
    bool r, w;
    if (slot) {
        page = slot->page;
        r = slot->r;
        w = slot->w;
    } else {
        // walk()'s checks of a level-1 entry (present, reserved bits); a fault is walk()'s.
        uint64_t pte = load_le(m.leaf_bytes + (vpn & 511) * 8, 8);
        uint64_t haw_mask = ~(pow2(config_.aw_bits) - 1) & ((uint64_t{1} << 52) - 1);
        if (!(pte & (SL_R | SL_W)) || (pte & (haw_mask | SL_SNP | SL_TM)))
            return {};
        page = pte & 0x000ffffffffff000ull;
        r = m.upper_r && (pte & SL_R);
        w = m.upper_w && (pte & SL_W);
    }
    counters_.translations++;
    counters_.context_hits++;
    caches_->context.touch(ctx);
    if (slot) {
        counters_.iotlb_hits++;
    } else {
        counters_.iotlb_misses++;
        counters_.page_walks++;
        counters_.walk_reads += m.upper_levels; // the levels above counted as read again
        charge(sid, m.upper_levels * config_.walk_read_ns);
        auto [where, evicted] =
            caches_->iotlb.insert(set, tag, ctx->did, TlbEntry{ctx->did, 12, r, w, vpn, page});
        slot = where;
        if (evicted)
            counters_.iotlb_evictions++;
    }
    done = true;
    return answer(sid, iova, perm, 12, page, r, w, ctx->fpd, slot);
}

// ---- What walks cost the requesters ----

void Unit::charge(uint16_t sid, uint64_t ns)
{
    if (ns == 0)
        return;
    counters_.walk_cost_ns += ns;
    for (unsigned i = 0; i < kCostSlots; i++) {
        Cost& c = costs_[(sid + i) % kCostSlots];
        if (c.key == 0u || c.key == sid + 1u) {
            c.key = sid + 1u;
            c.ns = sat_add(c.ns, ns);
            return;
        }
    }
}

uint64_t Unit::take_cost(uint16_t sid)
{
    for (unsigned i = 0; i < kCostSlots; i++) {
        Cost& c = costs_[(sid + i) % kCostSlots];
        if (c.key == sid + 1u) {
            uint64_t ns = c.ns;
            c.ns = 0; // the slot stays with its requester
            return ns;
        }
        if (c.key == 0)
            return 0;
    }
    return 0;
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
    w.u64(q_lo_);
    w.u64(q_hi_);
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
    q_lo_ = q_lo;
    q_hi_ = q_hi;
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
