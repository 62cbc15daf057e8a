// SPDX-License-Identifier: GPL-2.0-or-later

#include "dmalab/copy.h"

#include <algorithm>
#include <cstring>

namespace dmalab
{

namespace
{

// Bounce pieces end at page boundaries, so one page that is not RAM sends only that page
// through the bounce buffer; the copy maps directly again from the next page.
constexpr uint64_t kPage = 4096;

uint64_t to_page_end(uint64_t addr)
{
    return kPage - (addr & (kPage - 1));
}

} // namespace

CopyResult copy(DmaMemory& mem, const MemAttrs& attrs, uint64_t dst, uint64_t src, uint64_t len,
                const std::function<bool()>& alive)
{
    CopyResult r;
    while (r.bytes < len) {
        const uint64_t left = len - r.bytes;
        const size_t want = static_cast<size_t>(std::min<uint64_t>(left, SIZE_MAX));
        DmaMemory::Mapping s = mem.map(src, want, Access::Read, attrs);
        if (!alive()) {
            if (s)
                mem.unmap(s, Access::Read, 0);
            r.stopped = true;
            return r;
        }
        if (s) {
            DmaMemory::Mapping d = mem.map(dst, s.len, Access::Write, attrs);
            if (!alive()) {
                if (d)
                    mem.unmap(d, Access::Write, 0);
                mem.unmap(s, Access::Read, 0);
                r.stopped = true;
                return r;
            }
            if (d) {
                size_t n = std::min(s.len, d.len);
                std::memmove(d.host, s.host, n);
                mem.unmap(d, Access::Write, n);
                mem.unmap(s, Access::Read, n);
                src += n;
                dst += n;
                r.bytes += n;
                continue;
            }
            mem.unmap(s, Access::Read, 0);
        }
        // One side is not plain RAM here: a bounce piece, up to the next page boundary on
        // either side. read()/write() also say why a range is unreachable.
        uint8_t bounce[kPage];
        size_t n = static_cast<size_t>(
            std::min({left, to_page_end(src), to_page_end(dst), uint64_t{sizeof bounce}}));
        DmaResult rd = mem.read(src, bounce, n, attrs);
        if (!alive()) {
            r.stopped = true;
            return r;
        }
        if (!rd.ok()) {
            r.failed = CopyResult::Source;
            r.error = rd;
            return r;
        }
        DmaResult wr = mem.write(dst, bounce, n, attrs);
        if (!alive()) {
            r.bytes += wr.ok() ? n : wr.done;
            r.stopped = true;
            return r;
        }
        if (!wr.ok()) {
            r.bytes += wr.done;
            r.failed = CopyResult::Destination;
            r.error = wr;
            return r;
        }
        src += n;
        dst += n;
        r.bytes += n;
    }
    return r;
}

} // namespace dmalab
