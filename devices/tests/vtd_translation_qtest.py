#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-vtd over qtest: translation for dmalab-ioat: faults of missing or hostile tables,
the paging-structure caches, fault records, pass-through, and ATS in the interrupt range.
Usage: vtd_translation_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qtest_case  # noqa: E402
from qtest_case import main  # noqa: E402
from ioat_rig import CHANERR_READ_DATA, CTL_COMPL_WRITE, DONE, HALTED, Ioat  # noqa: E402
from vtd_qtest import (  # noqa: E402
    BASE, FRCD, FSTS, FSTS_PFO, FSTS_PPF, GSTS, RTADDR, SRTP, TE, Vtd, VtdCase, wait_desc)


class VtdTranslationTest(VtdCase):
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

    def test_pass_through_context_lets_the_device_copy(self):
        io, v = self.ioat_behind()
        self.pass_through(io, v)
        self.copy_lands(io, v)

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


if __name__ == "__main__":
    main()
