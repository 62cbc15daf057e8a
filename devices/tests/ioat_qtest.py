#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of dmalab-ioat over qtest: PCI identity, copies with completion
write-back and interrupts (MSI-X, MSI, INTx) and completion timing on the virtual clock
(ioat_props_qtest.py has the property checks, personalities and ATS; ioat_reset_qtest.py
the channel errors, resets and migration). Each test starts its own QEMU and checks it
exits cleanly.

Usage: ioat_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import PCI, GuestAlloc  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import MachineCase, launch, main  # noqa: E402
from ioat_rig import (  # noqa: E402
    ACTIVE, ATTNSTATUS, CFG_CHANERR_INT, CFG_CHANERRMSK_INT, CHANCMD, CHANCMP, CHANCTRL,
    CHANCTRL_RUN, CHANERR_MSK, CMD_RESET, CTL_COMPL_WRITE, CTL_INT_EN, CTL_NULL, DEVICE, DONE,
    HALTED, INTRCTRL, INTRCTRL_INT, INTRCTRL_INT_STATUS, INTRCTRL_MASTER_INT_EN,
    VENDOR, Buf, Ioat, descriptor)

ID = "ioat"
QOM = "/machine/peripheral/" + ID
DEV = "dmalab-ioat,id=" + ID
ROOT_PORT = "pcie-root-port,id=rp,chassis=1"
ROOT_PORT_ID = (0x1B36, 0x000C)
UNASSIGNED = 0x4000_0000_0000      # no memory, no device: DMA there is a decode error
TOP_PAGE = 0xFFFF_FFFF_FFFF_F000   # a range of 0x2000 from here wraps past 2^64
CTL_OP_XOR = 0x87 << 24
COUNTERS = ("descriptors", "bytes", "errors", "interrupts")
ADDR_MASK = ~0x3F & (1 << 64) - 1


def transfer_ns(nbytes, bandwidth):
    """The model's size/bandwidth time, rounded up (dmalab/timers.h)."""
    return -(-nbytes * 1_000_000_000 // bandwidth)


def bytes_in(ns, bandwidth):
    return ns * bandwidth // 1_000_000_000


class IoatCase(MachineCase):
    """Starts QEMUs for a test and checks at the end that each exited with status 0 and
    printed nothing (or only what the test expected), in particular no re-entrancy block,
    assertion or abort."""
    FORBIDDEN = ("blocked", "assert", "abort")
    STDERR_ALLOWED_ONLY = True

    def migrate_away(self, m, path):
        """Stops machine m, migrates it to the file `path` and checks that it
        exits cleanly; returns the layout the destination's rig takes over."""
        m.qt.qmp("stop")
        m.qt.qmp("migrate", uri="file:" + path)
        self.wait_migration(m.qt)
        layout = (m.bdf, m.bar, m.irq_area, m.mem.next, m.nchan)
        self.check_exit(m.qt)
        self.machines.remove((m.qt, ()))
        return layout

    def boot(self, props="", args=(), allowed=(), device_id=DEVICE):
        """A q35 machine with one dmalab-ioat (DEV + props), found and BAR0 mapped."""
        io = launch(lambda: Ioat(qtest_case.QEMU, DEV + props, list(args), device_id=device_id))
        self.track(io.qt, allowed)
        return io

    def boot_behind_root_port(self, props="", allowed=()):
        """The device on a pcie-root-port (Ioat() puts `args` before its -device)."""
        io = launch(lambda: Ioat(qtest_case.QEMU, DEV + ",bus=rp" + props, ["-device", ROOT_PORT]))
        self.track(io.qt, allowed)
        return io

    # Device helpers ---------------------------------------------------------------------
    def qom(self, io, prop):
        return io.qt.qmp("qom-get", path=QOM, property=prop)

    def counters(self, io):
        counters = io.qt.qmp("qom-get", path=QOM, property="counters")
        return {p: counters[p] for p in COUNTERS}

    def assertCounters(self, io, **want):
        got = self.counters(io)
        self.assertEqual({k: got[k] for k in want}, want)

    def desc(self, io, addr, size, ctl, src, dst, nxt):
        io.qt.memwrite(addr, descriptor(size, ctl, src, dst, nxt))

    def slots(self, io, n):
        """n zeroed descriptor slots, 64-byte aligned."""
        base = io.mem.alloc(64 * n, align=64, fill=0)
        return [base + 64 * i for i in range(n)]

    def settle(self, io, ns=5_000_000):
        io.qt.clock_step(ns)

    def copy_job(self, io, ch, bufs, int_last=True, start=True):
        """A chain of copies, COMPL_WRITE on each, INT_EN on the last; returns the descriptor
        addresses. The channel must be stopped (fresh setup())."""
        descs = [(b.size, CTL_COMPL_WRITE | (CTL_INT_EN if int_last and i == len(bufs) - 1
                                             else 0), b.src, b.dst)
                 for i, b in enumerate(bufs)]
        addrs = io.chain(descs)
        if start:
            io.start(ch, addrs[0], len(addrs))
        return addrs

    def verified_copy(self, io, ch, size=8192, seed=99):
        """Fresh setup of `ch`, one copy with INT_EN: data, completion, CHANSTS and the
        channel's MSI-X word all as they must be. The device must be in MSI-X mode."""
        compl = io.setup(ch)
        io.clear_irqs()
        buf = Buf(io, size, seed)
        (d,) = self.copy_job(io, ch, [buf])
        self.settle(io)
        buf.check(self)
        self.assertEqual(io.qt.readq(compl), d | DONE)
        self.assertEqual(io.chansts(ch), d | DONE)
        self.assertEqual(io.chanerr(ch), 0)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        return d

    def irq_words(self, io, n=16):
        return [io.irq_word(v) for v in range(n)]


class Identity(IoatCase):
    def pcie_checks(self, io, devtype):
        pci, bdf = io.pci, io.bdf
        self.assertEqual(pci.cfg_read(bdf, 0x00, 2), VENDOR)
        self.assertEqual(pci.cfg_read(bdf, 0x02, 2), DEVICE)
        self.assertEqual((VENDOR, DEVICE), (0x8086, 0x2021))
        self.assertEqual(pci.cfg_read(bdf, 0x0A, 2), 0x0880)   # class: other system periph.
        self.assertEqual(pci.cfg_read(bdf, 0x08, 1), 0x04)     # revision
        self.assertEqual(pci.cfg_read(bdf, 0x3D, 1), 1)        # INTA
        exp = pci.find_capability(bdf, 0x10)
        self.assertIsNotNone(exp, "no PCI Express capability")
        flags = pci.cfg_read(bdf, exp + 2, 2)
        self.assertEqual(flags >> 4 & 0xF, devtype, f"PCIe capabilities {flags:#x}")
        self.assertEqual(flags & 0xF, 2)                       # capability version 2
        devcap = pci.cfg_read(bdf, exp + 4)
        self.assertTrue(devcap >> 28 & 1, f"DEVCAP {devcap:#x} lacks FLR")
        self.assertIsNotNone(pci.find_capability(bdf, 0x05), "no MSI capability")
        self.assertIsNotNone(pci.find_capability(bdf, 0x11), "no MSI-X capability")
        self.assertIsNone(pci.find_capability(bdf, 0x01), "unexpected PM capability")

    def test_01_identity_on_root_complex(self):
        io = self.boot()
        self.assertEqual(io.bdf >> 8, 0)
        self.pcie_checks(io, 9)   # root complex integrated endpoint

    def test_01_identity_behind_root_port(self):
        io = self.boot_behind_root_port()
        self.assertEqual(io.bdf >> 8, 1)
        self.pcie_checks(io, 0)   # PCI Express endpoint
        rp = io.pci.find_device(*ROOT_PORT_ID)
        self.assertEqual(io.pci.cfg_read(rp, io.pci.find_capability(rp, 0x10) + 2, 2) >> 4
                         & 0xF, 4)   # the port itself: root port

    def test_02_config_chanerr_registers(self):
        io = self.boot()
        pci, bdf = io.pci, io.bdf
        self.assertIsNotNone(pci.ecam)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERR_INT), 0)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERRMSK_INT), 0)
        pci.cfg_write(bdf, CFG_CHANERR_INT, 0xFFFFFFFF)      # W1C of nothing: still 0
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERR_INT), 0)
        pci.cfg_write(bdf, CFG_CHANERRMSK_INT, 0x1234)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERRMSK_INT), 0x1234)
        pci.cfg_write(bdf, CFG_CHANERRMSK_INT + 2, 0xBEEF, 2)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERRMSK_INT), 0xBEEF1234)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERRMSK_INT + 1, 1), 0x12)
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERR_INT), 0)
        # Neighbours are untouched by the device's range.
        self.assertEqual(pci.cfg_read(bdf, CFG_CHANERR_INT - 4), 0)


class Copies(IoatCase):
    def test_03_verified_copy_chain(self):
        io = self.boot()
        ch = 1
        io.use_msix()
        compl = io.setup(ch)
        bufs = [Buf(io, n, seed) for seed, n in enumerate((4 << 10, 64 << 10, 1 << 20))]
        addrs = self.copy_job(io, ch, bufs)
        self.settle(io)
        for b in bufs:
            b.check(self)
        self.assertEqual(io.qt.readq(compl), addrs[-1] | DONE)
        self.assertEqual(io.chansts(ch), addrs[-1] | DONE)
        self.assertEqual(io.chanerr(ch), 0)
        self.assertEqual(self.irq_words(io), [0, 0xA1] + [0] * 14)
        self.assertCounters(io, descriptors=3, bytes=sum(b.size for b in bufs), errors=0,
                            interrupts=1)
        self.settle(io)    # nothing more happens
        self.assertCounters(io, descriptors=3, interrupts=1)

    def test_04_all_channels_at_once(self):
        io = self.boot()
        self.assertEqual(io.nchan, 4)
        io.use_msix()
        jobs = []
        for ch in range(io.nchan):
            compl = io.setup(ch)
            buf = Buf(io, 64 << 10, 10 + ch)
            jobs.append((ch, compl, buf, self.copy_job(io, ch, [buf], start=False)[0]))
        for ch, _, _, d in jobs:
            io.start(ch, d, 1)
        self.settle(io)
        for ch, compl, buf, d in jobs:
            buf.check(self)
            self.assertEqual(io.qt.readq(compl), d | DONE)
            self.assertEqual(io.chansts(ch), d | DONE)
        self.assertEqual(self.irq_words(io), [0xA0, 0xA1, 0xA2, 0xA3] + [0] * 12)
        self.assertCounters(io, descriptors=4, bytes=4 * (64 << 10), errors=0, interrupts=4)


class Timing(IoatCase):
    def null_job(self, io, ch):
        compl = io.setup(ch)
        io.clear_irqs()
        (d,) = io.chain([(1, CTL_NULL | CTL_COMPL_WRITE | CTL_INT_EN, 0, 0)])
        io.start(ch, d, 1)
        return compl, d

    def expect_latency(self, io, ch, latency):
        compl, d = self.null_job(io, ch)
        # The first step: the channel's timer, armed at "now" by the DMACOUNT write, runs
        # before time moves, so this 1 ns counts towards the latency.
        io.qt.clock_step(1)
        io.qt.clock_step(latency - 2)
        self.assertEqual(io.state(ch), ACTIVE, f"complete before {latency} ns")
        self.assertEqual(io.qt.readq(compl), 0)
        self.assertEqual(io.irq_word(ch), 0)
        io.qt.clock_step(1)
        self.assertEqual(io.chansts(ch), d | DONE, f"not complete after {latency} ns")
        self.assertEqual(io.qt.readq(compl), d | DONE)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)

    def test_05_latency_exact_and_settable(self):
        io = self.boot(",latency-ns=50000")
        io.use_msix()
        self.assertEqual(self.qom(io, "latency-ns"), 50000)
        self.expect_latency(io, 0, 50000)
        io.qt.qmp("qom-set", path=QOM, property="latency-ns", value=100000)
        self.assertEqual(self.qom(io, "latency-ns"), 100000)
        self.expect_latency(io, 0, 100000)
        self.assertCounters(io, descriptors=2, bytes=0, errors=0, interrupts=2)

    def test_06_bandwidth_pacing(self):
        bw, step = 1 << 30, 64 << 10            # bandwidth=1G is 2^30 bytes/s
        io = self.boot(f",bandwidth=1G,step-bytes={step}")
        self.assertEqual(self.qom(io, "bandwidth"), bw)
        io.use_msix()
        ch = 2
        compl = io.setup(ch)
        buf = Buf(io, 1 << 20, 6)
        (d,) = self.copy_job(io, ch, [buf])
        t0 = io.qt.clock_now()
        total = transfer_ns(buf.size, bw)
        self.assertEqual(total, 976563)
        half = total // 2
        io.qt.clock_set(t0 + half)
        n = buf.copied_prefix()
        self.assertGreater(n, 0, "nothing copied halfway")
        self.assertLess(n, buf.size, "all copied halfway")
        self.assertLessEqual(n, bytes_in(half, bw), "copied faster than the bandwidth")
        self.assertGreater(n, bytes_in(half, bw) - step, "fell behind the bandwidth")
        self.assertEqual(io.state(ch), ACTIVE)
        io.qt.clock_set(t0 + total - 1)
        self.assertEqual(io.state(ch), ACTIVE, "completed before size/bandwidth")
        self.assertEqual(io.qt.readq(compl), 0)
        self.assertEqual(io.irq_word(ch), 0)
        io.qt.clock_set(t0 + total)
        self.assertEqual(io.chansts(ch), d | DONE)
        self.assertEqual(io.qt.readq(compl), d | DONE)
        buf.check(self)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        self.assertCounters(io, descriptors=1, bytes=1 << 20, interrupts=1)


class Interrupts(IoatCase):
    def one_copy(self, io, ch, seed):
        """Fresh setup (armed), one copy with INT_EN, run to completion."""
        compl = io.setup(ch)
        buf = Buf(io, 4096, seed)
        (d,) = self.copy_job(io, ch, [buf])
        self.settle(io)
        buf.check(self)
        self.assertEqual(io.qt.readq(compl), d | DONE)

    def test_07_msi(self):
        io = self.boot()
        ch = 1
        slot = io.mem.alloc(16, fill=0)
        io.pci.msi_enable(io.bdf, slot, 0x4321)
        io.wr(None, INTRCTRL, INTRCTRL_MASTER_INT_EN, 1)
        self.assertEqual(io.rd(None, INTRCTRL, 1), INTRCTRL_MASTER_INT_EN)
        self.one_copy(io, ch, 7)
        self.assertEqual(io.qt.readl(slot), 0x4321)
        self.assertEqual(io.qt.readl(slot + 4), 0)
        self.assertEqual(io.rd(None, INTRCTRL, 1),
                         INTRCTRL_MASTER_INT_EN | INTRCTRL_INT_STATUS | INTRCTRL_INT)
        self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 1 << ch)
        self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 0)    # the read cleared it
        self.assertEqual(io.rd(None, INTRCTRL, 1), INTRCTRL_MASTER_INT_EN)
        self.assertEqual(self.irq_words(io), [0] * 16)          # no MSI-X
        self.assertCounters(io, interrupts=1)

    def test_08_intx(self):
        io = self.boot()
        ch = 0
        io.qt.irq_intercept_in("ioapic")
        io.wr(None, INTRCTRL, INTRCTRL_MASTER_INT_EN, 1)
        self.one_copy(io, ch, 8)
        log = io.qt.pop_irq_log()
        self.assertEqual(len(log), 1, log)
        line, up = log[0]
        self.assertTrue(up)
        self.assertIn(line, range(16, 24))
        self.assertEqual(io.rd(None, INTRCTRL, 1), 0x07)
        self.assertTrue(io.pci.cfg_read(io.bdf, 0x06, 2) & 0x08)   # PCI status: INTx
        self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 1 << ch)
        self.assertEqual(io.qt.pop_irq_log(), [(line, False)])      # the read lowered it
        self.assertFalse(io.pci.cfg_read(io.bdf, 0x06, 2) & 0x08)
        self.assertCounters(io, interrupts=1)

        # Master interrupt enable off: the event is recorded, nothing raised.
        io.wr(None, INTRCTRL, 0, 1)
        self.one_copy(io, ch, 9)
        self.assertEqual(io.qt.pop_irq_log(), [])
        self.assertEqual(io.rd(None, INTRCTRL, 1), INTRCTRL_INT_STATUS)
        self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 1 << ch)
        self.assertEqual(io.qt.pop_irq_log(), [])
        self.assertCounters(io, interrupts=1)

        # PCI command INTX_DISABLE: nothing reaches the IOAPIC either.
        io.wr(None, INTRCTRL, INTRCTRL_MASTER_INT_EN, 1)
        cmd = io.pci.cfg_read(io.bdf, 0x04, 2)
        io.pci.cfg_write(io.bdf, 0x04, cmd | 0x400, 2)
        self.one_copy(io, ch, 10)
        self.assertEqual(io.qt.pop_irq_log(), [])
        self.assertTrue(io.pci.cfg_read(io.bdf, 0x06, 2) & 0x08)    # asserted internally
        self.assertCounters(io, interrupts=1)
        io.pci.cfg_write(io.bdf, 0x04, cmd, 2)                       # the pending level shows
        self.assertEqual(io.qt.pop_irq_log(), [(line, True)])
        self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 1 << ch)
        self.assertEqual(io.qt.pop_irq_log(), [(line, False)])

    def test_08b_intx_lowered_when_msi_or_msix_is_enabled(self):
        # A function with MSI or MSI-X enabled must not use its INTx pin (PCI 3.0
        # 6.8.1.3, 6.8.2.3): a line that was high when the guest switched goes low,
        # and shows again if the guest goes back to INTx with the cause still there.
        for kind in ("msix", "msi"):
            with self.subTest(kind=kind):
                io = self.boot()
                io.qt.irq_intercept_in("ioapic")
                io.wr(None, INTRCTRL, INTRCTRL_MASTER_INT_EN, 1)
                self.one_copy(io, 0, 8)
                log = io.qt.pop_irq_log()
                self.assertEqual(len(log), 1, log)
                line = log[0][0]
                if kind == "msix":
                    info = io.pci.msix_enable(io.bdf)
                    off, bit = info.cap + 2, 0x8000
                else:
                    off = io.pci.msi_enable(io.bdf, io.irq_area, 0x41) + 2
                    bit = 0x1
                self.assertEqual(io.qt.pop_irq_log(), [(line, False)])
                self.assertFalse(io.pci.cfg_read(io.bdf, 0x06, 2) & 0x08)
                io.pci.cfg_write(io.bdf, off, io.pci.cfg_read(io.bdf, off, 2) & ~bit, 2)
                self.assertEqual(io.qt.pop_irq_log(), [(line, True)])
                self.assertEqual(io.qt.readl(io.bar + ATTNSTATUS), 1)
                self.assertEqual(io.qt.pop_irq_log(), [(line, False)])

    def test_09_masked_msix_vector(self):
        io = self.boot()
        ch = 0
        io.use_msix()
        io.pci.msix_mask(io.bdf, 0)
        self.one_copy(io, ch, 11)
        self.assertEqual(io.irq_word(0), 0)
        self.assertTrue(io.pci.msix_pending(io.bdf, 0))
        self.assertFalse(io.pci.msix_pending(io.bdf, 1))
        self.assertCounters(io, descriptors=1, interrupts=0)
        io.pci.msix_mask(io.bdf, 0, False)
        self.assertEqual(io.irq_word(0), 0xA0)
        self.assertFalse(io.pci.msix_pending(io.bdf, 0))
        self.assertEqual(self.irq_words(io), [0xA0] + [0] * 15)

    def test_11_channel_reset_keeps_linux_state(self):
        io = self.boot()
        ch = 1
        io.use_msix()
        compl = io.setup(ch)
        io.wr(ch, CHANERR_MSK, 0x30000, 4)
        io.wr(ch, CHANCMD, CMD_RESET, 1)
        self.assertEqual(io.rd(ch, CHANCMD, 1), 0)                  # reset done at once
        self.assertEqual(io.rd(ch, CHANCTRL, 2), CHANCTRL_RUN & ~1)   # INT_REARM reads 0
        self.assertEqual(io.qt.readq(io.reg(ch, CHANCMP)), compl)
        self.assertEqual(io.rd(ch, CHANERR_MSK, 4), 0x30000)
        self.assertEqual(io.chansts(ch), HALTED)
        # No CHANCTRL write: the arm given before the reset lets this interrupt out.
        buf = Buf(io, 4096, 12)
        (d,) = self.copy_job(io, ch, [buf])
        self.settle(io)
        buf.check(self)
        self.assertEqual(io.qt.readq(compl), d | DONE)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        self.assertCounters(io, interrupts=1)

        # Now disarmed (and a reset keeps that): two INT_EN completions send nothing...
        io.clear_irqs()
        io.wr(ch, CHANCMD, CMD_RESET, 1)
        bufs = [Buf(io, 4096, 13), Buf(io, 4096, 14)]
        addrs = io.chain([(b.size, CTL_COMPL_WRITE | CTL_INT_EN, b.src, b.dst) for b in bufs])
        io.start(ch, addrs[0], 2)
        self.settle(io)
        for b in bufs:
            b.check(self)
        self.assertEqual(io.qt.readq(compl), addrs[1] | DONE)
        self.assertEqual(io.irq_word(ch), 0)
        self.assertCounters(io, descriptors=3, interrupts=1)
        # ...until the INT_REARM write, which sends exactly one message at once.
        io.wr(ch, CHANCTRL, CHANCTRL_RUN, 2)
        self.assertEqual(io.irq_word(ch), 0xA0 | ch)
        self.assertCounters(io, interrupts=2)
        io.clear_irqs()
        io.wr(ch, CHANCTRL, CHANCTRL_RUN, 2)     # nothing pending: nothing sent
        self.settle(io)
        self.assertEqual(io.irq_word(ch), 0)
        self.assertCounters(io, interrupts=2)


def rebuild_ioat(qt, bdf, bar, irq_area, mem_next, nchan):
    """An Ioat for a machine whose device state came in by migration: nothing is
    programmed, BAR0 is where config space says."""
    io = Ioat.__new__(Ioat)
    io.qt, io.pci = qt, PCI(qt)
    io.bdf = io.pci.find_device(VENDOR, DEVICE)
    assert io.bdf == bdf, (io.bdf, bdf)
    io.bar = (io.pci.cfg_read(bdf, 0x10) & ~0xF) | io.pci.cfg_read(bdf, 0x14) << 32
    assert io.bar == bar, (hex(io.bar), hex(bar))
    io.mem = GuestAlloc(qt)
    io.mem.next = mem_next
    io.nchan = io.qt.readb(io.bar)
    assert io.nchan == nchan
    io.irq_area = irq_area
    return io


if __name__ == "__main__":
    main()
