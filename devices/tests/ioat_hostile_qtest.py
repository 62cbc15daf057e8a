#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-ioat against a hostile guest, over qtest: DMA and interrupt messages aimed at the
device itself (its BAR, its config space through MMCONFIG, the slot control of the port above
it) and rings that never run dry. QEMU must survive each, stay responsive, and, where
valgrind is installed, run clean under it (set DMALAB_NO_VALGRIND=1 to skip that). Without
valgrind the cases run all the same, and the test exits 77 (skipped) when they pass, saying why.

Usage: ioat_hostile_qtest.py QEMU_BINARY [unittest options]"""

import os
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ioat_rig import (  # noqa: E402
    ACTIVE, CHANCMD, CHANCMP, CHANERR, CHANERR_COMPLETION_ADDR, CHANERR_WRITE_DATA,
    CMD_RESET, CTL_COMPL_WRITE, CTL_INT_EN, CTL_NULL, DEVICE, DONE, HALTED, STRIDE, VENDOR,
    Ioat, descriptor)
from libqtest import Q35_ECAM  # noqa: E402
import libqtest  # noqa: E402

QEMU = None


def without_valgrind():
    """Why QEMU runs without valgrind here, or None when it runs under it."""
    if os.environ.get("DMALAB_NO_VALGRIND"):
        return "DMALAB_NO_VALGRIND is set"
    if not shutil.which("valgrind"):
        return "valgrind is not installed"
    return None


def wrapper():
    if without_valgrind():
        return ()
    # Memory errors make QEMU exit with 99; leaks at exit are QEMU's own business.
    return ("valgrind", "-q", "--error-exitcode=99", "--leak-check=no",
            "--track-origins=no")


def ecam(bdf, off):
    return Q35_ECAM + (bdf << 12) + off


class Hostile(unittest.TestCase):
    """Each case with sync-start on: the first step runs inside the doorbell MMIO write."""
    SYNC = "on"

    def start(self, device="dmalab-ioat", args=()):
        device += ",sync-start=" + self.SYNC
        self.io = Ioat(QEMU, device=device, args=args, wrapper=wrapper(), timeout=120)
        self.qt = self.io.qt
        return self.io

    def tearDown(self):
        io = getattr(self, "io", None)
        if io is None:
            return
        rc = io.close()
        err = io.qt.stderr
        self.assertEqual(rc, 0, "QEMU exited with %s:\n%s" % (rc, err[-3000:]))
        self.assertNotIn("Invalid read", err)
        self.assertNotIn("Invalid write", err)

    def copy(self, ch, src, dst, size, ctl=CTL_COMPL_WRITE | CTL_INT_EN):
        first = self.io.chain([(size, ctl, src, dst)])[0]
        self.io.start(ch, first, 1)
        return first

    def assert_works(self, ch=0):
        """A fresh channel set-up and a verified copy with its interrupt: the device is
        alive and well."""
        io = self.io
        io.use_msix()
        io.clear_irqs()
        completion = io.setup(ch)
        src, data = io.buffer(8192, seed=ch + 3)
        dst = io.mem.alloc(8192, fill=0)
        first = self.copy(ch, src, dst, 8192)
        io.settle(1_000_000, 8)
        self.assertEqual(self.qt.memread(dst, 8192), data)
        self.assertEqual(self.qt.readq(completion), first | DONE)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        self.assertTrue(self.qt.responsive())

    def test_copy_into_its_own_registers(self):
        io = self.start()
        io.use_msix()
        completion = io.setup(0)
        # A copy whose destination is channel 0's own CHANCMD: a RESET byte.
        src, _ = io.buffer(64)
        self.qt.writeb(src, CMD_RESET)
        first = self.copy(0, src, io.reg(0, CHANCMD), 1)
        io.settle(1_000_000, 4)
        # QEMU's re-entrancy guard refuses the access: a write data error, no reset.
        self.assertEqual(io.chanerr(0), CHANERR_WRITE_DATA)
        self.assertEqual(io.state(0), HALTED)
        self.assertEqual(self.qt.readq(completion), HALTED)  # no descriptor completed
        self.assertIn("Blocked re-entrant IO", self.qt.stderr)
        io.wr(0, CHANERR, io.chanerr(0), 4)
        self.assert_works(0)
        del first

    def test_translated_copy_into_its_own_registers(self):
        """With ATS on (ats=on, Enable set; no IOMMU, so a translation is the address
        itself) the copy reaches its BAR as a translated request to system memory: the
        re-entrancy guard refuses it there too, and the cached translation changes
        nothing."""
        io = self.start("dmalab-ioat,id=ioat0,ats=on,ats-audit=on")
        cap = io.pci.find_ext_capability(io.bdf, 0x0F)
        io.pci.cfg_write(io.bdf, cap + 6, 0x8000, 2)
        io.use_msix()
        for _ in range(2):
            io.setup(0)
            src, _ = io.buffer(64)
            self.qt.writeb(src, CMD_RESET)
            self.copy(0, src, io.reg(0, CHANCMD), 1)
            io.settle(1_000_000, 4)
            self.assertEqual(io.chanerr(0), CHANERR_WRITE_DATA)
            self.assertEqual(io.state(0), HALTED)
            io.wr(0, CHANERR, io.chanerr(0), 4)
        self.assertIn("Blocked re-entrant IO", self.qt.stderr)
        self.assertGreater(self.qt.counter("/machine/peripheral/ioat0", "ats-hits"), 0)
        self.assert_works(0)

    def test_copy_into_its_own_fault_doorbell(self):
        """The test-only doorbell is part of the device's BAR: its own DMA cannot arm a
        rule either."""
        plan = libqtest.fault_plan(self, [{"kind": "fail", "chanerr": "0x100",
                                           "armed": False}])
        io = self.start(f"dmalab-ioat,fault-doorbell=on,fault-plan={plan}")
        io.use_msix()
        io.setup(0)
        # Select rule 0, then "arm" written by the copy into FAULT_COMMAND.
        self.qt.writel(io.bar + 0x2004, 0)
        src, _ = io.buffer(64)
        self.qt.writel(src, 1)
        self.copy(0, src, io.bar + 0x2008, 4)
        io.settle(1_000_000, 4)
        self.assertEqual(io.chanerr(0), CHANERR_WRITE_DATA)
        self.assertIn("Blocked re-entrant IO", self.qt.stderr)
        self.assertEqual(self.qt.readl(io.bar + 0x200C), 1)  # owned, not armed
        io.wr(0, CHANERR, io.chanerr(0), 4)
        self.assert_works(0)   # and the rule did not fire on it
        self.assertEqual(self.qt.readq(io.bar + 0x2010), 0)

    def test_completion_written_to_its_own_registers(self):
        io = self.start()
        io.use_msix()
        io.setup(0)
        target = io.reg(1, CHANCMD)  # another channel's command register
        io.wr(0, CHANCMP, target & 0xFFFFFFFF, 4)
        io.wr(0, CHANCMP + 4, target >> 32, 4)
        io.setup(1)
        io.chain([(1, CTL_NULL | CTL_COMPL_WRITE, 0, 0)])
        self.copy(0, 0, 0, 1, CTL_NULL | CTL_COMPL_WRITE)
        io.settle(1_000_000, 4)
        self.assertEqual(io.chanerr(0), CHANERR_COMPLETION_ADDR)
        self.assertEqual(io.state(0), HALTED)
        self.assertEqual(io.chanerr(1), 0)
        io.wr(0, CHANERR, io.chanerr(0), 4)
        self.assert_works(0)

    def test_interrupt_message_aimed_at_itself(self):
        """Channel 0's completion interrupt is a DWORD write of CMD_RESET into channel 1's
        CHANCMD while channels 1 and 2 are each halfway through a 1 MiB copy. QEMU's
        re-entrancy guard refuses the message: nothing resets, both copies finish. (Were it
        accepted, channel 1 would reset and drop its copy: the model resets at once, and the
        message's upper bytes write DMACOUNT.)"""
        size = 1 << 20
        # 1 GB/s in 64 KiB pieces: each copy's data phase lasts 1,048,576 ns of virtual time.
        io = self.start("dmalab-ioat,id=ioat,bandwidth=1000000000,step-bytes=65536")
        io.use_msix()
        io.pci.msix_set_vector(io.bdf, 0, io.reg(1, CHANCMD), CMD_RESET)
        compl = [io.setup(ch) for ch in range(3)]
        copies = {}
        for ch in (1, 2):
            src, data = io.buffer(size, seed=ch + 5)
            dst = io.mem.alloc(size, fill=0)
            copies[ch] = (self.copy(ch, src, dst, size), dst, data)
        io.qt.clock_step(500_000)
        for ch, (_, dst, data) in copies.items():
            self.assertEqual(io.state(ch), ACTIVE)
            self.assertEqual(self.qt.memread(dst, 4096), data[:4096], "no progress")
            self.assertEqual(self.qt.memread(dst + size - 4096, 4096), bytes(4096),
                             "the copy is not in flight")
        first = self.copy(0, 0, 0, 1, CTL_NULL | CTL_INT_EN | CTL_COMPL_WRITE)
        io.qt.clock_step(1000)   # with sync-start off, channel 0 steps from its timer
        self.assertEqual(io.state(0), DONE)
        self.assertEqual(self.qt.readq(compl[0]), first | DONE)
        # The message was sent, and refused: channel 1 was not reset.
        for ch in (1, 2):
            self.assertEqual((io.state(ch), io.chanerr(ch), self.qt.readq(compl[ch])),
                             (ACTIVE, 0, 0), f"channel {ch} disturbed")
        self.assertIn("Blocked re-entrant IO on MemoryRegion: dmalab-ioat-mmio at addr: "
                      f"0x{STRIDE * 2 + CHANCMD:X}", self.qt.stderr)
        io.settle(1_000_000, 8)
        for ch, (desc, dst, data) in copies.items():
            self.assertEqual(self.qt.memread(dst, size), data, f"channel {ch}'s copy")
            self.assertEqual(self.qt.readq(compl[ch]), desc | DONE)
            self.assertEqual(io.chansts(ch), desc | DONE)
            self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        self.assertEqual(self.qt.counter("/machine/peripheral/ioat", "descriptors"), 3)
        # 'interrupts' counts messages delivered: channels 1 and 2's, not the refused one.
        self.assertEqual(self.qt.counter("/machine/peripheral/ioat", "interrupts"), 2)
        self.assertTrue(self.qt.responsive())
        self.assert_works(1)

    def test_interrupt_message_aimed_at_nothing(self):
        """A message aimed at unassigned bus space goes nowhere and is not counted as
        delivered; the channel keeps working."""
        io = self.start("dmalab-ioat,id=ioat")
        io.use_msix()
        io.pci.msix_set_vector(io.bdf, 0, 0xFEB0_0000, 0x1234)  # below the IOAPIC: nothing
        io.setup(0)
        self.copy(0, 0, 0, 1, CTL_NULL | CTL_INT_EN | CTL_COMPL_WRITE)
        io.settle(1_000_000, 4)
        self.assertEqual(io.state(0), DONE)
        self.assertEqual(self.qt.counter("/machine/peripheral/ioat", "interrupts"), 0)
        self.assertTrue(self.qt.responsive())
        self.assert_works(0)

    def test_flr_by_its_own_dma_mid_copy(self):
        io = self.start(args=["-m", "512"])
        io.use_msix()
        completion = io.setup(0)
        exp = io.pci.find_capability(io.bdf, 0x10)
        devctl = io.pci.cfg_read(io.bdf, exp + 8, 2)
        # The first descriptor copies "Initiate FLR" into its own DEVCTL through MMCONFIG;
        # the second, queued behind it, must never run.
        src, _ = io.buffer(64)
        self.qt.writew(src, devctl | 0x8000)
        big, _ = io.buffer(1 << 20, seed=9)
        dst = io.mem.alloc(1 << 20, fill=0)
        first, second = io.chain([(2, CTL_COMPL_WRITE, src, ecam(io.bdf, exp + 8)),
                                  (1 << 20, CTL_COMPL_WRITE | CTL_INT_EN, big, dst)])
        io.start(0, first, 2)
        io.settle(2_000_000, 8)
        # The function was reset under its own step: BARs and MSI-X are gone until set up
        # again, and nothing after the reset touched memory.
        self.assertEqual(io.pci.cfg_read(io.bdf, 0x10, 4) & ~0xF, 0)
        self.assertEqual(self.qt.readq(completion), 0)
        self.assertEqual(self.qt.memread(dst, 64), bytes(64))
        self.assertEqual(io.irq_word(0), 0)
        self.assertTrue(self.qt.responsive())
        io.bar = io.pci.bar_map(io.bdf, 0)
        self.assertEqual(io.state(0), HALTED)
        self.assertEqual(io.chanerr(0), 0)
        self.assert_works(0)
        del second

    def test_unplugged_by_its_own_dma(self):
        io = self.start(device="dmalab-ioat,bus=rp,id=ioat",
                        args=["-global", "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off",
                              "-device", "pcie-root-port,id=rp,chassis=1,slot=1"])
        io.use_msix()
        io.setup(0)
        rp = io.pci.find_device(0x1B36, 0x000C)
        exp = io.pci.find_capability(rp, 0x10)
        sltctl = io.pci.cfg_read(rp, exp + 0x18, 2)
        # Slot power and power indicator off: QEMU unplugs the device at once.
        src, _ = io.buffer(64)
        self.qt.writew(src, (sltctl & ~0x0300) | 0x0700)
        big, _ = io.buffer(1 << 20, seed=4)
        dst = io.mem.alloc(1 << 20, fill=0)
        first, _ = io.chain([(2, CTL_COMPL_WRITE, src, ecam(rp, exp + 0x18)),
                             (1 << 20, CTL_COMPL_WRITE | CTL_INT_EN, big, dst)])
        io.start(0, first, 2)
        io.settle(2_000_000, 8)
        self.assertTrue(self.qt.responsive())
        self.assertIsNone(io.pci.find_device(VENDOR, DEVICE))
        self.assertEqual(self.qt.memread(dst, 64), bytes(64))
        # The object is gone from the QOM tree, and QEMU goes on stepping its clock.
        names = [c["name"] for c in self.qt.qmp("qom-list", path="/machine/peripheral")]
        self.assertNotIn("ioat", names)
        self.qt.clock_step(10_000_000)
        self.assertTrue(self.qt.responsive())

    def test_ring_that_never_runs_dry_leaves_the_main_loop_free(self):
        io = self.start(device="dmalab-ioat,id=ioat,step-descriptors=64,step-gap-ns=1000")
        io.use_msix()
        io.setup(0)
        ring = io.mem.alloc(64, align=64, fill=0)
        self.qt.memwrite(ring, descriptor(1, CTL_NULL, 0, 0, ring))  # points at itself
        io.start(0, ring, 0xFFFF)

        def done():
            return self.qt.counter("/machine/peripheral/ioat", "descriptors")

        # The doorbell's step runs at once (its timer is due now), and is bounded; each
        # further microsecond of virtual time runs one more bounded step.
        self.assertEqual(done(), 64)
        for us in range(1, 6):
            self.qt.clock_step(1000)
            self.assertEqual(done(), 64 * (us + 1))
        # Without the clock moving, no step runs: the next is strictly later in virtual
        # time, and QEMU's main loop answers at once.
        start = time.monotonic()
        for _ in range(20):
            self.assertTrue(self.qt.responsive(timeout=5))
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(done(), 64 * 6)
        while io.state(0) == ACTIVE:
            self.qt.clock_step(100_000)
        self.assertEqual(done(), 0xFFFF)


class HostileFromTimer(Hostile):
    """The same with sync-start off: every step runs from the channel's timer, under the
    re-entrancy guard the device engages itself."""
    SYNC = "off"


def main():
    global QEMU
    QEMU, argv = libqtest.qemu_from_argv(sys.argv)
    why = without_valgrind()
    ok = unittest.main(argv=argv, exit=False).result.wasSuccessful()
    if ok and why:
        # Every case passed, but without the memory-error check: a skip, said as such.
        print("ioat-hostile-qtest: %s: every case passed without valgrind, so QEMU's "
              "memory errors went unseen (skipped: 77)" % why)
        sys.exit(77)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
