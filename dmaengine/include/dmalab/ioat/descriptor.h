// SPDX-License-Identifier: GPL-2.0-or-later
// In-memory layout of I/OAT descriptors (64 bytes, little-endian, 64-byte aligned).
// Pure data: field positions as Linux's drivers/dma/ioat/hw.h documents them.
#pragma once

#include <cstdint>

namespace dmalab::ioat
{

inline constexpr unsigned kDescriptorSize = 64;
inline constexpr uint64_t kDescriptorAlign = 64;

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
inline constexpr unsigned OP_SHIFT = 24;
inline constexpr uint32_t OP_MASK = 0xffu << OP_SHIFT;
constexpr uint8_t op(uint32_t ctl)
{
    return static_cast<uint8_t>(ctl >> OP_SHIFT);
}
} // namespace ctl

enum Opcode : uint8_t {
    OP_COPY = 0x00,
    OP_FILL = 0x01,
    OP_XOR = 0x87,
    OP_XOR_VAL = 0x88,
    OP_PQ = 0x89,
    OP_PQ_VAL = 0x8a,
    OP_PQ_UP = 0x8b,
};

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

} // namespace dmalab::ioat
