// SPDX-License-Identifier: GPL-2.0-or-later
// The fault doorbell's registers.

#include "dmalab/fault_doorbell.h"

#include <array>

namespace dmalab::faults
{
namespace
{

using A = FieldAccess;
using D = Doorbell;
constexpr Field kIdFields[] = {{"ID", 0, 32, A::RO}};
constexpr Field kSelectFields[] = {{"RULE", 0, 16, A::RW}};
constexpr Field kCommandFields[] = {{"CMD", 0, 2, A::WO}};
constexpr Field kStatusFields[] = {{"OWNED", 0, 1, A::RO},
                                   {"ARMED", 1, 1, A::RO},
                                   {"RELEASED", 2, 1, A::RO},
                                   {"ENDED", 3, 1, A::RO}};
constexpr Field kCountFields[] = {{"COUNT", 0, 64, A::RO}};

// clang-format off
constexpr std::array<RegDef<D>, 6> kRegs = {{
    {0, "FAULT_ID",       doorbell::ID,       4, doorbell::kId, kIdFields,      nullptr,           nullptr},
    {1, "FAULT_SELECT",   doorbell::SELECT,   4, 0,             kSelectFields,  nullptr,           nullptr},
    {2, "FAULT_COMMAND",  doorbell::COMMAND,  4, 0,             kCommandFields, nullptr,           &D::write_command},
    {3, "FAULT_STATUS",   doorbell::STATUS,   4, 0,             kStatusFields,  &D::read_status,   nullptr},
    {4, "FAULT_INJECTED", doorbell::INJECTED, 8, 0,             kCountFields,   &D::read_injected, nullptr},
    {5, "FAULT_TOTAL",    doorbell::TOTAL,    8, 0,             kCountFields,   &D::read_total,    nullptr},
}};
// clang-format on
static_assert(well_formed(kRegs, doorbell::kWindow));

} // namespace

Doorbell::Doorbell(Injector& injector, Log& log, const char* name)
    : injector_(injector), regs_(*this, kRegs, doorbell::kWindow, log, name)
{
}

void Doorbell::write_command(uint64_t, uint64_t written, uint64_t bytes)
{
    if (!(bytes & 0xff))
        return;
    uint32_t cmd = written & 3;
    if (cmd == doorbell::kArm || cmd == doorbell::kDisarm) {
        injector_.arm(selected(), cmd == doorbell::kArm);
    } else if (cmd == doorbell::kRelease) {
        unsigned rule = selected();
        if (injector_.release(rule) && release_hook_ && release_hook_(release_opaque_, rule))
            injector_.ended(rule);
    }
}

uint64_t Doorbell::read_status(uint64_t)
{
    auto armed = injector_.armed(selected());
    if (!armed)
        return 0;
    return doorbell::kOwned | (*armed ? doorbell::kArmed : 0) |
           (injector_.released(selected()) ? doorbell::kReleased : 0) |
           (injector_.hold_ended(selected()) ? doorbell::kEnded : 0);
}

uint64_t Doorbell::read_injected(uint64_t)
{
    return injector_.injected(selected());
}

uint64_t Doorbell::read_total(uint64_t)
{
    return injector_.total();
}

} // namespace dmalab::faults
