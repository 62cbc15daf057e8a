// SPDX-License-Identifier: GPL-2.0-or-later
// The Intel DSA 1.0 model's control plane, for QEMU's glue and the data path: BAR 0's
// registers and configuration tables (GRPCFG, WQCFG, MSI-X permissions), the commands, SWERR
// and the Halted state. Descriptors are the data path's; it reads the WQs' state here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "dmalab/dma_memory.h"
#include "dmalab/dsa/spec/config.h"
#include "dmalab/dsa/spec/descriptor.h"
#include "dmalab/dsa/spec/registers.h"
#include "dmalab/interrupts.h"
#include "dmalab/log.h"
#include "dmalab/model_host.h"
#include "dmalab/state.h"
#include "dmalab/timers.h"

namespace dmalab::faults
{
class Injector;
}

namespace dmalab::dsa
{

// The operations the data path runs: every DSA 1.0 operation, the DIF ones included.
inline constexpr uint64_t kModelOps = opcap_all(0);

// What the device offers (its capability registers) and how long its commands take. The
// defaults are what Sapphire Rapids' DSA 1.0 reports to idxd: 8 WQs sharing 128 descriptor
// slots, 4 engines, 4 groups, 96 read buffers, 2 GiB transfers, batches of 1024, and MSI-X
// vector 0 for the device plus one per WQ.
struct Config {
    unsigned wqs = 8;
    unsigned engines = 4;
    unsigned groups = 4;
    unsigned total_wq_size = 128; // WQCAP.TOTAL_WQ_SIZE: the WQ sizes may add up to this
    unsigned msix_vectors = 9;    // the function's MSI-X table size (the glue's too)
    uint8_t max_xfer_shift = 31;  // GENCAP: log2 of the largest transfer
    uint8_t max_batch_shift = 10; // GENCAP: log2 of the largest batch
    uint8_t read_buffers = 96;    // GRPCAP.TOTAL_RDBUFS
    bool dedicated_mode = true;   // WQCAP.DEDICATED_MODE
    bool shared_mode = true;      // WQCAP.SHARED_MODE (ENQCMD(S) portals; needs PASID)
    bool priority = true;         // WQCAP.PRIORITY: WQCFG.PRIORITY is honoured
    bool block_on_fault = false;  // GENCAP.BLOCK_ON_FAULT: WQCFG.BOF may be set
    // CMDCAP bits 13 and 14: Request and Release Interrupt Handle. Off, idxd uses the MSI-X
    // index as the handle (idxd_wq_request_irq) and the commands are invalid.
    bool int_handles = false;
    // OPCAP[0] (DSA 1.0 has no opcode above 63): every operation the model implements, which
    // is every DSA 1.0 operation.
    uint64_t opcap = kModelOps;
    // A command is ACTIVE in CMDSTS for command_ns plus a uniform [0, command_jitter_ns] of
    // the modelled clock (seeded by seed); both 0: it completes inside the CMD write.
    uint64_t command_ns = 0;
    uint64_t command_jitter_ns = 0;
    uint64_t seed = 0;
    // A descriptor completes latency_ns + its bytes / bandwidth + a uniform [0, jitter_ns]
    // after its engine starts it, its data moving at `bandwidth` (bytes per second over all
    // the ranges it touches; 0: unlimited) meanwhile. Each engine draws from seed + 1 + its
    // index.
    uint64_t bandwidth = 0;
    uint64_t latency_ns = 0;
    uint64_t jitter_ns = 0;
    // Work one engine does in one step: at most step_bytes of data and step_descriptors
    // descriptors (a batch's count one each), then it goes on step_gap_ns later.
    uint64_t step_bytes = 1u << 20;
    unsigned step_descriptors = 64;
    uint64_t step_gap_ns = 1000;
    // An idle engine that a portal write gives work runs its first step inside that write
    // instead of from its timer at the same virtual time (bounded like any step): the
    // descriptor has started before the guest's next instruction, as with dmalab-ioat.
    bool sync_start = true;
};

// The longest a command may take: idxd waits for the command interrupt without a time-out
// (idxd_cmd_exec) and spins on CMDSTS.ACTIVE for the reset at probe.
inline constexpr uint64_t kMaxCommandNs = 1000000000; // 1 s
inline constexpr unsigned kMaxModelWqs = 64;
inline constexpr unsigned kMaxModelGroups = 64;
inline constexpr uint64_t kMaxDelayNs = uint64_t{1} << 50; // latency and jitter: about 13 days

// Where OFFSETS puts the tables, in bytes from the start of BAR 0.
struct Layout {
    uint32_t msix_perm, grpcfg, wqcfg;
    uint32_t end; // first byte after the last table
};

struct Counters {
    uint64_t commands = 0;        // commands completed
    uint64_t command_errors = 0;  // of those, with CMDSTS.ERR set
    uint64_t swerrs = 0;          // software errors reported (recorded or overflowed)
    uint64_t swerr_overflows = 0; // of those, lost to a valid record (SWERR.OVERFLOW)
    uint64_t halts = 0;
    uint64_t interrupts = 0;     // MSI-X messages sent: vector 0 and completions
    uint64_t refused_writes = 0; // configuration writes refused: locked, or not offered
    // The data path.
    uint64_t submitted = 0;         // descriptors a WQ took from a portal
    uint64_t dropped = 0;           // portal writes that never became one (SWERR says why)
    uint64_t aborted = 0;           // taken and then dropped by an abort, reset or halt
    uint64_t descriptors = 0;       // completed, batches and their descriptors each one
    uint64_t descriptor_errors = 0; // of those, with a status other than success
    uint64_t bytes = 0;             // transfer bytes processed
    uint64_t batches = 0;
    uint64_t records = 0; // completion records written
    bool operator==(const Counters&) const = default;
};

// A software error the data path could not report in a completion record (SWERR, and
// idxd's process_misc_interrupts): a status code, and what it knows about the descriptor.
struct SwError {
    SwError(Status e = Status::None, std::optional<uint8_t> through = std::nullopt)
        : error(e), wq(through)
    {
    }
    Status error;
    std::optional<uint8_t> wq; // the WQ it came through (WQ_IDX_VALID)
    bool desc_valid = false;   // the fields below describe a descriptor
    uint8_t operation = 0;
    bool batch = false; // it came from a batch (BATCH_IDX valid)
    uint16_t batch_index = 0;
    bool fault_write = false; // FAULT_RW: the faulting access was a write
    bool priv = false;
    uint32_t pasid = 0;
    uint32_t invalid_flags = 0; // with Status::InvalidFlags
    uint64_t fault_addr = 0;
};

// What the model does, for tracing. Every method has an empty default.
class Observer
{
  public:
    virtual ~Observer() = default;
    virtual void command_started(Cmd, uint32_t /*operand*/) {}
    virtual void command_done(Cmd, CmdErr, uint16_t /*result*/) {}
    virtual void software_error(const SwError&, bool /*recorded: false on overflow*/) {}
    virtual void halted(ResetType) {}
    virtual void interrupt(unsigned /*vector*/, bool /*sent*/) {}
    // A configuration write was refused (its offset in BAR 0).
    virtual void refused(uint32_t /*offset*/) {}
    virtual void submitted(unsigned /*wq*/, uint8_t /*opcode*/) {}
    virtual void dropped(unsigned /*wq*/, const char* /*why*/) {}
    virtual void completed(unsigned /*wq*/, uint8_t /*opcode*/, Status, uint64_t /*done*/) {}
    // A completion record was written (ok) or could not be.
    virtual void record(unsigned /*wq*/, uint64_t /*addr*/, Status, bool /*ok*/) {}
    // Engine `engine` started a descriptor that reads [src, src + len) and writes [dst, dst +
    // len) (Memory Move, Dualcast's first destination, Copy with CRC), named by its
    // completion record address `key`; it is in flight until ended(engine). For the DMA race
    // detector's marks (race_marks.h).
    virtual void started(unsigned /*engine*/, uint64_t /*key*/, uint64_t /*src*/, uint64_t /*dst*/,
                         uint64_t /*len*/)
    {
    }
    virtual void ended(unsigned /*engine*/) {}
};

using Host = ModelHost<Observer>;

// A WQ as the data path sees it: its WQCFG entry, decoded, and where it sits.
struct WqInfo {
    bool enabled = false; // WQCFG.WQ_STATE, on an enabled device
    WqMode mode = WqMode::Shared;
    uint16_t size = 0, threshold = 0, occupancy = 0;
    uint8_t priority = 0;
    bool block_on_fault = false, ats_disable = false;
    bool pasid_enabled = false, priv = false;
    uint32_t pasid = 0;
    uint8_t max_xfer_shift = 0, max_batch_shift = 0;
    std::optional<unsigned> group; // the lowest group whose GRPWQCFG names it
    uint64_t engines = 0;          // that group's GRPENGCFG
};

struct GroupInfo {
    std::array<uint64_t, kMaxWqs / 64> wqs{}; // GRPWQCFG
    uint64_t engines = 0;                     // GRPENGCFG
    uint8_t tc_a = 0, tc_b = 0;
    bool use_rdbuf_limit = false;
    uint8_t rdbufs_reserved = 0, rdbufs_allowed = 0;
};

struct MsixPermission {
    bool ignore = false, pasid_enabled = false;
    uint32_t pasid = 0;
};

struct Parts;

// Reaches the world only through Host; not thread-safe (the caller serialises).
class Dsa
{
  public:
    Dsa(const Config& config, const Host& host);
    ~Dsa();
    Dsa(const Dsa&) = delete;
    Dsa& operator=(const Dsa&) = delete;

    // Why the model cannot represent `config`, or nullptr when it can.
    static const char* check(const Config& config);
    static Layout layout(const Config& config);
    // Timer 0 completes the command in progress; timer 1 + e runs engine e's steps.
    static unsigned timer_count(const Config& c) { return 1 + c.engines; }

    // BAR 0, any size (1, 2, 4, 8) at any offset. A register access made while the model
    // is calling out (its own interrupt message aimed at its BAR) is refused.
    uint64_t mmio_read(uint32_t offset, unsigned size);
    void mmio_write(uint32_t offset, uint64_t value, unsigned size);
    void timer(unsigned id);
    // BAR 2, the WQ portals: a descriptor is one 64-byte store, which arrives as eight
    // ascending 8-byte writes with nothing in between (MOVDIR64B). Reads return 0.
    uint64_t portal_read(uint32_t offset, unsigned size);
    void portal_write(uint32_t offset, uint64_t value, unsigned size);
    // BAR 2's size: 16 KiB of portals per WQ, rounded up to a power of two.
    static uint64_t portals_size(const Config& c);
    // Power-on state (and FLR): registers, tables, handles, the command in progress, and the
    // PCI state below (Bus Master Enable and PASID control reset to 0).
    void reset();

    // PCI configuration the glue owns and the device checks: Bus Master Enable (Enable
    // Device refuses without it), the PASID capability's Enable and Privileged Mode Enable
    // (Enable WQ refuses a WQ that needs them without them).
    void set_bus_master(bool on);
    void set_pasid(bool enabled, bool privileged);

    // Fault plans (docs/faults.rst, faults.h): the injector the data path asks when an
    // engine starts a descriptor; nullptr (the default): none. It must outlive its use.
    void set_injector(faults::Injector* injector);
    // The guest released plan rule `rule` (the fault doorbell's kRelease): the holds of that
    // rule end now. True when a descriptor held by it was still running.
    bool release(unsigned rule);

    // ---- For the data path ----
    DeviceState state() const;
    unsigned wq_count() const;
    WqInfo wq(unsigned index) const;
    GroupInfo group(unsigned index) const;
    MsixPermission msix_permission(unsigned vector) const;
    // The MSI-X vector a descriptor's interrupt handle names: with interrupt handles
    // offered, one Request Interrupt Handle granted; otherwise the vector of that index.
    std::optional<unsigned> handle_vector(uint16_t handle) const;
    // A completion interrupt on `vector`; true when a message went out.
    bool completion_interrupt(unsigned vector);
    // Records a software error in SWERR (or sets OVERFLOW) and, with GENCTRL.SWERR_INT_EN,
    // raises INTCAUSE.SWERR on vector 0.
    void software_error(const SwError& e);
    // A fatal error: GENSTS goes to Halted with `type`, every WQ is disabled, and with
    // GENCTRL.HALT_INT_EN INTCAUSE.HALT goes out on vector 0. Reset Device brings a device
    // halted with ResetType::Software back; anything else needs reset().
    void halt(ResetType type);

    const Config& config() const;
    const Counters& counters() const;
    // Why the model's state breaks an invariant the device keeps (an enabled WQ whose
    // configuration Enable WQ would refuse, a lock broken...), or nullptr.
    const char* invariant_violation() const;

    // Migration. load() accepts only what save() of a model with the same configuration
    // produced, holding only states the device could reach, and re-arms the command timer.
    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    std::unique_ptr<Parts> p_;
};

} // namespace dmalab::dsa
