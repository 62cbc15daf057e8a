// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans: a declarative list of faults a model injects into its own behaviour, read from
// a JSON file (docs/faults.rst has the format), and the injector that decides, occasion by
// occasion, which rules fire. Shared by every model; what a fault does is the model's own
// business (dmalab-ioat applies them at its descriptor policy seam).
//
// Decisions depend only on the plan, its seed and the order of occasions, never on host
// time, so the same guest run under -icount injects the same faults in the same order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmalab/prng.h"
#include "dmalab/state.h"

namespace dmalab::faults
{

enum class Kind : uint8_t {
    // dmalab-ioat, decided when a descriptor starts
    DelayData,       // its bytes move `ns` later than the timing model says
    DelayCompletion, // its completion is signalled `ns` later
    Reorder,         // it is held whole (data and completion) `ns`: later work overtakes it
    Fail,            // it fails with CHANERR bits `chanerr`, moving nothing
    Corrupt,         // the last byte it writes is xored with `xor`
    Shorten,         // it moves only `bytes` bytes, then completes as if whole
    DropInterrupt,   // the interrupt its completion would raise is not sent
    // dmalab-vtd
    DelayInvalidation, // an invalidation completes `ns` later
    DropInvalidation,  // an invalidation completes without invalidating anything
    TranslationFault,  // a translation fails with fault reason `reason`
};
constexpr unsigned kKinds = 10;
const char* kind_name(Kind k);
constexpr uint32_t kind_bit(Kind k)
{
    return 1u << static_cast<unsigned>(k);
}
// The end of an occasion's range [start, start + len), saturated below 2^64.
constexpr uint64_t range_end(uint64_t start, uint64_t len)
{
    return start + (len < UINT64_MAX - start ? len : UINT64_MAX - start);
}

// What one model accepts in a plan. The model owns these tables.
struct OpName {
    const char* name;
    uint8_t code;
};
struct ModelSpec {
    const char* type;          // "dmalab-ioat"
    uint32_t kinds;            // bit (1 << Kind) for each kind the model injects
    const char* unit_selector; // "channel" or "requester"
    uint32_t unit_limit;       // the selector's values are below this
    uint32_t unit_kinds = ~0u; // the kinds whose occasions have a unit (bit per Kind)
    std::vector<OpName> ops;   // names of "op" values
    uint32_t chanerr_mask;     // bits a "fail" may set (non-zero bits only)
    // A model whose "fail" gives a completion status instead of error bits (dmalab-dsa):
    // the codes it may give, as the rule's "status". Empty: "chanerr" and chanerr_mask.
    std::vector<uint8_t> fail_codes;
    std::vector<uint8_t> reasons; // fault reasons a "translation-fault" may give
    uint64_t max_delay_ns;
    uint32_t release_kinds = 0; // kinds whose hold a guest may end early ("until": "release")
};

struct Rule {
    unsigned index = 0; // position in the file's "rules": the number a guest arms it by
    std::string name;
    Kind kind = Kind::DelayData;
    // Selectors: an occasion matches when every one given matches.
    std::optional<uint32_t> unit; // channel or requester id
    std::optional<uint8_t> op;
    bool has_range = false;
    uint64_t range_start = 0, range_end = 0; // [start, end), overlapping any address range
    uint64_t skip = 0;           // matches that pass before the first injection ("nth" - 1)
    uint64_t count = UINT64_MAX; // injections at most
    uint64_t threshold = 0;      // inject when a draw is below this; 0: always (no draw)
    bool armed = true;           // false: inert until armed
    // "until": "release": the hold (`ns`) ends early when the guest releases the rule, and
    // takes nothing when the release came before the occasion did.
    bool until_release = false;
    // Parameters of the kind.
    uint64_t ns = 0;
    uint32_t chanerr = 0; // "chanerr" bits, or the "status" code (ModelSpec::fail_codes)
    uint8_t xor_mask = 0;
    uint64_t bytes = 0;
    uint8_t reason = 0;
};

struct Plan {
    uint64_t seed = 0;
    unsigned file_rules = 0; // rules in the file, including those for other devices
    std::vector<Rule> rules; // those for this device, in file order
};

// The rules of `text` that apply to the device `id` of the model `spec` describes. nullopt,
// with *error naming the rule, the member and what is wrong, when the plan is malformed.
std::optional<Plan> parse_plan(std::string_view text, const ModelSpec& spec, std::string_view id,
                               std::string* error);

// Something a model is about to do that a fault may hit.
struct Occasion {
    uint32_t kinds; // the kinds this occasion can take (bit per Kind)
    uint32_t unit;
    uint8_t op;
    uint64_t key;              // the model's name for it (descriptor address, IOVA), for logs
    uint64_t start[2], end[2]; // address ranges it touches, [start, end); empty when equal
};

struct Event {
    uint64_t seq;  // injections since the plan was set
    uint64_t when; // virtual ns
    unsigned rule; // file index
    Kind kind;
    uint32_t unit;
    uint64_t key;
};
std::string format_event(const Event& e, const Plan& plan);

class Injector;
// Sets the plan in `text` (nullptr or empty: none) for the device `id` of the model `spec`
// describes. False, with *error saying why, when the plan is malformed; the injector then
// keeps the plan it had.
bool apply_plan(Injector& injector, const char* text, const ModelSpec& spec, std::string_view id,
                std::string* error);
// The injector's newest events, a line each, oldest first.
std::string log_text(const Injector& injector);

class Injector
{
  public:
    static constexpr unsigned kLogSize = 256;

    // Told of every injection as it is decided (for trace events).
    using Listener = void (*)(void* opaque, const Event& e, const Rule& r);
    void set_listener(Listener fn, void* opaque)
    {
        listener_ = fn;
        listener_opaque_ = opaque;
    }

    // Replaces the plan and forgets every count, arm and event of the old one.
    void set_plan(Plan plan);
    const Plan& plan() const { return plan_; }
    // Back to the state set_plan() left: counts, arms, generators and the log.
    void reset();

    // Calls fire(rule) for each rule that injects into this occasion, in plan order.
    template <typename F> void decide(const Occasion& o, uint64_t now, F&& fire)
    {
        for (size_t i = 0; i < plan_.rules.size(); i++)
            if (o.kinds & (1u << static_cast<unsigned>(plan_.rules[i].kind)) && take(i, o, now))
                fire(plan_.rules[i]);
    }

    // Arms or disarms the rule with this file index. Arming starts a new round: "nth" and
    // "count" count from here. False when no rule of this device has that index.
    bool arm(unsigned index, bool on);
    // Whether the rule with this file index is armed; nullopt when it is not this device's.
    std::optional<bool> armed(unsigned index) const;
    // Ends the holds of the rule with this file index for the rest of its round: a hold it
    // decides from now on takes no time (the model ends those already running). False when
    // no rule of this device has that index.
    bool release(unsigned index);
    // Whether the rule with this file index was released in its current round.
    bool released(unsigned index) const;
    // The model ended a hold of that rule at a release (Doorbell's kEnded), and whether one
    // has been in its current round.
    void ended(unsigned index);
    bool hold_ended(unsigned index) const;
    // Injections of the rule with this file index in all rounds (0 when it is not this
    // device's).
    uint64_t injected(unsigned index) const;
    uint64_t total() const { return seq_; }
    // The newest events, oldest first (at most kLogSize).
    std::vector<Event> events() const;

    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    struct State {
        bool armed;
        bool released;    // in this round
        bool ended;       // a release ended a running hold, in this round
        uint64_t matched; // in this round
        uint64_t round;   // injections in this round
        uint64_t injected;
        Prng prng;
    };
    // The slot of the rule with this file index, or -1.
    long slot(unsigned index) const;
    bool take(size_t i, const Occasion& o, uint64_t now);

    Plan plan_;
    std::vector<State> state_;
    std::vector<Event> log_; // the newest kLogSize events; the oldest at head_ once full
    size_t head_ = 0;
    uint64_t seq_ = 0;
    Listener listener_ = nullptr;
    void* listener_opaque_ = nullptr;
};

} // namespace dmalab::faults
