#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-vtd over qtest: event messages (completion and fault events) whose address the
guest aimed at the unit's registers, dmalab-ioat's, ROM or nothing, and at the interrupt
range. Usage: vtd_events_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qtest_case import main  # noqa: E402
from ioat_rig import CTL_COMPL_WRITE, DMACOUNT, HALTED  # noqa: E402
from vtd_qtest import (  # noqa: E402
    BASE, FEADDR, FECTL, FEDATA, FRCD, FSTS, FSTS_IQE, GCMD, GSTS, ICS, IEADDR, IECTL, IEDATA,
    IQT, QIE, TE, VtdCase, wait_desc)


class VtdEventTest(VtdCase):
    # Event messages whose address the guest chose. Each one is an interrupt
    # request: aimed at the unit's own registers, at dmalab-ioat's doorbell, at
    # ROM or at nothing, it is refused (events-refused), never written, and the
    # unit goes on. Each entry point that raises one: the queue's timer (a wait
    # with IF), a register write (unmasking IECTL or FECTL with an event
    # pending) and a translation (a DMA fault).
    MESSAGE_TARGETS = {
        "the unit's IQT": lambda io: BASE + IQT,
        "the unit's GCMD": lambda io: BASE + GCMD,
        "dmalab-ioat's DMACOUNT": lambda io: io.reg(0, DMACOUNT),
        "ROM": lambda io: 0xFFFFFFF0,
        "nothing": lambda io: 0x80000000,
    }

    def armed_ioat(self, io):
        """Channel 0 set up with a chain that a stray DMACOUNT write would
        start (and whose fetch would ask the unit for a translation)."""
        io.setup(0)
        (src, _), (dst, _) = io.buffer(64), io.buffer(64, seed=2)
        first = io.chain([(64, CTL_COMPL_WRITE, src, dst)])[0]
        io.wr(0, 0x10, first & 0xFFFFFFFF, 4)       # CHAINADDR
        io.wr(0, 0x14, first >> 32, 4)
        return io.rd(0, DMACOUNT, 2)

    def assert_unit_works(self, v, io, count_before):
        """Refused, not written; dmalab-ioat untouched; the queue still runs
        and an event aimed at the interrupt range is sent."""
        self.assertEqual(v.counter("events-refused"), 1)
        self.assertEqual(v.counter("fault-events") + v.counter("inv-events"), 0)
        self.assertEqual(io.rd(0, DMACOUNT, 2), count_before)
        self.assertFalse(v.r32(GSTS) & TE)
        self.assertTrue(io.qt.responsive())
        status = v.mem.alloc(64, fill=0)
        v.w32(ICS, 1)                                # clear IWC
        v.w32(IEADDR, 0xFEE00000)
        v.w32(IECTL, 0)
        if not v.r32(GSTS) & QIE:
            v.qi_enable()
        v.submit(wait_desc(status, 0x5A, interrupt=True))
        v.qt.clock_step(10_000)
        self.assertEqual(v.qt.readl(status), 0x5A)
        self.assertEqual(v.counter("inv-events"), 1)

    def for_each_target(self, act, props=""):
        """act(v, io, addr) -> DMACOUNT to expect, on a fresh machine for
        each target; then the unit must work."""
        for name, where in self.MESSAGE_TARGETS.items():
            with self.subTest(target=name):
                io, v = self.ioat_behind(props)
                count = self.armed_ioat(io)
                count = act(v, io, where(io)) or count
                self.assert_unit_works(v, io, count)

    def test_completion_message_from_the_queue_timer(self):
        def act(v, io, addr):
            v.w32(IEADDR, addr)
            v.w32(IEDATA, 1)
            v.w32(IECTL, 0)
            status = v.mem.alloc(64, fill=0)
            v.qi_enable()
            v.submit(wait_desc(status, 7, interrupt=True))
            v.qt.clock_step(10_000)                  # the timer completes it
            self.assertEqual(v.qt.readl(status), 7)
        self.for_each_target(act)

    def test_completion_message_from_the_iectl_unmask_write(self):
        def act(v, io, addr):
            v.w32(IEADDR, addr)
            v.w32(IEDATA, 1)
            status = v.mem.alloc(64, fill=0)
            v.qi_enable()
            v.submit(wait_desc(status, 7, interrupt=True))
            v.qt.clock_step(10_000)
            self.assertTrue(v.r32(IECTL) & 1 << 30)  # IP: masked, pending
            v.w32(IECTL, 0)                          # the write sends it
            self.assertFalse(v.r32(IECTL) & 1 << 30)
        self.for_each_target(act)

    def test_fault_message_from_the_fectl_unmask_write(self):
        def act(v, io, addr):
            v.w32(FEADDR, addr)
            v.qi_enable()
            v.submit(struct.pack("<QQ", 0x9, 0))     # IQE: a fault event, masked
            v.qt.clock_step(10_000)
            self.assertTrue(v.r32(FECTL) & 1 << 30)
            v.w32(FECTL, 0)
            self.assertFalse(v.r32(FECTL) & 1 << 30)
            # As Linux recovers: the bad descriptor replaced, IQE cleared.
            v.qt.memwrite(v.iq, wait_desc(v.mem.alloc(64, fill=0), 0))
            v.w32(FSTS, FSTS_IQE)
        self.for_each_target(act)

    def test_fault_message_from_a_translation(self):
        def act(v, io, addr):
            v.w32(FEADDR, addr)
            v.w32(FECTL, 0)
            v.command(TE)                            # no root table: DMA faults
            io.wr(0, DMACOUNT, 1, 2)                 # the fetch is translated
            io.settle()
            self.assertEqual(io.state(0), HALTED)
            self.assertGreaterEqual(v.counter("faults-recorded"), 1)
            v.w32(GCMD, v.r32(GSTS) & QIE)           # TE off again
            return io.rd(0, DMACOUNT, 2)
        self.for_each_target(act)

    def test_fault_message_from_an_interrupt_request(self):
        def act(v, io, addr):
            v.w32(FEADDR, addr)
            v.w32(FECTL, 0)
            v.ir_enable()
            io.use_msix()       # channel 1's MSI-X names entry 9, not present
            io.pci.msix_set_vector(io.bdf, 1, 0xFEE00000 | 9 << 5 | 0x18, 0)
            io.setup(1)
            (src, _), (dst, _) = io.buffer(64), io.buffer(64, seed=2)
            io.start(1, io.chain([(64, CTL_COMPL_WRITE | 1, src, dst)])[0], 1)
            io.settle()
            self.assertEqual(v.counter("ir-faults"), 1)
            self.assertEqual(v.r64(FRCD + 8) >> 32 & 0xFF, 0x22)
        self.for_each_target(act, ",intremap=on")

    def test_message_to_the_interrupt_range_is_sent(self):
        io, v = self.ioat_behind()
        v.w32(FEADDR, 0xFEE00000)
        v.w32(FEDATA, 0x31)
        v.w32(FECTL, 0)
        v.command(TE)
        self.copy_fails(io)
        self.assertEqual(v.counter("fault-events"), 1)
        self.assertEqual(v.counter("events-refused"), 0)


if __name__ == "__main__":
    main()
