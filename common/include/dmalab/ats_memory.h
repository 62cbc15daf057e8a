// SPDX-License-Identifier: GPL-2.0-or-later
// Address Translation Services as a PCIe function does them (PCIe Base Specification,
// "Address Translation Services"): the function asks the IOMMU for a page's translation (a
// translation request), keeps the answer in its own cache (the ATC, which VT-d calls the
// device-TLB), and then reaches memory with translated requests that the IOMMU passes on
// unchecked. The IOMMU takes entries away again with device-TLB invalidations, which the
// host delivers here (invalidate()). A model reaches memory through an AtsMemory instead
// of the bus; while ATS is off (the capability's Enable bit), every access goes to the bus
// untranslated, as before. A page the IOMMU answers "untranslated access only" (U, PCIe Base
// 10.2.3.4; VT-d's interrupt address range) is reached with untranslated requests, never
// with its translated address.
#pragma once

#include <array>
#include <cstdint>

#include "dmalab/dma_memory.h"

namespace dmalab
{

// The IOMMU as a function with ATS sees it.
class AtsPort
{
  public:
    virtual ~AtsPort() = default;
    struct Reply {
        DmaError error = DmaError::Unassigned; // None: `addr` is the page's translation
        uint64_t addr = 0;                     // the 4 KiB page's translated address
        // U: the access `dir` is allowed with untranslated requests only; addr is no address.
        bool untranslated_only = false;
    };
    // A translation request for the 4 KiB page at `page`, for an access of `dir`.
    virtual Reply translate(uint64_t page, Access dir, const MemAttrs& attrs) = 0;
};

// What the device-TLB saw, for traces.
class AtsObserver
{
  public:
    virtual ~AtsObserver() = default;
    // The audit found a hit the IOMMU would no longer give: the device used `cached` for
    // `page`, where a request now answers `now` (or nothing: `now_ok` false).
    virtual void stale(uint64_t page, uint64_t cached, bool now_ok, uint64_t now) = 0;
    virtual void invalidated(uint64_t first, uint64_t last, unsigned dropped) = 0;
};

class AtsMemory final : public DmaMemory
{
  public:
    // A fully associative cache of 4 KiB pages, replaced round robin.
    static constexpr unsigned kEntries = 64;
    static constexpr uint64_t kPage = 4096;

    struct Stats {
        uint64_t requests = 0;      // translation requests on a miss
        uint64_t refused = 0;       // of those, answered with no translation
        uint64_t hits = 0;          // accesses translated from the cache
        uint64_t invalidations = 0; // device-TLB invalidations received
        uint64_t dropped = 0;       // entries they took away
        uint64_t audits = 0;        // hits checked against a fresh request (audit on)
        uint64_t stale = 0;         // of those, hits the IOMMU would no longer give
        uint64_t untranslated = 0;  // accesses sent untranslated: their page's answer had U
    };

    AtsMemory(DmaMemory& bus, AtsPort& port, AtsObserver* observer = nullptr)
        : bus_(bus), port_(port), observer_(observer)
    {
    }

    // The ATS Control register's Enable bit. Turning it off empties the cache.
    void set_enabled(bool on);
    bool enabled() const { return enabled_; }
    // Every hit is checked with a fresh translation request (the check costs a request; the
    // device still uses what it cached, as hardware would).
    void set_audit(bool on) { audit_ = on; }
    // A device-TLB invalidation of the IOVAs [first, last].
    void invalidate(uint64_t first, uint64_t last);
    void clear();
    const Stats& stats() const { return stats_; }

    DmaResult read(uint64_t addr, void* buf, size_t len, const MemAttrs& attrs) override;
    DmaResult write(uint64_t addr, const void* buf, size_t len, const MemAttrs& attrs) override;
    Mapping map(uint64_t addr, size_t len, Access dir, const MemAttrs& attrs) override;
    void unmap(const Mapping& m, Access dir, size_t accessed) override
    {
        bus_.unmap(m, dir, accessed);
    }
    uint64_t take_cost() override { return bus_.take_cost(); }

  private:
    struct Entry {
        uint64_t page = 0;
        uint64_t addr = 0;
        bool valid = false;
        bool read = false;
        bool write = false;
        bool untranslated_only = false; // U: read and write allow untranslated requests
    };
    struct Lookup {
        DmaError error = DmaError::None;
        uint64_t addr = 0;
        bool untranslated = false; // go to the bus at the IOVA, untranslated
    };

    Lookup translate(uint64_t page, Access dir, const MemAttrs& attrs);
    void audit(const Entry& e, Access dir, const MemAttrs& attrs);
    DmaResult access(uint64_t addr, uint8_t* buf, size_t len, Access dir, const MemAttrs& attrs);

    DmaMemory& bus_;
    AtsPort& port_;
    AtsObserver* observer_;
    std::array<Entry, kEntries> entries_{};
    unsigned next_ = 0;
    bool enabled_ = false;
    bool audit_ = false;
    Stats stats_;
};

} // namespace dmalab
