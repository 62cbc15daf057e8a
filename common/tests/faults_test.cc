// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans: the file format, every kind of bad input, and the injector's selection.

#include <gtest/gtest.h>

#include "../testing/fake_memory.h"
#include "dmalab/fault_doorbell.h"
#include "dmalab/faults.h"

namespace dmalab::faults
{
namespace
{

constexpr uint32_t bit(Kind k)
{
    return 1u << static_cast<unsigned>(k);
}

// A model shaped like dmalab-ioat with four channels, and one shaped like dmalab-vtd.
ModelSpec engine()
{
    ModelSpec s;
    s.type = "engine";
    s.kinds = bit(Kind::DelayData) | bit(Kind::DelayCompletion) | bit(Kind::Fail) |
              bit(Kind::Corrupt) | bit(Kind::Shorten);
    s.unit_selector = "channel";
    s.unit_limit = 4;
    s.ops = {{"copy", 0}, {"fill", 1}};
    s.chanerr_mask = 0x7ffff;
    s.max_delay_ns = uint64_t{1} << 50;
    s.release_kinds = bit(Kind::DelayData);
    return s;
}

ModelSpec remapper()
{
    ModelSpec s;
    s.type = "remapper";
    s.kinds =
        bit(Kind::DelayInvalidation) | bit(Kind::DropInvalidation) | bit(Kind::TranslationFault);
    s.unit_selector = "requester";
    s.unit_limit = 0x10000;
    s.unit_kinds = bit(Kind::TranslationFault);
    s.ops = {{"read", 0}, {"write", 1}};
    s.reasons = {0x5, 0x6};
    s.max_delay_ns = uint64_t{1} << 50;
    return s;
}

Plan parse_ok(std::string_view text, const ModelSpec& spec = engine(), std::string_view id = "e0")
{
    std::string err;
    auto p = parse_plan(text, spec, id, &err);
    EXPECT_TRUE(p) << err;
    return p ? *p : Plan{};
}

std::string parse_error(std::string_view text, const ModelSpec& spec = engine())
{
    std::string err;
    EXPECT_FALSE(parse_plan(text, spec, "e0", &err)) << text;
    return err;
}

Occasion on(uint32_t unit, uint64_t addr = 0x1000, uint64_t len = 64, uint8_t op = 0)
{
    return Occasion{
        ~0u, unit, op, addr, {addr, addr + 0x100000}, {addr + len, addr + 0x100000 + len}};
}

// The rule names that fire on each of `n` occasions from `make`, one string per occasion.
template <typename F> std::vector<std::string> run(Injector& inj, unsigned n, F make)
{
    std::vector<std::string> out;
    for (unsigned i = 0; i < n; i++) {
        std::string fired;
        inj.decide(make(i), i,
                   [&](const Rule& r) { fired += (fired.empty() ? "" : ",") + r.name; });
        out.push_back(fired);
    }
    return out;
}

TEST(FaultPlan, ReadsARuleWithEverySelector)
{
    Plan p = parse_ok(R"({
      "seed": "0x2a", "comment": "a test plan",
      "rules": [{"name": "late", "kind": "delay-data", "delay": "5ms", "channel": 2,
                 "op": "fill", "range": ["0x1000", 8192], "nth": 3, "count": 2,
                 "probability": 0.5, "armed": false}]})");
    EXPECT_EQ(p.seed, 42u);
    ASSERT_EQ(p.rules.size(), 1u);
    const Rule& r = p.rules[0];
    EXPECT_EQ(r.name, "late");
    EXPECT_EQ(r.kind, Kind::DelayData);
    EXPECT_EQ(r.ns, 5000000u);
    EXPECT_EQ(r.unit, 2u);
    EXPECT_EQ(r.op, 1);
    EXPECT_EQ(r.range_start, 0x1000u);
    EXPECT_EQ(r.range_end, 0x2000u);
    EXPECT_EQ(r.skip, 2u);
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(r.threshold, uint64_t{1} << 63);
    EXPECT_FALSE(r.armed);
}

TEST(FaultPlan, DefaultsAndDurations)
{
    Plan p = parse_ok(R"({"rules": [
      {"kind": "delay-completion", "delay": 7},
      {"kind": "delay-completion", "delay": "7us", "nth": 2},
      {"kind": "delay-completion", "delay": "1s"},
      {"kind": "fail", "chanerr": "0x10"},
      {"kind": "corrupt", "xor": 255},
      {"kind": "shorten", "bytes": 0}]})");
    ASSERT_EQ(p.rules.size(), 6u);
    EXPECT_EQ(p.rules[0].name, "rule0");
    EXPECT_EQ(p.rules[0].ns, 7u);
    EXPECT_EQ(p.rules[0].count, UINT64_MAX); // no "nth": every match
    EXPECT_EQ(p.rules[0].threshold, 0u);
    EXPECT_TRUE(p.rules[0].armed);
    EXPECT_EQ(p.rules[1].ns, 7000u);
    EXPECT_EQ(p.rules[1].count, 1u); // "nth" alone: that one match
    EXPECT_EQ(p.rules[2].ns, 1000000000u);
    EXPECT_EQ(p.rules[3].chanerr, 0x10u);
    EXPECT_EQ(p.rules[4].xor_mask, 0xff);
    EXPECT_EQ(p.rules[5].bytes, 0u);
}

TEST(FaultPlan, TakesOnlyThisDevicesRules)
{
    const char* text = R"({"rules": [
      {"name": "a", "kind": "delay-data", "delay": 1},
      {"name": "b", "kind": "delay-data", "delay": 1, "device": "e1"},
      {"name": "c", "kind": "drop-invalidation"},
      {"name": "d", "kind": "translation-fault", "reason": 5, "device": "r0", "requester": "00:03.1"},
      {"name": "e", "kind": "fail", "chanerr": 1, "device": "e0"}]})";
    Plan e0 = parse_ok(text);
    ASSERT_EQ(e0.rules.size(), 2u);
    EXPECT_EQ(e0.rules[0].name, "a");
    EXPECT_EQ(e0.rules[1].name, "e");
    EXPECT_EQ(e0.rules[1].index, 4u);
    EXPECT_EQ(e0.file_rules, 5u);
    Plan r0 = parse_ok(text, remapper(), "r0");
    ASSERT_EQ(r0.rules.size(), 2u);
    EXPECT_EQ(r0.rules[0].name, "c");
    EXPECT_EQ(r0.rules[1].unit, 0x19u);
    EXPECT_EQ(parse_ok(text, remapper(), "r1").rules.size(), 1u);
}

TEST(FaultPlan, RefusesBadPlansNamingRuleAndMember)
{
    EXPECT_EQ(parse_error("[]"), "line 1, column 1: the plan must be a JSON object with \"rules\"");
    EXPECT_EQ(parse_error("{}"), "line 1, column 1: \"rules\" must be an array of rules");
    EXPECT_EQ(parse_error(R"({"rules": [], "sed": 1})"),
              "line 1, column 22: unknown member \"sed\" (a plan has \"seed\", \"rules\" and "
              "\"comment\")");
    EXPECT_EQ(parse_error(R"({"seed": -1, "rules": []})"),
              "line 1, column 10: \"seed\" must be an unsigned 64-bit integer");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "explode"}]})"),
              "line 1, column 21: rule \"rule0\": unknown kind; the kinds are delay-data, "
              "delay-completion, reorder, fail, corrupt, shorten, drop-interrupt, "
              "delay-invalidation, drop-invalidation, translation-fault");
    EXPECT_EQ(parse_error(R"({"rules": [{"delay": 5}]})"),
              "line 1, column 12: rule \"rule0\": \"kind\" is missing");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "delay-data"}]})"),
              "line 1, column 12: rule \"rule0\": \"delay\" is missing");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "delay-data", "delay": 1, "chanerr": 1}]})"),
              "line 1, column 58: rule \"rule0\": unknown member \"chanerr\" for kind delay-data "
              "(its parameter is \"delay\")");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "drop-invalidation", "device": "e0"}]})"),
              "line 1, column 21: rule \"rule0\": \"drop-invalidation\" is not a fault of engine "
              "'e0'; it has delay-data, delay-completion, fail, corrupt, shorten");
    EXPECT_EQ(parse_error(R"({"rules": [{"name": "x", "kind": "fail", "chanerr": 0}]})"),
              "line 1, column 53: rule \"x\": \"chanerr\" must be non-zero bits within 0x7ffff");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "fail", "chanerr": "0x80000"}]})"),
              "line 1, column 40: rule \"rule0\": \"chanerr\" must be non-zero bits within "
              "0x7ffff");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 256}]})"),
              "line 1, column 39: rule \"rule0\": \"xor\" must be a byte mask from 1 to 0xff");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "channel": 4}]})"),
              "line 1, column 53: rule \"rule0\": \"channel\" must be an integer below 4");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "op": "xor"}]})"),
              "line 1, column 48: rule \"rule0\": unknown \"op\"; engine has copy, fill");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "range": [5, 5]}]})"),
              "line 1, column 51: rule \"rule0\": \"range\" must be [start, end) with start < end");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "nth": 0}]})"),
              "line 1, column 49: rule \"rule0\": \"nth\" must be an integer of 1 or more");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "count": 0}]})"),
              "line 1, column 51: rule \"rule0\": \"count\" must be an integer of 1 or more");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "probability": 1.5}]})"),
              "line 1, column 57: rule \"rule0\": \"probability\" must be a number in (0, 1]");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "probability": 0}]})"),
              "line 1, column 57: rule \"rule0\": \"probability\" must be a number in (0, 1]");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "probability": 1e-30}]})"),
              "line 1, column 57: rule \"rule0\": \"probability\" is too small to ever fire");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "armed": 1}]})"),
              "line 1, column 51: rule \"rule0\": \"armed\" must be true or false");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "name": "a b"}]})"),
              "line 1, column 50: rule \"rule0\": \"name\" must be 1 to 64 printable characters "
              "without spaces");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "name": "a"},
                                        {"kind": "corrupt", "xor": 1, "name": "a"}]})"),
              "line 2, column 41: rule 1: the name \"a\" is used by an earlier rule");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "corrupt", "xor": 1, "device": 3}]})"),
              "line 1, column 52: rule \"rule0\": \"device\" must be a device's id");
    EXPECT_EQ(parse_error(R"({"rules": [7]})"),
              "line 1, column 12: rule \"rule0\": a rule must be a JSON object");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "translation-fault", "reason": 7}]})", remapper()),
              "line 1, column 52: rule \"rule0\": \"reason\" must be one of 0x5, 0x6");
    EXPECT_EQ(
        parse_error(R"({"rules": [{"kind": "drop-invalidation", "requester": 3}]})", remapper()),
        "line 1, column 55: rule \"rule0\": \"requester\" does not apply to kind "
        "drop-invalidation");
    EXPECT_EQ(
        parse_error(
            R"({"rules": [{"kind": "translation-fault", "reason": 5, "requester": "00:20.0"}]})",
            remapper()),
        "line 1, column 68: rule \"rule0\": \"requester\" must be \"bb:dd.f\" or an id below "
        "65536");
}

TEST(FaultPlan, RefusesImpossibleTimes)
{
    for (const char* d : {"-1", "1.5", "\"5 ms\"", "\"5min\"", "\"ms\"", "1125899906842625",
                          "\"1125900s\"", "\"18446744073709551615s\"", "true"}) {
        std::string text =
            std::string(R"({"rules": [{"kind": "delay-data", "delay": )") + d + "}]}";
        EXPECT_NE(parse_error(text).find("\"delay\" must be nanoseconds or a duration such as "
                                         "\"5ms\", at most 1125899906842624 ns"),
                  std::string::npos)
            << d;
    }
    parse_ok(R"({"rules": [{"kind": "delay-data", "delay": 1125899906842624}]})");
}

TEST(FaultPlan, RefusesTooManyRules)
{
    std::string text = R"({"rules": [)";
    for (int i = 0; i < 257; i++)
        text += std::string(i ? "," : "") + R"({"kind": "corrupt", "xor": 1})";
    text += "]}";
    EXPECT_EQ(parse_error(text), "line 1, column 11: more than 256 rules");
}

TEST(Injector, NthAndCountPickTheMatches)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [
      {"name": "third", "kind": "delay-data", "delay": 1, "nth": 3},
      {"name": "two-from-second", "kind": "corrupt", "xor": 1, "nth": 2, "count": 2},
      {"name": "all", "kind": "fail", "chanerr": 1}]})"));
    auto fired = run(inj, 5, [](unsigned) { return on(0); });
    EXPECT_EQ(fired, (std::vector<std::string>{"all", "two-from-second,all",
                                               "third,two-from-second,all", "all", "all"}));
    EXPECT_EQ(inj.injected(0), 1u);
    EXPECT_EQ(inj.injected(1), 2u);
    EXPECT_EQ(inj.injected(2), 5u);
    EXPECT_EQ(inj.total(), 8u);
}

TEST(Injector, SelectorsNarrowTheMatches)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [
      {"name": "ch1", "kind": "delay-data", "delay": 1, "channel": 1},
      {"name": "fill", "kind": "delay-data", "delay": 1, "op": "fill"},
      {"name": "dst", "kind": "delay-data", "delay": 1, "range": ["0x103040", "0x103041"]}]})"));
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(1); })[0], "ch1");
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0, 0x1000, 64, 1); })[0], "fill");
    // The range holds one byte of the second range of an occasion at 0x3000.
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0, 0x3000, 0x41); })[0], "dst");
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0, 0x3000, 0x40); })[0], "");
    // Kinds the occasion cannot take do not fire, and do not count a match.
    Occasion o = on(1);
    o.kinds = bit(Kind::Fail);
    EXPECT_EQ(run(inj, 1, [&](unsigned) { return o; })[0], "");
}

TEST(Injector, ArmingStartsTheCount)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [{"name": "x", "kind": "fail", "chanerr": 1}, 
      {"name": "armed-later", "kind": "delay-data", "delay": 1, "nth": 2, "armed": false}]})"));
    EXPECT_EQ(run(inj, 3, [](unsigned) { return on(0); })[2], "x");
    EXPECT_TRUE(inj.arm(1, true));
    EXPECT_EQ(run(inj, 3, [](unsigned) { return on(0); }),
              (std::vector<std::string>{"x", "x,armed-later", "x"}));
    EXPECT_EQ(inj.armed(1), true);
    EXPECT_TRUE(inj.arm(1, true)); // a new round: the second match from here fires again
    EXPECT_EQ(run(inj, 3, [](unsigned) { return on(0); }),
              (std::vector<std::string>{"x", "x,armed-later", "x"}));
    EXPECT_EQ(inj.injected(1), 2u);
    EXPECT_TRUE(inj.arm(0, false));
    EXPECT_EQ(inj.armed(0), false);
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0); })[0], "");
    EXPECT_FALSE(inj.arm(2, true));
    EXPECT_FALSE(inj.armed(2));
    EXPECT_EQ(inj.injected(2), 0u);
}

TEST(Injector, ProbabilityFollowsTheSeed)
{
    const char* text = R"({"seed": 9, "rules": [{"name": "p", "kind": "fail", "chanerr": 1,
                                                  "probability": 0.25}]})";
    Injector a, b, c;
    a.set_plan(parse_ok(text));
    b.set_plan(parse_ok(text));
    c.set_plan(parse_ok(R"({"seed": 10, "rules": [{"name": "p", "kind": "fail", "chanerr": 1,
                                                  "probability": 0.25}]})"));
    auto ra = run(a, 4000, [](unsigned) { return on(0); });
    auto rb = run(b, 4000, [](unsigned) { return on(0); });
    auto rc = run(c, 4000, [](unsigned) { return on(0); });
    EXPECT_EQ(ra, rb);
    EXPECT_NE(ra, rc);
    // About a quarter: 1000 expected, a standard deviation of about 27.
    EXPECT_GT(a.total(), 850u);
    EXPECT_LT(a.total(), 1150u);
    a.reset();
    EXPECT_EQ(run(a, 4000, [](unsigned) { return on(0); }), rb);
}

TEST(Injector, LogsTheNewestEventsInOrder)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [{"name": "f", "kind": "fail", "chanerr": 1}]})"));
    run(inj, 300, [](unsigned i) { return on(i % 4, 0x1000 * i); });
    auto ev = inj.events();
    ASSERT_EQ(ev.size(), Injector::kLogSize);
    EXPECT_EQ(ev.front().seq, 300u - Injector::kLogSize);
    EXPECT_EQ(ev.back().seq, 299u);
    EXPECT_EQ(ev.back().when, 299u);
    EXPECT_EQ(format_event(ev.back(), inj.plan()),
              "299 299ns rule=f kind=fail unit=3 key=" + std::to_string(0x1000 * 299));
}

TEST(Injector, MigratesCountsArmsAndGenerators)
{
    const char* text = R"({"seed": 3, "rules": [
      {"name": "p", "kind": "fail", "chanerr": 1, "probability": 0.5},
      {"name": "n", "kind": "delay-data", "delay": 1, "nth": 5, "armed": false}]})";
    Injector src, dst;
    src.set_plan(parse_ok(text));
    dst.set_plan(parse_ok(text));
    src.arm(1, true);
    run(src, 3, [](unsigned) { return on(0); });
    StateWriter w;
    src.save(w);
    StateReader r(w.bytes);
    ASSERT_TRUE(dst.load(r));
    EXPECT_TRUE(r.finished());
    EXPECT_EQ(run(src, 50, [](unsigned) { return on(0); }),
              run(dst, 50, [](unsigned) { return on(0); }));
    // A destination given another plan refuses the state.
    Injector other;
    other.set_plan(parse_ok(R"({"rules": [{"kind": "fail", "chanerr": 1}]})"));
    StateReader r2(w.bytes);
    EXPECT_FALSE(other.load(r2));
}

TEST(Doorbell, ArmsTheSelectedRuleAndReportsItsCounts)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [
      {"name": "other", "kind": "drop-invalidation"},
      {"name": "late", "kind": "delay-data", "delay": 1, "armed": false}]})"));
    dmalab::testing::FakeLog log;
    Doorbell bell(inj, log, "test-doorbell");
    EXPECT_EQ(bell.read(doorbell::ID, 4), doorbell::kId);
    bell.write(doorbell::SELECT, 0, 4);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), 0u) << "rule 0 is another model's";
    bell.write(doorbell::COMMAND, doorbell::kArm, 4);
    bell.write(doorbell::SELECT, 1, 4);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), doorbell::kOwned);
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0); })[0], "");
    bell.write(doorbell::COMMAND, doorbell::kArm, 4);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), doorbell::kOwned | doorbell::kArmed);
    EXPECT_EQ(run(inj, 2, [](unsigned) { return on(0); }),
              (std::vector<std::string>{"late", "late"}));
    EXPECT_EQ(bell.read(doorbell::INJECTED, 8), 2u);
    EXPECT_EQ(bell.read(doorbell::TOTAL, 8), 2u);
    bell.write(doorbell::COMMAND, doorbell::kDisarm, 4);
    EXPECT_EQ(run(inj, 1, [](unsigned) { return on(0); })[0], "");
    // Counters cannot be written, command 0 does nothing (bits above CMD are ignored), a wide
    // select is cut to 16 bits.
    bell.write(doorbell::INJECTED, 0, 8);
    bell.write(doorbell::COMMAND, 4, 4);
    EXPECT_EQ(bell.read(doorbell::INJECTED, 8), 2u);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), doorbell::kOwned);
    bell.write(doorbell::SELECT, 0x10001, 4);
    EXPECT_EQ(bell.selected(), 1u);
    EXPECT_FALSE(log.guest_errors.empty()) << "the reserved select bits were reported";
}

TEST(Doorbell, ReleaseIsRecordedForTheRoundAndToldToTheModel)
{
    Injector inj;
    inj.set_plan(parse_ok(R"({"rules": [
      {"name": "other", "kind": "drop-invalidation"},
      {"name": "hold", "kind": "delay-data", "delay": "1s", "until": "release"}]})"));
    dmalab::testing::FakeLog log;
    Doorbell bell(inj, log, "test-doorbell");
    std::vector<unsigned> told;
    // The model says whether it ended a hold: here, at the second release of rule 1.
    bell.set_release_hook(
        [](void* o, unsigned rule) {
            auto* t = static_cast<std::vector<unsigned>*>(o);
            t->push_back(rule);
            return t->size() == 2;
        },
        &told);
    bell.write(doorbell::SELECT, 0, 4);
    bell.write(doorbell::COMMAND, doorbell::kRelease, 4);
    EXPECT_TRUE(told.empty()) << "rule 0 is another model's: nothing to release";
    bell.write(doorbell::SELECT, 1, 4);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), doorbell::kOwned | doorbell::kArmed);
    bell.write(doorbell::COMMAND, doorbell::kRelease, 4);
    EXPECT_EQ(told, std::vector<unsigned>{1});
    EXPECT_TRUE(inj.released(1));
    EXPECT_EQ(bell.read(doorbell::STATUS, 4),
              doorbell::kOwned | doorbell::kArmed | doorbell::kReleased)
        << "released, but the model held nothing: not ENDED";
    bell.write(doorbell::COMMAND, doorbell::kRelease, 4);
    EXPECT_EQ(bell.read(doorbell::STATUS, 4),
              doorbell::kOwned | doorbell::kArmed | doorbell::kReleased | doorbell::kEnded);
    // Arming starts a new round, which is neither released nor ended.
    bell.write(doorbell::COMMAND, doorbell::kArm, 4);
    EXPECT_FALSE(inj.released(1));
    EXPECT_FALSE(inj.hold_ended(1));
    EXPECT_EQ(bell.read(doorbell::STATUS, 4), doorbell::kOwned | doorbell::kArmed);
}

TEST(Plan, UntilReleaseAppliesToTheKindsTheModelReleases)
{
    ModelSpec spec = engine();
    Plan p = parse_ok(R"({"rules": [
      {"kind": "delay-data", "delay": "1s", "until": "release"},
      {"kind": "delay-data", "delay": "1s"}]})",
                      spec);
    ASSERT_EQ(p.rules.size(), 2u);
    EXPECT_TRUE(p.rules[0].until_release);
    EXPECT_FALSE(p.rules[1].until_release);
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "delay-completion", "delay": 1,
                                         "until": "release"}]})",
                          spec),
              "line 2, column 51: rule \"rule0\": \"until\" does not apply to kind "
              "delay-completion; it applies to delay-data");
    EXPECT_EQ(
        parse_error(R"({"rules": [{"kind": "delay-data", "delay": 1, "until": "later"}]})", spec),
        "line 1, column 56: rule \"rule0\": \"until\" must be \"release\"");
    EXPECT_EQ(parse_error(R"({"rules": [{"kind": "delay-invalidation", "delay": 1,
                                         "until": "release"}]})",
                          remapper()),
              "line 2, column 51: rule \"rule0\": \"until\" does not apply to kind "
              "delay-invalidation; remapper has no fault doorbell");
}

TEST(Injector, ReleaseLastsTheRoundAndMigrates)
{
    const char* text = R"({"rules": [{"name": "h", "kind": "delay-data", "delay": 1,
                                       "until": "release", "armed": false}]})";
    ModelSpec spec = engine();
    Injector src, dst;
    src.set_plan(parse_ok(text, spec));
    dst.set_plan(parse_ok(text, spec));
    EXPECT_FALSE(src.release(1)) << "no rule 1";
    EXPECT_TRUE(src.arm(0, true));
    EXPECT_TRUE(src.release(0));
    EXPECT_TRUE(src.released(0));
    src.ended(0);
    StateWriter w;
    src.save(w);
    StateReader r(w.bytes);
    ASSERT_TRUE(dst.load(r));
    EXPECT_TRUE(dst.released(0));
    EXPECT_TRUE(dst.hold_ended(0));
    src.reset();
    EXPECT_FALSE(src.released(0));
}

} // namespace
} // namespace dmalab::faults
