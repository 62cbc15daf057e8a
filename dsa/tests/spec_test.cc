// SPDX-License-Identifier: GPL-2.0-or-later
// The DSA spec headers against numbers taken independently from Linux (drivers/dma/idxd/
// registers.h, idxd.h, device.c and include/uapi/linux/idxd.h), written here as plain numbers
// so that a wrong offset, bit or code in a header fails.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "dmalab/dsa/spec/config.h"
#include "dmalab/dsa/spec/descriptor.h"
#include "dmalab/dsa/spec/pci.h"
#include "dmalab/dsa/spec/registers.h"

namespace dmalab::dsa
{
namespace
{

// The tables pass the register bank's own compile-time checks: fields inside their
// registers and apart, registers inside the window and apart, reset values on defined bits.
struct NoOwner {
};
constexpr RegHook<NoOwner> kNoHooks[] = {{"VERSION"}};
constexpr auto kBank = bank_table<NoOwner, kRegCount>(kRegisters, kNoHooks);
static_assert(well_formed(kBank, kRegWindow));
constexpr RegHook<NoOwner> kGroupHooks[] = {{"GRPFLAGS"}};
static_assert(well_formed(bank_table<NoOwner, reg_count(kGroupConfig)>(kGroupConfig, kGroupHooks),
                          kGrpcfgStride));
constexpr RegHook<NoOwner> kWqHooks[] = {{"WQCFG_SIZE"}};
static_assert(well_formed(bank_table<NoOwner, reg_count(kWqConfig)>(kWqConfig, kWqHooks),
                          kWqcfgStride));
constexpr RegHook<NoOwner> kPermHooks[] = {{"MSIX_PERM"}};
static_assert(well_formed(bank_table<NoOwner, reg_count(kMsixPerm)>(kMsixPerm, kPermHooks),
                          kMsixPermStride));

// The row of `name` in a map, found at run time so that a test can name what it checks.
template <size_t N> const RegSpec* row(const RegSpec (&map)[N], std::string_view name)
{
    for (const RegSpec& r : map)
        if (name == r.name)
            return &r;
    return nullptr;
}
uint64_t mask(std::span<const Field> fields, std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return f.mask();
    ADD_FAILURE() << "no field " << name;
    return 0;
}
template <size_t N> uint64_t mask(const RegSpec (&map)[N], std::string_view reg, std::string_view f)
{
    const RegSpec* r = row(map, reg);
    if (!r) {
        ADD_FAILURE() << "no register " << reg;
        return 0;
    }
    return mask(r->fields, f);
}

TEST(Registers, Offsets)
{
    // IDXD_*_OFFSET.
    EXPECT_EQ(offset("VERSION"), 0x00u);
    EXPECT_EQ(offset("GENCAP"), 0x10u);
    EXPECT_EQ(offset("WQCAP"), 0x20u);
    EXPECT_EQ(offset("GRPCAP"), 0x30u);
    EXPECT_EQ(offset("ENGCAP"), 0x38u);
    EXPECT_EQ(offset("OPCAP", 0), 0x40u);
    EXPECT_EQ(offset("OPCAP", 3), 0x58u);
    EXPECT_EQ(offset("OFFSETS_LO"), 0x60u);
    EXPECT_EQ(offset("OFFSETS_HI"), 0x68u);
    EXPECT_EQ(offset("GENCFG"), 0x80u);
    EXPECT_EQ(offset("GENCTRL"), 0x88u);
    EXPECT_EQ(offset("GENSTS"), 0x90u);
    EXPECT_EQ(offset("INTCAUSE"), 0x98u);
    EXPECT_EQ(offset("CMD"), 0xa0u);
    EXPECT_EQ(offset("CMDSTS"), 0xa8u);
    EXPECT_EQ(offset("CMDCAP"), 0xb0u);
    EXPECT_EQ(offset("SWERR0"), 0xc0u);
    EXPECT_EQ(offset("SWERR1"), 0xc8u);
    EXPECT_EQ(offset("SWERR2"), 0xd0u);
    EXPECT_EQ(offset("SWERR3"), 0xd8u);
    EXPECT_EQ(kTableUnit, 0x100u); // IDXD_TABLE_MULT
    EXPECT_EQ(kRegCount, 22u);
    // idxd reads these as 32 bits (ioread32) and the capabilities as 64.
    for (const char* name :
         {"VERSION", "GENCFG", "GENCTRL", "GENSTS", "INTCAUSE", "CMD", "CMDSTS", "CMDCAP"})
        EXPECT_EQ(row(kRegisters, name)->width, 4u) << name;
    for (const char* name :
         {"GENCAP", "WQCAP", "GRPCAP", "ENGCAP", "OPCAP", "OFFSETS_LO", "SWERR0"})
        EXPECT_EQ(row(kRegisters, name)->width, 8u) << name;
}

TEST(Registers, ResetValues)
{
    EXPECT_EQ(row(kRegisters, "VERSION")->reset, 0x100u); // DEVICE_VERSION_1
    EXPECT_EQ(row(kRegisters, "GENSTS")->reset, 0u);      // IDXD_DEVICE_STATE_DISABLED
    EXPECT_EQ(row(kRegisters, "CMDSTS")->reset, 0u);
}

TEST(Registers, Capabilities)
{
    // union gen_cap_reg.
    EXPECT_EQ(mask(kRegisters, "GENCAP", "BLOCK_ON_FAULT"), 0x1u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "OVERLAP_COPY"), 0x2u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "CACHE_CTRL_MEM"), 0x4u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "CACHE_CTRL_CACHE"), 0x8u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "CMDCAP"), 0x10u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "DEST_READBACK"), 0x100u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "DRAIN_READBACK"), 0x200u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "MAX_XFER_SHIFT"), 0x1f0000u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "MAX_BATCH_SHIFT"), 0x1e00000u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "MAX_IMS_MULT"), 0x7e000000u);
    EXPECT_EQ(mask(kRegisters, "GENCAP", "CONFIG"), 0x80000000u);
    // union wq_cap_reg.
    EXPECT_EQ(mask(kRegisters, "WQCAP", "TOTAL_WQ_SIZE"), 0xffffu);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "NUM_WQS"), 0xff0000u);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "WQCFG_SIZE"), 0xf000000u);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "SHARED_MODE"), 1ull << 48);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "DEDICATED_MODE"), 1ull << 49);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "WQ_ATS_SUPPORT"), 1ull << 50);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "PRIORITY"), 1ull << 51);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "OCCUPANCY"), 1ull << 52);
    EXPECT_EQ(mask(kRegisters, "WQCAP", "OCCUPANCY_INT"), 1ull << 53);
    // union group_cap_reg, union engine_cap_reg.
    EXPECT_EQ(mask(kRegisters, "GRPCAP", "NUM_GROUPS"), 0xffu);
    EXPECT_EQ(mask(kRegisters, "GRPCAP", "TOTAL_RDBUFS"), 0xff00u);
    EXPECT_EQ(mask(kRegisters, "GRPCAP", "RDBUF_CTRL"), 0x10000u);
    EXPECT_EQ(mask(kRegisters, "GRPCAP", "RDBUF_LIMIT"), 0x20000u);
    EXPECT_EQ(mask(kRegisters, "ENGCAP", "NUM_ENGINES"), 0xffu);
    // union offsets_reg: 16 bits each, GRPCFG first.
    EXPECT_EQ(mask(kRegisters, "OFFSETS_LO", "GRPCFG"), 0xffffu);
    EXPECT_EQ(mask(kRegisters, "OFFSETS_LO", "WQCFG"), 0xffff0000u);
    EXPECT_EQ(mask(kRegisters, "OFFSETS_LO", "MSIX_PERM"), 0xffff00000000u);
    EXPECT_EQ(mask(kRegisters, "OFFSETS_LO", "IMS"), 0xffff000000000000u);
    EXPECT_EQ(mask(kRegisters, "OFFSETS_HI", "PERFMON"), 0xffffu);
}

TEST(Registers, ControlAndStatus)
{
    // union gencfg_reg, genctrl_reg, gensts_reg.
    EXPECT_EQ(mask(kRegisters, "GENCFG", "RDBUF_LIMIT"), 0xffu);
    EXPECT_EQ(mask(kRegisters, "GENCFG", "USER_INT_EN"), 0x1000u);
    EXPECT_EQ(mask(kRegisters, "GENCTRL", "SWERR_INT_EN"), 0x1u);
    EXPECT_EQ(mask(kRegisters, "GENCTRL", "HALT_INT_EN"), 0x2u);
    EXPECT_EQ(GENSTS_STATE.mask(), 0x3u);
    EXPECT_EQ(GENSTS_RESET_TYPE.mask(), 0xcu);
    EXPECT_EQ(static_cast<int>(DeviceState::Disabled), 0);
    EXPECT_EQ(static_cast<int>(DeviceState::Enabled), 1);
    EXPECT_EQ(static_cast<int>(DeviceState::Draining), 2);
    EXPECT_EQ(static_cast<int>(DeviceState::Halted), 3);
    EXPECT_EQ(static_cast<int>(ResetType::Software), 0);
    EXPECT_EQ(static_cast<int>(ResetType::Flr), 1);
    EXPECT_EQ(static_cast<int>(ResetType::Cold), 3);
    // IDXD_INTC_*.
    EXPECT_EQ(INTC_SWERR, 0x01u);
    EXPECT_EQ(INTC_CMD, 0x02u);
    EXPECT_EQ(INTC_OCCUPANCY, 0x04u);
    EXPECT_EQ(INTC_PERFMON_OVF, 0x08u);
    EXPECT_EQ(INTC_HALT, 0x10u);
    EXPECT_EQ(INTC_INT_HANDLE_REVOKED, 0x80000000u);
    // union idxd_command_reg; IDXD_CMDSTS_ACTIVE, _ERR_MASK, _RES_SHIFT.
    EXPECT_EQ(CMD_OPERAND.mask(), 0xfffffu);
    EXPECT_EQ(CMD_CODE.mask(), 0x1f00000u);
    EXPECT_EQ(CMD_INT_REQ, 0x80000000u);
    EXPECT_EQ(CMDSTS_ACTIVE, 0x80000000u);
    EXPECT_EQ(CMDSTS_ERR.mask(), 0xffu);
    EXPECT_EQ(CMDSTS_RESULT.lsb, 8u);
    EXPECT_EQ(CMDSTS_RESULT.mask(), 0xffff00u);
    // The interrupt handle RESULT carries is read as 16 bits.
    EXPECT_EQ(CMDSTS_RESULT.get(0x00123400u), 0x1234u);
    // union sw_err_reg; IDXD_SWERR_VALID, _OVERFLOW.
    EXPECT_EQ(SWERR_VALID, 0x1u);
    EXPECT_EQ(SWERR_OVERFLOW, 0x2u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "DESC_VALID"), 0x4u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "WQ_IDX_VALID"), 0x8u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "BATCH"), 0x10u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "FAULT_RW"), 0x20u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "PRIV"), 0x40u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "ERROR"), 0xff00u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "WQ_IDX"), 0xff0000u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "OPERATION"), 0xff00000000u);
    EXPECT_EQ(mask(kRegisters, "SWERR0", "PASID"), 0x0fffff0000000000u);
    EXPECT_EQ(mask(kRegisters, "SWERR1", "BATCH_IDX"), 0xffffu);
    EXPECT_EQ(mask(kRegisters, "SWERR1", "INVALID_FLAGS"), 0xffffffff00000000u);
    EXPECT_EQ(mask(kRegisters, "SWERR2", "FAULT_ADDR"), ~0ull);
    // INTCAUSE and SWERR's status bits are written back as 1 to clear them.
    EXPECT_EQ(row(kRegisters, "INTCAUSE")->fields[0].access, FieldAccess::W1C);
    EXPECT_EQ(row(kRegisters, "SWERR0")->fields[0].access, FieldAccess::W1C);
}

TEST(Registers, Commands)
{
    // enum idxd_cmd.
    const std::pair<Cmd, int> codes[] = {
        {Cmd::EnableDevice, 1},      {Cmd::DisableDevice, 2},     {Cmd::DrainAll, 3},
        {Cmd::AbortAll, 4},          {Cmd::ResetDevice, 5},       {Cmd::EnableWq, 6},
        {Cmd::DisableWq, 7},         {Cmd::DrainWq, 8},           {Cmd::AbortWq, 9},
        {Cmd::ResetWq, 10},          {Cmd::DrainPasid, 11},       {Cmd::AbortPasid, 12},
        {Cmd::RequestIntHandle, 13}, {Cmd::ReleaseIntHandle, 14},
    };
    for (auto [cmd, code] : codes)
        EXPECT_EQ(static_cast<int>(cmd), code);
    EXPECT_EQ(kCmdCount, 14u);
    // CMDCAP: bit n for command n (idxd tests BIT(IDXD_CMD_REQUEST_INT_HANDLE)).
    EXPECT_EQ(mask(kRegisters, "CMDCAP", "COMMANDS") & (1u << 13), 1u << 13);
    EXPECT_EQ(mask(kRegisters, "CMDCAP", "COMMANDS") & 1u, 0u);
    // Operands as idxd builds them: BIT(id % 16) | (id / 16) << 16 for WQ 17, and an IMS
    // index with CMD_INT_HANDLE_IMS (0x10000).
    uint64_t wq17 = field(operand::WQ_SET, "MASK").put(1u << (17 % 16)) |
                    field(operand::WQ_SET, "BLOCK").put(17 / 16);
    EXPECT_EQ(wq17, 0x10002u);
    EXPECT_EQ(field_mask(operand::INT_HANDLE, "IMS"), 0x10000u);
    EXPECT_EQ(field_mask(operand::INT_HANDLE, "INDEX"), 0xffffu);
    EXPECT_EQ(field_mask(operand::PASID, "PASID"), 0xfffffu);
}

TEST(Registers, CommandErrors)
{
    // enum idxd_cmdsts_err.
    const std::pair<CmdErr, int> codes[] = {
        {CmdErr::Success, 0x00},           {CmdErr::InvalidCommand, 0x01},
        {CmdErr::InvalidWqIndex, 0x02},    {CmdErr::HwError, 0x03},
        {CmdErr::DevEnabled, 0x10},        {CmdErr::Config, 0x11},
        {CmdErr::BusMasterDisabled, 0x12}, {CmdErr::PasidInvalid, 0x13},
        {CmdErr::WqSizeRange, 0x14},       {CmdErr::GroupConfig, 0x15},
        {CmdErr::GroupConfig2, 0x16},      {CmdErr::GroupConfig3, 0x17},
        {CmdErr::GroupConfig4, 0x18},      {CmdErr::DevNotEnabled, 0x20},
        {CmdErr::WqEnabled, 0x21},         {CmdErr::WqSize, 0x22},
        {CmdErr::WqPriority, 0x23},        {CmdErr::WqMode, 0x24},
        {CmdErr::BofEnable, 0x25},         {CmdErr::PasidEnable, 0x26},
        {CmdErr::MaxBatchSize, 0x27},      {CmdErr::MaxXferSize, 0x28},
        {CmdErr::DisDevNotEnabled, 0x31},  {CmdErr::WqCmdNotEnabled, 0x32},
        {CmdErr::InvalidIntIndex, 0x41},   {CmdErr::NoHandle, 0x42},
    };
    for (auto [err, code] : codes)
        EXPECT_EQ(static_cast<int>(err), code) << code;
}

TEST(Config, GroupEntry)
{
    // GRPCFG_SIZE 64; GRPWQCFG_OFFSET: + 8 * i; GRPENGCFG_OFFSET + 32; GRPFLGCFG_OFFSET + 40.
    EXPECT_EQ(kGrpcfgStride, 64u);
    EXPECT_EQ(grpcfg_offset("GRPWQCFG", 0), 0u);
    EXPECT_EQ(grpcfg_offset("GRPWQCFG", 3), 24u);
    EXPECT_EQ(row(kGroupConfig, "GRPWQCFG")->count, 4u); // GRPWQCFG_STRIDES
    EXPECT_EQ(grpcfg_offset("GRPENGCFG"), 32u);
    EXPECT_EQ(grpcfg_offset("GRPFLAGS"), 40u);
    // union group_flags (its DSA 1.0 half).
    EXPECT_EQ(mask(kGroupConfig, "GRPFLAGS", "TC_A"), 0x7u);
    EXPECT_EQ(mask(kGroupConfig, "GRPFLAGS", "TC_B"), 0x38u);
    EXPECT_EQ(mask(kGroupConfig, "GRPFLAGS", "USE_RDBUF_LIMIT"), 0x80u);
    EXPECT_EQ(mask(kGroupConfig, "GRPFLAGS", "RDBUFS_RESERVED"), 0xff00u);
    EXPECT_EQ(mask(kGroupConfig, "GRPFLAGS", "RDBUFS_ALLOWED"), 0xff00000u);
}

TEST(Config, WqEntry)
{
    // IDXD_WQCFG_MIN 5: 32 bytes for WQCFG_SIZE 0. union wqcfg, dword by dword.
    EXPECT_EQ(kWqcfgStride, 1u << 5);
    EXPECT_EQ(wqcfg_offset("WQCFG_SIZE"), 0u);
    EXPECT_EQ(wqcfg_offset("WQCFG_THRESHOLD"), 4u);
    EXPECT_EQ(wqcfg_offset("WQCFG_MODE"), 4u * 2); // WQCFG_PASID_IDX, WQCFG_PRIVL_IDX
    EXPECT_EQ(wqcfg_offset("WQCFG_LIMITS"), 12u);
    EXPECT_EQ(wqcfg_offset("WQCFG_OCC_INTH"), 16u);
    EXPECT_EQ(wqcfg_offset("WQCFG_OCC_LIMIT"), 20u);
    EXPECT_EQ(wqcfg_offset("WQCFG_STATUS"), 4u * 6); // WQCFG_OCCUP_IDX
    EXPECT_EQ(mask(kWqConfig, "WQCFG_SIZE", "WQ_SIZE"), 0xffffu);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_THRESHOLD", "WQ_THRESHOLD"), 0xffffu);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_MODE", "MODE"), 0x1u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_MODE", "BOF"), 0x2u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_MODE", "WQ_ATS_DISABLE"), 0x4u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_MODE", "PRIORITY"), 0xf0u);
    EXPECT_EQ(WQCFG_PASID.mask(), 0x0fffff00u);
    EXPECT_EQ(WQCFG_PASID_EN, 0x10000000u);
    EXPECT_EQ(WQCFG_PRIV, 0x20000000u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_LIMITS", "MAX_XFER_SHIFT"), 0x1fu);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_LIMITS", "MAX_BATCH_SHIFT"), 0x1e0u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_OCC_INTH", "OCCUPANCY_INTH"), 0xffffu);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_OCC_INTH", "OCCUPANCY_TABLE_SEL"), 0x10000u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_OCC_LIMIT", "OCCUPANCY_LIMIT"), 0xffffu);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_OCC_LIMIT", "OCCUPANCY_INT_EN"), 0x10000u);
    EXPECT_EQ(WQCFG_OCCUPANCY.mask(), 0xffffu); // WQCFG_OCCUP_MASK
    EXPECT_EQ(mask(kWqConfig, "WQCFG_STATUS", "OCCUPANCY_INT"), 0x10000u);
    EXPECT_EQ(mask(kWqConfig, "WQCFG_STATUS", "MODE_SUPPORT"), 0x20000000u);
    EXPECT_EQ(WQCFG_STATE.mask(), 0xc0000000u);
    EXPECT_EQ(static_cast<int>(WqMode::Dedicated), 1);
}

TEST(Config, MsixPermission)
{
    // union msix_perm; idxd writes entry i at msix_perm_offset + i * 8.
    EXPECT_EQ(kMsixPermStride, 8u);
    EXPECT_EQ(mask(kMsixPerm, "MSIX_PERM", "IGNORE"), 0x4u);
    EXPECT_EQ(mask(kMsixPerm, "MSIX_PERM", "PASID_EN"), 0x8u);
    EXPECT_EQ(mask(kMsixPerm, "MSIX_PERM", "PASID"), 0xfffff000u);
}

TEST(Pci, IdentityAndPortals)
{
    EXPECT_EQ(DMALAB_DSA_VENDOR_INTEL, 0x8086);
    EXPECT_EQ(DMALAB_DSA_DEVICE_SPR, 0x0b25);     // PCI_DEVICE_ID_INTEL_DSA_SPR0
    EXPECT_EQ(DMALAB_DSA_DEVICE_IAX_SPR, 0x0cfe); // PCI_DEVICE_ID_INTEL_IAX_SPR0
    EXPECT_EQ(DMALAB_DSA_BAR_REGS, 0);            // IDXD_MMIO_BAR
    EXPECT_EQ(DMALAB_DSA_BAR_PORTALS, 2);         // IDXD_WQ_BAR
    EXPECT_EQ(DMALAB_DSA_PORTAL_SIZE, 0x1000);    // IDXD_PORTAL_SIZE on x86
    // idxd_get_wq_portal_full_offset: ((wq * 4) << PAGE_SHIFT) + prot * 0x1000 + ims * 0x2000.
    EXPECT_EQ(3 * DMALAB_DSA_WQ_PORTAL_STRIDE + DMALAB_DSA_PORTAL_LIMITED_MSIX, 0xd000);
    EXPECT_EQ(3 * DMALAB_DSA_WQ_PORTAL_STRIDE + DMALAB_DSA_PORTAL_UNLIMITED_MSIX, 0xc000);
    EXPECT_EQ(DMALAB_DSA_PORTAL_UNLIMITED_IMS, 0x2000);
    EXPECT_EQ(DMALAB_DSA_PORTAL_LIMITED_IMS, 0x3000);
    EXPECT_EQ(DMALAB_DSA_BAR2_SIZE, 0x20000);
}

// A descriptor or completion record field's byte offset and size, from its quadword and
// bits. Fields of DSA's memory layouts are whole bytes, except PASID and PRIV and the DIF
// flag bytes that reserve some of their bits (dif_bits below).
struct Place {
    unsigned byte, bytes;
};
Place place(std::span<const Field> fields, unsigned word, std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return {8 * word + f.lsb / 8u, f.width / 8u};
    ADD_FAILURE() << "no field " << name;
    return {~0u, 0};
}
// The field `name` of operation `op`, wherever its row puts it.
Place place(Opcode op, std::string_view name)
{
    for (const OpLayout& row : kOps)
        if (row.op == op)
            for (unsigned w = 0; w < kDescriptorWords; w++)
                for (const Field& f : row.word[w])
                    if (name == f.name)
                        return {8 * w + f.lsb / 8u, f.width / 8u};
    ADD_FAILURE() << "no field " << name;
    return {~0u, 0};
}
void expect_at(Place p, unsigned byte, unsigned bytes, const char* what)
{
    EXPECT_EQ(p.byte, byte) << what;
    EXPECT_EQ(p.bytes, bytes) << what;
}
// A field of operation `op` inside one byte: that byte's offset and the field's bits in it.
void expect_bits(Opcode op, std::string_view name, unsigned byte, unsigned bits, const char* what)
{
    for (const OpLayout& row : kOps)
        if (row.op == op)
            for (unsigned w = 0; w < kDescriptorWords; w++)
                for (const Field& f : row.word[w])
                    if (name == f.name) {
                        EXPECT_EQ(8 * w + f.lsb / 8u, byte) << what;
                        EXPECT_LE(f.lsb % 8u + f.width, 8u) << what << " stays in its byte";
                        EXPECT_EQ(f.mask() >> (f.lsb / 8u * 8), bits) << what;
                        return;
                    }
    ADD_FAILURE() << "no field " << name;
}

TEST(Descriptor, Sizes)
{
    EXPECT_EQ(sizeof(RawDescriptor), 64u);
    EXPECT_EQ(sizeof(RawCompletionRecord), 32u); // idxd's compl_size for DSA
    EXPECT_EQ(kCompletionRecordAlign, 32u);
    EXPECT_EQ(kOpCount, 17u);
}

TEST(Descriptor, Opcodes)
{
    // enum dsa_opcode.
    const std::pair<Opcode, int> codes[] = {
        {Opcode::Noop, 0x00},           {Opcode::Batch, 0x01},       {Opcode::Drain, 0x02},
        {Opcode::Memmove, 0x03},        {Opcode::Fill, 0x04},        {Opcode::Compare, 0x05},
        {Opcode::ComparePattern, 0x06}, {Opcode::CreateDelta, 0x07}, {Opcode::ApplyDelta, 0x08},
        {Opcode::Dualcast, 0x09},       {Opcode::CrcGen, 0x10},      {Opcode::CopyCrc, 0x11},
        {Opcode::DifCheck, 0x12},       {Opcode::DifInsert, 0x13},   {Opcode::DifStrip, 0x14},
        {Opcode::DifUpdate, 0x15},      {Opcode::CacheFlush, 0x20},
    };
    for (auto [op, code] : codes)
        EXPECT_EQ(static_cast<int>(op), code);
    // IDXD_OPCAP_NOOP, _BATCH, _MEMMOVE; every DSA 1.0 operation: bits 0-9, 16-21, 32.
    EXPECT_EQ(opcap_bit(Opcode::Noop), 0x1u);
    EXPECT_EQ(opcap_bit(Opcode::Batch), 0x2u);
    EXPECT_EQ(opcap_bit(Opcode::Memmove), 0x8u);
    EXPECT_EQ(opcap_all(0), 0x1003f03ffull);
    EXPECT_EQ(opcap_all(1), 0u);
}

TEST(Descriptor, Flags)
{
    // IDXD_OP_FLAG_*.
    EXPECT_EQ(flag::FENCE, 0x0001u);
    EXPECT_EQ(flag::BOF, 0x0002u);
    EXPECT_EQ(flag::CRAV, 0x0004u);
    EXPECT_EQ(flag::RCR, 0x0008u);
    EXPECT_EQ(flag::RCI, 0x0010u);
    EXPECT_EQ(flag::CR, 0x0080u);
    EXPECT_EQ(flag::CC, 0x0100u);
    EXPECT_EQ(flag::ADDR1_TCS, 0x0200u);
    EXPECT_EQ(flag::ADDR2_TCS, 0x0400u);
    EXPECT_EQ(flag::ADDR3_TCS, 0x0800u);
    EXPECT_EQ(flag::CR_TCS, 0x1000u);
    EXPECT_EQ(flag::STORD, 0x2000u);
    EXPECT_EQ(flag::DRDBK, 0x4000u);
    EXPECT_EQ(flag::kDefined & 0x8020u, 0u); // CRSTS and DSTS: DSA 2.0
}

TEST(Descriptor, CommonFields)
{
    // struct dsa_hw_desc: pasid:20, rsvd:11, priv:1, flags:24, opcode:8, then bytes.
    EXPECT_EQ(field_mask(dw::W0, "PASID"), 0xfffffu);
    EXPECT_EQ(field_mask(dw::W0, "PRIV"), 0x80000000u);
    expect_at(place(dw::W0, 0, "FLAGS"), 4, 3, "flags");
    expect_at(place(dw::W0, 0, "OPCODE"), 7, 1, "opcode");
    expect_at(place(Opcode::Memmove, "COMPLETION_ADDR"), 8, 8, "completion_addr");
    expect_at(place(Opcode::Memmove, "SRC_ADDR"), 16, 8, "src_addr");
    expect_at(place(Opcode::Memmove, "DST_ADDR"), 24, 8, "dst_addr");
    expect_at(place(Opcode::Memmove, "XFER_SIZE"), 32, 4, "xfer_size");
    expect_at(place(Opcode::Memmove, "INT_HANDLE"), 36, 2, "int_handle");
    expect_at(place(Opcode::Noop, "INT_HANDLE"), 36, 2, "int_handle");
    expect_at(place(Opcode::Batch, "DESC_LIST_ADDR"), 16, 8, "desc_list_addr");
    expect_at(place(Opcode::Batch, "DESC_COUNT"), 32, 4, "desc_count");
    expect_at(place(Opcode::Drain, "READBACK_ADDR1"), 16, 8, "rdback_addr");
    expect_at(place(Opcode::Drain, "READBACK_ADDR2"), 24, 8, "rdback_addr2");
    expect_at(place(Opcode::Fill, "PATTERN"), 16, 8, "pattern");
    expect_at(place(Opcode::Fill, "DST_ADDR"), 24, 8, "fill dst_addr");
    expect_at(place(Opcode::Compare, "SRC2_ADDR"), 24, 8, "src2_addr");
    expect_at(place(Opcode::ComparePattern, "SRC_ADDR"), 16, 8, "compval src_addr");
    expect_at(place(Opcode::ComparePattern, "PATTERN"), 24, 8, "comp_pattern");
    expect_at(place(Opcode::CacheFlush, "DST_ADDR"), 24, 8, "cflush dst_addr");
}

TEST(Descriptor, OperationFields)
{
    // The op_specific union of struct dsa_hw_desc, from byte 40.
    expect_at(place(Opcode::Compare, "EXPECTED_RESULT"), 40, 1, "expected_res");
    expect_at(place(Opcode::ComparePattern, "EXPECTED_RESULT"), 40, 1, "expected_res");
    expect_at(place(Opcode::CreateDelta, "DELTA_REC_ADDR"), 40, 8, "delta_addr");
    expect_at(place(Opcode::CreateDelta, "MAX_DELTA_REC_SIZE"), 48, 4, "max_delta_size");
    expect_at(place(Opcode::CreateDelta, "EXPECTED_RESULT_MASK"), 56, 1, "expected_res_mask");
    expect_at(place(Opcode::ApplyDelta, "DELTA_REC_ADDR"), 16, 8, "apply: src_addr");
    expect_at(place(Opcode::ApplyDelta, "DELTA_REC_SIZE"), 40, 4, "delta_rec_size");
    expect_at(place(Opcode::Dualcast, "DST2_ADDR"), 40, 8, "dest2");
    expect_at(place(Opcode::CrcGen, "CRC_SEED"), 40, 4, "crc_seed");
    expect_at(place(Opcode::CopyCrc, "CRC_SEED"), 40, 4, "crc_seed");
    expect_at(place(Opcode::DifCheck, "SRC_DIF_FLAGS"), 40, 1, "src_dif_flags");
    expect_bits(Opcode::DifCheck, "DIF_FLAGS", 42, 0x0f, "dif_chk_flags, bits 7:4 reserved");
    expect_at(place(Opcode::DifCheck, "SRC_REF_TAG_SEED"), 48, 4, "chk_ref_tag_seed");
    expect_at(place(Opcode::DifCheck, "SRC_APP_TAG_MASK"), 52, 2, "chk_app_tag_mask");
    expect_at(place(Opcode::DifStrip, "SRC_APP_TAG_SEED"), 54, 2, "chk_app_tag_seed");
    expect_bits(Opcode::DifInsert, "DEST_DIF_FLAGS", 41, 0xf8, "dest_dif_flag, bits 2:0 reserved");
    expect_bits(Opcode::DifInsert, "DIF_FLAGS", 42, 0x0f, "dif_ins_flags");
    expect_at(place(Opcode::DifInsert, "DEST_REF_TAG_SEED"), 56, 4, "ins_ref_tag_seed");
    expect_at(place(Opcode::DifInsert, "DEST_APP_TAG_MASK"), 60, 2, "ins_app_tag_mask");
    expect_at(place(Opcode::DifInsert, "DEST_APP_TAG_SEED"), 62, 2, "ins_app_tag_seed");
    expect_at(place(Opcode::DifUpdate, "SRC_DIF_FLAGS"), 40, 1, "src_upd_flags");
    expect_bits(Opcode::DifUpdate, "DEST_DIF_FLAGS", 41, 0xf8, "upd_dest_flags");
    expect_bits(Opcode::DifUpdate, "DIF_FLAGS", 42, 0x0f, "dif_upd_flags");
    expect_at(place(Opcode::DifUpdate, "SRC_REF_TAG_SEED"), 48, 4, "src_ref_tag_seed");
    expect_at(place(Opcode::DifUpdate, "DEST_REF_TAG_SEED"), 56, 4, "dest_ref_tag_seed");
    expect_at(place(Opcode::DifUpdate, "DEST_APP_TAG_SEED"), 62, 2, "dest_app_tag_seed");
    // Every row starts with the common quadwords.
    for (const OpLayout& row : kOps) {
        EXPECT_EQ(row.word[0].data(), std::span<const Field>(dw::W0).data()) << row.name;
        EXPECT_EQ(row.word[1].data(), std::span<const Field>(dw::COMPLETION).data()) << row.name;
    }
}

TEST(Descriptor, DifFlagBits)
{
    // SPDK's idxd_spec.h (IDXD_DIF_FLAG_*, IDXD_DIF_SOURCE_FLAG_*) and Intel DML's dmldefs.h
    // (DML_DIF_FLAG_DST_*, one byte up; DML_DIF_CHECK_* for the result).
    EXPECT_EQ(field_mask(dif::FLAGS, "BLOCK_SIZE"), 0x3u);
    EXPECT_EQ(field_mask(dif::FLAGS, "INVERT_CRC_SEED"), 0x4u);
    EXPECT_EQ(field_mask(dif::FLAGS, "INVERT_CRC_RESULT"), 0x8u);
    EXPECT_EQ(dif::kBlockSizes[0], 512u);
    EXPECT_EQ(dif::kBlockSizes[1], 520u);
    EXPECT_EQ(dif::kBlockSizes[2], 4096u);
    EXPECT_EQ(dif::kBlockSizes[3], 4104u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "ENABLE_ALL_F_ERROR"), 0x01u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "ALL_F_DETECT"), 0x02u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "APP_TAG_F_DETECT"), 0x04u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "APP_REF_TAG_F_DETECT"), 0x08u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "APP_TAG_INCREMENT"), 0x10u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "GUARD_CHECK_DISABLE"), 0x20u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "REF_TAG_CHECK_DISABLE"), 0x40u);
    EXPECT_EQ(field_mask(dif::SRC_FLAGS, "REF_TAG_FIXED"), 0x80u);
    EXPECT_EQ(field_mask(dif::DEST_FLAGS, "APP_TAG_PASS"), 0x08u);
    EXPECT_EQ(field_mask(dif::DEST_FLAGS, "APP_TAG_INCREMENT"), 0x10u);
    EXPECT_EQ(field_mask(dif::DEST_FLAGS, "GUARD_PASS"), 0x20u);
    EXPECT_EQ(field_mask(dif::DEST_FLAGS, "REF_TAG_PASS"), 0x40u);
    EXPECT_EQ(field_mask(dif::DEST_FLAGS, "REF_TAG_FIXED"), 0x80u);
    EXPECT_EQ(field_mask(dif::RESULT, "GUARD_MISMATCH"), 0x1u);
    EXPECT_EQ(field_mask(dif::RESULT, "APP_TAG_MISMATCH"), 0x2u);
    EXPECT_EQ(field_mask(dif::RESULT, "REF_TAG_MISMATCH"), 0x4u);
    EXPECT_EQ(field_mask(dif::RESULT, "ALL_F_ERROR"), 0x8u);
    EXPECT_EQ(dif::kGuardPolynomial, 0x8bb7u); // crc_t10dif's
}

TEST(CompletionRecord, Fields)
{
    // struct dsa_completion_record.
    expect_at(place(cr::W0, 0, "STATUS"), 0, 1, "status");
    expect_at(place(cr::W0, 0, "RESULT"), 1, 1, "result");
    expect_at(place(cr::W0, 0, "BYTES_COMPLETED"), 4, 4, "bytes_completed");
    expect_at(place(cr::W1, 1, "FAULT_ADDR"), 8, 8, "fault_addr");
    EXPECT_EQ(field_mask(cr::INVALID_FLAGS, "INVALID_FLAGS"), 0xffffffu); // invalid_flags:24
    expect_at(place(cr::DELTA_REC_SIZE, 2, "DELTA_REC_SIZE"), 16, 4, "delta_rec_size");
    expect_at(place(cr::CRC_VAL, 2, "CRC_VAL"), 16, 4, "crc_val");
    expect_at(place(cr::DIF_TAGS, 2, "REF_TAG"), 16, 4, "dif_chk_ref_tag");
    expect_at(place(cr::DIF_TAGS, 2, "APP_TAG_MASK"), 20, 2, "dif_chk_app_tag_mask");
    expect_at(place(cr::DIF_TAGS, 2, "APP_TAG"), 22, 2, "dif_chk_app_tag");
    expect_at(place(cr::DIF_TAGS, 3, "REF_TAG"), 24, 4, "dif_ins_ref_tag");
    expect_at(place(cr::DIF_TAGS, 3, "APP_TAG"), 30, 2, "dif_ins_app_tag");
    // DSA_COMP_STATUS_MASK, DSA_COMP_STATUS_WRITE.
    EXPECT_EQ(cr::STATUS_CODE_MASK, 0x7fu);
    EXPECT_EQ(cr::STATUS_FAULT_WRITE, 0x80u);
}

TEST(CompletionRecord, StatusCodes)
{
    // enum dsa_completion_status, up to DSA_COMP_TRANSLATION_FAIL (the DSA 1.0 codes).
    const std::pair<Status, int> codes[] = {
        {Status::None, 0x00},
        {Status::Success, 0x01},
        {Status::SuccessFalsePredicate, 0x02},
        {Status::PageFaultNoBof, 0x03},
        {Status::PageFaultIr, 0x04},
        {Status::BatchFail, 0x05},
        {Status::BatchPageFault, 0x06},
        {Status::DeltaOffsetOrder, 0x07},
        {Status::DeltaOffsetRange, 0x08},
        {Status::DifError, 0x09},
        {Status::UnsupportedOpcode, 0x10},
        {Status::InvalidFlags, 0x11},
        {Status::NonzeroReserved, 0x12},
        {Status::XferSizeRange, 0x13},
        {Status::DescCountRange, 0x14},
        {Status::DeltaSizeRange, 0x15},
        {Status::OverlappingBuffers, 0x16},
        {Status::DualcastAlign, 0x17},
        {Status::DescListAlign, 0x18},
        {Status::InvalidIntHandle, 0x19},
        {Status::CompletionRecordFault, 0x1a},
        {Status::CompletionRecordAlign, 0x1b},
        {Status::AddressAlign, 0x1c},
        {Status::PrivilegeDenied, 0x1d},
        {Status::TrafficClassConfig, 0x1e},
        {Status::ReadbackFault, 0x1f},
        {Status::HwError, 0x20},
        {Status::HwErrorReadback, 0x21},
        {Status::TranslationFailed, 0x22},
    };
    for (auto [status, code] : codes)
        EXPECT_EQ(static_cast<int>(status), code) << code;
}

} // namespace
} // namespace dmalab::dsa
