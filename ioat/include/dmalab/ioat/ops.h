// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab-ioat's operations, one row each: the descriptor kinds of drivers/dma/ioat/hw.h
// (Linux v6.1), with the null descriptor on its own. A row says everything the model needs
// of an operation: its name in counters and trace events, its opcode, the DMACAPABILITY bits
// it needs, its control word's fields, where its descriptor keeps its addresses, how many
// sources it takes, and what moves its data.
#pragma once

#include <cstdint>

#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/spec/registers.h"

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

// Where a descriptor keeps its addresses (words:: in spec/descriptor.h).
enum class Layout : uint8_t {
    None, // the null descriptor: none
    Copy, // source, destination
    Fill, // pattern, destination
    Xor,  // destination, sources 1-5 (6-8 in an extended descriptor)
    Pq,   // P, Q, coefficients, sources 1-3 (4-8 in an extended descriptor)
    Pq16, // P, Q, coefficients 1-8, sources 1-2, a super extended descriptor with the rest
};

// What moves an operation's data.
enum class Executor : uint8_t {
    None,    // nothing moves
    Copy,    // the copy between guest ranges (dmalab/copy.h)
    Fill,    // the pattern written block by block (engine.cc)
    Combine, // sources read block by block and combined: XOR, P and Q, or compared
};

struct OpSpec {
    OpKind kind;
    const char* name;   // in counters and trace events
    uint8_t opcode;     // the control word's OP (the null descriptor: OP_COPY with ctl.NULL)
    uint32_t cap;       // the DMACAPABILITY bits it needs (0: none)
    uint64_t ctl;       // the control word's defined bits; others are reserved
    uint64_t ctl_dwbes; // defined too on a device with DMACAPABILITY.DWBES
    Layout layout;
    uint8_t cnt_base; // sources = ctl.SRC_CNT + cnt_base; 0: no SRC_CNT
    uint8_t sources;  // with SRC_CNT: the most the layout holds; without: how many
    Executor exec;
    bool validate; // compares its sources with the destination(s), writes no data
};

// clang-format off
inline constexpr OpSpec kOps[kOpKinds] = {
    {OpKind::Null, "null", OP_COPY, 0, defined_bits(ctl_fields::COPY), 0,
     Layout::None, 0, 0, Executor::None, false},
    {OpKind::Copy, "copy", OP_COPY, 0, defined_bits(ctl_fields::COPY), 0,
     Layout::Copy, 0, 1, Executor::Copy, false},
    {OpKind::Fill, "fill", OP_FILL, CAP_FILL_BLOCK, defined_bits(ctl_fields::FILL), 0,
     Layout::Fill, 0, 0, Executor::Fill, false},
    {OpKind::Xor, "xor", OP_XOR, CAP_XOR, defined_bits(ctl_fields::XOR), 0,
     Layout::Xor, 2, kMaxXorSources, Executor::Combine, false},
    {OpKind::XorVal, "xor-val", OP_XOR_VAL, CAP_XOR, defined_bits(ctl_fields::XOR), 0,
     Layout::Xor, 2, kMaxXorSources, Executor::Combine, true},
    // Write-back of error status is what DWBES advertises; Linux sets WB_EN only on a device
    // that has it (__ioat_prep_pq_lock, drivers/dma/ioat/prep.c).
    {OpKind::Pq, "pq", OP_PQ, CAP_PQ, defined_bits(ctl_fields::PQ), defined_bits(ctl_fields::PQ_WB),
     Layout::Pq, 2, kMaxPqSources, Executor::Combine, false},
    {OpKind::PqVal, "pq-val", OP_PQ_VAL, CAP_PQ, defined_bits(ctl_fields::PQ), defined_bits(ctl_fields::PQ_WB),
     Layout::Pq, 2, kMaxPqSources, Executor::Combine, true},
    {OpKind::Pq16, "pq-16s", OP_PQ_16S, CAP_PQ | CAP_RAID16SS, defined_bits(ctl_fields::PQ),
     defined_bits(ctl_fields::PQ_WB), Layout::Pq16, kMinPq16Sources, kMaxSources, Executor::Combine, false},
    {OpKind::PqVal16, "pq-val-16s", OP_PQ_VAL_16S, CAP_PQ | CAP_RAID16SS, defined_bits(ctl_fields::PQ),
     defined_bits(ctl_fields::PQ_WB), Layout::Pq16, kMinPq16Sources, kMaxSources, Executor::Combine, true},
};
// clang-format on

constexpr bool rows_in_order()
{
    for (unsigned i = 0; i < kOpKinds; i++)
        if (static_cast<unsigned>(kOps[i].kind) != i)
            return false;
    return true;
}
static_assert(rows_in_order(), "kOps has one row per OpKind, in OpKind's order");

constexpr const OpSpec& op_spec(OpKind k)
{
    return kOps[static_cast<unsigned>(k)];
}
constexpr const char* op_name(OpKind k)
{
    return op_spec(k).name;
}
constexpr bool is_validate(OpKind k)
{
    return op_spec(k).validate;
}
constexpr bool is_pq(OpKind k)
{
    return op_spec(k).layout == Layout::Pq || op_spec(k).layout == Layout::Pq16;
}

} // namespace dmalab::ioat
