// SPDX-License-Identifier: GPL-2.0-or-later
// A test-only register block through which a guest arms a fault plan's rules at a precise
// point of its own code. A model maps it only when its user asks for it (dmalab-ioat:
// fault-doorbell=on); docs/faults.rst has the layout.
#pragma once

#include "dmalab/faults.h"
#include "dmalab/regbank.h"

namespace dmalab::faults
{

namespace doorbell
{
inline constexpr uint32_t ID = 0x00;       // RO, reads kId
inline constexpr uint32_t SELECT = 0x04;   // RW: a rule's index in the plan file
inline constexpr uint32_t COMMAND = 0x08;  // WO: kArm, kDisarm or kRelease the selected rule
inline constexpr uint32_t STATUS = 0x0c;   // RO: the selected rule's kOwned ... kEnded
inline constexpr uint32_t INJECTED = 0x10; // RO 64-bit: injections of the selected rule
inline constexpr uint32_t TOTAL = 0x18;    // RO 64-bit: injections of every rule
inline constexpr uint32_t kWindow = 0x20;

inline constexpr uint32_t kId = 0x464c4d44; // "DMLF"
inline constexpr uint32_t kArm = 1;
inline constexpr uint32_t kDisarm = 2;
inline constexpr uint32_t kRelease = 3;     // end the rule's holds ("until": "release")
inline constexpr uint32_t kOwned = 1u << 0; // the selected rule is this device's
inline constexpr uint32_t kArmed = 1u << 1;
inline constexpr uint32_t kReleased = 1u << 2; // released in the current round
// A release in the current round ended a hold the model was running: the held operation
// waited for the guest, not for the hold's own time.
inline constexpr uint32_t kEnded = 1u << 3;
} // namespace doorbell

class Doorbell
{
  public:
    Doorbell(Injector& injector, Log& log, const char* name);

    // Told of every release, after the injector has recorded it, so that the model can end
    // the holds already running; true when it ended one. It may call out of the model (DMA,
    // interrupts).
    using ReleaseHook = bool (*)(void* opaque, unsigned rule);
    void set_release_hook(ReleaseHook fn, void* opaque)
    {
        release_hook_ = fn;
        release_opaque_ = opaque;
    }

    uint64_t read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    void write(uint32_t offset, uint64_t value, unsigned size) { regs_.write(offset, value, size); }
    void reset() { regs_.reset(); }
    uint32_t selected() const { return static_cast<uint32_t>(regs_.get(1)); }
    void select(uint32_t index) { regs_.set(1, index); }

    // Register hooks.
    void write_command(uint64_t old_value, uint64_t written, uint64_t bytes);
    uint64_t read_status(uint64_t stored);
    uint64_t read_injected(uint64_t stored);
    uint64_t read_total(uint64_t stored);

  private:
    Injector& injector_;
    RegBank<Doorbell> regs_;
    ReleaseHook release_hook_ = nullptr;
    void* release_opaque_ = nullptr;
};

} // namespace dmalab::faults
