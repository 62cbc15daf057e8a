// SPDX-License-Identifier: GPL-2.0-or-later
// The parts of the DSA control plane, named after the spec, and what they share. Dsa
// (device.h) is their face; Parts (at the end, device.cc) composes them and owns BAR 0's fixed
// registers:
//   Tables    the configuration tables OFFSETS points at: WQCFG, GRPCFG, MSI-X permissions,
//             each entry a register bank of its own, with the spec's write locks (tables.cc)
//   Events    INTCAUSE and MSI-X vector 0, SWERR, and the Halted state (events.cc)
//   checks    what Enable Device and Enable WQ refuse, shared with migration (checks.cc)
//   Commands  CMD and CMDSTS: every command, its time, its interrupt, the drains it waits
//             for (commands.cc)
//   DataPath  BAR 2's portals, the WQs' descriptors, the engines (datapath.h)
// None calls out (DMA, interrupts) other than through Shared::call_out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "datapath.h"
#include "dmalab/dsa/device.h"
#include "dmalab/le.h"
#include "dmalab/pacing.h"
#include "dmalab/regbank.h"

namespace dmalab::dsa
{

struct Parts;

// Registers of the table entries, by name (their index in the entry's bank).
consteval unsigned wq_reg(std::string_view name)
{
    return reg_index(kWqConfig, name);
}
consteval unsigned group_reg(std::string_view name, unsigned i = 0)
{
    return reg_index(kGroupConfig, name, i);
}
// GRPWQCFG's quadword k: the elements of an array row take consecutive indices.
constexpr unsigned grpwqcfg(unsigned k)
{
    return group_reg("GRPWQCFG") + k;
}
inline constexpr unsigned kWqRegCount = reg_count(kWqConfig);
inline constexpr unsigned kGroupRegCount = reg_count(kGroupConfig);
inline constexpr unsigned kPermRegCount = reg_count(kMsixPerm);
inline constexpr unsigned kGrpWqWords = kMaxWqs / 64;

// What every part reaches: the configuration, the host, the fixed registers, the counters
// and the PCI state the glue reports.
struct Shared {
    Shared(const Config& c, const Host& h) : config(c), host(h), layout(Dsa::layout(c)) {}

    Config config;
    Host host;
    Layout layout;
    Counters counters;
    RegBank<Parts>* regs = nullptr;
    unsigned depth = 0; // nesting of calls out; register accesses inside one are refused
    bool bus_master = false;
    bool pasid_enabled = false, pasid_privileged = false;

    uint64_t now() const { return host.timers.now_ns(); }
    uint64_t reg(unsigned index) const { return regs->get(index); }
    void set(unsigned index, uint64_t v) { regs->set(index, v); }
    DeviceState state() const
    {
        return static_cast<DeviceState>(GENSTS_STATE.get(reg(dsa::reg("GENSTS"))));
    }
    void set_state(DeviceState st, ResetType type = ResetType::Software)
    {
        set(dsa::reg("GENSTS"), GENSTS_STATE.put(static_cast<uint64_t>(st)) |
                                    GENSTS_RESET_TYPE.put(static_cast<uint64_t>(type)));
    }
    // A call out of the model (an interrupt message): while it runs, the model refuses
    // register accesses that come back to it.
    template <class F> auto call_out(F&& f)
    {
        depth++;
        auto r = f();
        depth--;
        return r;
    }
    // A configuration write the device does not take: counted, logged, observed.
    void refuse(uint32_t offset, const char* what)
    {
        counters.refused_writes++;
        logf(host.log, LogKind::GuestError, "dsa: write at 0x%x refused: %s", offset, what);
        if (host.observer)
            host.observer->refused(offset);
    }
};

// How a WQCFG register's writes are locked (the spec's "read-only when").
enum class Lock : uint8_t {
    Device, // while the device is not Disabled (WQ_SIZE: the device divides its storage)
    Wq,     // while the WQ is enabled
};

// One WQCFG entry.
class WqEntry
{
  public:
    WqEntry(Shared& s, unsigned index);
    uint64_t read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    void write(uint32_t offset, uint64_t value, unsigned size) { regs_.write(offset, value, size); }
    uint32_t get(unsigned r) const { return static_cast<uint32_t>(regs_.get(r)); }
    void set(unsigned r, uint64_t v) { regs_.set(r, v); }
    bool enabled() const;
    void set_enabled(bool on); // off: OCCUPANCY too
    void set_occupancy(uint16_t n);
    void reset() { regs_.reset(); }
    // Reset WQ: the configuration back to its reset values, except WQ_SIZE, which only the
    // device's own reset changes (it stays locked while the device is enabled).
    void reset_config();
    // A write locked by `L` to register R is undone (hooks, bound by name in tables.cc).
    template <Lock L, unsigned R> void locked(uint64_t old, uint64_t written, uint64_t bytes);

  private:
    Shared& s_;
    unsigned index_;
    char name_[24];
    RegBank<WqEntry> regs_;
};

// One GRPCFG entry. The whole entry is configuration, locked while the device is not
// Disabled; bits for WQs and engines the device does not have are not writable.
class GroupEntry
{
  public:
    GroupEntry(Shared& s, unsigned index);
    uint64_t read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    void write(uint32_t offset, uint64_t value, unsigned size);
    uint64_t get(unsigned r) const { return regs_.get(r); }
    void set(unsigned r, uint64_t v) { regs_.set(r, v); }
    bool has_wq(unsigned wq) const { return (get(grpwqcfg(wq / 64)) >> wq % 64) & 1; }
    bool any_wq() const;
    uint64_t engines() const { return get(group_reg("GRPENGCFG")); }
    void reset() { regs_.reset(); }
    // The GRPWQCFG (word) or GRPENGCFG bits this device has.
    uint64_t wq_bits(unsigned word) const;
    uint64_t engine_bits() const;

  private:
    Shared& s_;
    unsigned index_;
    char name_[24];
    RegBank<GroupEntry> regs_;
};

// One MSI-X permission entry: plain storage the data path consults.
class PermEntry
{
  public:
    PermEntry(Shared& s, unsigned index);
    uint64_t read(uint32_t offset, unsigned size) { return regs_.read(offset, size); }
    void write(uint32_t offset, uint64_t value, unsigned size) { regs_.write(offset, value, size); }
    uint64_t get() const { return regs_.get(0); }
    void set(uint64_t v) { regs_.set(0, v); }
    void reset() { regs_.reset(); }

  private:
    char name_[24];
    RegBank<PermEntry> regs_;
};

class Tables
{
  public:
    explicit Tables(Shared& s);

    // The table entry holding byte `offset` of BAR 0: which table, which entry, the offset
    // inside the entry and the bytes left in it. Kind::None when no table holds it.
    struct Place {
        enum Kind : uint8_t { None, Perm, Group, Wq } kind = None;
        unsigned index = 0;
        uint32_t offset = 0, left = 0;
    };
    Place find(uint32_t offset) const;
    uint64_t read(const Place& p, unsigned size);
    void write(const Place& p, uint64_t value, unsigned size);

    WqEntry& wq(unsigned i) { return *wqs_[i]; }
    const WqEntry& wq(unsigned i) const { return *wqs_[i]; }
    GroupEntry& group(unsigned g) { return *groups_[g]; }
    const GroupEntry& group(unsigned g) const { return *groups_[g]; }
    PermEntry& perm(unsigned v) { return *perms_[v]; }
    const PermEntry& perm(unsigned v) const { return *perms_[v]; }
    unsigned wq_count() const { return static_cast<unsigned>(wqs_.size()); }
    unsigned group_count() const { return static_cast<unsigned>(groups_.size()); }
    unsigned perm_count() const { return static_cast<unsigned>(perms_.size()); }

    // The lowest group naming WQ `wq`, or -1.
    int group_of(unsigned wq) const;
    void disable_all_wqs();
    // Power-on; Reset Device leaves the MSI-X permissions (the function's, like its MSI-X
    // table) alone.
    void reset(bool with_permissions);

    void save(StateWriter& w) const;
    bool load(StateReader& r);

  private:
    Shared& s_;
    std::vector<std::unique_ptr<WqEntry>> wqs_;
    std::vector<std::unique_ptr<GroupEntry>> groups_;
    std::vector<std::unique_ptr<PermEntry>> perms_;
};

class Events
{
  public:
    Events(Shared& s, Tables& t) : s_(s), t_(t) {}
    // INTCAUSE gains `cause`, and vector 0 fires.
    void raise(uint32_t cause);
    // A message on `vector`, through call_out; true when it went out.
    bool notify(unsigned vector);
    void software_error(const SwError& e);
    void halt(ResetType type);
    // After a halt has disabled every WQ: the data path drops what they held.
    std::function<void()> on_halt;

  private:
    Shared& s_;
    Tables& t_;
};

// What Enable Device refuses in a disabled device's configuration (after the device's
// state and Bus Master Enable), and what Enable WQ refuses in a WQ's configuration (after
// the index and the states) and then in the PCI PASID state; CmdErr::Success when nothing.
// The configuration is locked while enabled, so an enabled device or WQ always passes the
// first two: invariant_violation() says so, and migration refuses a state that does not.
CmdErr check_device_config(const Shared& s, const Tables& t);
CmdErr check_wq_config(const Shared& s, const Tables& t, unsigned wq);
CmdErr check_wq_pasid(const Shared& s, const Tables& t, unsigned wq);
const char* invariant_violation(const Shared& s, const Tables& t);

// CMDCAP: bit n for each command n the device takes.
uint32_t command_caps(const Config& c);

class Commands
{
  public:
    Commands(Shared& s, Tables& t, Events& e, DataPath& d);
    // CMD written; a write that covers its top byte (CMD.CMD's upper bit and INT_REQ)
    // submits it, narrower ones only stage the operand.
    void write_cmd(uint64_t old, uint64_t written, uint64_t bytes);
    void timer();
    void reset(); // no command in progress, every handle released, the clock's seed again
    bool busy() const { return busy_; }
    std::optional<unsigned> handle_vector(uint16_t handle) const;
    // CMDSTS.ACTIVE against the command in progress, and the handles against CMDCAP.
    const char* invariant_violation() const;
    void save(StateWriter& w) const;
    bool load(StateReader& r);
    // After a load: the timer of the command in progress.
    void resume();
    // The data path moved on: a drain the command in progress waits for may have ended.
    void progress();

  private:
    void start(uint32_t cmd);
    void finish();
    void conclude(CmdErr err, uint16_t result);
    // Waits for what `wq` holds now (Drain and Disable WQ, Drain All, Disable Device).
    void wait_for(unsigned wq);
    CmdErr run(uint32_t cmd, uint16_t& result);
    CmdErr enable_device();
    CmdErr disable_device();
    CmdErr reset_device();
    CmdErr enable_wq(uint32_t operand);
    CmdErr wq_set_command(Cmd cmd, uint32_t operand);
    CmdErr all_command(Cmd cmd, uint32_t operand);
    CmdErr request_handle(uint32_t operand, uint16_t& result);
    CmdErr release_handle(uint32_t operand);

    Shared& s_;
    Tables& t_;
    Events& e_;
    DataPath& d_;
    Pacer pacer_;
    bool busy_ = false;
    // The command in progress waits for descriptors in flight: those each WQ numbered
    // below marks_[wq] - 1 (0: the command does not wait for that WQ).
    bool waiting_ = false;
    std::vector<uint64_t> marks_;
    uint32_t cmd_ = 0; // the command in progress (CMD as written)
    uint64_t due_ = 0;
    std::vector<uint8_t> granted_; // per MSI-X index: a handle is out
};

// The parts composed, with BAR 0's fixed registers (device.cc).
struct Parts {
    Parts(const Config& c, const Host& h);

    // Register hooks: each register's behaviour is one of the parts'.
    void write_gencfg(uint64_t old, uint64_t written, uint64_t bytes);
    void write_cmd(uint64_t old, uint64_t written, uint64_t bytes)
    {
        commands.write_cmd(old, written, bytes);
    }

    // Walks an access of `size` bytes at `offset` piece by piece: the fixed registers, or
    // one table entry, each piece in one; fn(place, at, n, first) for each, `first` the
    // access's byte where the piece starts (place.kind None: the fixed registers). Bytes
    // nothing decodes are skipped; true when there were some.
    template <class Fn> bool pieces(uint32_t offset, unsigned size, Fn&& fn);
    bool access_ok(uint32_t offset, unsigned size, const char* what);

    Shared s;
    std::unique_ptr<RegBank<Parts>> regs;
    Tables tables{s};
    Events events{s, tables};
    DataPath data{s, tables, events};
    Commands commands{s, tables, events, data};
};

} // namespace dmalab::dsa
