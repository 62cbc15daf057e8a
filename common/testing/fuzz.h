// SPDX-License-Identifier: GPL-2.0-or-later
// What every fuzz target shares: its input read as a program's bytes, the check that ends an
// execution when an invariant breaks, and migration's round trip (a model's saved state
// loads into a fresh model, which saves the same bytes; a truncated state is refused).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dmalab/state.h"
#include "fake_memory.h"

namespace dmalab::fuzz
{

[[noreturn]] inline void violated(const char* what)
{
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
}

// The input, consumed from the front; zeros once it runs out.
class Input
{
  public:
    Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

    bool more() const { return p_ < end_; }
    uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
    // Each byte in its own statement: the order in which the operands of one expression are
    // evaluated differs between compilers, and an input must mean one program in every build.
    uint16_t u16()
    {
        uint8_t lo = byte();
        uint8_t hi = byte();
        return static_cast<uint16_t>(lo | hi << 8);
    }
    uint64_t u64()
    {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= uint64_t{byte()} << (8 * i);
        return v;
    }

  private:
    const uint8_t* p_;
    const uint8_t* end_;
};

// How soon a model's step may ask for its next.
enum class Rearm {
    NotInPast,     // at the instant it ran, or later
    StrictlyLater, // later than the instant it ran
};

// Runs the earliest pending timer of a model at the instant it asked for, as the host's
// clock would, and checks what every engine keeps after a step: no timer beyond the time
// limit, none due before (or, with StrictlyLater, at) the instant it ran, no DMA mapping held
// across steps, and only the vectors below `vectors` raised. There must be a pending timer.
template <class Model>
void run_next_timer(Model& model, testing::FakeMemory& mem, testing::FakeTimers& timers,
                    testing::FakeInterrupts& irq, unsigned vectors, Rearm rearm)
{
    auto [id, when] = *timers.next();
    timers.pending.erase(id);
    if (when > timers.now)
        timers.now = when;
    model.timer(id);
    if (timers.over_limit)
        violated("a timer armed beyond the time limit");
    auto again = timers.pending.find(id);
    if (again != timers.pending.end() &&
        (again->second < timers.now ||
         (rearm == Rearm::StrictlyLater && again->second == timers.now)))
        violated("a step asked to run again in the past or at the same instant");
    if (mem.outstanding != 0)
        violated("a mapping was not released");
    for (unsigned v : irq.raised)
        if (v >= vectors)
            violated("an interrupt beyond the device's vectors");
    irq.raised.clear();
}

// A model built as Model(config, Host{memory, timers, interrupts, log, nullptr}).
template <class Model, class Host, class Config>
void round_trip(const Model& model, testing::FakeMemory& mem, const Config& c)
{
    StateWriter w;
    model.save(w);
    testing::FakeTimers timers;
    testing::FakeInterrupts irq;
    testing::FakeLog log;
    Model other(c, Host{mem, timers, irq, log, nullptr});
    StateReader r(w.bytes);
    if (!other.load(r))
        violated("a model refused its own state");
    StateWriter w2;
    other.save(w2);
    if (w.bytes != w2.bytes)
        violated("state changed in a save/load round trip");
    std::vector<uint8_t> cut(w.bytes.begin(), w.bytes.begin() + w.bytes.size() / 2);
    StateReader bad(cut);
    if (other.load(bad))
        violated("a truncated state was accepted");
}

} // namespace dmalab::fuzz
