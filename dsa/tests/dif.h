// SPDX-License-Identifier: GPL-2.0-or-later
// What the DIF operations' tests share (operations_dif_test.cc, dif_checks_test.cc): T10
// protection information computed here, independently of the model (a bitwise CRC-16
// T10-DIF, big-endian tuples), and DIF descriptors laid out as Linux's struct dsa_hw_desc
// has them (flag bytes at 40-42, source tags at 48-55, destination tags at 56-63).
#pragma once

#include "operations.h"

namespace dmalab::dsa::testing::dif_ops
{

using namespace ops;

// CRC-16 T10-DIF a bit at a time: polynomial 0x8BB7, most significant bit first.
inline uint16_t crc16(const uint8_t* p, size_t n, uint16_t crc = 0)
{
    for (size_t i = 0; i < n; i++) {
        crc ^= static_cast<uint16_t>(p[i] << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = static_cast<uint16_t>(crc & 0x8000 ? (crc << 1) ^ 0x8bb7 : crc << 1);
    }
    return crc;
}

// The block sizes, by the DIF flags' BLOCK_SIZE code (0-3).
constexpr uint32_t kBlock[] = {512, 520, 4096, 4104};

// DIF flags byte (byte 42).
constexpr uint8_t kInvertSeed = 0x04, kInvertResult = 0x08;
// Source DIF flags (byte 40).
constexpr uint8_t kAllFError = 0x01, kAllFDetect = 0x02, kAppFDetect = 0x04, kAppRefFDetect = 0x08,
                  kAppIncrement = 0x10, kGuardCheckOff = 0x20, kRefCheckOff = 0x40,
                  kRefFixed = 0x80;
// Destination DIF flags (byte 41); kAppIncrement and kRefFixed as for the source.
constexpr uint8_t kAppPass = 0x08, kGuardPass = 0x20, kRefPass = 0x40;
// RESULT with status 09h.
constexpr uint8_t kGuardBad = 0x01, kAppBad = 0x02, kRefBad = 0x04, kAllFBad = 0x08;

struct Tuple {
    uint16_t guard = 0, app = 0;
    uint32_t ref = 0;
    bool operator==(const Tuple&) const = default;
};

inline Tuple tuple_at(Rig& r, uint64_t at)
{
    const uint8_t* p = r.at(at);
    return {static_cast<uint16_t>(p[0] << 8 | p[1]), static_cast<uint16_t>(p[2] << 8 | p[3]),
            uint32_t{p[4]} << 24 | uint32_t{p[5]} << 16 | uint32_t{p[6]} << 8 | p[7]};
}

inline void put_tuple(Rig& r, uint64_t at, const Tuple& t)
{
    const uint8_t bytes[8] = {static_cast<uint8_t>(t.guard >> 8), static_cast<uint8_t>(t.guard),
                              static_cast<uint8_t>(t.app >> 8),   static_cast<uint8_t>(t.app),
                              static_cast<uint8_t>(t.ref >> 24),  static_cast<uint8_t>(t.ref >> 16),
                              static_cast<uint8_t>(t.ref >> 8),   static_cast<uint8_t>(t.ref)};
    r.poke(at, bytes, sizeof bytes);
}

// `n` blocks of `block` bytes of data at `at`, each followed by its correct tuple: the
// reference tag counting from `ref`, the application tag `app` throughout.
inline void protect(Rig& r, uint64_t at, uint32_t block, unsigned n, uint32_t ref, uint16_t app)
{
    for (unsigned k = 0; k < n; k++) {
        const uint64_t b = at + uint64_t{k} * (block + 8);
        scribble(r, b, block, k + 3);
        put_tuple(r, b + block, {crc16(r.at(b), block), app, ref + k});
    }
}

// The DIF fields of a descriptor.
struct Fields {
    unsigned size_code = 0; // BLOCK_SIZE
    uint8_t flags = 0;      // the DIF flags byte's other bits
    uint8_t src_flags = 0, dest_flags = 0;
    uint32_t src_ref = 0;
    uint16_t src_mask = 0, src_app = 0;
    uint32_t dst_ref = 0;
    uint16_t dst_mask = 0, dst_app = 0;
};

inline uint64_t tags_word(uint32_t ref, uint16_t mask, uint16_t app)
{
    return ref | uint64_t{mask} << 32 | uint64_t{app} << 48;
}

// A DIF descriptor with a record, each field where its operation has one.
inline Desc dif_desc(Opcode op, uint64_t src, uint64_t dst, uint32_t size, const Fields& f)
{
    const bool reads = op != Opcode::DifInsert;
    const bool stamps = op == Opcode::DifInsert || op == Opcode::DifUpdate;
    Desc d(op, kRecord);
    d.completion(kRec).src(src).size(size);
    if (op != Opcode::DifCheck)
        d.dst(dst);
    uint64_t q5 = uint64_t{static_cast<uint8_t>(f.size_code | f.flags)} << 16;
    if (reads) {
        q5 |= f.src_flags;
        d.word(6, tags_word(f.src_ref, f.src_mask, f.src_app));
    }
    if (stamps) {
        q5 |= uint64_t{f.dest_flags} << 8;
        d.word(7, tags_word(f.dst_ref, f.dst_mask, f.dst_app));
    }
    return d.word(5, q5);
}

// A record quadword's tags.
struct Tags {
    uint32_t ref;
    uint16_t mask, app;
    bool operator==(const Tags&) const = default;
};
inline Tags tags_of(uint64_t q)
{
    return {static_cast<uint32_t>(q), static_cast<uint16_t>(q >> 32),
            static_cast<uint16_t>(q >> 48)};
}
inline std::ostream& operator<<(std::ostream& os, const Tags& t)
{
    return os << "ref " << t.ref << " mask " << t.mask << " app " << t.app;
}
inline std::ostream& operator<<(std::ostream& os, const Tuple& t)
{
    return os << "guard " << t.guard << " app " << t.app << " ref " << t.ref;
}

// A device brought up as idxd does, with RAM for the largest cases.
struct DifRig : Rig {
    explicit DifRig(const Config& c = Config{}) : Rig(c, nullptr, 2u << 20) { bring_up(); }
};

} // namespace dmalab::dsa::testing::dif_ops
