// SPDX-License-Identifier: GPL-2.0-or-later
// A recursive-descent reader for RFC 8259 JSON with bounded depth, for untrusted files.

#include "dmalab/json.h"

#include <algorithm>
#include <cmath>

namespace dmalab
{
namespace
{

class Reader
{
  public:
    Reader(std::string_view in, std::string* error, JsonLimits limits)
        : in_(in), error_(error), limits_(limits)
    {
    }

    std::optional<Json> document()
    {
        if (in_.size() > limits_.max_bytes)
            return fail("the file is larger than " + std::to_string(limits_.max_bytes) + " bytes");
        Json v;
        skip_space();
        if (!value(v, 0))
            return std::nullopt;
        skip_space();
        if (pos_ != in_.size())
            return fail("unexpected text after the document");
        return v;
    }

  private:
    std::nullopt_t fail(const std::string& what)
    {
        if (error_ && !failed_)
            *error_ = "line " + std::to_string(line_) + ", column " + std::to_string(column()) +
                      ": " + what;
        failed_ = true;
        return std::nullopt;
    }

    unsigned column() const { return static_cast<unsigned>(pos_ - line_start_) + 1; }
    bool at_end() const { return pos_ >= in_.size(); }
    char peek() const { return at_end() ? '\0' : in_[pos_]; }

    void skip_space()
    {
        while (!at_end()) {
            char c = in_[pos_];
            if (c == '\n') {
                pos_++;
                line_++;
                line_start_ = pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                pos_++;
            } else {
                break;
            }
        }
    }

    bool literal(std::string_view word)
    {
        if (in_.substr(pos_, word.size()) != word)
            return false;
        pos_ += word.size();
        return true;
    }

    bool value(Json& v, unsigned depth)
    {
        v.line = line_;
        v.column = column();
        char c = peek();
        if (c == '{' || c == '[') {
            if (depth >= limits_.max_depth) {
                fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
                return false;
            }
            return c == '{' ? object(v, depth + 1) : array(v, depth + 1);
        }
        if (c == '"') {
            v.kind = Json::Kind::String;
            return string(v.text);
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            v.kind = Json::Kind::Number;
            return number(v.text);
        }
        if (literal("true")) {
            v.kind = Json::Kind::Bool;
            v.boolean = true;
            return true;
        }
        if (literal("false")) {
            v.kind = Json::Kind::Bool;
            return true;
        }
        if (literal("null"))
            return true;
        if (at_end())
            fail("the document ends where a value was expected");
        else
            fail("a value was expected");
        return false;
    }

    bool object(Json& v, unsigned depth)
    {
        v.kind = Json::Kind::Object;
        pos_++; // '{'
        skip_space();
        if (peek() == '}') {
            pos_++;
            return true;
        }
        for (;;) {
            skip_space();
            if (peek() != '"') {
                fail("a member name in double quotes was expected");
                return false;
            }
            unsigned key_line = line_, key_column = column();
            std::string key;
            if (!string(key))
                return false;
            if (v.get(key)) {
                line_ = key_line;
                pos_ = line_start_ + key_column - 1;
                fail("'" + key + "' appears twice in this object");
                return false;
            }
            skip_space();
            if (peek() != ':') {
                fail("':' was expected after the member name");
                return false;
            }
            pos_++;
            skip_space();
            Json member;
            if (!value(member, depth))
                return false;
            v.keys.push_back(std::move(key));
            v.items.push_back(std::move(member));
            skip_space();
            if (peek() == ',') {
                pos_++;
                continue;
            }
            if (peek() == '}') {
                pos_++;
                return true;
            }
            fail("',' or '}' was expected");
            return false;
        }
    }

    bool array(Json& v, unsigned depth)
    {
        v.kind = Json::Kind::Array;
        pos_++; // '['
        skip_space();
        if (peek() == ']') {
            pos_++;
            return true;
        }
        for (;;) {
            skip_space();
            Json item;
            if (!value(item, depth))
                return false;
            v.items.push_back(std::move(item));
            skip_space();
            if (peek() == ',') {
                pos_++;
                continue;
            }
            if (peek() == ']') {
                pos_++;
                return true;
            }
            fail("',' or ']' was expected");
            return false;
        }
    }

    bool hex4(uint32_t& out)
    {
        out = 0;
        for (int i = 0; i < 4; i++) {
            char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else {
                fail("\\u needs four hexadecimal digits");
                return false;
            }
            out = out << 4 | d;
            pos_++;
        }
        return true;
    }

    static void put_utf8(std::string& s, uint32_t cp)
    {
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else if (cp < 0x800) {
            s += static_cast<char>(0xc0 | cp >> 6);
            s += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            s += static_cast<char>(0xe0 | cp >> 12);
            s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            s += static_cast<char>(0xf0 | cp >> 18);
            s += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
            s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }

    bool escape(std::string& out)
    {
        char c = peek();
        pos_++;
        switch (c) {
        case '"':
        case '\\':
        case '/':
            out += c;
            return true;
        case 'b':
            out += '\b';
            return true;
        case 'f':
            out += '\f';
            return true;
        case 'n':
            out += '\n';
            return true;
        case 'r':
            out += '\r';
            return true;
        case 't':
            out += '\t';
            return true;
        case 'u': {
            uint32_t cp;
            if (!hex4(cp))
                return false;
            if (cp >= 0xdc00 && cp <= 0xdfff) {
                fail("a lone low surrogate in \\u escape");
                return false;
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                uint32_t low;
                if (!literal("\\u") || !hex4(low) || low < 0xdc00 || low > 0xdfff) {
                    fail("a high surrogate must be followed by a \\u low surrogate");
                    return false;
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            }
            put_utf8(out, cp);
            return true;
        }
        default:
            pos_--;
            fail("unknown escape in string");
            return false;
        }
    }

    bool string(std::string& out)
    {
        pos_++; // opening quote
        for (;;) {
            if (at_end()) {
                fail("the string is not closed");
                return false;
            }
            char c = in_[pos_];
            if (c == '"') {
                pos_++;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                fail("a control character inside a string");
                return false;
            }
            pos_++;
            if (c == '\\') {
                if (!escape(out))
                    return false;
            } else {
                out += c;
            }
        }
    }

    bool digits()
    {
        if (!(peek() >= '0' && peek() <= '9'))
            return false;
        while (peek() >= '0' && peek() <= '9')
            pos_++;
        return true;
    }

    bool number(std::string& out)
    {
        size_t start = pos_;
        if (peek() == '-')
            pos_++;
        if (peek() == '0') {
            pos_++;
            if (peek() >= '0' && peek() <= '9') {
                fail("a number may not have leading zeros (write hexadecimal as a string, "
                     "\"0x10\")");
                return false;
            }
        } else if (!digits()) {
            fail("a digit was expected");
            return false;
        }
        if (peek() == '.') {
            pos_++;
            if (!digits()) {
                fail("a digit was expected after '.'");
                return false;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos_++;
            if (peek() == '+' || peek() == '-')
                pos_++;
            if (!digits()) {
                fail("a digit was expected in the exponent");
                return false;
            }
        }
        out.assign(in_.substr(start, pos_ - start));
        return true;
    }

    std::string_view in_;
    std::string* error_;
    JsonLimits limits_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    unsigned line_ = 1;
    bool failed_ = false;
};

std::optional<uint64_t> parse_unsigned(std::string_view s, unsigned base)
{
    if (s.empty())
        return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        unsigned d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        if (d >= base || v > (UINT64_MAX - d) / base)
            return std::nullopt;
        v = v * base + d;
    }
    return v;
}

} // namespace

const Json* Json::get(std::string_view key) const
{
    if (kind != Kind::Object)
        return nullptr;
    for (size_t i = 0; i < keys.size(); i++)
        if (keys[i] == key)
            return &items[i];
    return nullptr;
}

std::string Json::where() const
{
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::optional<Json> parse_json(std::string_view in, std::string* error, JsonLimits limits)
{
    return Reader(in, error, limits).document();
}

std::optional<uint64_t> json_u64(const Json& v)
{
    if (v.kind == Json::Kind::Number)
        return parse_unsigned(v.text, 10);
    if (v.kind != Json::Kind::String)
        return std::nullopt;
    std::string_view s = v.text;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return parse_unsigned(s.substr(2), 16);
    return parse_unsigned(s, 10);
}

// Locale-independent (strtod reads ',' as the decimal point in some locales), and exact
// enough for probabilities and ratios: 19 significant digits, then scaled by 10^exponent.
std::optional<double> json_double(const Json& v)
{
    if (v.kind != Json::Kind::Number)
        return std::nullopt;
    std::string_view s = v.text;
    size_t i = 0;
    bool negative = i < s.size() && s[i] == '-';
    if (negative)
        i++;
    uint64_t mantissa = 0;
    int digits = 0, scale = 0;
    bool fraction = false;
    for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            fraction = true;
            continue;
        }
        if (digits < 19) {
            mantissa = mantissa * 10 + static_cast<uint64_t>(s[i] - '0');
            if (mantissa)
                digits++;
            if (fraction)
                scale--;
        } else if (!fraction) {
            scale++;
        }
    }
    if (i < s.size()) { // exponent, as validated by the reader
        i++;
        bool down = s[i] == '-';
        if (s[i] == '+' || s[i] == '-')
            i++;
        int e = 0;
        for (; i < s.size(); i++)
            e = std::min(e * 10 + (s[i] - '0'), 100000);
        scale += down ? -e : e;
    }
    double d = static_cast<double>(mantissa) * std::pow(10.0, scale);
    if (!std::isfinite(d))
        return std::nullopt;
    return negative ? -d : d;
}

} // namespace dmalab
