// SPDX-License-Identifier: GPL-2.0-or-later
// Intel DSA 1.0 work descriptor (64 bytes) and completion record (32 bytes) as they sit in
// memory (DSA spec, chapter "Descriptor Formats"): opcodes, flags, each operation's fields,
// completion status codes and OPCAP's bit per opcode. Pure data.
#pragma once

#include <cstdint>
#include <span>

#include "dmalab/regbank.h"

namespace dmalab::dsa
{

// Both structures are read and written as little-endian quadwords: a field at bit b of
// quadword w starts at byte 8 * w + b / 8. A descriptor arrives whole, in one 64-byte
// portal write; a batch's descriptor list is 64-byte aligned (else status DescListAlign).
// The completion record must be 32-byte aligned (else CompletionRecordAlign).
inline constexpr unsigned kDescriptorSize = 64;
inline constexpr unsigned kDescriptorWords = kDescriptorSize / 8;
inline constexpr uint64_t kDescListAlign = 64;
inline constexpr unsigned kCompletionRecordSize = 32;
inline constexpr unsigned kCompletionRecordWords = kCompletionRecordSize / 8;
inline constexpr uint64_t kCompletionRecordAlign = 32;

struct RawDescriptor {
    uint64_t word[kDescriptorWords];
};
static_assert(sizeof(RawDescriptor) == kDescriptorSize);
struct RawCompletionRecord {
    uint64_t word[kCompletionRecordWords];
};
static_assert(sizeof(RawCompletionRecord) == kCompletionRecordSize);

// Operation codes (descriptor bits 63:56 of quadword 0). OPCAP has bit n for opcode n.
enum class Opcode : uint8_t {
    Noop = 0x00,
    Batch = 0x01,
    Drain = 0x02,
    Memmove = 0x03,
    Fill = 0x04,
    Compare = 0x05,
    ComparePattern = 0x06,
    CreateDelta = 0x07,
    ApplyDelta = 0x08,
    Dualcast = 0x09,
    CrcGen = 0x10,
    CopyCrc = 0x11,
    DifCheck = 0x12,
    DifInsert = 0x13,
    DifStrip = 0x14,
    DifUpdate = 0x15,
    CacheFlush = 0x20,
};
// Where opcode `op`'s bit sits in OPCAP: quadword opcap_word(op) (OPCAP register element),
// bit opcap_bit(op).
constexpr unsigned opcap_word(Opcode op)
{
    return static_cast<uint8_t>(op) / 64;
}
constexpr uint64_t opcap_bit(Opcode op)
{
    return 1ull << (static_cast<uint8_t>(op) % 64);
}

// Descriptor flags: bits of the 24-bit FLAGS field (quadword 0, bits 55:32). CRAV says the
// completion record address is valid; with it, the record is written on an error, and on
// success too with RCR. RCI asks for an interrupt through INT_HANDLE. CR compares the
// operation's result with the descriptor's expected result (success with false predicate on
// a mismatch). CC needs GENCAP.CACHE_CTRL_MEM (for cache flush: CACHE_CTRL_CACHE). The TC
// selectors pick the group's TC_A (0) or TC_B (1) per address. DRDBK needs
// GENCAP.DEST_READBACK. Bits 5 and 15 are DSA 2.0's (CRSTS, DSTS), 16-23 operation-specific:
// all reserved for DSA 1.0's operations.
namespace flag
{
using A = FieldAccess;
// clang-format off
inline constexpr Field FLAGS[] = {
    {"FENCE", 0, 1, A::RO},      {"BOF", 1, 1, A::RO},        {"CRAV", 2, 1, A::RO},
    {"RCR", 3, 1, A::RO},        {"RCI", 4, 1, A::RO},        {"CR", 7, 1, A::RO},
    {"CC", 8, 1, A::RO},         {"ADDR1_TCS", 9, 1, A::RO},  {"ADDR2_TCS", 10, 1, A::RO},
    {"ADDR3_TCS", 11, 1, A::RO}, {"CR_TCS", 12, 1, A::RO},    {"STORD", 13, 1, A::RO},
    {"DRDBK", 14, 1, A::RO}};
// clang-format on
inline constexpr uint32_t FENCE = field_mask(FLAGS, "FENCE");
inline constexpr uint32_t BOF = field_mask(FLAGS, "BOF");
inline constexpr uint32_t CRAV = field_mask(FLAGS, "CRAV");
inline constexpr uint32_t RCR = field_mask(FLAGS, "RCR");
inline constexpr uint32_t RCI = field_mask(FLAGS, "RCI");
inline constexpr uint32_t CR = field_mask(FLAGS, "CR");
inline constexpr uint32_t CC = field_mask(FLAGS, "CC");
inline constexpr uint32_t ADDR1_TCS = field_mask(FLAGS, "ADDR1_TCS");
inline constexpr uint32_t ADDR2_TCS = field_mask(FLAGS, "ADDR2_TCS");
inline constexpr uint32_t ADDR3_TCS = field_mask(FLAGS, "ADDR3_TCS");
inline constexpr uint32_t CR_TCS = field_mask(FLAGS, "CR_TCS");
inline constexpr uint32_t STORD = field_mask(FLAGS, "STORD");
inline constexpr uint32_t DRDBK = field_mask(FLAGS, "DRDBK");
inline constexpr uint32_t kDefined = static_cast<uint32_t>(defined_bits(FLAGS));
} // namespace flag

// The DIF operations' flag bytes bit by bit (DSA spec, "DIF Operations"): Linux's
// dsa_hw_desc names the bytes (src_dif_flags, dest_dif_flags, dif_flags at bytes 40-42),
// Intel's DML their bits (DML_DIF_FLAG_*, DML_DIF_CHECK_*). A protected block is followed by
// an 8-byte tuple: the guard (the block's CRC-16 T10-DIF), the application tag and the
// reference tag, each big-endian.
namespace dif
{
using A = FieldAccess;
// clang-format off
// DIF_FLAGS: the block size (kBlockSizes) and the guard's seed (0, or 0xFFFF) and result
// inverted. Bits 7:4 are reserved.
inline constexpr Field FLAGS[] = {
    {"BLOCK_SIZE", 0, 2, A::RO}, {"INVERT_CRC_SEED", 2, 1, A::RO},
    {"INVERT_CRC_RESULT", 3, 1, A::RO}};
// SRC_DIF_FLAGS: how the source's tuples are checked. The reference tag counts blocks from
// its seed unless fixed, the application tag counts them when incrementing. A block whose
// application tag is all ones (APP_TAG_F_DETECT), or whose application and reference tags
// both are (APP_REF_TAG_F_DETECT), or whose whole tuple is (ALL_F_DETECT), is not checked;
// with ENABLE_ALL_F_ERROR the last is a DIF error instead.
inline constexpr Field SRC_FLAGS[] = {
    {"ENABLE_ALL_F_ERROR", 0, 1, A::RO},    {"ALL_F_DETECT", 1, 1, A::RO},
    {"APP_TAG_F_DETECT", 2, 1, A::RO},      {"APP_REF_TAG_F_DETECT", 3, 1, A::RO},
    {"APP_TAG_INCREMENT", 4, 1, A::RO},     {"GUARD_CHECK_DISABLE", 5, 1, A::RO},
    {"REF_TAG_CHECK_DISABLE", 6, 1, A::RO}, {"REF_TAG_FIXED", 7, 1, A::RO}};
// DEST_DIF_FLAGS: how the destination's tuples are made; a pass-through bit (DIF Update)
// copies that field of the source's tuple instead. Bits 2:0 are reserved.
inline constexpr Field DEST_FLAGS[] = {
    {"APP_TAG_PASS", 3, 1, A::RO}, {"APP_TAG_INCREMENT", 4, 1, A::RO},
    {"GUARD_PASS", 5, 1, A::RO},   {"REF_TAG_PASS", 6, 1, A::RO},
    {"REF_TAG_FIXED", 7, 1, A::RO}};
// The completion record's RESULT (dif_status) with status DifError: every check the block
// failed.
inline constexpr Field RESULT[] = {
    {"GUARD_MISMATCH", 0, 1, A::RO}, {"APP_TAG_MISMATCH", 1, 1, A::RO},
    {"REF_TAG_MISMATCH", 2, 1, A::RO}, {"ALL_F_ERROR", 3, 1, A::RO}};
// clang-format on
inline constexpr uint32_t kBlockSizes[] = {512, 520, 4096, 4104};
inline constexpr unsigned kTupleSize = 8;
// CRC-16 T10-DIF: x^16 + x^15 + x^11 + x^9 + x^8 + x^7 + x^5 + x^4 + x^2 + x + 1, most
// significant bit first (Linux's crc_t10dif).
inline constexpr uint16_t kGuardPolynomial = 0x8bb7;
} // namespace dif

// Descriptor quadwords, as field tables. Quadwords 0 and 1 are common to every operation;
// quadword 4 holds the transfer size (a batch: the descriptor count) and the completion
// interrupt handle (an MSI-X index unless CMDCAP offers interrupt handles); bytes 38-39 are
// reserved. The other tables are what operations put in quadwords 2, 3 and 5-7.
namespace dw
{
using A = FieldAccess;
// clang-format off
// PASID and PRIV (the descriptor's privilege) count for shared WQs; a dedicated WQ takes
// them from WQCFG.
inline constexpr Field W0[] = {
    {"PASID", 0, 20, A::RO}, {"PRIV", 31, 1, A::RO}, {"FLAGS", 32, 24, A::RO},
    {"OPCODE", 56, 8, A::RO}};
inline constexpr Field COMPLETION[] = {{"COMPLETION_ADDR", 0, 64, A::RO}};
inline constexpr Field SIZE_IH[] = {{"XFER_SIZE", 0, 32, A::RO}, {"INT_HANDLE", 32, 16, A::RO}};
inline constexpr Field COUNT_IH[] = {{"DESC_COUNT", 0, 32, A::RO}, {"INT_HANDLE", 32, 16, A::RO}};
inline constexpr Field IH[] = {{"INT_HANDLE", 32, 16, A::RO}};
// Addresses and patterns, one quadword each.
inline constexpr Field SRC[] = {{"SRC_ADDR", 0, 64, A::RO}};
inline constexpr Field SRC2[] = {{"SRC2_ADDR", 0, 64, A::RO}};
inline constexpr Field DST[] = {{"DST_ADDR", 0, 64, A::RO}};
inline constexpr Field DST2[] = {{"DST2_ADDR", 0, 64, A::RO}};
inline constexpr Field PATTERN[] = {{"PATTERN", 0, 64, A::RO}};
inline constexpr Field DESC_LIST[] = {{"DESC_LIST_ADDR", 0, 64, A::RO}};
inline constexpr Field READBACK1[] = {{"READBACK_ADDR1", 0, 64, A::RO}};
inline constexpr Field READBACK2[] = {{"READBACK_ADDR2", 0, 64, A::RO}};
inline constexpr Field DELTA_REC[] = {{"DELTA_REC_ADDR", 0, 64, A::RO}};
// Operation-specific quadwords 5-7 (bytes 40-63).
inline constexpr Field EXPECTED[] = {{"EXPECTED_RESULT", 0, 8, A::RO}};
inline constexpr Field MAX_DELTA[] = {{"MAX_DELTA_REC_SIZE", 0, 32, A::RO}};
inline constexpr Field EXPECTED_MASK[] = {{"EXPECTED_RESULT_MASK", 0, 8, A::RO}};
inline constexpr Field DELTA_SIZE[] = {{"DELTA_REC_SIZE", 0, 32, A::RO}};
inline constexpr Field CRC_SEED[] = {{"CRC_SEED", 0, 32, A::RO}};
// DIF operations: the flag bytes, each as wide as the bits dif:: below defines (the rest of
// the byte is reserved), then the tag seeds of the source (checked) and destination
// (written) protection information.
inline constexpr Field DIF_CHECK_FLAGS[] = {
    {"SRC_DIF_FLAGS", 0, 8, A::RO}, {"DIF_FLAGS", 16, 4, A::RO}};
inline constexpr Field DIF_INSERT_FLAGS[] = {
    {"DEST_DIF_FLAGS", 11, 5, A::RO}, {"DIF_FLAGS", 16, 4, A::RO}};
inline constexpr Field DIF_UPDATE_FLAGS[] = {
    {"SRC_DIF_FLAGS", 0, 8, A::RO}, {"DEST_DIF_FLAGS", 11, 5, A::RO}, {"DIF_FLAGS", 16, 4, A::RO}};
inline constexpr Field DIF_SRC_TAGS[] = {
    {"SRC_REF_TAG_SEED", 0, 32, A::RO}, {"SRC_APP_TAG_MASK", 32, 16, A::RO},
    {"SRC_APP_TAG_SEED", 48, 16, A::RO}};
inline constexpr Field DIF_DEST_TAGS[] = {
    {"DEST_REF_TAG_SEED", 0, 32, A::RO}, {"DEST_APP_TAG_MASK", 32, 16, A::RO},
    {"DEST_APP_TAG_SEED", 48, 16, A::RO}};
// clang-format on
// Each flag byte's field covers exactly the bits its dif:: table defines, in every layout.
static_assert(field_mask(DIF_CHECK_FLAGS, "SRC_DIF_FLAGS") == defined_bits(dif::SRC_FLAGS));
static_assert(field_mask(DIF_UPDATE_FLAGS, "SRC_DIF_FLAGS") == defined_bits(dif::SRC_FLAGS));
static_assert(field_mask(DIF_INSERT_FLAGS, "DEST_DIF_FLAGS") == defined_bits(dif::DEST_FLAGS) << 8);
static_assert(field_mask(DIF_UPDATE_FLAGS, "DEST_DIF_FLAGS") == defined_bits(dif::DEST_FLAGS) << 8);
static_assert(field_mask(DIF_CHECK_FLAGS, "DIF_FLAGS") == defined_bits(dif::FLAGS) << 16);
static_assert(field_mask(DIF_INSERT_FLAGS, "DIF_FLAGS") == defined_bits(dif::FLAGS) << 16);
static_assert(field_mask(DIF_UPDATE_FLAGS, "DIF_FLAGS") == defined_bits(dif::FLAGS) << 16);
} // namespace dw

// One row per operation: its opcode, the spec's name for it, and the fields each of the
// eight quadwords holds for it. Bits no field covers are reserved for that operation.
struct OpLayout {
    Opcode op;
    const char* name;
    std::span<const Field> word[kDescriptorWords];
};

// Every row has dw::W0 and dw::COMPLETION in quadwords 0 and 1.
// clang-format off
inline constexpr OpLayout kOps[] = {
    {Opcode::Noop, "No-op",
     {dw::W0, dw::COMPLETION, {}, {}, dw::IH, {}, {}, {}}},
    {Opcode::Batch, "Batch",
     {dw::W0, dw::COMPLETION, dw::DESC_LIST, {}, dw::COUNT_IH, {}, {}, {}}},
    {Opcode::Drain, "Drain",
     {dw::W0, dw::COMPLETION, dw::READBACK1, dw::READBACK2, dw::IH, {}, {}, {}}},
    {Opcode::Memmove, "Memory Move",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH, {}, {}, {}}},
    {Opcode::Fill, "Fill",
     {dw::W0, dw::COMPLETION, dw::PATTERN, dw::DST, dw::SIZE_IH, {}, {}, {}}},
    {Opcode::Compare, "Compare",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::SRC2, dw::SIZE_IH, dw::EXPECTED, {}, {}}},
    {Opcode::ComparePattern, "Compare Pattern",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::PATTERN, dw::SIZE_IH, dw::EXPECTED, {}, {}}},
    {Opcode::CreateDelta, "Create Delta Record",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::SRC2, dw::SIZE_IH,
      dw::DELTA_REC, dw::MAX_DELTA, dw::EXPECTED_MASK}},
    {Opcode::ApplyDelta, "Apply Delta Record",
     {dw::W0, dw::COMPLETION, dw::DELTA_REC, dw::DST, dw::SIZE_IH, dw::DELTA_SIZE, {}, {}}},
    {Opcode::Dualcast, "Memory Copy with Dualcast",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH, dw::DST2, {}, {}}},
    {Opcode::CrcGen, "CRC Generation",
     {dw::W0, dw::COMPLETION, dw::SRC, {}, dw::SIZE_IH, dw::CRC_SEED, {}, {}}},
    {Opcode::CopyCrc, "Copy with CRC Generation",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH, dw::CRC_SEED, {}, {}}},
    {Opcode::DifCheck, "DIF Check",
     {dw::W0, dw::COMPLETION, dw::SRC, {}, dw::SIZE_IH, dw::DIF_CHECK_FLAGS, dw::DIF_SRC_TAGS, {}}},
    {Opcode::DifInsert, "DIF Insert",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH,
      dw::DIF_INSERT_FLAGS, {}, dw::DIF_DEST_TAGS}},
    {Opcode::DifStrip, "DIF Strip",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH,
      dw::DIF_CHECK_FLAGS, dw::DIF_SRC_TAGS, {}}},
    {Opcode::DifUpdate, "DIF Update",
     {dw::W0, dw::COMPLETION, dw::SRC, dw::DST, dw::SIZE_IH,
      dw::DIF_UPDATE_FLAGS, dw::DIF_SRC_TAGS, dw::DIF_DEST_TAGS}},
    {Opcode::CacheFlush, "Cache Flush",
     {dw::W0, dw::COMPLETION, {}, dw::DST, dw::SIZE_IH, {}, {}, {}}},
};
// clang-format on
inline constexpr unsigned kOpCount = sizeof(kOps) / sizeof(kOps[0]);

// The row of opcode `op`; an opcode no row has does not compile.
consteval const OpLayout& op_layout(Opcode op)
{
    for (const OpLayout& row : kOps)
        if (row.op == op)
            return row;
    detail::no_such_field();
}

// OPCAP's quadword `word` for a device that offers every DSA 1.0 operation.
consteval uint64_t opcap_all(unsigned word)
{
    uint64_t bits = 0;
    for (const OpLayout& row : kOps)
        if (opcap_word(row.op) == word)
            bits |= opcap_bit(row.op);
    return bits;
}

// The layouts are well formed: rows in opcode order without repeats, and within each
// quadword the fields fit and do not overlap.
consteval bool well_formed_ops()
{
    for (unsigned i = 0; i < kOpCount; i++) {
        if (i > 0 && static_cast<uint8_t>(kOps[i - 1].op) >= static_cast<uint8_t>(kOps[i].op))
            return false;
        for (const std::span<const Field>& fields : kOps[i].word) {
            uint64_t seen = 0;
            for (const Field& f : fields) {
                if (f.width == 0 || f.lsb + f.width > 64 || (seen & f.mask()))
                    return false;
                seen |= f.mask();
            }
        }
    }
    return true;
}
static_assert(well_formed_ops());

// Completion record quadwords. STATUS 0 means not yet written: software clears it before
// submitting and polls it. BYTES_COMPLETED counts descriptors for a batch. FAULT_ADDR is the
// address a page fault stopped at. Quadwords 2-3 are operation-specific: INVALID_FLAGS
// (status InvalidFlags: the offending flag bits), DELTA_REC_SIZE (Create Delta Record),
// CRC_VAL (CRC operations), a DIF operation's tags for its next block, where it stopped or
// past its last (the source's in quadword 2, the destination's in 3; RESULT is then its
// dif_status). Byte 2 (DSA 2.0's fault info) and byte 3 are reserved.
namespace cr
{
using A = FieldAccess;
// clang-format off
inline constexpr Field W0[] = {
    {"STATUS", 0, 8, A::RO}, {"RESULT", 8, 8, A::RO}, {"BYTES_COMPLETED", 32, 32, A::RO}};
inline constexpr Field W1[] = {{"FAULT_ADDR", 0, 64, A::RO}};
inline constexpr Field INVALID_FLAGS[] = {{"INVALID_FLAGS", 0, 24, A::RO}};
inline constexpr Field DELTA_REC_SIZE[] = {{"DELTA_REC_SIZE", 0, 32, A::RO}};
inline constexpr Field CRC_VAL[] = {{"CRC_VAL", 0, 32, A::RO}};
inline constexpr Field DIF_TAGS[] = {
    {"REF_TAG", 0, 32, A::RO}, {"APP_TAG_MASK", 32, 16, A::RO}, {"APP_TAG", 48, 16, A::RO}};
// The STATUS byte: a Status code, and for page faults whether the access was a write.
inline constexpr Field STATUS[] = {{"CODE", 0, 7, A::RO}, {"FAULT_WRITE", 7, 1, A::RO}};
// clang-format on
inline constexpr uint8_t STATUS_CODE_MASK = field_mask(STATUS, "CODE");
inline constexpr uint8_t STATUS_FAULT_WRITE = field_mask(STATUS, "FAULT_WRITE");
} // namespace cr

// Completion status codes (STATUS.CODE). Below 0x10 the operation ran, wholly, partly (a
// fault) or to a data verdict; from 0x10 it was refused for its descriptor, or failed on the
// way. These are every code Linux's uapi lists up to DSA 2.0, which adds 0x26 and 0x27.
enum class Status : uint8_t {
    None = 0x00, // not yet complete
    Success = 0x01,
    SuccessFalsePredicate = 0x02, // CR set and the result differed from the expected one
    PageFaultNoBof = 0x03,        // partial: a page fault without BOF; see BYTES_COMPLETED
    PageFaultIr = 0x04,           // partial: the page request was answered Invalid Request
    BatchFail = 0x05,             // a descriptor of the batch did not succeed
    BatchPageFault = 0x06,        // partial: a fault reading the batch's descriptor list
    DeltaOffsetOrder = 0x07,      // Apply Delta: offsets not in increasing order
    DeltaOffsetRange = 0x08,      // Apply Delta: an offset beyond the transfer size
    DifError = 0x09,
    UnsupportedOpcode = 0x10,
    InvalidFlags = 0x11, // INVALID_FLAGS in the record says which
    NonzeroReserved = 0x12,
    XferSizeRange = 0x13, // above the WQ's 2^MAX_XFER_SHIFT
    DescCountRange = 0x14,
    DeltaSizeRange = 0x15,
    OverlappingBuffers = 0x16,
    DualcastAlign = 0x17, // the two destinations differ in bits 11:0
    DescListAlign = 0x18,
    InvalidIntHandle = 0x19,
    CompletionRecordFault = 0x1a, // the completion record address could not be translated
    CompletionRecordAlign = 0x1b,
    AddressAlign = 0x1c,
    PrivilegeDenied = 0x1d,
    TrafficClassConfig = 0x1e,
    ReadbackFault = 0x1f, // Drain: a readback address could not be translated
    HwError = 0x20,
    HwErrorReadback = 0x21,
    TranslationFailed = 0x22,
    // Not a completion status: what SWERR.ERROR reports for a descriptor dropped because
    // its dedicated WQ was full. 53h is the code DSA 3.0's specification gives; DSA 1.0's
    // own value is not public, and idxd only logs it (idxd_misc_thread).
    DedicatedWqFull = 0x53,
};

} // namespace dmalab::dsa
