// SPDX-License-Identifier: GPL-2.0-or-later
// Fill, XOR and PQ over guest memory. A piece reads every source before it writes anything,
// so a result that is also a source (async_tx's continuation passes P and Q back in as
// sources: ioat_prep_pq with DMA_PREP_CONTINUE, drivers/dma/ioat/prep.c) comes out right.

#include "engine.h"

#include <algorithm>
#include <cstring>

#include "gf256.h"

namespace dmalab::ioat
{

namespace
{

uint64_t to_page_end(uint64_t addr)
{
    return Engine::kPiece - (addr & (Engine::kPiece - 1));
}

void xor_into(uint8_t* acc, const uint8_t* d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] ^= d[i];
}

} // namespace

struct Engine::Piece {
    DmaMemory& mem;
    const MemAttrs& attrs;
    const Operation& op;
    const std::function<bool()>& alive;
    BlockResult& result;
    uint64_t off = 0; // within the block
    size_t n = 0;
};

BlockResult Engine::run(DmaMemory& mem, const MemAttrs& attrs, const Operation& op, uint64_t offset,
                        uint64_t len, const std::function<bool()>& alive)
{
    BlockResult r;
    Piece p{mem, attrs, op, alive, r};
    while (r.bytes < len) {
        p.off = offset + r.bytes;
        uint64_t n = std::min(len - r.bytes, kPiece);
        // Inside one page of every range: one translation each, and a hole fails only the
        // piece that reaches it.
        if (op.p_on())
            n = std::min(n, to_page_end(op.dst + p.off));
        if (op.q_on())
            n = std::min(n, to_page_end(op.q + p.off));
        for (unsigned i = 0; i < op.sources; i++)
            n = std::min(n, to_page_end(op.src[i] + p.off));
        p.n = static_cast<size_t>(n);
        bool ok = op_spec(op.kind).exec == Executor::Fill ? fill_piece(p) : combine_piece(p);
        if (!ok)
            return r;
        r.bytes += n;
    }
    return r;
}

bool Engine::fill_piece(Piece& p)
{
    // The pattern's bytes in order from the descriptor's first byte.
    for (size_t i = 0; i < p.n; i++)
        p_[i] = static_cast<uint8_t>(p.op.pattern >> (8 * ((p.off + i) % 8)));
    return store(p, p.op.dst + p.off, p_);
}

bool Engine::combine_piece(Piece& p)
{
    const Operation& op = p.op;
    const size_t n = p.n;
    // P is every source XORed (coefficients play no part in it); Q the sum of each source
    // times its coefficient. Both accumulate here and go out, or are compared, at the end.
    for (unsigned i = 0; i < op.sources; i++) {
        bool ok = load(p, op.src[i] + p.off, [&](const uint8_t* d) {
            if (i == 0)
                std::memcpy(p_, d, n);
            else
                xor_into(p_, d, n);
            if (op.q_on()) {
                if (i == 0)
                    std::memset(q_, 0, n);
                gf256::mul_add(q_, d, n, op.coef[i]);
            }
        });
        if (!ok)
            return false;
    }
    if (!is_validate(op.kind)) {
        if (op.p_on() && !store(p, op.dst + p.off, p_))
            return false;
        return !op.q_on() || store(p, op.q + p.off, q_);
    }
    if (op.p_on() && !load(p, op.dst + p.off, [&](const uint8_t* d) {
            if (std::memcmp(d, p_, n) != 0)
                p.result.mismatch |= kMismatchP;
        }))
        return false;
    return !op.q_on() || load(p, op.q + p.off, [&](const uint8_t* d) {
        if (std::memcmp(d, q_, n) != 0)
            p.result.mismatch |= kMismatchQ;
    });
}

bool Engine::load(Piece& p, uint64_t addr, const std::function<void(const uint8_t*)>& use)
{
    DmaMemory::Mapping m = p.mem.map(addr, p.n, Access::Read, p.attrs);
    if (!p.alive()) {
        if (m)
            p.mem.unmap(m, Access::Read, 0);
        p.result.stopped = true;
        return false;
    }
    if (m && m.len >= p.n) {
        use(static_cast<const uint8_t*>(m.host));
        p.mem.unmap(m, Access::Read, p.n);
        return true;
    }
    if (m)
        p.mem.unmap(m, Access::Read, 0);
    // Not plain RAM for the whole piece: read() also says why a range is unreachable.
    DmaResult rd = p.mem.read(addr, bounce_, p.n, p.attrs);
    if (!p.alive()) {
        p.result.stopped = true;
        return false;
    }
    if (!rd.ok()) {
        p.result.failed = CopyResult::Source;
        p.result.error = rd;
        return false;
    }
    use(bounce_);
    return true;
}

bool Engine::store(Piece& p, uint64_t addr, const uint8_t* data)
{
    DmaMemory::Mapping m = p.mem.map(addr, p.n, Access::Write, p.attrs);
    if (!p.alive()) {
        if (m)
            p.mem.unmap(m, Access::Write, 0);
        p.result.stopped = true;
        return false;
    }
    if (m && m.len >= p.n) {
        std::memcpy(m.host, data, p.n);
        p.mem.unmap(m, Access::Write, p.n);
        return true;
    }
    if (m)
        p.mem.unmap(m, Access::Write, 0);
    DmaResult wr = p.mem.write(addr, data, p.n, p.attrs);
    if (!p.alive()) {
        p.result.stopped = true;
        return false;
    }
    if (!wr.ok()) {
        p.result.failed = CopyResult::Destination;
        p.result.error = wr;
        return false;
    }
    return true;
}

} // namespace dmalab::ioat
