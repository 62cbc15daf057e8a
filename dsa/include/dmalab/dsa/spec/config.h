// SPDX-License-Identifier: GPL-2.0-or-later
// Intel DSA 1.0 configuration tables in BAR 0, each found through OFFSETS (registers.h): one
// group entry per group (GRPCFG), one WQ entry per WQ (WQCFG), one MSI-X permission entry per
// MSI-X vector. Each entry's layout is a register map relative to the entry's start.
#pragma once

#include <cstdint>
#include <string_view>

#include "dmalab/dsa/spec/registers.h"
#include "dmalab/regbank.h"

namespace dmalab::dsa
{

// Group configuration (spec: "Group Configuration Table"): entry g at
// OFFSETS.GRPCFG * kTableUnit + g * kGrpcfgStride. GRPWQCFG has bit w for WQ w (WQ w / 64 in
// quadword w / 64), GRPENGCFG bit e for engine e. GRPFLAGS holds 32 bits in DSA 1.0 (DSA 2.0
// adds progress limits above them); idxd reads and writes it as 64 bits, so the row is 8
// bytes with its upper half reserved. Bytes 0x30-0x3f are reserved.
inline constexpr uint32_t kGrpcfgStride = 64;
// WQ configuration (spec: "Work Queue Configuration Table"): entry w at
// OFFSETS.WQCFG * kTableUnit + w * kWqcfgStride, accessed as 32-bit dwords. 32 bytes is
// WQCAP.WQCFG_SIZE 0; DSA 2.0's 64-byte entry adds the operation configuration in 32-63.
inline constexpr uint32_t kWqcfgStride = 32;
inline constexpr unsigned kWqcfgSizeLog2Min = 5; // entry size = 2^(5 + WQCAP.WQCFG_SIZE)
// MSI-X permissions (spec: "MSI-X Permissions Table"): entry v at OFFSETS.MSIX_PERM *
// kTableUnit + v * kMsixPermStride, one per MSI-X vector; its upper dword is reserved. Entry 0
// (the misc vector) is never written by idxd.
inline constexpr uint32_t kMsixPermStride = 8;

namespace fields
{
using A = FieldAccess;
// clang-format off
inline constexpr Field GRPWQCFG[] = {{"WQS", 0, 64, A::RW}};
inline constexpr Field GRPENGCFG[] = {{"ENGINES", 0, 64, A::RW}};
// Traffic classes for the group's memory accesses (TC_A: descriptors marked with a TC
// selector of 0, TC_B: of 1); read buffers reserved for, and allowed to, the group; whether
// GENCFG.RDBUF_LIMIT applies to it.
inline constexpr Field GRPFLAGS[] = {
    {"TC_A", 0, 3, A::RW}, {"TC_B", 3, 3, A::RW}, {"USE_RDBUF_LIMIT", 7, 1, A::RW},
    {"RDBUFS_RESERVED", 8, 8, A::RW}, {"RDBUFS_ALLOWED", 20, 8, A::RW}};

// WQCFG, dword by dword. MODE 1 is dedicated (MOVDIR64B, PASID from the WQ), 0 shared
// (ENQCMD/ENQCMDS, PASID from the submission). PRIV is the privilege of a dedicated WQ's
// descriptors. WQ_ATS_DISABLE needs WQCAP.WQ_ATS_SUPPORT. Limits are log2: a descriptor
// above them completes with a range error.
inline constexpr Field WQCFG_SIZE[] = {{"WQ_SIZE", 0, 16, A::RW}};
inline constexpr Field WQCFG_THRESHOLD[] = {{"WQ_THRESHOLD", 0, 16, A::RW}};
inline constexpr Field WQCFG_MODE[] = {
    {"MODE", 0, 1, A::RW},      {"BOF", 1, 1, A::RW},   {"WQ_ATS_DISABLE", 2, 1, A::RW},
    {"PRIORITY", 4, 4, A::RW},  {"PASID", 8, 20, A::RW}, {"PASID_EN", 28, 1, A::RW},
    {"PRIV", 29, 1, A::RW}};
inline constexpr Field WQCFG_LIMITS[] = {
    {"MAX_XFER_SHIFT", 0, 5, A::RW}, {"MAX_BATCH_SHIFT", 5, 4, A::RW}};
// Occupancy interrupt (with WQCAP.OCCUPANCY_INT; idxd never enables it): the limit the WQ's
// occupancy is watched against, and the handle to signal (an IMS one with TABLE_SEL).
inline constexpr Field WQCFG_OCC_INTH[] = {
    {"OCCUPANCY_INTH", 0, 16, A::RW}, {"OCCUPANCY_TABLE_SEL", 16, 1, A::RW}};
inline constexpr Field WQCFG_OCC_LIMIT[] = {
    {"OCCUPANCY_LIMIT", 0, 16, A::RW}, {"OCCUPANCY_INT_EN", 16, 1, A::RW}};
// OCCUPANCY (with WQCAP.OCCUPANCY): descriptors now in the WQ; idxd shows it in sysfs.
inline constexpr Field WQCFG_STATUS[] = {
    {"OCCUPANCY", 0, 16, A::RO}, {"OCCUPANCY_INT", 16, 1, A::W1C},
    {"MODE_SUPPORT", 29, 1, A::RO}, {"WQ_STATE", 30, 2, A::RO}};

// MSI-X permission entry: which PASID (with PASID_EN) may ask for completion interrupts
// through this vector; IGNORE drops them. idxd writes its own PASID, or 0.
inline constexpr Field MSIX_PERM[] = {
    {"IGNORE", 2, 1, A::RW}, {"PASID_EN", 3, 1, A::RW}, {"PASID", 12, 20, A::RW}};
// clang-format on
} // namespace fields

// One group entry, one WQ entry and one MSI-X permission entry, offsets relative to the
// entry. A model places copies at the table offsets it advertises in OFFSETS.
// clang-format off
inline constexpr RegSpec kGroupConfig[] = {
    // name               offset width reset fields
    {"GRPWQCFG",          0x00,  8,    0,    fields::GRPWQCFG, kMaxWqs / 64, 8},
    {"GRPENGCFG",         0x20,  8,    0,    fields::GRPENGCFG},
    {"GRPFLAGS",          0x28,  8,    0,    fields::GRPFLAGS},
};
inline constexpr RegSpec kWqConfig[] = {
    {"WQCFG_SIZE",        0x00,  4,    0,    fields::WQCFG_SIZE},
    {"WQCFG_THRESHOLD",   0x04,  4,    0,    fields::WQCFG_THRESHOLD},
    {"WQCFG_MODE",        0x08,  4,    0,    fields::WQCFG_MODE},
    {"WQCFG_LIMITS",      0x0c,  4,    0,    fields::WQCFG_LIMITS},
    {"WQCFG_OCC_INTH",    0x10,  4,    0,    fields::WQCFG_OCC_INTH},
    {"WQCFG_OCC_LIMIT",   0x14,  4,    0,    fields::WQCFG_OCC_LIMIT},
    {"WQCFG_STATUS",      0x18,  4,    0,    fields::WQCFG_STATUS},
    {"WQCFG_RSVD",        0x1c,  4,    0,    {}},
};
inline constexpr RegSpec kMsixPerm[] = {
    {"MSIX_PERM",         0x00,  4,    0,    fields::MSIX_PERM},
};
// clang-format on

consteval uint32_t grpcfg_offset(std::string_view name, unsigned i = 0)
{
    return reg_offset(kGroupConfig, name, i);
}
consteval uint32_t wqcfg_offset(std::string_view name)
{
    return reg_offset(kWqConfig, name);
}

// WQCFG.MODE.
enum class WqMode : uint8_t { Shared = 0, Dedicated = 1 };
// WQCFG.WQ_STATE.
enum class WqState : uint8_t { Disabled = 0, Enabled = 1 };

inline constexpr Field WQCFG_OCCUPANCY = field(fields::WQCFG_STATUS, "OCCUPANCY");
inline constexpr Field WQCFG_STATE = field(fields::WQCFG_STATUS, "WQ_STATE");
inline constexpr Field WQCFG_PASID = field(fields::WQCFG_MODE, "PASID");
inline constexpr uint32_t WQCFG_PASID_EN = field_mask(fields::WQCFG_MODE, "PASID_EN");
inline constexpr uint32_t WQCFG_PRIV = field_mask(fields::WQCFG_MODE, "PRIV");

// The entries' extents: the last row ends inside the stride.
static_assert(grpcfg_offset("GRPFLAGS") + 8 <= kGrpcfgStride);
static_assert(wqcfg_offset("WQCFG_RSVD") + 4 == kWqcfgStride);
static_assert(kWqcfgStride == 1u << kWqcfgSizeLog2Min);

} // namespace dmalab::dsa
