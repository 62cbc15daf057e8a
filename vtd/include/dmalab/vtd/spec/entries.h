// SPDX-License-Identifier: GPL-2.0-or-later
// The structures the unit reads from guest memory, as typed views: root and context
// entries (VT-d 9.1, 9.3, legacy mode), second-level paging entries (9.8), interrupt
// remapping table entries (9.10) and the legacy 128-bit invalidation descriptors (6.5.2). Each is
// decoded once from its little-endian bytes (`from`), whatever the host's byte order; accessors are
// named after the spec's fields, whose one declaration is the field tables in registers.h.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <variant>

#include "dmalab/le.h"
#include "dmalab/vtd/spec/registers.h"

namespace dmalab::vtd
{

// Root entry (9.1): where the context table of one bus is.
struct RootEntry {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static RootEntry from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    bool present() const { return field(root::LO, "P").get(lo); }
    uint64_t context_table_pointer() const { return lo & field_mask(root::LO, "CTP"); }
    // Bits no field defines, and CTP bits the host address width (haw_mask: the bits at
    // and above it) cannot hold.
    bool reserved_set(uint64_t haw_mask) const
    {
        return (lo & ~defined_bits(root::LO)) || (lo & haw_mask) || hi;
    }
};
static_assert(sizeof(RootEntry) == RootEntry::kSize);

// Context entry (9.3): how one source id's requests are translated.
struct ContextEntry {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static ContextEntry from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    bool present() const { return field(ctx::LO, "P").get(lo); }
    bool fault_processing_disable() const { return field(ctx::LO, "FPD").get(lo); }
    TT translation_type() const { return static_cast<TT>(field(ctx::LO, "TT").get(lo)); }
    uint64_t slptptr() const { return lo & field_mask(ctx::LO, "SLPTPTR"); }
    uint8_t address_width() const { return static_cast<uint8_t>(field(ctx::HI, "AW").get(hi)); }
    uint32_t domain_id() const { return static_cast<uint32_t>(field(ctx::HI, "DID").get(hi)); }
    bool reserved_set(uint64_t haw_mask) const
    {
        return (lo & ~defined_bits(ctx::LO)) || (lo & haw_mask) || (hi & ~defined_bits(ctx::HI));
    }
};
static_assert(sizeof(ContextEntry) == ContextEntry::kSize);

// Scalable-mode root entry (9.2): the context tables of devfn 0-127 (lower) and 128-255
// (upper) of one bus.
struct SmRootEntry {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static SmRootEntry from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    // The half devfn is in: present, its table, and its reserved bits.
    bool present(bool upper) const
    {
        return upper ? field(smroot::HI, "UP").get(hi) : field(smroot::LO, "LP").get(lo);
    }
    uint64_t context_table_pointer(bool upper) const
    {
        return upper ? hi & field_mask(smroot::HI, "UCTP") : lo & field_mask(smroot::LO, "LCTP");
    }
    bool reserved_set(bool upper, uint64_t haw_mask) const
    {
        uint64_t q = upper ? hi : lo;
        uint64_t defined = upper ? defined_bits(smroot::HI) : defined_bits(smroot::LO);
        return (q & ~defined) || (q & haw_mask);
    }
};
static_assert(sizeof(SmRootEntry) == SmRootEntry::kSize);

// Scalable-mode context entry (9.4), 256 bits.
struct SmContextEntry {
    static constexpr size_t kSize = 32;
    uint64_t q[4] = {};

    static SmContextEntry from(const uint8_t* p)
    {
        return {{load_le(p, 8), load_le(p + 8, 8), load_le(p + 16, 8), load_le(p + 24, 8)}};
    }
    bool present() const { return field(smctx::Q0, "P").get(q[0]); }
    bool fault_processing_disable() const { return field(smctx::Q0, "FPD").get(q[0]); }
    bool device_tlb() const { return field(smctx::Q0, "DTE").get(q[0]); }
    bool pasid_enable() const { return field(smctx::Q0, "PASIDE").get(q[0]); }
    bool page_requests() const { return field(smctx::Q0, "PRE").get(q[0]); }
    // The PASID directory's entries: 2^(PDTS+7).
    uint32_t dir_entries() const { return uint32_t{1} << (field(smctx::Q0, "PDTS").get(q[0]) + 7); }
    uint64_t dir_pointer() const { return q[0] & field_mask(smctx::Q0, "PASIDDIRPTR"); }
    uint32_t rid_pasid() const
    {
        return static_cast<uint32_t>(field(smctx::Q1, "RID_PASID").get(q[1]));
    }
    bool reserved_set(uint64_t haw_mask) const
    {
        return (q[0] & ~defined_bits(smctx::Q0)) || (q[0] & haw_mask) ||
               (q[1] & ~defined_bits(smctx::Q1)) || q[2] || q[3];
    }
};
static_assert(sizeof(SmContextEntry) == SmContextEntry::kSize);

// PASID directory entry (9.5): where the table of 64 PASIDs is.
struct PasidDirEntry {
    static constexpr size_t kSize = 8;
    uint64_t v = 0;

    static PasidDirEntry from(const uint8_t* p) { return {load_le(p, 8)}; }
    bool present() const { return field(pasiddir::F, "P").get(v); }
    bool fault_processing_disable() const { return field(pasiddir::F, "FPD").get(v); }
    uint64_t table_pointer() const { return v & field_mask(pasiddir::F, "PTP"); }
    bool reserved_set(uint64_t haw_mask) const
    {
        return (v & ~defined_bits(pasiddir::F)) || (v & haw_mask);
    }
};
static_assert(sizeof(PasidDirEntry) == PasidDirEntry::kSize);

// PASID table entry (9.6), 512 bits.
struct PasidEntry {
    static constexpr size_t kSize = 64;
    uint64_t q[8] = {};

    static PasidEntry from(const uint8_t* p)
    {
        PasidEntry e;
        for (unsigned i = 0; i < 8; i++)
            e.q[i] = load_le(p + 8 * i, 8);
        return e;
    }
    bool present() const { return field(pasid::Q0, "P").get(q[0]); }
    bool fault_processing_disable() const { return field(pasid::Q0, "FPD").get(q[0]); }
    uint8_t address_width() const { return static_cast<uint8_t>(field(pasid::Q0, "AW").get(q[0])); }
    Pgtt pgtt() const { return static_cast<Pgtt>(field(pasid::Q0, "PGTT").get(q[0])); }
    uint64_t slptptr() const { return q[0] & field_mask(pasid::Q0, "SLPTPTR"); }
    uint32_t domain_id() const { return static_cast<uint32_t>(field(pasid::Q1, "DID").get(q[1])); }
    unsigned flpm() const { return static_cast<unsigned>(field(pasid::Q2, "FLPM").get(q[2])); }
    bool nxe() const { return field(pasid::Q2, "NXE").get(q[2]); }
    uint64_t flptr() const { return q[2] & field_mask(pasid::Q2, "FLPTR"); }
    // Bits no field defines (pointer bits beyond the host width are checked by the walk,
    // which has its own fault reasons for them).
    bool reserved_set() const
    {
        if ((q[0] & ~defined_bits(pasid::Q0)) || (q[1] & ~defined_bits(pasid::Q1)) ||
            (q[2] & ~defined_bits(pasid::Q2)))
            return true;
        for (unsigned i = 3; i < 8; i++)
            if (q[i])
                return true;
        return false;
    }
};
static_assert(sizeof(PasidEntry) == PasidEntry::kSize);

// First-stage paging entry (9.7), at any level.
struct FlPte {
    static constexpr size_t kSize = 8;
    uint64_t v = 0;

    bool present() const { return field(flpte::F, "P").get(v); }
    bool writable() const { return field(flpte::F, "RW").get(v); }
    bool user() const { return field(flpte::F, "US").get(v); }
    bool accessed() const { return field(flpte::F, "A").get(v); }
    bool dirty() const { return field(flpte::F, "D").get(v); }
    bool page_size() const { return field(flpte::F, "PS").get(v); }
    bool execute_disable() const { return field(flpte::F, "XD").get(v); }
    uint64_t address() const { return v & field_mask(flpte::F, "ADDR"); }
};

// Second-level paging entry (9.8), at any level: a table pointer or, with PS (or at the
// last level), a page.
struct SlPte {
    static constexpr size_t kSize = 8;
    uint64_t v = 0;

    static SlPte from(const uint8_t* p) { return {load_le(p, 8)}; }
    bool read() const { return field(slpte::F, "R").get(v); }
    bool write() const { return field(slpte::F, "W").get(v); }
    bool present() const { return read() || write(); } // neither: not present (3.6)
    bool page_size() const { return field(slpte::F, "PS").get(v); }
    uint64_t address() const { return v & field_mask(slpte::F, "ADDR"); }
    // dt: the unit advertises ECAP.DT, which defines TM.
    bool reserved_set(uint64_t haw_mask, bool dt) const
    {
        return v & (haw_mask | (dt ? slpte::kReservedWithDt : slpte::kReserved));
    }
};
static_assert(sizeof(SlPte) == SlPte::kSize);

// Interrupt remapping table entry (9.10), remapped format: how one interrupt index is
// delivered, and which requesters may use it.
struct Irte {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static Irte from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    bool present() const { return field(irte::LO, "P").get(lo); }
    bool fault_processing_disable() const { return field(irte::LO, "FPD").get(lo); }
    bool destination_mode() const { return field(irte::LO, "DM").get(lo); } // 1: logical
    bool redirection_hint() const { return field(irte::LO, "RH").get(lo); }
    bool trigger_mode() const { return field(irte::LO, "TM").get(lo); } // 1: level
    uint8_t delivery_mode() const { return static_cast<uint8_t>(field(irte::LO, "DLM").get(lo)); }
    bool posted() const { return field(irte::LO, "IM").get(lo); }
    uint8_t vector() const { return static_cast<uint8_t>(field(irte::LO, "V").get(lo)); }
    // The APIC destination: all of DST in x2APIC mode (EIME), DST bits 15:8 otherwise.
    uint32_t destination(bool eime) const
    {
        uint32_t dst = static_cast<uint32_t>(field(irte::LO, "DST").get(lo));
        return eime ? dst : (dst >> 8) & 0xff;
    }
    uint16_t sid() const { return static_cast<uint16_t>(field(irte::HI, "SID").get(hi)); }
    uint8_t sq() const { return static_cast<uint8_t>(field(irte::HI, "SQ").get(hi)); }
    Svt svt() const { return static_cast<Svt>(field(irte::HI, "SVT").get(hi)); }

    // The reserved bits set in each qword: bits no field defines, IM (posted interrupts are
    // not supported), DST's unused bits in xAPIC mode, and a reserved encoding of DLM or SVT
    // (reported as that field's bits).
    std::pair<uint64_t, uint64_t> reserved(bool eime) const
    {
        uint64_t l = (lo & ~defined_bits(irte::LO)) | (lo & field_mask(irte::LO, "IM"));
        if (!eime)
            l |= lo & irte::kXapicDstReserved;
        if (delivery_mode() == 3 || delivery_mode() == 6)
            l |= lo & field_mask(irte::LO, "DLM");
        uint64_t h = hi & ~defined_bits(irte::HI);
        if (svt() == Svt::Reserved)
            h |= hi & field_mask(irte::HI, "SVT");
        return {l, h};
    }
    bool reserved_set(bool eime) const
    {
        auto [l, h] = reserved(eime);
        return l || h;
    }
    // Whether a request from `requester` may use the entry (SVT, SQ, SID).
    bool accepts(uint16_t requester) const
    {
        switch (svt()) {
        case Svt::None:
            return true;
        case Svt::Sid: {
            // SQ: how many of the function number's bits (from bit 2 down) are not compared.
            static constexpr uint16_t kMask[4] = {0xffff, 0xfffb, 0xfff9, 0xfff8};
            uint16_t m = kMask[sq() & 3];
            return (requester & m) == (sid() & m);
        }
        case Svt::Bus: { // SID[15:8] the first bus, SID[7:0] the last
            unsigned bus = requester >> 8;
            return (sid() >> 8) <= bus && bus <= (sid() & 0xff);
        }
        default:
            return false;
        }
    }
};
static_assert(sizeof(Irte) == Irte::kSize);

// An invalidation descriptor (6.5.2) as fetched from the queue: 128 bits, or 256 where the
// queue holds 256-bit descriptors (IQA.DW, scalable mode), whose upper half (up) no type
// the unit supports defines. decode() turns it into one of the typed descriptors below, or
// says why it is invalid.
struct InvDesc {
    static constexpr size_t kSize = 16;     // 128-bit descriptors
    static constexpr size_t kWideSize = 32; // 256-bit descriptors
    uint64_t lo = 0, hi = 0;
    uint64_t up[2] = {};

    static InvDesc from(const uint8_t* p, bool wide = false)
    {
        InvDesc d{load_le(p, 8), load_le(p + 8, 8)};
        if (wide) {
            d.up[0] = load_le(p + 16, 8);
            d.up[1] = load_le(p + 24, 8);
        }
        return d;
    }
    // Type bits 3:0, and 6:4 from bits 11:9.
    DescType type() const
    {
        return static_cast<DescType>(qi::TYPE.get(lo) | qi::TYPE_HI.get(lo) << 4);
    }
};

// Context-cache invalidation (6.5.2.1).
struct CcInv {
    Gran g;
    uint16_t did, sid;
    uint8_t fm;
};
// IOTLB invalidation (6.5.2.3).
struct IotlbInv {
    Gran g;
    uint16_t did;
    uint64_t addr; // page-selective: the first page, aligned by the hardware to 2^am pages
    unsigned am;
    bool ih, dr, dw;
};
// Device-TLB invalidation (6.5.2.5): 2^pages_log2 pages from addr (aligned down to that
// many) in the device-TLB of requester sid. PFSID and MIP are fields, not reserved bits, but
// nothing the unit models uses them. The PASID-based form (6.5.2.6) names one PASID's
// entries, or with all_pasids every PASID's.
struct DevTlbInv {
    uint16_t sid;
    uint64_t addr;
    unsigned pages_log2;
    bool pasid_based = false;
    uint32_t pasid = 0;
    bool all_pasids = false;
};
// PASID-cache invalidation (6.5.2.2).
enum class PcGran : uint8_t { Domain = 0, Pasid = 1, Global = 3 };
struct PcInv {
    PcGran g;
    uint16_t did;
    uint32_t pasid;
};
// PASID-based IOTLB invalidation (6.5.2.4): all of a PASID's entries in a domain, or the
// 2^am pages from addr (aligned down to that many).
struct PiotlbInv {
    bool page;
    uint16_t did;
    uint32_t pasid;
    uint64_t addr;
    unsigned am;
    bool ih;
};
// Interrupt entry cache invalidation (6.5.2.7): all entries, or the 2^im from `index`
// (aligned down to 2^im).
struct IecInv {
    bool global;
    uint16_t index;
    unsigned im;
};
// Invalidation wait (6.5.2.8).
struct WaitInv {
    bool intr, status_write, fence, page_drain;
    uint32_t status_data;
    uint64_t status_address;
};
// Why the unit refuses a descriptor (IQE): what is wrong, and the offending bits of each
// qword where that is reserved bits.
struct DescError {
    const char* why;
    uint64_t lo_bits = 0, hi_bits = 0;
};
using Decoded =
    std::variant<CcInv, IotlbInv, DevTlbInv, IecInv, WaitInv, PcInv, PiotlbInv, DescError>;

// What the unit advertises that decides whether a descriptor is valid: CAP.MAMV, whether
// it remaps interrupts (ECAP.IR: interrupt entry cache descriptors) with ECAP.MHMV, and
// whether it supports device-TLBs (ECAP.DT: device-TLB descriptors).
struct DecodeLimits {
    unsigned mamv = kMamv;
    bool iec = false;
    unsigned mhmv = kMhmv;
    bool dt = false;
    bool sm = false; // ECAP.SMTS: the PASID-based descriptors (types 6 to 8)
};

// The pages a device-TLB invalidation names (PCIe ATS 10.3.1, the size bit S): without S
// one; with it 2^(n+1), n the count of set address bits from bit 12 up (all of them set:
// the whole 64-bit space, 2^52 pages).
inline unsigned devtlb_pages_log2(uint64_t hi)
{
    if (!field(qi::DEVTLB_HI, "S").get(hi))
        return 0;
    auto n = static_cast<unsigned>(std::countr_one(field(qi::DEVTLB_HI, "ADDR").get(hi)));
    return n >= 52 ? 52 : n + 1;
}

// The pages of a PASID-based device-TLB invalidation: as devtlb_pages_log2, with S at bit 11.
inline unsigned pasid_devtlb_pages_log2(uint64_t hi)
{
    if (!field(qi::PDEVTLB_HI, "S").get(hi))
        return 0;
    auto n = static_cast<unsigned>(std::countr_one(field(qi::PDEVTLB_HI, "ADDR").get(hi)));
    return n >= 52 ? 52 : n + 1;
}

// The descriptor's kind and fields, or why this unit refuses it: a type it does not support
// (device-TLB without ECAP.DT, interrupt entry cache without ECAP.IR, anything else),
// reserved bits set, a granularity of 0, a page-selective IOTLB invalidation of more than
// 2^mamv pages (CAP.MAMV), or an index-selective one of more than 2^mhmv interrupt entries
// (ECAP.MHMV).
inline Decoded decode(const InvDesc& d, const DecodeLimits& lim)
{
    const unsigned mamv = lim.mamv;
    // The reserved bits set in d, given what its type defines.
    auto reserved = [&](uint64_t lo_defined, uint64_t hi_defined) {
        return DescError{"reserved bits set", d.lo & ~lo_defined, d.hi & ~hi_defined};
    };
    // No type the unit supports defines bits 255:128 of a 256-bit descriptor.
    if (d.up[0] || d.up[1])
        return DescError{"reserved bits set in bits 255:128"};
    switch (d.type()) {
    case DescType::Context: {
        if (DescError e = reserved(defined_bits(qi::CC_LO), 0); e.lo_bits || e.hi_bits)
            return e;
        auto g = static_cast<Gran>(field(qi::CC_LO, "G").get(d.lo));
        if (g == Gran::Reserved)
            return DescError{"granularity 0"};
        return CcInv{g, static_cast<uint16_t>(field(qi::CC_LO, "DID").get(d.lo)),
                     static_cast<uint16_t>(field(qi::CC_LO, "SID").get(d.lo)),
                     static_cast<uint8_t>(field(qi::CC_LO, "FM").get(d.lo))};
    }
    case DescType::Iotlb: {
        if (DescError e = reserved(defined_bits(qi::IOTLB_LO), defined_bits(qi::IOTLB_HI));
            e.lo_bits || e.hi_bits)
            return e;
        auto g = static_cast<Gran>(field(qi::IOTLB_LO, "G").get(d.lo));
        if (g == Gran::Reserved)
            return DescError{"granularity 0"};
        IotlbInv t{g,
                   static_cast<uint16_t>(field(qi::IOTLB_LO, "DID").get(d.lo)),
                   d.hi & field_mask(qi::IOTLB_HI, "ADDR"),
                   static_cast<unsigned>(field(qi::IOTLB_HI, "AM").get(d.hi)),
                   field(qi::IOTLB_HI, "IH").get(d.hi) != 0,
                   field(qi::IOTLB_LO, "DR").get(d.lo) != 0,
                   field(qi::IOTLB_LO, "DW").get(d.lo) != 0};
        if (g == Gran::Selective && t.am > mamv)
            return DescError{"address mask beyond CAP.MAMV"};
        return t;
    }
    case DescType::DevIotlb: {
        if (!lim.dt)
            return DescError{"type not supported"};
        if (DescError e = reserved(defined_bits(qi::DEVTLB_LO), defined_bits(qi::DEVTLB_HI));
            e.lo_bits || e.hi_bits)
            return e;
        unsigned log2 = devtlb_pages_log2(d.hi);
        uint64_t addr = d.hi & field_mask(qi::DEVTLB_HI, "ADDR");
        if (log2 < 52)
            addr &= ~((uint64_t{1} << (12 + log2)) - 1);
        else
            addr = 0;
        return DevTlbInv{static_cast<uint16_t>(field(qi::DEVTLB_LO, "SID").get(d.lo)), addr, log2};
    }
    case DescType::Iec: {
        if (!lim.iec)
            return DescError{"type not supported"};
        if (DescError e = reserved(defined_bits(qi::IEC_LO), 0); e.lo_bits || e.hi_bits)
            return e;
        IecInv t{field(qi::IEC_LO, "G").get(d.lo) == 0,
                 static_cast<uint16_t>(field(qi::IEC_LO, "IIDX").get(d.lo)),
                 static_cast<unsigned>(field(qi::IEC_LO, "IM").get(d.lo))};
        if (!t.global && t.im > lim.mhmv)
            return DescError{"index mask beyond ECAP.MHMV"};
        return t;
    }
    case DescType::Wait:
        if (DescError e = reserved(defined_bits(qi::WAIT_LO), defined_bits(qi::WAIT_HI));
            e.lo_bits || e.hi_bits)
            return e;
        return WaitInv{field(qi::WAIT_LO, "IF").get(d.lo) != 0,
                       field(qi::WAIT_LO, "SW").get(d.lo) != 0,
                       field(qi::WAIT_LO, "FN").get(d.lo) != 0,
                       field(qi::WAIT_LO, "PD").get(d.lo) != 0,
                       static_cast<uint32_t>(field(qi::WAIT_LO, "SDATA").get(d.lo)),
                       d.hi & field_mask(qi::WAIT_HI, "SADDR")};
    case DescType::PasidIotlb: {
        if (!lim.sm)
            return DescError{"type not supported"};
        if (DescError e = reserved(defined_bits(qi::PIOTLB_LO), defined_bits(qi::PIOTLB_HI));
            e.lo_bits || e.hi_bits)
            return e;
        unsigned g = static_cast<unsigned>(field(qi::PIOTLB_LO, "G").get(d.lo));
        if (g < 2)
            return DescError{"reserved granularity"};
        PiotlbInv t{g == 3,
                    static_cast<uint16_t>(field(qi::PIOTLB_LO, "DID").get(d.lo)),
                    static_cast<uint32_t>(field(qi::PIOTLB_LO, "PASID").get(d.lo)),
                    d.hi & field_mask(qi::PIOTLB_HI, "ADDR"),
                    static_cast<unsigned>(field(qi::PIOTLB_HI, "AM").get(d.hi)),
                    field(qi::PIOTLB_HI, "IH").get(d.hi) != 0};
        if (t.page && t.am > mamv)
            return DescError{"address mask beyond CAP.MAMV"};
        return t;
    }
    case DescType::PasidCache: {
        if (!lim.sm)
            return DescError{"type not supported"};
        if (DescError e = reserved(defined_bits(qi::PC_LO), 0); e.lo_bits || e.hi_bits)
            return e;
        auto g = static_cast<PcGran>(field(qi::PC_LO, "G").get(d.lo));
        if (g != PcGran::Domain && g != PcGran::Pasid && g != PcGran::Global)
            return DescError{"reserved granularity"};
        return PcInv{g, static_cast<uint16_t>(field(qi::PC_LO, "DID").get(d.lo)),
                     static_cast<uint32_t>(field(qi::PC_LO, "PASID").get(d.lo))};
    }
    case DescType::PasidDevIotlb: {
        if (!lim.sm || !lim.dt)
            return DescError{"type not supported"};
        if (DescError e = reserved(defined_bits(qi::PDEVTLB_LO), defined_bits(qi::PDEVTLB_HI));
            e.lo_bits || e.hi_bits)
            return e;
        unsigned log2 = pasid_devtlb_pages_log2(d.hi);
        uint64_t addr = d.hi & field_mask(qi::PDEVTLB_HI, "ADDR");
        addr = log2 < 52 ? addr & ~((uint64_t{1} << (12 + log2)) - 1) : 0;
        DevTlbInv t{static_cast<uint16_t>(field(qi::PDEVTLB_LO, "SID").get(d.lo)), addr, log2};
        t.pasid_based = true;
        t.pasid = static_cast<uint32_t>(field(qi::PDEVTLB_LO, "PASID").get(d.lo));
        t.all_pasids = field(qi::PDEVTLB_HI, "G").get(d.hi) != 0;
        return t;
    }
    default:
        return DescError{"type not supported"};
    }
}

} // namespace dmalab::vtd
