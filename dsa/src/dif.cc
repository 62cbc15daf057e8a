// SPDX-License-Identifier: GPL-2.0-or-later
// The DIF operations (DSA spec, "DIF Operations" and the DIF Check, Insert, Strip and Update
// descriptors): T10 protection information, an 8-byte tuple after each 512-, 520-, 4096- or
// 4104-byte block (spec/descriptor.h, dif::). Check verifies the source's tuples; Insert
// copies plain blocks, each followed by a new tuple; Strip verifies the tuples and copies the
// blocks without them; Update verifies them and copies the blocks with new ones.
//
// A block is the unit of work: read whole (in pieces inside one page), checked, then written,
// so a block that fails a check leaves nothing of itself in the destination (one whose write
// faults may leave a part), and a stretch of the data phase always ends on a block boundary.
// The first block that fails a check ends the operation with status DifError (09h), RESULT
// naming every check that block failed and BYTES_COMPLETED the source bytes before it (Intel
// DML: the DIF results its low-level API documentation lists, and its job API tests). A
// fault counts the whole blocks before it the same way. The record's tags (quadword 2 the
// source's, 3 the destination's) are those of the next block: what software resumes with
// after a fault (accel-config's dsa_reprep_dif takes them as the new seeds).

#include <algorithm>
#include <iterator>

#include "execute.h"

namespace dmalab::dsa::exec
{

namespace
{

// The source's F detects: blocks they skip, or (all F) report.
constexpr uint8_t kAllFError = field_mask(dif::SRC_FLAGS, "ENABLE_ALL_F_ERROR");
constexpr uint8_t kAllFDetect = field_mask(dif::SRC_FLAGS, "ALL_F_DETECT");
constexpr uint8_t kAppFDetect = field_mask(dif::SRC_FLAGS, "APP_TAG_F_DETECT");
constexpr uint8_t kAppRefFDetect = field_mask(dif::SRC_FLAGS, "APP_REF_TAG_F_DETECT");
// Checks the source leaves out, fields the destination takes from it.
constexpr uint8_t kGuardOff = field_mask(dif::SRC_FLAGS, "GUARD_CHECK_DISABLE");
constexpr uint8_t kRefOff = field_mask(dif::SRC_FLAGS, "REF_TAG_CHECK_DISABLE");
constexpr uint8_t kAppPass = field_mask(dif::DEST_FLAGS, "APP_TAG_PASS");
constexpr uint8_t kGuardPass = field_mask(dif::DEST_FLAGS, "GUARD_PASS");
constexpr uint8_t kRefPass = field_mask(dif::DEST_FLAGS, "REF_TAG_PASS");
// Both flag bytes say alike how their tags go from one block to the next.
constexpr uint8_t kRefFixed = field_mask(dif::SRC_FLAGS, "REF_TAG_FIXED");
constexpr uint8_t kAppIncrement = field_mask(dif::SRC_FLAGS, "APP_TAG_INCREMENT");
static_assert(kRefFixed == field_mask(dif::DEST_FLAGS, "REF_TAG_FIXED"));
static_assert(kAppIncrement == field_mask(dif::DEST_FLAGS, "APP_TAG_INCREMENT"));

// RESULT: what a block failed.
constexpr uint8_t kGuardMismatch = field_mask(dif::RESULT, "GUARD_MISMATCH");
constexpr uint8_t kAppMismatch = field_mask(dif::RESULT, "APP_TAG_MISMATCH");
constexpr uint8_t kRefMismatch = field_mask(dif::RESULT, "REF_TAG_MISMATCH");
constexpr uint8_t kAllFResult = field_mask(dif::RESULT, "ALL_F_ERROR");

// The largest block with its tuple.
constexpr uint32_t kMaxUnit =
    *std::max_element(std::begin(dif::kBlockSizes), std::end(dif::kBlockSizes)) + dif::kTupleSize;

// The n-byte big-endian value at p; v stored at p so.
uint64_t load_be(const uint8_t* p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

void store_be(uint8_t* p, uint64_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0; v >>= 8)
        p[i] = static_cast<uint8_t>(v);
}

struct Tags {
    uint32_t ref = 0;
    uint16_t app = 0;
};

// The protection information of one side (source or destination) as the descriptor gives
// it: its flag byte, its tags' seeds, and its application tag mask (a 1 bit is neither
// compared nor written).
struct Side {
    uint8_t flags = 0;
    Tags seed;
    uint16_t mask = 0;

    // The tags block k has: the reference tag counts blocks from its seed unless fixed, the
    // application tag counts them when incrementing (both wrap).
    Tags at(uint64_t k) const
    {
        return {flags & kRefFixed ? seed.ref : static_cast<uint32_t>(seed.ref + k),
                flags & kAppIncrement ? static_cast<uint16_t>(seed.app + k) : seed.app};
    }
    // The record's quadword for this side when block k is next.
    uint64_t record(uint64_t k) const
    {
        const Tags t = at(k);
        return field(cr::DIF_TAGS, "REF_TAG").put(t.ref) |
               field(cr::DIF_TAGS, "APP_TAG_MASK").put(mask) |
               field(cr::DIF_TAGS, "APP_TAG").put(t.app);
    }
};

// The descriptor's DIF fields. Those an operation's layout does not have are reserved, so 0.
struct Dif {
    Opcode op;
    uint32_t block; // protected bytes a block
    DifShape shape;
    bool invert_seed, invert_result;
    Side src, dst;
};

uint8_t dif_flags(const Work& w)
{
    return static_cast<uint8_t>(w.word(5) >> 16);
}

Dif decode(const Work& w)
{
    const uint8_t f = dif_flags(w);
    const uint64_t s = w.word(6), d = w.word(7);
    Dif out{w.op(),
            dif::kBlockSizes[field(dif::FLAGS, "BLOCK_SIZE").get(f)],
            dif_shape(w),
            field(dif::FLAGS, "INVERT_CRC_SEED").get(f) != 0,
            field(dif::FLAGS, "INVERT_CRC_RESULT").get(f) != 0,
            {},
            {}};
    out.src.flags = static_cast<uint8_t>(w.word(5));
    out.src.seed = {static_cast<uint32_t>(field(dw::DIF_SRC_TAGS, "SRC_REF_TAG_SEED").get(s)),
                    static_cast<uint16_t>(field(dw::DIF_SRC_TAGS, "SRC_APP_TAG_SEED").get(s))};
    out.src.mask = static_cast<uint16_t>(field(dw::DIF_SRC_TAGS, "SRC_APP_TAG_MASK").get(s));
    out.dst.flags = static_cast<uint8_t>(w.word(5) >> 8);
    out.dst.seed = {static_cast<uint32_t>(field(dw::DIF_DEST_TAGS, "DEST_REF_TAG_SEED").get(d)),
                    static_cast<uint16_t>(field(dw::DIF_DEST_TAGS, "DEST_APP_TAG_SEED").get(d))};
    out.dst.mask = static_cast<uint16_t>(field(dw::DIF_DEST_TAGS, "DEST_APP_TAG_MASK").get(d));
    return out;
}

// The guard of a block's data: its CRC from seed 0 or 0xFFFF, inverted on request.
uint16_t guard(const Dif& d, const uint8_t* data)
{
    const uint16_t crc = crc_t10dif(d.invert_seed ? 0xffff : 0, data, d.block);
    return d.invert_result ? static_cast<uint16_t>(~crc) : crc;
}

// The checks source block k (its data, then its tuple) fails, as RESULT bits; 0 when it
// passes or an F detect skips it.
uint8_t verdict(const Dif& d, const uint8_t* unit, uint64_t k)
{
    const uint8_t* t = unit + d.block;
    const uint8_t f = d.src.flags;
    const auto app = static_cast<uint16_t>(load_be(t + 2, 2));
    const auto ref = static_cast<uint32_t>(load_be(t + 4, 4));
    if ((f & kAllFDetect) && load_be(t, 8) == ~uint64_t{0})
        return f & kAllFError ? kAllFResult : 0;
    if (((f & kAppFDetect) && app == 0xffff) ||
        ((f & kAppRefFDetect) && app == 0xffff && ref == 0xffffffff))
        return 0;
    const Tags want = d.src.at(k);
    uint8_t bad = 0;
    if (!(f & kGuardOff) && load_be(t, 2) != guard(d, unit))
        bad |= kGuardMismatch;
    if ((app ^ want.app) & ~d.src.mask & 0xffff)
        bad |= kAppMismatch;
    if (!(f & kRefOff) && ref != want.ref)
        bad |= kRefMismatch;
    return bad;
}

// Destination block k's tuple, after its data in `unit`. Update's pass-through bits keep a
// field of the source's tuple, which `unit` holds there; Insert has none to keep.
void stamp(const Dif& d, uint8_t* unit, uint64_t k)
{
    uint8_t* t = unit + d.block;
    const uint8_t pass = d.op == Opcode::DifUpdate ? d.dst.flags : 0;
    const Tags tags = d.dst.at(k);
    if (!(pass & kGuardPass))
        store_be(t, guard(d, unit), 2);
    if (!(pass & kAppPass))
        store_be(t + 2, tags.app & ~d.dst.mask, 2);
    if (!(pass & kRefPass))
        store_be(t + 4, tags.ref, 4);
}

enum class Moved { Ok, Failed, Stopped };

// [addr, addr + n) read into `buf` or written from it, a page's piece at a time (the range
// does not wrap); a failed access ends the operation there.
Moved transfer(Exec& x, Work& w, uint64_t addr, uint8_t* buf, uint64_t n, bool to_memory)
{
    for (uint64_t off = 0; off < n;) {
        const uint64_t len = std::min(n - off, to_page_end(addr + off));
        const DmaResult r =
            to_memory ? write(x, addr + off, buf + off, len) : read(x, addr + off, buf + off, len);
        if (!x.alive())
            return Moved::Stopped;
        if (!r.ok()) {
            fault(w, r, to_memory);
            return Moved::Failed;
        }
        off += len;
    }
    return Moved::Ok;
}

} // namespace

DifShape dif_shape(const Work& w)
{
    const uint32_t block = dif::kBlockSizes[field(dif::FLAGS, "BLOCK_SIZE").get(dif_flags(w))];
    const uint32_t with = block + dif::kTupleSize;
    switch (w.op()) {
    case Opcode::DifCheck:
        return {with, 0};
    case Opcode::DifInsert:
        return {block, with};
    case Opcode::DifStrip:
        return {with, block};
    case Opcode::DifUpdate:
        return {with, with};
    default:
        return {};
    }
}

uint64_t dest_extent(const Work& w)
{
    const DifShape s = dif_shape(w);
    return s.src ? w.size() / s.src * s.dst : w.size();
}

std::array<uint64_t, 2> record_tail(const Work& w)
{
    const DifShape s = dif_shape(w);
    // Refused by the descriptor checks (10h-1Fh): it has no tags to tell.
    const bool refused = w.status >= Status::UnsupportedOpcode && w.status < Status::HwError;
    if (!s.src || refused)
        return {w.word2, 0};
    const Dif d = decode(w);
    const uint64_t next = w.done / s.src;
    const bool reads_tuples = d.op != Opcode::DifInsert;
    const bool writes_tuples = d.op == Opcode::DifInsert || d.op == Opcode::DifUpdate;
    return {reads_tuples ? d.src.record(next) : 0, writes_tuples ? d.dst.record(next) : 0};
}

uint16_t crc_t10dif(uint16_t crc, const uint8_t* p, size_t n)
{
    // Most significant bit first, a byte at a time through a table built once.
    static const auto table = [] {
        std::array<uint16_t, 256> t{};
        for (unsigned i = 0; i < 256; i++) {
            auto c = static_cast<uint16_t>(i << 8);
            for (int bit = 0; bit < 8; bit++)
                c = static_cast<uint16_t>(c & 0x8000 ? c << 1 ^ dif::kGuardPolynomial : c << 1);
            t[i] = c;
        }
        return t;
    }();
    for (size_t i = 0; i < n; i++)
        crc = static_cast<uint16_t>(crc << 8 ^ table[(crc >> 8 ^ p[i]) & 0xff]);
    return crc;
}

bool dif(Exec& x, Work& w, uint64_t len)
{
    const Dif d = decode(w);
    const DifShape s = d.shape;
    uint8_t unit[kMaxUnit];
    for (uint64_t did = 0; did < len && w.status == Status::None; did += s.src) {
        const uint64_t k = w.done / s.src;
        const uint64_t src = w.word(2) + w.done, dst = w.word(3) + k * s.dst;
        // A block that would cross or start at 2^64 (its range, from the descriptor's
        // address through this block, wraps) faults there, on its read first.
        const bool src_wraps = wraps(w.word(2), w.done + s.src);
        if (src_wraps || wraps(w.word(3), (k + 1) * s.dst)) {
            fault(w, DmaResult::failure(DmaError::Wrap, 0), !src_wraps);
            break;
        }
        Moved m = transfer(x, w, src, unit, s.src, false);
        if (m != Moved::Ok)
            return m == Moved::Failed;
        if (d.op != Opcode::DifInsert) {
            if (const uint8_t bad = verdict(d, unit, k)) {
                w.result = bad;
                w.status = Status::DifError;
                break;
            }
        }
        if (s.dst > d.block)
            stamp(d, unit, k);
        m = transfer(x, w, dst, unit, s.dst, true);
        if (m != Moved::Ok)
            return m == Moved::Failed;
        w.done += s.src;
        if (w.done >= w.size())
            w.status = Status::Success;
    }
    return true;
}

} // namespace dmalab::dsa::exec
