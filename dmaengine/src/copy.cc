// SPDX-License-Identifier: GPL-2.0-or-later

#include "copy.h"

#include <algorithm>
#include <cstring>

namespace dmalab::ioat
{

namespace
{

// Fallback chunk when a range cannot be mapped directly (MMIO, or a mapping resource is busy).
constexpr size_t kBounceSize = 4096;

} // namespace

CopyResult copy(DmaMemory& mem, uint64_t dst, uint64_t src, uint64_t len)
{
    CopyResult r;
    while (len > 0) {
        size_t slen = static_cast<size_t>(len);
        void* s = mem.map(src, &slen, Access::Read);
        if (s) {
            size_t dlen = slen;
            void* d = mem.map(dst, &dlen, Access::Write);
            if (d) {
                size_t n = std::min(slen, dlen);
                std::memmove(d, s, n);
                mem.unmap(d, dlen, Access::Write, n);
                mem.unmap(s, slen, Access::Read, n);
                src += n;
                dst += n;
                len -= n;
                r.bytes += n;
                continue;
            }
            mem.unmap(s, slen, Access::Read, 0);
        }
        // Not directly mappable: go through a bounce buffer, which also tells an inaccessible
        // range from one that merely cannot be mapped.
        uint8_t bounce[kBounceSize];
        size_t n = static_cast<size_t>(std::min<uint64_t>(len, kBounceSize));
        if (!mem.read(src, bounce, n)) {
            r.failed = CopyResult::Source;
            return r;
        }
        if (!mem.write(dst, bounce, n)) {
            r.failed = CopyResult::Destination;
            return r;
        }
        src += n;
        dst += n;
        len -= n;
        r.bytes += n;
    }
    return r;
}

} // namespace dmalab::ioat
