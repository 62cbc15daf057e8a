// SPDX-License-Identifier: GPL-2.0-or-later
// The writer's side of the DMA race detector's table (race_table.h): a model marks the
// descriptors it has in flight. Each slot is a seqlock, so the detector's readers on other
// threads never see a half-written slot as valid.
#pragma once

#include <cstdint>

#include "dmalab/race_table.h"

namespace dmalab
{

class RaceMarks
{
  public:
    void attach(DmalabRaceTable* table, uint32_t device)
    {
        table_ = table;
        device_ = device;
        if (table_ && table_->magic != DMALAB_RACE_MAGIC) {
            table_->version = DMALAB_RACE_VERSION;
            __atomic_store_n(&table_->magic, DMALAB_RACE_MAGIC, __ATOMIC_RELEASE);
        }
    }

    // The descriptor at `desc` is in flight on `slot` (the channel): until finish().
    void start(unsigned slot, uint64_t desc, uint64_t src, uint64_t dst, uint64_t len)
    {
        if (!table_ || slot >= DMALAB_RACE_SLOTS)
            return;
        DmalabRaceSlot& s = table_->slot[slot];
        bool was_busy = s.busy;
        begin(s);
        s.busy = 1;
        s.desc = desc;
        s.src = src;
        s.dst = dst;
        s.len = len;
        s.device = device_;
        s.channel = slot;
        end(s);
        if (!was_busy)
            __atomic_add_fetch(&table_->busy, 1, __ATOMIC_RELEASE);
    }
    void finish(unsigned slot)
    {
        if (!table_ || slot >= DMALAB_RACE_SLOTS || !table_->slot[slot].busy)
            return;
        DmalabRaceSlot& s = table_->slot[slot];
        begin(s);
        s.busy = 0;
        end(s);
        __atomic_sub_fetch(&table_->busy, 1, __ATOMIC_RELEASE);
    }
    void clear()
    {
        for (unsigned i = 0; i < DMALAB_RACE_SLOTS; i++)
            finish(i);
    }
    // The marks move to `table` (nullptr: none), the old table's left clear.
    void reattach(DmalabRaceTable* table, uint32_t device)
    {
        clear();
        attach(table, device);
    }

  private:
    static void begin(DmalabRaceSlot& s)
    {
        __atomic_add_fetch(&s.seq, 1, __ATOMIC_ACQ_REL);
        __atomic_thread_fence(__ATOMIC_RELEASE);
    }
    static void end(DmalabRaceSlot& s) { __atomic_add_fetch(&s.seq, 1, __ATOMIC_RELEASE); }

    DmalabRaceTable* table_ = nullptr;
    uint32_t device_ = 0;
};

} // namespace dmalab
