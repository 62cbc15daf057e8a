#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-ioat's properties over qtest: the latency limits, personality= (RAID offload, the
device id) and ATS with its device-TLB. Each test starts its own QEMU and checks it exits
cleanly. Usage: ioat_props_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import QMPError, QTest, QTestError  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import launch, main  # noqa: E402
from ioat_qtest import DEV, QOM, IoatCase  # noqa: E402
from ioat_rig import (  # noqa: E402
    CBVER, CHANERR_CONTROL, CTL_COMPL_WRITE, DMACAPABILITY, DONE, HALTED, Buf)


class Properties(IoatCase):
    def test_14_latency_limit_at_realize(self):
        for prop in ("latency-ns", "jitter-ns"):
            with self.subTest(prop):
                with self.assertRaises(QTestError) as cm:
                    launch(lambda: QTest(qtest_case.QEMU, ["-device", f"{DEV},{prop}={2**51}"]))
                self.assertEqual(cm.exception.returncode, 1)
                self.assertIn("2^50", cm.exception.stderr)
                self.assertIn(prop, cm.exception.stderr)
        # 2^50 itself is accepted (and warns: far beyond Linux's timeout).
        io = self.boot(f",latency-ns={2**50}", allowed=("completion timeout",))
        self.assertEqual(self.qom(io, "latency-ns"), 2**50)

    def test_14_latency_limit_at_run_time(self):
        io = self.boot(",latency-ns=1000")
        with self.assertRaises(QMPError) as cm:
            io.qt.qmp("qom-set", path=QOM, property="latency-ns", value=2**51)
        self.assertIn("2^50", cm.exception.error["desc"])
        self.assertEqual(self.qom(io, "latency-ns"), 1000)
        io.qt.qmp("qom-set", path=QOM, property="latency-ns", value=2**50)
        self.assertEqual(self.qom(io, "latency-ns"), 2**50)

    def test_14_linux_timeout_warning(self):
        io = self.boot(",latency-ns=300000000", allowed=("completion timeout",))
        self.assertTrue(io.qt.responsive())
        self.assertEqual(io.qt.qmp("query-status")["status"], "running")
        io.qt.close()
        self.assertIn("completion timeout", io.qt.stderr)
        self.assertIn("300 ms", io.qt.stderr)
        # Just under 200 ms: no warning at all (tearDown checks stderr is empty).
        self.boot(",latency-ns=199999999")


def gf_mul(a, b):
    """GF(2^8) product with the RAID-6 polynomial 0x11d (the test's own, not the model's)."""
    p = 0
    while b:
        if b & 1:
            p ^= a
        a = (a << 1) ^ (0x11D if a & 0x80 else 0)
        b >>= 1
    return p


def raid_descriptor(size, ctl, words):
    """A base or extended descriptor: size, ctl, then words 1-7 as {index: value}."""
    return struct.pack("<II7Q", size, ctl, *(words.get(i, 0) for i in range(1, 8)))


class Personalities(IoatCase):
    """personality= picks the PCI ID and DMACAPABILITY together (docs/ioat.rst); the
    per-operation counters show what ran."""
    OP_XOR, OP_PQ = 0x87, 0x89
    CAP_XOR, CAP_PQ, CAP_DWBES, CAP_RAID16SS = 1 << 8, 1 << 9, 1 << 13, 1 << 17
    SIZE = 4096

    def xor_and_pq(self, io):
        """One XOR of 3 sources and one PQ of 3 sources on channel 0 (layouts of
        drivers/dma/ioat/hw.h); returns (sources, xor dst, p, q, coefficients)."""
        io.use_msix()
        io.setup(0)
        srcs = [io.buffer(self.SIZE, seed=10 + i) for i in range(3)]
        xdst, p, q = (io.mem.alloc(self.SIZE, fill=0) for _ in range(3))
        coef = [1, 2, 0x8E]
        ring = io.mem.alloc(64 * 3, align=64, fill=0)
        ctl = CTL_COMPL_WRITE | 1 << 5   # src_cnt 1: three sources
        io.qt.memwrite(ring, raid_descriptor(self.SIZE, self.OP_XOR << 24 | ctl, {
            1: srcs[0][0], 2: xdst, 3: ring + 64, 4: srcs[1][0], 5: srcs[2][0]}))
        io.qt.memwrite(ring + 64, raid_descriptor(self.SIZE, self.OP_PQ << 24 | ctl, {
            1: srcs[0][0], 2: p, 3: ring + 128, 4: srcs[1][0], 5: srcs[2][0],
            6: coef[0] | coef[1] << 8 | coef[2] << 16, 7: q}))
        io.start(0, ring, 2)
        io.settle()
        return [d for _, d in srcs], xdst, p, q, coef

    def test_20_default_is_skx_without_raid(self):
        io = self.boot()
        self.assertEqual(io.pci.cfg_read(io.bdf, 0x02, 2), 0x2021)
        self.assertEqual(io.rd(None, DMACAPABILITY, 4), 0)
        self.xor_and_pq(io)
        self.assertEqual(io.state(0), HALTED)
        self.assertEqual(io.chanerr(0), CHANERR_CONTROL)
        self.assertEqual(io.qt.counter(QOM, "xor-descriptors"), 0)
        self.assertEqual(io.qt.counter(QOM, "errors"), 1)

    def test_21_bwd_offloads_xor_and_pq_and_counts_them(self):
        io = self.boot(",personality=bwd", device_id=0x0C50)
        self.assertEqual(io.pci.cfg_read(io.bdf, 0x02, 2), 0x0C50)
        cap = io.rd(None, DMACAPABILITY, 4)
        raid = self.CAP_XOR | self.CAP_PQ | self.CAP_RAID16SS
        self.assertEqual(cap & raid, raid, f"DMACAPABILITY {cap:#x}")
        self.assertFalse(cap & self.CAP_DWBES)
        self.assertEqual(io.rd(None, CBVER, 1), 0x33)
        srcs, xdst, p, q, coef = self.xor_and_pq(io)
        self.assertEqual((io.state(0), io.chanerr(0)), (DONE, 0))
        want_p = bytes(a ^ b ^ c for a, b, c in zip(*srcs))
        want_q = bytes(gf_mul(a, coef[0]) ^ gf_mul(b, coef[1]) ^ gf_mul(c, coef[2])
                       for a, b, c in zip(*srcs))
        self.assertEqual(io.qt.memread(xdst, self.SIZE), want_p)
        self.assertEqual(io.qt.memread(p, self.SIZE), want_p)
        self.assertEqual(io.qt.memread(q, self.SIZE), want_q)
        counters = io.qt.qmp("qom-get", path=QOM, property="counters")
        got = {f"{op}-{what}": counters[f"{op}-{what}"]
               for op in ("xor", "pq", "copy") for what in ("descriptors", "bytes")}
        self.assertEqual(got, {"xor-descriptors": 1, "xor-bytes": self.SIZE,
                               "pq-descriptors": 1, "pq-bytes": self.SIZE,
                               "copy-descriptors": 0, "copy-bytes": 0})
        self.assertCounters(io, descriptors=2, bytes=2 * self.SIZE, errors=0)

    def test_22_device_id_overrides_and_unknown_personality_is_refused(self):
        io = self.boot(",personality=bwd,device-id=0x0c51", device_id=0x0C51)
        self.assertTrue(io.rd(None, DMACAPABILITY, 4) & self.CAP_XOR)
        with self.assertRaises(QTestError) as cm:
            launch(lambda: QTest(qtest_case.QEMU, ["-device", DEV + ",personality=icx"]))
        self.assertEqual(cm.exception.returncode, 1)
        self.assertIn("unknown personality", cm.exception.stderr)
        self.assertIn("bwd", cm.exception.stderr)


    ATS_CAP = 0x0F
    ATS_CTRL = 6
    ATS_ENABLE = 0x8000
    ATS_COUNTERS = ("ats-requests", "ats-refused", "ats-hits", "ats-invalidations",
                    "ats-dropped", "ats-audits", "ats-stale")

    def ats_counters(self, io):
        counters = io.qt.qmp("qom-get", path=QOM, property="counters")
        return {c: counters[c] for c in self.ATS_COUNTERS}

    def test_23_ats_capability_and_device_tlb(self):
        plain = self.boot()
        self.assertIsNone(plain.pci.find_ext_capability(plain.bdf, self.ATS_CAP))
        io = self.boot(",ats=on,ats-audit=on")
        cap = io.pci.find_ext_capability(io.bdf, self.ATS_CAP)
        self.assertEqual(cap, 0x100)
        # Off until the guest sets Enable: the copy goes untranslated, nothing cached.
        io.use_msix()
        self.verified_copy(io, 0, size=8192, seed=3)
        self.assertEqual(self.ats_counters(io)["ats-requests"], 0)
        io.pci.cfg_write(io.bdf, cap + self.ATS_CTRL, self.ATS_ENABLE, 2)
        # Without an IOMMU a translation is the address itself: the copy is the same, and
        # the second one over the same pages hits what the first cached.
        buf = Buf(io, 8192, 4)
        for _ in range(2):
            compl = io.setup(0)
            (d,) = self.copy_job(io, 0, [buf])
            self.settle(io)
            buf.check(self)
            self.assertEqual(io.qt.readq(compl), d | DONE)
        got = self.ats_counters(io)
        self.assertGreater(got["ats-requests"], 0)
        self.assertGreater(got["ats-hits"], 0)
        self.assertEqual(got["ats-audits"], got["ats-hits"])
        self.assertEqual((got["ats-refused"], got["ats-stale"]), (0, 0))
        # A reset turns ATS off again, as the guest sees it.
        io.qt.qmp("system_reset")
        self.assertEqual(io.pci.cfg_read(io.bdf, cap + self.ATS_CTRL, 2), 0)

    def test_24_ats_translated_requests_stop_with_bus_mastering(self):
        """A device-TLB hit must not take DMA past a cleared Bus Master Enable: a translated
        request goes to system memory directly, so the device checks the bit itself."""
        io = self.boot(",ats=on")
        cap = io.pci.find_ext_capability(io.bdf, self.ATS_CAP)
        io.pci.cfg_write(io.bdf, cap + self.ATS_CTRL, self.ATS_ENABLE, 2)
        buf = Buf(io, 4096, 5)
        io.setup(0)
        (d,) = self.copy_job(io, 0, [buf], int_last=False)
        self.settle(io)
        buf.check(self)
        # The same descriptor again, its pages cached, with bus mastering off.
        io.qt.memwrite(buf.region, buf.guard + buf.blank + buf.guard)
        io.setup(0)
        hits = self.ats_counters(io)["ats-hits"]
        cmd = io.pci.cfg_read(io.bdf, 4, 2)
        io.pci.cfg_write(io.bdf, 4, cmd & ~0x4, 2)
        io.start(0, d, 1)
        self.settle(io)
        self.assertGreater(self.ats_counters(io)["ats-hits"], hits)
        buf.check(self, copied=False)
        self.assertEqual(io.state(0), HALTED)


if __name__ == "__main__":
    main()
