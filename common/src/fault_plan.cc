// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans: reading a plan file and checking it against the model it is for.

#include "dmalab/faults.h"

#include <algorithm>
#include <cmath>

#include "dmalab/json.h"

namespace dmalab::faults
{
namespace
{

constexpr const char* kKindNames[kKinds] = {
    "delay-data",        "delay-completion",  "reorder",        "fail",
    "corrupt",           "shorten",           "drop-interrupt", "delay-invalidation",
    "drop-invalidation", "translation-fault",
};
constexpr unsigned kMaxRules = 256;
constexpr size_t kMaxName = 64;

constexpr uint32_t bit(Kind k)
{
    return 1u << static_cast<unsigned>(k);
}
constexpr uint32_t kDelayed = bit(Kind::DelayData) | bit(Kind::DelayCompletion) |
                              bit(Kind::Reorder) | bit(Kind::DelayInvalidation);

// Which parameter each kind takes (none for the rest).
const char* parameter_of(Kind k, const ModelSpec& spec)
{
    if (kDelayed & bit(k))
        return "delay";
    switch (k) {
    case Kind::Fail:
        return spec.fail_codes.empty() ? "chanerr" : "status";
    case Kind::Corrupt:
        return "xor";
    case Kind::Shorten:
        return "bytes";
    case Kind::TranslationFault:
        return "reason";
    default:
        return nullptr;
    }
}

std::optional<Kind> kind_from(std::string_view s)
{
    for (unsigned i = 0; i < kKinds; i++)
        if (s == kKindNames[i])
            return static_cast<Kind>(i);
    return std::nullopt;
}

std::string kind_list(uint32_t kinds)
{
    std::string out;
    for (unsigned i = 0; i < kKinds; i++) {
        if (!(kinds & (1u << i)))
            continue;
        if (!out.empty())
            out += ", ";
        out += kKindNames[i];
    }
    return out;
}

// "12", "12ns", "40us", "5ms", "2s", or a bare JSON integer (nanoseconds).
std::optional<uint64_t> duration_ns(const Json& v)
{
    if (v.kind == Json::Kind::Number)
        return json_u64(v);
    if (v.kind != Json::Kind::String)
        return std::nullopt;
    std::string_view s = v.text;
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    if (digits == 0 || digits > 18)
        return std::nullopt;
    uint64_t n = 0;
    for (size_t i = 0; i < digits; i++)
        n = n * 10 + static_cast<uint64_t>(s[i] - '0');
    std::string_view unit = s.substr(digits);
    uint64_t scale;
    if (unit.empty() || unit == "ns")
        scale = 1;
    else if (unit == "us")
        scale = 1000;
    else if (unit == "ms")
        scale = 1000000;
    else if (unit == "s")
        scale = 1000000000;
    else
        return std::nullopt;
    if (n > UINT64_MAX / scale)
        return std::nullopt;
    return n * scale;
}

// "bb:dd.f" (hexadecimal bus and device, as lspci prints) or an integer source id.
std::optional<uint32_t> requester_id(const Json& v)
{
    if (v.kind == Json::Kind::String && v.text.size() == 7 && v.text[2] == ':' &&
        v.text[5] == '.') {
        Json bus{Json::Kind::String, false, "0x" + v.text.substr(0, 2), {}, {}, 0, 0};
        Json dev{Json::Kind::String, false, "0x" + v.text.substr(3, 2), {}, {}, 0, 0};
        Json fn{Json::Kind::String, false, v.text.substr(6, 1), {}, {}, 0, 0};
        auto b = json_u64(bus), d = json_u64(dev), f = json_u64(fn);
        if (!b || !d || !f || *d > 31 || *f > 7)
            return std::nullopt;
        return static_cast<uint32_t>(*b << 8 | *d << 3 | *f);
    }
    auto n = json_u64(v);
    if (!n || *n > UINT32_MAX)
        return std::nullopt;
    return static_cast<uint32_t>(*n);
}

class PlanReader
{
  public:
    PlanReader(const ModelSpec& spec, std::string_view id, std::string* error)
        : spec_(spec), id_(id), error_(error)
    {
    }

    std::optional<Plan> read(const Json& doc)
    {
        if (doc.kind != Json::Kind::Object)
            return fail(doc, "the plan must be a JSON object with \"rules\"");
        const Json* rules = nullptr;
        for (size_t i = 0; i < doc.keys.size(); i++) {
            const std::string& key = doc.keys[i];
            const Json& v = doc.items[i];
            if (key == "seed") {
                auto s = json_u64(v);
                if (!s)
                    return fail(v, "\"seed\" must be an unsigned 64-bit integer");
                plan_.seed = *s;
            } else if (key == "rules") {
                rules = &v;
            } else if (key != "comment") {
                return fail(v, "unknown member \"" + key +
                                   "\" (a plan has \"seed\", \"rules\" and \"comment\")");
            }
        }
        if (!rules || rules->kind != Json::Kind::Array)
            return fail(rules ? *rules : doc, "\"rules\" must be an array of rules");
        if (rules->items.size() > kMaxRules)
            return fail(*rules, "more than " + std::to_string(kMaxRules) + " rules");
        plan_.file_rules = static_cast<unsigned>(rules->items.size());
        std::vector<std::string> names;
        for (unsigned i = 0; i < rules->items.size(); i++) {
            Rule r;
            r.index = i;
            bool mine = false;
            if (!rule(rules->items[i], r, mine))
                return std::nullopt;
            if (std::find(names.begin(), names.end(), r.name) != names.end())
                return fail(rules->items[i], "rule " + std::to_string(i) + ": the name \"" +
                                                 r.name + "\" is used by an earlier rule");
            names.push_back(r.name);
            if (mine)
                plan_.rules.push_back(std::move(r));
        }
        return std::move(plan_);
    }

  private:
    std::nullopt_t fail(const Json& at, const std::string& what)
    {
        if (error_)
            *error_ = at.where() + ": " + what;
        return std::nullopt;
    }
    bool bad(const Json& at, const Rule& r, const std::string& what)
    {
        fail(at, "rule \"" + r.name + "\": " + what);
        return false;
    }

    // Reads one rule. `mine` says whether it applies to this device.
    bool rule(const Json& v, Rule& r, bool& mine)
    {
        r.name = "rule" + std::to_string(r.index);
        if (v.kind != Json::Kind::Object)
            return bad(v, r, "a rule must be a JSON object");
        if (const Json* n = v.get("name")) {
            if (n->kind != Json::Kind::String || n->text.empty() || n->text.size() > kMaxName ||
                !std::all_of(n->text.begin(), n->text.end(),
                             [](char c) { return c > ' ' && c < 0x7f; }))
                return bad(*n, r, "\"name\" must be 1 to 64 printable characters without spaces");
            r.name = n->text;
        }
        const Json* k = v.get("kind");
        if (!k)
            return bad(v, r, "\"kind\" is missing");
        auto kind = k->kind == Json::Kind::String ? kind_from(k->text) : std::nullopt;
        if (!kind)
            return bad(*k, r, "unknown kind; the kinds are " + kind_list((1u << kKinds) - 1));
        r.kind = *kind;
        bool for_me = spec_.kinds & bit(r.kind);
        if (const Json* d = v.get("device")) {
            if (d->kind != Json::Kind::String || d->text.empty())
                return bad(*d, r, "\"device\" must be a device's id");
            if (d->text != id_)
                return true; // another device's rule: checked by that device
            if (!for_me)
                return bad(*k, r,
                           "\"" + k->text + "\" is not a fault of " + std::string(spec_.type) +
                               " '" + std::string(id_) + "'; it has " + kind_list(spec_.kinds));
        } else if (!for_me) {
            return true; // a kind of another model, for any device of that model
        }
        mine = true;
        const char* param = parameter_of(r.kind, spec_);
        bool have_param = param == nullptr;
        for (size_t i = 0; i < v.keys.size(); i++) {
            const std::string& key = v.keys[i];
            const Json& m = v.items[i];
            if (key == "name" || key == "kind" || key == "device" || key == "comment" ||
                key == "until")
                continue;
            if (param && key == param) {
                if (!parameter(m, r))
                    return false;
                have_param = true;
            } else if (!selector(key, m, r)) {
                return false;
            }
        }
        if (!have_param)
            return bad(v, r, "\"" + std::string(param) + "\" is missing");
        if (const Json* u = v.get("until")) {
            if (!(spec_.release_kinds & bit(r.kind)))
                return bad(*u, r,
                           "\"until\" does not apply to kind " + std::string(kind_name(r.kind)) +
                               (spec_.release_kinds
                                    ? "; it applies to " + kind_list(spec_.release_kinds)
                                    : "; " + std::string(spec_.type) + " has no fault doorbell"));
            if (u->kind != Json::Kind::String || u->text != "release")
                return bad(*u, r, "\"until\" must be \"release\"");
            r.until_release = true;
        }
        if (v.get("nth") && !v.get("count"))
            r.count = 1;
        return true;
    }

    bool selector(const std::string& key, const Json& m, Rule& r)
    {
        if (key == spec_.unit_selector) {
            if (!(spec_.unit_kinds & bit(r.kind)))
                return bad(m, r, "\"" + key + "\" does not apply to kind " + kind_name(r.kind));
            std::optional<uint64_t> u = json_u64(m);
            if (key == "requester")
                u = requester_id(m);
            if (!u || *u >= spec_.unit_limit)
                return bad(m, r,
                           "\"" + key + "\" must be " +
                               (key == "requester" ? "\"bb:dd.f\" or an id" : "an integer") +
                               " below " + std::to_string(spec_.unit_limit));
            r.unit = static_cast<uint32_t>(*u);
        } else if (key == "op") {
            std::string names;
            for (const auto& op : spec_.ops) {
                if (m.kind == Json::Kind::String && m.text == op.name)
                    r.op = op.code;
                names += names.empty() ? op.name : std::string(", ") + op.name;
            }
            if (!r.op)
                return bad(m, r, "unknown \"op\"; " + std::string(spec_.type) + " has " + names);
        } else if (key == "range") {
            std::optional<uint64_t> a, b;
            if (m.kind == Json::Kind::Array && m.items.size() == 2) {
                a = json_u64(m.items[0]);
                b = json_u64(m.items[1]);
            }
            if (!a || !b || *a >= *b)
                return bad(m, r, "\"range\" must be [start, end) with start < end");
            r.has_range = true;
            r.range_start = *a;
            r.range_end = *b;
        } else if (key == "nth") {
            auto n = json_u64(m);
            if (!n || *n == 0)
                return bad(m, r, "\"nth\" must be an integer of 1 or more");
            r.skip = *n - 1;
        } else if (key == "count") {
            auto n = json_u64(m);
            if (!n || *n == 0)
                return bad(m, r, "\"count\" must be an integer of 1 or more");
            r.count = *n;
        } else if (key == "probability") {
            auto p = json_double(m);
            if (!p || !(*p > 0.0) || *p > 1.0)
                return bad(m, r, "\"probability\" must be a number in (0, 1]");
            double t = std::ldexp(*p, 64);
            if (*p < 1.0 && t < 1.0)
                return bad(m, r, "\"probability\" is too small to ever fire");
            r.threshold = *p < 1.0 ? static_cast<uint64_t>(std::min(t, 0x1p64 - 2048)) : 0;
        } else if (key == "armed") {
            if (m.kind != Json::Kind::Bool)
                return bad(m, r, "\"armed\" must be true or false");
            r.armed = m.boolean;
        } else {
            const char* param = parameter_of(r.kind, spec_);
            return bad(m, r,
                       "unknown member \"" + key + "\" for kind " + kind_name(r.kind) +
                           (param ? " (its parameter is \"" + std::string(param) + "\")"
                                  : " (it takes no parameter)"));
        }
        return true;
    }

    bool parameter(const Json& m, Rule& r)
    {
        switch (r.kind) {
        case Kind::Fail: {
            auto e = json_u64(m);
            if (!spec_.fail_codes.empty())
                return code(m, r, e, spec_.fail_codes, "status", r.chanerr);
            if (!e || *e == 0 || (*e & ~uint64_t{spec_.chanerr_mask}))
                return bad(m, r,
                           "\"chanerr\" must be non-zero bits within " + hex(spec_.chanerr_mask));
            r.chanerr = static_cast<uint32_t>(*e);
            return true;
        }
        case Kind::Corrupt: {
            auto x = json_u64(m);
            if (!x || *x == 0 || *x > 0xff)
                return bad(m, r, "\"xor\" must be a byte mask from 1 to 0xff");
            r.xor_mask = static_cast<uint8_t>(*x);
            return true;
        }
        case Kind::Shorten: {
            auto b = json_u64(m);
            if (!b)
                return bad(m, r, "\"bytes\" must be an unsigned integer");
            r.bytes = *b;
            return true;
        }
        case Kind::TranslationFault: {
            uint32_t reason = 0;
            if (!code(m, r, json_u64(m), spec_.reasons, "reason", reason))
                return false;
            r.reason = static_cast<uint8_t>(reason);
            return true;
        }
        default: {
            auto ns = duration_ns(m);
            if (!ns || *ns > spec_.max_delay_ns)
                return bad(m, r,
                           "\"delay\" must be nanoseconds or a duration such as \"5ms\", at "
                           "most " +
                               std::to_string(spec_.max_delay_ns) + " ns");
            r.ns = *ns;
            return true;
        }
        }
    }

    // A parameter that must be one of the model's codes.
    bool code(const Json& m, const Rule& r, std::optional<uint64_t> c,
              const std::vector<uint8_t>& codes, const char* name, uint32_t& out)
    {
        if (!c || std::find(codes.begin(), codes.end(), *c) == codes.end()) {
            std::string list;
            for (uint8_t v : codes)
                list += (list.empty() ? "" : ", ") + hex(v);
            return bad(m, r, "\"" + std::string(name) + "\" must be one of " + list);
        }
        out = static_cast<uint32_t>(*c);
        return true;
    }

    static std::string hex(uint64_t v)
    {
        static const char digits[] = "0123456789abcdef";
        std::string s;
        do {
            s.insert(s.begin(), digits[v & 15]);
            v >>= 4;
        } while (v);
        return "0x" + s;
    }

    const ModelSpec& spec_;
    std::string_view id_;
    std::string* error_;
    Plan plan_;
};

} // namespace

const char* kind_name(Kind k)
{
    auto i = static_cast<unsigned>(k);
    return i < kKinds ? kKindNames[i] : "?";
}

std::optional<Plan> parse_plan(std::string_view text, const ModelSpec& spec, std::string_view id,
                               std::string* error)
{
    auto doc = parse_json(text, error);
    if (!doc)
        return std::nullopt;
    return PlanReader(spec, id, error).read(*doc);
}

bool apply_plan(Injector& injector, const char* text, const ModelSpec& spec, std::string_view id,
                std::string* error)
{
    if (!text || !*text) {
        injector.set_plan({});
        return true;
    }
    auto plan = parse_plan(text, spec, id, error);
    if (!plan)
        return false;
    injector.set_plan(std::move(*plan));
    return true;
}

} // namespace dmalab::faults
