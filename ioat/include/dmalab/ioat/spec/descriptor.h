// SPDX-License-Identifier: GPL-2.0-or-later
// In-memory layout of I/OAT descriptors (64 bytes, little-endian, 64-byte aligned): the base
// descriptor of each operation, the extended descriptor that follows an XOR or PQ descriptor
// with more sources than it holds, and the super extended descriptor (SED) of the 16-source
// PQ forms. Pure data: field positions as Linux's drivers/dma/ioat/hw.h documents them (v6.1).
#pragma once

#include <cstdint>

#include "dmalab/regbank.h"

namespace dmalab::ioat
{

inline constexpr unsigned kDescriptorSize = 64;
inline constexpr uint64_t kDescriptorAlign = 64;
inline constexpr unsigned kDescriptorWords = kDescriptorSize / 8;

// The control word (bytes 4..7) shared by all descriptor types.
namespace ctl
{
inline constexpr uint32_t INT_EN = 1u << 0;
inline constexpr uint32_t SRC_SNOOP_DIS = 1u << 1;
inline constexpr uint32_t DEST_SNOOP_DIS = 1u << 2;
inline constexpr uint32_t COMPL_WRITE = 1u << 3;
inline constexpr uint32_t FENCE = 1u << 4;
inline constexpr uint32_t NULL_DESC = 1u << 5; // memcpy descriptors only
inline constexpr uint32_t SRC_BRK = 1u << 6;
inline constexpr uint32_t DEST_BRK = 1u << 7;
inline constexpr uint32_t BUNDLE = 1u << 8;
inline constexpr uint32_t DEST_DCA = 1u << 9;
inline constexpr uint32_t HINT = 1u << 10;
// XOR and PQ descriptors: source count in bits 7:5 (count - 2; the 16-source PQ forms:
// count - 9), and PQ's P and Q disables and write-back of error status.
inline constexpr unsigned SRC_CNT_SHIFT = 5;
inline constexpr uint32_t SRC_CNT_MASK = 7u << SRC_CNT_SHIFT;
inline constexpr uint32_t P_DISABLE = 1u << 11;
inline constexpr uint32_t Q_DISABLE = 1u << 12;
inline constexpr uint32_t WB_EN = 1u << 15; // with DMACAPABILITY.DWBES only
inline constexpr unsigned OP_SHIFT = 24;
inline constexpr uint32_t OP_MASK = 0xffu << OP_SHIFT;
constexpr uint8_t op(uint32_t ctl)
{
    return static_cast<uint8_t>(ctl >> OP_SHIFT);
}
constexpr unsigned src_cnt(uint32_t ctl)
{
    return (ctl & SRC_CNT_MASK) >> SRC_CNT_SHIFT;
}
} // namespace ctl

enum Opcode : uint8_t {
    OP_COPY = 0x00,
    OP_FILL = 0x01,
    OP_XOR = 0x87,
    OP_XOR_VAL = 0x88,
    OP_PQ = 0x89,
    OP_PQ_VAL = 0x8a,
    OP_PQ_UP = 0x8b, // not implemented: Linux v6.1 never issues it
    OP_PQ_16S = 0xa0,
    OP_PQ_VAL_16S = 0xa1,
};

// The control word's fields per operation (struct ioat_*_descriptor in hw.h): bits outside
// every field are reserved, and a descriptor that sets one is refused.
namespace ctl_fields
{
using A = FieldAccess;
// clang-format off
inline constexpr Field COPY[] = {
    {"INT_EN", 0, 1, A::RO}, {"SRC_SNOOP_DIS", 1, 1, A::RO}, {"DEST_SNOOP_DIS", 2, 1, A::RO},
    {"COMPL_WRITE", 3, 1, A::RO}, {"FENCE", 4, 1, A::RO}, {"NULL", 5, 1, A::RO},
    {"BUNDLE", 8, 1, A::RO}, {"DEST_DCA", 9, 1, A::RO}, {"HINT", 10, 1, A::RO},
    {"OP", 24, 8, A::RO}};
// SRC_BRK and DEST_BRK (bits 6 and 7) need DMACAPABILITY.PAGE_BREAK, which no personality
// has: they are reserved here.
inline constexpr Field FILL[] = {
    {"INT_EN", 0, 1, A::RO}, {"DEST_SNOOP_DIS", 2, 1, A::RO}, {"COMPL_WRITE", 3, 1, A::RO},
    {"FENCE", 4, 1, A::RO}, {"BUNDLE", 8, 1, A::RO}, {"OP", 24, 8, A::RO}};
inline constexpr Field XOR[] = {
    {"INT_EN", 0, 1, A::RO}, {"SRC_SNOOP_DIS", 1, 1, A::RO}, {"DEST_SNOOP_DIS", 2, 1, A::RO},
    {"COMPL_WRITE", 3, 1, A::RO}, {"FENCE", 4, 1, A::RO}, {"SRC_CNT", 5, 3, A::RO},
    {"BUNDLE", 8, 1, A::RO}, {"DEST_DCA", 9, 1, A::RO}, {"HINT", 10, 1, A::RO},
    {"OP", 24, 8, A::RO}};
inline constexpr Field PQ[] = {
    {"INT_EN", 0, 1, A::RO}, {"SRC_SNOOP_DIS", 1, 1, A::RO}, {"DEST_SNOOP_DIS", 2, 1, A::RO},
    {"COMPL_WRITE", 3, 1, A::RO}, {"FENCE", 4, 1, A::RO}, {"SRC_CNT", 5, 3, A::RO},
    {"BUNDLE", 8, 1, A::RO}, {"DEST_DCA", 9, 1, A::RO}, {"HINT", 10, 1, A::RO},
    {"P_DISABLE", 11, 1, A::RO}, {"Q_DISABLE", 12, 1, A::RO}, {"OP", 24, 8, A::RO}};
// WB_EN (bit 15) is defined only on a device that advertises DWBES.
inline constexpr Field PQ_WB[] = {{"WB_EN", 15, 1, A::RO}};
// clang-format on
} // namespace ctl_fields

// Where each field sits, as the index of its quadword in the 64-byte descriptor (word 0 holds
// size and control). Linux fills sources through tables of these positions (xor_idx_to_field,
// pq_idx_to_field, pq16_idx_to_field in drivers/dma/ioat/prep.c).
namespace words
{
inline constexpr unsigned NEXT = 3; // every base and extended descriptor
// Copy, fill, XOR: source (fill: the 8-byte pattern) and destination.
inline constexpr unsigned SRC = 1;
inline constexpr unsigned DST = 2;
// XOR: sources 1-4 in the base, 5-7 in the extended descriptor.
inline constexpr unsigned XOR_SRC[] = {1, 4, 5, 6, 7};
inline constexpr unsigned XOR_EXT_SRC[] = {0, 1, 2};
// PQ: sources 1-2 in the base, 3-7 in the extended descriptor; P, Q and the coefficients.
inline constexpr unsigned PQ_SRC[] = {1, 4, 5};
inline constexpr unsigned PQ_EXT_SRC[] = {0, 1, 2, 4, 5};
inline constexpr unsigned P = 2;
inline constexpr unsigned COEF = 6; // byte i: source i's GF(2^8) coefficient
inline constexpr unsigned Q = 7;
// 16-source PQ: sources 0-1 in the base, the SED's address where source 2 would be; the
// SED's first 64 bytes hold coefficients 8-15 and sources 2-8, its second sources 9-15.
inline constexpr unsigned PQ16_SRC[] = {1, 4};
inline constexpr unsigned PQ16_SED = 5;
inline constexpr unsigned SED_A_COEF = 0;
inline constexpr unsigned SED_A_SRC[] = {1, 2, 3, 4, 5, 6, 7};
inline constexpr unsigned SED_B_SRC[] = {0, 1, 2, 3, 4, 5, 6};
} // namespace words

// Source counts each form holds.
inline constexpr unsigned kMaxXorSources = 8;
inline constexpr unsigned kXorBaseSources = 5;
inline constexpr unsigned kMaxPqSources = 8;
inline constexpr unsigned kPqBaseSources = 3;
inline constexpr unsigned kMinPq16Sources = 9;
inline constexpr unsigned kMaxSources = 16;
inline constexpr unsigned kSedSourcesA = 7; // sources 2-8 in the SED's first half
inline constexpr uint64_t kSedAlign = 64;

// Descriptor write-back error status (DMACAPABILITY.DWBES, ctl.WB_EN on a PQ validate): the
// engine writes it into the descriptor's first dword, where the size was, and Linux's
// desc_get_errstat() (drivers/dma/ioat/dma.c) reads it back.
namespace dwbes
{
inline constexpr uint32_t P_VAL_ERR = 1u << 25;
inline constexpr uint32_t Q_VAL_ERR = 1u << 26;
inline constexpr uint32_t WBES = 1u << 31;
} // namespace dwbes

// Memory copy / null descriptor.
struct DmaDescriptor {
    uint32_t size;
    uint32_t ctl;
    uint64_t src_addr;
    uint64_t dst_addr;
    uint64_t next;
    uint64_t rsv1;
    uint64_t rsv2;
    uint64_t user1; // software-owned
    uint64_t user2; // software-owned
};
static_assert(sizeof(DmaDescriptor) == kDescriptorSize);

// Any descriptor as its eight quadwords.
struct RawDescriptor {
    uint64_t word[kDescriptorWords];
};
static_assert(sizeof(RawDescriptor) == kDescriptorSize);

} // namespace dmalab::ioat
