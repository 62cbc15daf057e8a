// SPDX-License-Identifier: GPL-2.0-or-later
// The executors of the operations that move data (ops.cc names them in its table). Each
// processes the next `len` bytes of its descriptor's transfer (Apply Delta: of its delta
// record) in pieces that stay inside one page of every range they touch, translating each
// piece when it moves, so a range that turns unreachable midway fails there.
#pragma once

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

// The units an operation's progress counts to: its transfer size, or for Apply Delta its
// record's size.
uint64_t extent(const Work& w);

} // namespace dmalab::dsa::exec
