// SPDX-License-Identifier: GPL-2.0-or-later
// The operations that move data (DSA spec, "Operations"): each stretch of a transfer in
// page-bounded pieces through guest memory, with the record fields each operation ends with.
// A failed access ends the operation with a partial completion: a page fault (status 03h,
// block-on-fault is not offered) for an address the IOMMU refused or that wraps past 2^64, a
// hardware error (20h) for one nothing decodes or whose target failed it; BYTES_COMPLETED
// then counts what was done before it, FAULT_ADDR names where.

#include "execute.h"

#include <algorithm>
#include <cstring>

#include "dmalab/le.h"

namespace dmalab::dsa::exec
{

namespace
{

constexpr uint64_t kPage = Exec::kPiece;

} // namespace

uint64_t to_page_end(uint64_t addr)
{
    return kPage - (addr & (kPage - 1));
}

void fault(Work& w, const DmaResult& r, bool write)
{
    const bool translation = r.error == DmaError::IommuFault || r.error == DmaError::Wrap;
    w.status = translation ? Status::PageFaultNoBof : Status::HwError;
    w.fault_addr = r.fault_addr;
    w.fault_write = translation && write; // STATUS bit 7 belongs to the page-fault codes
}

DmaResult read(Exec& x, uint64_t addr, uint8_t* buf, uint64_t n)
{
    if (wraps(addr, n))
        return DmaResult::failure(DmaError::Wrap, addr);
    return x.mem.read(addr, buf, n, x.attrs);
}

DmaResult write(Exec& x, uint64_t addr, const uint8_t* buf, uint64_t n)
{
    if (wraps(addr, n))
        return DmaResult::failure(DmaError::Wrap, addr);
    return x.mem.write(addr, buf, n, x.attrs);
}

namespace
{

// The next piece of a stretch at transfer offset w.done: at most `left`, a scratch piece,
// and inside one page of each address given (offsets from w.done).
uint64_t piece(uint64_t left, std::initializer_list<uint64_t> addrs)
{
    uint64_t n = std::min(left, kPage);
    for (uint64_t a : addrs)
        n = std::min(n, to_page_end(a));
    return n;
}

// How far a transfer gets before one of its ranges wraps past 2^64 (a page fault there),
// and whether that range is one it writes.
struct Reach {
    uint64_t limit;
    bool write = false;
};

Reach reach(const Work& w, std::initializer_list<std::pair<uint64_t, bool>> ranges)
{
    Reach r{w.size()};
    for (auto [base, write] : ranges)
        if (wraps(base, w.size()) && 0 - base < r.limit)
            r = {0 - base, write};
    return r;
}

// The next piece's length within `r`, or 0 after a fault at the wrap.
uint64_t within(Work& w, const Reach& r, uint64_t n)
{
    if (w.done >= r.limit) {
        fault(w, DmaResult::failure(DmaError::Wrap, 0), r.write);
        return 0;
    }
    return std::min(n, r.limit - w.done);
}

// The transfer's end reached: success, unless an executor set a verdict before.
void end_if_done(Work& w)
{
    if (w.status == Status::None && w.done >= w.size())
        w.status = Status::Success;
}

// Byte k of the 8-byte pattern repeated from transfer offset `at`.
void pattern_piece(uint8_t* out, uint64_t pattern, uint64_t at, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        out[i] = static_cast<uint8_t>(pattern >> (8 * ((at + i) % 8)));
}

// A copy whose destination starts inside its source: last piece first, so no source byte is
// overwritten before it is read.
bool move_down(Exec& x, Work& w, uint64_t len)
{
    const uint64_t src = w.word(2), dst = w.word(3);
    // The source does not wrap (begin()), the destination may: its end, where a copy down
    // starts, lies past 2^64, and the copy faults there before moving a byte.
    if (wraps(dst, w.size())) {
        fault(w, DmaResult::failure(DmaError::Wrap, 0), true);
        return true;
    }
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t end = w.size() - w.done; // bytes not yet copied, from the start
        const uint64_t s_end = src + end, d_end = dst + end;
        uint64_t n = std::min(
            {left, end, kPage, ((s_end - 1) & (kPage - 1)) + 1, ((d_end - 1) & (kPage - 1)) + 1});
        DmaResult r = read(x, s_end - n, x.a, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false);
            break;
        }
        r = write(x, d_end - n, x.a, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, true);
            break;
        }
        w.done += n;
        left -= n;
        end_if_done(w);
    }
    return true;
}

} // namespace

uint64_t extent(const Work& w)
{
    return w.op() == Opcode::ApplyDelta ? static_cast<uint32_t>(w.word(5)) : w.size();
}

namespace
{

// RESULT bit 0 of a Memory Move: the copy runs from the end down, which it does when its
// destination starts inside its source (only with GENCAP.OVERLAP_COPY; else refused).
bool copies_down(const Work& w, bool overlap_copy)
{
    const uint64_t src = w.word(2), dst = w.word(3);
    return overlap_copy && !wraps(src, w.size()) && dst > src && dst - src < w.size();
}

} // namespace

bool reachable(const Work& w)
{
    switch (w.op()) {
    case Opcode::Memmove:
        return w.result == copies_down(w, true); // the model always offers OVERLAP_COPY
    case Opcode::DifCheck:
    case Opcode::DifInsert:
    case Opcode::DifStrip:
    case Opcode::DifUpdate:
        return dif_shape(w).src && w.done % dif_shape(w).src == 0;
    default:
        return true;
    }
}

void begin(const Exec& x, Work& w)
{
    switch (w.op()) {
    case Opcode::CrcGen:
    case Opcode::CopyCrc:
        w.crc = ~static_cast<uint32_t>(w.word(5));
        break;
    case Opcode::Memmove:
        w.result = copies_down(w, x.overlap_copy);
        break;
    default:
        break;
    }
}

bool move(Exec& x, Work& w, uint64_t len)
{
    if (w.result & 1)
        return move_down(x, w, len);
    // What lies below the top of the address space moves; the wrap is the fault, in the
    // step that reaches it.
    const Reach r0 = reach(w, {{w.word(2), false}, {w.word(3), true}});
    const uint64_t n = within(w, r0, len);
    if (!n)
        return true;
    const uint64_t src = w.word(2) + w.done, dst = w.word(3) + w.done;
    CopyResult r = copy(x.mem, x.attrs, dst, src, n, x.alive);
    if (r.stopped)
        return false;
    w.done += r.bytes;
    if (r.failed != CopyResult::None)
        fault(w, r.error, r.failed == CopyResult::Destination);
    else if (w.done == r0.limit && r0.limit < w.size())
        fault(w, DmaResult::failure(DmaError::Wrap, 0), r0.write);
    end_if_done(w);
    return true;
}

bool fill(Exec& x, Work& w, uint64_t len)
{
    const Reach r0 = reach(w, {{w.word(3), true}});
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t dst = w.word(3) + w.done;
        const uint64_t n = within(w, r0, piece(left, {dst}));
        if (!n)
            break;
        pattern_piece(x.a, w.word(2), w.done, n);
        DmaResult r = write(x, dst, x.a, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, true);
            break;
        }
        w.done += n;
        left -= n;
        end_if_done(w);
    }
    return true;
}

// Compare and Compare Pattern: RESULT 0 when the ranges are equal; 1 at the first byte that
// differs, whose offset BYTES_COMPLETED then holds.
template <bool Pattern> bool compare_with(Exec& x, Work& w, uint64_t len)
{
    const Reach r0 = Pattern ? reach(w, {{w.word(2), false}})
                             : reach(w, {{w.word(2), false}, {w.word(3), false}});
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t s1 = w.word(2) + w.done, s2 = w.word(3) + w.done;
        const uint64_t n = within(w, r0, Pattern ? piece(left, {s1}) : piece(left, {s1, s2}));
        if (!n)
            break;
        DmaResult r = read(x, s1, x.a, n);
        if (!x.alive())
            return false;
        if (r.ok() && !Pattern)
            r = read(x, s2, x.b, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false);
            break;
        }
        if (Pattern)
            pattern_piece(x.b, w.word(3), w.done, n);
        if (std::memcmp(x.a, x.b, n) != 0) {
            uint64_t k = 0;
            while (x.a[k] == x.b[k])
                k++;
            w.done += k;
            w.result = 1;
            w.status = Status::Success;
            break;
        }
        w.done += n;
        left -= n;
        end_if_done(w);
    }
    return true;
}

bool compare(Exec& x, Work& w, uint64_t len)
{
    return compare_with<false>(x, w, len);
}

bool compare_pattern(Exec& x, Work& w, uint64_t len)
{
    return compare_with<true>(x, w, len);
}

bool dualcast(Exec& x, Work& w, uint64_t len)
{
    const Reach r0 = reach(w, {{w.word(2), false}, {w.word(3), true}, {w.word(5), true}});
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t src = w.word(2) + w.done;
        const uint64_t d1 = w.word(3) + w.done, d2 = w.word(5) + w.done;
        const uint64_t n = within(w, r0, piece(left, {src, d1, d2}));
        if (!n)
            break;
        DmaResult r = read(x, src, x.a, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false);
            break;
        }
        for (uint64_t d : {d1, d2}) {
            r = write(x, d, x.a, n);
            if (!x.alive())
                return false;
            if (!r.ok())
                break;
        }
        if (!r.ok()) {
            fault(w, r, true);
            break;
        }
        w.done += n;
        left -= n;
        end_if_done(w);
    }
    return true;
}

// CRC Generation and Copy with CRC: CRC_VAL is the CRC-32C of the source, seeded with
// CRC_SEED (inverted in and out, as software CRC-32C is).
template <bool Copy> bool crc_with(Exec& x, Work& w, uint64_t len)
{
    const Reach r0 =
        Copy ? reach(w, {{w.word(2), false}, {w.word(3), true}}) : reach(w, {{w.word(2), false}});
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t src = w.word(2) + w.done, dst = w.word(3) + w.done;
        const uint64_t n = within(w, r0, Copy ? piece(left, {src, dst}) : piece(left, {src}));
        if (!n)
            break;
        DmaResult r = read(x, src, x.a, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false);
            break;
        }
        if (Copy) {
            r = write(x, dst, x.a, n);
            if (!x.alive())
                return false;
            if (!r.ok()) {
                fault(w, r, true);
                break;
            }
        }
        w.crc = crc32c(w.crc, x.a, n);
        w.done += n;
        left -= n;
        end_if_done(w);
    }
    w.word2 = static_cast<uint32_t>(~w.crc);
    return true;
}

bool crc(Exec& x, Work& w, uint64_t len)
{
    return crc_with<false>(x, w, len);
}

bool copy_crc(Exec& x, Work& w, uint64_t len)
{
    return crc_with<true>(x, w, len);
}

// Create Delta Record: a 10-byte entry (the quadword's offset, 16 bits, then the second
// source's quadword) for each quadword in which the sources differ. RESULT 0: they are
// equal; 1: the record holds the differences; 2: they did not fit in MAX_DELTA_REC_SIZE
// (the record holds what fitted, BYTES_COMPLETED where the comparison stopped). After a
// page fault RESULT says whether the record holds any entry.
bool create_delta(Exec& x, Work& w, uint64_t len)
{
    const uint64_t rec = w.word(5);
    const uint32_t max = static_cast<uint32_t>(w.word(6));
    const Reach r0 = reach(w, {{w.word(2), false}, {w.word(3), false}});
    for (uint64_t left = len; left && w.status == Status::None;) {
        const uint64_t s1 = w.word(2) + w.done, s2 = w.word(3) + w.done;
        const uint64_t n = within(w, r0, piece(left, {s1, s2}));
        if (!n)
            break;
        DmaResult r = read(x, s1, x.a, n);
        if (!x.alive())
            return false;
        if (r.ok())
            r = read(x, s2, x.b, n);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false); // RESULT: 1 once the record holds an entry
            break;
        }
        for (uint64_t q = 0; q < n; q += 8) {
            if (std::memcmp(x.a + q, x.b + q, 8) == 0)
                continue;
            if (w.delta + 10 > max) {
                w.done += q;
                w.result = 2;
                w.status = Status::Success;
                break;
            }
            uint8_t entry[10];
            store_le(entry, (w.done + q) / 8, 2);
            std::memcpy(entry + 2, x.b + q, 8);
            r = wraps(rec, w.delta + uint64_t{sizeof entry})
                    ? DmaResult::failure(DmaError::Wrap, 0)
                    : write(x, rec + w.delta, entry, sizeof entry);
            if (!x.alive())
                return false;
            if (!r.ok()) {
                w.done += q;
                fault(w, r, true);
                break;
            }
            w.delta += 10;
            w.result = 1; // a fault from here on leaves a record with entries
        }
        if (w.status != Status::None)
            break;
        w.done += n;
        left -= n;
        if (w.done >= w.size()) {
            w.result = w.delta ? 1 : 0;
            w.status = Status::Success;
        }
    }
    w.word2 = w.delta;
    return true;
}

// Apply Delta Record: each entry's quadword written at its offset into the destination; the
// offsets must rise and stay inside the transfer. Progress counts record bytes.
bool apply_delta(Exec& x, Work& w, uint64_t len)
{
    const uint64_t rec = w.word(2), dst = w.word(3), size = extent(w);
    uint64_t entries = std::max<uint64_t>(len / 10, 1);
    // A trailing piece shorter than an entry is no entry.
    while (entries-- && w.status == Status::None && size - w.done >= 10) {
        uint8_t entry[10];
        DmaResult r = wraps(rec, w.done + uint64_t{sizeof entry})
                          ? DmaResult::failure(DmaError::Wrap, 0)
                          : read(x, rec + w.done, entry, sizeof entry);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, false);
            break;
        }
        const auto off = static_cast<uint32_t>(load_le(entry, 2));
        if (uint64_t{off} * 8 + 8 > w.size()) {
            w.status = Status::DeltaOffsetRange;
            break;
        }
        if (off < w.next_offset) {
            w.status = Status::DeltaOffsetOrder;
            break;
        }
        r = wraps(dst, uint64_t{off} * 8 + 8) ? DmaResult::failure(DmaError::Wrap, 0)
                                              : write(x, dst + uint64_t{off} * 8, entry + 2, 8);
        if (!x.alive())
            return false;
        if (!r.ok()) {
            fault(w, r, true);
            break;
        }
        w.next_offset = off + 1;
        w.done += 10;
    }
    if (w.status == Status::None && size - w.done < 10)
        w.status = Status::Success;
    return true;
}

} // namespace dmalab::dsa::exec
