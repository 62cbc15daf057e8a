// SPDX-License-Identifier: GPL-2.0-or-later
// A model's state as a flat little-endian byte string, for migration. The reader treats its
// input as untrusted: every value a model loads is range-checked by the model, and a short
// or overlong input fails the load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dmalab
{

class StateWriter
{
  public:
    void u8(uint8_t v) { bytes.push_back(v); }
    void u16(uint16_t v) { put(v, 2); }
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void boolean(bool v) { u8(v ? 1 : 0); }
    // Another writer's bytes, length first: a nested state its own reader checks whole.
    void blob(const StateWriter& inner)
    {
        u32(static_cast<uint32_t>(inner.bytes.size()));
        // Byte by byte: GCC 12 at -O3 misreads vector::insert here as an overflow.
        bytes.reserve(bytes.size() + inner.bytes.size());
        for (uint8_t b : inner.bytes)
            bytes.push_back(b);
    }

    std::vector<uint8_t> bytes;

  private:
    void put(uint64_t v, unsigned n)
    {
        for (unsigned i = 0; i < n; i++)
            bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
};

class StateReader
{
  public:
    explicit StateReader(std::span<const uint8_t> in) : in_(in) {}

    uint8_t u8() { return static_cast<uint8_t>(get(1)); }
    uint16_t u16() { return static_cast<uint16_t>(get(2)); }
    uint32_t u32() { return static_cast<uint32_t>(get(4)); }
    uint64_t u64() { return get(8); }
    bool boolean()
    {
        uint8_t v = u8();
        if (v > 1)
            ok_ = false;
        return v == 1;
    }
    // What blob() wrote; empty (and the reader failed) when the input is short.
    std::span<const uint8_t> blob()
    {
        uint32_t n = u32();
        if (!ok_ || in_.size() - pos_ < n) {
            ok_ = false;
            return {};
        }
        auto out = in_.subspan(pos_, n);
        pos_ += n;
        return out;
    }
    // Marks the input as invalid (a model found a value out of range).
    void reject() { ok_ = false; }
    bool ok() const { return ok_; }
    // Everything was read and valid.
    bool finished() const { return ok_ && pos_ == in_.size(); }

  private:
    uint64_t get(unsigned n)
    {
        if (!ok_ || in_.size() - pos_ < n) {
            ok_ = false;
            return 0;
        }
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
            v |= uint64_t{in_[pos_ + i]} << (8 * i);
        pos_ += n;
        return v;
    }

    std::span<const uint8_t> in_;
    size_t pos_ = 0;
    bool ok_ = true;
};

// One list of a state struct's fields serves both directions: a model writes, once,
// `template <class IO, class S> static void io(IO& io, S& s)` calling io(s.field) for each
// field in stream order; io(StateSave{w}, const_state) writes them and io(StateLoad{r},
// state) reads them back. A load still checks each value's range after reading it.
class StateSave
{
  public:
    explicit StateSave(StateWriter& w) : w_(w) {}
    void operator()(const uint8_t& v) { w_.u8(v); }
    void operator()(const uint16_t& v) { w_.u16(v); }
    void operator()(const uint32_t& v) { w_.u32(v); }
    void operator()(const uint64_t& v) { w_.u64(v); }
    void operator()(const bool& v) { w_.boolean(v); }

  private:
    StateWriter& w_;
};

class StateLoad
{
  public:
    explicit StateLoad(StateReader& r) : r_(r) {}
    void operator()(uint8_t& v) { v = r_.u8(); }
    void operator()(uint16_t& v) { v = r_.u16(); }
    void operator()(uint32_t& v) { v = r_.u32(); }
    void operator()(uint64_t& v) { v = r_.u64(); }
    void operator()(bool& v) { v = r_.boolean(); }

  private:
    StateReader& r_;
};

} // namespace dmalab
