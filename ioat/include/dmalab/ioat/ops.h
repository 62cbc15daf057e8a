// SPDX-License-Identifier: GPL-2.0-or-later
// The operations dmalab-ioat tells apart in its counters and trace events: the descriptor
// kinds of drivers/dma/ioat/hw.h (Linux v6.1), with the null descriptor on its own.
#pragma once

#include <cstdint>

namespace dmalab::ioat
{

enum class OpKind : uint8_t {
    Null,    // a copy descriptor with ctl.NULL: no data, a completion and an interrupt
    Copy,    // OP_COPY
    Fill,    // OP_FILL: an 8-byte pattern repeated
    Xor,     // OP_XOR: 2 to 8 sources into one destination
    XorVal,  // OP_XOR_VAL: whether the sources XOR to the destination's contents
    Pq,      // OP_PQ: P (XOR) and Q (GF(2^8) weighted sum) of 2 to 8 sources
    PqVal,   // OP_PQ_VAL: whether P and Q match
    Pq16,    // OP_PQ_16S: PQ of 9 to 16 sources, with a super extended descriptor
    PqVal16, // OP_PQ_VAL_16S
};
inline constexpr unsigned kOpKinds = 9;

// The names counters and trace events use.
constexpr const char* op_name(OpKind k)
{
    switch (k) {
    case OpKind::Null:
        return "null";
    case OpKind::Copy:
        return "copy";
    case OpKind::Fill:
        return "fill";
    case OpKind::Xor:
        return "xor";
    case OpKind::XorVal:
        return "xor-val";
    case OpKind::Pq:
        return "pq";
    case OpKind::PqVal:
        return "pq-val";
    case OpKind::Pq16:
        return "pq-16s";
    case OpKind::PqVal16:
        return "pq-val-16s";
    }
    return "?";
}

constexpr bool is_validate(OpKind k)
{
    return k == OpKind::XorVal || k == OpKind::PqVal || k == OpKind::PqVal16;
}
constexpr bool is_pq(OpKind k)
{
    return k == OpKind::Pq || k == OpKind::PqVal || k == OpKind::Pq16 || k == OpKind::PqVal16;
}

} // namespace dmalab::ioat
