/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DMA race detector's shared table (docs/race-detector.rst): a file that a DMA model
 * and the detector's TCG plugin both map. The model marks each descriptor in flight, from
 * the moment its channel starts it until its completion is signalled; the plugin checks
 * every guest memory access against the marks. One writer (the model, under QEMU's BQL),
 * any number of readers (vCPU threads): each slot is a seqlock.
 */
#ifndef DMALAB_RACE_TABLE_H
#define DMALAB_RACE_TABLE_H

#include <stdint.h>

#define DMALAB_RACE_MAGIC 0x45434152u /* "RACE" */
#define DMALAB_RACE_VERSION 1u
#define DMALAB_RACE_SLOTS 64u

typedef struct DmalabRaceSlot {
    uint64_t seq;  /* odd while the writer changes the slot */
    uint64_t busy; /* 1: a descriptor is in flight */
    uint64_t desc; /* its bus address */
    uint64_t src, dst, len;
    uint32_t device, channel;
} DmalabRaceSlot;

typedef struct DmalabRaceTable {
    uint32_t magic, version;
    uint64_t busy; /* slots in flight: readers skip the slots while it is 0 */
    DmalabRaceSlot slot[DMALAB_RACE_SLOTS];
} DmalabRaceTable;

#endif
