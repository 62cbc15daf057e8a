// SPDX-License-Identifier: GPL-2.0-or-later
// Migration: the model's state as a flat stream, and its load, which takes only a state the
// device could have reached with the destination's configuration.

#include "parts.h"

namespace dmalab::dsa
{

namespace
{

constexpr uint32_t kStateMagic = 0x31415344; // "DSA1"
constexpr uint16_t kStateVersion = 2;        // 2: the data path

// What the properties set: the destination's own, which a stream must match, never set.
bool capability(unsigned index)
{
    for (unsigned i : {reg("VERSION"), reg("GENCAP"), reg("WQCAP"), reg("GRPCAP"), reg("ENGCAP"),
                       reg("OPCAP", 0), reg("OPCAP", 1), reg("OPCAP", 2), reg("OPCAP", 3),
                       reg("OFFSETS_LO"), reg("OFFSETS_HI"), reg("CMDCAP")})
        if (index == i)
            return true;
    return false;
}

// The bits register `index` of the map defines.
uint64_t defined_bits(unsigned index)
{
    unsigned i = 0;
    for (const RegSpec& r : kRegisters)
        for (unsigned k = 0; k < r.count; k++, i++)
            if (i == index) {
                uint64_t m = 0;
                for (const Field& f : r.fields)
                    m |= f.mask();
                return m;
            }
    return 0;
}

// The counters and the PCI state, in stream order.
template <class IO, class S> void io_shared(IO& io, S& s)
{
    io(s.bus_master);
    io(s.pasid_enabled);
    io(s.pasid_privileged);
    io(s.counters.commands);
    io(s.counters.command_errors);
    io(s.counters.swerrs);
    io(s.counters.swerr_overflows);
    io(s.counters.halts);
    io(s.counters.interrupts);
    io(s.counters.refused_writes);
    io(s.counters.submitted);
    io(s.counters.dropped);
    io(s.counters.aborted);
    io(s.counters.descriptors);
    io(s.counters.descriptor_errors);
    io(s.counters.bytes);
    io(s.counters.batches);
    io(s.counters.records);
}

// The geometry, in stream order: a stream from a device shaped otherwise is refused.
void geometry(StateWriter& w, const Config& c)
{
    w.u16(static_cast<uint16_t>(c.wqs));
    w.u16(static_cast<uint16_t>(c.groups));
    w.u16(static_cast<uint16_t>(c.engines));
    w.u16(static_cast<uint16_t>(c.msix_vectors));
}

} // namespace

void Dsa::save(StateWriter& w) const
{
    const Shared& s = p_->s;
    w.u32(kStateMagic);
    w.u16(kStateVersion);
    geometry(w, s.config);
    w.u32(kRegCount);
    for (unsigned i = 0; i < kRegCount; i++)
        w.u64(s.reg(i));
    p_->tables.save(w);
    p_->commands.save(w);
    p_->data.save(w);
    StateSave out{w};
    io_shared(out, s);
}

bool Dsa::load(StateReader& r)
{
    // Whatever happens, the model starts from reset: a refused stream leaves it there.
    reset();
    StateWriter ours;
    geometry(ours, p_->s.config);
    if (r.u32() != kStateMagic || r.u16() != kStateVersion)
        r.reject();
    for (uint8_t b : ours.bytes)
        if (r.u8() != b)
            r.reject();
    if (r.u32() != kRegCount)
        r.reject();
    Shared& s = p_->s;
    for (unsigned i = 0; i < kRegCount && r.ok(); i++) {
        uint64_t v = r.u64();
        if (capability(i) ? v != s.reg(i) : (v & ~defined_bits(i)) != 0)
            r.reject();
        s.set(i, v);
    }
    p_->tables.load(r);
    p_->commands.load(r);
    p_->data.load(r);
    StateLoad in{r};
    io_shared(in, s);
    if (!r.finished() || invariant_violation()) {
        reset();
        return false;
    }
    p_->commands.resume();
    p_->data.resume();
    return true;
}

} // namespace dmalab::dsa
