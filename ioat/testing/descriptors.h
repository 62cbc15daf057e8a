// SPDX-License-Identifier: GPL-2.0-or-later
// RAID descriptors laid out as Linux's ioatdma prep code builds them
// (drivers/dma/ioat/prep.c), written into fake guest memory: for the tests and the benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "../../common/testing/fake_memory.h"
#include "dmalab/ioat/spec/descriptor.h"

namespace dmalab::ioat::testing
{

using dmalab::testing::FakeMemory;

inline RawDescriptor raw_descriptor(uint32_t size, uint32_t ctl, uint64_t next)
{
    RawDescriptor d{};
    d.word[0] = size | uint64_t{ctl} << 32;
    d.word[words::NEXT] = next;
    return d;
}

// An XOR or XOR_VAL as Linux's __ioat_prep_xor_lock() builds it at `at`: sources in the
// base descriptor and, beyond five, in the extended one at at + 64. `extra` goes into the
// control word. Returns the address of the descriptor after it.
inline uint64_t put_xor(FakeMemory& mem, uint64_t at, uint8_t op, uint32_t size, uint64_t dst,
                        const std::vector<uint64_t>& srcs, uint32_t extra = 0)
{
    bool ext = srcs.size() > kXorBaseSources;
    uint64_t after = at + (ext ? 128 : 64);
    uint32_t c = uint32_t{op} << ctl::OP_SHIFT |
                 static_cast<uint32_t>(srcs.size() - 2) << ctl::SRC_CNT_SHIFT | extra;
    RawDescriptor base = raw_descriptor(size, c, ext ? at + 64 : after);
    RawDescriptor e = raw_descriptor(0, 0, after);
    base.word[words::DST] = dst;
    for (size_t i = 0; i < srcs.size(); i++) {
        if (i < kXorBaseSources)
            base.word[words::XOR_SRC[i]] = srcs[i];
        else
            e.word[words::XOR_EXT_SRC[i - kXorBaseSources]] = srcs[i];
    }
    mem.put(at, base);
    if (ext)
        mem.put(at + 64, e);
    return after;
}

// A PQ, PQ_VAL or their 16-source forms as __ioat_prep_pq_lock() and
// __ioat_prep_pq16_lock() build them; the 16-source forms' SED goes at `sed`.
inline uint64_t put_pq(FakeMemory& mem, uint64_t at, uint8_t op, uint32_t size, uint64_t p,
                       uint64_t q, const std::vector<uint64_t>& srcs,
                       const std::vector<uint8_t>& coef, uint32_t extra = 0, uint64_t sed = 0)
{
    bool wide = op == OP_PQ_16S || op == OP_PQ_VAL_16S;
    bool ext = !wide && srcs.size() > kPqBaseSources;
    uint64_t after = at + (ext ? 128 : 64);
    unsigned cnt = static_cast<unsigned>(srcs.size()) - (wide ? kMinPq16Sources : 2);
    uint32_t c = uint32_t{op} << ctl::OP_SHIFT | cnt << ctl::SRC_CNT_SHIFT | extra;
    RawDescriptor base = raw_descriptor(size, c, ext ? at + 64 : after);
    RawDescriptor e = raw_descriptor(0, 0, after);
    RawDescriptor halves[2] = {};
    base.word[words::P] = p;
    base.word[words::Q] = q;
    for (size_t i = 0; i < srcs.size(); i++) {
        uint64_t byte = uint64_t{coef[i]} << (8 * (i % 8));
        (i < 8 ? base.word[words::COEF] : halves[0].word[words::SED_A_COEF]) |= byte;
        if (wide && i < 2)
            base.word[words::PQ16_SRC[i]] = srcs[i];
        else if (wide && i < 2 + kSedSourcesA)
            halves[0].word[words::SED_A_SRC[i - 2]] = srcs[i];
        else if (wide)
            halves[1].word[words::SED_B_SRC[i - 2 - kSedSourcesA]] = srcs[i];
        else if (i < kPqBaseSources)
            base.word[words::PQ_SRC[i]] = srcs[i];
        else
            e.word[words::PQ_EXT_SRC[i - kPqBaseSources]] = srcs[i];
    }
    if (wide) {
        base.word[words::PQ16_SED] = sed;
        mem.put(sed, halves[0]);
        if (srcs.size() > 2 + kSedSourcesA)
            mem.put(sed + 64, halves[1]);
    }
    mem.put(at, base);
    if (ext)
        mem.put(at + 64, e);
    return after;
}

} // namespace dmalab::ioat::testing
