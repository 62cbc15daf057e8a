#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of runner.py's options on synthetic logs: --allow, --expect-irq,
--expect-device-errors, the disk and bench lines (no QEMU; test_runner.py runs them)."""

import hashlib
import io
import os
import sys
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

from test_runner import GOOD, judge, with_lines  # noqa: E402


IRQS = """\
DMALAB: irq 310 PCI-MSIX-0000:00:02.0 0-edge ioat-msix
DMALAB: irq 0 PCI-MSIX-0000:00:02.0 1-edge ioat-msix
"""


class OptionTests(unittest.TestCase):
    """--allow, --expect-irq, --expect-device-errors, bench lines."""

    def test_allow(self):
        lines = ("ioatdma 0000:00:02.0: CHANSTS: 0x2 CHANERR: 0x0\n"
                 "ioatdma 0000:00:02.0: Errors:\n"
                 "ioatdma 0000:00:02.0: Reset channel...\n")
        text = with_lines(GOOD, lines)
        _, reasons = judge(text)
        self.assertEqual(reasons, ["ioatdma error: ioatdma 0000:00:02.0: "
                                   "Errors:"])
        facts, reasons = judge(text, "--allow", r"ioatdma .*: Errors:$")
        self.assertEqual(reasons, [])
        self.assertEqual(len(facts.allowed), 1)
        # only the lines it matches: another error still fails
        _, reasons = judge(with_lines(text, "ioatdma 0000:00:02.0: Err(8): "
                                      "Read Data Error"),
                           "--allow", r"ioatdma .*: Errors:$")
        self.assertEqual(len(reasons), 1)
        self.assertIn("Read Data Error", reasons[0])
        # kernel problems too, and several patterns
        warn = "WARNING: CPU: 1 PID: 9 at kernel/x.c:1 f+0x1/0x2"
        self.assertEqual(judge(with_lines(text, warn), "--allow", "Errors:$",
                               "--allow", r"^WARNING: .* kernel/x\.c")[1],
                         [])

    def test_expect_irq(self):
        text = with_lines(GOOD, IRQS)
        facts, reasons = judge(text, "--expect-irq", "ioat-msix")
        self.assertEqual(reasons, [])
        self.assertEqual(facts.irqs[0],
                         (310, "PCI-MSIX-0000:00:02.0 0-edge ioat-msix"))
        # a whole word: ioat-msi is not ioat-msix
        _, reasons = judge(text, "--expect-irq", "ioat-msi")
        self.assertIn("no interrupt named ioat-msi", reasons[0])
        self.assertIn("310 PCI-MSIX", reasons[0])
        _, reasons = judge(with_lines(GOOD, IRQS.replace("310", "0")),
                           "--expect-irq", "ioat-msix")
        self.assertIn("ioat-msix never fired", reasons[0])
        # a shared line counts
        shared = "DMALAB: irq 7 IO-APIC 16-fasteoi ioat-intx, virtio0\n"
        self.assertEqual(judge(with_lines(GOOD, shared), "--expect-irq",
                               "ioat-intx")[1], [])
        _, reasons = judge(GOOD, "--expect-irq", "ioat-intx")
        self.assertIn("(ioat lines: none)", reasons[0])

    def test_expect_device_errors(self):
        args = runner.make_parser().parse_args(["--judge-log", "x"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        stats = {"path": "/machine/peripheral-anon/device[0]",
                 "descriptors": 1210, "bytes": 6000, "errors": 0,
                 "interrupts": 1205}
        for errors, expect, ok in ((0, "0", True), (1, "0", False),
                                   (1, "1", True), (2, "1", False),
                                   (0, "1+", False), (1, "1+", True),
                                   (5, "1+", True)):
            args.expect_device_errors = expect
            boot.device_stats = [dict(stats, errors=errors)]
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            self.assertEqual(reasons == [], ok, (errors, expect, reasons))
        for bad in ("x", "-1", "1-", ""):
            with self.assertRaises(ValueError):
                runner.DeviceErrors.parse(bad)

    def test_probe_qmp_and_min_descriptors_and_bytes(self):
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        boot.device_stats = [{"path": "/machine/peripheral-anon/device[0]",
                              "descriptors": 1210, "bytes": 6000,
                              "errors": 0, "interrupts": 1205}]
        for argv, lat, ok in ((["--probe-qmp", "5"], [0.01, 0.2], True),
                              (["--probe-qmp", "5"], [0.01, 6.0], False),
                              (["--probe-qmp", "5"], [], False),
                              ([], [], True),
                              (["--min-device-descriptors", "1210"], [], True),
                              (["--min-device-descriptors", "1211"], [],
                               False),
                              (["--min-device-bytes", "6000"], [], True),
                              (["--min-device-bytes", "6001"], [], False)):
            args = runner.make_parser().parse_args(["--judge-log", "x"] +
                                                   argv)
            boot.qmp_latencies = lat
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            self.assertEqual(reasons == [], ok, (argv, lat, reasons))

    def test_expect_line(self):
        # (before the KTAP header: judged as a serial line only)
        text = with_lines(GOOD, "[    9.000000] ok 5 cpu-write-under-dma",
                          "KTAP version 1")
        self.assertEqual(judge(text, "--expect-line",
                               "^ok 5 cpu-write-under-dma$")[1], [])
        _, reasons = judge(text, "--expect-line", "^ok 5 cpu-write$",
                           "--expect-line", "dma0chan[0-3]")
        self.assertEqual(reasons,
                         ["no serial line matches '^ok 5 cpu-write$'"])
        # anchored, a result's pattern no longer matches its failure
        bad = text.replace("ok 5 cpu", "not ok 5 cpu")
        self.assertIn("no serial line matches '^ok 5 cpu-write-under-dma$'",
                      judge(bad, "--expect-line",
                            "^ok 5 cpu-write-under-dma$")[1])

    def test_expect_line_for_a_result_must_be_anchored(self):
        ap = runner.make_parser()
        args = ap.parse_args(["--judge-log", "x", "--expect-line",
                              "ok 2 copy-after-unmap"])
        with unittest.mock.patch("sys.stderr", new=io.StringIO()) as err:
            with self.assertRaises(SystemExit):
                runner.check_args(ap, args)
        self.assertIn("must be anchored ('^ok 2 copy-after-unmap')",
                      err.getvalue())
        args = ap.parse_args(["--judge-log", "x", "--expect-line",
                              "^ok 2 copy-after-unmap$", "--expect-line",
                              "read-error: copy from"])
        runner.check_args(ap, args)

    def test_no_profiler_with_more_than_one_cpu_under_icount(self):
        ap = runner.make_parser()
        base = ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--profile-plugin", "p.so",
                "--accel", "tcg"]
        args = ap.parse_args(base + ["--clock", "modelled", "--smp", "2"])
        with unittest.mock.patch("sys.stderr", new=io.StringIO()) as err:
            with self.assertRaises(SystemExit):
                runner.check_args(ap, args)
        self.assertIn("crashes in boot", err.getvalue())
        for ok in (["--clock", "modelled", "--smp", "1"], ["--clock", "host", "--smp", "2"]):
            runner.check_args(ap, ap.parse_args(base + ok))

    def test_virtio_disk(self):
        sha = "ab" * 32
        args = runner.make_parser().parse_args(
            ["--judge-log", "x", "--virtio-disk", "16"])
        args.disk = ("/nonexistent", sha)
        boot = runner.Boot()
        good = with_lines(GOOD, "DMALAB: disk vda sha256=%s bytes=%d" %
                          (sha, 16 << 20))
        for text, words in (
                (good, None),
                (good.replace(sha, "cd" * 32), "read back with sha256 cdcd"),
                (good.replace("bytes=%d" % (16 << 20), "bytes=4096"),
                 "read 4096 bytes, expected 16777216"),
                (GOOD, "reported no virtio disk checksum")):
            boot.lines = text.splitlines()
            boot.stamps = [0.0] * len(boot.lines)
            boot.rc = 0
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            if words is None:
                self.assertEqual(reasons, [])
            else:
                self.assertEqual(len(reasons), 1, reasons)
                self.assertIn(words, reasons[0])
        # a saved log has no disk file: the checksum is of the same contents
        del args.disk
        want = hashlib.sha256(runner.disk_data(1)).hexdigest()
        args.virtio_disk = 1
        for sha, ok in ((want, True), (sha, False)):
            boot.lines = with_lines(GOOD, "DMALAB: disk vda sha256=%s bytes=%d"
                                    % (sha, 1 << 20)).splitlines()
            boot.stamps = [0.0] * len(boot.lines)
            self.assertEqual(runner.analyse(boot, *runner.judging(args))[1] == [], ok, sha)

    def test_bench_lines(self):
        lines = ("# bench size=16384 channels=1 ops=400 ns=900000 "
                 "ops_per_s=444444.4 MB_per_s=7281.7\n"
                 "# bench-cpu size=16384 ops=400 ns=1 ops_per_s=1.0 "
                 "MB_per_s=2.5\n"
                 "# bench size=1048576 channels=4 ops=100 ns=20000000 "
                 "ops_per_s=5000.0 MB_per_s=5242.8\n"
                 "# benchmark-ish words that are not key=value\n")
        facts, reasons = judge(with_lines(GOOD, lines,
                                          "# dmalab_exercise: summary"))
        self.assertEqual(reasons, [])
        self.assertEqual([t for t, _ in facts.bench],
                         ["bench", "bench-cpu", "bench"])
        self.assertEqual(facts.bench[2][1]["MB_per_s"], "5242.8")
        table = runner.bench_tables(facts.bench)
        self.assertEqual(table[0], "bench:")
        self.assertEqual(table[1].split(), ["size", "channels", "ops", "ns",
                                            "ops_per_s", "MB_per_s"])
        self.assertEqual(table[3].split()[:2], ["1048576", "4"])
        self.assertEqual(table[4], "bench-cpu:")
        self.assertEqual(table[5].split(), ["size", "ops", "ns", "ops_per_s",
                                            "MB_per_s"])
        # columns line up
        self.assertEqual(len(set(len(l) for l in table[1:4])), 1)
        self.assertIsNone(runner.parse_bench("# bench"))
        self.assertEqual(runner.parse_bench("# bench x=1"),
                         ("bench", {"x": "1"}))


if __name__ == "__main__":
    unittest.main(verbosity=2)
