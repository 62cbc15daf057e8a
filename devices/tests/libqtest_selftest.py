#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks libqtest.py against the real QEMU binary: process handling, the qtest and QMP
protocols, PCI discovery and BAR mapping on q35, MSI/MSI-X delivery into guest RAM.
Usage: libqtest_selftest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import PCI, GuestAlloc, QMPError, QTest, QTestError  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import main  # noqa: E402

IOAT = (0x8086, 0x2021)
EDU = (0x1234, 0x11E8)   # QEMU's educational device: MSI (64-bit) and INTx on demand


class QemuCase(unittest.TestCase):
    """Boots QEMU with ``ARGS`` for each test and checks it exits cleanly."""
    ARGS = ["-device", "dmalab-ioat,id=ioat0"]

    def setUp(self):
        self.qt = QTest(qtest_case.QEMU, self.ARGS, timeout=20)
        self.addCleanup(self.qt.close)
        self.pci = PCI(self.qt)
        self.ram = GuestAlloc(self.qt)

    def assertCleanExit(self):
        self.assertEqual(self.qt.close(), 0, self.qt.stderr)
        self.assertEqual(self.qt.stderr, "")


class Basics(QemuCase):
    def test_ioat_found_and_bar0_mapped(self):
        bdf = self.pci.find_device(*IOAT)
        self.assertIsNotNone(bdf)
        self.assertEqual(bdf >> 8, 0, "expected on bus 0")
        self.assertEqual(self.pci.bar_size(bdf, 0), (0x4000, False, True))
        bar0 = self.pci.bar_map(bdf, 0)
        self.assertEqual(bar0 % 0x4000, 0)
        self.assertEqual(self.pci.cfg_read(bdf, 0x10) & ~0xF, bar0 & 0xFFFFFFFF)
        self.assertEqual(self.pci.cfg_read(bdf, 0x04, 2) & 0x6, 0x6)  # memory + master
        self.assertEqual(self.qt.readb(bar0 + 0x00), 4)      # CHANCNT
        self.assertEqual(self.qt.readb(bar0 + 0x08), 0x33)   # CBVER
        self.assertCleanExit()

    def test_ecam_and_legacy_config_agree(self):
        self.assertIsNotNone(self.pci.ecam)
        bdf = self.pci.find_device(*IOAT)
        for off in (0x00, 0x08, 0x2C, 0x34, 0x40):
            self.assertEqual(self.pci.cfg_read(bdf, off), self.pci.pio_cfg_read(bdf, off))
        self.assertEqual(self.pci.cfg_read(bdf, 0x02, 2), 0x2021)
        self.assertEqual(self.pci.pio_cfg_read(bdf, 0x00, 1), 0x86)

    def test_memory_roundtrip(self):
        data = os.urandom(300_000)
        addr = self.ram.alloc(len(data))
        self.qt.memwrite(addr, data)
        self.assertEqual(self.qt.memread(addr, len(data)), data)
        for n in (0, 1, 2, 3, 4, 5):
            self.qt.memwrite(addr + 7, data[:n])
            self.assertEqual(self.qt.memread(addr + 7, n), data[:n])
        self.qt.memset(addr, 64, 0xA5)
        self.assertEqual(self.qt.memread(addr, 64), b"\xa5" * 64)
        self.qt.writeq(addr, 0x1122334455667788)
        self.assertEqual(self.qt.readl(addr), 0x55667788)   # little-endian guest
        self.assertEqual(self.qt.readw(addr + 6), 0x1122)
        self.assertEqual(self.qt.readb(addr + 1), 0x77)
        self.assertEqual(self.qt.readq(addr), 0x1122334455667788)
        self.qt.writel(addr, -1)
        self.assertEqual(self.qt.readl(addr), 0xFFFFFFFF)

    def test_ram_allocator_aligns_and_stays_in_ram(self):
        a, b = self.ram.alloc(100, align=64), self.ram.alloc(10, align=4096)
        self.assertGreaterEqual(a, 16 << 20)
        self.assertEqual((a % 64, b % 4096), (0, 0))
        self.assertGreaterEqual(b, a + 100)
        with self.assertRaises(QTestError):
            self.ram.alloc(1 << 40)

    def test_clock_step_advances_virtual_time(self):
        t0 = self.qt.clock_now()
        self.assertEqual(self.qt.clock_step(1000), t0 + 1000)
        self.assertEqual(self.qt.clock_now(), t0 + 1000)
        self.assertEqual(self.qt.clock_set(t0 + 50_000), t0 + 50_000)
        with self.assertRaises(QTestError):
            self.qt.clock_set(t0)   # cannot go back
        self.assertEqual(self.qt.clock_now(), t0 + 50_000)

    def test_port_io(self):
        self.qt.outl(0xCF8, 0x80000000)
        self.assertEqual(self.qt.inl(0xCF8), 0x80000000)
        self.assertEqual(self.qt.inw(0xCFC), 0x8086)
        self.assertEqual(self.qt.inb(0xCFE), 0xC0)

    def test_msix_capability_and_table(self):
        bdf = self.pci.find_device(*IOAT)
        info = self.pci.msix_enable(bdf)
        bar0 = self.pci.bars[bdf, 0].addr
        self.assertEqual((info.table, info.pba, info.count), (bar0 + 0x1000, bar0 + 0x1800, 4))
        self.assertEqual(self.pci.cfg_read(bdf, info.cap + 2, 2) & 0xC000, 0x8000)
        for v in range(info.count):
            self.assertEqual(self.pci.msix_vector(bdf, v)[2], 1)   # masked at reset
            self.pci.msix_set_vector(bdf, v, 0x1_2345_6780 + 4 * v, 0xD00D0 + v)
            self.assertEqual(self.pci.msix_vector(bdf, v), (0x1_2345_6780 + 4 * v, 0xD00D0 + v, 0))
            self.assertFalse(self.pci.msix_pending(bdf, v))
        self.pci.msix_mask(bdf, 2)
        self.assertEqual(self.pci.msix_vector(bdf, 2)[2], 1)

    def test_qmp_commands_errors_and_events(self):
        self.assertEqual(self.qt.qmp("query-status")["status"], "running")
        self.assertEqual(self.qt.counter("/machine/peripheral/ioat0", "interrupts"), 0)
        with self.assertRaises(QMPError) as cm:
            self.qt.counter("/machine/nonexistent", "x")
        self.assertEqual(cm.exception.error["class"], "DeviceNotFound")
        self.qt.qmp("stop")
        self.assertEqual(self.qt.wait_event("STOP", timeout=5)["event"], "STOP")
        self.qt.qmp("cont")
        self.assertTrue(self.qt.responsive())
        self.assertTrue(self.qt.alive())
        self.assertEqual(len(self.qt.pop_events("RESUME")), 1)
        self.assertCleanExit()
        self.assertFalse(self.qt.alive())


class Interrupts(QemuCase):
    ARGS = ["-device", "dmalab-ioat", "-device", "edu"]

    def test_msi_message_lands_in_ram(self):
        bdf = self.pci.find_device(*EDU)
        bar0 = self.pci.bar_map(bdf, 0)
        slot = self.ram.alloc(8, fill=0)
        self.pci.msi_enable(bdf, slot, 0x4321)
        self.qt.writel(bar0 + 0x60, 1)       # edu: raise interrupt status bit 0
        self.assertEqual(self.qt.readl(slot), 0x4321)
        self.assertEqual(self.qt.readl(slot + 4), 0)

    def test_intx_seen_through_ioapic_intercept(self):
        bdf = self.pci.find_device(*EDU)
        bar0 = self.pci.bar_map(bdf, 0)
        self.qt.irq_intercept_in("ioapic")
        self.qt.writel(bar0 + 0x60, 1)
        raised = [n for n, up in self.qt.pop_irq_log() if up]
        self.assertEqual(len(raised), 1)
        self.assertIn(raised[0], range(16, 24))  # PIRQA..H on q35
        self.assertTrue(self.qt.irq_level(raised[0]))
        self.qt.writel(bar0 + 0x64, 1)       # edu: acknowledge -> line lowered
        self.assertFalse(self.qt.irq_level(raised[0]))
        self.assertEqual(self.qt.pop_irq_log(), [(raised[0], False)])

    def test_msix_message_from_ioat_null_descriptor(self):
        bdf = self.pci.find_device(*IOAT)
        bar0 = self.pci.bar_map(bdf, 0)
        self.pci.msix_enable(bdf)
        slots = self.ram.alloc(16, fill=0)
        for v in range(4):
            self.pci.msix_set_vector(bdf, v, slots + 4 * v, 0xA0 + v)
        desc, compl = self.ram.alloc(64, align=64, fill=0), self.ram.alloc(8, fill=0)
        self.qt.writel(desc, 1)                             # size 1: size 0 is an error
        self.qt.writel(desc + 4, 1 << 0 | 1 << 3 | 1 << 5)  # INT_EN | COMPL_WRITE | NULL
        self.qt.writeq(desc + 24, desc)                     # next
        chan = bar0 + 0x80 * 3                              # channel 2
        self.qt.writeb(bar0 + 0x03, 0x09)   # INTRCTRL: master enable, per-channel vectors
        self.qt.writeq(chan + 0x18, compl)  # CHANCMP
        self.qt.writeq(chan + 0x10, desc)   # CHAINADDR
        self.qt.writew(chan + 0x00, 0x1)    # CHANCTRL: INT_REARM
        self.qt.writew(chan + 0x06, 1)      # DMACOUNT: go
        deadline = self.qt.clock_now() + 10_000_000
        while self.qt.readl(slots + 8) == 0 and self.qt.clock_now() < deadline:
            self.qt.clock_step(100_000)
        self.assertEqual(self.qt.memread(slots, 16), bytes([0, 0, 0, 0] * 2) +
                         (0xA2).to_bytes(4, "little") + bytes(4))
        self.assertEqual(self.qt.readq(compl) & ~0x3F, desc)
        self.assertCleanExit()


class Topology(unittest.TestCase):
    def boot(self, *args):
        qt = QTest(qtest_case.QEMU, list(args), timeout=20)
        self.addCleanup(qt.close)
        return qt, PCI(qt)

    def test_device_behind_root_port(self):
        qt, pci = self.boot("-device", "pcie-root-port,id=rp0,chassis=1",
                            "-device", "dmalab-ioat,bus=rp0")
        bdf = pci.find_device(*IOAT)
        self.assertIsNotNone(bdf)
        self.assertEqual(bdf >> 8, 1)
        bar0 = pci.bar_map(bdf, 0)
        self.assertEqual(qt.readb(bar0), 4)
        self.assertEqual(qt.readb(bar0 + 0x08), 0x33)
        self.assertIsNone(pci.find_device(0x1234, 0x5678))

    def test_capabilities(self):
        qt, pci = self.boot("-device", "e1000e,romfile=", "-device", "dmalab-ioat")
        nic = pci.find_device(0x8086, 0x10D3)
        self.assertIsNotNone(pci.find_capability(nic, 0x10))        # PCI Express
        self.assertIsNotNone(pci.find_capability(nic, 0x05))        # MSI
        self.assertGreaterEqual(pci.find_ext_capability(nic, 0x0001), 0x100)  # AER
        self.assertIsNone(pci.find_ext_capability(nic, 0x0123))
        ioat = pci.find_device(*IOAT)
        self.assertIsNotNone(pci.find_capability(ioat, 0x05))       # MSI
        self.assertIsNotNone(pci.find_capability(ioat, 0x10))       # PCI Express
        self.assertIsNone(pci.find_ext_capability(ioat, 0x0001))    # no AER offered


class Failures(unittest.TestCase):
    def test_startup_error_reports_status_and_stderr(self):
        with self.assertRaises(QTestError) as cm:
            QTest(qtest_case.QEMU, ["-device", "dmalab-ioat,channels=0"], timeout=20)
        self.assertEqual(cm.exception.returncode, 1)
        self.assertIn("channels must be between 1 and 16", cm.exception.stderr)

    def test_hung_qemu_fails_fast_and_is_killed(self):
        qt = QTest(qtest_case.QEMU, timeout=20)
        self.addCleanup(qt.close)
        os.kill(qt.pid, signal.SIGSTOP)
        qt.timeout = 0.5
        start = time.monotonic()
        with self.assertRaises(QTestError):
            qt.readl(0)
        self.assertFalse(qt.responsive(timeout=0.5))
        self.assertLess(time.monotonic() - start, 5)
        with self.assertRaises(QTestError):   # the qtest stream is out of step now
            qt.readl(0)
        self.assertEqual(qt.close(timeout=1), -signal.SIGKILL)

    def test_crash_is_reported(self):
        qt = QTest(qtest_case.QEMU, timeout=20)
        self.addCleanup(qt.close)
        os.kill(qt.pid, signal.SIGABRT)
        with self.assertRaises(QTestError) as cm:
            qt.readl(0)
        self.assertEqual(cm.exception.returncode, -signal.SIGABRT)
        self.assertFalse(qt.alive())


if __name__ == "__main__":
    main()
