#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of dmalab-vtd over qtest: its registers at 0xfed90000, queued
invalidation timed on the virtual clock, and what a hostile guest can do to it (malformed
descriptors, a wait status aimed at the unit's own registers, odd access sizes, a root table
in MMIO, translation with no root table), with dmalab-ioat behind it as the DMA master.
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
from ioat_rig import (  # noqa: E402
    CHANERR_NEXT_ADDR, CHANERR_READ_DATA, CHANERR_WRITE_DATA, CTL_COMPL_WRITE, DMACOUNT, DONE,
    HALTED, Ioat)

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
        return self.qt.qmp("qom-get", path=QOM, property=name)

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


class VtdTest(MachineCase):
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

    def test_translation_without_a_root_table_faults_the_device(self):
        io, v = self.ioat_behind()
        v.command(TE)
        self.assertTrue(v.r32(GSTS) & TE)
        self.copy_fails(io)
        hi = v.r64(FRCD + 8)
        self.assertTrue(hi >> 63)                       # F
        self.assertEqual(hi >> 32 & 0xFF, 0x8)          # root table not usable
        self.assertEqual(hi & 0xFFFF, io.bdf)           # the requester
        self.assertTrue(v.r32(FSTS) & FSTS_PPF)
        self.assertTrue(io.qt.responsive())

    def test_root_table_in_mmio_faults_without_touching_it(self):
        io, v = self.ioat_behind()
        v.w64(RTADDR, BASE)        # the unit's own registers as its root table
        v.command(SRTP)
        v.command(TE)
        self.copy_fails(io)
        self.assertEqual(v.r64(FRCD + 8) >> 32 & 0xFF, 0x8)
        self.assertTrue(io.qt.responsive())

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

    def test_reserved_bits_in_a_context_entry(self):
        io, v = self.ioat_behind()
        pgd = v.mem.alloc(4096, fill=0)
        self.tables(io, v, pgd | 1 << 4 | 1, 1 << 8 | 2)   # bit 4: reserved
        self.copy_fails(io)
        self.assertEqual(v.r64(FRCD + 8) >> 32 & 0xFF, 0xB)

    def test_reserved_bits_in_a_paging_entry(self):
        io, v = self.ioat_behind()
        pgd = v.mem.alloc(4096, fill=0)
        for i in range(512):     # every top-level entry: present, snoop bit set
            v.qt.writeq(pgd + 8 * i, pgd | 1 << 11 | 3)
        self.tables(io, v, pgd | 1, 1 << 8 | 2)
        self.copy_fails(io)
        self.assertEqual(v.r64(FRCD + 8) >> 32 & 0xFF, 0xC)

    def test_a_table_that_points_at_itself(self):
        io, v = self.ioat_behind()
        pgd = v.mem.alloc(4096, fill=0)
        for i in range(512):     # each level leads back to the same table
            v.qt.writeq(pgd + 8 * i, pgd | 3)
        self.tables(io, v, pgd | 1, 1 << 8 | 2)
        io.setup(0)
        first = io.chain([(64, CTL_COMPL_WRITE, 0x1000, 0x2000)])[0]
        io.start(0, first, 1)
        io.settle()
        # Every walk stops after its four levels; the device reads the table
        # page itself as its descriptor and gets whatever error that gives.
        walks, reads = v.counter("page-walks"), v.counter("walk-reads")
        self.assertGreater(walks, 0)
        self.assertLessEqual(reads, 4 * walks)
        self.assertTrue(io.qt.responsive())

    # Paging-structure caches (docs/vtd.rst) ---------------------------------------------
    DST_IOVA = 1 << 30

    @staticmethod
    def ram_in_4k_pages(v, pd0, top):
        """Guest RAM below `top` mapped 1:1 in 4 KiB pages under the directory pd0 (the
        first GiB): a leaf table per 2 MiB, allocated here."""
        for i in range((top + (1 << 21) - 1) >> 21):
            leaf = v.mem.alloc(4096)
            v.qt.memwrite(leaf, struct.pack("<512Q", *((i << 21) + (j << 12) | 3
                                                       for j in range(512))))
            v.qt.writeq(pd0 + 8 * i, leaf | 3)

    def psc_tables(self, io, v):
        """Legacy tables for the ioat (domain 1, 4 levels): guest RAM 1:1 in 4 KiB pages,
        and two pages at DST_IOVA under a PDE of their own. Returns (the PDE's address,
        the two pages)."""
        pml4, pdpt, pd0, pd1, pt = (v.mem.alloc(4096, fill=0) for _ in range(5))
        pages = v.mem.alloc(8192, fill=0)
        v.qt.writeq(pml4, pdpt | 3)
        v.qt.writeq(pdpt, pd0 | 3)
        v.qt.writeq(pdpt + 8, pd1 | 3)
        self.ram_in_4k_pages(v, pd0, v.mem.end + (4 << 20))  # room for later allocations
        v.qt.writeq(pd1, pt | 3)
        v.qt.writeq(pt, pages | 3)
        v.qt.writeq(pt + 8, pages + 4096 | 3)
        self.tables(io, v, pml4 | 1, 1 << 8 | 2)
        return pd1, pages

    def test_paging_structure_caches_shorten_walks(self):
        """Copies through 4-level tables: with the caches (the default) most walks read
        fewer than four entries, and pde-cache-hits counts them; with every level's cache
        off each walk reads four."""
        for props, on in (("", True), (",pde-cache=0,pdpe-cache=0,pml4e-cache=0", False)):
            with self.subTest(on=on):
                io, v = self.ioat_behind(props)
                _, pages = self.psc_tables(io, v)
                src, data = io.buffer(8192)
                self.window_copy(io, src, self.DST_IOVA, size=8192)
                self.assertEqual((io.state(0), io.chanerr(0)), (DONE, 0))
                self.assertEqual(io.qt.memread(pages, 8192), data)
                walks, reads = v.counter("page-walks"), v.counter("walk-reads")
                hits = v.counter("pde-cache-hits")
                self.assertGreater(walks, 2)
                if on:
                    self.assertGreater(hits, 0)
                    self.assertLess(reads, 4 * walks)
                else:
                    self.assertEqual(hits, 0)
                    self.assertEqual(reads, 4 * walks)

    def test_a_pde_changed_under_the_invalidation_hint(self):
        """A guest that points a cached PDE at a new leaf table and says, with a
        page-selective invalidation's hint (IH), that only leaves changed: the unit goes on
        through the leaf table it cached (the hint said so; never another address than
        the guest's tables gave), counts the hint, and after an invalidation without the
        hint uses the new table."""
        io, v = self.ioat_behind()
        pd1, pages = self.psc_tables(io, v)
        pt2, pages2 = v.mem.alloc(4096, fill=0), v.mem.alloc(4096, fill=0)
        v.qt.writeq(pt2, pages2 | 3)
        src, data = io.buffer(4096)
        self.window_copy(io, src, self.DST_IOVA, size=4096)
        self.assertEqual(io.qt.memread(pages, 4096), data)
        io.qt.memset(pages, 4096, 0)
        v.qt.writeq(pd1, pt2 | 3)
        status = v.mem.alloc(64, fill=0)
        v.qi_enable()
        for ih, where, token in ((True, pages, 1), (False, pages2, 2)):
            # IOTLB page-selective (G 3), domain 1, DST_IOVA, IH in bit 6; then a wait
            v.submit(struct.pack("<QQ", 1 << 16 | 3 << 4 | 0x2,
                                 self.DST_IOVA | (1 << 6 if ih else 0)),
                     wait_desc(status, token))
            io.qt.clock_step(100_000)
            self.assertEqual(v.qt.readl(status), token)
            self.window_copy(io, src, self.DST_IOVA, size=4096)
            self.assertEqual((io.state(0), io.chanerr(0)), (DONE, 0), ih)
            self.assertEqual(io.qt.memread(where, 4096), data, ih)
            io.qt.memset(where, 4096, 0)
        self.assertEqual(v.counter("inv-leaf-hints"), 1)
        self.assertGreaterEqual(v.counter("psc-dropped"), 3)
        self.assertEqual(io.qt.memread(pages, 4096), bytes(4096))
        self.assertTrue(io.qt.responsive())

    # Scalable mode (docs/vtd.rst, Scalable mode) -----------------------------------------
    def sm_tables(self, io, v, dir_ptr=None, table_ptr=None, flptr=None):
        """Scalable-mode tables as Linux builds them for the ioat: a TTM=01 root table,
        its 256-bit context entry (PDTS 2), RID_PASID 0's directory and PASID entries,
        first stage from `flptr`; any pointer may be given (a hostile one). TE on."""
        root, ctx = v.mem.alloc(4096, fill=0), v.mem.alloc(4096, fill=0)
        bus, devfn = io.bdf >> 8, io.bdf & 0xFF
        self.assertLess(devfn, 0x80)
        dir_ = v.mem.alloc(4096, fill=0) if dir_ptr is None else dir_ptr
        table = v.mem.alloc(4096, fill=0) if table_ptr is None else table_ptr
        pgd = v.mem.alloc(4096, fill=0) if flptr is None else flptr
        v.qt.memwrite(root + 16 * bus, struct.pack("<QQ", ctx | 1, 0))
        v.qt.memwrite(ctx + 32 * devfn, struct.pack("<QQQQ", dir_ | 2 << 9 | 1, 0, 0, 0))
        if dir_ptr is None:
            v.qt.memwrite(dir_, struct.pack("<Q", table | 1))
        if table_ptr is None:   # PGTT 001 (first stage), domain 2
            v.qt.memwrite(table, struct.pack("<8Q", 1 << 6 | 1, 2, pgd, 0, 0, 0, 0, 0))
        v.w64(RTADDR, root | 1 << 10)
        v.command(SRTP)
        v.command(TE)

    def test_scalable_mode_is_advertised_only_when_asked(self):
        smts, slts, flts = 1 << 43, 1 << 46, 1 << 47
        self.assertFalse(self.unit().r64(ECAP) & (smts | slts | flts))
        v = self.unit(",mode=scalable")
        self.assertEqual(v.r64(ECAP) & (smts | slts | flts), smts | slts | flts)
        self.assertEqual(v.qt.qmp("qom-get", path=QOM, property="mode"), "scalable")
        v = self.unit(",mode=scalable,first-stage=off")
        self.assertEqual(v.r64(ECAP) & (smts | slts | flts), smts | slts)

    def test_scalable_mode_copy_through_first_stage_tables(self):
        """A copy through first-stage tables that map the first GiB 1:1 as 2 MiB pages
        under one table of each level, with U/S and R/W: with A and D already set (as
        Linux sets them) the unit writes nothing to the tables; with them clear it sets
        A in the entries it used and D in the written page's only (the source sits in
        another 2 MiB page), in guest RAM."""
        a, d = 1 << 5, 1 << 6
        for preset in (True, False):
            with self.subTest(preset=preset):
                io, v = self.ioat_behind(",mode=scalable")
                pgd = v.mem.alloc(4096, fill=0)
                self.sm_tables(io, v, flptr=pgd)
                l3, l2 = v.mem.alloc(4096, fill=0), v.mem.alloc(4096, fill=0)
                bits = 1 | 2 | 4 | (a if preset else 0)
                v.qt.writeq(pgd, l3 | bits)
                v.qt.writeq(l3, l2 | bits)
                for i in range(512):    # 2 MiB pages (PS)
                    v.qt.writeq(l2 + 8 * i, i << 21 | bits | (d if preset else 0) | 1 << 7)
                src, dst = self.copy_lands(io, v, below=1 << 30, apart=True)
                updates = v.counter("fs-ad-updates")
                if preset:
                    self.assertEqual(updates, 0)
                    continue
                self.assertGreaterEqual(updates, 3)
                self.assertTrue(v.qt.readq(pgd) & a)
                self.assertTrue(v.qt.readq(l3) & a)
                self.assertEqual(v.qt.readq(l2 + 8 * (dst >> 21)) & (a | d), a | d)
                # the source's page, apart from the destination's: read, so A and not D
                self.assertEqual(v.qt.readq(l2 + 8 * (src >> 21)) & (a | d), a)

    def test_a_pasid_invalidation_reaches_every_page_of_a_run(self):
        """Scalable mode, second-stage tables under the context entry's RID_PASID (0, and 5
        as the issue found it): an 8 KiB copy through two 4 KiB pages, the second page's
        entry cleared, a PASID-based page-selective invalidation of both pages and a wait;
        the next 8 KiB copy faults on the second page (reason 85h: second-stage entry not
        present) and leaves it alone. A run must not keep the second page from another
        PASID's entries (issue 41, first bug)."""
        dst_iova = 1 << 30
        for rid_pasid in (0, 5):
            with self.subTest(rid_pasid=rid_pasid):
                io, v = self.ioat_behind(",mode=scalable")
                root, ctx, dir_, table = (v.mem.alloc(4096, fill=0) for _ in range(4))
                pml4, pdpt, pd0, pd1, pt = (v.mem.alloc(4096, fill=0) for _ in range(5))
                pages = v.mem.alloc(8192, fill=0)
                bus, devfn = io.bdf >> 8, io.bdf & 0xFF
                v.qt.memwrite(root + 16 * bus, struct.pack("<QQ", ctx | 1, 0))
                v.qt.memwrite(ctx + 32 * devfn,
                              struct.pack("<QQQQ", dir_ | 2 << 9 | 1, rid_pasid, 0, 0))
                v.qt.writeq(dir_ + 8 * (rid_pasid >> 6), table | 1)
                # PGTT 010 (second stage), AW 48-bit, domain 3
                v.qt.memwrite(table + 64 * (rid_pasid & 63),
                              struct.pack("<8Q", pml4 | 2 << 6 | 2 << 2 | 1, 3, 0, 0, 0, 0, 0, 0))
                v.qt.writeq(pml4, pdpt | 3)
                v.qt.writeq(pdpt, pd0 | 3)
                v.qt.writeq(pdpt + 8, pd1 | 3)
                # Guest RAM 1:1 in 4 KiB pages: with a large page cached the unit
                # translates a run page by page, and the run path is the point here.
                self.ram_in_4k_pages(v, pd0, v.mem.end)
                v.qt.writeq(pd1, pt | 3)
                v.qt.writeq(pt, pages | 3)
                v.qt.writeq(pt + 8, pages + 4096 | 3)
                v.w64(RTADDR, root | 1 << 10)
                v.command(SRTP)
                v.command(TE)
                iq, status = v.mem.alloc(8192, fill=0), v.mem.alloc(64, fill=0)
                v.w64(IQA, iq | 1 << 11 | 1)    # 256-bit descriptors
                v.w64(IQT, 0)
                v.command(QIE)
                # the source's two pages one run too, so that the copy maps the
                # destination's two as one (the unit's translate_run)
                src = io.mem.alloc(8192, align=1 << 21)
                data = bytes((i * 7 + 3) & 0xFF for i in range(8192))
                io.qt.memwrite(src, data)
                self.window_copy(io, src, dst_iova, size=8192)
                self.assertEqual((io.state(0), io.chanerr(0)), (DONE, 0))
                self.assertEqual(io.qt.memread(pages, 8192), data)
                io.qt.memset(pages + 4096, 4096, 0xA5)
                v.qt.writeq(pt + 8, 0)
                # page-selective within PASID (G 3), domain 3, both pages (AM 1); a wait
                inv = struct.pack("<QQ", rid_pasid << 32 | 3 << 16 | 3 << 4 | 6, dst_iova | 1)
                v.qt.memwrite(iq, inv + bytes(16))
                v.qt.memwrite(iq + 32, wait_desc(status, 7) + bytes(16))
                v.w64(IQT, 2 << 5)
                io.qt.clock_step(10_000)
                self.assertEqual(v.qt.readl(status), 7)
                self.window_copy(io, src, dst_iova, size=8192)
                self.assertEqual(io.state(0), HALTED)
                self.assertTrue(io.chanerr(0) & CHANERR_WRITE_DATA, hex(io.chanerr(0)))
                self.assertEqual(io.qt.memread(pages + 4096, 4096), b"\xa5" * 4096,
                                 "the unmapped page was written")
                hi = v.r64(FRCD + 8)
                self.assertEqual(hi >> 32 & 0xFF, 0x85)
                self.assertEqual(v.r64(FRCD) & ~0xFFF, dst_iova + 4096)

    def test_scalable_tables_in_mmio_fault_without_touching_them(self):
        """A PASID directory, a PASID table or first-stage tables aimed at the unit's
        own registers: the walk cannot read them (its own DMA is refused), the copy
        faults with the structure's access error, and the registers are unchanged."""
        for what, kw, reason in (("directory", {"dir_ptr": BASE}, 0x50),
                                 ("PASID table", {"table_ptr": BASE}, 0x58),
                                 ("first stage", {"flptr": BASE}, 0x70)):
            with self.subTest(what):
                io, v = self.ioat_behind(",mode=scalable")
                self.sm_tables(io, v, **kw)
                self.copy_fails(io)
                self.assertEqual(v.r64(FRCD + 8) >> 32 & 0xFF, reason)
                self.assertEqual(v.r32(VER), 0x10)
                self.assertTrue(io.qt.responsive())

    def test_scalable_wide_queue(self):
        """IQA.DW: 256-bit descriptors, the wait on the virtual clock (a PASID-cache
        and a PASID-based IOTLB invalidation, 200 ns each, then the wait's 500); a
        descriptor with bits 255:128 set is an IQE, as is IQT bit 4."""
        v = self.unit(",mode=scalable")
        status = v.mem.alloc(64, fill=0)
        iq = v.mem.alloc(8192, fill=0)
        v.w64(IQA, iq | 1 << 11 | 1)
        v.w64(IQT, 0)
        v.command(QIE)
        wait = wait_desc(status, 9)
        for i, d in enumerate((struct.pack("<QQ", 3 << 4 | 7, 0),
                               struct.pack("<QQ", 2 << 16 | 2 << 4 | 6, 0), wait)):
            v.qt.memwrite(iq + 32 * i, d + bytes(16))
        v.w64(IQT, 3 << 5)
        self.assertLandsAt(v.qt, status, 900, 9)
        self.assertEqual(v.r64(IQH), 3 << 5)
        self.assertEqual(v.counter("pc-inv-global"), 1)
        self.assertEqual(v.counter("piotlb-inv-pasid"), 1)
        v.qt.memwrite(iq + 96, struct.pack("<QQQQ", 1 << 4 | 1, 0, 1, 0))
        v.w64(IQT, 4 << 5)
        v.qt.clock_step(1000)
        self.assertTrue(v.r32(FSTS) & FSTS_IQE)
        self.assertEqual(v.r64(IQH), 3 << 5)
        w = self.unit(",mode=scalable")
        w.w64(IQA, v.mem.alloc(8192, fill=0) | 1 << 11 | 1)
        w.w64(IQT, 0)
        w.command(QIE)
        w.w64(IQT, 0x10)
        self.assertTrue(w.r32(FSTS) & FSTS_IQE)

    def test_tail_beyond_the_queue(self):
        v = self.unit()
        v.qi_enable()
        v.w64(IQT, 300 << 4)      # the queue holds 256
        v.qt.clock_step(1000)
        self.assertTrue(v.r32(FSTS) & FSTS_IQE)
        self.assertEqual(v.r64(IQH), 0)

    def test_fault_records_overflow(self):
        io, v = self.ioat_behind()
        v.command(TE)            # no root table: every fetch faults (reason 8)
        for rnd in range(3):
            for ch in range(io.nchan):
                io.setup(ch)
                first = io.chain([(64, CTL_COMPL_WRITE, 0x1000, 0x2000)])[0]
                io.mem.alloc(4096)   # next chain on another page: no coalescing
                io.start(ch, first, 1)
            io.settle()
        self.assertTrue(v.r32(FSTS) & FSTS_PFO)
        self.assertEqual(v.counter("faults-recorded"), 8)
        self.assertGreater(v.counter("faults-overflowed"), 0)
        self.assertTrue(io.qt.responsive())

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

    # The interrupt address range and ATS (docs/vtd.rst, Device-TLBs) ---------------------
    WINDOW = 0xFEE00000

    def ats_window(self, scalable=False):
        """dmalab-ioat with ATS enabled behind a unit with device-TLBs, tables that let it
        use them (legacy: TT=01; scalable mode: DTE, and RID_PASID 0's entry second-stage):
        the first GiB 1:1 in 2 MiB pages, and IOVA 0xFEE00000, in the interrupt address
        range, mapped read-write to a RAM page full of 0x5A (the page after it not
        mapped). Returns (io, v, the RAM page)."""
        io = Ioat(qtest_case.QEMU, device="dmalab-ioat,ats=on",
                  args=["-device", "dmalab-vtd,id=vtd,device-iotlb=on" +
                        (",mode=scalable" if scalable else "")])
        self.track(io.qt)
        v = Vtd(io.qt)
        v.mem = io.mem
        ram = v.mem.alloc(4096, fill=0x5A)
        pml4, pdpt, pd0, pd3, pt = (v.mem.alloc(4096, fill=0) for _ in range(5))
        v.qt.writeq(pml4, pdpt | 3)
        v.qt.writeq(pdpt, pd0 | 3)
        v.qt.writeq(pdpt + 8 * (self.WINDOW >> 30), pd3 | 3)
        for i in range(512):
            v.qt.writeq(pd0 + 8 * i, i << 21 | 1 << 7 | 3)
        v.qt.writeq(pd3 + 8 * (self.WINDOW >> 21 & 0x1FF), pt | 3)
        v.qt.writeq(pt, ram | 3)
        if scalable:
            root, ctx, dir_, table = (v.mem.alloc(4096, fill=0) for _ in range(4))
            bus, devfn = io.bdf >> 8, io.bdf & 0xFF
            v.qt.memwrite(root + 16 * bus, struct.pack("<QQ", ctx | 1, 0))
            # DTE: device-TLBs; PDTS 2; RID_PASID 0's entry: PGTT 010, AW 48-bit, domain 2
            v.qt.memwrite(ctx + 32 * devfn,
                          struct.pack("<QQQQ", dir_ | 2 << 9 | 1 << 2 | 1, 0, 0, 0))
            v.qt.writeq(dir_, table | 1)
            v.qt.memwrite(table, struct.pack("<8Q", pml4 | 2 << 6 | 2 << 2 | 1, 2,
                                             0, 0, 0, 0, 0, 0))
            v.w64(RTADDR, root | 1 << 10)
            v.command(SRTP)
            v.command(TE)
        else:
            self.tables(io, v, pml4 | 1 << 2 | 1, 1 << 8 | 2)    # TT=01: device-TLBs
        cap = io.pci.find_ext_capability(io.bdf, 0x0F)
        io.pci.cfg_write(io.bdf, cap + 6, 0x8000, 2)          # ATS Enable
        return io, v, ram

    def window_copy(self, io, src, dst, size=64):
        io.setup(0)
        first = io.chain([(size, CTL_COMPL_WRITE, src, dst)])[0]
        io.start(0, first, 1)
        io.settle()

    def test_ats_writes_to_the_interrupt_range_stay_interrupt_requests(self):
        """Tables that map IOVA 0xFEE00000 to RAM do not make it RAM for a device with
        ATS: the unit answers its translation request there untranslated-only, so the
        device's 64-byte write goes out untranslated and becomes 16 interrupt requests,
        the RAM page untouched (VT-d 3.14, 4.2.3); the same for a page the tables do
        not map, which is no write error."""
        for scalable, dst in ((s, d) for s in (False, True)
                              for d in (self.WINDOW, self.WINDOW + 0x1000)):
            with self.subTest(scalable=scalable, dst=hex(dst)):
                io, v, ram = self.ats_window(scalable)
                src, _ = io.buffer(64)
                before = v.counter("interrupts")
                self.window_copy(io, src, dst)
                self.assertEqual((io.state(0), io.chanerr(0)), (DONE, 0))
                self.assertEqual(io.qt.memread(ram, 4096), b"\x5a" * 4096)
                self.assertGreaterEqual(v.counter("interrupts") - before, 16)
                self.assertEqual(v.counter("faults"), 0)
                self.assertGreaterEqual(v.counter("untranslated-only"), 1)

    def test_ats_reads_of_the_interrupt_range_are_no_ram(self):
        """A device with ATS reading IOVA 0xFEE00000, which the tables map to RAM, does
        not get that RAM: the answer is untranslated-only and write-only, so the read is
        refused and the channel halts with a read error (legacy and scalable mode)."""
        for scalable in (False, True):
            with self.subTest(scalable=scalable):
                io, v, ram = self.ats_window(scalable)
                dst, _ = io.buffer(64, seed=3)
                self.window_copy(io, self.WINDOW, dst)
                self.assertEqual(io.state(0), HALTED)
                self.assertTrue(io.chanerr(0) & CHANERR_READ_DATA, hex(io.chanerr(0)))
                self.assertNotEqual(io.qt.memread(dst, 64), b"\x5a" * 64)

    def test_pass_through_context_lets_the_device_copy(self):
        io, v = self.ioat_behind()
        self.pass_through(io, v)
        self.copy_lands(io, v)

    # Fault plans (docs/faults.rst) ------------------------------------------------------
    def plan(self, rules):
        return libqtest.fault_plan(self, rules)

    def pass_through(self, io, v):
        """The ioat's context entry says pass-through (TT 2, domain 1); translation on."""
        self.tables(io, v, 2 << 2 | 1, 1 << 8 | 2)

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
