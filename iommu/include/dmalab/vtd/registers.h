// SPDX-License-Identifier: GPL-2.0-or-later
// VT-d DMA-remapping unit: register offsets, field positions, table and descriptor formats
// (Intel VT-d specification, chapter 10 "Register Descriptions", chapter 9 "Translation
// Structure Formats" and 6.5 "Invalidation"). Facts only; the behaviour is in
// iommu/src/ (unit.cc, invalidation.cc, fault_recording.cc, translation.cc).
#pragma once

#include <cstdint>

#include "dmalab/regbank.h"

namespace dmalab::vtd
{

inline constexpr uint32_t kRegWindow = 0x1000;

// Offsets (10.4).
inline constexpr uint32_t VER = 0x00;
inline constexpr uint32_t CAP = 0x08;
inline constexpr uint32_t ECAP = 0x10;
inline constexpr uint32_t GCMD = 0x18;
inline constexpr uint32_t GSTS = 0x1c;
inline constexpr uint32_t RTADDR = 0x20;
inline constexpr uint32_t CCMD = 0x28;
inline constexpr uint32_t FSTS = 0x34;
inline constexpr uint32_t FECTL = 0x38;
inline constexpr uint32_t FEDATA = 0x3c;
inline constexpr uint32_t FEADDR = 0x40;
inline constexpr uint32_t FEUADDR = 0x44;
inline constexpr uint32_t IQH = 0x80;
inline constexpr uint32_t IQT = 0x88;
inline constexpr uint32_t IQA = 0x90;
inline constexpr uint32_t ICS = 0x9c;
inline constexpr uint32_t IECTL = 0xa0;
inline constexpr uint32_t IEDATA = 0xa4;
inline constexpr uint32_t IEADDR = 0xa8;
inline constexpr uint32_t IEUADDR = 0xac;
// The IOTLB registers and the fault-recording registers sit where ECAP.IRO and CAP.FRO say
// (in 16-byte units); these are this model's choices.
inline constexpr uint32_t IVA = 0x200;
inline constexpr uint32_t IOTLB = 0x208;
inline constexpr uint32_t FRCD = 0x220; // record i: lower qword at FRCD + 16 i, upper at +8
inline constexpr unsigned kFaultRecords = 8;

inline constexpr uint32_t kVersion = 0x10; // 1.0

// Register fields, with the access each has (10.4). Bits outside every field are reserved.
// FECTL and IECTL share CTL; the data and address registers of both events share DATA32 and
// ADDR.
namespace fields
{
using A = FieldAccess;
inline constexpr Field VER[] = {{"MIN", 0, 4, A::RO}, {"MAX", 4, 4, A::RO}};
inline constexpr Field CAP[] = {{"CAP", 0, 64, A::RO}};
// GCMD and GSTS: the same bits, commands in GCMD and their status in GSTS.
inline constexpr Field GCMD[] = {
    {"CFI", 23, 1, A::WO}, {"SIRTP", 24, 1, A::WO}, {"IRE", 25, 1, A::WO},
    {"QIE", 26, 1, A::WO}, {"WBF", 27, 1, A::WO},   {"EAFL", 28, 1, A::WO},
    {"SFL", 29, 1, A::WO}, {"SRTP", 30, 1, A::WO},  {"TE", 31, 1, A::WO}};
inline constexpr Field GSTS[] = {
    {"CFIS", 23, 1, A::RO}, {"IRTPS", 24, 1, A::RO}, {"IRES", 25, 1, A::RO},
    {"QIES", 26, 1, A::RO}, {"WBFS", 27, 1, A::RO},  {"AFLS", 28, 1, A::RO},
    {"FLS", 29, 1, A::RO},  {"RTPS", 30, 1, A::RO},  {"TES", 31, 1, A::RO}};
inline constexpr Field RTADDR[] = {{"TTM", 10, 2, A::RW}, {"RTA", 12, 52, A::RW}};
inline constexpr Field CCMD[] = {{"DID", 0, 16, A::RW},  {"SID", 16, 16, A::RW},
                                 {"FM", 32, 2, A::RW},   {"CAIG", 59, 2, A::RO},
                                 {"CIRG", 61, 2, A::RW}, {"ICC", 63, 1, A::RO}};
inline constexpr Field FSTS[] = {{"PFO", 0, 1, A::W1C}, {"PPF", 1, 1, A::RO},
                                 {"IQE", 4, 1, A::W1C}, {"ICE", 5, 1, A::W1C},
                                 {"ITE", 6, 1, A::W1C}, {"FRI", 8, 8, A::RO}};
inline constexpr Field CTL[] = {{"IP", 30, 1, A::RO}, {"IM", 31, 1, A::RW}};
inline constexpr Field DATA32[] = {{"DATA", 0, 32, A::RW}};
inline constexpr Field ADDR[] = {{"MA", 2, 30, A::RW}};
inline constexpr Field IQH[] = {{"QH", 4, 15, A::RO}};
inline constexpr Field IQT[] = {{"QT", 4, 15, A::RW}};
inline constexpr Field IQA[] = {{"QS", 0, 3, A::RW}, {"IQA", 12, 52, A::RW}};
inline constexpr Field ICS[] = {{"IWC", 0, 1, A::W1C}};
inline constexpr Field IVA[] = {{"AM", 0, 6, A::RW}, {"IH", 6, 1, A::RW}, {"ADDR", 12, 52, A::RW}};
inline constexpr Field IOTLB[] = {{"DID", 32, 16, A::RW}, {"DW", 48, 1, A::RW},
                                  {"DR", 49, 1, A::RW},   {"IAIG", 57, 2, A::RO},
                                  {"IIRG", 60, 2, A::RW}, {"IVT", 63, 1, A::RO}};
inline constexpr Field FRCD_LO[] = {{"FI", 12, 52, A::RO}};
inline constexpr Field FRCD_HI[] = {
    {"SID", 0, 16, A::RO}, {"FR", 32, 8, A::RO}, {"T", 62, 1, A::RO}, {"F", 63, 1, A::W1C}};
} // namespace fields

// CAP (10.4.2).
inline constexpr unsigned CAP_ND_SHIFT = 0; // 2: 256 domain ids
inline constexpr unsigned CAP_SAGAW_SHIFT = 8;
inline constexpr uint64_t CAP_SAGAW_39 = uint64_t{1} << 9;  // 3-level tables
inline constexpr uint64_t CAP_SAGAW_48 = uint64_t{1} << 10; // 4-level tables
inline constexpr unsigned CAP_MGAW_SHIFT = 16;
inline constexpr unsigned CAP_FRO_SHIFT = 24;
inline constexpr uint64_t CAP_SLLPS_2M = uint64_t{1} << 34;
inline constexpr uint64_t CAP_SLLPS_1G = uint64_t{1} << 35;
inline constexpr uint64_t CAP_PSI = uint64_t{1} << 39;
inline constexpr unsigned CAP_NFR_SHIFT = 40;
inline constexpr unsigned CAP_MAMV_SHIFT = 48;
inline constexpr unsigned kMamv = 18; // page-selective invalidation of up to 2^18 pages (1 GiB)

// ECAP (10.4.3).
inline constexpr uint64_t ECAP_C = uint64_t{1} << 0;
inline constexpr uint64_t ECAP_QI = uint64_t{1} << 1;
inline constexpr uint64_t ECAP_PT = uint64_t{1} << 6;
inline constexpr unsigned ECAP_IRO_SHIFT = 8;
inline constexpr unsigned ECAP_MHMV_SHIFT = 20;

// GCMD / GSTS (10.4.4, 10.4.5): the same bit positions.
inline constexpr uint32_t G_TE = field_mask(fields::GCMD, "TE");
inline constexpr uint32_t G_SRTP = field_mask(fields::GCMD, "SRTP");
inline constexpr uint32_t G_SFL = field_mask(fields::GCMD, "SFL");
inline constexpr uint32_t G_EAFL = field_mask(fields::GCMD, "EAFL");
inline constexpr uint32_t G_WBF = field_mask(fields::GCMD, "WBF");
inline constexpr uint32_t G_QIE = field_mask(fields::GCMD, "QIE");
inline constexpr uint32_t G_IRE = field_mask(fields::GCMD, "IRE");
inline constexpr uint32_t G_SIRTP = field_mask(fields::GCMD, "SIRTP");
inline constexpr uint32_t G_CFI = field_mask(fields::GCMD, "CFI");

// RTADDR (10.4.6).
inline constexpr uint64_t RTADDR_RTA = field_mask(fields::RTADDR, "RTA");
inline constexpr unsigned RTADDR_TTM_SHIFT = field_lsb(fields::RTADDR, "TTM"); // 0: legacy mode

// CCMD (10.4.7).
inline constexpr uint64_t CCMD_ICC = field_mask(fields::CCMD, "ICC");
inline constexpr unsigned CCMD_CIRG_SHIFT = field_lsb(fields::CCMD, "CIRG");
inline constexpr unsigned CCMD_CAIG_SHIFT = field_lsb(fields::CCMD, "CAIG");
inline constexpr unsigned CCMD_FM_SHIFT = field_lsb(fields::CCMD, "FM");
inline constexpr unsigned CCMD_SID_SHIFT = field_lsb(fields::CCMD, "SID");

// IOTLB / IVA (10.4.8).
inline constexpr uint64_t IOTLB_IVT = field_mask(fields::IOTLB, "IVT");
inline constexpr unsigned IOTLB_IIRG_SHIFT = field_lsb(fields::IOTLB, "IIRG");
inline constexpr unsigned IOTLB_IAIG_SHIFT = field_lsb(fields::IOTLB, "IAIG");
inline constexpr unsigned IOTLB_DID_SHIFT = field_lsb(fields::IOTLB, "DID");
inline constexpr uint64_t IVA_ADDR = field_mask(fields::IVA, "ADDR");
inline constexpr uint64_t IVA_IH = field_mask(fields::IVA, "IH");
inline constexpr uint64_t IVA_AM = field_mask(fields::IVA, "AM");

// Invalidation granularities, as CIRG/IIRG and the descriptors' G fields encode them.
enum class Gran : uint8_t { Reserved = 0, Global = 1, Domain = 2, Selective = 3 };

// FSTS (10.4.9).
inline constexpr uint32_t FSTS_PFO = field_mask(fields::FSTS, "PFO");
inline constexpr uint32_t FSTS_PPF = field_mask(fields::FSTS, "PPF");
inline constexpr uint32_t FSTS_IQE = field_mask(fields::FSTS, "IQE");
inline constexpr uint32_t FSTS_ICE = field_mask(fields::FSTS, "ICE");
inline constexpr uint32_t FSTS_ITE = field_mask(fields::FSTS, "ITE");
inline constexpr unsigned FSTS_FRI_SHIFT = field_lsb(fields::FSTS, "FRI");

// FECTL / IECTL (10.4.10, 10.4.25): interrupt mask and pending.
inline constexpr uint32_t CTL_IM = field_mask(fields::CTL, "IM");
inline constexpr uint32_t CTL_IP = field_mask(fields::CTL, "IP");

// ICS (10.4.24).
inline constexpr uint32_t ICS_IWC = field_mask(fields::ICS, "IWC");

// Fault recording register, upper qword (10.4.14).
inline constexpr uint64_t FRCD_F = field_mask(fields::FRCD_HI, "F");
inline constexpr uint64_t FRCD_T_READ = field_mask(fields::FRCD_HI, "T");
inline constexpr unsigned FRCD_FR_SHIFT = field_lsb(fields::FRCD_HI, "FR");

// Invalidation queue (10.4.22, 10.4.23): 128-bit descriptors, 256 per 4 KiB page.
inline constexpr unsigned IQ_INDEX_SHIFT = field_lsb(fields::IQH, "QH");
inline constexpr uint64_t IQ_INDEX_MASK = field_mask(fields::IQH, "QH") >> IQ_INDEX_SHIFT;
inline constexpr uint64_t IQA_BASE = field_mask(fields::IQA, "IQA");
inline constexpr uint64_t IQA_DW = uint64_t{1} << 11;
inline constexpr uint64_t IQA_QS = field_mask(fields::IQA, "QS");

// Descriptor types (6.5.2).
inline constexpr uint8_t QI_CC = 0x1;
inline constexpr uint8_t QI_IOTLB = 0x2;
inline constexpr uint8_t QI_DEV_IOTLB = 0x3;
inline constexpr uint8_t QI_IEC = 0x4;
inline constexpr uint8_t QI_WAIT = 0x5;
inline constexpr unsigned QI_G_SHIFT = 4; // granularity, bits 5:4 of cc and iotlb descriptors
inline constexpr unsigned QI_DID_SHIFT = 16;
inline constexpr unsigned QI_CC_SID_SHIFT = 32;
inline constexpr unsigned QI_CC_FM_SHIFT = 48;
inline constexpr uint64_t QI_IOTLB_DW = uint64_t{1} << 6;
inline constexpr uint64_t QI_IOTLB_DR = uint64_t{1} << 7;
inline constexpr uint64_t QI_WAIT_IF = uint64_t{1} << 4;
inline constexpr uint64_t QI_WAIT_SW = uint64_t{1} << 5;
inline constexpr uint64_t QI_WAIT_FN = uint64_t{1} << 6;
inline constexpr uint64_t QI_WAIT_PD = uint64_t{1} << 7;
// Bits each legacy descriptor defines in its lower and upper qword; the rest are reserved.
inline constexpr uint64_t QI_CC_LO = 0x0003ffffffff003f;
inline constexpr uint64_t QI_CC_HI = 0;
inline constexpr uint64_t QI_IOTLB_LO = 0x00000000ffff00ff;
inline constexpr uint64_t QI_IOTLB_HI = ~uint64_t{0xf80};
inline constexpr uint64_t QI_WAIT_LO = 0xffffffff000000ff;
inline constexpr uint64_t QI_WAIT_HI = ~uint64_t{0x3};

// Root entry, legacy mode (9.1).
inline constexpr uint64_t RE_P = 1;
inline constexpr uint64_t RE_CTP = ~uint64_t{0xfff};
// Context entry, legacy mode (9.3).
inline constexpr uint64_t CE_P = 1;
inline constexpr uint64_t CE_FPD = 2;
inline constexpr unsigned CE_TT_SHIFT = 2;
inline constexpr uint64_t CE_SLPTPTR = ~uint64_t{0xfff};
inline constexpr uint64_t CE_LO_RESERVED = 0xff0; // bits 11:4
inline constexpr uint64_t CE_HI_AW = 0x7;
inline constexpr unsigned CE_HI_DID_SHIFT = 8;
inline constexpr uint64_t CE_HI_RESERVED = ~uint64_t{0xffff7f}; // bit 7, bits 63:24
enum : uint8_t { TT_UNTRANSLATED = 0, TT_ALL = 1, TT_PASSTHROUGH = 2 };
// Second-level paging entry (9.8).
inline constexpr uint64_t SL_R = 1;
inline constexpr uint64_t SL_W = 2;
inline constexpr uint64_t SL_PS = uint64_t{1} << 7;
inline constexpr uint64_t SL_SNP = uint64_t{1} << 11;
inline constexpr uint64_t SL_TM = uint64_t{1} << 62;

// Fault reasons, legacy mode (7.1.3 / appendix A).
enum FaultReason : uint8_t {
    FR_ROOT_NOT_PRESENT = 0x1,
    FR_CONTEXT_NOT_PRESENT = 0x2,
    FR_CONTEXT_INVALID = 0x3,   // invalid programming of a context entry (AW, TT)
    FR_ADDRESS_BEYOND_AW = 0x4, // input address above the domain's address width
    FR_WRITE = 0x5,             // write to a page without write permission
    FR_READ = 0x6,              // read of a page without read permission
    FR_PAGE_TABLE = 0x7,        // a paging entry could not be read
    FR_ROOT_TABLE = 0x8,        // the root table could not be read
    FR_CONTEXT_TABLE = 0x9,     // a context table could not be read
    FR_ROOT_RESERVED = 0xa,
    FR_CONTEXT_RESERVED = 0xb,
    FR_PAGE_RESERVED = 0xc,
};

} // namespace dmalab::vtd
