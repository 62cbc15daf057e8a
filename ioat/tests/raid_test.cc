// SPDX-License-Identifier: GPL-2.0-or-later
// Fill, XOR and PQ with the layouts Linux's ioatdma builds (drivers/dma/ioat/prep.c, v6.1),
// against a reference computed here: every source count, the extended and super extended
// descriptors, disabled results, validation results, and async_tx's continuation.

#include "rig.h"

namespace dmalab::ioat::testing
{
namespace
{

// GF(2^8) with the RAID-6 polynomial 0x11d, written independently of the model's table.
uint8_t gf_mul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;
    while (b) {
        if (b & 1)
            r ^= a;
        a = static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
        b >>= 1;
    }
    return r;
}

constexpr uint32_t kBlock = 4096;
constexpr uint64_t kP = 0x800000;
constexpr uint64_t kQ = 0x900000;
constexpr uint64_t kSed = 0x20000;

std::vector<uint64_t> sources(unsigned n, uint64_t base = kSrc, uint64_t stride = 0x10000)
{
    std::vector<uint64_t> s;
    for (unsigned i = 0; i < n; i++)
        s.push_back(base + i * stride);
    return s;
}

std::vector<uint8_t> ref_p(Rig& r, const std::vector<uint64_t>& srcs, size_t len)
{
    std::vector<uint8_t> p(len, 0);
    for (uint64_t s : srcs)
        for (size_t i = 0; i < len; i++)
            p[i] ^= r.mem.ram[s + i];
    return p;
}

std::vector<uint8_t> ref_q(Rig& r, const std::vector<uint64_t>& srcs,
                           const std::vector<uint8_t>& coef, size_t len)
{
    std::vector<uint8_t> q(len, 0);
    for (size_t k = 0; k < srcs.size(); k++)
        for (size_t i = 0; i < len; i++)
            q[i] ^= gf_mul(coef[k], r.mem.ram[srcs[k] + i]);
    return q;
}

std::vector<uint8_t> coefs(unsigned n, uint8_t seed = 3)
{
    std::vector<uint8_t> c;
    for (unsigned i = 0; i < n; i++)
        c.push_back(static_cast<uint8_t>(seed + 37 * i));
    return c;
}

void fill_sources(Rig& r, const std::vector<uint64_t>& srcs, size_t len)
{
    for (size_t i = 0; i < srcs.size(); i++)
        r.fill(srcs[i], len, static_cast<uint8_t>(11 * i + 1));
}

// Runs `count` descriptors from kRing on channel 0, set up as Linux sets channels up.
void run(Rig& r, uint16_t count)
{
    r.set_chainaddr(0, kRing);
    r.issue(0, count);
    r.run_until_idle();
}

TEST(Raid, GfReferenceKnownValues)
{
    EXPECT_EQ(gf_mul(2, 0x80), 0x1d);
    EXPECT_EQ(gf_mul(0x1d, 1), 0x1d);
    uint8_t g = 1;
    for (int i = 0; i < 255; i++)
        g = gf_mul(g, 2);
    EXPECT_EQ(g, 1) << "2 generates the multiplicative group";
}

TEST(Raid, XorOfTwoToEightSourcesWithItsNullDescriptor)
{
    for (unsigned n = 2; n <= kMaxXorSources; n++) {
        Rig r(raid_config());
        r.setup(0, kCompletion);
        auto srcs = sources(n);
        fill_sources(r, srcs, kBlock);
        uint64_t null_at = r.put_xor(kRing, OP_XOR, kBlock, kDst, srcs);
        r.put_null(null_at);
        uint16_t count = static_cast<uint16_t>((null_at - kRing) / 64 + 1);
        run(r, count);
        EXPECT_EQ(r.state(0), ChanState::Done) << n;
        EXPECT_EQ(r.chanerr(0), 0u) << n;
        EXPECT_EQ(r.bytes(kDst, kBlock), ref_p(r, srcs, kBlock)) << n << " sources";
        // The completion names the null descriptor; the XOR's completion named its base.
        EXPECT_EQ(r.completed_addr(0), null_at);
        EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Xor)].descriptors, 1u);
        EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Xor)].bytes, kBlock);
        EXPECT_EQ(r.dev.stats(0).descriptors, 2u) << "an extended descriptor is no operation";
        EXPECT_EQ(r.mem.outstanding, 0);
    }
}

TEST(Raid, XorCompletionNamesTheBaseDescriptorNotItsExtension)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    auto srcs = sources(7);
    fill_sources(r, srcs, 512);
    r.put_xor(kRing, OP_XOR, 512, kDst, srcs, ctl::COMPL_WRITE | ctl::INT_EN);
    run(r, 2);
    EXPECT_EQ(r.completed_addr(0), kRing);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | static_cast<uint64_t>(ChanState::Done));
    EXPECT_EQ(r.irq.raised, std::vector<unsigned>{0});
}

TEST(Raid, XorValidateMatchesAndMismatches)
{
    for (bool wrong : {false, true}) {
        Rig r(raid_config());
        r.setup(0, kCompletion);
        auto srcs = sources(6);
        fill_sources(r, srcs, kBlock);
        auto parity = ref_p(r, srcs, kBlock);
        if (wrong)
            parity[1234] ^= 0x40;
        std::copy(parity.begin(), parity.end(), r.mem.ram.begin() + kDst);
        auto before = r.mem.ram;
        // ioat_prep_xor_val(): the parity is the descriptor's destination, read not written.
        uint64_t null_at = r.put_xor(kRing, OP_XOR_VAL, kBlock, kDst, srcs);
        r.put_null(null_at);
        before = r.mem.ram;
        run(r, 3);
        if (!wrong) {
            EXPECT_EQ(r.state(0), ChanState::Done);
            EXPECT_EQ(r.chanerr(0), 0u);
            continue;
        }
        EXPECT_EQ(r.state(0), ChanState::Halted);
        EXPECT_EQ(r.chanerr(0), CHANERR_XOR_P_OR_CRC_ERR);
        EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), static_cast<uint64_t>(ChanState::Halted));
        before[kCompletion] = r.mem.ram[kCompletion];
        EXPECT_TRUE(r.mem.ram == before) << "a validation writes nothing but its status";
        // ioat_eh(): CHANERR written back, the chain restarted after the failed operation.
        r.wr(0, CHANERR, r.chanerr(0), 4);
        r.set_chainaddr(0, null_at);
        r.issue(0, 1);
        r.run_until_idle();
        EXPECT_EQ(r.state(0), ChanState::Done);
        EXPECT_EQ(r.completed_addr(0), null_at);
    }
}

// Two wrong parities in a row, the second submitted while ioatdma's error handler ran (a
// dmaengine client may submit from the first one's callback, which ioat_eh() invokes before
// it restarts the channel): the restart's chain begins with the second, and it fails before
// any descriptor of the new chain completed. Its halt status must name no descriptor. Linux
// counts on that (__cleanup(), drivers/dma/ioat/dma.c: at a restart the completion address
// is 0, and a 0 is skipped). A status naming the descriptor before the first failure lies
// behind ioatdma's tail, and __cleanup() stops at BUG_ON(active && !seen_current).
TEST(Raid, FailureFirstAfterARestartNamesNoDescriptor)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    auto srcs = sources(3);
    fill_sources(r, srcs, kBlock);
    auto parity = ref_p(r, srcs, kBlock);
    parity[7] ^= 0x5a;
    std::copy(parity.begin(), parity.end(), r.mem.ram.begin() + kDst);
    // A copy that completes, then two validations of the wrong parity.
    r.put_desc(kRing, 64, kCopyIrq, kSrc, kP, kRing + 64);
    uint64_t second = r.put_xor(kRing + 64, OP_XOR_VAL, kBlock, kDst, srcs, kCopyIrq);
    uint64_t after = r.put_xor(second, OP_XOR_VAL, kBlock, kDst, srcs, kCopyIrq);
    r.put_null(after);
    run(r, 2);
    ASSERT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), kRing | static_cast<uint64_t>(ChanState::Halted))
        << "the first halt names the last descriptor that completed";
    // ioat_eh(): the failed descriptor marked complete by software, CHANERR written back, the
    // chain restarted at the second validation, which was pending by then.
    r.mem.put<uint64_t>(kCompletion, kRing + 64);
    r.wr(0, CHANERR, r.chanerr(0), 4);
    r.set_chainaddr(0, second);
    r.issue(0, 1);
    r.run_until_idle();
    ASSERT_EQ(r.state(0), ChanState::Halted);
    EXPECT_EQ(r.completed_addr(0), 0u);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), static_cast<uint64_t>(ChanState::Halted))
        << "the restart's first descriptor failed: no descriptor of its chain completed";
    // ioat_eh() again: restarted after it, the chain completes and names its own descriptor.
    r.wr(0, CHANERR, r.chanerr(0), 4);
    r.set_chainaddr(0, after);
    r.issue(0, 1);
    r.run_until_idle();
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.mem.get<uint64_t>(kCompletion), after | static_cast<uint64_t>(ChanState::Done));
}

TEST(Raid, PqOfTwoToEightSourcesAndDisabledResults)
{
    for (unsigned n = 2; n <= kMaxPqSources; n++) {
        for (uint32_t disable : {0u, ctl::P_DISABLE, ctl::Q_DISABLE}) {
            Rig r(raid_config());
            r.setup(0, kCompletion);
            auto srcs = sources(n);
            auto c = coefs(n);
            fill_sources(r, srcs, kBlock);
            // ioat_prep_pq(): a disabled result's address is the other one.
            uint64_t p = disable == ctl::P_DISABLE ? kQ : kP;
            uint64_t q = disable == ctl::Q_DISABLE ? kP : kQ;
            uint64_t end = r.put_pq(kRing, OP_PQ, kBlock, p, q, srcs, c,
                                    disable | ctl::COMPL_WRITE | ctl::INT_EN);
            run(r, static_cast<uint16_t>((end - kRing) / 64));
            ASSERT_EQ(r.state(0), ChanState::Done) << n;
            if (disable != ctl::P_DISABLE) {
                EXPECT_EQ(r.bytes(kP, kBlock), ref_p(r, srcs, kBlock)) << n;
            }
            if (disable != ctl::Q_DISABLE) {
                EXPECT_EQ(r.bytes(kQ, kBlock), ref_q(r, srcs, c, kBlock)) << n;
            }
            EXPECT_EQ(r.completed_addr(0), kRing);
        }
    }
}

TEST(Raid, PqValidateReportsPAndQSeparately)
{
    for (unsigned which : {0u, 1u, 2u, 3u}) {
        Rig r(raid_config());
        r.setup(0, kCompletion);
        auto srcs = sources(5);
        auto c = coefs(5);
        fill_sources(r, srcs, kBlock);
        auto p = ref_p(r, srcs, kBlock);
        auto q = ref_q(r, srcs, c, kBlock);
        if (which & 1)
            p[0] ^= 1;
        if (which & 2)
            q[kBlock - 1] ^= 1;
        std::copy(p.begin(), p.end(), r.mem.ram.begin() + kP);
        std::copy(q.begin(), q.end(), r.mem.ram.begin() + kQ);
        r.put_pq(kRing, OP_PQ_VAL, kBlock, kP, kQ, srcs, c, ctl::COMPL_WRITE | ctl::INT_EN);
        run(r, 2);
        uint32_t want =
            ((which & 1) ? CHANERR_XOR_P_OR_CRC_ERR : 0) | ((which & 2) ? CHANERR_XOR_Q_ERR : 0);
        EXPECT_EQ(r.chanerr(0), want) << which;
        EXPECT_EQ(r.state(0), want ? ChanState::Halted : ChanState::Done) << which;
    }
}

TEST(Raid, SixteenSourcePqUsesTheSuperExtendedDescriptor)
{
    for (unsigned n = kMinPq16Sources; n <= kMaxSources; n++) {
        Rig r(raid_config());
        r.setup(0, kCompletion);
        auto srcs = sources(n, kSrc, 0x8000);
        auto c = coefs(n, 7);
        fill_sources(r, srcs, kBlock);
        // Linux's SED pool for nine sources holds 64 bytes: the second half is not read.
        if (n == kMinPq16Sources)
            r.mem.add_hole(kSed + 64, 64);
        r.put_pq(kRing, OP_PQ_16S, kBlock, kP, kQ, srcs, c, ctl::COMPL_WRITE | ctl::INT_EN, kSed);
        run(r, 1);
        ASSERT_EQ(r.state(0), ChanState::Done) << n << " chanerr " << r.chanerr(0);
        EXPECT_EQ(r.bytes(kP, kBlock), ref_p(r, srcs, kBlock)) << n;
        EXPECT_EQ(r.bytes(kQ, kBlock), ref_q(r, srcs, c, kBlock)) << n;
        EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Pq16)].descriptors, 1u);
    }
}

TEST(Raid, SixteenSourceValidate)
{
    for (bool wrong : {false, true}) {
        Rig r(raid_config());
        r.setup(0, kCompletion);
        auto srcs = sources(16, kSrc, 0x8000);
        auto c = coefs(16, 9);
        fill_sources(r, srcs, kBlock);
        auto q = ref_q(r, srcs, c, kBlock);
        auto p = ref_p(r, srcs, kBlock);
        if (wrong)
            q[77] ^= 0x80;
        std::copy(p.begin(), p.end(), r.mem.ram.begin() + kP);
        std::copy(q.begin(), q.end(), r.mem.ram.begin() + kQ);
        r.put_pq(kRing, OP_PQ_VAL_16S, kBlock, kP, kQ, srcs, c, ctl::COMPL_WRITE, kSed);
        run(r, 1);
        EXPECT_EQ(r.chanerr(0), wrong ? CHANERR_XOR_Q_ERR : 0u);
    }
}

// async_tx continues a PQ over more sources than one descriptor takes by feeding P and Q
// back in: P with coefficient 0, Q with 1 and Q with 0 (ioat_prep_pq, DMA_PREP_CONTINUE).
TEST(Raid, ContinuationWithResultsAsSources)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    auto all = sources(8);
    auto c = coefs(8, 5);
    fill_sources(r, all, kBlock);
    std::vector<uint64_t> first(all.begin(), all.begin() + 4), rest(all.begin() + 4, all.end());
    std::vector<uint8_t> c1(c.begin(), c.begin() + 4), c2(c.begin() + 4, c.end());
    uint64_t at = r.put_pq(kRing, OP_PQ, kBlock, kP, kQ, first, c1);
    rest.insert(rest.end(), {kP, kQ, kQ});
    c2.insert(c2.end(), {0, 1, 0});
    uint64_t end = r.put_pq(at, OP_PQ, kBlock, kP, kQ, rest, c2, ctl::COMPL_WRITE);
    run(r, static_cast<uint16_t>((end - kRing) / 64));
    ASSERT_EQ(r.state(0), ChanState::Done);
    // The second descriptor has 4 + 3 sources, P and Q among them, read before written.
    EXPECT_EQ(r.bytes(kP, kBlock), ref_p(r, all, kBlock));
    EXPECT_EQ(r.bytes(kQ, kBlock), ref_q(r, all, c, kBlock));
}

// The RAID-6 recovery path multiplies one source: P disabled, the source twice with its
// coefficient and 0 (ioat_prep_pq's single-source case).
TEST(Raid, SingleSourceMultiply)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    r.fill(kSrc, kBlock, 9);
    r.put_pq(kRing, OP_PQ, kBlock, kQ, kQ, {kSrc, kSrc}, {0x8e, 0}, ctl::P_DISABLE);
    run(r, 1);
    auto q = r.bytes(kQ, kBlock);
    for (size_t i = 0; i < kBlock; i++)
        ASSERT_EQ(q[i], gf_mul(0x8e, r.mem.ram[kSrc + i])) << i;
}

TEST(Raid, UnalignedRangesAcrossPagesAndWithoutDirectMapping)
{
    for (int variant = 0; variant < 3; variant++) {
        Rig r(raid_config());
        r.mem.mappable = variant != 1;
        r.mem.map_limit = variant == 2 ? 100 : SIZE_MAX;
        r.setup(0, kCompletion);
        auto srcs = std::vector<uint64_t>{kSrc + 3, kSrc + 0x10000 + 4095, kSrc + 0x20000 + 77,
                                          kSrc + 0x30000 + 2048};
        auto c = coefs(4, 1);
        const uint32_t len = 3 * 4096 + 123;
        fill_sources(r, srcs, len);
        r.put_pq(kRing, OP_PQ, len, kP + 5, kQ + 4000, srcs, c);
        run(r, 2);
        ASSERT_EQ(r.state(0), ChanState::Done);
        EXPECT_EQ(r.bytes(kP + 5, len), ref_p(r, srcs, len)) << variant;
        EXPECT_EQ(r.bytes(kQ + 4000, len), ref_q(r, srcs, c, len)) << variant;
        EXPECT_EQ(r.mem.outstanding, 0);
    }
}

TEST(Raid, FillRepeatsItsPattern)
{
    Rig r(raid_config());
    r.setup(0, kCompletion);
    const uint64_t pattern = 0x0123456789abcdefull;
    const uint32_t len = 5000;
    DmaDescriptor d{};
    d.size = len;
    d.ctl = uint32_t{OP_FILL} << ctl::OP_SHIFT | ctl::COMPL_WRITE;
    d.src_addr = pattern;
    d.dst_addr = kDst + 3;
    d.next = kRing + 64;
    r.mem.put(kRing, d);
    run(r, 1);
    ASSERT_EQ(r.state(0), ChanState::Done);
    for (uint32_t i = 0; i < len; i++)
        ASSERT_EQ(r.mem.ram[kDst + 3 + i], static_cast<uint8_t>(pattern >> (8 * (i % 8)))) << i;
    EXPECT_EQ(r.mem.ram[kDst + 2], 0);
    EXPECT_EQ(r.mem.ram[kDst + 3 + len], 0);
    EXPECT_EQ(r.dev.stats(0).ops[static_cast<unsigned>(OpKind::Fill)].bytes, len);
}

// With DWBES, a PQ validate's result goes into the descriptor, and Linux masks the CHANERR
// bits (ioat_intr_quirk): the channel goes on.
TEST(Raid, WriteBackErrorStatus)
{
    Config c = raid_config();
    c.dmacap |= CAP_DWBES;
    Rig r(c);
    r.setup(0, kCompletion);
    r.wr(0, CHANERR_MSK, CHANERR_XOR_P_OR_CRC_ERR | CHANERR_XOR_Q_ERR, 4);
    auto srcs = sources(3);
    auto cf = coefs(3);
    fill_sources(r, srcs, kBlock);
    auto p = ref_p(r, srcs, kBlock);
    p[9] ^= 1;
    std::copy(p.begin(), p.end(), r.mem.ram.begin() + kP);
    auto q = ref_q(r, srcs, cf, kBlock);
    std::copy(q.begin(), q.end(), r.mem.ram.begin() + kQ);
    uint64_t next =
        r.put_pq(kRing, OP_PQ_VAL, kBlock, kP, kQ, srcs, cf, ctl::WB_EN | ctl::COMPL_WRITE);
    // P checked against Q's contents: a mismatch too, masked, without WB_EN.
    r.put_pq(next, OP_PQ_VAL, kBlock, kQ, kQ, srcs, cf, ctl::Q_DISABLE | ctl::COMPL_WRITE);
    run(r, 2);
    EXPECT_EQ(r.state(0), ChanState::Done);
    EXPECT_EQ(r.chanerr(0), 0u);
    uint32_t first = r.mem.get<uint32_t>(kRing);
    EXPECT_EQ(first, kBlock | dwbes::WBES | dwbes::P_VAL_ERR);
    // Without WB_EN nothing is written back.
    EXPECT_EQ(r.mem.get<uint32_t>(next), kBlock);
}

TEST(Raid, OperationsTheDeviceDoesNotAdvertiseAreControlErrors)
{
    struct Case {
        uint32_t caps;
        uint8_t op;
    };
    for (Case k : {Case{0, OP_XOR}, Case{CAP_PQ, OP_XOR}, Case{CAP_XOR, OP_PQ},
                   Case{CAP_PQ, OP_PQ_16S}, Case{CAP_XOR | CAP_PQ, OP_FILL}}) {
        Config c = rig_config();
        c.dmacap = k.caps;
        Rig r(c);
        r.setup(0, kCompletion);
        r.put_pq(kRing, OP_PQ, 64, kP, kQ, {kSrc, kSrc + 64}, {1, 2});
        uint64_t w0 = r.mem.get<uint64_t>(kRing);
        w0 = (w0 & ~(uint64_t{0xff} << 56)) | uint64_t{k.op} << 56;
        r.mem.put(kRing, w0);
        run(r, 1);
        EXPECT_EQ(r.chanerr(0), CHANERR_CONTROL_ERR) << std::hex << int(k.op);
        EXPECT_EQ(r.mem.get<uint64_t>(kP), 0u);
    }
}

} // namespace
} // namespace dmalab::ioat::testing
