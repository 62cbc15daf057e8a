// SPDX-License-Identifier: GPL-2.0-or-later
// Fault plans at run time: which rules fire on each occasion, their holds and releases, and
// the log of what was injected.

#include "dmalab/faults.h"

#include <algorithm>

namespace dmalab::faults
{
namespace
{

bool overlaps(const Rule& r, const Occasion& o)
{
    for (int i = 0; i < 2; i++)
        if (o.start[i] < o.end[i] && o.start[i] < r.range_end && r.range_start < o.end[i])
            return true;
    return false;
}

uint64_t rule_seed(uint64_t seed, unsigned index)
{
    return seed ^ (0x9e3779b97f4a7c15ull * (index + 1ull));
}

} // namespace

std::string format_event(const Event& e, const Plan& plan)
{
    std::string name = "?";
    for (const auto& r : plan.rules)
        if (r.index == e.rule)
            name = r.name;
    return std::to_string(e.seq) + " " + std::to_string(e.when) + "ns rule=" + name +
           " kind=" + kind_name(e.kind) + " unit=" + std::to_string(e.unit) +
           " key=" + std::to_string(e.key);
}

std::string log_text(const Injector& injector)
{
    std::string out;
    for (const auto& e : injector.events())
        out += format_event(e, injector.plan()) + "\n";
    return out;
}

void Injector::set_plan(Plan plan)
{
    plan_ = std::move(plan);
    reset();
}

void Injector::reset()
{
    state_.clear();
    for (const auto& r : plan_.rules)
        state_.push_back({r.armed, false, false, 0, 0, 0, Prng(rule_seed(plan_.seed, r.index))});
    log_.clear();
    head_ = 0;
    seq_ = 0;
}

bool Injector::take(size_t i, const Occasion& o, uint64_t now)
{
    const Rule& r = plan_.rules[i];
    State& s = state_[i];
    if (!s.armed || s.round >= r.count)
        return false;
    if (r.unit && *r.unit != o.unit)
        return false;
    if (r.op && *r.op != o.op)
        return false;
    if (r.has_range && !overlaps(r, o))
        return false;
    if (s.matched++ < r.skip)
        return false;
    if (r.threshold && s.prng.next() >= r.threshold)
        return false;
    s.round++;
    s.injected++;
    Event e{seq_++, now, r.index, r.kind, o.unit, o.key};
    if (log_.size() < kLogSize) {
        log_.push_back(e);
    } else {
        log_[head_] = e;
        head_ = (head_ + 1) % kLogSize;
    }
    if (listener_)
        listener_(listener_opaque_, e, r);
    return true;
}

long Injector::slot(unsigned index) const
{
    for (size_t i = 0; i < plan_.rules.size(); i++)
        if (plan_.rules[i].index == index)
            return static_cast<long>(i);
    return -1;
}

bool Injector::arm(unsigned index, bool on)
{
    long i = slot(index);
    if (i < 0)
        return false;
    state_[i] = {on, false, false, 0, 0, state_[i].injected, state_[i].prng};
    return true;
}

bool Injector::release(unsigned index)
{
    long i = slot(index);
    if (i < 0)
        return false;
    state_[i].released = true;
    return true;
}

bool Injector::released(unsigned index) const
{
    long i = slot(index);
    return i >= 0 && state_[i].released;
}

void Injector::ended(unsigned index)
{
    long i = slot(index);
    if (i >= 0)
        state_[i].ended = true;
}

bool Injector::hold_ended(unsigned index) const
{
    long i = slot(index);
    return i >= 0 && state_[i].ended;
}

std::optional<bool> Injector::armed(unsigned index) const
{
    long i = slot(index);
    return i < 0 ? std::nullopt : std::optional<bool>(state_[i].armed);
}

uint64_t Injector::injected(unsigned index) const
{
    long i = slot(index);
    return i < 0 ? 0 : state_[i].injected;
}

std::vector<Event> Injector::events() const
{
    if (log_.size() < kLogSize)
        return log_;
    std::vector<Event> out;
    for (unsigned i = 0; i < kLogSize; i++)
        out.push_back(log_[(head_ + i) % kLogSize]);
    return out;
}

void Injector::save(StateWriter& w) const
{
    w.u32(static_cast<uint32_t>(state_.size()));
    for (const auto& s : state_) {
        w.boolean(s.armed);
        w.boolean(s.released);
        w.boolean(s.ended);
        w.u64(s.matched);
        w.u64(s.round);
        w.u64(s.injected);
        w.u64(s.prng.state());
    }
    w.u64(seq_);
}

// The log is diagnostics and stays behind; counts, arms and generators migrate, so the
// destination goes on deciding as the source would have.
bool Injector::load(StateReader& r)
{
    if (r.u32() != state_.size()) {
        r.reject(); // the destination was given another plan
        return false;
    }
    for (auto& s : state_) {
        s.armed = r.boolean();
        s.released = r.boolean();
        s.ended = r.boolean();
        s.matched = r.u64();
        s.round = r.u64();
        s.injected = r.u64();
        s.prng.set_state(r.u64());
    }
    seq_ = r.u64();
    log_.clear();
    head_ = 0;
    return r.ok();
}

} // namespace dmalab::faults
