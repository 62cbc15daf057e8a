// SPDX-License-Identifier: GPL-2.0-or-later
// The operations, one row each, and the checks a descriptor passes before it runs (DSA
// spec, "Descriptor Formats" and each operation's "Descriptor Checks"). Which bits are
// reserved comes from the layout rows of spec/descriptor.h; an operation is declared here,
// once, with its executor (execute.cc).

#include <cstring>
#include <string_view>

#include "execute.h"
#include "work.h"

namespace dmalab::dsa
{

namespace
{

// clang-format off
// opcode                  its own flags  moves  batchable streams executor             in plans
constexpr OpRow kRows[] = {
    {Opcode::Noop,           0,           false, true,  0, nullptr,              "noop"},
    {Opcode::Batch,          0,           false, false, 0, nullptr,              nullptr},
    {Opcode::Drain,          0,           false, false, 0, nullptr,              nullptr},
    {Opcode::Memmove,        0,           true,  true,  2, exec::move,           "memmove"},
    {Opcode::Fill,           0,           true,  true,  1, exec::fill,           "fill"},
    {Opcode::Compare,        flag::CR,    true,  true,  2, exec::compare,        "compare"},
    {Opcode::ComparePattern, flag::CR,    true,  true,  1, exec::compare_pattern,
     "compare-pattern"},
    {Opcode::CreateDelta,    flag::CR,    true,  true,  2, exec::create_delta,   "create-delta"},
    {Opcode::ApplyDelta,     0,           true,  true,  1, exec::apply_delta,    "apply-delta"},
    {Opcode::Dualcast,       0,           true,  true,  3, exec::dualcast,       "dualcast"},
    {Opcode::CrcGen,         0,           true,  true,  1, exec::crc,            "crc"},
    {Opcode::CopyCrc,        0,           true,  true,  2, exec::copy_crc,       "copy-crc"},
    {Opcode::DifCheck,       0,           true,  true,  1, exec::dif,            "dif-check"},
    {Opcode::DifInsert,      0,           true,  true,  2, exec::dif,            "dif-insert"},
    {Opcode::DifStrip,       0,           true,  true,  2, exec::dif,            "dif-strip"},
    {Opcode::DifUpdate,      0,           true,  true,  2, exec::dif,            "dif-update"},
    {Opcode::CacheFlush,     0,           true,  true,  0, nullptr,              "cache-flush"},
};
// clang-format on

// The flags every operation takes: the completion record and interrupt requests, and the
// record's traffic-class selector (with CRAV). FENCE only inside a batch; the address TC
// selectors for the addresses an operation has; strict ordering for one that writes.
constexpr uint32_t kCommonFlags = flag::CRAV | flag::RCR | flag::RCI | flag::CR_TCS;

// Flags an operation cannot do without: those whose only result is in the record need
// it (the compares, the CRCs, Create Delta), and a Drain must report somehow.
uint32_t missing_flags(Opcode op, uint32_t flags)
{
    switch (op) {
    case Opcode::Compare:
    case Opcode::ComparePattern:
    case Opcode::CrcGen:
    case Opcode::CopyCrc:
    case Opcode::CreateDelta:
        return (flag::CRAV | flag::RCR) & ~flags;
    case Opcode::Drain:
        return flags & (flag::RCR | flag::RCI) ? 0 : flag::RCR | flag::RCI;
    default:
        return 0;
    }
}

// Operations that write memory: CC may steer their writes (GENCAP.CACHE_CTRL_MEM).
bool writes(Opcode op)
{
    switch (op) {
    case Opcode::Memmove:
    case Opcode::Fill:
    case Opcode::CreateDelta:
    case Opcode::ApplyDelta:
    case Opcode::Dualcast:
    case Opcode::CopyCrc:
    case Opcode::DifInsert:
    case Opcode::DifStrip:
    case Opcode::DifUpdate:
        return true;
    default:
        return false;
    }
}

// Address n of a descriptor (1: bytes 16-23, 2: 24-31, 3: 40-47) is an address for an
// operation whose layout puts an address field there (not a pattern or a size).
uint32_t address_selectors(const OpLayout& l)
{
    static constexpr struct {
        unsigned word;
        uint32_t flag;
    } kSlots[] = {{2, flag::ADDR1_TCS}, {3, flag::ADDR2_TCS}, {5, flag::ADDR3_TCS}};
    uint32_t out = 0;
    for (auto [word, f] : kSlots)
        for (const Field& field : l.word[word])
            if (std::string_view(field.name).find("ADDR") != std::string_view::npos)
                out |= f;
    return out;
}

// The layout row of `op` in the spec (every row here has one).
const OpLayout* layout_of(Opcode op)
{
    for (const OpLayout& l : kOps)
        if (l.op == op)
            return &l;
    return nullptr;
}

// Bits of quadword `i` no field of the layout covers. Quadword 0's PASID and PRIV count
// only for shared WQs; a dedicated WQ takes both from WQCFG and ignores them (they are
// fields, so not reserved). FLAGS is checked on its own.
uint64_t reserved(const OpLayout& l, unsigned i)
{
    uint64_t covered = 0;
    for (const Field& f : l.word[i])
        covered |= f.mask();
    return ~covered;
}

// [a, a + an) and [b, b + bn) share a byte; neither wraps past 2^64 (checked before), but
// either may end exactly there: distances, not ends, are compared.
bool overlap_n(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return an && bn && (a <= b ? b - a < an : a - b < bn);
}

bool overlap(uint64_t a, uint64_t b, uint64_t n)
{
    return overlap_n(a, n, b, n);
}

// Delta records: 10 bytes an entry (the offset in quadwords, then the quadword); Create
// Delta needs room for at least 8 entries, Apply Delta at least one.
constexpr uint32_t kDeltaEntry = 10;
constexpr uint32_t kMinDeltaRecord = 80;
// Create Delta compares 8-byte words, at most 0x80000 bytes (16-bit word offsets).
constexpr uint32_t kMaxDeltaXfer = 0x80000;

} // namespace

const OpRow* op_row(Opcode op)
{
    for (const OpRow& r : kRows)
        if (r.op == op)
            return &r;
    return nullptr;
}

std::span<const OpRow> op_rows()
{
    return kRows;
}

uint64_t implemented_ops()
{
    uint64_t bits = 0;
    for (const OpRow& r : kRows)
        bits |= opcap_bit(r.op);
    return bits;
}

Status check(const Work& w, const Limits& l,
             const std::function<std::optional<unsigned>(uint16_t)>& vector_of, uint32_t& bad_flags)
{
    const Opcode op = w.op();
    const OpRow* row = op_row(op);
    const OpLayout* lay = layout_of(op);
    if (!row || !lay || !(l.opcap & opcap_bit(op)) || (w.in_batch && !row->batchable))
        return Status::UnsupportedOpcode;

    uint32_t allowed = kCommonFlags | row->flags | address_selectors(*lay);
    if (writes(op))
        allowed |= flag::STORD;
    if (w.in_batch)
        allowed |= flag::FENCE;
    if (l.block_on_fault && op != Opcode::Batch)
        allowed |= flag::BOF;
    if ((l.cache_control && writes(op)) || (l.cache_flush_cc && op == Opcode::CacheFlush))
        allowed |= flag::CC;
    // A completion interrupt from a user-mode descriptor of a WQ with a PASID needs
    // GENCFG.USER_INT_EN.
    if (!l.user_interrupts)
        allowed &= ~flag::RCI;
    bad_flags = w.flags() & ~allowed;
    if (!(w.flags() & flag::CRAV)) // a record on success, or its TC, with no record address
        bad_flags |= w.flags() & (flag::RCR | flag::CR_TCS);
    bad_flags |= missing_flags(op, w.flags());
    if (bad_flags)
        return Status::InvalidFlags;

    for (unsigned i = 0; i < kDescriptorWords; i++) {
        uint64_t mask = reserved(*lay, i);
        if (i == 0)
            mask &= ~(uint64_t{0xffffff} << 32); // FLAGS, checked above
        if (w.word(i) & mask)
            return Status::NonzeroReserved;
    }
    // The record's address without CRAV, and the interrupt handle without RCI, are
    // reserved too.
    if ((!(w.flags() & flag::CRAV) && w.completion()) ||
        (!(w.flags() & flag::RCI) && w.int_handle()))
        return Status::NonzeroReserved;

    const uint64_t size = w.size();
    if (op == Opcode::Batch) {
        if (size < 2 || size > (uint64_t{1} << l.max_batch_shift))
            return Status::DescCountRange;
    } else if (row->moves) {
        if (size == 0 || size > (uint64_t{1} << l.max_xfer_shift))
            return Status::XferSizeRange;
    }
    if ((w.flags() & flag::CRAV) && (w.completion() & (kCompletionRecordAlign - 1)))
        return Status::CompletionRecordAlign;
    if ((w.flags() & flag::RCI) && !vector_of(w.int_handle()))
        return Status::InvalidIntHandle;

    // The operation's own rules. Ranges that wrap past 2^64 fail when they move (a page
    // fault at the wrap), as an unreachable address does.
    const uint64_t a2 = w.word(2), a3 = w.word(3), a5 = w.word(5);
    auto wrapping = [&](uint64_t a) { return wraps(a, size); };
    switch (op) {
    case Opcode::Batch:
        if (a2 & (kDescListAlign - 1))
            return Status::DescListAlign;
        break;
    case Opcode::Memmove:
        if (!l.overlap_copy && !wrapping(a2) && !wrapping(a3) && overlap(a2, a3, size))
            return Status::OverlappingBuffers;
        break;
    case Opcode::Dualcast:
        if ((a3 ^ a5) & 0xfff)
            return Status::DualcastAlign;
        if (!wrapping(a2) && !wrapping(a3) && !wrapping(a5) &&
            (overlap(a2, a3, size) || overlap(a2, a5, size) || overlap(a3, a5, size)))
            return Status::OverlappingBuffers;
        break;
    case Opcode::CopyCrc:
        if (!wrapping(a2) && !wrapping(a3) && overlap(a2, a3, size))
            return Status::OverlappingBuffers;
        break;
    case Opcode::CreateDelta: {
        // The record must hold at least 8 entries and stay inside one transfer's limit.
        const uint32_t max = static_cast<uint32_t>(w.word(6));
        if (size > kMaxDeltaXfer)
            return Status::XferSizeRange;
        if ((a2 | a3 | size) & 7)
            return Status::AddressAlign;
        if (max < kMinDeltaRecord || max > (uint64_t{1} << l.max_xfer_shift))
            return Status::DeltaSizeRange;
        if (!wrapping(a2) && !wrapping(a3) && !wraps(a5, max) &&
            (overlap_n(a5, max, a2, size) || overlap_n(a5, max, a3, size)))
            return Status::OverlappingBuffers;
        break;
    }
    case Opcode::DifCheck:
    case Opcode::DifInsert:
    case Opcode::DifStrip:
    case Opcode::DifUpdate: {
        // Whole blocks of the source (with their tuples, but for Insert); the destination is
        // as long as they become, and may not share a byte with the source.
        const exec::DifShape s = exec::dif_shape(w);
        if (size % s.src)
            return Status::XferSizeRange;
        const uint64_t out = exec::dest_extent(w);
        if (!wrapping(a2) && !wraps(a3, out) && overlap_n(a2, size, a3, out))
            return Status::OverlappingBuffers;
        break;
    }
    case Opcode::ApplyDelta: {
        const uint32_t rec = static_cast<uint32_t>(a5);
        if (size > kMaxDeltaXfer)
            return Status::XferSizeRange;
        if ((a3 | size) & 7)
            return Status::AddressAlign;
        if (rec < kDeltaEntry || rec > (uint64_t{1} << l.max_xfer_shift))
            return Status::DeltaSizeRange;
        if (!wraps(a2, rec) && !wrapping(a3) && overlap_n(a2, rec, a3, size))
            return Status::OverlappingBuffers;
        break;
    }
    default:
        break;
    }
    return Status::None;
}

uint32_t crc32c_bytewise(uint32_t crc, const uint8_t* p, size_t n)
{
    // Reflected CRC-32C, a byte at a time through a table built once.
    static const auto table = [] {
        struct T {
            uint32_t v[256];
        } t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
            t.v[i] = c;
        }
        return t;
    }();
    for (size_t i = 0; i < n; i++)
        crc = table.v[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

namespace
{

#if defined(__x86_64__)
// The same polynomial in the host's CRC32 instruction (SSE4.2), eight bytes at a time.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n)
{
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    for (; n; n--, p++)
        c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p);
    return static_cast<uint32_t>(c);
}
#endif

} // namespace

uint32_t crc32c(uint32_t crc, const uint8_t* p, size_t n)
{
#if defined(__x86_64__)
    static const bool hw = __builtin_cpu_supports("sse4.2");
    if (hw)
        return crc32c_sse42(crc, p, n);
#endif
    return crc32c_bytewise(crc, p, n);
}

} // namespace dmalab::dsa
