// SPDX-License-Identifier: GPL-2.0-or-later
// Intel DSA 1.0 BAR 0 registers at fixed offsets (DSA spec, chapter "Registers"): the register
// map, field tables, command codes and command status errors. Pure data, no behaviour; the
// tables OFFSETS points at (group, WQ, MSI-X permission) are in config.h.
#pragma once

#include <cstdint>
#include <string_view>

#include "dmalab/dsa/spec/pci.h"
#include "dmalab/regbank.h"

namespace dmalab::dsa
{

// Every fixed register lies below 0x100; the configuration tables sit above, where OFFSETS
// says. DSA 2.0's event log registers (EVLCFG 0xe0, EVLSTATUS 0xf0) and IAA's IAACAP (0x180)
// are not part of DSA 1.0.
inline constexpr uint32_t kRegWindow = 0x100;
static_assert(kRegWindow <= DMALAB_DSA_BAR0_SIZE);
inline constexpr uint32_t kVersion10 = 0x100; // idxd's DEVICE_VERSION_1
// OFFSETS counts in units of 0x100 bytes from the start of BAR 0.
inline constexpr uint32_t kTableUnit = 0x100;
inline constexpr unsigned kOpcapBits = 256; // one bit per opcode, OPCAP[n / 64] bit n % 64
inline constexpr unsigned kMaxWqs = 256;    // GRPWQCFG has a bit per WQ
inline constexpr unsigned kMaxEngines = 64; // GRPENGCFG has a bit per engine

// Register fields, with the access each has. Bits outside every field are reserved.
namespace fields
{
using A = FieldAccess;
// clang-format off
// VERSION: 0x100 reads as 1.0. Linux compares the whole value with 0x100 and 0x200; where
// the major/minor split lies is this model's reading of that.
inline constexpr Field VERSION[] = {{"MINOR", 0, 8, A::RO}, {"MAJOR", 8, 8, A::RO}};
// GENCAP, general capabilities. MAX_XFER_SHIFT and MAX_BATCH_SHIFT are log2 of the largest
// transfer size and batch descriptor count; the IMS table holds MAX_IMS_MULT * 256 entries.
// CONFIG set: software writes GRPCFG, WQCFG and GENCFG; clear: they are read-only, set up by
// the platform (idxd then only loads them).
inline constexpr Field GENCAP[] = {
    {"BLOCK_ON_FAULT", 0, 1, A::RO},   {"OVERLAP_COPY", 1, 1, A::RO},
    {"CACHE_CTRL_MEM", 2, 1, A::RO},   {"CACHE_CTRL_CACHE", 3, 1, A::RO},
    {"CMDCAP", 4, 1, A::RO},           {"DEST_READBACK", 8, 1, A::RO},
    {"DRAIN_READBACK", 9, 1, A::RO},   {"MAX_XFER_SHIFT", 16, 5, A::RO},
    {"MAX_BATCH_SHIFT", 21, 4, A::RO}, {"MAX_IMS_MULT", 25, 6, A::RO},
    {"CONFIG", 31, 1, A::RO}};
// WQCAP. A WQ configuration entry is 2^(5 + WQCFG_SIZE) bytes: 32 in DSA 1.0 (field 0).
// TOTAL_WQ_SIZE is the number of descriptor slots the WQs share (the sum of WQCFG.WQ_SIZE).
inline constexpr Field WQCAP[] = {
    {"TOTAL_WQ_SIZE", 0, 16, A::RO}, {"NUM_WQS", 16, 8, A::RO},
    {"WQCFG_SIZE", 24, 4, A::RO},    {"SHARED_MODE", 48, 1, A::RO},
    {"DEDICATED_MODE", 49, 1, A::RO}, {"WQ_ATS_SUPPORT", 50, 1, A::RO},
    {"PRIORITY", 51, 1, A::RO},      {"OCCUPANCY", 52, 1, A::RO},
    {"OCCUPANCY_INT", 53, 1, A::RO}};
// GRPCAP. Read buffers were "tokens" in earlier revisions of the spec and of idxd.
inline constexpr Field GRPCAP[] = {
    {"NUM_GROUPS", 0, 8, A::RO}, {"TOTAL_RDBUFS", 8, 8, A::RO},
    {"RDBUF_CTRL", 16, 1, A::RO}, {"RDBUF_LIMIT", 17, 1, A::RO}};
inline constexpr Field ENGCAP[] = {{"NUM_ENGINES", 0, 8, A::RO}};
inline constexpr Field OPCAP[] = {{"OPS", 0, 64, A::RO}};
// OFFSETS (128 bits): where each configuration table starts, in kTableUnit units. A zero
// PERFMON offset means no performance monitor (idxd then registers no PMU).
inline constexpr Field OFFSETS_LO[] = {
    {"GRPCFG", 0, 16, A::RO}, {"WQCFG", 16, 16, A::RO},
    {"MSIX_PERM", 32, 16, A::RO}, {"IMS", 48, 16, A::RO}};
inline constexpr Field OFFSETS_HI[] = {{"PERFMON", 0, 16, A::RO}};
// GENCFG: the global read-buffer limit (with GRPCAP.RDBUF_LIMIT), and USER_INT_EN (bit 12 as
// idxd declares it; idxd never sets it).
inline constexpr Field GENCFG[] = {{"RDBUF_LIMIT", 0, 8, A::RW}, {"USER_INT_EN", 12, 1, A::RW}};
// GENCTRL: interrupt (INTCAUSE) on a software error recorded in SWERR, and on entering Halted.
inline constexpr Field GENCTRL[] = {{"SWERR_INT_EN", 0, 1, A::RW}, {"HALT_INT_EN", 1, 1, A::RW}};
inline constexpr Field GENSTS[] = {{"STATE", 0, 2, A::RO}, {"RESET_TYPE", 2, 2, A::RO}};
// INTCAUSE: why MSI-X entry 0 fired. idxd writes back what it read to clear it.
inline constexpr Field INTCAUSE[] = {
    {"SWERR", 0, 1, A::W1C},       {"CMD", 1, 1, A::W1C},
    {"OCCUPANCY", 2, 1, A::W1C},   {"PERFMON_OVF", 3, 1, A::W1C},
    {"HALT", 4, 1, A::W1C},        {"INT_HANDLE_REVOKED", 31, 1, A::W1C}};
// CMD: a write starts command CMD with OPERAND (the operand layouts are below); INT_REQ
// asks for INTCAUSE.CMD and an interrupt when it completes.
inline constexpr Field CMD[] = {
    {"OPERAND", 0, 20, A::RW}, {"CMD", 20, 5, A::RW}, {"INT_REQ", 31, 1, A::RW}};
// CMDSTS: ACTIVE while a command runs; then ERR (CmdErr) and RESULT (the interrupt handle of
// Request Interrupt Handle).
inline constexpr Field CMDSTS[] = {
    {"ERR", 0, 8, A::RO}, {"RESULT", 8, 16, A::RO}, {"ACTIVE", 31, 1, A::RO}};
// CMDCAP (with GENCAP.CMDCAP): bit n set when command n is supported. idxd asks for
// interrupt handles only when bit 13 is set, and uses the MSI-X index as the handle otherwise.
inline constexpr Field CMDCAP[] = {{"COMMANDS", 1, 14, A::RO}};
// SWERR (256 bits): the first error the device could not report in a completion record
// (one whose completion record address is unusable, for example). ERROR holds a completion
// status code; OVERFLOW says a second error came while VALID. idxd clears both by writing
// them back as 1.
inline constexpr Field SWERR0[] = {
    {"VALID", 0, 1, A::W1C},        {"OVERFLOW", 1, 1, A::W1C},
    {"DESC_VALID", 2, 1, A::RO},    {"WQ_IDX_VALID", 3, 1, A::RO},
    {"BATCH", 4, 1, A::RO},         {"FAULT_RW", 5, 1, A::RO},
    {"PRIV", 6, 1, A::RO},          {"ERROR", 8, 8, A::RO},
    {"WQ_IDX", 16, 8, A::RO},       {"OPERATION", 32, 8, A::RO},
    {"PASID", 40, 20, A::RO}};
inline constexpr Field SWERR1[] = {{"BATCH_IDX", 0, 16, A::RO}, {"INVALID_FLAGS", 32, 32, A::RO}};
inline constexpr Field SWERR2[] = {{"FAULT_ADDR", 0, 64, A::RO}};
// clang-format on
} // namespace fields

// The register map: the one declaration of each fixed register. The model's bank, every
// register index (reg()) and offset (offset()) derive from it. Capability registers (GENCAP,
// WQCAP, GRPCAP, ENGCAP, OPCAP, OFFSETS, CMDCAP) get their reset values from the device's
// configuration. 128- and 256-bit registers are split into 64-bit rows, which is how idxd
// reads them. SWERR3 is all reserved and reads as 0.
// clang-format off
inline constexpr RegSpec kRegisters[] = {
    // name        offset width reset        fields
    {"VERSION",    0x00,  4,    kVersion10,  fields::VERSION},
    {"GENCAP",     0x10,  8,    0,           fields::GENCAP},
    {"WQCAP",      0x20,  8,    0,           fields::WQCAP},
    {"GRPCAP",     0x30,  8,    0,           fields::GRPCAP},
    {"ENGCAP",     0x38,  8,    0,           fields::ENGCAP},
    {"OPCAP",      0x40,  8,    0,           fields::OPCAP, kOpcapBits / 64, 8},
    {"OFFSETS_LO", 0x60,  8,    0,           fields::OFFSETS_LO},
    {"OFFSETS_HI", 0x68,  8,    0,           fields::OFFSETS_HI},
    {"GENCFG",     0x80,  4,    0,           fields::GENCFG},
    {"GENCTRL",    0x88,  4,    0,           fields::GENCTRL},
    {"GENSTS",     0x90,  4,    0,           fields::GENSTS},  // Disabled
    {"INTCAUSE",   0x98,  4,    0,           fields::INTCAUSE},
    {"CMD",        0xa0,  4,    0,           fields::CMD},
    {"CMDSTS",     0xa8,  4,    0,           fields::CMDSTS},
    {"CMDCAP",     0xb0,  4,    0,           fields::CMDCAP},
    {"SWERR0",     0xc0,  8,    0,           fields::SWERR0},
    {"SWERR1",     0xc8,  8,    0,           fields::SWERR1},
    {"SWERR2",     0xd0,  8,    0,           fields::SWERR2},
    {"SWERR3",     0xd8,  8,    0,           {}},
};
// clang-format on
inline constexpr unsigned kRegCount = reg_count(kRegisters);

// Register `name`'s index in the bank, and its offset (element i of an array).
consteval unsigned reg(std::string_view name, unsigned i = 0)
{
    return reg_index(kRegisters, name, i);
}
consteval uint32_t offset(std::string_view name, unsigned i = 0)
{
    return reg_offset(kRegisters, name, i);
}

// GENSTS.STATE. Draining: a Disable Device or Drain All is waiting for descriptors in
// flight. Halted: a fatal error; RESET_TYPE says what brings the device back (idxd resets
// and reconfigures it itself only for Software).
enum class DeviceState : uint8_t { Disabled = 0, Enabled = 1, Draining = 2, Halted = 3 };
enum class ResetType : uint8_t { Software = 0, Flr = 1, Warm = 2, Cold = 3 };
inline constexpr Field GENSTS_STATE = field(fields::GENSTS, "STATE");
inline constexpr Field GENSTS_RESET_TYPE = field(fields::GENSTS, "RESET_TYPE");

// INTCAUSE bits.
inline constexpr uint32_t INTC_SWERR = field_mask(fields::INTCAUSE, "SWERR");
inline constexpr uint32_t INTC_CMD = field_mask(fields::INTCAUSE, "CMD");
inline constexpr uint32_t INTC_OCCUPANCY = field_mask(fields::INTCAUSE, "OCCUPANCY");
inline constexpr uint32_t INTC_PERFMON_OVF = field_mask(fields::INTCAUSE, "PERFMON_OVF");
inline constexpr uint32_t INTC_HALT = field_mask(fields::INTCAUSE, "HALT");
inline constexpr uint32_t INTC_INT_HANDLE_REVOKED =
    field_mask(fields::INTCAUSE, "INT_HANDLE_REVOKED");

// CMD and CMDSTS.
inline constexpr Field CMD_OPERAND = field(fields::CMD, "OPERAND");
inline constexpr Field CMD_CODE = field(fields::CMD, "CMD");
inline constexpr uint32_t CMD_INT_REQ = field_mask(fields::CMD, "INT_REQ");
inline constexpr Field CMDSTS_ERR = field(fields::CMDSTS, "ERR");
inline constexpr Field CMDSTS_RESULT = field(fields::CMDSTS, "RESULT");
inline constexpr uint32_t CMDSTS_ACTIVE = field_mask(fields::CMDSTS, "ACTIVE");

// SWERR, first quadword.
inline constexpr uint64_t SWERR_VALID = field_mask(fields::SWERR0, "VALID");
inline constexpr uint64_t SWERR_OVERFLOW = field_mask(fields::SWERR0, "OVERFLOW");

// Command codes (CMD.CMD); CMDCAP has bit n for command n.
enum class Cmd : uint8_t {
    EnableDevice = 1,
    DisableDevice = 2,
    DrainAll = 3,
    AbortAll = 4,
    ResetDevice = 5,
    EnableWq = 6,
    DisableWq = 7,
    DrainWq = 8,
    AbortWq = 9,
    ResetWq = 10,
    DrainPasid = 11,
    AbortPasid = 12,
    RequestIntHandle = 13,
    ReleaseIntHandle = 14,
};
inline constexpr unsigned kCmdCount = 14;

// CMD.OPERAND, per command. Enable WQ names one WQ by index. Disable, Drain, Abort and Reset
// WQ name a set: WQs 16 * BLOCK + i for each bit i of MASK (idxd sets one bit). Drain and
// Abort PASID name a PASID. Request Interrupt Handle names an MSI-X (or, with IMS, an IMS)
// table index; Release Interrupt Handle names a handle. The device commands take 0.
namespace operand
{
using A = FieldAccess;
// clang-format off
inline constexpr Field WQ_INDEX[] = {{"WQ", 0, 8, A::RW}};
inline constexpr Field WQ_SET[] = {{"MASK", 0, 16, A::RW}, {"BLOCK", 16, 4, A::RW}};
inline constexpr Field PASID[] = {{"PASID", 0, 20, A::RW}};
inline constexpr Field INT_HANDLE[] = {{"INDEX", 0, 16, A::RW}, {"IMS", 16, 1, A::RW}};
// clang-format on
} // namespace operand

// CMDSTS.ERR. The codes are grouped by the command that reports them (0x1x Enable Device,
// 0x2x Enable WQ, 0x3x the disabling commands, 0x4x interrupt handles); what each group's
// codes single out is as their names say, no finer than Linux states it.
enum class CmdErr : uint8_t {
    Success = 0x00,
    InvalidCommand = 0x01,
    InvalidWqIndex = 0x02, // the operand names a WQ at or beyond WQCAP.NUM_WQS
    HwError = 0x03,        // also what idxd assumes, without asking, of a halted device
    // Enable Device.
    DevEnabled = 0x10, // already enabled (idxd takes it as success)
    Config = 0x11,
    BusMasterDisabled = 0x12, // the PCI command register's Bus Master Enable is clear
    PasidInvalid = 0x13,
    WqSizeRange = 0x14, // the WQ sizes add up to more than WQCAP.TOTAL_WQ_SIZE
    GroupConfig = 0x15, // 0x15-0x18: four kinds of inconsistent group configuration
    GroupConfig2 = 0x16,
    GroupConfig3 = 0x17,
    GroupConfig4 = 0x18,
    // Enable WQ.
    DevNotEnabled = 0x20,
    WqEnabled = 0x21, // already enabled (idxd takes it as success)
    WqSize = 0x22,
    WqPriority = 0x23,
    WqMode = 0x24,
    BofEnable = 0x25,
    PasidEnable = 0x26,
    MaxBatchSize = 0x27,
    MaxXferSize = 0x28,
    // Disable Device.
    DisDevNotEnabled = 0x31,
    // Disable, Drain, Abort and Reset WQ (idxd calls it "device not enabled").
    WqCmdNotEnabled = 0x32,
    // Request Interrupt Handle.
    InvalidIntIndex = 0x41,
    NoHandle = 0x42,
};

} // namespace dmalab::dsa
