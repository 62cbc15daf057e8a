#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of runner.py's --boots (several guest boots in one QEMU run):
the log split into boots and each boot judged (no QEMU needed).
test_runner.py runs them with its own."""

import os
import sys
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from test_runner import GOOD, RESET_BOOT  # noqa: E402


def judge_boots(text, reset_ends, *extra, boot_stats=None):
    args = runner.make_parser().parse_args(
        ["--judge-log", "x", "--min-ops", "100"] + list(extra))
    boot = runner.Boot()
    boot.lines = text.splitlines()
    boot.stamps = [float(i) for i in range(len(boot.lines))]
    boot.rc = 0
    boot.wall = float(len(boot.lines))
    boot.reset_ends = reset_ends
    boot.boot_stats = boot_stats or {}
    return runner.judge_run(boot, *runner.judging(args))


class BootsTests(unittest.TestCase):
    """--boots: one QEMU run, several guest boots."""

    def test_split(self):
        text = "early junk\n" + RESET_BOOT * 3
        segs = runner.split_boots(self._boot(text))
        self.assertEqual(len(segs), 3)
        self.assertEqual(segs[0].lines[0], "early junk")
        self.assertTrue(segs[1].lines[0].startswith("Linux version"))
        # the firmware's banner starts a boot; its kernel belongs to it
        fw = "\x1bcSeaBIOS (version 1.16.2-debian-1.16.2-1)\nBooting from " \
            "ROM.."
        text = (fw + RESET_BOOT) * 3     # "Booting from ROM..Linux version"
        segs = runner.split_boots(self._boot(text))
        self.assertEqual(len(segs), 3)
        self.assertTrue(all("SeaBIOS" in s.lines[0] for s in segs))
        self.assertTrue(all(len(s.lines) == len(segs[0].lines) for s in segs))
        self.assertEqual(sum(len(s.lines) for s in segs),
                         len(text.splitlines()))
        # without kernel banners, /init's first line starts a boot
        bare = "\n".join(l for l in text.splitlines()
                         if not l.startswith("Linux version"))
        self.assertEqual(len(runner.split_boots(self._boot(bare))), 3)

    @staticmethod
    def _boot(text):
        b = runner.Boot()
        b.lines = text.splitlines()
        b.stamps = [0.0] * len(b.lines)
        return b

    def test_every_boot_passes(self):
        results, run_reasons = judge_boots(RESET_BOOT * 3, {0, 1, 2}, "--boots", "3")
        self.assertEqual(run_reasons, [])
        self.assertEqual(len(results), 3)
        for seg, facts, reasons in results:
            self.assertEqual(reasons, [])
            self.assertTrue(seg.ended_by_reset)
            self.assertFalse(facts.done)

    def test_one_bad_boot(self):
        bad = RESET_BOOT.replace("ok 3 dma0chan2", "not ok 3 dma0chan2")
        results, _ = judge_boots(RESET_BOOT + bad + RESET_BOOT, {0, 1, 2},
                                 "--boots", "3")
        self.assertEqual([r == [] for _, _, r in results],
                         [True, False, True])
        self.assertIn("KTAP not ok: 3 dma0chan2", results[1][2][0])
        # ioatdma must bind in every boot
        unbound = RESET_BOOT.replace(
            "DMALAB: ioatdma bound 0000:00:03.0 vendor=0x8086 "
            "device=0x2021", "DMALAB: ioatdma not bound")
        results, _ = judge_boots(RESET_BOOT * 2 + unbound, None, "--boots",
                                 "3")
        self.assertIn("ioatdma not bound", results[2][2])

    def test_too_few_boots(self):
        # the guest powered off in its second boot (no reset after it)
        results, run_reasons = judge_boots(RESET_BOOT + GOOD, {0},
                                           "--boots", "3")
        self.assertEqual(len(results), 2)
        self.assertEqual([r for _, _, r in results], [[], []])
        self.assertFalse(results[1][0].ended_by_reset)
        self.assertEqual(run_reasons,
                         ["the guest ran 2 of 3 boots (it did not reset)"])
        # a boot that did not end in a reset must finish /init
        results, _ = judge_boots(RESET_BOOT * 2, {0}, "--boots", "2")
        self.assertEqual(results[0][2], [])
        self.assertIn("guest /init did not finish", results[1][2])

    def test_extra_boot_dropped(self):
        # QEMU was quit just as the boot after the last began
        results, run_reasons = judge_boots(
            RESET_BOOT * 2 + "Linux version 6.1.0-57-amd64 (x)\n", {0, 1},
            "--boots", "2")
        self.assertEqual(len(results), 2)
        self.assertEqual(run_reasons, [])

    def test_counters_per_boot(self):
        stats = {"path": "/machine/peripheral-anon/device[0]",
                 "descriptors": 200, "bytes": 5000, "errors": 0,
                 "interrupts": 150}
        # boot 1's counters read at the reset marker; boot 2 reset by the
        # guest (none); boot 3's too few bytes
        results, _ = judge_boots(
            RESET_BOOT * 3, {0, 1, 2}, "--boots", "3",
            boot_stats={0: [stats], 2: [dict(stats, bytes=10)]})
        self.assertIsNotNone(results[0][0].device_stats)
        self.assertIsNone(results[1][0].device_stats)
        self.assertEqual([r == [] for _, _, r in results],
                         [True, True, False])
        self.assertIn("fewer than the 4000", results[2][2][0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
