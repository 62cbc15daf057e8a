// SPDX-License-Identifier: GPL-2.0-or-later
// One operation as the channel runs it, decoded from its descriptors: the base descriptor,
// the extended descriptor after it (XOR with more than 5 sources, PQ with more than 3) and
// the super extended descriptor of the 16-source PQ forms. And the checks that turn a
// malformed one into its CHANERR bits.
#pragma once

#include <cstdint>
#include <optional>

#include "dmalab/ioat/spec/descriptor.h"
#include "dmalab/ioat/ops.h"

namespace dmalab::ioat
{

struct Operation {
    OpKind kind = OpKind::Copy;
    uint32_t ctl = 0;
    uint32_t size = 0;
    uint8_t sources = 0;    // XOR and PQ forms; copy 1, fill 0
    uint8_t ring_descs = 1; // descriptors it takes in the ring: 2 with an extended one
    uint64_t src[kMaxSources] = {};
    uint8_t coef[kMaxSources] = {};
    uint64_t dst = 0;     // copy, fill, XOR: destination; XOR_VAL: the parity it checks; PQ: P
    uint64_t q = 0;       // PQ forms: Q
    uint64_t pattern = 0; // fill
    uint64_t next = 0;    // the descriptor after it (after its extended one, if any)
    uint64_t sed = 0;     // 16-source forms: the super extended descriptor's address

    bool p_on() const { return !is_pq(kind) || !(ctl & ctl::P_DISABLE); }
    bool q_on() const { return is_pq(kind) && !(ctl & ctl::Q_DISABLE); }
    bool moves_data() const { return kind != OpKind::Null; }
    // Guest ranges it reads or writes per byte of its block: its cost in a step's budget.
    unsigned streams() const;
};

// The operation a control word asks for; none for an opcode the model does not know.
std::optional<OpKind> kind_of(uint32_t ctl);

// CONTROL_ERR when the control word names an unknown operation or one the device does not
// advertise in `dmacap`, sets a reserved bit, or gives an impossible source count.
uint32_t control_error(uint32_t ctl, uint32_t dmacap);

// The operation its base descriptor describes (kind_of() knew its opcode).
Operation decode_base(const RawDescriptor& base);
// Whether it goes on in the next descriptor of the ring, and that descriptor's share.
bool needs_ext(const Operation& op);
void add_ext(Operation& op, const RawDescriptor& ext);
// Bytes of super extended descriptor it reads (0, 64 or 128), and their share.
unsigned sed_bytes(const Operation& op);
void add_sed(Operation& op, const RawDescriptor* halves);

// LENGTH_ERR, SRC_ADDR_ERR or DEST_ADDR_ERR for a size outside 1..2^xfercap_log (a null
// descriptor: size 0) or a range that wraps past 2^64.
uint32_t range_error(const Operation& op, uint8_t xfercap_log);

// Bytes of each stream it processes (0 for a null descriptor).
inline uint64_t block_len(const Operation& op)
{
    return op.moves_data() ? op.size : 0;
}

// Whether a decoded operation holds together (a migration stream's, before it is trusted):
// its kind, source count and descriptor count agree with its control word.
bool consistent(const Operation& op);

} // namespace dmalab::ioat
