// SPDX-License-Identifier: GPL-2.0-or-later
// What Enable Device and Enable WQ refuse (DSA spec, "Command Status" errors 0x10-0x28), and
// the invariants the device keeps, which migration and the tests hold a state to. The four
// group configuration errors (0x15-0x18) are named no finer by Linux than "group config";
// which inconsistency each one reports is this model's reading, in the order checked.

#include "parts.h"

namespace dmalab::dsa
{

namespace
{
using fields::GRPFLAGS;
using fields::WQCFG_LIMITS;
using fields::WQCFG_MODE;

constexpr Field kRdbufLimit = field(fields::GENCFG, "RDBUF_LIMIT");
constexpr Field kReserved = field(GRPFLAGS, "RDBUFS_RESERVED");
constexpr Field kAllowed = field(GRPFLAGS, "RDBUFS_ALLOWED");
constexpr Field kSize = field(fields::WQCFG_SIZE, "WQ_SIZE");
constexpr Field kThreshold = field(fields::WQCFG_THRESHOLD, "WQ_THRESHOLD");
constexpr Field kMode = field(WQCFG_MODE, "MODE");
constexpr Field kPriority = field(WQCFG_MODE, "PRIORITY");
constexpr uint64_t kBof = field_mask(WQCFG_MODE, "BOF");
constexpr Field kMaxXfer = field(WQCFG_LIMITS, "MAX_XFER_SHIFT");
constexpr Field kMaxBatch = field(WQCFG_LIMITS, "MAX_BATCH_SHIFT");
constexpr Field kModeSupport = field(fields::WQCFG_STATUS, "MODE_SUPPORT");

uint32_t wq_size(const Tables& t, unsigned wq)
{
    return static_cast<uint32_t>(kSize.get(t.wq(wq).get(wq_reg("WQCFG_SIZE"))));
}

} // namespace

CmdErr check_device_config(const Shared& s, const Tables& t)
{
    const Config& c = s.config;
    if (kRdbufLimit.get(s.reg(reg("GENCFG"))) > c.read_buffers)
        return CmdErr::Config;
    // The WQs share WQCAP.TOTAL_WQ_SIZE descriptor slots.
    uint64_t total = 0;
    for (unsigned w = 0; w < t.wq_count(); w++)
        total += wq_size(t, w);
    if (total > c.total_wq_size)
        return CmdErr::WqSizeRange;
    // 0x15: a WQ in two groups, or a WQ given slots but no group to run it.
    for (unsigned w = 0; w < t.wq_count(); w++) {
        unsigned in = 0;
        for (unsigned g = 0; g < t.group_count(); g++)
            in += t.group(g).has_wq(w);
        if (in > 1 || (in == 0 && wq_size(t, w) > 0))
            return CmdErr::GroupConfig;
    }
    // 0x16: an engine in two groups.
    uint64_t seen = 0;
    for (unsigned g = 0; g < t.group_count(); g++) {
        if (seen & t.group(g).engines())
            return CmdErr::GroupConfig2;
        seen |= t.group(g).engines();
    }
    // 0x17: a group with WQs and no engine to run their descriptors.
    for (unsigned g = 0; g < t.group_count(); g++)
        if (t.group(g).any_wq() && !t.group(g).engines())
            return CmdErr::GroupConfig3;
    // 0x18: read buffers promised beyond GRPCAP.TOTAL_RDBUFS, or a group allowed fewer than
    // it reserves. idxd writes 0 reserved and TOTAL_RDBUFS allowed unless told otherwise
    // (idxd_group_flags_setup).
    uint64_t reserved = 0;
    for (unsigned g = 0; g < t.group_count(); g++) {
        uint64_t flags = t.group(g).get(group_reg("GRPFLAGS"));
        reserved += kReserved.get(flags);
        if (kAllowed.get(flags) < kReserved.get(flags) || kAllowed.get(flags) > c.read_buffers)
            return CmdErr::GroupConfig4;
    }
    if (reserved > c.read_buffers)
        return CmdErr::GroupConfig4;
    return CmdErr::Success;
}

CmdErr check_wq_config(const Shared& s, const Tables& t, unsigned wq)
{
    const Config& c = s.config;
    const WqEntry& e = t.wq(wq);
    const uint32_t size = wq_size(t, wq);
    const uint64_t mode = e.get(wq_reg("WQCFG_MODE"));
    const uint64_t limits = e.get(wq_reg("WQCFG_LIMITS"));
    const bool dedicated = kMode.get(mode) == static_cast<uint64_t>(WqMode::Dedicated);
    if (size == 0)
        return CmdErr::WqSize;
    if (dedicated ? !c.dedicated_mode : !c.shared_mode)
        return CmdErr::WqMode;
    // A shared WQ takes submissions up to its threshold through the limited portals; 0
    // would take none (idxd refuses it too: IDXD_SCMD_WQ_NO_THRESH).
    uint64_t threshold = kThreshold.get(e.get(wq_reg("WQCFG_THRESHOLD")));
    if (!dedicated && (threshold == 0 || threshold > size))
        return CmdErr::WqSize;
    if (!c.priority && kPriority.get(mode) != 0)
        return CmdErr::WqPriority;
    if ((mode & kBof) && !c.block_on_fault)
        return CmdErr::BofEnable;
    if (kMaxBatch.get(limits) > c.max_batch_shift)
        return CmdErr::MaxBatchSize;
    if (kMaxXfer.get(limits) > c.max_xfer_shift)
        return CmdErr::MaxXferSize;
    return CmdErr::Success;
}

// What the PCI PASID capability must allow for `wq`: a shared WQ takes its PASIDs from
// ENQCMD(S), a dedicated one with PASID_EN uses WQCFG.PASID; a dedicated WQ with PASID and
// PRIV needs Privileged Mode Enable (the spec's rule idxd quotes in idxd_wq_config_write).
CmdErr check_wq_pasid(const Shared& s, const Tables& t, unsigned wq)
{
    const uint64_t mode = t.wq(wq).get(wq_reg("WQCFG_MODE"));
    const bool dedicated = kMode.get(mode) == static_cast<uint64_t>(WqMode::Dedicated);
    const bool pasid = mode & WQCFG_PASID_EN;
    if ((pasid || !dedicated) && !s.pasid_enabled)
        return CmdErr::PasidEnable;
    if (dedicated && pasid && (mode & WQCFG_PRIV) && !s.pasid_privileged)
        return CmdErr::PasidEnable;
    return CmdErr::Success;
}

const char* invariant_violation(const Shared& s, const Tables& t)
{
    const DeviceState st = s.state();
    const uint64_t gensts = s.reg(reg("GENSTS"));
    if (st == DeviceState::Draining)
        return "GENSTS.STATE is Draining, which the model never shows";
    if (st != DeviceState::Halted && GENSTS_RESET_TYPE.get(gensts) != 0)
        return "GENSTS.RESET_TYPE is set on a device that is not halted";
    if (st == DeviceState::Enabled && check_device_config(s, t) != CmdErr::Success)
        return "an enabled device holds a configuration Enable Device refuses";
    for (unsigned w = 0; w < t.wq_count(); w++) {
        const uint64_t status = t.wq(w).get(wq_reg("WQCFG_STATUS"));
        if (WQCFG_STATE.get(status) > static_cast<uint64_t>(WqState::Enabled))
            return "WQCFG.WQ_STATE holds a value the model never shows";
        if (kModeSupport.get(status) != 1)
            return "WQCFG.MODE_SUPPORT changed";
        if (WQCFG_OCCUPANCY.get(status) > wq_size(t, w))
            return "a WQ holds more descriptors than its size";
        if (!t.wq(w).enabled())
            continue;
        if (st != DeviceState::Enabled)
            return "a WQ is enabled on a device that is not";
        if (check_wq_config(s, t, w) != CmdErr::Success)
            return "an enabled WQ holds a configuration Enable WQ refuses";
    }
    for (unsigned g = 0; g < t.group_count(); g++) {
        const GroupEntry& e = t.group(g);
        for (unsigned k = 0; k < kGrpWqWords; k++)
            if (e.get(grpwqcfg(k)) & ~e.wq_bits(k))
                return "GRPWQCFG names a WQ the device does not have";
        if (e.engines() & ~e.engine_bits())
            return "GRPENGCFG names an engine the device does not have";
    }
    return nullptr;
}

} // namespace dmalab::dsa
