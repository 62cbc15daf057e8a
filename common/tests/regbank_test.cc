// SPDX-License-Identifier: GPL-2.0-or-later
// The register bank's access rules, field by field, and what it reports to the log.

#include <gtest/gtest.h>

#include "../testing/fake_memory.h"
#include "dmalab/regbank.h"

namespace dmalab
{
namespace
{

using A = FieldAccess;

struct Toy;
enum : unsigned { R_MIXED, R_WIDE, R_COUNT };
constexpr Field kMixed[] = {{"RW", 0, 4, A::RW},    {"RO", 4, 4, A::RO},  {"W1C", 8, 4, A::W1C},
                            {"W1S", 12, 4, A::W1S}, {"RC", 16, 4, A::RC}, {"WO", 20, 4, A::WO}};
constexpr Field kWide[] = {{"LOW", 0, 32, A::RW}, {"HIGH", 32, 32, A::RW}};

struct Toy {
    uint64_t on_read(uint64_t stored)
    {
        reads++;
        return stored;
    }
    void on_write(uint64_t old, uint64_t written, uint64_t bytes) { last = {old, written, bytes}; }
    unsigned reads = 0;
    struct {
        uint64_t old, written, bytes;
    } last{};
};

// clang-format off
constexpr std::array<RegDef<Toy>, R_COUNT> kTable = {{
    {R_MIXED, "MIXED", 0x00, 4, 0x000f00f0, kMixed, &Toy::on_read, &Toy::on_write},
    {R_WIDE,  "WIDE",  0x08, 8, 0,          kWide,  nullptr,       nullptr},
}};
// clang-format on
static_assert(well_formed(kTable, 0x20));

// The compile-time check catches each kind of table mistake.
constexpr std::array<RegDef<Toy>, 2> kSwapped = {
    {{1, "A", 0, 4, 0, kWide}, {0, "B", 8, 4, 0, kWide}}};
static_assert(!well_formed(kSwapped, 0x20), "ids must match positions");
constexpr std::array<RegDef<Toy>, 2> kOverlap = {
    {{0, "A", 0, 8, 0, kWide}, {1, "B", 4, 4, 0, kMixed}}};
static_assert(!well_formed(kOverlap, 0x20), "registers must not overlap");
constexpr std::array<RegDef<Toy>, 1> kTooWide = {{{0, "A", 0, 4, 0, kWide}}};
static_assert(!well_formed(kTooWide, 0x20), "fields must fit their register");
constexpr std::array<RegDef<Toy>, 1> kReservedReset = {{{0, "A", 0, 4, 1u << 31, kMixed}}};
static_assert(!well_formed(kReservedReset, 0x20), "reset values set no reserved bit");
constexpr std::array<RegDef<Toy>, 1> kOutside = {{{0, "A", 0x1c, 8, 0, kWide}}};
static_assert(!well_formed(kOutside, 0x20), "registers stay inside the window");

struct Bank : ::testing::Test {
    Toy toy;
    testing::FakeLog log;
    RegBank<Toy> bank{toy, kTable, 0x20, log, "toy"};
};

TEST_F(Bank, EachAccessKind)
{
    bank.set(R_MIXED, 0x000f0f00); // W1C bits and RC bits set by the device
    bank.write(0, 0xffffffff, 4);
    uint64_t v = bank.get(R_MIXED);
    EXPECT_EQ(v & 0xf, 0xfu) << "RW takes the value";
    EXPECT_EQ(v & 0xf0, 0u) << "RO ignores writes (stored 0)";
    EXPECT_EQ(v & 0xf00, 0u) << "W1C cleared by writing 1";
    EXPECT_EQ(v & 0xf000, 0xf000u) << "W1S set by writing 1";
    EXPECT_EQ(v & 0xf0000, 0xf0000u) << "RC unaffected by writes";
    EXPECT_EQ(v & 0xf00000, 0xf00000u) << "WO stored for the hook";
    uint64_t r = bank.read(0, 4);
    EXPECT_EQ(r & 0xf00000, 0u) << "WO reads as 0";
    EXPECT_EQ(r & 0xf0000, 0xf0000u) << "RC returns its value";
    EXPECT_EQ(bank.get(R_MIXED) & 0xf0000, 0u) << "and is cleared by the read";
    bank.write(0, 0, 4);
    EXPECT_EQ(bank.get(R_MIXED) & 0xf000, 0xf000u) << "W1S ignores 0";
}

TEST_F(Bank, ReadClearOnlyInTheBytesRead)
{
    bank.set(R_MIXED, 0x000f0000);
    bank.read(0, 1); // byte 0 does not cover the RC field (bits 16..19)
    EXPECT_EQ(bank.get(R_MIXED) & 0xf0000, 0xf0000u);
    bank.read(2, 1);
    EXPECT_EQ(bank.get(R_MIXED) & 0xf0000, 0u);
}

TEST_F(Bank, ReservedBitsAreIgnoredAndLogged)
{
    bank.write(0, 0xff000000, 4);
    EXPECT_EQ(bank.get(R_MIXED) & 0xff000000, 0u);
    ASSERT_EQ(log.guest_errors.size(), 1u);
    EXPECT_NE(log.guest_errors[0].find("MIXED"), std::string::npos);
    EXPECT_NE(log.guest_errors[0].find("0xff000000"), std::string::npos);
}

TEST_F(Bank, UndecodedOffsetsReadZeroAndAreLogged)
{
    EXPECT_EQ(bank.read(0x4, 4), 0u);
    bank.write(0x10, 1, 4);
    EXPECT_EQ(log.guest_errors.size(), 2u) << "one line per access, not per byte";
}

TEST_F(Bank, PartialAndSpanningAccesses)
{
    bank.write(0x0c, 0x12345678, 4); // the high half of WIDE
    EXPECT_EQ(bank.get(R_WIDE), 0x1234567800000000u);
    bank.write(0x0b, 0xaabb, 2); // spans the low and high halves
    EXPECT_EQ(bank.get(R_WIDE), 0x123456aabb000000u);
    EXPECT_EQ(bank.read(0x0a, 4), 0x56aabb00u);
    // A write that covers two registers reaches both, each through its own rules.
    bank.write(0, 0x3, 1);
    EXPECT_EQ(toy.last.bytes, 0xffu);
    EXPECT_EQ(toy.last.written, 0x3u);
}

TEST_F(Bank, ResetValuesAndOverrides)
{
    EXPECT_EQ(bank.get(R_MIXED), 0x000f00f0u);
    bank.set_reset_value(R_WIDE, 42);
    bank.write(0x08, 7, 8);
    bank.reset();
    EXPECT_EQ(bank.get(R_WIDE), 42u);
}

TEST(Fields, LookupByName)
{
    EXPECT_EQ(kTable[R_MIXED].field("W1C"), 0xf00u);
    EXPECT_EQ(kTable[R_MIXED].field("nope"), 0u);
    EXPECT_EQ(kTable[R_MIXED].bits(A::RC), 0xf0000u);
    EXPECT_EQ(kTable[R_MIXED].defined(), 0xffffffu);
}

// A map declared once, with an array, and hooks attached by name.
constexpr RegSpec kMap[] = {
    {"MIXED", 0x00, 4, 0x000f00f0, kMixed},
    {"WIDE", 0x08, 8, 0, kWide},
    {"ARR", 0x10, 4, 0, kMixed, 3, 8},
};
static_assert(reg_count(kMap) == 5);
static_assert(reg_index(kMap, "WIDE") == 1 && reg_index(kMap, "ARR", 2) == 4);
static_assert(reg_offset(kMap, "ARR", 2) == 0x20 && reg_offset(kMap, "MIXED") == 0);
static_assert(reg_spec(kMap, "WIDE").width == 8);
constexpr RegHook<Toy> kHooks[] = {{"ARR", &Toy::on_read, nullptr},
                                   {"MIXED", nullptr, &Toy::on_write}};
constexpr auto kMapTable = bank_table<Toy, reg_count(kMap)>(kMap, kHooks);
static_assert(well_formed(kMapTable, 0x40));

TEST(Map, RowsHooksAndArrays)
{
    EXPECT_STREQ(kMapTable[4].name, "ARR");
    EXPECT_EQ(kMapTable[4].offset, 0x20u);
    EXPECT_EQ(kMapTable[4].id, 4u);
    EXPECT_EQ(kMapTable[0].reset, 0x000f00f0u);
    for (unsigned i = 2; i < 5; i++)
        EXPECT_EQ(kMapTable[i].on_read, &Toy::on_read) << "every element of the array";
    EXPECT_EQ(kMapTable[0].on_write, &Toy::on_write);
    EXPECT_EQ(kMapTable[0].on_read, nullptr);
    EXPECT_EQ(kMapTable[1].on_read, nullptr);
    Toy toy;
    testing::FakeLog log;
    RegBank<Toy> bank{toy, kMapTable, 0x40, log, "map"};
    bank.set(reg_index(kMap, "ARR", 1), 0x5);
    EXPECT_EQ(bank.read(0x18, 4), 0x5u);
    EXPECT_EQ(toy.reads, 1u);
}

TEST(Fields, GetPutAndDefinedBits)
{
    constexpr Field ro = field(kMixed, "RO");
    static_assert(ro.lsb == 4 && ro.width == 4);
    EXPECT_EQ(ro.get(0xabcd), 0xcu);
    EXPECT_EQ(ro.put(0x1f), 0xf0u) << "a value wider than its field is cut";
    EXPECT_EQ(field(kWide, "HIGH").get(0x1234567800000000ull), 0x12345678u);
    EXPECT_EQ(defined_bits(kMixed), 0xffffffu);
}

} // namespace
} // namespace dmalab
