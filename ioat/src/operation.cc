// SPDX-License-Identifier: GPL-2.0-or-later
// Decoding and checking operations. The layouts are those Linux's prep code builds
// (drivers/dma/ioat/prep.c, v6.1); the checks give each malformed descriptor the CHANERR bit
// docs/ioat.rst lists for it.

#include "operation.h"

#include "dmalab/dma_memory.h"
#include "dmalab/ioat/spec/registers.h"

namespace dmalab::ioat
{

namespace
{

// Source counts as the control word encodes them: 2-9 for XOR and PQ (of which the layouts
// hold 8), 9-16 for the 16-source forms.
unsigned source_count(OpKind kind, uint32_t ctl)
{
    switch (kind) {
    case OpKind::Xor:
    case OpKind::XorVal:
    case OpKind::Pq:
    case OpKind::PqVal:
        return ctl::src_cnt(ctl) + 2;
    case OpKind::Pq16:
    case OpKind::PqVal16:
        return ctl::src_cnt(ctl) + kMinPq16Sources;
    case OpKind::Copy:
        return 1;
    case OpKind::Null:
    case OpKind::Fill:
        return 0;
    }
    return 0;
}

// The capability a kind needs in DMACAPABILITY (0: none).
uint32_t needed_cap(OpKind kind)
{
    switch (kind) {
    case OpKind::Fill:
        return CAP_FILL_BLOCK;
    case OpKind::Xor:
    case OpKind::XorVal:
        return CAP_XOR;
    case OpKind::Pq:
    case OpKind::PqVal:
        return CAP_PQ;
    case OpKind::Pq16:
    case OpKind::PqVal16:
        return CAP_PQ | CAP_RAID16SS;
    case OpKind::Null:
    case OpKind::Copy:
        return 0;
    }
    return 0;
}

uint64_t defined_ctl(OpKind kind, uint32_t dmacap)
{
    switch (kind) {
    case OpKind::Null:
    case OpKind::Copy:
        return defined_bits(ctl_fields::COPY);
    case OpKind::Fill:
        return defined_bits(ctl_fields::FILL);
    case OpKind::Xor:
    case OpKind::XorVal:
        return defined_bits(ctl_fields::XOR);
    case OpKind::Pq:
    case OpKind::PqVal:
    case OpKind::Pq16:
    case OpKind::PqVal16: {
        uint64_t d = defined_bits(ctl_fields::PQ);
        // Write-back of error status is what DWBES advertises; Linux sets WB_EN only on a
        // device that has it (__ioat_prep_pq_lock, drivers/dma/ioat/prep.c).
        if (dmacap & CAP_DWBES)
            d |= defined_bits(ctl_fields::PQ_WB);
        return d;
    }
    }
    return 0;
}

} // namespace

unsigned Operation::streams() const
{
    switch (kind) {
    case OpKind::Null:
        return 0;
    case OpKind::Fill:
        return 1;
    case OpKind::Copy:
        return 2;
    default:
        return sources + (p_on() ? 1u : 0u) + (q_on() ? 1u : 0u);
    }
}

std::optional<OpKind> kind_of(uint32_t ctl)
{
    switch (ctl::op(ctl)) {
    case OP_COPY:
        return (ctl & ctl::NULL_DESC) ? OpKind::Null : OpKind::Copy;
    case OP_FILL:
        return OpKind::Fill;
    case OP_XOR:
        return OpKind::Xor;
    case OP_XOR_VAL:
        return OpKind::XorVal;
    case OP_PQ:
        return OpKind::Pq;
    case OP_PQ_VAL:
        return OpKind::PqVal;
    case OP_PQ_16S:
        return OpKind::Pq16;
    case OP_PQ_VAL_16S:
        return OpKind::PqVal16;
    default:
        return std::nullopt;
    }
}

uint32_t control_error(uint32_t ctl, uint32_t dmacap)
{
    std::optional<OpKind> kind = kind_of(ctl);
    if (!kind)
        return CHANERR_CONTROL_ERR; // an opcode the engine does not have (PQ_UP included)
    uint32_t cap = needed_cap(*kind);
    if ((dmacap & cap) != cap)
        return CHANERR_CONTROL_ERR; // not advertised: not there
    if (ctl & ~defined_ctl(*kind, dmacap))
        return CHANERR_CONTROL_ERR;
    unsigned n = source_count(*kind, ctl);
    // Nine sources would need a slot neither the XOR nor the PQ layouts have.
    if ((*kind == OpKind::Xor || *kind == OpKind::XorVal) && n > kMaxXorSources)
        return CHANERR_CONTROL_ERR;
    if ((*kind == OpKind::Pq || *kind == OpKind::PqVal) && n > kMaxPqSources)
        return CHANERR_CONTROL_ERR;
    // A PQ descriptor with both results disabled asks for nothing; Linux never builds one
    // (ioat_prep_pq substitutes the other address for a disabled result, never both).
    if (is_pq(*kind) && (ctl & ctl::P_DISABLE) && (ctl & ctl::Q_DISABLE))
        return CHANERR_CONTROL_ERR;
    return 0;
}

Operation decode_base(const RawDescriptor& base)
{
    Operation op;
    op.size = static_cast<uint32_t>(base.word[0]);
    op.ctl = static_cast<uint32_t>(base.word[0] >> 32);
    op.kind = kind_of(op.ctl).value_or(OpKind::Copy);
    op.sources = static_cast<uint8_t>(source_count(op.kind, op.ctl));
    op.next = base.word[words::NEXT];
    switch (op.kind) {
    case OpKind::Null:
        break;
    case OpKind::Copy:
        op.src[0] = base.word[words::SRC];
        op.dst = base.word[words::DST];
        break;
    case OpKind::Fill:
        op.pattern = base.word[words::SRC];
        op.dst = base.word[words::DST];
        break;
    case OpKind::Xor:
    case OpKind::XorVal:
        op.dst = base.word[words::DST];
        for (unsigned i = 0; i < kXorBaseSources && i < op.sources; i++)
            op.src[i] = base.word[words::XOR_SRC[i]];
        break;
    case OpKind::Pq:
    case OpKind::PqVal:
        for (unsigned i = 0; i < kPqBaseSources && i < op.sources; i++)
            op.src[i] = base.word[words::PQ_SRC[i]];
        [[fallthrough]];
    case OpKind::Pq16:
    case OpKind::PqVal16:
        op.dst = base.word[words::P];
        op.q = base.word[words::Q];
        for (unsigned i = 0; i < 8; i++)
            op.coef[i] = static_cast<uint8_t>(base.word[words::COEF] >> (8 * i));
        if (op.kind == OpKind::Pq16 || op.kind == OpKind::PqVal16) {
            op.src[0] = base.word[words::PQ16_SRC[0]];
            op.src[1] = base.word[words::PQ16_SRC[1]];
            op.sed = base.word[words::PQ16_SED];
        }
        break;
    }
    return op;
}

bool needs_ext(const Operation& op)
{
    switch (op.kind) {
    case OpKind::Xor:
    case OpKind::XorVal:
        return op.sources > kXorBaseSources;
    case OpKind::Pq:
    case OpKind::PqVal:
        return op.sources > kPqBaseSources;
    default:
        return false;
    }
}

void add_ext(Operation& op, const RawDescriptor& ext)
{
    op.ring_descs = 2;
    op.next = ext.word[words::NEXT];
    if (op.kind == OpKind::Xor || op.kind == OpKind::XorVal) {
        for (unsigned i = kXorBaseSources; i < op.sources && i < kMaxXorSources; i++)
            op.src[i] = ext.word[words::XOR_EXT_SRC[i - kXorBaseSources]];
        return;
    }
    for (unsigned i = kPqBaseSources; i < op.sources && i < kMaxPqSources; i++)
        op.src[i] = ext.word[words::PQ_EXT_SRC[i - kPqBaseSources]];
}

unsigned sed_bytes(const Operation& op)
{
    if (op.kind != OpKind::Pq16 && op.kind != OpKind::PqVal16)
        return 0;
    // Linux allocates 64 bytes for 9 sources and 128 for more (ioat3_alloc_sed(), pool
    // (src_cnt - 2) >> 3): the second half is read only when it holds a source.
    return op.sources > 2 + kSedSourcesA ? 2 * kDescriptorSize : kDescriptorSize;
}

void add_sed(Operation& op, const RawDescriptor* halves)
{
    for (unsigned i = 0; i < 8; i++)
        op.coef[8 + i] = static_cast<uint8_t>(halves[0].word[words::SED_A_COEF] >> (8 * i));
    for (unsigned i = 2; i < op.sources && i < kMaxSources; i++) {
        if (i < 2 + kSedSourcesA)
            op.src[i] = halves[0].word[words::SED_A_SRC[i - 2]];
        else
            op.src[i] = halves[1].word[words::SED_B_SRC[i - 2 - kSedSourcesA]];
    }
}

uint32_t range_error(const Operation& op, uint8_t xfercap_log)
{
    if (op.kind == OpKind::Null) {
        // The hardware rejects a null descriptor of size 0; Linux gives its null descriptors
        // a non-zero size for that reason (__ioat_start_null_desc, drivers/dma/ioat/dma.c).
        return op.size == 0 ? CHANERR_LENGTH_ERR : 0;
    }
    if (op.size == 0 || op.size > (uint64_t{1} << xfercap_log))
        return CHANERR_LENGTH_ERR;
    // A range that wraps past 2^64 is refused before any byte moves.
    for (unsigned i = 0; i < op.sources; i++)
        if (wraps(op.src[i], op.size))
            return CHANERR_SRC_ADDR_ERR;
    if ((op.p_on() && wraps(op.dst, op.size)) || (op.q_on() && wraps(op.q, op.size)))
        return CHANERR_DEST_ADDR_ERR;
    return 0;
}

bool consistent(const Operation& op)
{
    std::optional<OpKind> kind = kind_of(op.ctl);
    if (!kind || *kind != op.kind || op.sources != source_count(op.kind, op.ctl))
        return false;
    if (op.sources > kMaxSources)
        return false;
    return op.ring_descs == (needs_ext(op) ? 2 : 1);
}

} // namespace dmalab::ioat
