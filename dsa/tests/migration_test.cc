// SPDX-License-Identifier: GPL-2.0-or-later
// Saving a model with a command in progress and loading it into a new one; streams that are
// short, long, from another configuration, or holding a state the device cannot reach are
// refused and leave a reset model.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

// Where things sit in the stream (state.cc): magic, version, geometry, register count,
// the fixed registers, then WQCFG entries dword by dword.
constexpr size_t kHeader = 4 + 2 + 8 + 4;
constexpr size_t reg_at(unsigned index)
{
    return kHeader + 8 * index;
}
constexpr size_t wq_at(unsigned wq, uint32_t reg_offset)
{
    return kHeader + 8 * kRegCount + 4 * (wq * (kWqcfgStride / 4) + reg_offset / 4);
}

Config migrating()
{
    Config c;
    c.int_handles = true;
    c.command_ns = 1000;
    c.command_jitter_ns = 300;
    c.seed = 11;
    return c;
}

// A device in use, with a command in progress.
void busy(Rig& r)
{
    r.group(0, 0b11, 0b11);
    r.wq(0, 16);
    r.wq(1, 8, kDedicated | 2u << kPriorityShift);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::RequestIntHandle, 2), CmdErr::Success);
    r.wr(kGenctrl, 3);
    r.wr(r.perm(2), 1u << 2);
    r.dev.software_error({Status::InvalidFlags, 0});
    for (unsigned i = 0; i < 3; i++)
        r.submit(0, Desc(Opcode::Noop), i);
    r.issue(Cmd::EnableWq, 1);
    ASSERT_TRUE(r.active());
}

std::vector<uint8_t> saved(const Rig& r)
{
    StateWriter w;
    r.dev.save(w);
    return w.bytes;
}

bool load(Rig& r, const std::vector<uint8_t>& bytes)
{
    StateReader rd(bytes);
    return r.dev.load(rd);
}

TEST(Migration, MidCommandStateMovesToANewModel)
{
    Rig a(migrating());
    busy(a);
    const auto bytes = saved(a);
    Rig b(migrating());
    b.timers.now = a.timers.now;
    ASSERT_TRUE(load(b, bytes));
    EXPECT_EQ(saved(b), bytes) << "save, load, save: the same bytes";
    EXPECT_EQ(b.dump(), a.dump());
    EXPECT_EQ(b.dev.counters(), a.dev.counters());
    ASSERT_TRUE(b.pending()) << "the command in progress asks for its timer again";
    EXPECT_EQ(b.timers.next()->second, a.timers.next()->second);
    EXPECT_EQ(err_of(a.wait()), CmdErr::Success);
    EXPECT_EQ(err_of(b.wait()), CmdErr::Success);
    EXPECT_TRUE(b.wq_enabled(1));
    EXPECT_EQ(b.dump(), a.dump());
    EXPECT_EQ(b.dev.handle_vector(2), 2u);
    // The jitter generator moved too: the next commands take as long on both.
    a.run(Cmd::DrainAll);
    b.run(Cmd::DrainAll);
    EXPECT_EQ(a.timers.now, b.timers.now);
    EXPECT_EQ(saved(a), saved(b));
}

TEST(Migration, ShortAndLongStreamsAreRefused)
{
    Rig a(migrating());
    busy(a);
    const auto bytes = saved(a);
    Rig fresh(migrating());
    const auto reset_dump = fresh.dump();
    for (size_t n = 0; n < bytes.size(); n++) {
        Rig b(migrating());
        b.bring_up();
        ASSERT_FALSE(load(b, {bytes.begin(), bytes.begin() + static_cast<long>(n)})) << n;
        EXPECT_EQ(b.dump(), reset_dump) << "a refused load leaves a reset model, " << n;
        EXPECT_FALSE(b.pending());
    }
    auto longer = bytes;
    longer.push_back(0);
    Rig b(migrating());
    EXPECT_FALSE(load(b, longer));
}

TEST(Migration, StreamsFromAnotherConfigurationAreRefused)
{
    Rig a(migrating());
    busy(a);
    const auto bytes = saved(a);
    auto refused = [&](auto change) {
        Config c = migrating();
        change(c);
        Rig b(c);
        return !load(b, bytes);
    };
    EXPECT_TRUE(refused([](Config& c) { c.wqs = 4; }));
    EXPECT_TRUE(refused([](Config& c) { c.engines = 8; }));
    EXPECT_TRUE(refused([](Config& c) { c.int_handles = false; })) << "CMDCAP differs";
    EXPECT_TRUE(refused([](Config& c) { c.max_xfer_shift = 30; })) << "GENCAP differs";
    EXPECT_TRUE(refused([](Config& c) { c.total_wq_size = 64; })) << "WQCAP differs";
    EXPECT_FALSE(refused([](Config& c) { c.command_ns = 5; })) << "timing is no state";
}

TEST(Migration, StatesTheDeviceCannotReachAreRefused)
{
    Rig a(migrating());
    busy(a);
    const auto good = saved(a);
    auto put32 = [](std::vector<uint8_t>& b, size_t at, uint32_t v) {
        for (unsigned i = 0; i < 4; i++)
            b[at + i] = static_cast<uint8_t>(v >> (8 * i));
    };
    struct Bad {
        const char* what;
        size_t at;
        uint32_t value;
    };
    const Bad bad[] = {
        {"GENSTS Draining", reg_at(reg("GENSTS")), 2},
        {"a reset type on an enabled device", reg_at(reg("GENSTS")), 1 | 1 << 2},
        {"device disabled under an enabled WQ", reg_at(reg("GENSTS")), 0},
        {"reserved GENCTRL bits", reg_at(reg("GENCTRL")), 1u << 7},
        {"CMDSTS not ACTIVE mid-command", reg_at(reg("CMDSTS")), 0},
        {"an enabled WQ of size 0", wq_at(0, kWqSize), 0},
        {"WQ sizes beyond the total", wq_at(1, kWqSize), 120},
        {"WQ_STATE 2", wq_at(0, kWqStatus), 2u << 30 | 1u << 29},
        {"MODE_SUPPORT cleared", wq_at(0, kWqStatus), 1u << 30},
        {"occupancy beyond the size", wq_at(0, kWqStatus), 1u << 30 | 1u << 29 | 17},
        {"an enabled WQ with a batch limit above GENCAP's", wq_at(0, kWqLimits), limits(21, 11)},
        {"reserved WQCFG bits", wq_at(1, kWqSize), 8 | 1u << 20},
        {"another device's geometry", 6, 9}, // its WQ count
    };
    ASSERT_TRUE(load(*std::make_unique<Rig>(migrating()), good));
    for (const Bad& b : bad) {
        auto bytes = good;
        put32(bytes, b.at, b.value);
        Rig r(migrating());
        EXPECT_FALSE(load(r, bytes)) << b.what;
        EXPECT_FALSE(r.pending()) << b.what;
    }
}

TEST(Migration, ADescriptorInFlightMustBeOneItsRunCouldReach)
{
    // A copy under way, paced at 1 MB/s; then the stream's copy of its descriptor changed
    // (every place its words stand: the engine's, and the last portal store's).
    constexpr uint64_t kFrom = 0x13000, kTo = 0x57000;
    Config c = migrating();
    c.bandwidth = 1u << 20;
    Rig a(c);
    a.bring_up();
    Desc d(Opcode::Memmove, kRecord);
    d.completion(0x1000).src(kFrom).dst(kTo).size(0x8000);
    a.submit(0, d);
    ASSERT_TRUE(a.pending()) << "the copy is under way";
    EXPECT_EQ(a.record(0x1000).status, 0);
    const auto good = saved(a);
    auto changed = [&](uint64_t from, uint64_t to) {
        auto bytes = good;
        unsigned found = 0;
        for (size_t at = 0; at + 8 <= bytes.size(); at++) {
            uint64_t v = 0;
            std::memcpy(&v, &bytes[at], 8);
            if (v == from) {
                v = to;
                std::memcpy(&bytes[at], &v, 8);
                found++;
            }
        }
        EXPECT_GE(found, 1u);
        return bytes;
    };
    const uint64_t w0 = d.raw.word[0], op = uint64_t{0xff} << 56;
    const uint64_t flags = w0 & ~op;
    struct Bad {
        const char* what;
        std::vector<uint8_t> bytes;
    };
    const Bad bad[] = {
        {"an opcode DSA 1.0 does not define", changed(w0, op | flags)},
        {"a Noop with a size, which has no data phase", changed(w0, flags)},
        {"a destination inside the source, copied upwards", changed(kTo, kFrom + 0x1000)},
    };
    Rig same(c);
    ASSERT_TRUE(load(same, good));
    for (const Bad& b : bad) {
        Rig r(c);
        EXPECT_FALSE(load(r, b.bytes)) << b.what;
        EXPECT_FALSE(r.pending()) << b.what;
    }
}

TEST(Migration, DrainingIsNoStateOfTheModel)
{
    Rig idle(migrating());
    auto bytes = saved(idle);
    bytes[reg_at(reg("GENSTS"))] = static_cast<uint8_t>(DeviceState::Draining);
    Rig r(migrating());
    EXPECT_FALSE(load(r, bytes));
}

TEST(Migration, ALoadReplacesTheCommandInProgress)
{
    Rig idle(migrating());
    const auto bytes = saved(idle);
    Rig r(migrating());
    r.issue(Cmd::DrainAll);
    ASSERT_TRUE(r.pending());
    ASSERT_TRUE(load(r, bytes));
    EXPECT_FALSE(r.pending()) << "no timer left from before the load";
    EXPECT_FALSE(r.active());
}

TEST(Migration, NoByteChangeLoadsABrokenState)
{
    Rig a(migrating());
    busy(a);
    const auto good = saved(a);
    Rig r(migrating());
    unsigned loaded = 0;
    for (size_t at = 0; at < good.size(); at++)
        for (uint8_t x : {0x01, 0x80, 0xff}) {
            auto bytes = good;
            bytes[at] ^= x;
            if (load(r, bytes)) {
                loaded++;
                EXPECT_EQ(r.dev.invariant_violation(), nullptr) << at;
            } else {
                EXPECT_FALSE(r.pending());
            }
        }
    EXPECT_GT(loaded, 0u) << "some changes are states the device can reach";
}

} // namespace
} // namespace dmalab::dsa::testing
