// SPDX-License-Identifier: GPL-2.0-or-later
// The structures the unit reads from guest memory, as typed views: root and context
// entries (VT-d 9.1, 9.3, legacy mode), second-level paging entries (9.8) and the legacy
// 128-bit invalidation descriptors (6.5.2). Each is decoded once from its little-endian
// bytes (`from`), whatever the host's byte order; accessors are named after the spec's
// fields, whose one declaration is the field tables in registers.h.
#pragma once

#include <cstddef>
#include <cstdint>
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
    bool reserved_set(uint64_t haw_mask) const { return v & (haw_mask | slpte::kReserved); }
};
static_assert(sizeof(SlPte) == SlPte::kSize);

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
using Decoded = std::variant<CcInv, IotlbInv, WaitInv, DescError>;

// The descriptor's kind and fields, or why this unit refuses it: a type it does not support
// (device-TLB, interrupt entry cache, anything else), reserved bits set, a granularity of
// 0, or a page-selective IOTLB invalidation of more than 2^mamv pages (CAP.MAMV).
inline Decoded decode(const InvDesc& d, unsigned mamv)
{
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
