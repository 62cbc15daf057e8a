// SPDX-License-Identifier: GPL-2.0-or-later
// The structures the unit reads from guest memory, as typed views: root and context
// entries (VT-d 9.1, 9.3, legacy mode), second-level paging entries (9.8) and the legacy
// 128-bit invalidation descriptors (6.5.2). Each is decoded once from its little-endian
// bytes (`from`), whatever the host's byte order; its accessors are named after the spec's
// fields, and its size is the structure's size in memory. The bit positions are the
// constants in registers.h, declared there once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmalab/le.h"
#include "dmalab/vtd/registers.h"

namespace dmalab::vtd
{

// Root entry (9.1): where the context table of one bus is.
struct RootEntry {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static RootEntry from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    bool present() const { return lo & RE_P; }                     // P, bit 0
    uint64_t context_table_pointer() const { return lo & RE_CTP; } // CTP, bits 63:12
    // Bits 11:1 and the upper quadword are reserved, as are CTP bits the host address
    // width (haw_mask: the bits at and above it) cannot hold.
    bool reserved_set(uint64_t haw_mask) const { return (lo & 0xffe) || (lo & haw_mask) || hi; }
};
static_assert(sizeof(RootEntry) == RootEntry::kSize);

// Context entry (9.3): how one source id's requests are translated.
struct ContextEntry {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static ContextEntry from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    bool present() const { return lo & CE_P; }                              // P, bit 0
    bool fault_processing_disable() const { return lo & CE_FPD; }           // FPD, bit 1
    uint8_t translation_type() const { return (lo >> CE_TT_SHIFT) & 3; }    // TT, bits 3:2
    uint64_t slptptr() const { return lo & CE_SLPTPTR; }                    // bits 63:12
    uint8_t address_width() const { return hi & CE_HI_AW; }                 // AW, bits 66:64
    uint32_t domain_id() const { return (hi >> CE_HI_DID_SHIFT) & 0xffff; } // DID, 87:72
    bool reserved_set(uint64_t haw_mask) const
    {
        return (lo & CE_LO_RESERVED) || (lo & haw_mask) || (hi & CE_HI_RESERVED);
    }
};
static_assert(sizeof(ContextEntry) == ContextEntry::kSize);

// Second-level paging entry (9.8), at any level: a table pointer or, with PS (or at the
// last level), a page.
struct SlPte {
    static constexpr size_t kSize = 8;
    uint64_t v = 0;

    static SlPte from(const uint8_t* p) { return {load_le(p, 8)}; }
    bool read() const { return v & SL_R; }                         // R, bit 0
    bool write() const { return v & SL_W; }                        // W, bit 1
    bool present() const { return v & (SL_R | SL_W); }             // neither: not present (3.6)
    bool page_size() const { return v & SL_PS; }                   // PS, bit 7
    uint64_t address() const { return v & 0x000ffffffffff000ull; } // ADDR, bits 51:12
    // SNP (bit 11) and TM (bit 62) need ECAP.SC and ECAP.DT, which the unit does not
    // advertise, so they are reserved here; so are address bits beyond the host width.
    bool reserved_set(uint64_t haw_mask) const { return v & (haw_mask | SL_SNP | SL_TM); }
};
static_assert(sizeof(SlPte) == SlPte::kSize);

// An invalidation descriptor (6.5.2), legacy 128-bit form. The accessors of one type read
// fields that other types define differently: use those of type().
struct InvDesc {
    static constexpr size_t kSize = 16;
    uint64_t lo = 0, hi = 0;

    static InvDesc from(const uint8_t* p) { return {load_le(p, 8), load_le(p + 8, 8)}; }
    uint8_t type() const { return lo & 0xf; } // bits 3:0 (11:9 must be 0 in this form)
    Gran granularity() const { return static_cast<Gran>((lo >> QI_G_SHIFT) & 3); }
    uint16_t domain_id() const { return (lo >> QI_DID_SHIFT) & 0xffff; }
    // Context-cache invalidation (6.5.2.1).
    uint16_t source_id() const { return (lo >> QI_CC_SID_SHIFT) & 0xffff; }
    uint8_t function_mask() const { return (lo >> QI_CC_FM_SHIFT) & 3; }
    // IOTLB invalidation (6.5.2.3).
    uint64_t address() const { return hi & IVA_ADDR; }
    unsigned address_mask() const { return hi & IVA_AM; }
    // Invalidation wait (6.5.2.8).
    bool interrupt_flag() const { return lo & QI_WAIT_IF; }
    bool status_write() const { return lo & QI_WAIT_SW; }
    uint32_t status_data() const { return static_cast<uint32_t>(lo >> 32); }
    uint64_t status_address() const { return hi & ~uint64_t{3}; }
    // Whether every bit the type leaves reserved is 0 (an unknown type has none defined).
    bool reserved_clear() const
    {
        switch (type()) {
        case QI_CC:
            return !(lo & ~QI_CC_LO) && !(hi & ~QI_CC_HI);
        case QI_IOTLB:
            return !(lo & ~QI_IOTLB_LO) && !(hi & ~QI_IOTLB_HI);
        case QI_WAIT:
            return !(lo & ~QI_WAIT_LO) && !(hi & ~QI_WAIT_HI);
        default:
            return false;
        }
    }
};
static_assert(sizeof(InvDesc) == InvDesc::kSize);

} // namespace dmalab::vtd
