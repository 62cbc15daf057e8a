// SPDX-License-Identifier: GPL-2.0-or-later
// Guest memory as a DMA master sees it (bus addresses, so an IOMMU may sit in between).
// Every access can fail, and a failure says what failed, where, and how far the access got:
// the model turns that into its architected error (a CHANERR bit, a fault record).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dmalab
{

enum class Access : uint8_t { Read, Write };

inline constexpr uint32_t kNoPasid = ~0u;

// Who is asking. The host fills requester_id for a device it places on a PCI bus (the model
// cannot know its bus number); `stream` tells the model's own engines apart (I/OAT: channel).
struct MemAttrs {
    uint16_t requester_id = 0;
    uint32_t pasid = kNoPasid;
    uint16_t stream = 0;
    // A translated request (PCIe ATS, AT=10b): the address is one an IOMMU gave the device,
    // and the access goes to it without another translation (ats_memory.h).
    bool translated = false;
};

enum class DmaError : uint8_t {
    None,
    Unassigned,  // nothing decodes the address (master abort)
    IommuFault,  // a DMA-remapping unit refused the translation; see fault_reason
    TargetError, // the target decoded the access and failed it (target abort, re-entrancy)
    Wrap,        // the range wraps past 2^64: refused before any byte moved
};

struct DmaResult {
    DmaError error = DmaError::None;
    uint8_t fault_reason = 0; // architected reason code of the IOMMU, with IommuFault
    uint64_t fault_addr = 0;  // first bus address that failed
    uint64_t done = 0;        // bytes that got through before the failure

    bool ok() const { return error == DmaError::None; }
    static DmaResult success(uint64_t n) { return {DmaError::None, 0, 0, n}; }
    static DmaResult failure(DmaError e, uint64_t at, uint64_t done = 0, uint8_t reason = 0)
    {
        return {e, reason, at, done};
    }
};

// True when [addr, addr + len) wraps past the top of the 64-bit address space.
constexpr bool wraps(uint64_t addr, uint64_t len)
{
    return len != 0 && addr + (len - 1) < addr;
}

constexpr const char* to_string(DmaError e)
{
    switch (e) {
    case DmaError::None:
        return "ok";
    case DmaError::Unassigned:
        return "unassigned";
    case DmaError::IommuFault:
        return "iommu-fault";
    case DmaError::TargetError:
        return "target-error";
    case DmaError::Wrap:
        return "wrap";
    }
    return "?";
}

class DmaMemory
{
  public:
    virtual ~DmaMemory() = default;

    // Whole-range accesses. A failure leaves `done` bytes transferred (for a read: placed at
    // the start of buf) and names the first address that failed.
    virtual DmaResult read(uint64_t addr, void* buf, size_t len, const MemAttrs& attrs) = 0;
    virtual DmaResult write(uint64_t addr, const void* buf, size_t len, const MemAttrs& attrs) = 0;

    // Direct access to RAM without a bounce copy. Maps a prefix of [addr, addr + len): `host`
    // and the contiguous length, or an empty mapping when the first byte is not plain RAM or
    // cannot be mapped now (read()/write() then tell whether it is accessible at all). A map
    // never touches device registers. Every mapping is followed by one unmap() with the
    // number of bytes actually accessed.
    struct Mapping {
        void* host = nullptr;
        size_t len = 0;
        explicit operator bool() const { return host != nullptr; }
    };
    virtual Mapping map(uint64_t addr, size_t len, Access dir, const MemAttrs& attrs) = 0;
    virtual void unmap(const Mapping& m, Access dir, size_t accessed) = 0;

    // Modelled time the accesses made since the last call cost on the way to memory (an
    // IOMMU's table walks on IOTLB misses), in virtual nanoseconds; then 0 again. A DMA
    // engine adds it to the duration of the work that made the accesses.
    virtual uint64_t take_cost() { return 0; }
};

} // namespace dmalab
