// SPDX-License-Identifier: GPL-2.0-or-later
// Intel I/OAT (Crystal Beach 3.x) register map: offsets, widths and field bits as the hardware
// and Linux's drivers/dma/ioat/registers.h name them. Pure data, no behaviour.
#pragma once

#include <cstdint>

#include "dmalab/ioat/spec/pci.h"
#include "dmalab/regbank.h"

namespace dmalab::ioat
{

// BAR0 layout. Global registers at 0x00, channel i at 0x80 * (i + 1).
inline constexpr uint32_t kChannelStride = 0x80;
inline constexpr uint32_t kRegWindow = DMALAB_IOAT_REG_WINDOW;
inline constexpr unsigned kMaxChannels = DMALAB_IOAT_MAX_CHANNELS; // CHANCNT has 5 bits
static_assert(kChannelStride * (kMaxChannels + 1) <= kRegWindow);

// Register fields, with the access each has. Bits outside every field are reserved.
namespace fields
{
using A = FieldAccess;
// clang-format off
inline constexpr Field CHANCNT[] = {{"NUM_CHANNELS", 0, 5, A::RO}};
inline constexpr Field XFERCAP[] = {{"XFERCAP", 0, 5, A::RO}};
inline constexpr Field GENCTRL[] = {{"DEBUG_EN", 0, 1, A::RW}};
inline constexpr Field INTRCTRL[] = {
    {"MASTER_INT_EN", 0, 1, A::RW}, {"INT_STATUS", 1, 1, A::RO}, {"INT", 2, 1, A::RO},
    {"MSIX_VECTOR_CONTROL", 3, 1, A::RW}};
inline constexpr Field ATTNSTATUS[] = {{"CHANNEL", 0, kMaxChannels, A::RC}};
inline constexpr Field CBVER[] = {{"MINOR", 0, 4, A::RO}, {"MAJOR", 4, 4, A::RO}};
inline constexpr Field PERPORTOFFSET[] = {{"OFFSET", 0, 16, A::RO}};
inline constexpr Field INTRDELAY[] = {{"DELAY", 0, 14, A::RW}, {"COALESCE_SUPPORT", 15, 1, A::RO}};
inline constexpr Field CS_STATUS[] = {{"STATUS", 0, 16, A::RO}};
inline constexpr Field DMACAPABILITY[] = {{"CAPS", 0, 32, A::RO}};
inline constexpr Field DCAOFFSET[] = {{"OFFSET", 0, 16, A::RO}};

inline constexpr Field CHANCTRL[] = {
    {"INT_REARM", 0, 1, A::WO}, {"ERR_COMPLETION_EN", 2, 1, A::RW},
    {"ANY_ERR_ABORT_EN", 3, 1, A::RW}, {"ERR_INT_EN", 4, 1, A::RW},
    {"DESC_ADDR_SNOOP_CONTROL", 5, 1, A::RW}, {"CHANNEL_IN_USE", 8, 1, A::RO},
    {"COMPL_DCA_EN", 9, 1, A::RW}, {"PRIORITY", 12, 4, A::RW}};
inline constexpr Field DMA_COMP[] = {{"VERSIONS", 0, 16, A::RO}};
inline constexpr Field CHANCMD[] = {
    {"START", 0, 1, A::WO}, {"APPEND", 1, 1, A::WO}, {"SUSPEND", 2, 1, A::WO},
    {"ABORT", 3, 1, A::WO}, {"RESUME", 4, 1, A::WO}, {"RESET", 5, 1, A::WO}};
inline constexpr Field DMACOUNT[] = {{"COUNT", 0, 16, A::RW}};
inline constexpr Field CHANSTS[] = {
    {"STATUS", 0, 3, A::RO}, {"UNAFFILIATED_ERR", 3, 1, A::RO}, {"SOFT_ERR", 4, 1, A::RO},
    {"COMPLETED_DESCRIPTOR_ADDR", 6, 58, A::RO}};
inline constexpr Field ADDRESS[] = {{"ADDR", 0, 64, A::RW}};
inline constexpr Field CDAR[] = {{"ADDR", 0, 64, A::RO}};
inline constexpr Field CHANERR[] = {{"ERRORS", 0, 19, A::W1C}};
inline constexpr Field CHANERR_MSK[] = {{"MASK", 0, 19, A::RW}};
inline constexpr Field DCACTRL[] = {{"TARGET_CPU", 0, 16, A::RW}, {"CMPL_WRITE_ENABLE", 16, 1, A::RW}};
// clang-format on
} // namespace fields

// DMA_COMP: the completion-writeback versions the channel supports.
inline constexpr uint16_t DMA_COMP_V1 = 0x0001;
inline constexpr uint16_t DMA_COMP_V2 = 0x0002;

// The register maps, each register's one declaration: name (Linux's, drivers/dma/ioat/
// registers.h), offset, width, reset value and fields. The banks' tables, every register
// index (global_reg(), channel_reg()) and offset (global_offset(), channel_offset()) derive
// from them; device.cc and channel.cc give registers their behaviour by name. Reset values
// that depend on the configuration (CHANCNT, XFERCAP, CBVER, DMACAPABILITY) are set per
// device at construction.
// clang-format off
inline constexpr RegSpec kGlobalRegisters[] = {
    // name            offset width reset                                       fields
    {"CHANCNT",        0x00,  1,    0,                                          fields::CHANCNT},
    {"XFERCAP",        0x01,  1,    0,                                          fields::XFERCAP},
    {"GENCTRL",        0x02,  1,    0,                                          fields::GENCTRL},
    {"INTRCTRL",       0x03,  1,    0,                                          fields::INTRCTRL},
    {"ATTNSTATUS",     0x04,  4,    0,                                          fields::ATTNSTATUS},
    {"CBVER",          0x08,  1,    0,                                          fields::CBVER},
    {"PERPORTOFFSET",  0x0a,  2,    kChannelStride,                             fields::PERPORTOFFSET},
    {"INTRDELAY",      0x0c,  2,    field_mask(fields::INTRDELAY, "COALESCE_SUPPORT"), fields::INTRDELAY},
    {"CS_STATUS",      0x0e,  2,    0,                                          fields::CS_STATUS},
    {"DMACAPABILITY",  0x10,  4,    0,                                          fields::DMACAPABILITY},
    {"DCAOFFSET",      0x14,  2,    0,                                          fields::DCAOFFSET},
};
// Per channel, offsets within the channel's 0x80-byte window.
inline constexpr RegSpec kChannelRegisters[] = {
    {"CHANCTRL",       0x00,  2,    0,                                          fields::CHANCTRL},
    {"DMA_COMP",       0x02,  2,    DMA_COMP_V2,                                fields::DMA_COMP},
    {"CHANCMD",        0x04,  1,    0,                                          fields::CHANCMD},
    {"DMACOUNT",       0x06,  2,    0,                                          fields::DMACOUNT},
    {"CHANSTS",        0x08,  8,    0,                                          fields::CHANSTS},
    {"CHAINADDR",      0x10,  8,    0,                                          fields::ADDRESS},
    {"CHANCMP",        0x18,  8,    0,                                          fields::ADDRESS}, // completion write-back address
    {"CDAR",           0x20,  8,    0,                                          fields::CDAR},    // current descriptor address
    {"CHANERR",        0x28,  4,    0,                                          fields::CHANERR},
    {"CHANERR_MSK",    0x2c,  4,    0,                                          fields::CHANERR_MSK},
    {"DCACTRL",        0x30,  4,    0,                                          fields::DCACTRL},
};
// clang-format on
inline constexpr unsigned kGlobalRegCount = reg_count(kGlobalRegisters);
inline constexpr unsigned kChannelRegCount = reg_count(kChannelRegisters);

consteval unsigned global_reg(std::string_view name)
{
    return reg_index(kGlobalRegisters, name);
}
consteval unsigned channel_reg(std::string_view name)
{
    return reg_index(kChannelRegisters, name);
}
consteval uint32_t global_offset(std::string_view name)
{
    return reg_offset(kGlobalRegisters, name);
}
consteval uint32_t channel_offset(std::string_view name)
{
    return reg_offset(kChannelRegisters, name);
}

// Field masks, derived from the field tables above.
inline constexpr uint8_t GENCTRL_DEBUG_EN = field_mask(fields::GENCTRL, "DEBUG_EN");

inline constexpr uint8_t INTRCTRL_MASTER_INT_EN = field_mask(fields::INTRCTRL, "MASTER_INT_EN");
inline constexpr uint8_t INTRCTRL_INT_STATUS =
    field_mask(fields::INTRCTRL, "INT_STATUS"); // some channel has ATTNSTATUS set
inline constexpr uint8_t INTRCTRL_INT =
    field_mask(fields::INTRCTRL, "INT"); // INT_STATUS and MASTER_INT_EN
inline constexpr uint8_t INTRCTRL_MSIX_VECTOR_CONTROL =
    field_mask(fields::INTRCTRL, "MSIX_VECTOR_CONTROL");

inline constexpr uint16_t INTRDELAY_MASK = field_mask(fields::INTRDELAY, "DELAY");
inline constexpr uint16_t INTRDELAY_COALESCE_SUPPORT =
    field_mask(fields::INTRDELAY, "COALESCE_SUPPORT");

inline constexpr uint32_t CAP_PAGE_BREAK = 1u << 0;
inline constexpr uint32_t CAP_CRC = 1u << 1;
inline constexpr uint32_t CAP_SKIP_MARKER = 1u << 2;
inline constexpr uint32_t CAP_DCA = 1u << 4;
inline constexpr uint32_t CAP_CRC_MOVE = 1u << 5;
inline constexpr uint32_t CAP_FILL_BLOCK = 1u << 6;
inline constexpr uint32_t CAP_APIC = 1u << 7;
inline constexpr uint32_t CAP_XOR = 1u << 8;
inline constexpr uint32_t CAP_PQ = 1u << 9;
inline constexpr uint32_t CAP_DWBES = 1u << 13;
inline constexpr uint32_t CAP_RAID16SS = 1u << 17;

inline constexpr uint16_t CHANCTRL_INT_REARM = field_mask(fields::CHANCTRL, "INT_REARM");
inline constexpr uint16_t CHANCTRL_ERR_COMPLETION_EN =
    field_mask(fields::CHANCTRL, "ERR_COMPLETION_EN");
inline constexpr uint16_t CHANCTRL_ANY_ERR_ABORT_EN =
    field_mask(fields::CHANCTRL, "ANY_ERR_ABORT_EN");
inline constexpr uint16_t CHANCTRL_ERR_INT_EN = field_mask(fields::CHANCTRL, "ERR_INT_EN");
inline constexpr uint16_t CHANCTRL_DESC_ADDR_SNOOP_CONTROL =
    field_mask(fields::CHANCTRL, "DESC_ADDR_SNOOP_CONTROL");
inline constexpr uint16_t CHANCTRL_CHANNEL_IN_USE = field_mask(fields::CHANCTRL, "CHANNEL_IN_USE");
inline constexpr uint16_t CHANCTRL_COMPL_DCA_EN = field_mask(fields::CHANCTRL, "COMPL_DCA_EN");
inline constexpr uint16_t CHANCTRL_PRIORITY_MASK = field_mask(fields::CHANCTRL, "PRIORITY");

inline constexpr uint8_t CHANCMD_START = field_mask(fields::CHANCMD, "START");
inline constexpr uint8_t CHANCMD_APPEND = field_mask(fields::CHANCMD, "APPEND");
inline constexpr uint8_t CHANCMD_SUSPEND = field_mask(fields::CHANCMD, "SUSPEND");
inline constexpr uint8_t CHANCMD_ABORT = field_mask(fields::CHANCMD, "ABORT");
inline constexpr uint8_t CHANCMD_RESUME = field_mask(fields::CHANCMD, "RESUME");
inline constexpr uint8_t CHANCMD_RESET = field_mask(fields::CHANCMD, "RESET");

// CHANSTS: completed descriptor address in 63:6, state in 2:0.
inline constexpr uint64_t CHANSTS_COMPLETED_ADDR_MASK =
    field_mask(fields::CHANSTS, "COMPLETED_DESCRIPTOR_ADDR");
inline constexpr uint64_t CHANSTS_SOFT_ERR = field_mask(fields::CHANSTS, "SOFT_ERR");
inline constexpr uint64_t CHANSTS_UNAFFILIATED_ERR =
    field_mask(fields::CHANSTS, "UNAFFILIATED_ERR");
inline constexpr uint64_t CHANSTS_STATUS_MASK = field_mask(fields::CHANSTS, "STATUS");
enum class ChanState : uint8_t { Active = 0, Done = 1, Suspended = 2, Halted = 3 };

// CHANERR bits.
inline constexpr uint32_t CHANERR_SRC_ADDR_ERR = 1u << 0;
inline constexpr uint32_t CHANERR_DEST_ADDR_ERR = 1u << 1;
inline constexpr uint32_t CHANERR_NEXT_ADDR_ERR = 1u << 2;
inline constexpr uint32_t CHANERR_NEXT_DESC_ALIGN_ERR = 1u << 3;
inline constexpr uint32_t CHANERR_CHAIN_ADDR_VALUE_ERR = 1u << 4;
inline constexpr uint32_t CHANERR_CHANCMD_ERR = 1u << 5;
inline constexpr uint32_t CHANERR_CHIPSET_DATA_INTEGRITY_ERR = 1u << 6;
inline constexpr uint32_t CHANERR_DMA_DATA_INTEGRITY_ERR = 1u << 7;
inline constexpr uint32_t CHANERR_READ_DATA_ERR = 1u << 8;
inline constexpr uint32_t CHANERR_WRITE_DATA_ERR = 1u << 9;
inline constexpr uint32_t CHANERR_CONTROL_ERR = 1u << 10;
inline constexpr uint32_t CHANERR_LENGTH_ERR = 1u << 11;
inline constexpr uint32_t CHANERR_COMPLETION_ADDR_ERR = 1u << 12;
inline constexpr uint32_t CHANERR_INT_CONFIGURATION_ERR = 1u << 13;
inline constexpr uint32_t CHANERR_SOFT_ERR = 1u << 14;
// Bit 14 on parts with super extended descriptors (CB3.3, DMACAPABILITY.RAID16SS): Linux's
// chanerr_str (drivers/dma/ioat/dma.c) names it "Super extended descriptor Address Error".
inline constexpr uint32_t CHANERR_SED_ADDR_ERR = CHANERR_SOFT_ERR;
inline constexpr uint32_t CHANERR_UNAFFILIATED_ERR = 1u << 15;
inline constexpr uint32_t CHANERR_XOR_P_OR_CRC_ERR = 1u << 16;
inline constexpr uint32_t CHANERR_XOR_Q_ERR = 1u << 17;
inline constexpr uint32_t CHANERR_DESCRIPTOR_COUNT_ERR = 1u << 18;
inline constexpr uint32_t CHANERR_ALL = field_mask(fields::CHANERR, "ERRORS");

// PCI configuration space registers beyond the standard header (PCIe extended space).
inline constexpr uint32_t PCI_CHANERR_INT = DMALAB_IOAT_CFG_CHANERR_INT;
inline constexpr uint32_t PCI_CHANERRMASK_INT = DMALAB_IOAT_CFG_CHANERRMSK_INT;

inline constexpr uint8_t kCbVer32 = 0x32;
inline constexpr uint8_t kCbVer33 = 0x33;

} // namespace dmalab::ioat
