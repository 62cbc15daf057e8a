#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-vtd's interrupt remapping over qtest (intremap=on): dmalab-ioat's MSI-X and the
IOAPIC's messages through the unit, and a hostile guest: a remapping table in MMIO, a table
past the address width, a storm of interrupt entry cache invalidations, and a DMA copy
into the interrupt window. Each test starts its own QEMU and checks it exits cleanly.

Usage: vtd_ir_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libqtest  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import MachineCase, main  # noqa: E402
from ioat_rig import CTL_COMPL_WRITE, CTL_INT_EN, DMACOUNT, DONE, Ioat  # noqa: E402
from vtd_qtest import (  # noqa: E402
    BASE, CFI, ECAP, FECTL, FEADDR, FRCD, GCMD, GSTS, IRE, IRTA, SIRTP, Vtd)

IOAPIC = 0xFEC00000
IOAPIC_SID = 0xFF00           # bus 0xff, devfn 0: the DMAR table's IOAPIC scope
MSI = 0xFEE00000


def remappable(index, shv=True):
    """A remappable-format interrupt address naming `index` (VT-d 5.1.2.2)."""
    return (MSI | (index & 0x7FFF) << 5 | 1 << 4 | (1 << 3 if shv else 0)
            | (index >> 15 & 1) << 2)


def irte(vector, dest=0):
    """A present entry, fixed delivery, xAPIC destination `dest`."""
    return 1 | vector << 16 | dest << 40


def verify_sid(sid):
    return 1 << 18 | sid


def reason(v):
    return v.r64(FRCD + 8) >> 32 & 0xFF


def delivered(qt):
    """(dest, dest_mode, delivery_mode, vector, trigger_mode) of each message QEMU's
    APIC received, from its trace."""
    return [tuple(int(x) for x in m) for m in re.findall(
        r"apic_deliver_irq dest (\d+) dest_mode (\d+) delivery_mode (\d+) vector (\d+) "
        r"trigger_mode (\d+)", qt.stderr)]


class IrTest(MachineCase):
    def ioat_behind(self, props=",intremap=on"):
        # QEMU's APIC traces what it is given: the message the unit delivered.
        io = Ioat(qtest_case.QEMU, args=["-device", "dmalab-vtd,id=vtd" + props,
                              "-trace", "apic_deliver_irq"])
        self.track(io.qt)
        v = Vtd(io.qt)
        v.mem = io.mem
        v.w32(FEADDR, MSI)
        v.w32(FECTL, 0)
        return io, v

    def interrupt(self, io, ch, address, data=0):
        """Channel `ch` completes a copy with INT_EN; its MSI-X entry holds
        (address, data)."""
        io.use_msix()
        io.pci.msix_set_vector(io.bdf, ch, address, data)
        compl = io.setup(ch)
        (src, _), (dst, _) = io.buffer(256), io.buffer(256, seed=3)
        first = io.chain([(256, CTL_COMPL_WRITE | CTL_INT_EN, src, dst)])[0]
        io.start(ch, first, 1)
        io.settle()
        self.assertEqual(io.qt.readq(compl), first | DONE)

    def test_capabilities_follow_the_property(self):
        for props, ir, eim in (("", 0, 0), (",intremap=on", 1, 1),
                               (",intremap=on,eim=off", 1, 0)):
            with self.subTest(props=props):
                qt = self.track(libqtest.QTest(qtest_case.QEMU,
                                               ["-device", "dmalab-vtd" + props]))
                ecap = qt.readq(BASE + ECAP)
                self.assertEqual((ecap >> 3 & 1, ecap >> 4 & 1), (ir, eim))

    def test_msix_through_an_entry(self):
        io, v = self.ioat_behind()
        v.ir_enable()
        v.irte(5, irte(0x40, dest=1) | 1 << 4, verify_sid(io.bdf))  # level
        self.interrupt(io, 0, remappable(5))
        self.assertEqual(v.counter("ir-remapped"), 1)
        self.assertEqual(delivered(io.qt), [(1, 0, 0, 0x40, 1)])
        self.assertEqual(v.counter("ir-faults"), 0)
        self.assertEqual(v.counter("iec-misses"), 1)
        self.interrupt(io, 0, remappable(5))
        self.assertEqual(v.counter("iec-hits"), 1)

    def test_msix_from_the_wrong_requester_is_blocked(self):
        io, v = self.ioat_behind()
        v.ir_enable()
        v.irte(5, irte(0x40), verify_sid(io.bdf + 1))
        self.interrupt(io, 2, remappable(5))
        self.assertEqual(v.counter("ir-faults"), 1)
        self.assertEqual([m for m in delivered(io.qt) if m[3] == 0x40], [])
        self.assertEqual(reason(v), 0x26)
        self.assertEqual(v.r64(FRCD + 8) & 0xFFFF, io.bdf)
        self.assertEqual(v.r64(FRCD) >> 48, 5)
        self.assertEqual(v.counter("fault-events"), 1)

    def test_compatibility_format_is_blocked_until_cfi(self):
        io, v = self.ioat_behind()
        v.ir_enable()
        self.interrupt(io, 0, MSI, 0x41)
        self.assertEqual(reason(v), 0x25)
        self.assertEqual([m for m in delivered(io.qt) if m[3] == 0x41], [])
        v.command(CFI)
        self.interrupt(io, 0, MSI | 2 << 12, 0x41)
        self.assertEqual(v.counter("ir-compat"), 1)
        self.assertEqual([m for m in delivered(io.qt) if m[3] == 0x41], [(2, 0, 0, 0x41, 0)])

    def ioapic_pin(self, io, pin, index):
        """IOAPIC pin `pin` programmed in remappable format (index in RTE bits
        63:49 and 11, format bit 48), edge, vector = pin, then raised."""
        lo = pin | (index >> 15 & 1) << 11
        hi = ((index & 0x7FFF) << 1 | 1) << 16
        for reg, val in ((0x10 + 2 * pin, lo), (0x11 + 2 * pin, hi)):
            io.qt.writel(IOAPIC, reg)
            io.qt.writel(IOAPIC + 0x10, val)
        io.qt.set_irq_in("ioapic", pin, 1)
        io.qt.set_irq_in("ioapic", pin, 0)

    def test_ioapic_messages_carry_its_requester_id(self):
        io, v = self.ioat_behind()
        v.ir_enable()
        v.irte(3, irte(0x33), verify_sid(IOAPIC_SID))
        v.irte(4, irte(0x34), verify_sid(io.bdf))
        self.ioapic_pin(io, 19, 3)
        self.assertEqual(v.counter("ir-remapped"), 1)
        self.assertIn((0, 0, 0, 0x33, 0), delivered(io.qt))   # the entry's vector, not 19
        self.ioapic_pin(io, 20, 4)
        self.assertEqual(v.counter("ir-faults"), 1)
        self.assertEqual(reason(v), 0x26)
        self.assertEqual(v.r64(FRCD + 8) & 0xFFFF, IOAPIC_SID)

    def test_without_intremap_the_ioapic_is_not_behind_the_unit(self):
        io, v = self.ioat_behind("")
        self.ioapic_pin(io, 19, 3)
        self.assertEqual(v.counter("interrupts"), 0)

    def test_table_in_mmio(self):
        """The table at the unit's own registers, then at dmalab-ioat's: every
        request is blocked (23h), neither device's registers change."""
        for where in ("unit", "ioat"):
            with self.subTest(table=where):
                io, v = self.ioat_behind()
                table = BASE if where == "unit" else io.reg(0, 0) & ~0xFFF
                v.ir_enable(irta=table | 15)
                gsts, count = v.r32(GSTS), io.rd(0, DMACOUNT, 2)
                self.interrupt(io, 1, remappable(0x12))  # GCMD's entry, if it were read
                self.assertEqual(reason(v), 0x23)
                self.assertEqual(v.counter("ir-remapped"), 0)
                self.assertEqual((v.r32(GSTS), io.rd(0, DMACOUNT, 2)), (gsts, count))
                self.assertTrue(io.qt.responsive())

    def test_table_past_the_address_width(self):
        io, v = self.ioat_behind(",intremap=on,aw-bits=39")
        # 65536 entries from the last page below 2^39, bits above it set (ignored).
        v.ir_enable(irta=0xFFFF << 48 | (1 << 39) - 0x1000 | 15)
        self.interrupt(io, 0, remappable(0x8000))
        self.assertEqual(reason(v), 0x23)
        self.assertEqual(v.r64(FRCD) >> 48, 0x8000)
        self.assertTrue(io.qt.responsive())

    def test_storm_of_interrupt_cache_invalidations(self):
        io, v = self.ioat_behind(",intremap=on,iec-inv-ns=1000")
        v.ir_enable()
        v.irte(5, irte(0x40))
        rounds, per_round = 20, 255
        for r in range(rounds):
            descs = [struct.pack("<QQ", (i % 16) << 32 | (i % 3) << 27 | 1 << 4 | 4, 0)
                     if i % 2 else struct.pack("<QQ", 4, 0) for i in range(per_round)]
            v.submit(*descs)
            v.qt.clock_step(10_000)                    # ten of them, no more
            self.assertTrue(io.qt.responsive())
            self.interrupt(io, r % 4, remappable(5))   # interrupts go on meanwhile
            v.qt.clock_step(per_round * 1000)
        self.assertEqual(len([m for m in delivered(io.qt) if m[3] == 0x40]), rounds)
        total = v.counter("iec-inv-global") + v.counter("iec-inv-index")
        self.assertEqual(total, 1 + rounds * per_round)
        self.assertEqual(v.counter("ir-remapped"), rounds)
        self.assertEqual(v.counter("queue-errors"), 0)

    def test_copy_into_the_interrupt_window(self):
        """A DMA write to 0xFEEx_xxxx is a run of interrupt requests: the
        blocked ones are recorded, nothing else happens."""
        io, v = self.ioat_behind()
        v.ir_enable()
        compl = io.setup(0)
        src, _ = io.buffer(4096)
        first = io.chain([(4096, CTL_COMPL_WRITE, src, MSI + 0x1000)])[0]
        io.start(0, first, 1)
        io.settle()
        self.assertEqual(io.qt.readq(compl), first | DONE)
        self.assertEqual(v.counter("interrupts"), 1024)
        self.assertGreaterEqual(v.counter("faults-recorded"), 1)
        self.assertTrue(io.qt.responsive())
        self.assertEqual(v.r32(GSTS) & (IRE | SIRTP), IRE | SIRTP)
        self.assertEqual(v.r64(IRTA) & ~0xFFF, v.irt)
        self.assertEqual(v.r32(GCMD), 0)


if __name__ == "__main__":
    main()
