// SPDX-License-Identifier: GPL-2.0-or-later
// A VT-d unit on fake memory, with helpers that build root, context and page tables and
// drive the registers the way a driver does.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "../../common/testing/fake_memory.h"
#include "dmalab/vtd/unit.h"

namespace dmalab::vtd::testing
{

using dmalab::testing::FakeInterrupts;
using dmalab::testing::FakeLog;
using dmalab::testing::FakeMemory;
using dmalab::testing::FakeTimers;

// What the tests write and check, named as the spec (and Linux's drivers/iommu/intel/) name
// them, each derived from the model's one declaration of it (registers.h): the tests build
// tables and descriptors the way a driver does, bit by bit.
inline constexpr uint32_t VER = offset("VER"), CAP = offset("CAP"), ECAP = offset("ECAP");
inline constexpr uint32_t GCMD = offset("GCMD"), GSTS = offset("GSTS");
inline constexpr uint32_t RTADDR = offset("RTADDR"), CCMD = offset("CCMD");
inline constexpr uint32_t FSTS = offset("FSTS"), FECTL = offset("FECTL");
inline constexpr uint32_t FEDATA = offset("FEDATA"), FEADDR = offset("FEADDR");
inline constexpr uint32_t FEUADDR = offset("FEUADDR");
inline constexpr uint32_t IQH = offset("IQH"), IQT = offset("IQT"), IQA = offset("IQA");
inline constexpr uint32_t ICS = offset("ICS"), IECTL = offset("IECTL");
inline constexpr uint32_t IEDATA = offset("IEDATA"), IEADDR = offset("IEADDR");
inline constexpr uint32_t IVA = offset("IVA"), IOTLB = offset("IOTLB");
inline constexpr uint32_t FRCD = offset("FRCD_LO"); // record i: lower qword at FRCD + 16 i
inline constexpr uint32_t IRTA = offset("IRTA"), IEUADDR = offset("IEUADDR");

inline constexpr unsigned CAP_SAGAW_SHIFT = field_lsb(fields::CAP, "SAGAW");
inline constexpr unsigned CAP_MGAW_SHIFT = field_lsb(fields::CAP, "MGAW");
inline constexpr unsigned CAP_FRO_SHIFT = field_lsb(fields::CAP, "FRO");
inline constexpr unsigned CAP_NFR_SHIFT = field_lsb(fields::CAP, "NFR");
inline constexpr uint64_t CAP_SLLPS_2M = field(fields::CAP, "SLLPS").put(SLLPS_2M);
inline constexpr uint64_t CAP_SLLPS_1G = field(fields::CAP, "SLLPS").put(SLLPS_1G);
inline constexpr uint64_t CAP_PSI = field_mask(fields::CAP, "PSI");
inline constexpr uint64_t ECAP_QI = field_mask(fields::ECAP, "QI");
inline constexpr uint64_t ECAP_PT = field_mask(fields::ECAP, "PT");
inline constexpr unsigned ECAP_IRO_SHIFT = field_lsb(fields::ECAP, "IRO");
inline constexpr uint64_t ECAP_IR = field_mask(fields::ECAP, "IR");
inline constexpr uint64_t ECAP_EIM = field_mask(fields::ECAP, "EIM");
inline constexpr unsigned ECAP_MHMV_SHIFT = field_lsb(fields::ECAP, "MHMV");
inline constexpr unsigned RTADDR_TTM_SHIFT = field_lsb(fields::RTADDR, "TTM");
inline constexpr unsigned CCMD_CIRG_SHIFT = field_lsb(fields::CCMD, "CIRG");
inline constexpr unsigned CCMD_CAIG_SHIFT = field_lsb(fields::CCMD, "CAIG");
inline constexpr unsigned CCMD_SID_SHIFT = field_lsb(fields::CCMD, "SID");
inline constexpr unsigned CCMD_FM_SHIFT = field_lsb(fields::CCMD, "FM");
inline constexpr unsigned IOTLB_IIRG_SHIFT = field_lsb(fields::IOTLB, "IIRG");
inline constexpr unsigned IOTLB_IAIG_SHIFT = field_lsb(fields::IOTLB, "IAIG");
inline constexpr unsigned IOTLB_DID_SHIFT = field_lsb(fields::IOTLB, "DID");
inline constexpr uint64_t IVA_IH = field_mask(fields::IVA, "IH");
inline constexpr unsigned FSTS_FRI_SHIFT = field_lsb(fields::FSTS, "FRI");
inline constexpr unsigned FRCD_FR_SHIFT = field_lsb(fields::FRCD_HI, "FR");
inline constexpr unsigned IQ_INDEX_SHIFT = IQ_INDEX.lsb;
inline constexpr uint64_t IQ_INDEX_MASK = IQ_INDEX.mask() >> IQ_INDEX.lsb;

inline constexpr uint8_t QI_CC = static_cast<uint8_t>(DescType::Context);
inline constexpr uint8_t QI_IOTLB = static_cast<uint8_t>(DescType::Iotlb);
inline constexpr uint8_t QI_DEV_IOTLB = static_cast<uint8_t>(DescType::DevIotlb);
inline constexpr uint8_t QI_IEC = static_cast<uint8_t>(DescType::Iec);
inline constexpr uint8_t QI_WAIT = static_cast<uint8_t>(DescType::Wait);
inline constexpr unsigned QI_G_SHIFT = field_lsb(qi::CC_LO, "G");
inline constexpr unsigned QI_DID_SHIFT = field_lsb(qi::CC_LO, "DID");
inline constexpr unsigned QI_CC_SID_SHIFT = field_lsb(qi::CC_LO, "SID");
inline constexpr unsigned QI_CC_FM_SHIFT = field_lsb(qi::CC_LO, "FM");
inline constexpr uint64_t QI_WAIT_IF = field_mask(qi::WAIT_LO, "IF");
inline constexpr uint64_t QI_WAIT_SW = field_mask(qi::WAIT_LO, "SW");
inline constexpr uint64_t QI_IEC_SELECTIVE = field_mask(qi::IEC_LO, "G");
inline constexpr unsigned QI_IEC_IM_SHIFT = field_lsb(qi::IEC_LO, "IM");
inline constexpr unsigned QI_IEC_IIDX_SHIFT = field_lsb(qi::IEC_LO, "IIDX");
static_assert(field_lsb(qi::IOTLB_LO, "DID") == QI_DID_SHIFT);

inline constexpr uint64_t RE_P = field_mask(root::LO, "P");
inline constexpr uint64_t RE_CTP = field_mask(root::LO, "CTP");
inline constexpr uint64_t CE_P = field_mask(ctx::LO, "P");
inline constexpr uint64_t CE_FPD = field_mask(ctx::LO, "FPD");
inline constexpr unsigned CE_TT_SHIFT = field_lsb(ctx::LO, "TT");
inline constexpr unsigned CE_HI_DID_SHIFT = field_lsb(ctx::HI, "DID");
inline constexpr uint8_t TT_ALL = static_cast<uint8_t>(TT::All);
inline constexpr uint8_t TT_PASSTHROUGH = static_cast<uint8_t>(TT::Passthrough);
inline constexpr uint64_t SL_R = field_mask(slpte::F, "R");
inline constexpr uint64_t SL_W = field_mask(slpte::F, "W");
inline constexpr uint64_t SL_PS = field_mask(slpte::F, "PS");
inline constexpr uint64_t SL_SNP = field_mask(slpte::F, "SNP");

// Interrupt remapping table entries (9.10) and interrupt requests (5.1.2).
inline constexpr uint64_t IRTE_P = field_mask(irte::LO, "P");
inline constexpr uint64_t IRTE_FPD = field_mask(irte::LO, "FPD");
inline constexpr uint64_t IRTE_DM = field_mask(irte::LO, "DM");
inline constexpr uint64_t IRTE_RH = field_mask(irte::LO, "RH");
inline constexpr uint64_t IRTE_TM = field_mask(irte::LO, "TM");
inline constexpr uint64_t IRTE_IM = field_mask(irte::LO, "IM");
inline constexpr unsigned IRTE_DLM_SHIFT = field_lsb(irte::LO, "DLM");
inline constexpr unsigned IRTE_AVAIL_SHIFT = field_lsb(irte::LO, "AVAIL");
inline constexpr unsigned IRTE_V_SHIFT = field_lsb(irte::LO, "V");
inline constexpr unsigned IRTE_DST_SHIFT = field_lsb(irte::LO, "DST");
inline constexpr unsigned IRTE_SQ_SHIFT = field_lsb(irte::HI, "SQ");
inline constexpr unsigned IRTE_SVT_SHIFT = field_lsb(irte::HI, "SVT");
inline constexpr uint64_t MSI_IF = field_mask(intr::ADDR, "IF");
inline constexpr uint64_t MSI_SHV = field_mask(intr::ADDR, "SHV");
inline constexpr uint64_t MSI_HANDLE15 = field_mask(intr::ADDR, "HANDLE15");
inline constexpr unsigned MSI_HANDLE_SHIFT = field_lsb(intr::ADDR, "HANDLE");
inline constexpr uint64_t MSI_BASE = 0xfee00000;

inline constexpr FaultReason FR_ROOT_NOT_PRESENT = FaultReason::RootNotPresent;
inline constexpr FaultReason FR_CONTEXT_NOT_PRESENT = FaultReason::ContextNotPresent;
inline constexpr FaultReason FR_CONTEXT_INVALID = FaultReason::ContextInvalid;
inline constexpr FaultReason FR_ADDRESS_BEYOND_AW = FaultReason::AddressBeyondAw;
inline constexpr FaultReason FR_WRITE = FaultReason::Write;
inline constexpr FaultReason FR_READ = FaultReason::Read;
inline constexpr FaultReason FR_PAGE_TABLE = FaultReason::PageTable;
inline constexpr FaultReason FR_ROOT_TABLE = FaultReason::RootTable;
inline constexpr FaultReason FR_CONTEXT_TABLE = FaultReason::ContextTable;
inline constexpr FaultReason FR_ROOT_RESERVED = FaultReason::RootReserved;
inline constexpr FaultReason FR_CONTEXT_RESERVED = FaultReason::ContextReserved;
inline constexpr FaultReason FR_PAGE_RESERVED = FaultReason::PageReserved;
// The fault reason a fault-recording register holds.
inline FaultReason record_reason(uint64_t frcd_hi)
{
    return static_cast<FaultReason>((frcd_hi >> FRCD_FR_SHIFT) & 0xff);
}

// A configuration with these invalidation costs (descriptor, page, wait).
inline Config costs(uint64_t desc, uint64_t page, uint64_t wait)
{
    Config c;
    c.inv_desc_ns = desc;
    c.inv_page_ns = page;
    c.wait_ns = wait;
    return c;
}

struct Recorder : Observer {
    void wait_done(uint64_t modelled, uint64_t achieved) override
    {
        waits.push_back({modelled, achieved});
    }
    std::vector<std::pair<uint64_t, uint64_t>> waits; // (modelled, achieved) per wait
    void unmapped(bool devtlb, uint16_t sid, uint64_t first, uint64_t last) override
    {
        unmaps.push_back({devtlb, sid, first, last});
    }
    struct Unmap {
        bool devtlb;
        uint16_t sid;
        uint64_t first, last;
        bool operator==(const Unmap&) const = default;
    };
    std::vector<Unmap> unmaps; // what each invalidation took away, in order
    void stale(uint16_t sid, uint64_t iova, uint64_t cached, uint64_t now, FaultReason f) override
    {
        stales.push_back({sid, iova, cached, now, f});
    }
    struct Stale {
        uint16_t sid;
        uint64_t iova, cached, now;
        FaultReason fault;
    };
    std::vector<Stale> stales;
};

class Rig
{
  public:
    static constexpr uint64_t kMem = 16u << 20;
    static constexpr uint64_t kFeAddr = 0xfee00000, kIeAddr = 0xfee01000;

    explicit Rig(Config c = {}) : config(c), unit(c, Host{mem, timers, irq, log, &rec}) {}

    uint64_t alloc()
    {
        uint64_t p = next_;
        next_ += 0x1000;
        return p;
    }
    // This rig becomes a's migration destination: a's memory, clock and saved state. False
    // when the state is refused.
    bool take_state_of(Rig& a)
    {
        StateWriter w;
        a.unit.save(w);
        mem.ram = a.mem.ram;
        timers.now = a.timers.now;
        StateReader in(w.bytes);
        return unit.load(in);
    }
    uint64_t r64(uint32_t off) { return unit.mmio_read(off, 8); }
    uint32_t r32(uint32_t off) { return static_cast<uint32_t>(unit.mmio_read(off, 4)); }
    void w64(uint32_t off, uint64_t v) { unit.mmio_write(off, v, 8); }
    void w32(uint32_t off, uint32_t v) { unit.mmio_write(off, v, 4); }

    // GCMD the way Linux drives it: the persistent bits plus one command.
    void command(uint32_t bit, bool on = true)
    {
        uint32_t sts = r32(GSTS) & (G_TE | G_QIE | G_IRE | G_CFI);
        w32(GCMD, on ? sts | bit : sts & ~bit);
    }
    void set_root()
    {
        root = alloc();
        w64(RTADDR, root);
        command(G_SRTP);
    }
    // A context entry for `sid`, creating the bus's context table when needed.
    void context(uint16_t sid, uint16_t did, uint64_t pgd, uint8_t aw = 2, uint8_t tt = 0,
                 bool fpd = false)
    {
        uint64_t re = mem.get<uint64_t>(root + (sid >> 8) * 16);
        if (!(re & RE_P)) {
            re = alloc() | RE_P;
            mem.put<uint64_t>(root + (sid >> 8) * 16, re);
        }
        uint64_t ce = (re & RE_CTP) + (sid & 0xff) * 16;
        mem.put<uint64_t>(ce, pgd | uint64_t{tt} << CE_TT_SHIFT | (fpd ? CE_FPD : 0) | CE_P);
        mem.put<uint64_t>(ce + 8, uint64_t{did} << CE_HI_DID_SHIFT | aw);
    }
    // Maps one page of size 4K << (9 * (leaf_level - 1)) in a `levels`-level table.
    uint64_t map(uint64_t pgd, uint64_t iova, uint64_t pa, bool r = true, bool w = true,
                 unsigned levels = 4, unsigned leaf_level = 1)
    {
        uint64_t table = pgd;
        for (unsigned level = levels; level > leaf_level; level--) {
            uint64_t at = table + ((iova >> (12 + 9 * (level - 1))) & 511) * 8;
            uint64_t pte = mem.get<uint64_t>(at);
            if (!(pte & (SL_R | SL_W))) {
                pte = alloc() | SL_R | SL_W;
                mem.put<uint64_t>(at, pte);
            }
            table = pte & ~uint64_t{0xfff} & ((uint64_t{1} << 52) - 1);
        }
        uint64_t at = table + ((iova >> (12 + 9 * (leaf_level - 1))) & 511) * 8;
        mem.put<uint64_t>(at, pa | (r ? SL_R : 0) | (w ? SL_W : 0) | (leaf_level > 1 ? SL_PS : 0));
        return at; // where the leaf entry lives
    }
    // Root table, one device `sid` in domain `did` with an empty 4-level table, TE on.
    uint64_t basic(uint16_t sid = 0x0010, uint16_t did = 1)
    {
        set_root();
        uint64_t pgd = alloc();
        context(sid, did, pgd);
        command(G_TE);
        return pgd;
    }

    void qi_enable(unsigned qs = 0)
    {
        iq = alloc();
        for (unsigned i = 1; i < (1u << qs); i++)
            alloc();
        w64(IQA, iq | qs);
        w64(IQT, 0);
        command(G_QIE);
        tail = 0;
    }
    // Appends descriptors and moves IQT past them.
    void submit(std::initializer_list<std::pair<uint64_t, uint64_t>> descs)
    {
        uint32_t n = 256u << (r64(IQA) & 7);
        for (auto [lo, hi] : descs) {
            mem.put<uint64_t>(iq + tail * 16, lo);
            mem.put<uint64_t>(iq + tail * 16 + 8, hi);
            tail = (tail + 1) % n;
        }
        w64(IQT, uint64_t{tail} << 4);
    }
    static std::pair<uint64_t, uint64_t> wait(uint64_t status, uint32_t data = 1, bool intr = false)
    {
        return {uint64_t{data} << 32 | QI_WAIT_SW | (intr ? QI_WAIT_IF : 0) | QI_WAIT, status};
    }
    static std::pair<uint64_t, uint64_t> iotlb_page(uint16_t did, uint64_t addr, unsigned am = 0)
    {
        return {uint64_t{did} << QI_DID_SHIFT | 3u << QI_G_SHIFT | QI_IOTLB, addr | am};
    }
    static std::pair<uint64_t, uint64_t> iotlb_global() { return {1u << QI_G_SHIFT | QI_IOTLB, 0}; }
    static std::pair<uint64_t, uint64_t> cc_global() { return {1u << QI_G_SHIFT | QI_CC, 0}; }
    static std::pair<uint64_t, uint64_t> iec_global() { return {QI_IEC, 0}; }
    static std::pair<uint64_t, uint64_t> iec_index(uint32_t index, unsigned im = 0)
    {
        return {uint64_t{index} << QI_IEC_IIDX_SHIFT | uint64_t{im} << QI_IEC_IM_SHIFT |
                    QI_IEC_SELECTIVE | QI_IEC,
                0};
    }

    // Interrupt remapping the way Linux sets it up: the queue, IRTA with a table of
    // 2^(s+1) entries, SIRTP, a global entry cache invalidation, IRE (and CFI if asked).
    uint64_t ir_enable(unsigned s = 7, bool eime = false, bool cfi = false)
    {
        if (!iq)
            qi_enable();
        irt = alloc();
        for (uint64_t b = 0x1000; b < (uint64_t{16} << (s + 1)); b += 0x1000)
            alloc();
        w64(IRTA, irt | s | (eime ? IRTA_EIME : 0));
        command(G_SIRTP);
        submit({iec_global()});
        drain();
        command(G_IRE);
        if (cfi)
            command(G_CFI);
        return irt;
    }
    void irte(uint32_t index, uint64_t lo, uint64_t hi = 0)
    {
        mem.put<uint64_t>(irt + index * 16, lo);
        mem.put<uint64_t>(irt + index * 16 + 8, hi);
    }
    // A present entry: vector, destination (placed as the mode needs), requester check.
    static uint64_t entry(uint8_t vector, uint32_t dest, bool x2apic = false)
    {
        uint64_t dst = x2apic ? dest : uint64_t{dest & 0xff} << 8;
        return IRTE_P | uint64_t{vector} << IRTE_V_SHIFT | dst << IRTE_DST_SHIFT;
    }
    static uint64_t verify_sid(uint16_t sid, unsigned sq = 0)
    {
        return uint64_t{1} << IRTE_SVT_SHIFT | uint64_t{sq} << IRTE_SQ_SHIFT | sid;
    }
    // A remappable-format request address naming `handle`, with or without SHV.
    static uint64_t remappable(uint32_t handle, bool shv = true)
    {
        return MSI_BASE | MSI_IF | (shv ? MSI_SHV : 0) |
               uint64_t{handle & 0x7fff} << MSI_HANDLE_SHIFT |
               ((handle >> 15) & 1 ? MSI_HANDLE15 : 0);
    }
    Interrupt intr(uint64_t address, uint32_t data = 0, uint16_t sid = 0x0010, bool record = true)
    {
        return unit.remap_interrupt({address, data, sid, true, record});
    }

    // Runs timers in time order until none is due at or before `until`.
    void run_until(uint64_t until)
    {
        for (int guard = 0; guard < 1000000; guard++) {
            auto next = timers.next();
            if (!next || next->second > until)
                break;
            timers.pending.erase(next->first);
            timers.now = std::max(timers.now, next->second);
            unit.timer(next->first);
        }
        timers.now = std::max(timers.now, until);
    }
    void run_all() { run_until(kTimeLimit); }
    // Runs every timer in time order; the clock stops at the last one.
    void drain()
    {
        for (int guard = 0; guard < 1000000 && timers.next(); guard++)
            run_until(timers.next()->second);
    }
    // As run_all, but every timer fires `late_ns` after the time it was armed for, as QEMU's
    // do on a busy host.
    void run_all_late(uint64_t late_ns)
    {
        for (int guard = 0; guard < 1000000; guard++) {
            auto next = timers.next();
            if (!next)
                break;
            timers.pending.erase(next->first);
            timers.now = std::max(timers.now, next->second + late_ns);
            unit.timer(next->first);
        }
    }

    Translation read(uint64_t iova, uint16_t sid = 0x0010)
    {
        return unit.translate(sid, kNoPasid, iova, Unit::kRead);
    }
    Translation write(uint64_t iova, uint16_t sid = 0x0010)
    {
        return unit.translate(sid, kNoPasid, iova, Unit::kWrite);
    }

    Config config;
    FakeMemory mem{kMem};
    FakeTimers timers;
    FakeInterrupts irq;
    FakeLog log;
    Recorder rec;
    Unit unit;
    uint64_t root = 0, iq = 0, irt = 0;
    uint32_t tail = 0;

  private:
    uint64_t next_ = 0x10000;
};

} // namespace dmalab::vtd::testing
