// SPDX-License-Identifier: GPL-2.0-or-later
// The data path's unit of work: a descriptor as the device holds it from the portal write
// that submitted it to its completion record, and the one table of operations (opcode, the
// flags it takes, whether a batch may hold it, its executor). ops.cc has the table and the
// descriptor checks; execute.cc the executors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "dmalab/copy.h"
#include "dmalab/dma_memory.h"
#include "dmalab/dsa/spec/descriptor.h"
#include "dmalab/pacing.h"

namespace dmalab::dsa
{

// One descriptor: what arrived, where it came from, and how far it got.
struct Work {
    RawDescriptor d{};
    uint8_t wq = 0;
    uint64_t seq = 0; // its WQ's submission number (a batch's descriptors share the batch's)
    bool in_batch = false;
    uint16_t batch_index = 0;

    // Progress. `done` counts bytes of the transfer processed (Compare: bytes found equal).
    uint64_t done = 0;
    bool started = false; // checked, paced
    bool data_done = false;
    Pacer::Pace pace{};
    Status status = Status::None;
    uint8_t result = 0;
    bool fault_write = false;
    uint64_t fault_addr = 0;
    uint64_t word2 = 0;       // the record's operation-specific quadword: CRC, delta size, flags
    uint32_t crc = 0;         // running CRC (CRC operations)
    uint32_t delta = 0;       // Create Delta: record bytes written; Apply Delta: record bytes read
    uint32_t next_offset = 0; // Apply Delta: the lowest quadword offset the next entry may name

    // What a fault plan decided for it when it started (faults.cc).
    struct Injected {
        static constexpr uint32_t kNoRelease = ~0u;
        uint32_t release_rule = kNoRelease; // the rule whose release ends its holds early
        uint64_t held_data_ns = 0, held_done_ns = 0;
        uint64_t move_limit = UINT64_MAX; // "shorten": it processes this much, then succeeds
        uint8_t corrupt_xor = 0;          // "corrupt": its destination's last byte is xored
        bool drop_interrupt = false;
    } injected;

    Opcode op() const { return static_cast<Opcode>(d.word[0] >> 56); }
    uint32_t flags() const { return static_cast<uint32_t>(d.word[0] >> 32) & 0xffffff; }
    uint64_t completion() const { return d.word[1]; }
    uint32_t size() const { return static_cast<uint32_t>(d.word[4]); }
    uint16_t int_handle() const { return static_cast<uint16_t>(d.word[4] >> 32); }
    uint64_t word(unsigned i) const { return d.word[i]; }
};

// What the checks need to know of the device and the WQ.
struct Limits {
    uint64_t opcap = 0;
    uint8_t max_xfer_shift = 0, max_batch_shift = 0;
    bool block_on_fault = false; // WQCFG.BOF: the descriptor may set BOF
    bool overlap_copy = false;   // GENCAP.OVERLAP_COPY
    bool cache_control = false;  // GENCAP.CACHE_CTRL_MEM (CC on writes)
    bool cache_flush_cc = false; // GENCAP.CACHE_CTRL_CACHE (CC on Cache Flush)
    // RCI is allowed: GENCFG.USER_INT_EN, or the WQ has no PASID, or its work is privileged.
    bool user_interrupts = true;
};

// Where an executor runs: guest memory as the WQ's requester, a scratch area, and the
// liveness question it asks after every host call (false: the engine was reset or its
// work aborted under it, and it must stop at once).
struct Exec {
    DmaMemory& mem;
    MemAttrs attrs;
    const std::function<bool()>& alive;
    bool overlap_copy;
    static constexpr uint64_t kPiece = 4096;
    uint8_t* a; // two scratch pieces of kPiece bytes
    uint8_t* b;
};

// What one stretch of an executor did: false when it stopped (alive() turned false).
// Otherwise `w` has moved on: w.done, and w.status once the operation ended early (a
// fault, a verdict) or on its last byte.
using Executor = bool (*)(Exec& x, Work& w, uint64_t len);

struct OpRow {
    Opcode op;
    uint32_t flags;        // the operation-specific FLAGS bits it takes (flag::CR, ...)
    bool moves;            // XFER_SIZE counts bytes it processes (0 and too large are refused)
    bool batchable;        // a batch may hold it
    unsigned streams;      // guest ranges it touches per byte: its cost against a step's budget
    Executor exec;         // nullptr: no data phase
    const char* plan_name; // its "op" in fault plans; nullptr: it takes no faults
};

// The row of `op`, or nullptr for an opcode DSA 1.0 does not define.
const OpRow* op_row(Opcode op);
std::span<const OpRow> op_rows();
// Every opcode with a row, as OPCAP offers them.
uint64_t implemented_ops();

// The checks a descriptor passes before it runs, in the order the model makes them: the
// opcode (offered, allowed where it stands), its flags, the reserved bits of its layout, its
// size or count, the completion record's alignment, the interrupt handle (`vector_of`
// answers), the addresses' alignment and overlap. Status::None when it may run; with
// InvalidFlags, `bad_flags` says which.
Status check(const Work& w, const Limits& l,
             const std::function<std::optional<unsigned>(uint16_t)>& vector_of,
             uint32_t& bad_flags);

// The CRC operations' polynomial: CRC-32C (Castagnoli), bit-reflected, on the state as
// given (the operations invert it in and out). With the host's CRC32 instruction where it
// has one (SSE4.2), else crc32c_bytewise(), a table a byte at a time: both give the same.
uint32_t crc32c(uint32_t crc, const uint8_t* p, size_t n);
uint32_t crc32c_bytewise(uint32_t crc, const uint8_t* p, size_t n);

} // namespace dmalab::dsa
