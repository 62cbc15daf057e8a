// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA control plane: its parts composed (parts.h), BAR 0's fixed registers and their
// hooks, the capabilities a configuration advertises, BAR 0 dispatch, and the face the data
// path uses.

#include <algorithm>

#include "parts.h"

namespace dmalab::dsa
{

namespace
{

constexpr RegHook<Parts> kHooks[] = {
    {"GENCFG", nullptr, &Parts::write_gencfg},
    {"CMD", nullptr, &Parts::write_cmd},
};
constexpr auto kTable = bank_table<Parts, kRegCount>(kRegisters, kHooks);
static_assert(well_formed(kTable, kRegWindow));

using fields::GENCAP;
using fields::GRPCAP;
using fields::OFFSETS_LO;
using fields::WQCAP;

uint64_t gencap_value(const Config& c)
{
    // The data path copies overlapping buffers (from the end down where it must) and takes
    // CC on writes (idxd sets it when CACHE_CTRL_MEM is offered); it has no readback.
    uint64_t v = field(GENCAP, "BLOCK_ON_FAULT").put(c.block_on_fault);
    v |= field(GENCAP, "OVERLAP_COPY").put(1);
    v |= field(GENCAP, "CACHE_CTRL_MEM").put(1);
    v |= field(GENCAP, "CMDCAP").put(1);
    v |= field(GENCAP, "MAX_XFER_SHIFT").put(c.max_xfer_shift);
    v |= field(GENCAP, "MAX_BATCH_SHIFT").put(c.max_batch_shift);
    v |= field(GENCAP, "CONFIG").put(1); // software configures groups and WQs
    return v;
}

uint64_t wqcap_value(const Config& c)
{
    uint64_t v = field(WQCAP, "TOTAL_WQ_SIZE").put(c.total_wq_size);
    v |= field(WQCAP, "NUM_WQS").put(c.wqs);
    v |= field(WQCAP, "WQCFG_SIZE").put(0); // 32-byte entries (kWqcfgStride)
    v |= field(WQCAP, "SHARED_MODE").put(c.shared_mode);
    v |= field(WQCAP, "DEDICATED_MODE").put(c.dedicated_mode);
    v |= field(WQCAP, "PRIORITY").put(c.priority);
    v |= field(WQCAP, "OCCUPANCY").put(1); // the data path keeps it
    return v;
}

uint64_t grpcap_value(const Config& c)
{
    uint64_t v = field(GRPCAP, "NUM_GROUPS").put(c.groups);
    v |= field(GRPCAP, "TOTAL_RDBUFS").put(c.read_buffers);
    v |= field(GRPCAP, "RDBUF_CTRL").put(1);
    v |= field(GRPCAP, "RDBUF_LIMIT").put(1);
    return v;
}

uint64_t offsets_value(const Layout& l)
{
    uint64_t v = field(OFFSETS_LO, "GRPCFG").put(l.grpcfg / kTableUnit);
    v |= field(OFFSETS_LO, "WQCFG").put(l.wqcfg / kTableUnit);
    v |= field(OFFSETS_LO, "MSIX_PERM").put(l.msix_perm / kTableUnit);
    return v; // no IMS table, and OFFSETS_HI: no performance monitor
}

constexpr uint32_t round_up(uint32_t v)
{
    return (v + kTableUnit - 1) / kTableUnit * kTableUnit;
}

// The tables follow the fixed registers, each on a kTableUnit boundary.
constexpr Layout place_tables(unsigned vectors, unsigned groups, unsigned wqs)
{
    Layout l{};
    l.msix_perm = kRegWindow;
    l.grpcfg = round_up(l.msix_perm + vectors * kMsixPermStride);
    l.wqcfg = round_up(l.grpcfg + groups * kGrpcfgStride);
    l.end = round_up(l.wqcfg + wqs * kWqcfgStride);
    return l;
}
static_assert(place_tables(kMaxModelWqs + 1, kMaxModelGroups, kMaxModelWqs).end <=
                  DMALAB_DSA_FAULT_DOORBELL,
              "the largest configuration's tables end below the fault doorbell");

uint64_t byte_mask(unsigned n)
{
    return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
}

} // namespace

Parts::Parts(const Config& c, const Host& h) : s(c, h)
{
    events.on_halt = [this] {
        data.abort_all();
        commands.progress();
    };
    data.on_progress = [this] { commands.progress(); };
    data.vector_of = [this](uint16_t handle) { return commands.handle_vector(handle); };
    regs = std::make_unique<RegBank<Parts>>(*this, kTable, kRegWindow, s.host.log, "dsa");
    s.regs = regs.get();
    regs->set_reset_value(reg("GENCAP"), gencap_value(c));
    regs->set_reset_value(reg("WQCAP"), wqcap_value(c));
    regs->set_reset_value(reg("GRPCAP"), grpcap_value(c));
    regs->set_reset_value(reg("ENGCAP"), field(fields::ENGCAP, "NUM_ENGINES").put(c.engines));
    regs->set_reset_value(reg("OPCAP", 0), c.opcap);
    regs->set_reset_value(reg("OFFSETS_LO"), offsets_value(s.layout));
    regs->set_reset_value(reg("CMDCAP"),
                          field(fields::CMDCAP, "COMMANDS").put(command_caps(c) >> 1));
}

void Parts::write_gencfg(uint64_t old, uint64_t, uint64_t)
{
    if (s.state() == DeviceState::Disabled || s.reg(reg("GENCFG")) == old)
        return;
    s.set(reg("GENCFG"), old);
    s.refuse(offset("GENCFG"), "GENCFG is locked while the device is enabled");
}

template <class Fn> bool Parts::pieces(uint32_t offset, unsigned size, Fn&& fn)
{
    bool missed = false;
    for (unsigned i = 0; i < size;) {
        const uint32_t at = offset + i;
        Tables::Place p;
        unsigned n;
        if (at < kRegWindow) {
            n = std::min<unsigned>(size - i, kRegWindow - at);
        } else {
            p = tables.find(at);
            if (p.kind == Tables::Place::None) {
                missed = true;
                i++;
                continue;
            }
            n = std::min<unsigned>(size - i, p.left);
        }
        fn(p, at, n, i);
        i += n;
    }
    return missed;
}

bool Parts::access_ok(uint32_t offset, unsigned size, const char* what)
{
    if ((size != 1 && size != 2 && size != 4 && size != 8) || offset >= DMALAB_DSA_BAR0_SIZE ||
        size > DMALAB_DSA_BAR0_SIZE - offset) {
        logf(s.host.log, LogKind::GuestError, "dsa: %u-byte %s at 0x%x ignored", size, what,
             offset);
        return false;
    }
    if (s.depth) {
        // The device's own interrupt message reached its registers.
        logf(s.host.log, LogKind::GuestError, "dsa: %s at 0x%x from the device itself refused",
             what, offset);
        return false;
    }
    return true;
}

// ---- The face ----

const char* Dsa::check(const Config& c)
{
    if (c.wqs < 1 || c.wqs > kMaxModelWqs)
        return "wqs must be 1 to 64";
    if (c.engines < 1 || c.engines > kMaxEngines)
        return "engines must be 1 to 64";
    if (c.groups < 1 || c.groups > kMaxModelGroups)
        return "groups must be 1 to 64";
    if (c.total_wq_size < 1 || c.total_wq_size > 0xffff)
        return "total-wq-size must be 1 to 65535";
    // Vector 0 is the device's; idxd keeps one handle per WQ for vectors 1 and up
    // (idxd_setup_interrupts indexes int_handles, sized for the WQs, by vector - 1).
    if (c.msix_vectors < 2 || c.msix_vectors > c.wqs + 1)
        return "msix-vectors must be 2 to wqs + 1";
    if (c.max_xfer_shift < 1 || c.max_xfer_shift > 31)
        return "max-xfer-shift must be 1 to 31 (a transfer size is 32 bits)";
    if (c.max_batch_shift < 1 || c.max_batch_shift > 15)
        return "max-batch-shift must be 1 to 15";
    if (!c.dedicated_mode && !c.shared_mode)
        return "a device needs dedicated or shared WQs";
    if (c.opcap & ~opcap_all(0))
        return "opcap names an operation DSA 1.0 does not have";
    if (c.latency_ns > kMaxDelayNs || c.jitter_ns > kMaxDelayNs)
        return "latency-ns and jitter-ns must be at most 2^50 ns";
    if (c.step_bytes < 64 || c.step_bytes > (uint64_t{1} << 30))
        return "step-bytes must be 64 to 1 GiB";
    if (c.step_descriptors < 1 || c.step_descriptors > 1024)
        return "step-descriptors must be 1 to 1024";
    if (c.step_gap_ns < 1 || c.step_gap_ns > kMaxCommandNs)
        return "step-gap-ns must be 1 ns to 1 s";
    if (c.command_ns > kMaxCommandNs || c.command_jitter_ns > kMaxCommandNs)
        return "command-ns and command-jitter-ns must be at most 1 s (1000000000 ns)";
    return nullptr;
}

Layout Dsa::layout(const Config& c)
{
    return place_tables(c.msix_vectors, c.groups, c.wqs);
}

Dsa::Dsa(const Config& config, const Host& host) : p_(std::make_unique<Parts>(config, host))
{
    reset();
}

Dsa::~Dsa() = default;

void Dsa::reset()
{
    p_->commands.reset();
    p_->data.reset();
    p_->regs->reset();
    p_->tables.reset(true);
    p_->s.bus_master = false;
    p_->s.pasid_enabled = false;
    p_->s.pasid_privileged = false;
}

void Dsa::timer(unsigned id)
{
    if (id == 0)
        p_->commands.timer();
    else if (id >= DataPath::kFirstTimer)
        p_->data.timer(id - DataPath::kFirstTimer);
}

uint64_t Dsa::portal_read(uint32_t offset, unsigned size)
{
    return p_->data.portal_read(offset, size);
}

void Dsa::portal_write(uint32_t offset, uint64_t value, unsigned size)
{
    if (size != 1 && size != 2 && size != 4 && size != 8)
        size = 0; // not a store the portal assembles: refused as a whole
    p_->data.portal_write(offset, value, size);
}

uint64_t Dsa::portals_size(const Config& c)
{
    uint64_t n = 1;
    while (n < uint64_t{c.wqs} * DMALAB_DSA_WQ_PORTAL_STRIDE)
        n <<= 1;
    return n;
}

void Dsa::set_bus_master(bool on)
{
    p_->s.bus_master = on;
}

void Dsa::set_injector(faults::Injector* injector)
{
    p_->data.set_injector(injector);
}

bool Dsa::release(unsigned rule)
{
    return p_->data.release(rule);
}

void Dsa::set_pasid(bool enabled, bool privileged)
{
    p_->s.pasid_enabled = enabled;
    p_->s.pasid_privileged = enabled && privileged;
}

uint64_t Dsa::mmio_read(uint32_t offset, unsigned size)
{
    if (!p_->access_ok(offset, size, "read"))
        return 0;
    uint64_t v = 0;
    bool missed = p_->pieces(
        offset, size, [&](const Tables::Place& p, uint32_t at, unsigned n, unsigned first) {
            uint64_t piece =
                p.kind == Tables::Place::None ? p_->regs->read(at, n) : p_->tables.read(p, n);
            v |= (piece & byte_mask(n)) << (8 * first);
        });
    if (missed)
        logf(p_->s.host.log, LogKind::GuestError,
             "dsa: %u-byte read at 0x%x reaches undecoded bytes", size, offset);
    return v;
}

void Dsa::mmio_write(uint32_t offset, uint64_t value, unsigned size)
{
    if (!p_->access_ok(offset, size, "write"))
        return;
    bool missed = p_->pieces(offset, size,
                             [&](const Tables::Place& p, uint32_t at, unsigned n, unsigned first) {
                                 uint64_t piece = (value >> (8 * first)) & byte_mask(n);
                                 if (p.kind == Tables::Place::None)
                                     p_->regs->write(at, piece, n);
                                 else
                                     p_->tables.write(p, piece, n);
                             });
    if (missed)
        logf(p_->s.host.log, LogKind::GuestError,
             "dsa: %u-byte write at 0x%x reaches undecoded bytes", size, offset);
}

// ---- For the data path ----

DeviceState Dsa::state() const
{
    return p_->s.state();
}

unsigned Dsa::wq_count() const
{
    return p_->tables.wq_count();
}

WqInfo Dsa::wq(unsigned index) const
{
    using namespace fields;
    WqInfo i;
    if (index >= p_->tables.wq_count())
        return i;
    const WqEntry& e = p_->tables.wq(index);
    const uint64_t mode = e.get(wq_reg("WQCFG_MODE"));
    const uint64_t limits = e.get(wq_reg("WQCFG_LIMITS"));
    const uint64_t status = e.get(wq_reg("WQCFG_STATUS"));
    i.enabled = e.enabled() && state() == DeviceState::Enabled;
    i.mode = static_cast<WqMode>(field(WQCFG_MODE, "MODE").get(mode));
    i.size = static_cast<uint16_t>(e.get(wq_reg("WQCFG_SIZE")));
    i.threshold = static_cast<uint16_t>(e.get(wq_reg("WQCFG_THRESHOLD")));
    i.occupancy = static_cast<uint16_t>(WQCFG_OCCUPANCY.get(status));
    i.priority = static_cast<uint8_t>(field(WQCFG_MODE, "PRIORITY").get(mode));
    i.block_on_fault = field(WQCFG_MODE, "BOF").get(mode);
    i.ats_disable = field(WQCFG_MODE, "WQ_ATS_DISABLE").get(mode);
    i.pasid_enabled = mode & WQCFG_PASID_EN;
    i.priv = mode & WQCFG_PRIV;
    i.pasid = static_cast<uint32_t>(WQCFG_PASID.get(mode));
    i.max_xfer_shift = static_cast<uint8_t>(field(WQCFG_LIMITS, "MAX_XFER_SHIFT").get(limits));
    i.max_batch_shift = static_cast<uint8_t>(field(WQCFG_LIMITS, "MAX_BATCH_SHIFT").get(limits));
    if (int g = p_->tables.group_of(index); g >= 0) {
        i.group = static_cast<unsigned>(g);
        i.engines = p_->tables.group(static_cast<unsigned>(g)).engines();
    }
    return i;
}

GroupInfo Dsa::group(unsigned index) const
{
    using fields::GRPFLAGS;
    GroupInfo i;
    if (index >= p_->tables.group_count())
        return i;
    const GroupEntry& e = p_->tables.group(index);
    for (unsigned k = 0; k < kGrpWqWords; k++)
        i.wqs[k] = e.get(grpwqcfg(k));
    i.engines = e.engines();
    const uint64_t flags = e.get(group_reg("GRPFLAGS"));
    i.tc_a = static_cast<uint8_t>(field(GRPFLAGS, "TC_A").get(flags));
    i.tc_b = static_cast<uint8_t>(field(GRPFLAGS, "TC_B").get(flags));
    i.use_rdbuf_limit = field(GRPFLAGS, "USE_RDBUF_LIMIT").get(flags);
    i.rdbufs_reserved = static_cast<uint8_t>(field(GRPFLAGS, "RDBUFS_RESERVED").get(flags));
    i.rdbufs_allowed = static_cast<uint8_t>(field(GRPFLAGS, "RDBUFS_ALLOWED").get(flags));
    return i;
}

MsixPermission Dsa::msix_permission(unsigned vector) const
{
    using fields::MSIX_PERM;
    MsixPermission m;
    if (vector >= p_->tables.perm_count())
        return m;
    const uint64_t v = p_->tables.perm(vector).get();
    m.ignore = field(MSIX_PERM, "IGNORE").get(v);
    m.pasid_enabled = field(MSIX_PERM, "PASID_EN").get(v);
    m.pasid = static_cast<uint32_t>(field(MSIX_PERM, "PASID").get(v));
    return m;
}

std::optional<unsigned> Dsa::handle_vector(uint16_t handle) const
{
    return p_->commands.handle_vector(handle);
}

bool Dsa::completion_interrupt(unsigned vector)
{
    if (vector >= p_->tables.perm_count())
        return false;
    return p_->events.notify(vector);
}

void Dsa::software_error(const SwError& e)
{
    p_->events.software_error(e);
}

void Dsa::halt(ResetType type)
{
    p_->events.halt(type);
}

const Config& Dsa::config() const
{
    return p_->s.config;
}

const Counters& Dsa::counters() const
{
    return p_->s.counters;
}

const char* Dsa::invariant_violation() const
{
    if (const char* why = dsa::invariant_violation(p_->s, p_->tables))
        return why;
    if (const char* why = p_->data.invariant_violation())
        return why;
    return p_->commands.invariant_violation();
}

} // namespace dmalab::dsa
