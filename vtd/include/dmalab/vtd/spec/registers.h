// SPDX-License-Identifier: GPL-2.0-or-later
// VT-d DMA-remapping unit: register offsets, field positions, table and descriptor formats
// (Intel VT-d specification, chapter 10 "Register Descriptions", chapter 9 "Translation
// Structure Formats" and 6.5 "Invalidation"). Facts only; the behaviour is in
// vtd/src/ (unit.cc, invalidation.cc, fault_recording.cc, translation.cc).
#pragma once

#include <cstdint>

#include "dmalab/regbank.h"

namespace dmalab::vtd
{

inline constexpr uint32_t kRegWindow = 0x1000;
inline constexpr uint32_t kVersion = 0x10; // 1.0
inline constexpr unsigned kFaultRecords = 8;

// Register fields, with the access each has (10.4). Bits outside every field are reserved.
// FECTL and IECTL share CTL; the data and address registers of both events share DATA32 and
// ADDR.
namespace fields
{
using A = FieldAccess;
inline constexpr Field VER[] = {{"MIN", 0, 4, A::RO}, {"MAX", 4, 4, A::RO}};
// CAP (10.4.2) and ECAP (10.4.3): what the unit offers, set from its configuration.
inline constexpr Field CAP[] = {
    {"ND", 0, 3, A::RO},     {"AFL", 3, 1, A::RO},      {"RWBF", 4, 1, A::RO},
    {"PLMR", 5, 1, A::RO},   {"PHMR", 6, 1, A::RO},     {"CM", 7, 1, A::RO},
    {"SAGAW", 8, 5, A::RO},  {"MGAW", 16, 6, A::RO},    {"ZLR", 22, 1, A::RO},
    {"FRO", 24, 10, A::RO},  {"SLLPS", 34, 4, A::RO},   {"PSI", 39, 1, A::RO},
    {"NFR", 40, 8, A::RO},   {"MAMV", 48, 6, A::RO},    {"DWD", 54, 1, A::RO},
    {"DRD", 55, 1, A::RO},   {"FL1GP", 56, 1, A::RO},   {"PI", 59, 1, A::RO},
    {"FL5LP", 60, 1, A::RO}, {"ESIRTPS", 62, 1, A::RO}, {"ESRTPS", 63, 1, A::RO}};
inline constexpr Field ECAP[] = {
    {"C", 0, 1, A::RO},       {"QI", 1, 1, A::RO},     {"DT", 2, 1, A::RO},
    {"IR", 3, 1, A::RO},      {"EIM", 4, 1, A::RO},    {"PT", 6, 1, A::RO},
    {"SC", 7, 1, A::RO},      {"IRO", 8, 10, A::RO},   {"MHMV", 20, 4, A::RO},
    {"NEST", 26, 1, A::RO},   {"PRS", 29, 1, A::RO},   {"ERS", 30, 1, A::RO},
    {"SRS", 31, 1, A::RO},    {"NWFS", 33, 1, A::RO},  {"EAFS", 34, 1, A::RO},
    {"PSS", 35, 5, A::RO},    {"PASID", 40, 1, A::RO}, {"DIT", 41, 1, A::RO},
    {"PDS", 42, 1, A::RO},    {"SMTS", 43, 1, A::RO},  {"VCS", 44, 1, A::RO},
    {"SLADS", 45, 1, A::RO},  {"SLTS", 46, 1, A::RO},  {"FLTS", 47, 1, A::RO},
    {"SMPWCS", 48, 1, A::RO}, {"RPS", 49, 1, A::RO},   {"ADMS", 51, 1, A::RO},
    {"RPRIVS", 52, 1, A::RO}};
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
// IQA.DW (256-bit descriptors) exists only with ECAP.SMTS; the unit ignores it otherwise.
inline constexpr Field IQA[] = {{"QS", 0, 3, A::RW}, {"DW", 11, 1, A::RW}, {"IQA", 12, 52, A::RW}};
inline constexpr Field ICS[] = {{"IWC", 0, 1, A::W1C}};
inline constexpr Field IVA[] = {{"AM", 0, 6, A::RW}, {"IH", 6, 1, A::RW}, {"ADDR", 12, 52, A::RW}};
inline constexpr Field IOTLB[] = {{"DID", 32, 16, A::RW}, {"DW", 48, 1, A::RW},
                                  {"DR", 49, 1, A::RW},   {"IAIG", 57, 2, A::RO},
                                  {"IIRG", 60, 2, A::RW}, {"IVT", 63, 1, A::RO}};
inline constexpr Field FRCD_LO[] = {{"FI", 12, 52, A::RO}};
// IRTA (10.4.29): the interrupt remapping table's base, size (2^(S+1) entries) and mode.
inline constexpr Field IRTA[] = {
    {"S", 0, 4, A::RW}, {"EIME", 11, 1, A::RW}, {"IRTA", 12, 52, A::RW}};
inline constexpr Field FRCD_HI[] = {{"SID", 0, 16, A::RO}, {"PP", 31, 1, A::RO},
                                    {"FR", 32, 8, A::RO},  {"PV", 40, 20, A::RO},
                                    {"T", 62, 1, A::RO},   {"F", 63, 1, A::W1C}};
} // namespace fields

// The register map (10.4): the one declaration of each register. The unit's bank, every
// register index (reg()) and offset (offset()) derive from it; unit.cc gives registers
// their behaviour by name. IVA and IOTLB sit where ECAP.IRO says and the fault-recording
// registers where CAP.FRO says (both in 16-byte units): those offsets are this model's.
// CAP's and ECAP's reset values come from the configuration.
// clang-format off
inline constexpr RegSpec kRegisters[] = {
    // name      offset width reset                              fields
    {"VER",      0x000, 4,    kVersion,                          fields::VER},
    {"CAP",      0x008, 8,    0,                                 fields::CAP},
    {"ECAP",     0x010, 8,    0,                                 fields::ECAP},
    {"GCMD",     0x018, 4,    0,                                 fields::GCMD},
    {"GSTS",     0x01c, 4,    0,                                 fields::GSTS},
    {"RTADDR",   0x020, 8,    0,                                 fields::RTADDR},
    {"CCMD",     0x028, 8,    0,                                 fields::CCMD},
    {"FSTS",     0x034, 4,    0,                                 fields::FSTS},
    {"FECTL",    0x038, 4,    field_mask(fields::CTL, "IM"),     fields::CTL},
    {"FEDATA",   0x03c, 4,    0,                                 fields::DATA32},
    {"FEADDR",   0x040, 4,    0,                                 fields::ADDR},
    {"FEUADDR",  0x044, 4,    0,                                 fields::DATA32},
    {"IQH",      0x080, 8,    0,                                 fields::IQH},
    {"IQT",      0x088, 8,    0,                                 fields::IQT},
    {"IQA",      0x090, 8,    0,                                 fields::IQA},
    {"ICS",      0x09c, 4,    0,                                 fields::ICS},
    {"IECTL",    0x0a0, 4,    field_mask(fields::CTL, "IM"),     fields::CTL},
    {"IEDATA",   0x0a4, 4,    0,                                 fields::DATA32},
    {"IEADDR",   0x0a8, 4,    0,                                 fields::ADDR},
    {"IEUADDR",  0x0ac, 4,    0,                                 fields::DATA32},
    {"IRTA",     0x0b8, 8,    0,                                 fields::IRTA},
    {"IVA",      0x200, 8,    0,                                 fields::IVA},
    {"IOTLB",    0x208, 8,    0,                                 fields::IOTLB},
    {"FRCD_LO",  0x220, 8,    0,                                 fields::FRCD_LO, kFaultRecords, 16},
    {"FRCD_HI",  0x228, 8,    0,                                 fields::FRCD_HI, kFaultRecords, 16},
};
// clang-format on
inline constexpr unsigned kRegCount = reg_count(kRegisters);

// Register `name`'s index in the unit's bank, and its offset (element i of an array).
consteval unsigned reg(std::string_view name, unsigned i = 0)
{
    return reg_index(kRegisters, name, i);
}
consteval uint32_t offset(std::string_view name, unsigned i = 0)
{
    return reg_offset(kRegisters, name, i);
}

// CAP.SAGAW (10.4.2): the table depths the unit walks.
inline constexpr uint64_t SAGAW_39 = 1u << 1; // 3-level tables
inline constexpr uint64_t SAGAW_48 = 1u << 2; // 4-level tables
// CAP.SLLPS: large pages.
inline constexpr uint64_t SLLPS_2M = 1u << 0;
inline constexpr uint64_t SLLPS_1G = 1u << 1;
inline constexpr unsigned kMamv = 18; // page-selective invalidation of up to 2^18 pages (1 GiB)
// ECAP.MHMV (10.4.3): index-selective interrupt entry cache invalidation of up to 2^15 entries.
inline constexpr unsigned kMhmv = 15;

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

// RTADDR (10.4.6). TTM 0 is legacy mode, 1 scalable mode (with ECAP.SMTS); 2 and 3 are
// reserved.
inline constexpr Field RTADDR_RTA = field(fields::RTADDR, "RTA");
inline constexpr Field RTADDR_TTM = field(fields::RTADDR, "TTM");

// CCMD (10.4.7) and IOTLB / IVA (10.4.8).
inline constexpr uint64_t CCMD_ICC = field_mask(fields::CCMD, "ICC");
inline constexpr uint64_t IOTLB_IVT = field_mask(fields::IOTLB, "IVT");
inline constexpr Field IVA_ADDR = field(fields::IVA, "ADDR");
inline constexpr Field IVA_AM = field(fields::IVA, "AM");

// Invalidation granularities, as CIRG/IIRG and the descriptors' G fields encode them.
enum class Gran : uint8_t { Reserved = 0, Global = 1, Domain = 2, Selective = 3 };

// FSTS (10.4.9).
inline constexpr uint32_t FSTS_PFO = field_mask(fields::FSTS, "PFO");
inline constexpr uint32_t FSTS_PPF = field_mask(fields::FSTS, "PPF");
inline constexpr uint32_t FSTS_IQE = field_mask(fields::FSTS, "IQE");
inline constexpr uint32_t FSTS_ICE = field_mask(fields::FSTS, "ICE");
inline constexpr uint32_t FSTS_ITE = field_mask(fields::FSTS, "ITE");
inline constexpr Field FSTS_FRI = field(fields::FSTS, "FRI");

// FECTL / IECTL (10.4.10, 10.4.25): interrupt mask and pending.
inline constexpr uint32_t CTL_IM = field_mask(fields::CTL, "IM");
inline constexpr uint32_t CTL_IP = field_mask(fields::CTL, "IP");

// ICS (10.4.24).
inline constexpr uint32_t ICS_IWC = field_mask(fields::ICS, "IWC");

// Fault recording register, upper qword (10.4.14).
inline constexpr uint64_t FRCD_F = field_mask(fields::FRCD_HI, "F");
inline constexpr uint64_t FRCD_T_READ = field_mask(fields::FRCD_HI, "T");

// Invalidation queue (10.4.22, 10.4.23): 128-bit descriptors, 256 per 4 KiB page. IQH and
// IQT hold a descriptor index in the same bits.
inline constexpr Field IQ_INDEX = field(fields::IQH, "QH");
inline constexpr Field IQA_BASE = field(fields::IQA, "IQA");
inline constexpr Field IQA_QS = field(fields::IQA, "QS");
inline constexpr uint64_t IQA_DW = field_mask(fields::IQA, "DW");

// Interrupt remapping table address (10.4.29).
inline constexpr Field IRTA_BASE = field(fields::IRTA, "IRTA");
inline constexpr Field IRTA_S = field(fields::IRTA, "S");
inline constexpr uint64_t IRTA_EIME = field_mask(fields::IRTA, "EIME");

// In-memory structures: their fields, declared once (bits outside them are reserved unless
// a comment says otherwise); entries.h decodes them. Access kinds mean nothing here: RO.

// Invalidation descriptors (6.5.2), legacy 128-bit form: each type's lower and upper qword.
// Bits 11:9 (the type's upper bits in the 256-bit form) are reserved here.
// Scalable mode adds types 6 to 8, whose type field also has bits 11:9 (type bits 6:4).
enum class DescType : uint8_t {
    Context = 0x1,
    Iotlb = 0x2,
    DevIotlb = 0x3,
    Iec = 0x4,
    Wait = 0x5,
    PasidIotlb = 0x6,
    PasidCache = 0x7,
    PasidDevIotlb = 0x8,
};
namespace qi
{
using A = FieldAccess;
inline constexpr Field TYPE = {"TYPE", 0, 4, A::RO};
inline constexpr Field TYPE_HI = {"TYPE_HI", 9, 3, A::RO}; // 256-bit form (and types 6-8)
inline constexpr Field CC_LO[] = {{"TYPE", 0, 4, A::RO},
                                  {"G", 4, 2, A::RO},
                                  {"DID", 16, 16, A::RO},
                                  {"SID", 32, 16, A::RO},
                                  {"FM", 48, 2, A::RO}}; // its upper qword is all reserved
inline constexpr Field IOTLB_LO[] = {{"TYPE", 0, 4, A::RO},
                                     {"G", 4, 2, A::RO},
                                     {"DW", 6, 1, A::RO},
                                     {"DR", 7, 1, A::RO},
                                     {"DID", 16, 16, A::RO}};
inline constexpr Field IOTLB_HI[] = {
    {"AM", 0, 6, A::RO}, {"IH", 6, 1, A::RO}, {"ADDR", 12, 52, A::RO}};
inline constexpr Field WAIT_LO[] = {{"TYPE", 0, 4, A::RO}, {"IF", 4, 1, A::RO},
                                    {"SW", 5, 1, A::RO},   {"FN", 6, 1, A::RO},
                                    {"PD", 7, 1, A::RO},   {"SDATA", 32, 32, A::RO}};
inline constexpr Field WAIT_HI[] = {{"SADDR", 2, 62, A::RO}};
// Device-TLB invalidation (6.5.2.5): the ATS invalidation the unit forwards to requester
// SID. PFSID is the physical function's source-id (bits 3:0 in 15:12, 15:4 in 63:52), MIP
// the device's invalidate-queue depth; with S the range is in ADDR's low set bits (PCIe
// ATS size encoding), without it one 4 KiB page.
inline constexpr Field DEVTLB_LO[] = {{"TYPE", 0, 4, A::RO},
                                      {"PFSID_LO", 12, 4, A::RO},
                                      {"MIP", 16, 5, A::RO},
                                      {"SID", 32, 16, A::RO},
                                      {"PFSID_HI", 52, 12, A::RO}};
inline constexpr Field DEVTLB_HI[] = {{"S", 0, 1, A::RO}, {"ADDR", 12, 52, A::RO}};
// Interrupt entry cache invalidation (6.5.2.7): G 0 is global, 1 index-selective (2^IM
// entries from IIDX); its upper qword is all reserved.
inline constexpr Field IEC_LO[] = {
    {"TYPE", 0, 4, A::RO}, {"G", 4, 1, A::RO}, {"IM", 27, 5, A::RO}, {"IIDX", 32, 16, A::RO}};
// PASID-based IOTLB invalidation (6.5.2.4): G 2 is every non-global entry of PASID in
// domain DID, G 3 the 2^AM pages from ADDR of it; 0 and 1 are reserved.
inline constexpr Field PIOTLB_LO[] = {{"TYPE", 0, 4, A::RO},
                                      {"G", 4, 2, A::RO},
                                      {"TYPE_HI", 9, 3, A::RO},
                                      {"DID", 16, 16, A::RO},
                                      {"PASID", 32, 20, A::RO}};
inline constexpr Field PIOTLB_HI[] = {
    {"AM", 0, 6, A::RO}, {"IH", 6, 1, A::RO}, {"ADDR", 12, 52, A::RO}};
// PASID-cache invalidation (6.5.2.2): G 0 is domain-selective, 1 PASID-selective, 3
// global; 2 is reserved. Its upper qword is all reserved.
inline constexpr Field PC_LO[] = {{"TYPE", 0, 4, A::RO},
                                  {"G", 4, 2, A::RO},
                                  {"TYPE_HI", 9, 3, A::RO},
                                  {"DID", 16, 16, A::RO},
                                  {"PASID", 32, 20, A::RO}};
// PASID-based device-TLB invalidation (6.5.2.6): like type 3, with the PASID; G (in the
// upper qword) names every PASID's entries, S the ATS size encoding.
inline constexpr Field PDEVTLB_LO[] = {{"TYPE", 0, 4, A::RO},      {"MIP", 4, 5, A::RO},
                                       {"TYPE_HI", 9, 3, A::RO},   {"PFSID_LO", 12, 4, A::RO},
                                       {"SID", 16, 16, A::RO},     {"PASID", 32, 20, A::RO},
                                       {"PFSID_HI", 52, 12, A::RO}};
inline constexpr Field PDEVTLB_HI[] = {
    {"G", 0, 1, A::RO}, {"S", 11, 1, A::RO}, {"ADDR", 12, 52, A::RO}};
} // namespace qi

// Root entry, legacy mode (9.1): its upper qword is all reserved.
namespace root
{
using A = FieldAccess;
inline constexpr Field LO[] = {{"P", 0, 1, A::RO}, {"CTP", 12, 52, A::RO}};
} // namespace root

// Context entry, legacy mode (9.3).
namespace ctx
{
using A = FieldAccess;
inline constexpr Field LO[] = {
    {"P", 0, 1, A::RO}, {"FPD", 1, 1, A::RO}, {"TT", 2, 2, A::RO}, {"SLPTPTR", 12, 52, A::RO}};
inline constexpr Field HI[] = {{"AW", 0, 3, A::RO}, {"AVAIL", 3, 4, A::RO}, {"DID", 8, 16, A::RO}};
} // namespace ctx
enum class TT : uint8_t { Untranslated = 0, All = 1, Passthrough = 2, Reserved = 3 };

// Scalable mode (9.2, 9.4, 9.5, 9.6): the root entry points at two context tables, one for
// devfn 0-127 (lower) and one for 128-255 (upper), of 256-bit context entries. A context
// entry points at a PASID directory of 2^(PDTS+7) 64-bit entries, each at a table of 64
// PASID entries of 512 bits. Requests without a PASID use the entry of RID_PASID.
namespace smroot
{
using A = FieldAccess;
inline constexpr Field LO[] = {{"LP", 0, 1, A::RO}, {"LCTP", 12, 52, A::RO}};
inline constexpr Field HI[] = {{"UP", 0, 1, A::RO}, {"UCTP", 12, 52, A::RO}};
} // namespace smroot
namespace smctx
{
using A = FieldAccess;
// Bits 127:85 and the upper 128 bits are reserved; RID_PRIV (84) needs ECAP.RPRIVS, which
// the unit does not advertise, so it is reserved too.
inline constexpr Field Q0[] = {{"P", 0, 1, A::RO},
                               {"FPD", 1, 1, A::RO},
                               {"DTE", 2, 1, A::RO},
                               {"PASIDE", 3, 1, A::RO},
                               {"PRE", 4, 1, A::RO},
                               {"PDTS", 9, 3, A::RO},
                               {"PASIDDIRPTR", 12, 52, A::RO}};
inline constexpr Field Q1[] = {{"RID_PASID", 0, 20, A::RO}};
} // namespace smctx
namespace pasiddir
{
using A = FieldAccess;
inline constexpr Field F[] = {{"P", 0, 1, A::RO}, {"FPD", 1, 1, A::RO}, {"PTP", 12, 52, A::RO}};
} // namespace pasiddir
// PASID table entry (9.6): the fields this unit uses or lets software set. Q0: the
// second stage; Q1: the domain and memory-type hints; Q2: the first stage. SLEE, SLADE,
// ERE, EAFE and SRE need capabilities the unit does not advertise (ECAP.ERS, SLADS, EAFS,
// SRS) and are reserved here; Q3-Q7 are for nested translation (not advertised) and must
// be 0.
namespace pasid
{
using A = FieldAccess;
inline constexpr Field Q0[] = {{"P", 0, 1, A::RO},
                               {"FPD", 1, 1, A::RO},
                               {"AW", 2, 3, A::RO},
                               {"PGTT", 6, 3, A::RO},
                               {"SLPTPTR", 12, 52, A::RO}};
// DID, then the snoop and cache hints (PWSNP 23, PGSNP 24, CD 25, EMTE 26, EMT 29:27, PWT
// 30, PCD 31, PAT 63:32), which a coherent model honours by ignoring.
inline constexpr Field Q1[] = {
    {"DID", 0, 16, A::RO}, {"PWSNP", 23, 1, A::RO}, {"PGSNP", 24, 1, A::RO},
    {"CD", 25, 1, A::RO},  {"EMTE", 26, 1, A::RO},  {"EMT", 27, 3, A::RO},
    {"PWT", 30, 1, A::RO}, {"PCD", 31, 1, A::RO},   {"PAT", 32, 32, A::RO}};
// FLPM 0: 4-level first-stage tables (5-level needs CAP.FL5LP, not advertised). WPE
// matters to supervisor requests only, which the unit never sees. NXE makes XD in the
// first-stage entries a field (Linux 6.1 sets both); without it XD is reserved.
inline constexpr Field Q2[] = {
    {"FLPM", 2, 2, A::RO}, {"WPE", 4, 1, A::RO}, {"NXE", 5, 1, A::RO}, {"FLPTR", 12, 52, A::RO}};
} // namespace pasid
// PGTT (9.6): what a PASID entry translates with.
enum class Pgtt : uint8_t { FirstStage = 1, SecondStage = 2, Nested = 3, PassThrough = 4 };

// First-stage paging entry (9.7), x86 4-level format: bit 0 present, 1 writable, 2 user, 5
// accessed, 6 dirty (leaf), 7 page size (levels 2 and 3), 63 execute-disable. Bits 11:8 and
// 62:52 are ignored (software's; G is a leaf's and ignored), as are PWT and PCD (the unit is
// coherent) and PAT (bit 12 of a large page).
namespace flpte
{
using A = FieldAccess;
inline constexpr Field F[] = {{"P", 0, 1, A::RO},      {"RW", 1, 1, A::RO}, {"US", 2, 1, A::RO},
                              {"A", 5, 1, A::RO},      {"D", 6, 1, A::RO},  {"PS", 7, 1, A::RO},
                              {"ADDR", 12, 40, A::RO}, {"XD", 63, 1, A::RO}};
} // namespace flpte

// Second-level paging entry (9.8). Bits 6:2, 10:8, 61:52 and 63 are ignored, not reserved;
// SNP needs ECAP.SC, which the unit does not advertise, and TM ECAP.DT, which it advertises
// only with device-TLB support, so they are reserved here (TM only without ECAP.DT), as are
// address bits beyond the host width.
namespace slpte
{
using A = FieldAccess;
inline constexpr Field F[] = {{"R", 0, 1, A::RO},    {"W", 1, 1, A::RO},      {"PS", 7, 1, A::RO},
                              {"SNP", 11, 1, A::RO}, {"ADDR", 12, 40, A::RO}, {"TM", 62, 1, A::RO}};
inline constexpr uint64_t kReserved = field_mask(F, "SNP") | field_mask(F, "TM");
inline constexpr uint64_t kReservedWithDt = field_mask(F, "SNP"); // TM: a hint, not checked
} // namespace slpte

// Interrupt remapping table entry, remapped format (9.10). AVAIL is software's; IM selects
// the posted format, which needs CAP.PI (not advertised: the unit treats IM as reserved).
// Without extended interrupt mode (IRTA.EIME) the destination is DST bits 15:8 and the rest
// of DST is reserved. SVT 3 and delivery modes 3 and 6 are reserved encodings.
namespace irte
{
using A = FieldAccess;
inline constexpr Field LO[] = {{"P", 0, 1, A::RO},     {"FPD", 1, 1, A::RO}, {"DM", 2, 1, A::RO},
                               {"RH", 3, 1, A::RO},    {"TM", 4, 1, A::RO},  {"DLM", 5, 3, A::RO},
                               {"AVAIL", 8, 4, A::RO}, {"IM", 15, 1, A::RO}, {"V", 16, 8, A::RO},
                               {"DST", 32, 32, A::RO}};
inline constexpr Field HI[] = {{"SID", 0, 16, A::RO}, {"SQ", 16, 2, A::RO}, {"SVT", 18, 2, A::RO}};
// DST's reserved bits in xAPIC mode (EIME clear), as bits of the lower qword.
inline constexpr uint64_t kXapicDstReserved = 0xffff00ff00000000ull;
} // namespace irte
// SVT: how an entry checks the requester (9.10).
enum class Svt : uint8_t { None = 0, Sid = 1, Bus = 2, Reserved = 3 };

// Interrupt requests (5.1.2, 5.1.5): a DWORD write to 0xFEEx_xxxx. In remappable format
// (IF set) the address carries a 16-bit handle, and with SHV the data a subhandle added to
// it; bits 1:0 are not looked at. In compatibility format (IF clear) it is the x86 message
// the platform delivers, which is also what a remapped interrupt becomes (OUT_*: the
// destination's low 8 bits in the address, as the APIC takes them).
namespace intr
{
using A = FieldAccess;
inline constexpr Field ADDR[] = {{"HANDLE15", 2, 1, A::RO},
                                 {"SHV", 3, 1, A::RO},
                                 {"IF", 4, 1, A::RO},
                                 {"HANDLE", 5, 15, A::RO},
                                 {"FEE", 20, 12, A::RO}};
inline constexpr Field DATA[] = {{"SUBHANDLE", 0, 16, A::RO}};
inline constexpr Field OUT_ADDR[] = {
    {"DM", 2, 1, A::RO}, {"RH", 3, 1, A::RO}, {"DEST", 12, 8, A::RO}, {"FEE", 20, 12, A::RO}};
inline constexpr Field OUT_DATA[] = {
    {"V", 0, 8, A::RO}, {"DLM", 8, 3, A::RO}, {"LEVEL", 14, 1, A::RO}, {"TM", 15, 1, A::RO}};
inline constexpr uint32_t kFee = 0xfee; // bits 31:20 of every interrupt request
} // namespace intr

// Fault reasons, legacy mode (7.1.3 / appendix A).
enum class FaultReason : uint8_t {
    None = 0,
    RootNotPresent = 0x1,
    ContextNotPresent = 0x2,
    ContextInvalid = 0x3,  // invalid programming of a context entry (AW, TT)
    AddressBeyondAw = 0x4, // input address above the domain's address width
    Write = 0x5,           // write to a page without write permission
    Read = 0x6,            // read of a page without read permission
    PageTable = 0x7,       // a paging entry could not be read
    RootTable = 0x8,       // the root table could not be read
    ContextTable = 0x9,    // a context table could not be read
    RootReserved = 0xa,
    ContextReserved = 0xb,
    PageReserved = 0xc,
    // Interrupt remapping (5.1.4.1). 22h, 24h, 26h and 27h are qualified by the entry's
    // FPD; the others are always recorded.
    IrRequestReserved = 0x20, // reserved bits set in the interrupt request
    IrIndexBeyond = 0x21,     // the index is beyond the table's size (IRTA.S)
    IrNotPresent = 0x22,      // the entry's P is clear
    IrTableError = 0x23,      // the entry could not be read (or no table was set)
    IrEntryReserved = 0x24,   // reserved bits or encodings in the entry
    IrCompatBlocked = 0x25,   // compatibility format while EIME is set or CFIS clear
    IrSourceId = 0x26,        // the requester failed the entry's SID, SQ, SVT check
    IrPostedError = 0x27,     // a posted-interrupt descriptor access failed (never: no PI)
};
// Scalable mode (7.1.3, table 31): the reasons of the structures and walks of scalable
// mode. Requests without a PASID are user requests (no RID_PRIV).
enum class SmFault : uint8_t {
    RootTableAddress = 0x30, // RTADDR unusable
    LegacyPasid = 0x31,      // a request with a PASID under a legacy root table (TTM 00)
    RootAccess = 0x38,
    RootNotPresent = 0x39,
    RootReserved = 0x3a,
    ContextAccess = 0x40,
    ContextNotPresent = 0x41,
    ContextReserved = 0x42,
    ContextInvalid = 0x43,
    PasidDisabled = 0x45, // a request with a PASID, the context entry's PASIDE clear
    RidPasid = 0x48,      // RID_PASID beyond the PASID directory
    DirAccess = 0x50,
    DirNotPresent = 0x51,
    DirReserved = 0x52,
    PasidAccess = 0x58,
    PasidNotPresent = 0x59,
    PasidReserved = 0x5a,
    PasidInvalid = 0x5b, // PGTT, AW or FLPM the unit does not offer
    FsAccess = 0x70,
    FsNotPresent = 0x71,
    FsReserved = 0x72,
    FsPointer = 0x73, // FLPTR beyond the host address width
    SsAccess = 0x78,
    SsReserved = 0x7a,
    SsPointer = 0x7b, // SLPTPTR beyond the host address width
    NonCanonical = 0x80,
    UserSupervisor = 0x81, // a user request met an entry with U/S clear
    AddressBeyondAw = 0x83,
    Write = 0x85,
    Read = 0x86,
};
constexpr FaultReason sm(SmFault f)
{
    return static_cast<FaultReason>(f);
}

// True for an interrupt remapping reason.
constexpr bool is_interrupt_fault(FaultReason r)
{
    return static_cast<uint8_t>(r) >= 0x20 && static_cast<uint8_t>(r) <= 0x27;
}

} // namespace dmalab::vtd
