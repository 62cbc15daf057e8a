// SPDX-License-Identifier: GPL-2.0-or-later
// A declarative register bank. A device lists its registers once, each with its named fields
// and their access kinds; the bank maps every MMIO access, of any size or alignment, onto
// them, applies the access rules and reports guest mistakes (reserved bits, undecoded
// offsets) through Log. Device models never decode offsets themselves.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "dmalab/log.h"

namespace dmalab
{

enum class FieldAccess : uint8_t {
    RO,  // read-only: writes are ignored, the device sets the value
    RW,  // read-write
    W1C, // write 1 to clear
    W1S, // write 1 to set
    RC,  // read-only, cleared by a read of it
    WO,  // write-only: reads return 0 (command bits)
};

struct Field {
    const char* name;
    uint8_t lsb;
    uint8_t width;
    FieldAccess access;

    constexpr uint64_t mask() const { return (width >= 64 ? ~0ull : (1ull << width) - 1) << lsb; }
    // The field's value in a register value, and a value placed in the field.
    constexpr uint64_t get(uint64_t reg) const { return (reg & mask()) >> lsb; }
    constexpr uint64_t put(uint64_t value) const { return (value << lsb) & mask(); }
};

// The bits of a field table's fields: what a register, entry or descriptor defines (the rest
// is reserved). Like the lookups below, evaluated where it is written, never at run time.
template <size_t N> consteval uint64_t defined_bits(const Field (&fields)[N])
{
    uint64_t m = 0;
    for (const Field& f : fields)
        m |= f.mask();
    return m;
}

namespace detail
{
// Not constexpr: reaching it in a constant expression (a name no field has) fails to compile.
// The lookups are consteval, so a name is resolved where it is written, never at run time.
[[noreturn]] inline void no_such_field()
{
    std::abort();
}
} // namespace detail

// The mask of the field called `name` in a register's field table, for the code that tests
// or sets its bits: masks derive from the one declaration of each field. A name the table
// lacks does not compile where the mask is a constant.
template <size_t N> consteval uint64_t field_mask(const Field (&fields)[N], std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return f.mask();
    detail::no_such_field();
}

// The lowest bit of the field called `name` (for shifting a value into or out of it).
template <size_t N> consteval unsigned field_lsb(const Field (&fields)[N], std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return f.lsb;
    detail::no_such_field();
}

// The field called `name`, for its get() and put().
template <size_t N> consteval Field field(const Field (&fields)[N], std::string_view name)
{
    for (const Field& f : fields)
        if (name == f.name)
            return f;
    detail::no_such_field();
}

// A device's register map, one row per register: the one place that declares a register.
// Its bank's table (indices, offsets, widths, fields, reset values) derives from the map,
// and the device attaches behaviour by name (RegHook, bank_table). A row with count > 1
// declares `count` registers of the same layout, `stride` bytes apart (an array, such as
// VT-d's fault-recording registers); they take consecutive indices.
struct RegSpec {
    const char* name;
    uint32_t offset;
    uint8_t width; // bytes: 1, 2, 4 or 8
    uint64_t reset;
    std::span<const Field> fields; // bits outside every field are reserved
    unsigned count = 1;
    uint32_t stride = 0;
};

// How many registers a map declares (arrays counted element by element).
template <size_t N> consteval unsigned reg_count(const RegSpec (&map)[N])
{
    unsigned n = 0;
    for (const RegSpec& r : map)
        n += r.count;
    return n;
}

namespace detail
{
[[noreturn]] inline void no_such_register()
{
    std::abort();
}
} // namespace detail

// The bank index of register `name` (element `i` of an array). Immediate: a name the map
// lacks, or an element beyond the array, does not compile.
template <size_t N>
consteval unsigned reg_index(const RegSpec (&map)[N], std::string_view name, unsigned i = 0)
{
    unsigned index = 0;
    for (const RegSpec& r : map) {
        if (name == r.name && i < r.count)
            return index + i;
        index += r.count;
    }
    detail::no_such_register();
}

// The offset of register `name` (element `i` of an array).
template <size_t N>
consteval uint32_t reg_offset(const RegSpec (&map)[N], std::string_view name, unsigned i = 0)
{
    for (const RegSpec& r : map)
        if (name == r.name && i < r.count)
            return r.offset + i * r.stride;
    detail::no_such_register();
}

// The row of register `name`, for its fields and width.
template <size_t N>
consteval const RegSpec& reg_spec(const RegSpec (&map)[N], std::string_view name)
{
    for (const RegSpec& r : map)
        if (name == r.name)
            return r;
    detail::no_such_register();
}

template <class Owner> struct RegDef {
    unsigned id; // the register's index in its table: checked at compile time
    const char* name;
    uint32_t offset;
    uint8_t width; // bytes: 1, 2, 4 or 8
    uint64_t reset;
    std::span<const Field> fields; // bits outside every field are reserved
    // Computes what a read returns from the stored value (for live status registers).
    uint64_t (Owner::*on_read)(uint64_t stored) = nullptr;
    // Runs after the stored value has been updated. `written` holds the bytes the access wrote,
    // aligned to the register; `bytes` has 0xff in each byte lane the access covered.
    void (Owner::*on_write)(uint64_t old_value, uint64_t written, uint64_t bytes) = nullptr;

    constexpr uint64_t bits(FieldAccess a) const
    {
        uint64_t m = 0;
        for (const Field& f : fields)
            if (f.access == a)
                m |= f.mask();
        return m;
    }
    constexpr uint64_t defined() const
    {
        uint64_t m = 0;
        for (const Field& f : fields)
            m |= f.mask();
        return m;
    }
    constexpr uint64_t width_mask() const { return width >= 8 ? ~0ull : (1ull << (8 * width)) - 1; }
    // The field called `field`'s mask, 0 if there is none.
    constexpr uint64_t field(const char* field_name) const
    {
        for (const Field& f : fields) {
            const char* a = f.name;
            const char* b = field_name;
            while (*a && *a == *b) {
                a++;
                b++;
            }
            if (*a == *b)
                return f.mask();
        }
        return 0;
    }
};

// Behaviour a device gives a register of its map, named as the map names it (every element
// of an array gets it).
template <class Owner> struct RegHook {
    const char* name;
    uint64_t (Owner::*on_read)(uint64_t stored) = nullptr;
    void (Owner::*on_write)(uint64_t old_value, uint64_t written, uint64_t bytes) = nullptr;
};

// The bank table of `map` with `hooks` attached: N rows, N = reg_count(map). A hook naming
// no register of the map, or a register named by two hooks, does not compile.
template <class Owner, unsigned N, size_t M, size_t H>
consteval std::array<RegDef<Owner>, N> bank_table(const RegSpec (&map)[M],
                                                  const RegHook<Owner> (&hooks)[H])
{
    std::array<RegDef<Owner>, N> t{};
    unsigned index = 0;
    for (const RegSpec& r : map)
        for (unsigned i = 0; i < r.count; i++, index++)
            t[index] = {index, r.name, r.offset + i * r.stride, r.width, r.reset, r.fields};
    if (index != N)
        detail::no_such_register(); // N is not the map's register count
    for (size_t h = 0; h < H; h++) {
        bool found = false;
        for (size_t k = 0; k < h; k++)
            if (std::string_view(hooks[k].name) == hooks[h].name)
                detail::no_such_register(); // one register, two hooks
        for (RegDef<Owner>& d : t)
            if (std::string_view(d.name) == hooks[h].name) {
                d.on_read = hooks[h].on_read;
                d.on_write = hooks[h].on_write;
                found = true;
            }
        if (!found)
            detail::no_such_register();
    }
    return t;
}

// Compile-time check of a register table: ids match positions, widths are valid, registers
// stay inside the window and do not overlap, fields stay inside their register and do not
// overlap each other, and reset values set no reserved bit.
template <class Owner, size_t N>
consteval bool well_formed(const std::array<RegDef<Owner>, N>& t, uint32_t window)
{
    for (size_t i = 0; i < N; i++) {
        const RegDef<Owner>& d = t[i];
        if (d.id != i)
            return false;
        if (d.width != 1 && d.width != 2 && d.width != 4 && d.width != 8)
            return false;
        if (d.offset + d.width > window)
            return false;
        uint64_t seen = 0;
        for (const Field& f : d.fields) {
            if (f.width == 0 || f.lsb + f.width > 8 * d.width)
                return false;
            if (seen & f.mask())
                return false;
            seen |= f.mask();
        }
        if (d.reset & ~d.defined())
            return false;
        for (size_t j = 0; j < i; j++)
            if (t[j].offset < d.offset + d.width && d.offset < t[j].offset + t[j].width)
                return false;
    }
    return true;
}

template <class Owner> class RegBank
{
  public:
    RegBank(Owner& owner, std::span<const RegDef<Owner>> defs, uint32_t window, Log& log,
            const char* bank)
        : owner_(owner), defs_(defs), log_(log), bank_(bank), lane_(window, -1),
          reset_(defs.size()), values_(defs.size())
    {
        for (size_t i = 0; i < defs_.size(); i++) {
            const RegDef<Owner>& d = defs_[i];
            for (unsigned b = 0; b < d.width; b++)
                lane_[d.offset + b] = static_cast<int16_t>(i);
            reset_[i] = d.reset;
        }
        reset();
    }

    // A reset value that depends on the device's configuration (capabilities, counts).
    void set_reset_value(size_t index, uint64_t value)
    {
        reset_[index] = value & defs_[index].width_mask();
    }
    void reset()
    {
        for (size_t i = 0; i < defs_.size(); i++)
            values_[i] = reset_[i];
    }

    // Stored value of register `index` (its position in the table), without read hooks.
    uint64_t get(size_t index) const { return values_[index]; }
    // Device-side update: bypasses the guest access rules and hooks.
    void set(size_t index, uint64_t value) { values_[index] = value & defs_[index].width_mask(); }

    // A guest read of `size` bytes at `offset`. Undecoded bytes read as zero.
    uint64_t read(uint32_t offset, unsigned size)
    {
        uint64_t result = 0;
        lanes(offset, size, "read", [&](const Lanes& l) {
            const RegDef<Owner>& d = defs_[l.index];
            uint64_t stored = values_[l.index] & ~d.bits(FieldAccess::WO);
            uint64_t v = d.on_read ? (owner_.*(d.on_read))(stored) : stored;
            values_[l.index] &= ~(d.bits(FieldAccess::RC) & l.bytes);
            result |= ((v >> (8 * l.first)) & byte_mask(l.n)) << (8 * l.at);
        });
        return result;
    }

    // A guest write of `size` bytes at `offset`. Undecoded bytes and read-only bits are
    // ignored; reserved bits written as 1 are ignored and logged.
    void write(uint32_t offset, uint64_t value, unsigned size)
    {
        lanes(offset, size, "write", [&](const Lanes& l) {
            const RegDef<Owner>& d = defs_[l.index];
            uint64_t written = ((value >> (8 * l.at)) << (8 * l.first)) & l.bytes;
            if (uint64_t bad = written & ~d.defined())
                logf(log_, LogKind::GuestError, "%s: %s: reserved bits 0x%llx written as 1", bank_,
                     d.name, static_cast<unsigned long long>(bad));
            uint64_t old = values_[l.index];
            uint64_t replace = (d.bits(FieldAccess::RW) | d.bits(FieldAccess::WO)) & l.bytes;
            uint64_t now = (old & ~replace) | (written & replace);
            now &= ~(written & d.bits(FieldAccess::W1C));
            now |= written & d.bits(FieldAccess::W1S);
            values_[l.index] = now;
            if (d.on_write)
                (owner_.*(d.on_write))(old, written, l.bytes);
        });
    }

  private:
    // One register's part of an access: its index, the access's byte `at` which it starts,
    // the register's byte `first` there, `n` bytes, and `bytes` those lanes of the register.
    struct Lanes {
        size_t index;
        unsigned at, first, n;
        uint64_t bytes;
    };
    // Walks an access of `size` bytes at `offset` register by register, in address order;
    // bytes no register decodes are skipped and logged once.
    template <class Fn> void lanes(uint32_t offset, unsigned size, const char* what, Fn&& fn)
    {
        bool missed = false;
        for (unsigned i = 0; i < size;) {
            const RegDef<Owner>* d = def_at(offset + i);
            if (!d) {
                missed = true;
                i++;
                continue;
            }
            unsigned first = offset + i - d->offset;
            unsigned n = std::min<unsigned>(d->width - first, size - i);
            fn(Lanes{static_cast<size_t>(d - defs_.data()), i, first, n,
                     byte_mask(n) << (8 * first)});
            i += n;
        }
        if (missed)
            undecoded(what, offset, size);
    }
    const RegDef<Owner>* def_at(uint32_t offset) const
    {
        if (offset >= lane_.size() || lane_[offset] < 0)
            return nullptr;
        return &defs_[lane_[offset]];
    }
    void undecoded(const char* what, uint32_t offset, unsigned size)
    {
        logf(log_, LogKind::GuestError, "%s: %u-byte %s at 0x%x reaches undecoded bytes", bank_,
             size, what, offset);
    }
    static uint64_t byte_mask(unsigned n) { return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1; }

    Owner& owner_;
    std::span<const RegDef<Owner>> defs_;
    Log& log_;
    const char* bank_;
    std::vector<int16_t> lane_; // byte offset -> register index, -1 where none
    std::vector<uint64_t> reset_;
    std::vector<uint64_t> values_;
};

} // namespace dmalab
