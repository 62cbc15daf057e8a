// SPDX-License-Identifier: GPL-2.0-or-later
// CMD and CMDSTS (DSA spec, "Command Register", "Command Status Register"): a write of CMD
// starts a command, CMDSTS.ACTIVE stays set for its modelled time, then CMDSTS holds its
// error and result and, with CMD.INT_REQ, INTCAUSE.CMD fires on vector 0. idxd issues every
// command with INT_REQ and sleeps until that interrupt (idxd_cmd_exec), except the reset at
// probe, which it issues without and polls ACTIVE for (idxd_device_init_reset).

#include <algorithm>

#include "parts.h"

namespace dmalab::dsa
{

namespace
{

constexpr unsigned kTimer = 0;
constexpr uint64_t kTopByte = 0xff000000u; // CMD's bits 31:24: INT_REQ and CMD's high bit
constexpr Field kMask = field(operand::WQ_SET, "MASK");
constexpr Field kBlock = field(operand::WQ_SET, "BLOCK");
constexpr Field kIntIndex = field(operand::INT_HANDLE, "INDEX");
constexpr uint64_t kIms = field_mask(operand::INT_HANDLE, "IMS");

Pacer::Params pacing(const Config& c)
{
    return {0, c.command_ns, c.command_jitter_ns, c.seed};
}

constexpr uint32_t bit(Cmd c)
{
    return 1u << static_cast<unsigned>(c);
}

} // namespace

uint32_t command_caps(const Config& c)
{
    uint32_t caps = 0;
    for (unsigned n = static_cast<unsigned>(Cmd::EnableDevice);
         n <= static_cast<unsigned>(Cmd::AbortPasid); n++)
        caps |= 1u << n;
    if (c.int_handles)
        caps |= bit(Cmd::RequestIntHandle) | bit(Cmd::ReleaseIntHandle);
    return caps;
}

Commands::Commands(Shared& s, Tables& t, Events& e, DataPath& d)
    : s_(s), t_(t), e_(e), d_(d), pacer_(pacing(s.config)), marks_(s.config.wqs, 0),
      granted_(s.config.msix_vectors, 0)
{
}

void Commands::reset()
{
    s_.host.timers.cancel(kTimer);
    busy_ = false;
    waiting_ = false;
    std::fill(marks_.begin(), marks_.end(), 0);
    cmd_ = 0;
    due_ = 0;
    pacer_.reset();
    std::fill(granted_.begin(), granted_.end(), 0);
}

void Commands::write_cmd(uint64_t old, uint64_t, uint64_t bytes)
{
    if (busy_) {
        // Software waits for ACTIVE to clear (idxd serialises on IDXD_FLAG_CMD_RUNNING).
        s_.set(reg("CMD"), old);
        s_.refuse(offset("CMD"), "a command is active (CMDSTS.ACTIVE)");
        return;
    }
    if (bytes & kTopByte)
        start(static_cast<uint32_t>(s_.reg(reg("CMD"))));
}

void Commands::start(uint32_t cmd)
{
    cmd_ = cmd;
    busy_ = true;
    s_.set(reg("CMDSTS"), CMDSTS_ACTIVE);
    if (Observer* o = s_.host.observer)
        o->command_started(static_cast<Cmd>(CMD_CODE.get(cmd)),
                           static_cast<uint32_t>(CMD_OPERAND.get(cmd)));
    if (s_.config.command_ns == 0 && s_.config.command_jitter_ns == 0) {
        finish();
        return;
    }
    due_ = pacer_.next(0, s_.now()).done_at;
    s_.host.timers.arm(kTimer, due_);
}

void Commands::timer()
{
    if (busy_ && !waiting_)
        finish();
}

void Commands::resume()
{
    if (busy_ && !waiting_)
        s_.host.timers.arm(kTimer, due_);
}

void Commands::finish()
{
    due_ = 0;
    uint16_t result = 0;
    const CmdErr err = run(cmd_, result);
    if (waiting_)
        progress(); // it may have nothing to wait for
    else
        conclude(err, result);
}

void Commands::wait_for(unsigned wq)
{
    waiting_ = true;
    marks_[wq] = d_.mark(wq) + 1;
}

void Commands::progress()
{
    if (!waiting_)
        return;
    if (s_.state() == DeviceState::Halted) {
        // A halt ended the wait: every WQ is disabled and empty.
        std::fill(marks_.begin(), marks_.end(), 0);
        conclude(CmdErr::HwError, 0);
        return;
    }
    for (unsigned wq = 0; wq < marks_.size(); wq++)
        if (marks_[wq] && !d_.quiet(wq, marks_[wq] - 1))
            return;
    // Everything waited for has completed: Disable WQ and Disable Device now disable, and
    // drop what came in after the command (it was never waited for).
    const auto c = static_cast<Cmd>(CMD_CODE.get(cmd_));
    for (unsigned wq = 0; wq < marks_.size(); wq++) {
        const bool waited = marks_[wq] != 0 || c == Cmd::DisableDevice;
        marks_[wq] = 0;
        if (!waited || (c != Cmd::DisableWq && c != Cmd::DisableDevice))
            continue;
        t_.wq(wq).set_enabled(false);
        d_.abort(wq);
    }
    if (c == Cmd::DisableDevice) {
        t_.disable_all_wqs();
        d_.abort_all();
        s_.set_state(DeviceState::Disabled);
    }
    conclude(CmdErr::Success, 0);
}

void Commands::conclude(CmdErr err, uint16_t result)
{
    busy_ = false;
    waiting_ = false;
    s_.set(reg("CMDSTS"), CMDSTS_ERR.put(static_cast<uint8_t>(err)) | CMDSTS_RESULT.put(result));
    s_.counters.commands++;
    if (err != CmdErr::Success)
        s_.counters.command_errors++;
    if (Observer* o = s_.host.observer)
        o->command_done(static_cast<Cmd>(CMD_CODE.get(cmd_)), err, result);
    if (cmd_ & CMD_INT_REQ)
        e_.raise(INTC_CMD);
}

CmdErr Commands::run(uint32_t cmd, uint16_t& result)
{
    const auto code = static_cast<unsigned>(CMD_CODE.get(cmd));
    const auto operand = static_cast<uint32_t>(CMD_OPERAND.get(cmd));
    if (!((command_caps(s_.config) >> code) & 1))
        return CmdErr::InvalidCommand;
    const auto c = static_cast<Cmd>(code);
    if (s_.state() == DeviceState::Halted) {
        // Only a reset brings a halted device back, and Reset Device only when
        // GENSTS.RESET_TYPE says software may (idxd_halt); idxd itself answers HW_ERR for
        // a halted device without asking it (idxd_cmd_exec).
        const bool software = GENSTS_RESET_TYPE.get(s_.reg(reg("GENSTS"))) ==
                              static_cast<uint64_t>(ResetType::Software);
        return c == Cmd::ResetDevice && software ? reset_device() : CmdErr::HwError;
    }
    switch (c) {
    case Cmd::EnableDevice:
        return enable_device();
    case Cmd::DisableDevice:
        return disable_device();
    case Cmd::ResetDevice:
        return reset_device();
    case Cmd::EnableWq:
        return enable_wq(operand);
    case Cmd::DisableWq:
    case Cmd::DrainWq:
    case Cmd::AbortWq:
    case Cmd::ResetWq:
        return wq_set_command(c, operand);
    case Cmd::DrainAll:
    case Cmd::AbortAll:
    case Cmd::DrainPasid:
    case Cmd::AbortPasid:
        return all_command(c, operand);
    case Cmd::RequestIntHandle:
        return request_handle(operand, result);
    case Cmd::ReleaseIntHandle:
        return release_handle(operand);
    }
    return CmdErr::InvalidCommand;
}

CmdErr Commands::enable_device()
{
    // idxd takes DEV_ENABLED as success (idxd_device_enable).
    if (s_.state() == DeviceState::Enabled)
        return CmdErr::DevEnabled;
    if (!s_.bus_master)
        return CmdErr::BusMasterDisabled;
    if (CmdErr e = check_device_config(s_, t_); e != CmdErr::Success)
        return e;
    s_.set_state(DeviceState::Enabled);
    return CmdErr::Success;
}

CmdErr Commands::disable_device()
{
    // idxd takes any status with a bit of 0x31 as done (idxd_device_disable). The device
    // waits for what its WQs hold (progress() then disables).
    if (s_.state() != DeviceState::Enabled)
        return CmdErr::DisDevNotEnabled;
    waiting_ = true;
    for (unsigned wq = 0; wq < t_.wq_count(); wq++)
        if (t_.wq(wq).enabled())
            wait_for(wq);
    return CmdErr::Success;
}

CmdErr Commands::all_command(Cmd c, uint32_t operand)
{
    // Drain and Abort All act on every WQ, Drain and Abort PASID on the dedicated WQs
    // whose WQCFG names that PASID (no shared WQ takes descriptors from this device's
    // portals); in any state, a device with nothing enabled has nothing to wait for.
    const auto pasid = static_cast<uint32_t>(field(operand::PASID, "PASID").get(operand));
    for (unsigned wq = 0; wq < t_.wq_count(); wq++) {
        const uint64_t mode = t_.wq(wq).get(wq_reg("WQCFG_MODE"));
        if ((c == Cmd::DrainPasid || c == Cmd::AbortPasid) &&
            (!(mode & WQCFG_PASID_EN) || WQCFG_PASID.get(mode) != pasid))
            continue;
        if (c == Cmd::AbortAll || c == Cmd::AbortPasid)
            d_.abort(wq);
        else if (t_.wq(wq).enabled())
            wait_for(wq);
    }
    return CmdErr::Success;
}

CmdErr Commands::reset_device()
{
    // Every register and table back to its reset value, GENCTRL included (idxd unmasks its
    // error interrupts again after one: idxd_device_reset); the MSI-X permissions and the
    // interrupt handles belong to the function's MSI-X set-up and stay. CMDSTS is this
    // command's own, written when it completes.
    s_.regs->reset();
    t_.reset(false);
    d_.abort_all();
    return CmdErr::Success;
}

CmdErr Commands::enable_wq(uint32_t operand)
{
    // The operand is a WQ index (idxd_wq_enable writes wq->id); bits set above it make an
    // index the device does not have.
    if (operand >= t_.wq_count())
        return CmdErr::InvalidWqIndex;
    if (s_.state() != DeviceState::Enabled)
        return CmdErr::DevNotEnabled;
    WqEntry& w = t_.wq(operand);
    if (w.enabled())
        return CmdErr::WqEnabled; // idxd takes it as success (idxd_wq_enable)
    if (CmdErr e = check_wq_config(s_, t_, operand); e != CmdErr::Success)
        return e;
    if (CmdErr e = check_wq_pasid(s_, t_, operand); e != CmdErr::Success)
        return e;
    w.set_enabled(true);
    return CmdErr::Success;
}

CmdErr Commands::wq_set_command(Cmd c, uint32_t operand)
{
    // WQs 16 * BLOCK + i for each bit i of MASK (idxd: BIT(id % 16) | (id / 16) << 16). The
    // whole set is checked before any WQ changes.
    const auto mask = static_cast<uint32_t>(kMask.get(operand));
    const auto base = static_cast<unsigned>(16 * kBlock.get(operand));
    if (mask == 0)
        return CmdErr::InvalidWqIndex;
    if (s_.state() != DeviceState::Enabled)
        return CmdErr::WqCmdNotEnabled;
    for (unsigned i = 0; i < 16; i++)
        if (((mask >> i) & 1) && base + i >= t_.wq_count())
            return CmdErr::InvalidWqIndex;
    // Disable, Drain and Abort act on enabled WQs (idxd issues them only for those); Reset
    // WQ also puts a disabled WQ's configuration back.
    if (c != Cmd::ResetWq)
        for (unsigned i = 0; i < 16; i++)
            if (((mask >> i) & 1) && !t_.wq(base + i).enabled())
                return CmdErr::WqCmdNotEnabled;
    for (unsigned i = 0; i < 16; i++) {
        if (!((mask >> i) & 1))
            continue;
        WqEntry& w = t_.wq(base + i);
        if (c == Cmd::DrainWq || c == Cmd::DisableWq) {
            wait_for(base + i); // Disable WQ disables when the drain ends (progress())
            continue;
        }
        if (c == Cmd::ResetWq)
            w.set_enabled(false);
        d_.abort(base + i);
        if (c == Cmd::ResetWq)
            w.reset_config();
    }
    return CmdErr::Success;
}

CmdErr Commands::request_handle(uint32_t operand, uint16_t& result)
{
    // No IMS (GENCAP.MAX_IMS_MULT is 0), and vector 0 is the device's own, which takes no
    // completion interrupts (idxd asks for vectors 1 and up: idxd_wq_request_irq). The
    // handle of MSI-X index i is i.
    const auto index = static_cast<unsigned>(kIntIndex.get(operand));
    if ((operand & kIms) || index == 0 || index >= granted_.size())
        return CmdErr::InvalidIntIndex;
    granted_[index] = 1;
    result = static_cast<uint16_t>(index);
    return CmdErr::Success;
}

CmdErr Commands::release_handle(uint32_t operand)
{
    const auto handle = static_cast<unsigned>(kIntIndex.get(operand));
    if ((operand & kIms) || handle >= granted_.size() || !granted_[handle])
        return CmdErr::InvalidIntIndex;
    granted_[handle] = 0;
    return CmdErr::Success;
}

std::optional<unsigned> Commands::handle_vector(uint16_t handle) const
{
    if (handle >= granted_.size())
        return std::nullopt;
    if (s_.config.int_handles && !granted_[handle])
        return std::nullopt;
    return handle;
}

const char* Commands::invariant_violation() const
{
    if (bool(s_.reg(reg("CMDSTS")) & CMDSTS_ACTIVE) != busy_)
        return "CMDSTS.ACTIVE disagrees with the command in progress";
    if (busy_ && due_ > kTimeLimit)
        return "the command in progress ends beyond the model's time limit";
    if (waiting_ && !busy_)
        return "a drain is waited for with no command in progress";
    for (size_t wq = 0; wq < marks_.size(); wq++)
        if (marks_[wq] && (!waiting_ || marks_[wq] - 1 > d_.mark(static_cast<unsigned>(wq))))
            return "a drain waits for descriptors its WQ never numbered";
    for (size_t i = 0; i < granted_.size(); i++)
        if (granted_[i] && (!s_.config.int_handles || i == 0))
            return "an interrupt handle is out that the device never grants";
    return nullptr;
}

void Commands::save(StateWriter& w) const
{
    w.boolean(busy_);
    w.u32(cmd_);
    w.u64(due_);
    w.boolean(waiting_);
    for (uint64_t m : marks_)
        w.u64(m);
    pacer_.save(w);
    for (uint8_t g : granted_)
        w.boolean(g);
}

bool Commands::load(StateReader& r)
{
    busy_ = r.boolean();
    cmd_ = r.u32();
    due_ = r.u64();
    waiting_ = r.boolean();
    for (uint64_t& m : marks_)
        m = r.u64();
    pacer_.load(r);
    for (uint8_t& g : granted_)
        g = r.boolean();
    return r.ok();
}

} // namespace dmalab::dsa
