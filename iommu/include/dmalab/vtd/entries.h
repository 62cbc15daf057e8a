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
#include "dmalab/vtd/registers.h"

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

// An invalidation descriptor (6.5.2), legacy 128-bit form, as fetched from the queue.
// decode() turns it into one of the typed descriptors below, or says why it is invalid.
struct InvDesc {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static InvDesc from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    DescType type() const { return static_cast<DescType>(qi::TYPE.get(lo)); }
};
static_assert(sizeof(InvDesc) == InvDesc::kSize);

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
// nothing the unit models uses them.
struct DevTlbInv {
    uint16_t sid;
    uint64_t addr;
    unsigned pages_log2;
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
using Decoded = std::variant<CcInv, IotlbInv, DevTlbInv, IecInv, WaitInv, DescError>;

// What the unit advertises that decides whether a descriptor is valid: CAP.MAMV, whether
// it remaps interrupts (ECAP.IR: interrupt entry cache descriptors) with ECAP.MHMV, and
// whether it supports device-TLBs (ECAP.DT: device-TLB descriptors).
struct DecodeLimits {
    unsigned mamv = kMamv;
    bool iec = false;
    unsigned mhmv = kMhmv;
    bool dt = false;
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
    default:
        return DescError{"type not supported"};
    }
}

} // namespace dmalab::vtd
