#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of dmalab-ioat over qtest, continued from ioat_qtest.py: every
guest-reachable channel error, channel and function resets with work in flight, and
migration of a busy ring. Each test starts its own QEMU and checks it exits cleanly.

Usage: ioat_reset_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import PCI, QTest  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import launch, main  # noqa: E402
from ioat_qtest import (  # noqa: E402
    ADDR_MASK, CTL_OP_XOR, DEV, QOM, ROOT_PORT_ID, TOP_PAGE, UNASSIGNED, IoatCase, rebuild_ioat)
from ioat_rig import (  # noqa: E402
    Buf,
    ACTIVE, CDAR, CFG_CHANERRMSK_INT, CHANCMD, CHANCMP, CHANCTRL, CHANERR, CHANERR_CHANCMD,
    CHANERR_COMPLETION_ADDR, CHANERR_CONTROL, CHANERR_DEST_ADDR, CHANERR_LENGTH,
    CHANERR_NEXT_ADDR, CHANERR_NEXT_DESC_ALIGN, CHANERR_READ_DATA, CHANERR_SRC_ADDR,
    CHANERR_WRITE_DATA, CMD_APPEND, CMD_RESET, CMD_START, CTL_COMPL_WRITE, CTL_NULL, DEVICE,
    DMACOUNT, DONE, HALTED, INTRCTRL, VENDOR)


class Errors(IoatCase):
    """Every channel error a guest can cause: exact CHANERR, HALTED, the completion area
    holding the last good descriptor with HALTED status, the error interrupt, other memory
    untouched; then recovery on the same channel."""
    CH = 2

    def setUp(self):
        super().setUp()
        self.io = io = self.boot()
        io.use_msix()
        # Low RAM, where a range wrapping past 2^64 would land: a pattern that must stay.
        self.low = random.Random(5).randbytes(0x2000)
        io.qt.memwrite(0, self.low)
        self.errors = self.descriptors = 0

    def good_then(self, bad=None, bad_next=None, count=2):
        """Fresh setup; a good 4 KiB copy (COMPL_WRITE) whose next is `bad_next` or a slot
        holding `bad` (size, ctl, src, dst); started with DMACOUNT `count`."""
        io, ch = self.io, self.CH
        compl = io.setup(ch)
        io.clear_irqs()
        good = Buf(io, 4096, 100 + self.errors)
        g, slot = self.slots(io, 2)
        self.desc(io, g, good.size, CTL_COMPL_WRITE, good.src, good.dst,
                  slot if bad_next is None else bad_next)
        if bad is not None:
            self.desc(io, slot, *bad, slot + 64)
        io.start(ch, g, count)
        self.settle(io)
        good.check(self)
        return compl, g, slot

    def expect_halt(self, compl, chanerr, last_good, interrupt=True):
        io, ch = self.io, self.CH
        self.errors += 1
        self.assertEqual(io.chanerr(ch), chanerr, f"CHANERR {io.chanerr(ch):#x}")
        self.assertEqual(io.chansts(ch), last_good | HALTED)
        self.assertEqual(io.qt.readq(compl), last_good | HALTED)
        if interrupt:
            self.assertEqual(self.irq_words(io), [0xA0 | ch if v == ch else 0
                                                  for v in range(16)])
        self.assertCounters(io, errors=self.errors)
        self.assertEqual(io.qt.memread(0, 0x2000), self.low, "low RAM written")

    def recover(self, chanerr):
        io, ch = self.io, self.CH
        # A halted channel ignores DMACOUNT while CHANERR is set.
        io.wr(ch, DMACOUNT, 7, 2)
        self.settle(io, 100_000)
        self.assertEqual(io.state(ch), HALTED)
        self.assertEqual(io.chanerr(ch), chanerr)
        io.wr(ch, CHANERR, chanerr, 4)               # W1C
        self.assertEqual(io.chanerr(ch), 0)
        io.wr(ch, CHANCMD, CMD_RESET, 1)
        self.assertEqual(io.chansts(ch), HALTED)
        self.verified_copy(io, ch, seed=200 + self.errors)
        self.descriptors += 1
        self.assertEqual(io.chanerr(ch), 0)

    def halted_at(self, compl, chanerr, last_good, cdar, victim=None):
        """expect_halt(), CDAR at `cdar` and `victim` not copied; then recover()."""
        self.expect_halt(compl, chanerr, last_good)
        self.assertEqual(io_cdar(self.io, self.CH), cdar)
        if victim:
            victim.check(self, copied=False)
        self.recover(chanerr)

    def case_desc(self, bad, chanerr, victim=None):
        """A good copy, then descriptor `bad`, which fails with `chanerr`."""
        compl, g, slot = self.good_then(bad)
        self.halted_at(compl, chanerr, g, slot, victim)

    def case_next(self, nxt, chanerr):
        """A good copy whose next descriptor, at `nxt`, cannot be fetched (`chanerr`)."""
        compl, g, _ = self.good_then(bad_next=nxt)
        self.halted_at(compl, chanerr, g, nxt)

    def case_chainaddr(self, chainaddr, chanerr):
        """No good copy: the first descriptor, at `chainaddr`, cannot be fetched (`chanerr`)."""
        io = self.io
        compl = io.setup(self.CH)
        io.clear_irqs()
        io.start(self.CH, chainaddr, 1)
        self.settle(io)
        self.halted_at(compl, chanerr, 0, chainaddr)

    def test_10_errors(self):
        io = self.io
        with self.subTest("unaligned CHAINADDR"):
            self.case_chainaddr(self.slots(io, 1)[0] + 8, CHANERR_NEXT_DESC_ALIGN)
        with self.subTest("unaligned next"):
            self.case_next(self.slots(io, 1)[0] + 8, CHANERR_NEXT_DESC_ALIGN)
        with self.subTest("descriptor at an unassigned CHAINADDR"):
            self.case_chainaddr(UNASSIGNED, CHANERR_NEXT_ADDR)
        with self.subTest("next descriptor unassigned"):
            self.case_next(UNASSIGNED, CHANERR_NEXT_ADDR)
        # A bad descriptor after a good one: (name, size of its victim copy or None, the
        # descriptor (size, ctl, src, dst) made from that victim v, CHANERR). A victim must
        # stay uncopied.
        bad = (
            ("source unassigned", 4096,
             lambda v: (4096, CTL_COMPL_WRITE, UNASSIGNED, v.dst), CHANERR_READ_DATA),
            ("destination unassigned", 4096,
             lambda v: (4096, CTL_COMPL_WRITE, v.src, UNASSIGNED), CHANERR_WRITE_DATA),
            ("bad opcode (XOR)", 4096,
             lambda v: (4096, CTL_COMPL_WRITE | CTL_OP_XOR, v.src, v.dst), CHANERR_CONTROL),
            ("copy of size 0", 4096,
             lambda v: (0, CTL_COMPL_WRITE, v.src, v.dst), CHANERR_LENGTH),
            ("null descriptor of size 0", None,
             lambda v: (0, CTL_COMPL_WRITE | CTL_NULL, 0, 0), CHANERR_LENGTH),
            ("copy larger than 2^xfercap", 64 << 10,
             lambda v: ((1 << 20) + 1, CTL_COMPL_WRITE, v.src, v.dst), CHANERR_LENGTH),
            ("source wraps past 2^64", 0x2000,
             lambda v: (0x2000, CTL_COMPL_WRITE, TOP_PAGE, v.dst), CHANERR_SRC_ADDR),
            ("destination wraps past 2^64", 0x2000,
             lambda v: (0x2000, CTL_COMPL_WRITE, v.src, TOP_PAGE), CHANERR_DEST_ADDR),
        )
        self.assertEqual(io.rd(None, 0x01, 1), 20)     # xfercap: 2^20 bytes
        for seed, (name, size, desc, chanerr) in enumerate(bad, 1):
            with self.subTest(name):
                v = Buf(io, size, seed) if size else None
                self.case_desc(desc(v), chanerr, v)
        with self.subTest("CB1 CHANCMD START"):
            compl, g, _ = self.good_then(count=1)
            self.assertEqual(io.chansts(self.CH), g | DONE)
            self.assertEqual(io.qt.readq(compl), g | DONE)
            io.wr(self.CH, CHANCMD, CMD_START, 1)     # refused inside the write
            self.expect_halt(compl, CHANERR_CHANCMD, g)
            self.recover(CHANERR_CHANCMD)
        with self.subTest("CHANCMD APPEND: a doorbell, no error"):
            compl, g, _ = self.good_then(count=1)
            io.wr(self.CH, CHANCMD, CMD_APPEND, 1)
            self.assertEqual((io.chansts(self.CH), io.chanerr(self.CH)), (g | DONE, 0))
        self.assertCounters(io, errors=self.errors, interrupts=2 * self.errors)

    def completion_error(self, where):
        """A good copy whose completion write-back to `where` cannot be done."""
        io, ch = self.io, self.CH
        compl = io.setup(ch)
        io.clear_irqs()
        io.qt.writeq(io.reg(ch, CHANCMP), where)
        good = Buf(io, 4096, 300)
        (d,) = self.copy_job(io, ch, [good], int_last=False)
        self.settle(io)
        good.check(self)                            # the data moved
        self.errors += 1
        self.assertEqual(io.chanerr(ch), CHANERR_COMPLETION_ADDR)
        self.assertEqual(io.chansts(ch), d | HALTED)
        self.assertEqual(io.qt.readq(compl), 0)     # the old area is not used
        self.assertEqual(io.qt.memread(0, 0x2000), self.low, "low RAM written")
        self.descriptors += 1
        self.assertCounters(io, descriptors=self.descriptors, errors=self.errors)
        return d

    def test_10_completion_address_errors(self):
        for where in (2**64 - 4, UNASSIGNED):
            with self.subTest(f"CHANCMP {where:#x}"):
                self.completion_error(where)
                self.recover(CHANERR_COMPLETION_ADDR)

    # A completion write-back that fails (CHANCMP wrapping past 2^64, or not writable)
    # halts the channel with COMPLETION_ADDR_ERR and, with CHANCTRL.ERR_INT_EN, sends the
    # error interrupt like every other error class (found by this test: it used not to).
    def completion_error_interrupt(self, where):
        self.completion_error(where)
        self.assertEqual(self.irq_words(self.io), [0xA0 | self.CH if v == self.CH else 0
                                                   for v in range(16)],
                         "no error interrupt for COMPLETION_ADDR_ERR with ERR_INT_EN")
        self.assertCounters(self.io, interrupts=1)

    def test_10_completion_wrap_error_interrupts(self):
        self.completion_error_interrupt(2**64 - 4)

    def test_10_completion_dma_error_interrupts(self):
        self.completion_error_interrupt(UNASSIGNED)


def io_cdar(io, ch):
    return io.qt.readq(io.reg(ch, CDAR))


class Resets(IoatCase):
    """A whole-function reset with a descriptor in flight (1 s latency): the old descriptor
    never completes, the device is as new, and a fresh set-up works."""
    CH = 3
    LATENCY = 1_000_000_000
    WARNING = ("completion timeout",)   # 1 s is beyond Linux's 200 ms: warned, allowed

    def in_flight(self, io):
        ch = self.CH
        io.use_msix()
        compl = io.setup(ch)
        buf = Buf(io, 4096, 400)
        self.copy_job(io, ch, [buf])
        io.qt.clock_step(1000)
        self.assertEqual(io.state(ch), ACTIVE)
        self.assertEqual(io.qt.readq(compl), 0)
        self.assertEqual(io.irq_word(ch), 0)
        return compl

    def after_reset(self, io, old_compl, pci=None):
        """Checks the function is in its reset state, maps BAR0 again where it was and
        checks the device behaves as new."""
        pci = pci or io.pci
        self.assertEqual(pci.find_device(VENDOR, DEVICE), io.bdf)
        self.assert_reset_state(io, pci)
        pci.bar_map(io.bdf, 0, addr=io.bar)
        io.pci = pci
        self.like_new(io, old_compl)

    def assert_reset_state(self, io, pci):
        self.assertEqual(pci.cfg_read(io.bdf, 0x10), 0x4, "BAR0 not reset")
        self.assertEqual(pci.cfg_read(io.bdf, 0x04, 2) & 0x7, 0, "command not reset")
        msix = pci.find_capability(io.bdf, 0x11)
        self.assertEqual(pci.cfg_read(io.bdf, msix + 2, 2) & 0xC000, 0, "MSI-X still on")
        self.assertCounters(io, descriptors=0, bytes=0, errors=0, interrupts=0)
        # Registers, read with BAR0 mapped again for the purpose.
        pci.bar_map(io.bdf, 0, addr=io.bar)
        for c in range(io.nchan):
            self.assertEqual(io.chansts(c), HALTED)
            self.assertEqual(io.rd(c, CHANCTRL, 2), 0)
            self.assertEqual(io.qt.readq(io.reg(c, CHANCMP)), 0)
            self.assertEqual(io.rd(c, DMACOUNT, 2), 0)
        self.assertEqual(io.rd(None, INTRCTRL, 1), 0)

    def like_new(self, io, old_compl):
        ch = self.CH
        io.use_msix()
        io.clear_irqs()
        io.qt.qmp("qom-set", path=QOM, property="latency-ns", value=0)
        io.qt.clock_step(self.LATENCY + 100_000_000)   # well past the old completion time
        self.assertEqual(io.qt.readq(old_compl), 0, "old descriptor completed")
        self.assertCounters(io, descriptors=0, interrupts=0)
        io.setup(ch)   # its INT_REARM would let out an event held back meanwhile
        self.assertEqual(self.irq_words(io), [0] * 16, "interrupt from the old descriptor")
        self.assertEqual(io.qt.readq(old_compl), 0, "old descriptor completed")
        self.verified_copy(io, ch, seed=401)
        self.assertCounters(io, descriptors=1, bytes=8192, errors=0, interrupts=1)

    def test_12a_system_reset(self):
        io = self.boot(f",latency-ns={self.LATENCY}", allowed=self.WARNING)
        old = self.in_flight(io)
        io.qt.qmp("system_reset")
        io.qt.wait_event("RESET")
        # The MCH's PCIEXBAR was reset too: a new PCI enables ECAM afresh.
        self.after_reset(io, old, PCI(io.qt))

    def test_12b_flr(self):
        io = self.boot(f",latency-ns={self.LATENCY}", allowed=self.WARNING)
        old = self.in_flight(io)
        io.pci.cfg_write(io.bdf, CFG_CHANERRMSK_INT, 0x5A5A)
        exp = io.pci.find_capability(io.bdf, 0x10)
        devctl = io.pci.cfg_read(io.bdf, exp + 8, 2)
        io.pci.cfg_write(io.bdf, exp + 8, devctl | 0x8000, 2)   # Initiate FLR
        self.assertEqual(io.pci.cfg_read(io.bdf, exp + 8, 2) & 0x8000, 0)
        self.assertEqual(io.pci.cfg_read(io.bdf, CFG_CHANERRMSK_INT), 0, "FLR kept the mask")
        self.after_reset(io, old)

    def test_12c_secondary_bus_reset(self):
        io = self.boot_behind_root_port(f",latency-ns={self.LATENCY}", self.WARNING)
        old = self.in_flight(io)
        rp = io.pci.find_device(*ROOT_PORT_ID)
        ctl = io.pci.cfg_read(rp, 0x3E, 2)
        io.pci.cfg_write(rp, 0x3E, ctl | 0x40, 2)    # bridge control: secondary bus reset
        io.pci.cfg_write(rp, 0x3E, ctl, 2)
        self.after_reset(io, old)

    def test_12d_guest_reset_cf9(self):
        io = self.boot(f",latency-ns={self.LATENCY}", allowed=self.WARNING)
        old = self.in_flight(io)
        io.qt.outb(0xCF9, 0x06)     # reset control: hard reset, asynchronous
        io.qt.wait_event("RESET")
        self.after_reset(io, old, PCI(io.qt))


class Migration(IoatCase):
    CH = 1
    N = 64

    def test_13_migration_mid_ring(self):
        latency = 200_000
        device = DEV + f",latency-ns={latency}"
        fd, path = tempfile.mkstemp(prefix="ioat-migration-", dir="/tmp")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        ch = self.CH

        src = self.boot(f",latency-ns={latency}")
        src.use_msix()
        compl = src.setup(ch)
        bufs = [Buf(src, 4096, 500 + i) for i in range(self.N)]
        addrs = self.copy_job(src, ch, bufs)
        t0 = src.qt.clock_now()
        # Descriptor i completes at t0 + (i + 1) * latency, the next one starting then.
        index = {a: i for i, a in enumerate(addrs)}
        done = -1
        for _ in range(self.N // 2):
            src.qt.clock_step(latency)
            sts = src.chansts(ch)
            self.assertEqual(sts & 7, ACTIVE)
            done = index.get(sts & ADDR_MASK, -1)
        self.assertEqual(done, self.N // 2 - 1)
        self.assertCounters(src, descriptors=self.N // 2, interrupts=0)
        sts_before = src.chansts(ch)
        src.pci.cfg_write(src.bdf, CFG_CHANERRMSK_INT, 0xC3A5)   # migrates with config space
        clock = src.qt.clock_now()
        layout = self.migrate_away(src, path)

        incoming = ["-device", device, "-incoming", "defer"]
        qt = self.track(launch(lambda: QTest(qtest_case.QEMU, incoming)))
        qt.qmp("migrate-incoming", uri="file:" + path)
        self.wait_migration(qt)
        self.assertEqual(qt.qmp("query-status")["status"], "paused")
        dst = rebuild_ioat(qt, *layout)
        for b in bufs:
            b.io = dst
        self.assertEqual(dst.chansts(ch), sts_before)
        self.assertEqual(dst.pci.cfg_read(dst.bdf, CFG_CHANERRMSK_INT), 0xC3A5)
        self.assertTrue(qt.clock_now() <= clock)
        qt.clock_set(clock)
        qt.qmp("cont")
        self.assertEqual(qt.qmp("query-status")["status"], "running")
        # The descriptor in flight keeps its completion time, and the rest follow on.
        qt.clock_set(t0 + self.N * latency - 1)
        self.assertEqual(dst.chansts(ch), addrs[-2] | ACTIVE)
        self.assertEqual(dst.irq_word(ch), 0)
        qt.clock_step(1)
        self.assertEqual(dst.chansts(ch), addrs[-1] | DONE)
        self.assertEqual(qt.readq(compl), addrs[-1] | DONE)
        for b in bufs:
            b.check(self)
        self.assertEqual(self.irq_words(dst), [0xA0 | ch if v == ch else 0 for v in range(16)])
        self.assertCounters(dst, descriptors=self.N, bytes=self.N * 4096, errors=0,
                            interrupts=1)
        dst.clear_irqs()
        self.settle(dst)
        self.assertEqual(dst.irq_word(ch), 0)
        self.assertCounters(dst, descriptors=self.N, interrupts=1)


    def test_14_migration_with_ats_on(self):
        """The ATS Enable bit travels in configuration space and the destination's model
        follows it; its device-TLB starts empty (a cache: it asks again)."""
        fd, path = tempfile.mkstemp(prefix="ioat-migration-", dir="/tmp")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        src = self.boot(",ats=on")
        cap = src.pci.find_ext_capability(src.bdf, 0x0F)
        src.pci.cfg_write(src.bdf, cap + 6, 0x8000, 2)
        src.use_msix()
        src.setup(0)
        buf = Buf(src, 4096, 7)
        self.copy_job(src, 0, [buf])
        self.settle(src)
        buf.check(self)
        self.assertGreater(src.qt.counter(QOM, "ats-requests"), 0)
        layout = self.migrate_away(src, path)

        incoming = ["-device", DEV + ",ats=on", "-incoming", "defer"]
        qt = self.track(launch(lambda: QTest(qtest_case.QEMU, incoming)))
        qt.qmp("migrate-incoming", uri="file:" + path)
        self.wait_migration(qt)
        qt.qmp("cont")
        dst = rebuild_ioat(qt, *layout)
        self.assertEqual(dst.pci.cfg_read(dst.bdf, cap + 6, 2), 0x8000)
        self.assertEqual(dst.qt.counter(QOM, "ats-requests"), 0)
        dst.setup(0)
        again = Buf(dst, 4096, 8)
        self.copy_job(dst, 0, [again])
        self.settle(dst)
        again.check(self)
        self.assertGreater(dst.qt.counter(QOM, "ats-requests"), 0)


if __name__ == "__main__":
    main()
