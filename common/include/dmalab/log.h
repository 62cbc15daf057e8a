// SPDX-License-Identifier: GPL-2.0-or-later
// Where a model reports what the guest did wrong and what it asked for that is not modelled.
// QEMU's glue maps these to qemu_log_mask(LOG_GUEST_ERROR / LOG_UNIMP).
#pragma once

#include <cstdarg>
#include <cstdio>

namespace dmalab
{

enum class LogKind { GuestError, Unimplemented };

class Log
{
  public:
    virtual ~Log() = default;
    virtual void message(LogKind kind, const char* text) = 0;
};

// printf-style helper; messages are short, longer ones are cut.
[[gnu::format(printf, 3, 4)]] inline void logf(Log& log, LogKind kind, const char* fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log.message(kind, buf);
}

// A Log that drops everything, for models built without one.
class NullLog final : public Log
{
  public:
    void message(LogKind, const char*) override {}
};

} // namespace dmalab
