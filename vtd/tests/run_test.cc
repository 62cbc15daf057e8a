// SPDX-License-Identifier: GPL-2.0-or-later
// Runs of pages (translate_run) in legacy and scalable mode: the same as translating them
// page by page, and where a run ends.

#include "dmalab/vtd/faults.h"
#include "sm_rig.h"

namespace dmalab::vtd::testing
{
namespace
{

// EqualsPageByPageTranslation's tables, the same in a and b: 64 pages from 4 MiB, each
// mapped (contiguous with the one before, or not), left unmapped, or read-only (pages 8
// to 39 mapped, writable and contiguous when `middle`); and a 2 MiB page at 2 MiB.
void map_run_pages(Rig& a, uint64_t pa, Rig& b, uint64_t pb, Prng& prng, bool middle)
{
    uint64_t out = 0x800000;
    for (uint64_t i = 0; i < 64; i++) {
        unsigned kind = static_cast<unsigned>(prng.upto(15));
        uint64_t iova = (4u << 20) + (i << 12);
        if (middle && i >= 8 && i < 40)
            kind = 3; // mapped, writable, contiguous
        if (kind == 0)
            continue; // hole: faults
        if (kind == 1)
            out += 0x5000; // a jump: not contiguous
        bool w = kind != 2;
        a.map(pa, iova, out, true, w);
        b.map(pb, iova, out, true, w);
        out += 0x1000;
    }
    a.map(pa, 2u << 20, 16u << 20, true, true, 4, 2);
    b.map(pb, 2u << 20, 16u << 20, true, true, 4, 2);
}

// How far translate_run must go, from translate() of the first page (f) on, page by page.
uint64_t page_by_page_run(Rig& b, const Translation& f, uint64_t iova, uint64_t len, unsigned perm)
{
    uint64_t want = 0;
    if (f.ok) {
        uint64_t o = f.addr + (iova - f.iova), end = f.iova + f.mask;
        want = std::min(len, end - iova + 1);
        while (want < len) {
            Translation t = b.unit.translate(0x0010, kNoPasid, end + 1, perm);
            if (!t.ok || t.addr + (end + 1 - t.iova) != o + want || t.read != f.read ||
                t.write != f.write)
                break;
            want += std::min(len - want, t.iova + t.mask - end);
            end = t.iova + t.mask;
        }
    }
    return want;
}

// The page translated last first (the unit answers it from the entry it used last), then
// what the IOTLB holds for each requester: the same answers, hits and misses page by page.
void expect_same_after_run(Rig& a, Rig& b, const Unit::Run& run, uint64_t iova, unsigned round,
                           std::initializer_list<uint16_t> sids)
{
    if (run.first.ok) {
        uint64_t last = iova + run.len - 1;
        Translation ta = a.read(last), tb = b.read(last);
        ASSERT_EQ(ta.ok, tb.ok) << round;
        EXPECT_EQ(ta.addr, tb.addr) << round << std::hex << " last page " << last;
    }
    for (uint16_t sid : sids)
        for (uint64_t p = 2u << 20; p < (4u << 20) + (64 << 12); p += 0x1000) {
            Translation ta = a.read(p, sid), tb = b.read(p, sid);
            ASSERT_EQ(ta.ok, tb.ok) << round << std::hex << " page " << p << " sid " << sid;
            EXPECT_EQ(ta.addr, tb.addr) << round << std::hex << " page " << p << " sid " << sid;
            EXPECT_EQ(ta.write, tb.write) << round << std::hex << " page " << p << " sid " << sid;
        }
    EXPECT_EQ(a.unit.counters().iotlb_hits, b.unit.counters().iotlb_hits) << round;
    EXPECT_EQ(a.unit.counters().iotlb_misses, b.unit.counters().iotlb_misses) << round;
}

// The run's requester 0x0010 in domain 1 with an empty 4-level table, TE on; its table's
// root. Legacy mode; or scalable mode with a second-stage PASID entry under RID_PASID 5, and
// a second requester 0x0018 in the same domain on the same table under RID_PASID 0x8005:
// the IOTLB tags hold a PASID's bits 14:0, so the two PASIDs' entries share tags, and only
// the entries' own PASID tells them apart.
uint64_t run_rig(SmRig& r, bool sm)
{
    if (!sm)
        return r.basic();
    r.set_sm_root();
    uint64_t pgd = r.alloc();
    r.pasid_entry(r.device(0x0010, 5), Pgtt::SecondStage, 1, pgd);
    r.pasid_entry(r.device(0x0018, 0x8005, 3), Pgtt::SecondStage, 1, pgd);
    r.command(G_TE);
    return pgd;
}

// translate_run is page-by-page translation done in one call: over random tables (runs of
// contiguous pages, holes, read-only pages, a 2 MiB page) it leaves
// the unit exactly as the same translate() calls do (counters, modelled cost, fault records, what
// the IOTLB then holds), and its run ends where the first page that faults or is not contiguous
// begins. Twenty more rounds have the stale-translation audit on and a page in the middle of
// the run remapped without an invalidation (every cached page is audited, the stale one
// reported), or a fault plan that fails the translation of a page in the middle of the run
// (the run stops there, the fault recorded): the one-pass path of a run must leave both to
// translate(). All of it in legacy mode, then in scalable mode under a non-zero RID_PASID,
// with another PASID's entries for the same pages (run_rig) warmed beside the run's.
void run_equals_page_by_page(bool sm)
{
    Prng prng(11);
    // The middle page of rounds with the audit or a fault plan: pages 8 to 39 are mapped
    // contiguously there, so that runs reach it.
    constexpr uint64_t kMiddle = (4u << 20) + (24 << 12);
    static_assert(kMiddle == 0x418000);
    const char* plan = R"({"rules": [{"kind": "translation-fault", "reason": 5,
                                      "range": ["0x418000", "0x419000"]}]})";
    for (unsigned round = 0; round < 100; round++) {
        const bool audit = round >= 80 && round % 2 == 0, planned = round >= 80 && round % 2;
        Config c;
        c.iotlb_entries = 64; // small: evictions happen within a run
        c.iotlb_ways = 4;
        c.audit = audit;
        c.sm = sm;
        faults::Injector ia, ib; // outlive the units that point at them
        SmRig a(c), b(c);
        if (planned) {
            std::string err;
            auto p = faults::parse_plan(plan, fault_spec(), "vtd0", &err);
            ASSERT_TRUE(p) << err;
            ia.set_plan(*p);
            ib.set_plan(*p);
            a.unit.set_injector(&ia);
            b.unit.set_injector(&ib);
        }
        uint64_t pa = run_rig(a, sm), pb = run_rig(b, sm);
        EXPECT_EQ(pa, pb);
        map_run_pages(a, pa, b, pb, prng, audit || planned);
        // Warm some entries in both; in scalable mode first the other PASID's for about half
        // the pages, under the tags the run's own would have.
        for (uint64_t i = 0; sm && i < 64; i++)
            if (prng.upto(1)) {
                a.read((4u << 20) + (i << 12), 0x0018);
                b.read((4u << 20) + (i << 12), 0x0018);
            }
        for (unsigned k = 0; k < 8; k++) {
            uint64_t iova = (4u << 20) + (prng.upto(63) << 12);
            a.read(iova);
            b.read(iova);
        }
        uint64_t iova = (2u << 20) + (prng.upto(767) << 12) + prng.upto(4095);
        uint64_t len = 1 + prng.upto(300u << 10);
        if (audit) {
            // The middle page cached, then unmapped and mapped elsewhere without a flush.
            a.read(kMiddle);
            b.read(kMiddle);
            a.map(pa, kMiddle, 0xf00000);
            b.map(pb, kMiddle, 0xf00000);
        }
        if (audit || planned) {
            // From before the middle page to past it.
            iova = kMiddle - ((1 + prng.upto(15)) << 12) + prng.upto(4095);
            len = kMiddle + ((1 + prng.upto(15)) << 12) - iova;
        }
        unsigned perm = prng.upto(1) ? Unit::kWrite : Unit::kRead;
        const uint64_t injected = ia.total();
        Unit::Run run = a.unit.translate_run(0x0010, kNoPasid, iova, len, perm);
        if (planned) {
            EXPECT_EQ(run.len, kMiddle - iova) << round << ": the run went past the fault";
            EXPECT_EQ(ia.total(), injected + 1) << round;
        }
        // The same pages one at a time, stopping as the run must.
        Translation f = b.unit.translate(0x0010, kNoPasid, iova, perm);
        uint64_t want = page_by_page_run(b, f, iova, len, perm);
        ASSERT_EQ(run.first.ok, f.ok) << "round " << round;
        EXPECT_EQ(run.first.addr, f.addr);
        EXPECT_EQ(run.len, want) << "round " << round << std::hex << " iova " << iova << " len "
                                 << len;
        EXPECT_TRUE(a.unit.counters() == b.unit.counters()) << "round " << round;
        EXPECT_EQ(a.unit.take_cost(0x0010), b.unit.take_cost(0x0010));
        for (unsigned i = 0; i < 8; i++)
            EXPECT_EQ(a.r64(FRCD + 16 * i + 8), b.r64(FRCD + 16 * i + 8));
        // What the rounds with the audit or a plan are for happened in both.
        ASSERT_EQ(a.rec.stales.size(), b.rec.stales.size()) << round;
        EXPECT_EQ(ia.total(), ib.total()) << round;
        if (audit) {
            EXPECT_FALSE(b.rec.stales.empty()) << round << ": the stale page was not audited";
        }
        ASSERT_NO_FATAL_FAILURE(
            expect_same_after_run(a, b, run, iova, round,
                                  sm ? std::initializer_list<uint16_t>{0x0010, 0x0018}
                                     : std::initializer_list<uint16_t>{0x0010}));
    }
}

TEST(Run, EqualsPageByPageTranslation)
{
    run_equals_page_by_page(false);
}

TEST(Run, EqualsPageByPageTranslationUnderANonZeroRidPasid)
{
    run_equals_page_by_page(true);
}

// A run that crosses from one leaf table into the next reads the second table's entries,
// not the first's again: contiguous across the boundary it goes on, not contiguous it stops
// there.
TEST(Run, CrossesLeafTables)
{
    for (bool contiguous : {true, false}) {
        Rig r;
        uint64_t pgd = r.basic();
        for (uint64_t i = 0; i < 1024; i++) {
            uint64_t pa = (0x1000 + i) << 12;
            if (!contiguous && i >= 512)
                pa += 0x100000; // the second 2 MiB of IOVA space maps 1 MiB further on
            r.map(pgd, i << 12, pa);
        }
        Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 1u << 20, 2u << 20, Unit::kRead);
        ASSERT_TRUE(run.first.ok);
        EXPECT_EQ(run.first.addr, 0x1100000u);
        EXPECT_EQ(run.len, contiguous ? 2u << 20 : 1u << 20) << contiguous;
        // Where the run stopped (or went on), the page says what its own leaf table says.
        Translation t = r.read(2u << 20);
        EXPECT_EQ(t.addr, contiguous ? 0x1200000u : 0x1300000u);
    }
}

// A read-only directory entry makes every page under it read-only, those translate_run
// answers in one step included: the run says so, caches them so, and a later write to any
// of them faults as it does after page-by-page translation.
TEST(Run, ReadOnlyDirectoryCoversEveryPage)
{
    Rig a, b;
    uint64_t pa = a.basic(), pb = b.basic();
    for (uint64_t i = 0; i < 64; i++) {
        a.map(pa, (4u << 20) + (i << 12), (0x3000 + i) << 12);
        b.map(pb, (4u << 20) + (i << 12), (0x3000 + i) << 12);
    }
    for (auto [x, pgd] : {std::pair{&a, pa}, std::pair{&b, pb}}) {
        uint64_t table = pgd;
        for (unsigned level = 4; level > 2; level--)
            table = x->mem.get<uint64_t>(
                        table + ((uint64_t{4} << 20) >> (12 + 9 * (level - 1)) & 511) * 8) &
                    0x000ffffffffff000ull;
        uint64_t pde = table + ((4u << 20) >> 21 & 511) * 8;
        x->mem.put<uint64_t>(pde, x->mem.get<uint64_t>(pde) & ~uint64_t{SL_W});
    }
    Unit::Run run = a.unit.translate_run(0x0010, kNoPasid, 4u << 20, 64 << 12, Unit::kRead);
    ASSERT_TRUE(run.first.ok);
    EXPECT_FALSE(run.first.write);
    EXPECT_EQ(run.len, 64u << 12);
    for (uint64_t i = 0; i < 64; i++)
        b.read((4u << 20) + (i << 12));
    for (uint64_t i = 0; i < 64; i++) {
        Translation ta = a.unit.translate(0x0010, kNoPasid, (4u << 20) + (i << 12), Unit::kWrite);
        Translation tb = b.unit.translate(0x0010, kNoPasid, (4u << 20) + (i << 12), Unit::kWrite);
        EXPECT_FALSE(ta.ok) << i;
        EXPECT_EQ(ta.fault_reason, tb.fault_reason) << i;
    }
    EXPECT_TRUE(a.unit.counters() == b.unit.counters());
    EXPECT_EQ(a.unit.counters().iotlb_hits, 64u); // the writes found the run's entries
}

// After a run that covered its length, the unit's next answer for the run's last page (which
// it gives from the entry it used last) is that page's own, and the next page's is its own
// too; likewise after a run that stopped at a page that does not continue it.
TEST(Run, LastPageAnswersAfterTheRun)
{
    for (bool stopped : {false, true}) {
        Rig r;
        uint64_t pgd = r.basic();
        for (uint64_t i = 0; i < 32; i++)
            r.map(pgd, (1u << 20) + (i << 12),
                  ((0x3000 + i) << 12) + (stopped && i >= 16) * 0x5000);
        Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 1u << 20,
                                             stopped ? 32 << 12 : 16 << 12, Unit::kRead);
        ASSERT_TRUE(run.first.ok);
        EXPECT_EQ(run.len, 16u << 12) << stopped;
        uint64_t hits = r.unit.counters().iotlb_hits;
        Translation t = r.read((1u << 20) + (15 << 12));
        EXPECT_EQ(t.addr, (0x3000u + 15) << 12) << stopped;
        t = r.read((1u << 20) + (16 << 12));
        EXPECT_EQ(t.addr, ((0x3000u + 16) << 12) + stopped * 0x5000) << stopped;
        // The last page is a hit; the next one too where the run translated it to stop.
        EXPECT_EQ(r.unit.counters().iotlb_hits, hits + 1 + stopped) << stopped;
    }
}

TEST(Run, IsBoundedAndReadsEachEntryOnce)
{
    Rig r;
    uint64_t pgd = r.basic();
    for (uint64_t i = 0; i < 1024; i++)
        r.map(pgd, i << 12, (0x1000 + i) << 12);
    unsigned reads = r.mem.reads;
    Unit::Run run = r.unit.translate_run(0x0010, kNoPasid, 0, 4u << 20, Unit::kRead);
    EXPECT_EQ(run.len, Unit::kMaxRun); // at most 512 pages a call
    // every walk counts its reads: the first 4, the others under its cached PDE 1 each
    EXPECT_EQ(r.unit.counters().walk_reads, 4u + 511);
    EXPECT_LE(r.mem.reads - reads, 8u) << "paging entries read once per run";
}

TEST(Query, RecordsNothing)
{
    Rig r;
    r.basic();
    Translation t = r.unit.translate(0x0010, kNoPasid, 0x5000, 0);
    EXPECT_FALSE(t.ok);
    EXPECT_EQ(t.fault_reason, FR_READ);
    EXPECT_EQ(r.unit.counters().faults, 0u);
    EXPECT_FALSE(r.r32(FSTS) & FSTS_PPF);
}

// A run never goes past 2^64 into address 0: with translation off every page is itself, and
// a first-stage canonical address in the top page ends there too.
TEST(Run, StopsAt2To64)
{
    const uint64_t top = uint64_t{0} - 0x2000;
    Rig off;
    Unit::Run run = off.unit.translate_run(0x0010, kNoPasid, top, 0x4000, Unit::kRead);
    ASSERT_TRUE(run.first.ok);
    EXPECT_EQ(run.len, 0x2000u);

    SmRig r;
    uint64_t pgd = r.fs_device();
    r.fs_map(pgd, top, 0x9000);
    r.fs_map(pgd, top + 0x1000, 0xa000);
    r.fs_map(pgd, 0, 0xb000);
    run = r.unit.translate_run(0x0010, kNoPasid, top, 0x4000, Unit::kRead);
    ASSERT_TRUE(run.first.ok);
    EXPECT_EQ(run.first.addr, 0x9000u);
    EXPECT_EQ(run.len, 0x2000u);
}

} // namespace
} // namespace dmalab::vtd::testing
