#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-vtd over qtest in scalable mode: its capabilities, first-stage and PASID tables,
PASID-based invalidation, hostile tables and the 256-bit queue.
Usage: vtd_scalable_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qtest_case import main  # noqa: E402
from ioat_rig import CHANERR_WRITE_DATA, DONE, HALTED  # noqa: E402
from vtd_qtest import (  # noqa: E402
    BASE, ECAP, FRCD, FSTS, FSTS_IQE, IQA, IQH, IQT, QIE, QOM, RTADDR, SRTP, TE, VER, VtdCase,
    wait_desc)


class VtdScalableTest(VtdCase):
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


if __name__ == "__main__":
    main()
