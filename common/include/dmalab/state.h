// SPDX-License-Identifier: GPL-2.0-or-later
// A model's state as a flat little-endian byte string, for migration. The reader treats its
// input as untrusted: every value a model loads is range-checked by the model, and a short
// or overlong input fails the load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

    std::vector<uint8_t> bytes;

  private:
    void put(uint64_t v, unsigned n)
    {
        for (unsigned i = 0; i < n; i++)
            bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
};

// The writer's bytes copied into a malloc'd buffer for the C ABI (the glue releases it with
// g_free, which pairs with malloc since GLib 2.46); nullptr when out of memory.
inline uint8_t* malloc_copy(const StateWriter& w, uint32_t* len)
{
    auto* out = static_cast<uint8_t*>(std::malloc(w.bytes.empty() ? 1 : w.bytes.size()));
    if (!out)
        return nullptr;
    std::memcpy(out, w.bytes.data(), w.bytes.size());
    *len = static_cast<uint32_t>(w.bytes.size());
    return out;
}

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

} // namespace dmalab
