// SPDX-License-Identifier: GPL-2.0-or-later
// What the descriptor checks' tests share (checks_test.cc, checks_limits_test.cc): a valid
// descriptor to spoil, and a device that runs one as idxd brings WQ 0 up.
#pragma once

#include "rig.h"

namespace dmalab::dsa::testing::checks
{

constexpr uint64_t kRec = 0x1000, kSrc = 0x10000, kSrc2 = 0x20000, kDst = 0x40000, kDst2 = 0x60000,
                   kDelta = 0x80000;

// A valid 64-byte memmove through WQ 0 with a record.
inline Desc memmove(uint32_t flags = kRecord)
{
    Desc d(Opcode::Memmove, flags);
    d.completion(kRec).src(kSrc).dst(kDst).size(64);
    return d;
}

// `d` through WQ 0 of a device brought up as idxd does (optionally with WQ 0's limits).
inline Record run(const Desc& d, const Config& c = Config{}, uint32_t lim = ~0u)
{
    Rig r(c);
    r.configure();
    if (lim != ~0u)
        r.wq(0, 16, kDedicated, 0, lim);
    EXPECT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    EXPECT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.fill(kSrc, 0x11, 64);
    r.fill(kDst, 0xee, 64);
    Record rec = r.run_desc(0, d, kRec);
    if (rec.code() >= Status::UnsupportedOpcode) {
        EXPECT_EQ(*r.at(kDst), 0xee) << "a refused descriptor writes no data";
        EXPECT_EQ(rec.bytes, 0u) << "nor processes any";
    }
    return rec;
}

inline Status status_of(const Desc& d, const Config& c = Config{}, uint32_t lim = ~0u)
{
    return run(d, c, lim).code();
}

// A refusal for InvalidFlags, and which bits the record names.
inline void expect_invalid_flags(const Desc& d, uint32_t bad)
{
    const Record rec = run(d);
    EXPECT_EQ(rec.code(), Status::InvalidFlags) << "status 11h";
    EXPECT_EQ(rec.word2, bad) << "INVALID_FLAGS names the offending bits";
    EXPECT_EQ(rec.bytes, 0u);
}

} // namespace dmalab::dsa::testing::checks
