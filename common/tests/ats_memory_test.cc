// SPDX-License-Identifier: GPL-2.0-or-later
// A PCIe function's device-TLB (AtsMemory): requests on misses, translated accesses, hits,
// invalidations, refusals, the audit's stale hits, and pages answered untranslated-only.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "../testing/fake_memory.h"
#include "dmalab/ats_memory.h"

namespace dmalab
{
namespace
{

// The IOMMU: a page table of its own that tests change behind the device's back. Pages in
// `interrupts` are answered as VT-d answers its interrupt address range: R=0, W=1, U=1,
// with the table's address in the completion (which U says not to use).
class FakePort : public AtsPort
{
  public:
    Reply translate(uint64_t page, Access dir, const MemAttrs& attrs) override
    {
        asked.push_back(page);
        EXPECT_FALSE(attrs.translated);
        auto it = table.find(page);
        if (interrupts.count(page)) {
            if (dir == Access::Read)
                return {DmaError::IommuFault, 0};
            return {DmaError::None, it == table.end() ? 0 : it->second, true};
        }
        if (it == table.end() || (dir == Access::Write && read_only.count(page)))
            return {DmaError::IommuFault, 0};
        return {DmaError::None, it->second};
    }
    std::map<uint64_t, uint64_t> table;
    std::set<uint64_t> read_only;
    std::set<uint64_t> interrupts;
    std::vector<uint64_t> asked;
};

// The bus: RAM, and a record of each access's address and kind.
class RecordingBus : public testing::FakeMemory
{
  public:
    RecordingBus() : FakeMemory(1 << 20) {}
    struct Seen {
        uint64_t addr;
        bool translated;
    };
    DmaResult read(uint64_t addr, void* buf, size_t len, const MemAttrs& a) override
    {
        seen.push_back({addr, a.translated});
        return FakeMemory::read(addr, buf, len, a);
    }
    DmaResult write(uint64_t addr, const void* buf, size_t len, const MemAttrs& a) override
    {
        seen.push_back({addr, a.translated});
        return FakeMemory::write(addr, buf, len, a);
    }
    std::vector<Seen> seen;
};

class Recorder : public AtsObserver
{
  public:
    void stale(uint64_t page, uint64_t cached, bool now_ok, uint64_t now) override
    {
        stales.push_back({page, cached, now_ok, now});
    }
    void invalidated(uint64_t, uint64_t, unsigned dropped) override { drops.push_back(dropped); }
    struct Stale {
        uint64_t page, cached;
        bool now_ok;
        uint64_t now;
    };
    std::vector<Stale> stales;
    std::vector<unsigned> drops;
};

class Ats : public ::testing::Test
{
  protected:
    Ats()
    {
        port.table[0x10000] = 0x3000;
        port.table[0x11000] = 0x7000; // not the next page: accesses split
        ats.set_enabled(true);
    }
    uint32_t read32(uint64_t iova)
    {
        uint32_t v = 0;
        EXPECT_TRUE(ats.read(iova, &v, sizeof v, {}).ok());
        return v;
    }
    RecordingBus bus;
    FakePort port;
    Recorder rec;
    AtsMemory ats{bus, port, &rec};
};

TEST_F(Ats, OffSendsEveryAccessUntranslated)
{
    ats.set_enabled(false);
    bus.put<uint32_t>(0x10000, 0x11223344);
    EXPECT_EQ(read32(0x10000), 0x11223344u);
    ASSERT_EQ(bus.seen.size(), 1u);
    EXPECT_EQ(bus.seen[0].addr, 0x10000u);
    EXPECT_FALSE(bus.seen[0].translated);
    EXPECT_TRUE(port.asked.empty());
}

TEST_F(Ats, AMissAsksOnceAndTheHitsUseTheCachedTranslation)
{
    bus.put<uint32_t>(0x3010, 0xcafe);
    EXPECT_EQ(read32(0x10010), 0xcafeu);
    EXPECT_EQ(read32(0x10010), 0xcafeu);
    EXPECT_EQ(port.asked.size(), 1u);
    ASSERT_EQ(bus.seen.size(), 2u);
    EXPECT_EQ(bus.seen[1].addr, 0x3010u);
    EXPECT_TRUE(bus.seen[1].translated);
    EXPECT_EQ(ats.stats().requests, 1u);
    EXPECT_EQ(ats.stats().hits, 1u);
}

TEST_F(Ats, AnAccessAcrossPagesGoesToEachPagesTranslation)
{
    std::vector<uint8_t> data(0x100, 0xab);
    ASSERT_TRUE(ats.write(0x10f80, data.data(), data.size(), {}).ok());
    EXPECT_EQ(bus.get<uint8_t>(0x3fff), 0xab);
    EXPECT_EQ(bus.get<uint8_t>(0x7000), 0xab);
    EXPECT_EQ(bus.get<uint8_t>(0x707f), 0xab);
    EXPECT_EQ(bus.get<uint8_t>(0x4000), 0); // not the IOVA's neighbour
    EXPECT_EQ(port.asked, (std::vector<uint64_t>{0x10000, 0x11000}));
}

TEST_F(Ats, AReadTranslationIsNotAWriteOne)
{
    port.read_only.insert(0x10000);
    read32(0x10000);
    uint32_t v = 1;
    DmaResult r = ats.write(0x10004, &v, sizeof v, {});
    EXPECT_EQ(r.error, DmaError::IommuFault);
    EXPECT_EQ(r.fault_addr, 0x10004u);
    EXPECT_EQ(r.done, 0u);
    EXPECT_EQ(ats.stats().refused, 1u);
    EXPECT_EQ(bus.get<uint32_t>(0x3004), 0u);
}

TEST_F(Ats, ARefusalEndsTheAccessAtThatPage)
{
    port.table.erase(0x11000);
    std::vector<uint8_t> data(0x100, 0xcd);
    DmaResult r = ats.write(0x10f80, data.data(), data.size(), {});
    EXPECT_EQ(r.error, DmaError::IommuFault);
    EXPECT_EQ(r.fault_addr, 0x11000u);
    EXPECT_EQ(r.done, 0x80u);
    EXPECT_EQ(bus.get<uint8_t>(0x3fff), 0xcd);
}

TEST_F(Ats, AnInvalidationTakesAwayWhatItNamesAndNothingElse)
{
    read32(0x10000);
    read32(0x11000);
    ats.invalidate(0x11000, 0x11fff);
    EXPECT_EQ(rec.drops, (std::vector<unsigned>{1}));
    read32(0x10000); // still cached
    read32(0x11000); // asked again
    EXPECT_EQ(port.asked, (std::vector<uint64_t>{0x10000, 0x11000, 0x11000}));
    ats.invalidate(0, UINT64_MAX); // everything, as a global one
    EXPECT_EQ(rec.drops.back(), 2u);
    EXPECT_EQ(ats.stats().dropped, 3u);
    EXPECT_EQ(ats.stats().invalidations, 2u);
}

TEST_F(Ats, TheTopPageIsCachedAndInvalidatedLikeAnyOther)
{
    uint64_t top = UINT64_MAX & ~uint64_t{0xfff};
    port.table[top] = 0x5000;
    bus.put<uint32_t>(0x5ffc, 0x77);
    EXPECT_EQ(read32(top + 0xffc), 0x77u);
    ats.invalidate(UINT64_MAX, UINT64_MAX);
    EXPECT_EQ(rec.drops.back(), 1u);
    uint32_t v;
    EXPECT_EQ(ats.read(top + 0xffe, &v, 4, {}).error, DmaError::Wrap); // the bus refuses
    EXPECT_FALSE(bus.seen.back().translated);
}

TEST_F(Ats, WithoutTheInvalidationTheDeviceKeepsUsingTheOldPageAndTheAuditSeesIt)
{
    ats.set_audit(true);
    read32(0x10000);
    port.table[0x10000] = 0x9000; // remapped, and the device not told
    uint32_t v = 0x5a5a;
    ASSERT_TRUE(ats.write(0x10000, &v, sizeof v, {}).ok()); // a write: asks (cached read)
    EXPECT_EQ(bus.get<uint32_t>(0x9000), 0x5a5au);
    EXPECT_EQ(ats.stats().stale, 0u);
    port.table[0x10000] = 0xa000;
    v = 0x6b6b;
    ASSERT_TRUE(ats.write(0x10000, &v, sizeof v, {}).ok()); // a hit on 0x9000
    ASSERT_EQ(rec.stales.size(), 1u);
    EXPECT_EQ(rec.stales[0].cached, 0x9000u);
    EXPECT_TRUE(rec.stales[0].now_ok);
    EXPECT_EQ(rec.stales[0].now, 0xa000u);
    EXPECT_EQ(bus.seen.back().addr, 0x9000u); // used all the same
    EXPECT_EQ(bus.get<uint32_t>(0x9000), 0x6b6bu);
    EXPECT_EQ(bus.get<uint32_t>(0xa000), 0u);
    port.table.erase(0x10000);
    ASSERT_TRUE(ats.write(0x10000, &v, sizeof v, {}).ok());
    ASSERT_EQ(rec.stales.size(), 2u);
    EXPECT_FALSE(rec.stales[1].now_ok);
    EXPECT_EQ(ats.stats().audits, 2u);
    EXPECT_EQ(ats.stats().stale, 2u);
}

TEST_F(Ats, TurningItOffEmptiesTheCache)
{
    read32(0x10000);
    ats.set_enabled(false);
    ats.set_enabled(true);
    read32(0x10000);
    EXPECT_EQ(port.asked.size(), 2u);
}

TEST_F(Ats, MoreEntriesThanItHoldsReplaceTheOldest)
{
    for (uint64_t i = 0; i <= AtsMemory::kEntries; i++)
        port.table[0x100000 + i * 0x1000] = 0x1000;
    for (uint64_t i = 0; i <= AtsMemory::kEntries; i++)
        read32(0x100000 + i * 0x1000);
    read32(0x100000 + AtsMemory::kEntries * 0x1000); // the newest: a hit
    read32(0x100000);                                // the first: replaced
    EXPECT_EQ(ats.stats().requests, AtsMemory::kEntries + 2);
}

TEST_F(Ats, AMapIsOfOnePagesTranslationAtMost)
{
    DmaMemory::Mapping m = ats.map(0x10ff0, 0x100, Access::Read, {});
    ASSERT_TRUE(m);
    EXPECT_EQ(m.len, 0x10u);
    ats.unmap(m, Access::Read, m.len);
    port.table.erase(0x11000);
    EXPECT_FALSE(ats.map(0x11000, 0x10, Access::Read, {}));
}

// A page answered untranslated-only (U) is written with untranslated requests at its IOVA,
// never at what the IOMMU's tables map there: VT-d's interrupt address range, whose writes
// are interrupt requests. The answer is cached (W is set), so the next write asks nothing.
TEST_F(Ats, AnUntranslatedOnlyPageIsWrittenUntranslatedAtItsIova)
{
    port.table[0x20000] = 0x9000; // the tables map it to RAM; the answer ignores them
    port.interrupts.insert(0x20000);
    std::vector<uint8_t> data(64, 0xee);
    ASSERT_TRUE(ats.write(0x20000, data.data(), data.size(), {}).ok());
    ASSERT_TRUE(ats.write(0x20040, data.data(), data.size(), {}).ok());
    ASSERT_EQ(bus.seen.size(), 2u);
    for (const RecordingBus::Seen& w : bus.seen)
        EXPECT_FALSE(w.translated);
    EXPECT_EQ(bus.seen[0].addr, 0x20000u);
    EXPECT_EQ(bus.seen[1].addr, 0x20040u);
    EXPECT_EQ(bus.get<uint8_t>(0x20000), 0xee);
    EXPECT_EQ(bus.get<uint8_t>(0x9000), 0); // the mapped RAM page untouched
    EXPECT_EQ(port.asked, (std::vector<uint64_t>{0x20000}));
    EXPECT_EQ(ats.stats().hits, 1u);
    EXPECT_EQ(ats.stats().untranslated, 2u);
    // An access across into a translated page goes on translated there.
    port.table[0x21000] = 0xa000;
    ASSERT_TRUE(ats.write(0x20ff0, data.data(), 0x20, {}).ok());
    EXPECT_EQ(bus.seen[2].addr, 0x20ff0u);
    EXPECT_FALSE(bus.seen[2].translated);
    EXPECT_EQ(bus.seen[3].addr, 0xa000u);
    EXPECT_TRUE(bus.seen[3].translated);
}

// R=0: a read of it is refused, translated or not; nothing reaches the bus.
TEST_F(Ats, AnUntranslatedOnlyPageWithoutReadIsNotRead)
{
    port.table[0x20000] = 0x9000;
    port.interrupts.insert(0x20000);
    uint32_t v = 1;
    ASSERT_TRUE(ats.write(0x20000, &v, sizeof v, {}).ok());
    DmaResult r = ats.read(0x20000, &v, sizeof v, {});
    EXPECT_EQ(r.error, DmaError::IommuFault);
    EXPECT_EQ(r.fault_addr, 0x20000u);
    EXPECT_FALSE(ats.map(0x20000, 4, Access::Read, {}));
    EXPECT_EQ(bus.seen.size(), 1u);
    EXPECT_EQ(ats.stats().refused, 2u);
}

// A map of it is an untranslated mapping of the IOVA (QEMU's glue maps RAM only, so an
// interrupt range is not mapped and the write goes through write()).
TEST_F(Ats, AnUntranslatedOnlyPageIsMappedUntranslated)
{
    port.table[0x20000] = 0x9000;
    port.interrupts.insert(0x20000);
    DmaMemory::Mapping m = ats.map(0x20010, 0x2000, Access::Write, {});
    ASSERT_TRUE(m);
    EXPECT_EQ(m.host, &bus.ram[0x20010]);
    EXPECT_EQ(m.len, 0xff0u);
    ats.unmap(m, Access::Write, 0);
    bus.add_window({0x20000, 0x1000, [](uint64_t, const uint8_t*, size_t) {}});
    EXPECT_FALSE(ats.map(0x20000, 4, Access::Write, {}));
}

// The audit compares U too: a hit the IOMMU would now answer translated is stale.
TEST_F(Ats, TheAuditComparesUntranslatedOnly)
{
    ats.set_audit(true);
    port.table[0x20000] = 0x9000;
    port.interrupts.insert(0x20000);
    uint32_t v = 1;
    ASSERT_TRUE(ats.write(0x20000, &v, sizeof v, {}).ok());
    ASSERT_TRUE(ats.write(0x20000, &v, sizeof v, {}).ok()); // a hit, the same answer
    EXPECT_EQ(ats.stats().stale, 0u);
    port.interrupts.clear();
    ASSERT_TRUE(ats.write(0x20000, &v, sizeof v, {}).ok());
    EXPECT_EQ(ats.stats().audits, 2u);
    EXPECT_EQ(ats.stats().stale, 1u);
    ASSERT_EQ(rec.stales.size(), 1u);
    EXPECT_EQ(rec.stales[0].now, 0x9000u);
}

} // namespace
} // namespace dmalab
