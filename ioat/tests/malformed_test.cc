// SPDX-License-Identifier: GPL-2.0-or-later
// Every class of malformed input a guest can give: the architected CHANERR bit, a halted
// channel, nothing touched outside what the guest programmed, and a channel that Linux's
// recovery (ioat_reset_hw, then ioat_restart_channel: drivers/dma/ioat/dma.c) brings back.

#include <cstring>

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

constexpr uint64_t kHole = 0xc00000;
constexpr uint64_t kP = 0x800000;
constexpr uint64_t kQ = 0x900000;
constexpr uint64_t kSed = 0x20000;
constexpr uint64_t kSpare = 0x30000; // where recovery puts its copy

std::vector<uint64_t> srcs(unsigned n)
{
    std::vector<uint64_t> s;
    for (unsigned i = 0; i < n; i++)
        s.push_back(kSrc + i * 0x2000);
    return s;
}

std::vector<uint8_t> coefs(unsigned n)
{
    return std::vector<uint8_t>(n, 2);
}

// A rig with RAID operations, channel 0 set up as Linux sets it up, sources filled.
struct Bad : Rig {
    Bad() : Rig(raid_config())
    {
        setup(0, kCompletion);
        fill(kSrc, 16 * 0x2000, 3);
    }
    void go(uint16_t count, uint64_t chain = kRing)
    {
        set_chainaddr(0, chain);
        snapshot = mem.ram;
        issue(0, count);
        run_until_idle();
    }
    // Halted with exactly `chanerr`, the completion area saying so, memory otherwise as
    // before the start (bar `written`, bytes the architecture lets the failed piece write).
    void expect_halted(uint32_t chanerr, std::pair<uint64_t, uint64_t> written = {0, 0})
    {
        EXPECT_EQ(state(0), ChanState::Halted);
        EXPECT_EQ(this->chanerr(0), chanerr);
        EXPECT_EQ(mem.get<uint64_t>(kCompletion) & CHANSTS_STATUS_MASK,
                  static_cast<uint64_t>(ChanState::Halted));
        // Page by page with memcmp, bytes only in a page that changed: a byte loop over
        // 16 MiB took most of this suite's minute in the unoptimised sanitizer build.
        bool changed = false;
        for (size_t page = 0; page < mem.ram.size() && !changed; page += 4096) {
            size_t n = std::min<size_t>(4096, mem.ram.size() - page);
            if (std::memcmp(&mem.ram[page], &snapshot[page], n) == 0)
                continue;
            for (size_t i = page; i < page + n && !changed; i++) {
                bool completion = i >= kCompletion && i < kCompletion + 8;
                bool allowed = i >= written.first && i < written.first + written.second;
                changed = mem.ram[i] != snapshot[i] && !completion && !allowed;
                if (changed)
                    ADD_FAILURE() << "byte at 0x" << std::hex << i << " changed";
            }
        }
        EXPECT_EQ(mem.outstanding, 0);
        EXPECT_EQ(dev.stats(0).errors, 1u);
        recover();
    }
    // Linux's timeout recovery: quiesce, write CHANERR back, reset; then the completion
    // address again and a fresh chain from CHAINADDR with DMACOUNT from 0.
    void recover()
    {
        wr(0, CHANERR, this->chanerr(0), 4);
        wr(0, CHANCMD, CHANCMD_RESET, 1);
        ASSERT_EQ(rd(0, CHANCMD, 1) & CHANCMD_RESET, 0u);
        ASSERT_EQ(state(0), ChanState::Halted);
        wr(0, CHANCMP, kCompletion & 0xffffffff, 4);
        wr(0, CHANCMP + 4, kCompletion >> 32, 4);
        put_desc(kSpare, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kSpare + 64);
        put_desc(kSpare + 64, 256, ctl::COMPL_WRITE, kSrc, kDst + 0x100000, kSpare + 128);
        set_chainaddr(0, kSpare);
        issue(0, 2);
        run_until_idle();
        EXPECT_EQ(state(0), ChanState::Done) << "reset and restart bring the channel back";
        EXPECT_EQ(this->chanerr(0), 0u);
        EXPECT_TRUE(same(kSrc, kDst + 0x100000, 256));
    }
    std::vector<uint8_t> snapshot;
};

TEST(Malformed, ExtendedDescriptorMisaligned)
{
    Bad r;
    r.put_xor(kRing, OP_XOR, 512, kDst, srcs(7));
    RawDescriptor base = r.mem.get<RawDescriptor>(kRing);
    base.word[words::NEXT] = kRing + 72;
    r.put_raw(kRing, base);
    r.go(2);
    r.expect_halted(CHANERR_NEXT_DESC_ALIGN_ERR);
}

TEST(Malformed, ExtendedDescriptorUnreadable)
{
    Bad r;
    r.mem.add_hole(kHole, 0x1000);
    r.put_pq(kRing, OP_PQ, 512, kP, kQ, srcs(6), coefs(6));
    RawDescriptor base = r.mem.get<RawDescriptor>(kRing);
    base.word[words::NEXT] = kHole;
    r.put_raw(kRing, base);
    r.go(2);
    r.expect_halted(CHANERR_NEXT_ADDR_ERR);
}

TEST(Malformed, ExtendedDescriptorNotCoveredByDmacount)
{
    Bad r;
    r.put_xor(kRing, OP_XOR, 512, kDst, srcs(8));
    r.go(1); // the base only
    r.expect_halted(CHANERR_DESCRIPTOR_COUNT_ERR);
}

TEST(Malformed, SuperExtendedDescriptorMisalignedOrUnreadable)
{
    for (uint64_t sed : {kSed + 8, kHole}) {
        Bad r;
        r.mem.add_hole(kHole, 0x1000);
        r.put_pq(kRing, OP_PQ_16S, 512, kP, kQ, srcs(12), coefs(12), 0, kSed);
        RawDescriptor base = r.mem.get<RawDescriptor>(kRing);
        base.word[words::PQ16_SED] = sed;
        r.put_raw(kRing, base);
        r.go(1);
        r.expect_halted(CHANERR_SED_ADDR_ERR);
    }
}

TEST(Malformed, LengthZeroOrOverXfercap)
{
    for (uint32_t size : {0u, (1u << 20) + 1}) {
        Bad r;
        r.put_xor(kRing, OP_XOR, size, kDst, srcs(3));
        r.go(1);
        r.expect_halted(CHANERR_LENGTH_ERR);
        Bad p;
        p.put_pq(kRing, OP_PQ_16S, size, kP, kQ, srcs(10), coefs(10), 0, kSed);
        p.go(1);
        p.expect_halted(CHANERR_LENGTH_ERR);
    }
}

TEST(Malformed, UnknownOpcodes)
{
    // 0x42 means nothing; PQ_UP (0x8b) exists on hardware but not here, and Linux v6.1
    // never issues it.
    for (uint8_t op : {uint8_t{0x42}, uint8_t{OP_PQ_UP}, uint8_t{0xff}}) {
        Bad r;
        r.put_desc(kRing, 64, uint32_t{op} << ctl::OP_SHIFT, kSrc, kDst, kRing + 64);
        r.go(1);
        r.expect_halted(CHANERR_CONTROL_ERR);
    }
}

TEST(Malformed, ReservedControlBits)
{
    struct Case {
        const char* what;
        uint8_t op;
        uint32_t extra;
        unsigned sources;
    };
    const Case cases[] = {
        {"copy bit 11", OP_COPY, 1u << 11, 0},
        {"copy SRC_BRK without PAGE_BREAK", OP_COPY, ctl::SRC_BRK, 0},
        {"fill SRC_SNOOP_DIS", OP_FILL, ctl::SRC_SNOOP_DIS, 0},
        {"XOR P_DISABLE", OP_XOR, ctl::P_DISABLE, 3},
        {"XOR nine sources", OP_XOR, 7u << ctl::SRC_CNT_SHIFT, 2},
        {"PQ nine sources", OP_PQ, 7u << ctl::SRC_CNT_SHIFT, 2},
        {"PQ WB_EN without DWBES", OP_PQ_VAL, ctl::WB_EN, 3},
        {"PQ bit 23", OP_PQ, 1u << 23, 3},
        {"PQ computing nothing", OP_PQ, ctl::P_DISABLE | ctl::Q_DISABLE, 3},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.what);
        Bad r;
        if (k.sources == 0)
            r.put_desc(kRing, 64, uint32_t{k.op} << ctl::OP_SHIFT | k.extra, kSrc, kDst,
                       kRing + 64);
        else if (k.op == OP_XOR)
            r.put_xor(kRing, k.op, 64, kDst, srcs(k.sources), k.extra);
        else
            r.put_pq(kRing, k.op, 64, kP, kQ, srcs(k.sources), coefs(k.sources), k.extra);
        r.go(2);
        r.expect_halted(CHANERR_CONTROL_ERR);
    }
}

TEST(Malformed, UnreadableSourceInTheExtendedDescriptor)
{
    Bad r;
    r.mem.add_hole(kHole, 0x10000);
    auto s = srcs(8);
    s[6] = kHole;
    r.put_xor(kRing, OP_XOR, 4096, kDst, s);
    r.go(2);
    // Every source of a piece is read before its result is written: nothing was.
    r.expect_halted(CHANERR_READ_DATA_ERR);
}

TEST(Malformed, UnwritableQ)
{
    Bad r;
    r.mem.add_hole(kHole, 0x10000);
    r.put_pq(kRing, OP_PQ, 4096, kP, kHole, srcs(4), coefs(4));
    r.go(2);
    // P of the failing piece goes out before Q fails.
    r.expect_halted(CHANERR_WRITE_DATA_ERR, {kP, 4096});
}

TEST(Malformed, CompletionAddressMisaligned)
{
    Bad r;
    r.wr(0, CHANCMP, kCompletion + 4, 4);
    r.put_desc(kRing, 64, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    r.go(1);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_COMPLETION_ADDR_ERR);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion + 4), 0u);
    r.recover();
}

TEST(Malformed, DmacountMovedBackwards)
{
    Config c = raid_config();
    c.bandwidth = 100000000; // 40 us per 4 KiB: the channel is still busy
    Rig r(c);
    r.setup(0, kCompletion);
    for (unsigned i = 0; i < 8; i++)
        r.put_desc(kRing + 64 * i, 4096, ctl::COMPL_WRITE, kSrc + 4096 * i, kDst + 4096 * i,
                   kRing + 64 * (i + 1));
    r.set_chainaddr(0, kRing);
    r.issue(0, 8);
    r.step();
    ASSERT_EQ(r.state(0), ChanState::Active);
    r.issue(0, 5);
    EXPECT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.chanerr(0), CHANERR_DESCRIPTOR_COUNT_ERR);
    r.run_until_idle();
    EXPECT_EQ(r.dev.stats(0).descriptors, 0u) << "nothing runs after the halt";
    // Forward across the 16-bit wrap is no error: 0xfff0 done, 0xfff8 issued, then 4.
    Rig f(raid_config());
    f.setup(0, kCompletion);
    f.put_desc(kRing, 1, ctl::NULL_DESC | ctl::COMPL_WRITE, 0, 0, kRing);
    f.set_chainaddr(0, kRing);
    f.issue(0, 0xfff0);
    f.run_until_idle();
    ASSERT_EQ(f.state(0), ChanState::Done);
    f.dev.timing().set_params({100000000, 0, 0, 0});
    f.put_desc(kRing, 4096, ctl::COMPL_WRITE, kSrc, kDst, kRing);
    f.issue(0, 0xfff8);
    f.step();
    ASSERT_EQ(f.state(0), ChanState::Active);
    f.issue(0, 4);
    EXPECT_EQ(f.state(0), ChanState::Active);
    EXPECT_EQ(f.chanerr(0), 0u);
}

TEST(Malformed, RegisterWritesOfTheWrongSize)
{
    struct Case {
        uint32_t offset;
        uint64_t value;
        unsigned size;
    };
    // A byte of DMACOUNT, CHANCMD merged with DMACOUNT, a 2-byte CHANCMD, the whole first
    // quadword: none acts, each halts the channel.
    const Case cases[] = {{DMACOUNT, 1, 1},
                          {DMACOUNT + 1, 0, 1},
                          {CHANCMD, CHANCMD_RESET | 1u << 16, 4},
                          {CHANCMD, CHANCMD_SUSPEND, 2},
                          {CHANCTRL, uint64_t{1} << 48 | CHANCTRL_INT_REARM, 8}};
    for (const Case& k : cases) {
        SCOPED_TRACE(k.offset);
        Bad r;
        r.put_desc(kRing, 64, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
        r.set_chainaddr(0, kRing);
        r.snapshot = r.mem.ram;
        r.wr(0, k.offset, k.value, k.size);
        r.run_until_idle();
        EXPECT_EQ(r.rd(0, DMACOUNT, 2), 0u) << "the doorbell did not ring";
        EXPECT_FALSE(r.log.guest_errors.empty());
        r.expect_halted(CHANERR_CHANCMD_ERR);
    }
    // The sizes Linux uses are accepted: writeb CHANCMD, writew DMACOUNT, two writel of
    // CHANCMP (done by setup()), writew CHANCTRL.
    Bad ok;
    ok.put_desc(kRing, 64, ctl::COMPL_WRITE, kSrc, kDst, kRing + 64);
    ok.go(1);
    EXPECT_EQ(ok.state(0), ChanState::Done);
}

} // namespace
} // namespace dmalab::ioat::testing
