// SPDX-License-Identifier: GPL-2.0-or-later
// A declarative register bank: a device lists its registers once (offset, width, reset value,
// writable and write-1-to-clear bits, optional hooks) and every MMIO access, of any size or
// alignment, is mapped onto them here. Device models never decode offsets themselves.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

namespace dmalab
{

template <class Owner> struct RegDef {
    const char* name;
    uint32_t offset;
    unsigned width; // bytes: 1, 2, 4 or 8
    uint64_t reset;
    uint64_t rw;  // bits a write replaces
    uint64_t w1c; // bits a write of 1 clears
    // Computes what a read returns from the stored value (for live status registers).
    uint64_t (Owner::*on_read)(uint64_t stored) = nullptr;
    // Runs after the stored value has been updated. `written` holds the bytes the access wrote,
    // aligned to the register; `bytes` has 0xff in each byte lane the access covered.
    void (Owner::*on_write)(uint64_t old_value, uint64_t written, uint64_t bytes) = nullptr;
};

template <class Owner> class RegBank
{
  public:
    RegBank(Owner& owner, std::span<const RegDef<Owner>> defs, uint32_t window)
        : owner_(owner), defs_(defs), lane_(window, -1), values_(defs.size())
    {
        for (size_t i = 0; i < defs_.size(); i++) {
            const RegDef<Owner>& d = defs_[i];
            assert(d.width == 1 || d.width == 2 || d.width == 4 || d.width == 8);
            assert(d.offset + d.width <= window);
            for (unsigned b = 0; b < d.width; b++) {
                assert(lane_[d.offset + b] < 0 && "registers overlap");
                lane_[d.offset + b] = static_cast<int16_t>(i);
            }
        }
        reset();
    }

    void reset()
    {
        for (size_t i = 0; i < defs_.size(); i++)
            values_[i] = defs_[i].reset;
    }

    // Stored value of register `index` (its position in the table), without read hooks.
    uint64_t get(size_t index) const { return values_[index]; }
    // Device-side update: bypasses the guest write masks and hooks.
    void set(size_t index, uint64_t value) { values_[index] = value & width_mask(defs_[index]); }

    // A guest read of `size` bytes at `offset`. Bytes no register covers read as zero.
    uint64_t read(uint32_t offset, unsigned size)
    {
        uint64_t result = 0;
        for (unsigned i = 0; i < size;) {
            const RegDef<Owner>* d = def_at(offset + i);
            if (!d) {
                i++;
                continue;
            }
            size_t index = d - defs_.data();
            uint64_t v = d->on_read ? (owner_.*(d->on_read))(values_[index]) : values_[index];
            unsigned first = offset + i - d->offset;
            unsigned n = std::min(d->width - first, size - i);
            result |= ((v >> (8 * first)) & byte_mask(n)) << (8 * i);
            i += n;
        }
        return result;
    }

    // A guest write of `size` bytes at `offset`. Bytes no register covers are ignored.
    void write(uint32_t offset, uint64_t value, unsigned size)
    {
        for (unsigned i = 0; i < size;) {
            const RegDef<Owner>* d = def_at(offset + i);
            if (!d) {
                i++;
                continue;
            }
            size_t index = d - defs_.data();
            unsigned first = offset + i - d->offset;
            unsigned n = std::min(d->width - first, size - i);
            uint64_t bytes = byte_mask(n) << (8 * first);
            uint64_t written = ((value >> (8 * i)) << (8 * first)) & bytes;
            uint64_t old = values_[index];
            uint64_t now = (old & ~(d->rw & bytes)) | (written & d->rw);
            now &= ~(written & d->w1c);
            values_[index] = now;
            if (d->on_write)
                (owner_.*(d->on_write))(old, written, bytes);
            i += n;
        }
    }

  private:
    const RegDef<Owner>* def_at(uint32_t offset) const
    {
        if (offset >= lane_.size() || lane_[offset] < 0)
            return nullptr;
        return &defs_[lane_[offset]];
    }
    static uint64_t byte_mask(unsigned n) { return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1; }
    static uint64_t width_mask(const RegDef<Owner>& d) { return byte_mask(d.width); }

    Owner& owner_;
    std::span<const RegDef<Owner>> defs_;
    std::vector<int16_t> lane_; // byte offset -> register index, -1 where none
    std::vector<uint64_t> values_;
};

} // namespace dmalab
