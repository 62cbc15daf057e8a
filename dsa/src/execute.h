// SPDX-License-Identifier: GPL-2.0-or-later
// The executors of the operations that move data (ops.cc names them in its table). Each
// processes the next `len` bytes of its descriptor's transfer (Apply Delta: of its delta
// record) in pieces that stay inside one page of every range they touch, translating each
// piece when it moves, so a range that turns unreachable midway fails there.
#pragma once

#include <array>

#include "work.h"

namespace dmalab::dsa::exec
{

// Before the first byte: what an operation starts from (the CRC seed, a descending copy's
// direction).
void begin(const Exec& x, Work& w);

bool move(Exec& x, Work& w, uint64_t len);
bool fill(Exec& x, Work& w, uint64_t len);
bool compare(Exec& x, Work& w, uint64_t len);
bool compare_pattern(Exec& x, Work& w, uint64_t len);
bool create_delta(Exec& x, Work& w, uint64_t len);
bool apply_delta(Exec& x, Work& w, uint64_t len);
bool dualcast(Exec& x, Work& w, uint64_t len);
bool crc(Exec& x, Work& w, uint64_t len);
bool copy_crc(Exec& x, Work& w, uint64_t len);
// DIF Check, Insert, Strip and Update (dif.cc): a whole protected block at a time, however
// small `len`.
bool dif(Exec& x, Work& w, uint64_t len);

// Whether a started descriptor's state is one its run could have reached (for a migration
// stream's, checked on load): the direction begin() chose for a Memory Move, a DIF
// operation's progress in whole blocks.
bool reachable(const Work& w);

// The units an operation's progress counts to: its transfer size, or for Apply Delta its
// record's size.
uint64_t extent(const Work& w);

// A DIF operation's blocks: source bytes per block (with its tuple, but for Insert) and
// destination bytes per block (0 for Check, which writes none); {0, 0} for other operations.
struct DifShape {
    uint32_t src = 0, dst = 0;
};
DifShape dif_shape(const Work& w);

// How far an operation writes from its destination address (word 3): its transfer size,
// but for DIF Insert and Strip its blocks with tuples added or dropped.
uint64_t dest_extent(const Work& w);

// The completion record's operation-specific quadwords 2 and 3 as the operation ended: the
// DIF tags for a DIF operation that ran, else word2 (CRC, delta size, invalid flags) and 0.
std::array<uint64_t, 2> record_tail(const Work& w);

// The DIF guard: CRC-16 T10-DIF (dif::kGuardPolynomial) on the state as given.
uint16_t crc_t10dif(uint16_t crc, const uint8_t* p, size_t n);

// What the executors share (execute.cc): the bytes from `addr` to its page's end; one access
// inside a page (failing, as a wrap past 2^64 does there); the failed access `r` ending the
// operation, `write` telling its direction.
uint64_t to_page_end(uint64_t addr);
DmaResult read(Exec& x, uint64_t addr, uint8_t* buf, uint64_t n);
DmaResult write(Exec& x, uint64_t addr, const uint8_t* buf, uint64_t n);
void fault(Work& w, const DmaResult& r, bool write);

} // namespace dmalab::dsa::exec
