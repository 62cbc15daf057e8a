// SPDX-License-Identifier: GPL-2.0-or-later
// Guest memory as a DMA master sees it (bus addresses, so an IOMMU may sit in between).
// Every access can fail: a failure is data the model turns into an architected error.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dmalab
{

enum class Access { Read, Write };

class DmaMemory
{
  public:
    virtual ~DmaMemory() = default;

    // Whole-range accesses: false when any byte is not accessible.
    virtual bool read(uint64_t addr, void* buf, size_t len) = 0;
    virtual bool write(uint64_t addr, const void* buf, size_t len) = 0;

    // Direct access without a bounce copy. Maps up to *len bytes at addr; on success returns a
    // host pointer and sets *len to the contiguous length mapped (at least 1). Returns nullptr
    // when the range cannot be mapped directly; read()/write() are then the way to find out
    // whether it is accessible at all. Every successful map is followed by one unmap, with the
    // number of bytes actually accessed.
    virtual void* map(uint64_t addr, size_t* len, Access dir) = 0;
    virtual void unmap(void* host, size_t len, Access dir, size_t accessed) = 0;
};

// Time and deferred work. Models never move data inside a register access: they ask for a
// later call of their run() entry point instead.
class Scheduler
{
  public:
    virtual ~Scheduler() = default;
    virtual uint64_t now_ns() const = 0;
    // Requests one call of the model's run() at or after `when_ns`. A later request for an
    // earlier time replaces a pending one.
    virtual void schedule_at(uint64_t when_ns) = 0;
};

// Message-signalled interrupts, one vector per source.
class InterruptSink
{
  public:
    virtual ~InterruptSink() = default;
    virtual void raise(unsigned vector) = 0;
};

} // namespace dmalab
