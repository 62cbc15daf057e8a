// SPDX-License-Identifier: GPL-2.0-or-later
// The JSON reader: what it accepts, and that every malformed input is refused with a position.

#include <gtest/gtest.h>

#include "dmalab/json.h"

namespace dmalab
{
namespace
{

Json parse_ok(std::string_view s)
{
    std::string err;
    auto v = parse_json(s, &err);
    EXPECT_TRUE(v) << err;
    return v ? *v : Json{};
}

std::string parse_error(std::string_view s, JsonLimits limits = {})
{
    std::string err;
    auto v = parse_json(s, &err, limits);
    EXPECT_FALSE(v) << s;
    return err;
}

TEST(Json, ReadsEveryKind)
{
    Json v =
        parse_ok(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"\u00e9\ud83d\ude00"}} )");
    ASSERT_EQ(v.kind, Json::Kind::Object);
    const Json* a = v.get("a");
    ASSERT_TRUE(a);
    ASSERT_EQ(a->items.size(), 5u);
    EXPECT_EQ(a->items[0].text, "1");
    EXPECT_EQ(a->items[1].text, "-2.5e3");
    EXPECT_TRUE(a->items[2].boolean);
    EXPECT_EQ(a->items[3].kind, Json::Kind::Bool);
    EXPECT_EQ(a->items[4].kind, Json::Kind::Null);
    EXPECT_EQ(v.get("b")->get("c")->text, "x\"\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(v.get("missing"), nullptr);
}

TEST(Json, RemembersWhereValuesStart)
{
    Json v = parse_ok("{\n  \"a\":\n    7}");
    EXPECT_EQ(v.get("a")->where(), "line 3, column 5");
}

TEST(Json, RefusesMalformedInputNamingThePlace)
{
    EXPECT_EQ(parse_error("{\"a\": 1,}"),
              "line 1, column 9: a member name in double quotes was expected");
    EXPECT_EQ(parse_error("{\"a\": 1\n \"b\": 2}"), "line 2, column 2: ',' or '}' was expected");
    EXPECT_EQ(parse_error("[1 2]"), "line 1, column 4: ',' or ']' was expected");
    EXPECT_EQ(parse_error("{\"a\": 1, \"a\": 2}"),
              "line 1, column 10: 'a' appears twice in this object");
    EXPECT_EQ(parse_error("[01]"), "line 1, column 3: a number may not have leading zeros (write "
                                   "hexadecimal as a string, \"0x10\")");
    EXPECT_EQ(parse_error("{} x"), "line 1, column 4: unexpected text after the document");
    EXPECT_EQ(parse_error(""), "line 1, column 1: the document ends where a value was expected");
    EXPECT_EQ(parse_error("\"abc"), "line 1, column 5: the string is not closed");
    EXPECT_EQ(parse_error("\"a\nb\""), "line 1, column 3: a control character inside a string");
    EXPECT_EQ(parse_error("\"\\q\""), "line 1, column 3: unknown escape in string");
    EXPECT_EQ(parse_error("\"\\ud800x\""),
              "line 1, column 8: a high surrogate must be followed by a \\u low surrogate");
    EXPECT_EQ(parse_error("\"\\udc00\""), "line 1, column 8: a lone low surrogate in \\u escape");
    EXPECT_EQ(parse_error("[1.]"), "line 1, column 4: a digit was expected after '.'");
    EXPECT_EQ(parse_error("[1e]"), "line 1, column 4: a digit was expected in the exponent");
    EXPECT_EQ(parse_error("[-]"), "line 1, column 3: a digit was expected");
    EXPECT_EQ(parse_error("tru"), "line 1, column 1: a value was expected");
}

TEST(Json, BoundsDepthAndSize)
{
    std::string deep(17, '[');
    EXPECT_EQ(parse_error(deep), "line 1, column 17: nested deeper than 16 levels");
    std::string ok = std::string(16, '[') + std::string(16, ']');
    parse_ok(ok);
    std::string big = "[" + std::string(100, ' ') + "]";
    EXPECT_EQ(parse_error(big, {50, 16}), "line 1, column 1: the file is larger than 50 bytes");
}

TEST(Json, UnsignedIntegersFromNumbersAndStrings)
{
    Json v = parse_ok(R"([18446744073709551615, "0xFFffFFffFFffFFff", "42", 18446744073709551616,
                         "0x10000000000000000", -1, 1.5, "0x", "12a", true])");
    EXPECT_EQ(json_u64(v.items[0]), UINT64_MAX);
    EXPECT_EQ(json_u64(v.items[1]), UINT64_MAX);
    EXPECT_EQ(json_u64(v.items[2]), 42u);
    for (size_t i = 3; i < v.items.size(); i++)
        EXPECT_FALSE(json_u64(v.items[i])) << i;
}

TEST(Json, DoublesWithoutTheLocale)
{
    Json v = parse_ok(R"([0.25, 1, 1e-3, 2.5E+2, -0.5, 0.000001, 1e400, "1"])");
    EXPECT_DOUBLE_EQ(*json_double(v.items[0]), 0.25);
    EXPECT_DOUBLE_EQ(*json_double(v.items[1]), 1.0);
    EXPECT_DOUBLE_EQ(*json_double(v.items[2]), 0.001);
    EXPECT_DOUBLE_EQ(*json_double(v.items[3]), 250.0);
    EXPECT_DOUBLE_EQ(*json_double(v.items[4]), -0.5);
    EXPECT_DOUBLE_EQ(*json_double(v.items[5]), 0.000001);
    EXPECT_FALSE(json_double(v.items[6]));
    EXPECT_FALSE(json_double(v.items[7]));
}

} // namespace
} // namespace dmalab
