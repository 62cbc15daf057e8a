// SPDX-License-Identifier: GPL-2.0-or-later
// The data engines besides copy (copy.h): fill, XOR and PQ, and the validating forms that
// compare instead of writing. Each processes a stretch of an operation's block in pieces
// that stay inside one page of every range it touches, translating each piece when it moves,
// so a range that turns unreachable midway fails there.
#pragma once

#include <cstdint>
#include <functional>

#include "dmalab/copy.h"
#include "dmalab/dma_memory.h"
#include "operation.h"

namespace dmalab::ioat
{

struct BlockResult {
    uint64_t bytes = 0; // processed, from the start of the stretch, before any failure
    CopyResult::Side failed = CopyResult::None;
    DmaResult error;      // what failed, with failed != None
    bool stopped = false; // `alive` turned false: the caller's state changed under it
    uint8_t mismatch = 0; // validating forms: kMismatchP, kMismatchQ found in the stretch
};
inline constexpr uint8_t kMismatchP = 1;
inline constexpr uint8_t kMismatchQ = 2;

// One channel's engine: its scratch buffers are its own, so nothing is shared between
// channels (a channel's DMA may reach another channel's registers and start its step).
class Engine
{
  public:
    static constexpr uint64_t kPiece = 4096;

    // Processes bytes [offset, offset + len) of `op`'s block. `alive` is asked after every
    // host call; when it answers false the engine stops at once. The caller has checked the
    // operation (range_error) and that offset + len stays within its size.
    BlockResult run(DmaMemory& mem, const MemAttrs& attrs, const Operation& op, uint64_t offset,
                    uint64_t len, const std::function<bool()>& alive);

  private:
    struct Piece;
    bool fill_piece(Piece& p);
    bool combine_piece(Piece& p);
    bool load(Piece& p, uint64_t addr, const std::function<void(const uint8_t*)>& use);
    bool store(Piece& p, uint64_t addr, const uint8_t* data);

    uint8_t p_[kPiece];
    uint8_t q_[kPiece];
    uint8_t bounce_[kPiece];
};

} // namespace dmalab::ioat
