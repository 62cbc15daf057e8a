#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of dmalab-vtd over qtest: its registers at 0xfed90000, queued
invalidation timed on the virtual clock, what a hostile guest can do to them (malformed
descriptors, a wait status aimed at the unit's own registers, odd access sizes), migration
and fault plans; and the rig the vtd qtests share (Vtd, VtdCase). Event messages, translation
and scalable mode: vtd_events_qtest.py, vtd_translation_qtest.py, vtd_scalable_qtest.py.
Each test starts its own QEMU and checks it exits cleanly.

Usage: vtd_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import GuestAlloc, QTest  # noqa: E402
import libqtest  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import MachineCase, main  # noqa: E402
from ioat_rig import CHANERR_NEXT_ADDR, CTL_COMPL_WRITE, HALTED, Ioat  # noqa: E402

BASE = 0xFED90000
VER, CAP, ECAP, GCMD, GSTS, RTADDR, CCMD = 0x00, 0x08, 0x10, 0x18, 0x1C, 0x20, 0x28
FSTS, FECTL, FEDATA, FEADDR, FEUADDR = 0x34, 0x38, 0x3C, 0x40, 0x44
IQH, IQT, IQA, ICS = 0x80, 0x88, 0x90, 0x9C
IECTL, IEDATA, IEADDR, IRTA = 0xA0, 0xA4, 0xA8, 0xB8
FRCD = 0x220
TE, SRTP, QIE, IRE, SIRTP, CFI = 1 << 31, 1 << 30, 1 << 26, 1 << 25, 1 << 24, 1 << 23
FSTS_PFO, FSTS_PPF, FSTS_IQE = 1 << 0, 1 << 1, 1 << 4
QOM = "/machine/peripheral/vtd"
DEFAULT_COSTS = {"desc": 200, "page": 10, "wait": 500}


def wait_desc(status, data, interrupt=False):
    return struct.pack("<QQ", data << 32 | 1 << 5 | (1 << 4 if interrupt else 0) | 0x5,
                       status)


def iotlb_global():
    return struct.pack("<QQ", 1 << 4 | 0x2, 0)


class Vtd:
    """Register access and a queue on a QTest machine."""

    def __init__(self, qt):
        self.qt = qt
        self.mem = GuestAlloc(qt)
        self.tail = 0

    def r32(self, off):
        return self.qt.readl(BASE + off)

    def r64(self, off):
        return self.qt.readq(BASE + off)

    def w32(self, off, v):
        self.qt.writel(BASE + off, v)

    def w64(self, off, v):
        self.qt.writeq(BASE + off, v)

    def command(self, bit, on=True):
        sts = self.r32(GSTS) & (TE | QIE | IRE | CFI)
        self.w32(GCMD, sts | bit if on else sts & ~bit)

    def counter(self, name):
        return self.qt.counter(QOM, name)

    def qi_enable(self):
        self.iq = self.mem.alloc(4096, fill=0)
        self.w64(IQA, self.iq)
        self.w64(IQT, 0)
        self.command(QIE)
        self.tail = 0

    def submit(self, *descs):
        for d in descs:
            self.qt.memwrite(self.iq + 16 * self.tail, d)
            self.tail = (self.tail + 1) % 256
        self.w64(IQT, self.tail << 4)

    def ir_enable(self, irta=None, size=7):
        """Interrupt remapping as Linux enables it: the queue, IRTA (a table of
        2^(size+1) entries in RAM unless `irta` is given), SIRTP, a global
        interrupt entry cache invalidation, IRE. Returns the table's address."""
        if not self.r32(GSTS) & QIE:
            self.qi_enable()
        if irta is None:
            self.irt = self.mem.alloc(16 << (size + 1), fill=0)
            irta = self.irt | size
        self.w64(IRTA, irta)
        self.command(SIRTP)
        self.submit(struct.pack("<QQ", 0x4, 0))
        self.qt.clock_step(10_000)
        self.command(IRE)
        return irta & ~0xFFF

    def irte(self, index, lo, hi=0):
        self.qt.memwrite(self.irt + 16 * index, struct.pack("<QQ", lo, hi))


class VtdCase(MachineCase):
    """What the vtd qtests share: a unit alone or with dmalab-ioat behind it as the DMA
    master, tables for the ioat, and copies through the unit."""

    def assertLandsAt(self, qt, status, ns, value):
        """The wait status write lands exactly ns from now: not a nanosecond earlier."""
        qt.clock_step(ns - 1)
        self.assertEqual(qt.readl(status), 0)
        qt.clock_step(1)
        self.assertEqual(qt.readl(status), value)

    def unit(self, props="", args=()):
        qt = self.track(QTest(qtest_case.QEMU, ["-device", "dmalab-vtd,id=vtd" + props]
                              + list(args)))
        return Vtd(qt)

    def ioat_behind(self, props=""):
        io = Ioat(qtest_case.QEMU, args=["-device", "dmalab-vtd,id=vtd" + props])
        self.track(io.qt)
        v = Vtd(io.qt)
        v.mem = io.mem    # one allocator for the guest RAM both use
        return io, v

    def copy_fails(self, io):
        """A copy whose descriptor fetch cannot be translated halts channel 0."""
        io.setup(0)
        (src, _), (dst, _) = io.buffer(4096), io.buffer(4096, seed=2)
        first = io.chain([(4096, CTL_COMPL_WRITE, src, dst)])[0]
        io.start(0, first, 1)
        io.settle()
        self.assertEqual(io.state(0), HALTED)
        self.assertTrue(io.chanerr(0) & CHANERR_NEXT_ADDR, hex(io.chanerr(0)))

    def tables(self, io, v, lo, hi):
        """A root table whose entry for the ioat's bus points at a context
        table holding (lo, hi) for it; translation on."""
        root = v.mem.alloc(4096, fill=0)
        ctx = v.mem.alloc(4096, fill=0)
        bus, devfn = io.bdf >> 8, io.bdf & 0xFF
        v.qt.memwrite(root + 16 * bus, struct.pack("<QQ", ctx | 1, 0))
        v.qt.memwrite(ctx + 16 * devfn, struct.pack("<QQ", lo, hi))
        v.w64(RTADDR, root)
        v.command(SRTP)
        v.command(TE)

    @staticmethod
    def ram_in_4k_pages(v, pd0, top):
        """Guest RAM below `top` mapped 1:1 in 4 KiB pages under the directory pd0 (the
        first GiB): a leaf table per 2 MiB, allocated here."""
        for i in range((top + (1 << 21) - 1) >> 21):
            leaf = v.mem.alloc(4096)
            v.qt.memwrite(leaf, struct.pack("<512Q", *((i << 21) + (j << 12) | 3
                                                       for j in range(512))))
            v.qt.writeq(pd0 + 8 * i, leaf | 3)

    def copy_lands(self, io, v, below=None, apart=False):
        """An 8 KiB copy on channel 0 lands, translated by the unit without a fault
        (its buffers below `below`, where the tables map only that much; with apart, the
        source alone in a 2 MiB page: the completion status, the descriptors and the
        destination are in others)."""
        io.setup(0)
        if apart:
            src = io.mem.alloc(8192, align=1 << 21)
            data = bytes((1 + i * 7 + (i >> 8)) & 0xFF for i in range(8192))
            io.qt.memwrite(src, data)
            io.mem.alloc(8192, align=1 << 21)    # the rest of the source's page
        else:
            src, data = io.buffer(8192)
        dst, _ = io.buffer(8192, seed=9)
        if apart:
            self.assertNotEqual(src >> 21, dst >> 21)
        if below is not None:
            self.assertLess(max(src, dst), below)
        first = io.chain([(8192, CTL_COMPL_WRITE, src, dst)])[0]
        io.start(0, first, 1)
        io.settle()
        self.assertEqual(io.qt.memread(dst, 8192), data)
        self.assertGreater(v.counter("translations"), 0)
        self.assertEqual(v.counter("faults"), 0)
        return src, dst

    def window_copy(self, io, src, dst, size=64):
        io.setup(0)
        first = io.chain([(size, CTL_COMPL_WRITE, src, dst)])[0]
        io.start(0, first, 1)
        io.settle()

    def pass_through(self, io, v):
        """The ioat's context entry says pass-through (TT 2, domain 1); translation on."""
        self.tables(io, v, 2 << 2 | 1, 1 << 8 | 2)


class VtdTest(VtdCase):
    def test_identity(self):
        v = self.unit()
        self.assertEqual(v.r32(VER), 0x10)
        cap = v.r64(CAP)
        self.assertEqual(cap >> 8 & 0x1F, 0x6)       # SAGAW: 39 and 48 bits
        self.assertEqual(cap >> 16 & 0x3F, 47)       # MGAW
        self.assertEqual((cap >> 24 & 0x3FF) * 16, FRCD)
        ecap = v.r64(ECAP)
        self.assertTrue(ecap & 0x2)                  # QI
        self.assertEqual(v.r32(FECTL), 1 << 31)      # events masked out of reset
        self.assertEqual(v.counter("translations"), 0)

    def test_wait_completes_on_the_virtual_clock(self):
        v = self.unit()
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        v.submit(iotlb_global(), wait_desc(status, 0xC0DE))
        # 200 ns for the IOTLB descriptor (an empty IOTLB), then 500 ns for the wait.
        self.assertLandsAt(v.qt, status, 700, 0xC0DE)
        self.assertEqual(v.r64(IQH), v.r64(IQT))
        self.assertEqual(v.counter("waits"), 1)
        self.assertEqual(v.counter("wait-modelled-ns"), 700)
        self.assertEqual(v.counter("iotlb-inv-global"), 1)

    def test_costs_are_settable_at_run_time(self):
        v = self.unit()
        v.qt.qmp("qom-set", path=QOM, property="wait-ns", value=5000)
        self.assertEqual(v.qt.qmp("qom-get", path=QOM, property="wait-ns"), 5000)
        with self.assertRaises(libqtest.QMPError):
            v.qt.qmp("qom-set", path=QOM, property="inv-desc-ns", value=2 * 10**9)
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        v.submit(wait_desc(status, 1))
        self.assertLandsAt(v.qt, status, 5000, 1)

    def test_malformed_descriptor_raises_iqe_and_the_queue_resumes(self):
        v = self.unit(",wait-ns=0,inv-desc-ns=0")
        status = v.mem.alloc(64, fill=0)
        v.w32(FEADDR, 0xFEE00000)  # an interrupt for CPU 0: the event is an MSI
        v.w32(FEDATA, 0x30)
        v.w32(FECTL, 0)
        v.qi_enable()
        v.submit(wait_desc(status, 1), struct.pack("<QQ", 0x9, 0), wait_desc(status, 3))
        v.qt.clock_step(10)
        self.assertTrue(v.r32(FSTS) & FSTS_IQE)
        self.assertEqual(v.r64(IQH), 1 << 4)
        self.assertEqual(v.qt.readl(status), 1)
        self.assertEqual(v.counter("fault-events"), 1)
        v.qt.memwrite(v.iq + 16, wait_desc(status, 2))
        v.w32(FSTS, FSTS_IQE)
        v.qt.clock_step(10)
        self.assertEqual(v.qt.readl(status), 3)
        self.assertEqual(v.counter("queue-errors"), 1)

    def test_caching_mode_is_advertised_only_when_asked(self):
        self.assertFalse(self.unit().r64(CAP) & 0x80)
        self.assertTrue(self.unit(",caching-mode=on").r64(CAP) & 0x80)  # CM

    def test_device_tlb_descriptors(self):
        """device-iotlb=on: ECAP.DT, and device-TLB descriptors completed before
        the wait behind them (200 ns each, whatever their range); one with a
        reserved bit is an IQE. Without it the type is an IQE too."""
        off = self.unit()
        self.assertFalse(off.r64(ECAP) & 0x4)
        v = self.unit(",device-iotlb=on")
        self.assertTrue(v.r64(ECAP) & 0x4)                      # DT
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        sid = 0x0108 << 32
        everything = 0x7FFFFFFFFFFFF001                        # Linux's "all"
        v.submit(struct.pack("<QQ", sid | 3, 0x5000),
                 struct.pack("<QQ", sid | 3, everything), wait_desc(status, 7))
        self.assertLandsAt(v.qt, status, 900, 7)
        self.assertEqual(v.counter("devtlb-inv"), 2)
        self.assertEqual(v.counter("devtlb-pages"), 1 + (1 << 52))
        v.submit(struct.pack("<QQ", sid | 3 | 1 << 21, 0))     # reserved bit 21
        v.qt.clock_step(1000)
        self.assertTrue(v.r32(FSTS) & FSTS_IQE)
        self.assertEqual(v.counter("devtlb-inv"), 2)
        off.qi_enable()
        off.submit(struct.pack("<QQ", sid | 3, 0x5000))
        off.qt.clock_step(1000)
        self.assertTrue(off.r32(FSTS) & FSTS_IQE)

    def test_wait_status_aimed_at_the_units_own_registers(self):
        v = self.unit(",wait-ns=0,inv-desc-ns=0")
        v.qi_enable()
        # "TE" into GCMD, then 0 into IQT: both must be refused, not performed.
        v.submit(wait_desc(BASE + GCMD, TE), wait_desc(BASE + IQT, 0))
        v.qt.clock_step(10)
        self.assertFalse(v.r32(GSTS) & TE)
        self.assertEqual(v.r64(IQT), 2 << 4)
        self.assertEqual(v.r64(IQH), 2 << 4)
        self.assertEqual(v.counter("wait-status-failed"), 2)

    def test_odd_access_sizes_are_ignored(self):
        """Accesses the unit refuses (VT-d 10.2: aligned DWORDs and QWORDs only), each
        carrying TE (GCMD bit 31, the byte at GCMD + 3) where a unit that took it would set
        it."""
        v = self.unit(args=["-d", "guest_errors"])
        # The misaligned QWORD is split by QEMU along alignment (the unit's MMIO ops take no
        # unaligned access): a WORD at GCMD + 2 (TE), a DWORD at GSTS (read-only, TE again)
        # and a WORD at RTADDR (0x1000, an address); the unit must refuse both WORDs. At
        # GCMD + 4 the pieces would be GSTS and RTADDR's low DWORD, which cannot set TE; at
        # GCMD - 4, ECAP's upper DWORD and a well-formed DWORD at GCMD, which sets TE.
        cases = [
            ("byte at GCMD + 3", v.qt.writeb, GCMD + 3, 0x80, [(1, GCMD + 3)]),
            ("word at GCMD + 2", v.qt.writew, GCMD + 2, 0x8000, [(2, GCMD + 2)]),
            ("qword at GCMD + 2", v.qt.writeq, GCMD + 2, 0x1000_8000_0000_8000,
             [(2, GCMD + 2), (2, RTADDR)]),
        ]
        for what, write, off, value, refused in cases:
            with self.subTest(what):
                seen = len(v.qt.stderr)
                write(BASE + off, value)
                self.assertFalse(v.r32(GSTS) & TE, "TE set")
                self.assertEqual(v.r64(RTADDR), 0)
                log = v.qt.stderr[seen:]
                for size, at in refused:
                    self.assertIn(f"vtd: {size}-byte write at {at:#x} ignored", log)
            if v.r32(GSTS) & TE:
                v.w32(GCMD, 0)          # the next case starts with TE clear again
            v.w64(RTADDR, 0)
        self.assertEqual(v.qt.readb(BASE + VER), 0)
        self.assertTrue(v.qt.responsive())

    def test_tail_beyond_the_queue(self):
        v = self.unit()
        v.qi_enable()
        v.w64(IQT, 300 << 4)      # the queue holds 256
        v.qt.clock_step(1000)
        self.assertTrue(v.r32(FSTS) & FSTS_IQE)
        self.assertEqual(v.r64(IQH), 0)

    def test_migration_in_the_middle_of_a_wait(self):
        fd, path = tempfile.mkstemp(prefix="vtd-migration-", dir="/tmp")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        v = self.unit(",wait-ns=10000")
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        v.submit(wait_desc(status, 0x77))
        v.qt.clock_step(5000)
        self.assertEqual(v.qt.readl(status), 0)
        clock = v.qt.clock_now()
        v.qt.qmp("stop")
        v.qt.qmp("migrate", uri="file:" + path)
        self.wait_migration(v.qt)
        qt = self.track(QTest(qtest_case.QEMU, ["-device", "dmalab-vtd,id=vtd,wait-ns=10000",
                                                "-incoming", "defer"]))
        qt.qmp("migrate-incoming", uri="file:" + path)
        self.wait_migration(qt)
        qt.clock_set(clock)
        qt.qmp("cont")
        self.assertTrue(qt.readl(BASE + GSTS) & QIE)
        self.assertLandsAt(qt, status, 5000, 0x77)

    # Fault plans (docs/faults.rst) ------------------------------------------------------
    def plan(self, rules):
        return libqtest.fault_plan(self, rules)

    def test_plan_delays_a_wait(self):
        path = self.plan([{"name": "slow", "kind": "delay-invalidation", "delay": "2ms",
                           "op": "wait"}])
        v = self.unit(",fault-plan=" + path)
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        v.submit(iotlb_global(), wait_desc(status, 0xC0DE))
        self.assertLandsAt(v.qt, status, 2_000_700, 0xC0DE)
        self.assertEqual(v.counter("faults-injected"), 1)
        self.assertRegex(v.qt.qmp("qom-get", path=QOM, property="fault-log"),
                         r"^0 \d+ns rule=slow kind=delay-invalidation unit=4294967295 key=\d+\n$")

    def test_plan_faults_a_translation_of_the_device(self):
        io, v = self.ioat_behind()
        self.pass_through(io, v)
        bdf = "%02x:%02x.%x" % (io.bdf >> 8, io.bdf >> 3 & 31, io.bdf & 7)
        path = self.plan([{"kind": "translation-fault", "reason": 6, "requester": bdf,
                           "op": "read", "nth": 1}])
        v.qt.qmp("qom-set", path=QOM, property="fault-plan", value=path)
        self.copy_fails(io)    # the descriptor fetch is the first read
        hi = v.r64(FRCD + 8)
        self.assertTrue(hi >> 63)
        self.assertEqual(hi >> 32 & 0xFF, 0x6)
        self.assertEqual(hi & 0xFFFF, io.bdf)
        self.assertEqual(v.counter("faults-injected"), 1)
        self.assertTrue(io.qt.responsive())

    def test_bad_plans_are_refused_and_the_old_one_stays(self):
        good = self.plan([{"kind": "drop-invalidation", "op": "iotlb"}])
        v = self.unit(",fault-plan=" + good)
        for rules, message in (
                ([{"kind": "delay-data", "delay": 1, "device": "vtd"}],
                 "is not a fault of dmalab-vtd 'vtd'"),
                ([{"kind": "delay-invalidation", "delay": "2s"}], "at most 1000000000 ns"),
                ([{"kind": "drop-invalidation", "requester": 16}],
                 "\"requester\" does not apply to kind drop-invalidation"),
                ([{"kind": "translation-fault", "reason": 0}], "\"reason\" must be one of")):
            with self.subTest(message):
                with self.assertRaises(libqtest.QMPError) as cm:
                    v.qt.qmp("qom-set", path=QOM, property="fault-plan", value=self.plan(rules))
                self.assertIn(message, cm.exception.error["desc"])
        self.assertEqual(v.qt.qmp("qom-get", path=QOM, property="fault-plan"), good)
        # Still in force: a global IOTLB invalidation is dropped, its wait is not.
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        v.submit(iotlb_global(), wait_desc(status, 1))
        v.qt.clock_step(10_000)
        self.assertEqual(v.qt.readl(status), 1)
        self.assertEqual(v.counter("iotlb-inv-global"), 0)
        self.assertEqual(v.counter("faults-injected"), 1)


if __name__ == "__main__":
    main()
