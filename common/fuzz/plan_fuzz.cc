// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: fault plans as a user could write them. The input is the plan file,
// read for both models (dmalab-ioat with 4 channels, dmalab-vtd). Invariants: a refused plan
// says where and why; an accepted plan only holds values its model allows; the injector
// driven by a stream of occasions derived from the input never hits more than a rule's
// count per round, logs at most its ring size, and migrates to an identical copy.
// Build: CXX=clang++ meson setup build-fuzz -Dfuzz=enabled -Dqemu=disabled
// Run:   build-fuzz/common/fuzz/plan-fuzz -max_len=4096 -dict=common/fuzz/plan.dict

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dmalab/faults.h"
#include "dmalab/ioat/faults.h"
#include "dmalab/vtd/faults.h"
#include "../testing/fuzz.h"

namespace
{

using namespace dmalab;
using namespace dmalab::faults;

using dmalab::fuzz::violated;

void check_rule(const Rule& r, const ModelSpec& spec, const Plan& p)
{
    if (!(spec.kinds & (1u << static_cast<unsigned>(r.kind))))
        violated("a rule of a kind the model does not have");
    if (r.index >= p.file_rules || r.name.empty() || r.name.size() > 64)
        violated("a rule index or name out of bounds");
    if (r.unit && *r.unit >= spec.unit_limit)
        violated("a unit selector beyond the model's");
    if (r.has_range && r.range_start >= r.range_end)
        violated("an empty range");
    if (r.count == 0 || r.ns > spec.max_delay_ns)
        violated("a zero count or a delay beyond the model's limit");
    if (r.kind == Kind::Fail && (r.chanerr == 0 || (r.chanerr & ~spec.chanerr_mask)))
        violated("CHANERR bits the model does not define");
    if (r.kind == Kind::Corrupt && r.xor_mask == 0)
        violated("a corruption that changes nothing");
}

void drive(Injector& inj, const uint8_t* data, size_t size)
{
    std::vector<uint64_t> per_rule(inj.plan().rules.size());
    for (size_t i = 0; i + 4 <= size && i < 4 * 512; i += 4) {
        Occasion o{};
        o.kinds = ~0u;
        o.unit = data[i] & 7;
        o.op = data[i + 1] & 3 ? 0 : data[i + 1];
        o.key = i;
        uint64_t at = uint64_t{data[i + 2]} << 12;
        o.start[0] = at;
        o.end[0] = at + (uint64_t{data[i + 3]} << 4);
        if (data[i] & 0x80) { // arm or disarm a rule instead
            inj.arm(data[i + 1], data[i + 2] & 1);
            continue;
        }
        inj.decide(o, i, [&](const Rule& r) {
            for (size_t k = 0; k < per_rule.size(); k++)
                if (&inj.plan().rules[k] == &r)
                    per_rule[k]++;
        });
    }
    for (size_t k = 0; k < per_rule.size(); k++)
        if (per_rule[k] > inj.injected(inj.plan().rules[k].index))
            violated("injections not counted");
    if (inj.events().size() > Injector::kLogSize)
        violated("the log outgrew its ring");
    StateWriter w;
    inj.save(w);
    Injector copy;
    copy.set_plan(inj.plan());
    StateReader r(w.bytes);
    if (!copy.load(r) || !r.finished())
        violated("an injector's state does not reload");
    StateWriter w2;
    copy.save(w2);
    if (w2.bytes != w.bytes)
        violated("a reloaded injector saves differently");
}

void one(std::string_view text, const ModelSpec& spec, const char* id, const uint8_t* data,
         size_t size)
{
    std::string err;
    auto plan = parse_plan(text, spec, id, &err);
    if (!plan) {
        if (err.rfind("line ", 0) != 0 || err.find(": ") == std::string::npos)
            violated("a refusal that does not say where");
        return;
    }
    for (const Rule& r : plan->rules)
        check_rule(r, spec, *plan);
    Injector inj;
    inj.set_plan(*plan);
    drive(inj, data, size);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    one(text, ioat::fault_spec(4), "ioat0", data, size);
    one(text, vtd::fault_spec(), "vtd0", data, size);
    return 0;
}
