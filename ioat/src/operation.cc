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
// hold 8), 9-16 for the 16-source forms; fixed for the others.
unsigned source_count(OpKind kind, uint32_t ctl)
{
    const OpSpec& o = op_spec(kind);
    return o.cnt_base ? ctl::src_cnt(ctl) + o.cnt_base : o.sources;
}

} // namespace

unsigned Operation::streams() const
{
    switch (op_spec(kind).exec) {
    case Executor::None:
        return 0;
    case Executor::Fill:
        return 1;
    case Executor::Copy:
        return 2;
    case Executor::Combine:
        break;
    }
    return sources + (p_on() ? 1u : 0u) + (q_on() ? 1u : 0u);
}

std::optional<OpKind> kind_of(uint32_t ctl)
{
    uint8_t opcode = ctl::op(ctl);
    if (opcode == OP_COPY) // the null descriptor is a copy descriptor with ctl.NULL
        return (ctl & ctl::NULL_DESC) ? OpKind::Null : OpKind::Copy;
    for (const OpSpec& o : kOps)
        if (o.opcode == opcode)
            return o.kind;
    return std::nullopt; // PQ_UP among them: Linux v6.1 never issues it
}

uint32_t control_error(uint32_t ctl, uint32_t dmacap)
{
    std::optional<OpKind> kind = kind_of(ctl);
    if (!kind)
        return CHANERR_CONTROL_ERR; // an opcode the engine does not have (PQ_UP included)
    const OpSpec& o = op_spec(*kind);
    if ((dmacap & o.cap) != o.cap)
        return CHANERR_CONTROL_ERR; // not advertised: not there
    if (ctl & ~(o.ctl | (dmacap & CAP_DWBES ? o.ctl_dwbes : 0)))
        return CHANERR_CONTROL_ERR;
    // Nine sources would need a slot neither the XOR nor the PQ layouts have.
    if (o.cnt_base && source_count(*kind, ctl) > o.sources)
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
    const Layout layout = op_spec(op.kind).layout;
    switch (layout) {
    case Layout::None:
        break;
    case Layout::Copy:
        op.src[0] = base.word[words::SRC];
        op.dst = base.word[words::DST];
        break;
    case Layout::Fill:
        op.pattern = base.word[words::SRC];
        op.dst = base.word[words::DST];
        break;
    case Layout::Xor:
        op.dst = base.word[words::DST];
        for (unsigned i = 0; i < kXorBaseSources && i < op.sources; i++)
            op.src[i] = base.word[words::XOR_SRC[i]];
        break;
    case Layout::Pq:
        for (unsigned i = 0; i < kPqBaseSources && i < op.sources; i++)
            op.src[i] = base.word[words::PQ_SRC[i]];
        [[fallthrough]];
    case Layout::Pq16:
        op.dst = base.word[words::P];
        op.q = base.word[words::Q];
        for (unsigned i = 0; i < 8; i++)
            op.coef[i] = static_cast<uint8_t>(base.word[words::COEF] >> (8 * i));
        if (layout == Layout::Pq16) {
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
    switch (op_spec(op.kind).layout) {
    case Layout::Xor:
        return op.sources > kXorBaseSources;
    case Layout::Pq:
        return op.sources > kPqBaseSources;
    default:
        return false;
    }
}

void add_ext(Operation& op, const RawDescriptor& ext)
{
    op.ring_descs = 2;
    op.next = ext.word[words::NEXT];
    if (op_spec(op.kind).layout == Layout::Xor) {
        for (unsigned i = kXorBaseSources; i < op.sources && i < kMaxXorSources; i++)
            op.src[i] = ext.word[words::XOR_EXT_SRC[i - kXorBaseSources]];
        return;
    }
    for (unsigned i = kPqBaseSources; i < op.sources && i < kMaxPqSources; i++)
        op.src[i] = ext.word[words::PQ_EXT_SRC[i - kPqBaseSources]];
}

unsigned sed_bytes(const Operation& op)
{
    if (op_spec(op.kind).layout != Layout::Pq16)
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
