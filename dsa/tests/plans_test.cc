// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans on dmalab-dsa (docs/faults.rst): each kind on a descriptor an engine starts,
// the selectors (WQ, operation, nth), holds the guest ends with a release, a batch's
// descriptors, migration of a held descriptor, and the race detector's marks around it.

#include <string>

#include "dmalab/dsa/faults.h"
#include "dmalab/le.h"
#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kSrc = 0x10000, kDst = 0x40000, kRec = 0x1000;
constexpr uint32_t kLen = 0x1000;
constexpr uint64_t kSecond = 1000000000;

Desc move(uint32_t n = kLen, uint32_t flags = kRecord | flag::RCI)
{
    Desc d(Opcode::Memmove, flags);
    d.completion(kRec).src(kSrc).dst(kDst).size(n).handle(1);
    return d;
}

// A rig with WQ 0 up, a patterned source and the plan `text` in force.
struct Planned {
    explicit Planned(const std::string& text, Observer* o = nullptr) : r(Config{}, o)
    {
        std::string err;
        ok = faults::apply_plan(inj, text.c_str(), fault_spec(r.config.wqs), "", &err);
        EXPECT_TRUE(ok) << err;
        r.dev.set_injector(&inj);
        r.bring_up();
        for (uint32_t i = 0; i < 2 * kLen; i++)
            r.at(kSrc)[i] = static_cast<uint8_t>(i * 13 + 5);
    }
    bool copied(uint32_t n = kLen) { return std::memcmp(r.at(kSrc), r.at(kDst), n) == 0; }
    bool untouched(uint32_t n = kLen)
    {
        const uint8_t* p = r.at(kDst);
        return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
    }
    // Runs timers until the modelled clock would pass `until`.
    void run_before(uint64_t until)
    {
        while (r.pending() && r.timers.next()->second < until)
            r.step();
    }

    faults::Injector inj;
    Rig r;
    bool ok = false;
};

std::string rule(const std::string& body)
{
    return R"({"rules": [{"name": "r", )" + body + "}]}";
}

std::string plan_error(const std::string& text, const char* id = "")
{
    std::string err;
    EXPECT_FALSE(faults::parse_plan(text, fault_spec(8), id, &err)) << text;
    return err;
}

TEST(Plans, DelayDataHoldsTheBytesAndTheRecord)
{
    Planned p(rule(R"("kind": "delay-data", "delay": "1s")"));
    p.r.submit(0, move());
    p.run_before(kSecond);
    EXPECT_TRUE(p.untouched()) << "nothing moves during the hold";
    EXPECT_EQ(p.r.record(kRec).status, 0);
    p.r.run_until_idle();
    EXPECT_GE(p.r.timers.now, kSecond);
    EXPECT_TRUE(p.copied());
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_EQ(p.inj.total(), 1u);
}

TEST(Plans, AReleaseEndsTheHoldAtOnce)
{
    Planned p(rule(R"("kind": "delay-data", "delay": "1s", "until": "release")"));
    p.r.submit(0, move());
    p.run_before(kSecond / 1000);
    EXPECT_TRUE(p.untouched());
    EXPECT_TRUE(p.inj.release(0));
    EXPECT_TRUE(p.r.dev.release(0)) << "the held copy was running";
    p.r.run_until_idle();
    EXPECT_LT(p.r.timers.now, kSecond / 100) << "done long before the hold's own end";
    EXPECT_TRUE(p.copied());
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_FALSE(p.r.dev.release(0)) << "nothing left to end";
}

TEST(Plans, DelayCompletionMovesTheBytesButHoldsTheRecordAndInterrupt)
{
    Planned p(rule(R"("kind": "delay-completion", "delay": "1s")"));
    p.r.submit(0, move());
    p.run_before(kSecond);
    EXPECT_TRUE(p.copied()) << "the data phase ran on time";
    EXPECT_EQ(p.r.record(kRec).status, 0);
    EXPECT_EQ(std::count(p.r.irq.raised.begin(), p.r.irq.raised.end(), 1u), 0);
    p.r.run_until_idle();
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_EQ(std::count(p.r.irq.raised.begin(), p.r.irq.raised.end(), 1u), 1);
}

TEST(Plans, FailGivesTheStatusAndMovesNothing)
{
    Planned p(rule(R"("kind": "fail", "status": 3)"));
    p.r.submit(0, move());
    p.r.run_until_idle();
    const Record rec = p.r.record(kRec);
    EXPECT_EQ(rec.status, 0x03) << "a read fault: bit 7 clear";
    EXPECT_EQ(rec.fault_addr, kSrc);
    EXPECT_EQ(rec.bytes, 0u);
    EXPECT_TRUE(p.untouched());
    EXPECT_EQ(p.r.dev.counters().descriptor_errors, 1u);
    EXPECT_EQ(std::count(p.r.irq.raised.begin(), p.r.irq.raised.end(), 1u), 1);
}

TEST(Plans, FailOnANoopToo)
{
    Planned p(rule(R"("kind": "fail", "status": "0x20", "op": "noop")"));
    Desc d(Opcode::Noop, kRecord);
    d.completion(kRec);
    const Record rec = p.r.run_desc(0, d, kRec);
    EXPECT_EQ(rec.code(), Status::HwError);
}

TEST(Plans, CorruptXorsTheLastByteWritten)
{
    Planned p(rule(R"("kind": "corrupt", "xor": "0x5a")"));
    p.r.submit(0, move());
    p.r.run_until_idle();
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_TRUE(p.copied(kLen - 1));
    EXPECT_EQ(p.r.at(kDst)[kLen - 1], p.r.at(kSrc)[kLen - 1] ^ 0x5a);
}

TEST(Plans, ShortenMovesThePrefixAndSucceeds)
{
    Planned p(rule(R"("kind": "shorten", "bytes": 100)"));
    p.r.submit(0, move());
    p.r.run_until_idle();
    const Record rec = p.r.record(kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.bytes, 0u) << "as if whole";
    EXPECT_TRUE(p.copied(100));
    EXPECT_EQ(p.r.at(kDst)[100], 0);
    EXPECT_EQ(p.r.dev.counters().bytes, 100u);
}

TEST(Plans, ShortenToNothingSucceedsAtOnce)
{
    // A cut of 0 bytes: nothing moves, and the descriptor completes as at any other cut
    // (it used to wait for bytes it would never move, its engine stepping for ever).
    Planned p(rule(R"("kind": "shorten", "bytes": 0)"));
    p.r.submit(0, move());
    for (unsigned i = 0; i < 100 && p.r.pending(); i++)
        p.r.step();
    EXPECT_FALSE(p.r.pending()) << "the engine still steps";
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_TRUE(p.untouched());
    EXPECT_EQ(p.r.dev.counters().bytes, 0u);
}

TEST(Plans, ACopyDownTakesNoShortenNorCorrupt)
{
    // Its destination inside its source, the copy runs from the end: no prefix to cut at,
    // and its last byte is not the last one it writes. The rules pass it by.
    Planned p(R"({"rules": [{"name": "cut", "kind": "shorten", "bytes": 100},
                            {"name": "xor", "kind": "corrupt", "xor": 255}]})");
    std::vector<uint8_t> want(p.r.at(kSrc), p.r.at(kSrc) + kLen);
    Desc d = move();
    d.dst(kSrc + 0x100);
    p.r.submit(0, d);
    p.r.run_until_idle();
    const Record rec = p.r.record(kRec);
    EXPECT_EQ(rec.code(), Status::Success);
    EXPECT_EQ(rec.result, 1u) << "a copy down";
    EXPECT_TRUE(std::equal(want.begin(), want.end(), p.r.at(kSrc + 0x100)));
    EXPECT_EQ(p.r.dev.counters().bytes, kLen);
}

TEST(Plans, DropInterruptKeepsTheRecord)
{
    Planned p(rule(R"("kind": "drop-interrupt")"));
    p.r.submit(0, move());
    p.r.run_until_idle();
    EXPECT_EQ(p.r.record(kRec).code(), Status::Success);
    EXPECT_EQ(std::count(p.r.irq.raised.begin(), p.r.irq.raised.end(), 1u), 0);
}

TEST(Plans, SelectorsPickTheOperationAndTheNth)
{
    Planned p(rule(R"("kind": "fail", "status": 3, "op": "memmove", "nth": 2)"));
    Desc f(Opcode::Fill, kRecord);
    f.completion(kRec).word(2, 0x1111111111111111).dst(kDst).size(64);
    EXPECT_EQ(p.r.run_desc(0, f, kRec).code(), Status::Success) << "not a memmove";
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::Success) << "the first";
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::PageFaultNoBof) << "the second";
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::Success) << "count 1 with nth";
}

TEST(Plans, AnotherWqIsNotHit)
{
    Planned p(rule(R"("kind": "fail", "status": 3, "wq": 1)"));
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::Success);
    EXPECT_EQ(p.inj.total(), 0u);
}

TEST(Plans, ADisarmedRuleWaitsForItsArm)
{
    Planned p(rule(R"("kind": "fail", "status": 3, "armed": false, "nth": 1)"));
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::Success);
    EXPECT_TRUE(p.inj.arm(0, true));
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::PageFaultNoBof);
    EXPECT_EQ(p.r.run_desc(0, move(), kRec).code(), Status::Success);
}

TEST(Plans, ABatchsDescriptorsTakeFaultsNotTheBatch)
{
    Planned p(rule(R"("kind": "fail", "status": 3, "nth": 2)"));
    constexpr uint64_t kList = 0x80000, kSubRec = 0x2000;
    for (unsigned i = 0; i < 3; i++) {
        Desc d(Opcode::Memmove, kRecord);
        d.completion(kSubRec + 32 * i).src(kSrc).dst(kDst + kLen * i).size(64);
        for (unsigned k = 0; k < kDescriptorWords; k++)
            dmalab::store_le(p.r.at(kList + 64 * i + 8 * k), d.raw.word[k], 8);
    }
    Desc b(Opcode::Batch, kRecord);
    b.completion(kRec).src(kList).size(3);
    EXPECT_EQ(p.r.run_desc(0, b, kRec).code(), Status::BatchFail);
    EXPECT_EQ(p.r.record(kSubRec).code(), Status::Success);
    EXPECT_EQ(p.r.record(kSubRec + 32).code(), Status::PageFaultNoBof);
    EXPECT_EQ(p.r.record(kSubRec + 64).code(), Status::Success);
}

TEST(Plans, AHeldCopyMigratesWithItsHold)
{
    const std::string text = rule(R"("kind": "reorder", "delay": "1s", "until": "release")");
    Planned a(text);
    a.r.submit(0, move());
    a.run_before(kSecond / 1000);
    StateWriter w;
    a.r.dev.save(w);
    Planned b(text);
    b.r.timers.now = a.r.timers.now;
    StateReader rd({w.bytes.data(), w.bytes.size()});
    ASSERT_TRUE(b.r.dev.load(rd));
    std::memcpy(b.r.at(0), a.r.at(0), 1u << 20);
    EXPECT_TRUE(b.r.dev.release(0)) << "the destination ends the hold it was given";
    b.r.run_until_idle();
    EXPECT_LT(b.r.timers.now, kSecond / 100);
    EXPECT_TRUE(b.copied());
}

TEST(Plans, TheFailStatusMustBeOneTheModelGives)
{
    EXPECT_NE(plan_error(rule(R"("kind": "fail", "status": 17)")).find("0x3, 0x20"),
              std::string::npos);
    EXPECT_NE(plan_error(rule(R"("kind": "fail", "chanerr": 1)")).find("\"status\""),
              std::string::npos);
    // Another model's kind is refused where the rule names this device.
    EXPECT_NE(plan_error(rule(R"("kind": "drop-invalidation", "device": "dsa0")"), "dsa0")
                  .find("not a fault of dmalab-dsa"),
              std::string::npos);
    EXPECT_NE(plan_error(rule(R"("kind": "fail", "status": 3, "wq": 8)")).find("below 8"),
              std::string::npos);
    EXPECT_NE(plan_error(rule(R"("kind": "fail", "status": 3, "op": "xor")")).find("memmove"),
              std::string::npos);
}

// The race detector's marks: a copy is marked while it runs and unmarked before its record.
class Marks final : public Observer
{
  public:
    void started(unsigned engine, uint64_t key, uint64_t src, uint64_t dst, uint64_t len) override
    {
        log += "start " + std::to_string(engine) + " " + std::to_string(key) + " " +
               std::to_string(src) + " " + std::to_string(dst) + " " + std::to_string(len) + ";";
        busy = true;
    }
    void ended(unsigned) override
    {
        if (busy)
            log += "end;";
        busy = false;
    }
    void record(unsigned, uint64_t, Status, bool) override
    {
        log += busy ? "RECORD-BUSY;" : "record;";
    }
    std::string log;
    bool busy = false;
};

TEST(Plans, ACopyIsMarkedUntilJustBeforeItsRecord)
{
    Marks m;
    Planned p(rule(R"("kind": "delay-data", "delay": "1ms")"), &m);
    p.r.submit(0, move());
    p.run_before(kSecond / 2000);
    EXPECT_TRUE(m.busy) << "marked while held";
    p.r.run_until_idle();
    EXPECT_EQ(m.log, "start 0 4096 65536 262144 4096;end;record;");
    Desc f(Opcode::Fill, kRecord);
    f.completion(kRec).word(2, 1).dst(kDst).size(64);
    m.log.clear();
    p.r.run_desc(0, f, kRec);
    EXPECT_EQ(m.log, "record;") << "a fill has no source: not marked";
}

TEST(Plans, AnAbortEndsTheMark)
{
    Marks m;
    Planned p(rule(R"("kind": "delay-data", "delay": "1s")"), &m);
    p.r.submit(0, move());
    p.run_before(kSecond / 2000);
    ASSERT_TRUE(m.busy);
    p.r.run(Cmd::AbortWq, wq_operand(0));
    EXPECT_FALSE(m.busy);
    EXPECT_EQ(p.r.record(kRec).status, 0) << "an aborted descriptor writes no record";
}

} // namespace
} // namespace dmalab::dsa::testing
