// SPDX-License-Identifier: GPL-2.0-or-later
// A strict JSON reader (RFC 8259) for the files users hand the models, such as fault plans.
// Its input is untrusted: depth and size are bounded, and an error names the line and column.
// It throws nothing, so it builds inside QEMU (-fno-exceptions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dmalab
{

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object };

    Kind kind = Kind::Null;
    bool boolean = false;
    std::string text;              // a string's value, or a number's literal as written
    std::vector<Json> items;       // an array's elements, or an object's member values
    std::vector<std::string> keys; // an object's member names, in file order, unique
    unsigned line = 0, column = 0; // where the value starts (1-based)

    const Json* get(std::string_view key) const;
    // Where the value is, for messages: "line 3, column 7".
    std::string where() const;
};

struct JsonLimits {
    size_t max_bytes = 64 * 1024;
    unsigned max_depth = 16;
};

// The document, or nullopt with *error saying what is wrong and where.
std::optional<Json> parse_json(std::string_view in, std::string* error, JsonLimits limits = {});

// A JSON number literal as an unsigned integer (no fraction, no exponent, no sign), or a
// string holding a decimal or 0x-prefixed hexadecimal integer. nullopt when it is not one
// or does not fit in 64 bits.
std::optional<uint64_t> json_u64(const Json& v);
// A JSON number as a double; nullopt when the value is not a number.
std::optional<double> json_double(const Json& v);

} // namespace dmalab
