// SPDX-License-Identifier: GPL-2.0-or-later
// The configuration tables OFFSETS points at (DSA spec, "Group Configuration Table", "Work
// Queue Configuration Table", "MSI-X Permissions Table"): each entry a register bank of its
// own, and the locks on configuration while the device or the WQ is enabled.

#include <cstdio>

#include "parts.h"

namespace dmalab::dsa
{

namespace
{

// WQCFG's locks, one hook per register: WQ_SIZE only while the device is Disabled (idxd
// changes a size only then: commit 0fff71c5a311, "WQ size can only be changed when the
// device is disabled"); the rest while the WQ is disabled, which is how idxd changes a WQ's
// PASID with the device enabled (idxd_wq_set_pasid: Disable WQ, WQCFG, Enable WQ). The
// status dword (OCCUPANCY_INT is W1C) and the reserved one take writes at any time.
constexpr RegHook<WqEntry> kWqHooks[] = {
    {"WQCFG_SIZE", nullptr, &WqEntry::locked<Lock::Device, wq_reg("WQCFG_SIZE")>},
    {"WQCFG_THRESHOLD", nullptr, &WqEntry::locked<Lock::Wq, wq_reg("WQCFG_THRESHOLD")>},
    {"WQCFG_MODE", nullptr, &WqEntry::locked<Lock::Wq, wq_reg("WQCFG_MODE")>},
    {"WQCFG_LIMITS", nullptr, &WqEntry::locked<Lock::Wq, wq_reg("WQCFG_LIMITS")>},
    {"WQCFG_OCC_INTH", nullptr, &WqEntry::locked<Lock::Wq, wq_reg("WQCFG_OCC_INTH")>},
    {"WQCFG_OCC_LIMIT", nullptr, &WqEntry::locked<Lock::Wq, wq_reg("WQCFG_OCC_LIMIT")>},
};
constexpr auto kWqTable = bank_table<WqEntry, kWqRegCount>(kWqConfig, kWqHooks);
static_assert(well_formed(kWqTable, kWqcfgStride));

// A group entry's rules apply to the whole entry (GroupEntry::write), so no register has
// behaviour of its own.
constexpr RegHook<GroupEntry> kGroupHooks[] = {{"GRPFLAGS"}};
constexpr auto kGroupTable = bank_table<GroupEntry, kGroupRegCount>(kGroupConfig, kGroupHooks);
static_assert(well_formed(kGroupTable, kGrpcfgStride));

constexpr RegHook<PermEntry> kPermHooks[] = {{"MSIX_PERM"}};
constexpr auto kPermTable = bank_table<PermEntry, kPermRegCount>(kMsixPerm, kPermHooks);
static_assert(well_formed(kPermTable, kMsixPermStride));

constexpr Field kModeSupport = field(fields::WQCFG_STATUS, "MODE_SUPPORT");

// The lowest `count` bits of a quadword (count may reach 64).
uint64_t low_bits(unsigned count)
{
    return count >= 64 ? ~0ull : (1ull << count) - 1;
}

} // namespace

// ---- WQCFG ----

WqEntry::WqEntry(Shared& s, unsigned index)
    : s_(s), index_(index),
      regs_(*this, kWqTable, kWqcfgStride, s.host.log,
            (std::snprintf(name_, sizeof name_, "dsa: WQCFG[%u]", index), name_))
{
    // Software may write MODE and the PASID fields of a configurable device's WQs (idxd's
    // virtual device clears it to make them read-only).
    regs_.set_reset_value(wq_reg("WQCFG_STATUS"), kModeSupport.put(1));
    regs_.reset();
}

bool WqEntry::enabled() const
{
    return WQCFG_STATE.get(get(wq_reg("WQCFG_STATUS"))) == static_cast<uint64_t>(WqState::Enabled);
}

void WqEntry::set_enabled(bool on)
{
    uint64_t st = get(wq_reg("WQCFG_STATUS")) & ~WQCFG_STATE.mask();
    // A disabled WQ holds no descriptors: Disable WQ and its kin complete after the WQ's
    // descriptors have.
    if (!on)
        st &= ~WQCFG_OCCUPANCY.mask();
    set(wq_reg("WQCFG_STATUS"), st | WQCFG_STATE.put(on ? 1 : 0));
}

void WqEntry::set_occupancy(uint16_t n)
{
    uint64_t st = get(wq_reg("WQCFG_STATUS")) & ~WQCFG_OCCUPANCY.mask();
    set(wq_reg("WQCFG_STATUS"), st | WQCFG_OCCUPANCY.put(n));
}

void WqEntry::reset_config()
{
    uint32_t size = get(wq_reg("WQCFG_SIZE"));
    regs_.reset();
    set(wq_reg("WQCFG_SIZE"), size);
}

template <Lock L, unsigned R> void WqEntry::locked(uint64_t old, uint64_t, uint64_t)
{
    bool locked = L == Lock::Device ? s_.state() != DeviceState::Disabled : enabled();
    if (!locked || regs_.get(R) == old)
        return; // idxd rewrites every WQ's entry when it enables one: the same values pass
    regs_.set(R, old);
    s_.refuse(s_.layout.wqcfg + index_ * kWqcfgStride + kWqTable[R].offset,
              L == Lock::Device ? "WQ configuration is locked while the device is enabled"
                                : "WQ configuration is locked while the WQ is enabled");
}

// ---- GRPCFG ----

GroupEntry::GroupEntry(Shared& s, unsigned index)
    : s_(s), index_(index),
      regs_(*this, kGroupTable, kGrpcfgStride, s.host.log,
            (std::snprintf(name_, sizeof name_, "dsa: GRPCFG[%u]", index), name_))
{
}

uint64_t GroupEntry::wq_bits(unsigned word) const
{
    return low_bits(s_.config.wqs > 64 * word ? s_.config.wqs - 64 * word : 0);
}

uint64_t GroupEntry::engine_bits() const
{
    return low_bits(s_.config.engines);
}

bool GroupEntry::any_wq() const
{
    for (unsigned k = 0; k < kGrpWqWords; k++)
        if (get(grpwqcfg(k)))
            return true;
    return false;
}

void GroupEntry::write(uint32_t offset, uint64_t value, unsigned size)
{
    uint64_t before[kGroupRegCount];
    for (unsigned r = 0; r < kGroupRegCount; r++)
        before[r] = regs_.get(r);
    regs_.write(offset, value, size);
    bool changed = false;
    for (unsigned r = 0; r < kGroupRegCount; r++)
        changed |= regs_.get(r) != before[r];
    const uint32_t at = s_.layout.grpcfg + index_ * kGrpcfgStride + offset;
    if (changed && s_.state() != DeviceState::Disabled) {
        // idxd_device_config rewrites every group when it enables a WQ on an enabled
        // device; what it writes then is what the device already holds.
        for (unsigned r = 0; r < kGroupRegCount; r++)
            regs_.set(r, before[r]);
        s_.refuse(at, "group configuration is locked while the device is enabled");
        return;
    }
    bool absent = false;
    for (unsigned k = 0; k < kGrpWqWords; k++) {
        uint64_t v = regs_.get(grpwqcfg(k));
        absent |= (v & ~wq_bits(k)) != 0;
        regs_.set(grpwqcfg(k), v & wq_bits(k));
    }
    uint64_t e = regs_.get(group_reg("GRPENGCFG"));
    absent |= (e & ~engine_bits()) != 0;
    regs_.set(group_reg("GRPENGCFG"), e & engine_bits());
    if (absent)
        s_.refuse(at, "GRPWQCFG/GRPENGCFG name a WQ or engine the device does not have");
}

// ---- MSI-X permissions ----

PermEntry::PermEntry(Shared& s, unsigned index)
    : regs_(*this, kPermTable, kMsixPermStride, s.host.log,
            (std::snprintf(name_, sizeof name_, "dsa: MSIX_PERM[%u]", index), name_))
{
}

// ---- The tables ----

Tables::Tables(Shared& s) : s_(s)
{
    for (unsigned i = 0; i < s.config.wqs; i++)
        wqs_.push_back(std::make_unique<WqEntry>(s, i));
    for (unsigned g = 0; g < s.config.groups; g++)
        groups_.push_back(std::make_unique<GroupEntry>(s, g));
    for (unsigned v = 0; v < s.config.msix_vectors; v++)
        perms_.push_back(std::make_unique<PermEntry>(s, v));
}

Tables::Place Tables::find(uint32_t offset) const
{
    struct Table {
        Place::Kind kind;
        uint32_t base, stride;
        unsigned count;
    };
    const Table tables[] = {
        {Place::Perm, s_.layout.msix_perm, kMsixPermStride, perm_count()},
        {Place::Group, s_.layout.grpcfg, kGrpcfgStride, group_count()},
        {Place::Wq, s_.layout.wqcfg, kWqcfgStride, wq_count()},
    };
    for (const Table& t : tables)
        if (offset >= t.base && offset - t.base < t.stride * t.count) {
            uint32_t in = (offset - t.base) % t.stride;
            return {t.kind, (offset - t.base) / t.stride, in, t.stride - in};
        }
    return {};
}

uint64_t Tables::read(const Place& p, unsigned size)
{
    switch (p.kind) {
    case Place::Perm:
        return perm(p.index).read(p.offset, size);
    case Place::Group:
        return group(p.index).read(p.offset, size);
    case Place::Wq:
        return wq(p.index).read(p.offset, size);
    case Place::None:
        break;
    }
    return 0;
}

void Tables::write(const Place& p, uint64_t value, unsigned size)
{
    switch (p.kind) {
    case Place::Perm:
        perm(p.index).write(p.offset, value, size);
        break;
    case Place::Group:
        group(p.index).write(p.offset, value, size);
        break;
    case Place::Wq:
        wq(p.index).write(p.offset, value, size);
        break;
    case Place::None:
        break;
    }
}

int Tables::group_of(unsigned wq) const
{
    for (unsigned g = 0; g < group_count(); g++)
        if (group(g).has_wq(wq))
            return static_cast<int>(g);
    return -1;
}

void Tables::disable_all_wqs()
{
    for (auto& w : wqs_)
        w->set_enabled(false);
}

void Tables::reset(bool with_permissions)
{
    for (auto& w : wqs_)
        w->reset();
    for (auto& g : groups_)
        g->reset();
    if (with_permissions)
        for (auto& p : perms_)
            p->reset();
}

// ---- Migration ----

namespace
{

// One entry register in the stream, at its width (4 or 8 bytes); a loaded value with bits
// outside its fields is refused.
template <class Owner> void save_value(StateWriter& w, const RegDef<Owner>& d, uint64_t v)
{
    if (d.width == 8)
        w.u64(v);
    else
        w.u32(static_cast<uint32_t>(v));
}
template <class Owner> uint64_t load_value(StateReader& r, const RegDef<Owner>& d)
{
    uint64_t v = d.width == 8 ? r.u64() : r.u32();
    if (v & ~d.defined())
        r.reject();
    return v;
}

} // namespace

void Tables::save(StateWriter& w) const
{
    for (const auto& e : wqs_)
        for (unsigned i = 0; i < kWqRegCount; i++)
            save_value(w, kWqTable[i], e->get(i));
    for (const auto& g : groups_)
        for (unsigned i = 0; i < kGroupRegCount; i++)
            save_value(w, kGroupTable[i], g->get(i));
    for (const auto& p : perms_)
        save_value(w, kPermTable[0], p->get());
}

bool Tables::load(StateReader& r)
{
    for (auto& e : wqs_)
        for (unsigned i = 0; i < kWqRegCount; i++)
            e->set(i, load_value(r, kWqTable[i]));
    for (auto& g : groups_)
        for (unsigned i = 0; i < kGroupRegCount; i++)
            g->set(i, load_value(r, kGroupTable[i]));
    for (auto& p : perms_)
        p->set(load_value(r, kPermTable[0]));
    return r.ok();
}

} // namespace dmalab::dsa
