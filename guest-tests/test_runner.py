#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of runner.py's log judging, bench.py's comparison and
image.py's cpio/ELF helpers (no QEMU needed)."""

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import image   # noqa: E402
import runner  # noqa: E402

GOOD = """\
Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP
DMALAB: init kernel=6.1.0-57-amd64 scenario=memcpy uptime=2.50
dca service started, version 1.12.1
ioatdma: Intel(R) QuickData Technology Driver 5.00
DMALAB: ioatdma bound 0000:00:03.0 vendor=0x8086 device=0x2021
DMALAB: dma channels=4 (dma0chan0 dma0chan1 dma0chan2 dma0chan3)
DMALAB: exercise start params=iterations=300
KTAP version 1
# dmalab_exercise: iterations=300 max_len=1048576 seed=1 timeout_ms=5000 channels=4
1..4
# dmalab_exercise: dma0chan0 ops=300 bytes=1000 ns=2000 wall_ns=3000 MB/s=500.0 failures=0
ok 1 dma0chan0
# dmalab_exercise: dma0chan1 ops=300 bytes=1000 ns=2000 wall_ns=3000 MB/s=500.0 failures=0
ok 2 dma0chan1
# dmalab_exercise: dma0chan2 ops=300 bytes=1000 ns=2000 wall_ns=3000 MB/s=500.0 failures=0
ok 3 dma0chan2
# dmalab_exercise: dma0chan3 ops=300 bytes=1000 ns=2000 wall_ns=3000 MB/s=500.0 failures=0
ok 4 dma0chan3
# dmalab_exercise: summary channels=4 ops=1200 bytes=4000 ns=8000 MB/s=500.0 failures=0
DMALAB: exercise end rc=0 uptime=9.00
DMALAB: done
reboot: Power down
"""


def judge(text, *extra):
    args = runner.make_parser().parse_args(
        ["--judge-log", "x", "--min-ops", "1000"] + list(extra))
    if args.expect_channels is not None and args.expect_channels < 0:
        args.expect_channels = None
    boot = runner.Boot()
    boot.lines = text.splitlines()
    boot.stamps = [0.0] * len(boot.lines)
    boot.rc = 0
    return runner.analyse(boot, args)


class JudgeTests(unittest.TestCase):
    def assertPass(self, text, *extra):
        facts, reasons = judge(text, *extra)
        self.assertEqual(reasons, [])
        return facts

    def assertFail(self, text, needle, *extra):
        _, reasons = judge(text, *extra)
        self.assertTrue(any(needle in r for r in reasons),
                        "%r not in %r" % (needle, reasons))

    def test_good(self):
        facts = self.assertPass(GOOD)
        self.assertEqual(facts["summary"]["ops"], 1200)
        self.assertEqual(len(facts["chan_stats"]), 4)
        self.assertEqual(facts["kernel"], "6.1.0-57-amd64")

    def test_timestamps_and_prefix(self):
        stamped = "".join("[%5d.%06d] %s\n" % (i, i, l)
                          for i, l in enumerate(GOOD.splitlines()))
        self.assertPass(stamped)
        prefixed = GOOD.replace("KTAP version", "kern  :info  : KTAP version")
        for tag in ("1..4", "ok ", "# dmalab_exercise"):
            prefixed = prefixed.replace("\n" + tag, "\nkern  :info  : " + tag)
        facts = self.assertPass(prefixed)
        self.assertEqual(facts["summary"]["ops"], 1200)

    def test_not_ok(self):
        self.assertFail(GOOD.replace("ok 3 dma0chan2", "not ok 3 dma0chan2"),
                        "KTAP not ok: 3 dma0chan2")

    def test_missing_case(self):
        self.assertFail(GOOD.replace("ok 4 dma0chan3\n", ""),
                        "missing results for test(s) 4")

    def test_no_ktap(self):
        self.assertFail(GOOD.replace("KTAP version 1", "hello"),
                        "no KTAP output")

    def test_kernel_problems(self):
        for line, needle in (
                ("BUG: kernel NULL pointer dereference", "kernel BUG"),
                ("Oops: 0000 [#1] PREEMPT SMP NOPTI", "kernel oops"),
                ("WARNING: CPU: 0 PID: 1 at drivers/dma/ioat/init.c:1",
                 "kernel WARNING"),
                ("Call Trace:", "call trace"),
                ("Kernel panic - not syncing: Fatal exception", "panic")):
            self.assertFail(GOOD.replace("DMALAB: done",
                                         line + "\nDMALAB: done"), needle)

    def test_ioat_errors(self):
        for line in (
                "ioatdma 0000:00:03.0: failed to start channel chanerr: 0x0",
                "ioatdma 0000:00:03.0: Self-test copy timed out, disabling",
                "ioatdma 0000:00:03.0: Err(4): Destination address error",
                "ioatdma 0000:00:03.0: Errors not handled:",
                "ioatdma 0000:00:03.0: ioat_timer_event: Channel halted (4)"):
            self.assertFail(GOOD.replace("DMALAB: done",
                                         line + "\nDMALAB: done"),
                            "ioatdma error")
        # driver banner and DCA notes are not errors
        self.assertPass(GOOD.replace(
            "DMALAB: done",
            "ioatdma 0000:00:03.0: DCA is disabled, disabling DCA\n"
            "DMALAB: done"))

    def test_channels_and_ops(self):
        self.assertFail(GOOD, "expected 2 DMA channels", "--expect-channels",
                        "2")
        self.assertPass(GOOD, "--expect-channels", "-1")
        self.assertFail(GOOD, "only 1200 verified copies", "--min-ops",
                        "5000")

    def test_exerciser_got_fewer_channels(self):
        text = GOOD.replace("1..4", "1..3")
        text = text.replace(
            "# dmalab_exercise: dma0chan3 ops=300 bytes=1000 ns=2000 "
            "wall_ns=3000 MB/s=500.0 failures=0\nok 4 dma0chan3\n", "")
        # the header says how many channels the exerciser got ...
        self.assertFail(text.replace("timeout_ms=5000 channels=4",
                                     "timeout_ms=5000 channels=3"),
                        "could use 3 DMA channel(s), expected 4")
        # ... without one, the plan (one test per channel) does
        self.assertFail("\n".join(l for l in text.splitlines()
                                  if "iterations=300 " not in l),
                        "could use 3 DMA channel(s), expected 4")

    def test_plan_is_not_the_channel_count_in_other_modes(self):
        text = GOOD.replace("# dmalab_exercise: iterations=",
                            "# dmalab_exercise: mode=recover iterations=")
        text = text.replace("1..4", "1..5").replace(
            "ok 4 dma0chan3\n", "ok 4 dma0chan3\nok 5 copies-after-reset\n")
        facts = self.assertPass(text)
        self.assertEqual((facts["ex_mode"], facts["ex_channels"]),
                         ("recover", 4))

    def test_not_bound(self):
        text = GOOD.replace(
            "DMALAB: ioatdma bound 0000:00:03.0 vendor=0x8086 device=0x2021",
            "DMALAB: ioatdma not bound")
        self.assertFail(text, "ioatdma not bound")

    def test_wrong_id(self):
        self.assertFail(GOOD.replace("device=0x2021", "device=0x0e20"),
                        "expected 0x8086:0x2021")

    def test_boot_scenario_needs_no_ktap(self):
        text = "\n".join(l for l in GOOD.splitlines()
                         if l.startswith(("DMALAB", "Linux")))
        self.assertPass(text.replace("scenario=memcpy", "scenario=boot"),
                        "--scenario", "boot")

    def test_unfinished(self):
        self.assertFail(GOOD.replace("DMALAB: done", ""),
                        "did not finish")
        self.assertFail("SeaBIOS\n", "never reported")

    def test_guest_error_line(self):
        self.assertFail(GOOD.replace(
            "DMALAB: done", "DMALAB: error: insmod x failed\nDMALAB: done"),
            "guest: error")

    def test_skip_fails_unless_allowed_by_name(self):
        text = GOOD.replace("ok 4 dma0chan3",
                            "ok 4 dma0chan3 # SKIP only 3 channel(s)")
        _, reasons = judge(text)
        self.assertEqual(reasons, ["KTAP skipped (no --allow-skip for it): 4 "
                                   "dma0chan3 (SKIP only 3 channel(s))"])
        facts = self.assertPass(text, "--allow-skip", "dma0chan3")
        self.assertEqual(facts["skipped"], ["4 dma0chan3"])
        self.assertPass(text, "--allow-skip", r"dma0chan\d")
        # the whole name: another test's skip is not allowed by it
        self.assertFail(text, "KTAP skipped", "--allow-skip", "dma0chan")
        self.assertFail(text, "KTAP skipped", "--allow-skip", "dma0chan2")
        # lower case too (TAP's directive is case-insensitive), and spelt out
        self.assertFail(text.replace("# SKIP", "# skip"), "KTAP skipped")
        self.assertFail(text.replace("# SKIP", "# skipped:"), "KTAP skipped")
        # a skip that failed is a failure, allowed or not
        self.assertFail(text.replace("ok 4", "not ok 4"), "KTAP not ok: 4",
                        "--allow-skip", "dma0chan3")
        # other directives are no skip
        self.assertPass(GOOD.replace("ok 4 dma0chan3",
                                     "ok 4 dma0chan3 # expected: lands"))

    def test_timeout(self):
        for extra, words in (([], "timeout after 300 s"),
                             (["--timeout", "10", "--boots", "2"],
                              "timeout after 20 s")):
            args = runner.make_parser().parse_args(
                ["--judge-log", "x"] + extra)
            boot = runner.Boot()
            boot.lines = GOOD.splitlines()
            boot.stamps = [0.0] * len(boot.lines)
            boot.rc = -9
            boot.timed_out = True
            reasons = runner.analyse(boot, args)[1]
            self.assertEqual(reasons[:1], [words], reasons)
        # a killed QEMU that did not time out says how it ended
        boot.timed_out = False
        self.assertIn("qemu exited with status -9",
                      runner.analyse(boot, args)[1][0])

    def test_missing_plan(self):
        self.assertFail(GOOD.replace("1..4\n", ""), "KTAP: no plan line")
        # a plan later in the output is no plan either (nor is one that
        # comes after another)
        self.assertFail(GOOD.replace("1..4\n", "").replace(
            "DMALAB: done", "1..4\nDMALAB: done").replace(
                "KTAP version 1\n", "KTAP version 1\n1..2\n"),
            "results outside the plan: 3,4")

    def test_duplicate_results(self):
        self.assertFail(GOOD.replace("ok 2 dma0chan1\n",
                                     "ok 2 dma0chan1\nok 2 dma0chan1\n"),
                        "KTAP: duplicate results 2")
        # a later "ok" does not hide a "not ok" of the same test
        self.assertFail(GOOD.replace("ok 2 dma0chan1\n",
                                     "not ok 2 dma0chan1\nok 2 dma0chan1\n"),
                        "KTAP: duplicate results 2")


IRQS = """\
DMALAB: irq 310 PCI-MSIX-0000:00:02.0 0-edge ioat-msix
DMALAB: irq 0 PCI-MSIX-0000:00:02.0 1-edge ioat-msix
"""


def with_lines(text, extra, before="DMALAB: done"):
    return text.replace(before, extra.rstrip("\n") + "\n" + before)


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
        self.assertEqual(len(facts["allowed"]), 1)
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
        self.assertEqual(facts["irqs"][0],
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
            reasons = runner.analyse(boot, args)[1]
            self.assertEqual(reasons == [], ok, (errors, expect, reasons))
        for bad in ("x", "-1", "1-", ""):
            with self.assertRaises(ValueError):
                runner.parse_errors_expectation(bad)

    def test_probe_qmp_and_min_descriptors(self):
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
                               False)):
            args = runner.make_parser().parse_args(["--judge-log", "x"] +
                                                   argv)
            boot.qmp_latencies = lat
            reasons = runner.analyse(boot, args)[1]
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
            reasons = runner.analyse(boot, args)[1]
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
            self.assertEqual(runner.analyse(boot, args)[1] == [], ok, sha)

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
        self.assertEqual([t for t, _ in facts["bench"]],
                         ["bench", "bench-cpu", "bench"])
        self.assertEqual(facts["bench"][2][1]["MB_per_s"], "5242.8")
        table = runner.bench_tables(facts["bench"])
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


# One boot of the inflight-reset scenario: KTAP complete, then the reset.
RESET_BOOT = """\
Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP
DMALAB: init kernel=6.1.0-57-amd64 scenario=memcpy uptime=2.50
DMALAB: ioatdma bound 0000:00:03.0 vendor=0x8086 device=0x2021
DMALAB: dma channels=4 (dma0chan0 dma0chan1 dma0chan2 dma0chan3)
DMALAB: exercise start params=iterations=30 mode=inflight-reset
KTAP version 1
# dmalab_exercise: mode=inflight-reset iterations=30 max_len=1048576 seed=1 timeout_ms=5000 channels=4
1..5
ok 1 dma0chan0
ok 2 dma0chan1
ok 3 dma0chan2
ok 4 dma0chan3
# dmalab_exercise: summary channels=4 ops=120 bytes=4000 ns=8000 MB/s=500.0 failures=0
ok 5 inflight-reset # 61 of 64 copies in flight
# dmalab_exercise: resetting with 60 copies in flight
"""


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
    return runner.judge_run(boot, args)


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
            self.assertFalse(facts["done"])

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

    def test_cmdline(self):
        def cmd(*extra):
            ap = runner.make_parser()
            args = ap.parse_args(
                ["--qemu", "q", "--kernel", "k", "--initrd", "i"] +
                list(extra))
            runner.check_args(ap, args)
            return runner.build_cmdline(args)
        self.assertIn("-no-reboot", cmd())
        self.assertNotIn("-no-reboot", cmd("--boots", "3"))
        # with -no-reboot QEMU would turn system_reset into a shutdown
        self.assertNotIn("-no-reboot", cmd("--reset-on", "DMALAB: reset-me"))


FAKE_QEMU = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "fake_qemu.py")


class ResetTests(unittest.TestCase):
    """Boots that end in a machine reset, against fake_qemu.py (QEMU's run
    states, events and counters as the runner sees them over QMP): every
    boot's counters are read before the reset clears them."""

    def run_fake(self, ends, *runner_args, descriptors=200, fake_args=()):
        with tempfile.NamedTemporaryFile("w", suffix=".txt",
                                         delete=False) as f:
            f.write(RESET_BOOT)
        self.addCleanup(os.unlink, f.name)
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--min-ops",
             "100", "--boots", str(len(ends))] + list(runner_args))
        boot = runner.run_qemu(
            [sys.executable, FAKE_QEMU, "--boot-text", f.name, "--ends",
             ",".join(ends), "--descriptors", str(descriptors),
             "--bytes", "5000", "-M", "q35"] + list(fake_args), 30, False,
            counters=runner.want_counters(args), boots=args.boots,
            reset_on=re.compile(args.reset_on) if args.reset_on else None)
        self.assertFalse(boot.timed_out, boot.lines)
        self.assertEqual((boot.rc, boot.qmp_error), (0, None), boot.lines)
        return boot, runner.judge_run(boot, args)

    def test_guest_resets(self):
        boot, (results, run_reasons) = self.run_fake(
            ["reset"] * 3, "--min-device-descriptors", "150")
        self.assertEqual(boot.reset_ends, {0, 1, 2})
        # read while the machine waited in its shutdown state, before each
        # reset (and not again at the firmware's reset after it)
        self.assertEqual({k: v[0]["descriptors"]
                          for k, v in boot.boot_stats.items()},
                         {0: 200, 1: 200, 2: 200})
        self.assertIn(["-action", "reboot=shutdown"],
                      [boot.cmd[i:i + 2] for i in range(len(boot.cmd))])
        self.assertEqual(run_reasons, [])
        self.assertEqual([r for _, _, r in results], [[], [], []])
        self.assertTrue(all(seg.ended_by_reset for seg, _, _ in results))

    def test_a_boot_that_races_the_replies_is_counted(self):
        # the next boot's lines and its reset's SHUTDOWN come before the
        # reply to cont: the runner takes in the lines before it decides
        # which boot the counters describe
        boot, (results, _) = self.run_fake(["reset"] * 3,
                                           fake_args=["--eager"])
        self.assertEqual(sorted(boot.boot_stats), [0, 1, 2])
        self.assertEqual([r for _, _, r in results], [[], [], []])

    def test_a_device_that_did_nothing_fails_every_boot(self):
        _, (results, _) = self.run_fake(
            ["reset"] * 3, "--min-device-descriptors", "150", descriptors=0)
        for _, _, reasons in results:
            self.assertIn("dmalab-ioat completed 0 descriptors, expected at "
                          "least 150", reasons)
            self.assertIn("dmalab-ioat completed 0 descriptors, fewer than "
                          "the guest's 120 copies", reasons)

    def test_reset_on(self):
        boot, (results, run_reasons) = self.run_fake(
            ["host", "host"], "--reset-on", "^DMALAB: reset-me$",
            "--min-device-descriptors", "150")
        # the runner's system_reset is a reset, not the shutdown that
        # -action reboot=shutdown makes of it
        self.assertEqual(boot.reset_ends, {0, 1})
        self.assertEqual(sorted(boot.boot_stats), [0, 1])
        self.assertEqual(boot.boot_stats[1][0]["descriptors"], 200)
        self.assertEqual((run_reasons, [r for _, _, r in results]),
                         ([], [[], []]))
        # one at each marker (the firmware's own reset after the first may
        # come before the runner holds resets back again: a plain reset)
        resets = [d["reason"] for _, _, what, d in boot.events
                  if what == "RESET"]
        self.assertGreaterEqual(resets.count("host-qmp-system-reset"), 2)

    def test_power_off_ends_the_last_boot(self):
        boot, (results, run_reasons) = self.run_fake(["reset", "poweroff"])
        self.assertEqual(sorted(boot.boot_stats), [0, 1])
        self.assertEqual(boot.reset_ends, {0})
        self.assertEqual((run_reasons, [r for _, _, r in results]),
                         ([], [[], []]))
        self.assertTrue(results[1][1]["done"])

    def test_without_counters_resets_are_not_held(self):
        boot, (results, _) = self.run_fake(["reset", "reset"],
                                           "--no-counters")
        self.assertNotIn("-action", boot.cmd)
        self.assertEqual((boot.boot_stats, boot.reset_ends), ({}, {0, 1}))
        self.assertEqual([r for _, _, r in results], [[], []])


class AccelTests(unittest.TestCase):
    """guest-tests/accel.py: KVM where usable, TCG otherwise or when needed."""

    def setUp(self):
        import accel
        self.accel = accel
        self.saved = {k: os.environ.pop(k, None)
                      for k in ("DMALAB_ACCEL", "DMALAB_KVM_PROBE")}

    def tearDown(self):
        for k, v in self.saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v

    def test_choices(self):
        choose = self.accel.choose
        yes, no = (lambda: (True, "fine")), (lambda: (False, "no vmx"))
        self.assertEqual(choose("auto", probe=yes), ("kvm", "fine"))
        self.assertEqual(choose("auto", probe=no),
                         ("tcg", "KVM not usable: no vmx"))
        self.assertEqual(choose("tcg", probe=yes)[0], "tcg")
        self.assertEqual(choose("kvm", probe=yes)[0], "kvm")
        with self.assertRaisesRegex(self.accel.AccelError, "no vmx"):
            choose("kvm", probe=no)
        # What needs TCG gets it, and a forced KVM is refused with the reason.
        why = self.accel.tcg_reason(["-icount", "shift=5"])
        self.assertEqual(choose("auto", why, probe=yes), ("tcg", why))
        with self.assertRaisesRegex(self.accel.AccelError, "icount"):
            choose("kvm", why, probe=yes)
        self.assertIn("plugin", self.accel.tcg_reason([], plugin=True))
        self.assertIsNone(self.accel.tcg_reason(["-m", "1G"]))
        with self.assertRaises(self.accel.AccelError):
            choose("hvf", probe=yes)

    def test_environment_forces_a_choice(self):
        os.environ["DMALAB_ACCEL"] = "tcg"
        self.assertEqual(self.accel.choose(None, probe=lambda: (True, ""))[0],
                         "tcg")

    def test_probe(self):
        ok, why = self.accel.kvm_usable(dev="/nonexistent/kvm")
        self.assertFalse(ok)
        self.assertIn("/nonexistent/kvm", why)
        ok, why = self.accel.kvm_usable(dev="/dev/null")  # not a KVM device
        self.assertFalse(ok)
        self.assertIn("KVM_GET_API_VERSION", why)
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("flags\t\t: fpu sse2 hypervisor\n")
            f.flush()
            ok, why = self.accel.kvm_usable(cpuinfo=f.name)
        self.assertFalse(ok)  # whatever /dev/kvm says, no vmx/svm is a no

    def test_runner_passes_the_choice_and_falls_back(self):
        def parsed(*extra):
            ap = runner.make_parser()
            args = ap.parse_args(["--qemu", "q", "--kernel", "k",
                                  "--initrd", "i"] + list(extra))
            runner.check_args(ap, args)
            return args
        cmd = runner.build_cmdline(parsed("--accel", "tcg"))
        self.assertEqual(cmd[cmd.index("-accel") + 1], "tcg")
        args = parsed("--qemu-arg=-icount", "--qemu-arg=shift=5")
        self.assertEqual(args.accel_used, "tcg")
        self.assertIn("icount", args.accel_why)
        os.environ["DMALAB_KVM_PROBE"] = "skip"
        args = parsed()
        self.assertEqual(args.accel_used, "kvm")
        cmd = runner.build_cmdline(args)
        self.assertEqual(cmd[cmd.index("-accel") + 1], "kvm")
        boot = runner.Boot()
        boot.rc = 134  # QEMU aborted before the kernel's banner
        self.assertTrue(runner.kvm_failed_to_start(args, boot))
        boot.started = 1  # the guest ran: a failure of its own, not KVM's
        self.assertFalse(runner.kvm_failed_to_start(args, boot))
        forced = parsed("--accel", "kvm")
        boot.started = 0
        self.assertFalse(runner.kvm_failed_to_start(forced, boot))


class RegistryTests(unittest.TestCase):
    """guest-tests/scenarios.json and scenarios.py."""

    def test_every_entry_parses(self):
        import scenarios
        reg = scenarios.load()
        self.assertIn("memcpy", reg)
        ap = runner.make_parser()
        for test, name, kernel, entry in scenarios.tests(reg):
            with self.subTest(test=test):
                args = ap.parse_args(scenarios.runner_args(entry) + [
                    "--qemu", "q", "--kernel", "k", "--initrd", "i"])
                self.assertTrue(entry.get("doc"), "a scenario says what it checks")
                for d in args.device:
                    self.assertNotIn("@", d)
                    if "fault-plan=" in d:
                        self.assertTrue(os.path.exists(d.split("fault-plan=")[1]))

    def test_an_entry_becomes_runner_arguments(self):
        import scenarios
        entry = {"devices": ["dmalab-vtd", "dmalab-ioat,fault-plan=@plans@/uaf.json"],
                 "kernel_args": "intel_iommu=on", "mode": "uaf",
                 "params": {"stale_expect": "fault"}, "iterations": 7,
                 "expect": {"min_ops": 10, "lines": ["^ok 2 a$", "^ok 3 b$"],
                            "vtd": ["faults==0"], "device_errors": "1+"},
                 "allow": ["^x"], "qemu_args": ["-icount", "shift=0"],
                 "runner": {"boots": 3, "same_fault_log": True}}
        a = runner.make_parser().parse_args(scenarios.runner_args(entry))
        self.assertEqual(a.device, ["dmalab-vtd", "dmalab-ioat,fault-plan=" +
                                    os.path.join(scenarios.PLANS, "uaf.json")])
        self.assertEqual(a.append, ["intel_iommu=on dmalab_exercise.mode=uaf "
                                    "dmalab_exercise.stale_expect=fault"])
        self.assertEqual((a.iterations, a.min_ops, a.expect_device_errors,
                          a.timeout, a.boots, a.same_fault_log),
                         (7, 10, "1+", 300, 3, True))
        self.assertEqual(a.expect_line, ["^ok 2 a$", "^ok 3 b$"])
        self.assertEqual((a.expect_vtd, a.allow, a.qemu_arg),
                         (["faults==0"], ["^x"], ["-icount", "shift=0"]))

    def test_unknown_fields_are_refused(self):
        import scenarios
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"x": {"doc": "d", "expect": {"min_opps": 1}}}},
                      f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError, "expect.min_opps"):
                scenarios.load(f.name)

    def test_every_bench_names_a_program_that_takes_its_arguments(self):
        import importlib
        import scenarios
        benches = scenarios.load_benches()
        self.assertIn("bench-host-cost", benches)
        for name, b in benches.items():
            with self.subTest(bench=name):
                self.assertTrue(b.get("doc"), "a bench says what it measures")
                prog = importlib.import_module(b["program"].removesuffix(".py"))
                extra = ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--log-dir", "d"]
                if "race_plugin" in b.get("needs", []):
                    extra += ["--race-plugin", "p"]
                # The program's own parser, as meson calls it: an argument it does
                # not take ends parse_args() with SystemExit.
                with unittest.mock.patch("sys.stderr", io.StringIO()):
                    prog.make_parser().parse_args(b.get("args", []) + extra)
                with self.assertRaises(SystemExit), \
                        unittest.mock.patch("sys.stderr", io.StringIO()):
                    prog.make_parser().parse_args(b.get("args", []) + extra + ["--bogus"])

    def test_a_bench_with_an_unknown_field_is_refused(self):
        import scenarios
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"benches": {"x": {"doc": "d", "program": "p", "arg": []}}}, f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError, "arg"):
                scenarios.load_benches(f.name)


class MeasureTests(unittest.TestCase):
    """guest-tests/measure.py's summary of bench-map lines."""

    def row(self, op, p50, p99, size="4096"):
        return ("bench-map", {"op": op, "size": size, "n": "10", "p50_ns": str(p50),
                              "p99_ns": str(p99)})

    def test_medians_ranges_and_ratio_to_the_baseline(self):
        import measure
        base = measure.summarise([[self.row("map", 100, 150)], [self.row("map", 300, 350)],
                                  [self.row("map", 200, 250)]])
        self.assertEqual(base, {("map", "4096"): (200, 100, 300, 250, 3)})
        other = measure.summarise([[self.row("map", 500, 900), ("bench", {"x": "1"})],
                                   [self.row("map", 700, 800)]])
        # An even count takes the upper median, as bench.py's median does.
        self.assertEqual(other[("map", "4096")], (700, 500, 700, 900, 2))
        lines = measure.table({"a": base, "b": other}, ["a", "b"])
        self.assertEqual(lines[0], "map 4096 bytes (ns per call, guest clock):")
        self.assertEqual(lines[3].split(), ["b", "700", "500-700", "900", "2", "3.50"])

    def test_a_configuration_without_rows_shows_dashes(self):
        import measure
        base = measure.summarise([[self.row("unmap", 10, 20)]])
        lines = measure.table({"a": base, "b": {}}, ["a", "b"])
        self.assertEqual(lines[-1].split(), ["b", "-", "-", "-", "0", "-"])


class BenchCompareTests(unittest.TestCase):
    def test_median_of_runs(self):
        import bench
        run = lambda ops: [("bench", {"size": "16384", "channels": "1",
                                      "ops_per_s": ops})]
        med = bench.median_bench([run("10.0"), run("30.0"), run("20.0")])
        self.assertEqual(med[0][1]["ops_per_s"], "20.0")
        cost = bench.median_cost([("x", 3.0, 3.0, 1), ("x", 1.0, 1.0, 1),
                                  ("x", 2.0, 2.0, 1)])
        self.assertEqual(cost, ("x", 2.0, 2.0, 1))

    def test_compare(self):
        import bench
        base = [("bench", {"size": "16384", "channels": "1",
                           "ops_per_s": "1000.0"}),
                ("bench", {"size": "16384", "channels": "4",
                           "ops_per_s": "3000.0"}),
                ("bench-cpu", {"size": "16384", "ops_per_s": "500.0"})]
        other = [("bench", {"size": "16384", "channels": "1",
                            "ops_per_s": "500.0"}),
                 ("bench-cpu", {"size": "16384", "ops_per_s": "500.0"})]
        lines = bench.compare(base, other, "intel-iommu")
        self.assertEqual(lines[0], "bench ops/s, ratio = intel-iommu / without:")
        self.assertEqual(lines[2].split(), ["16384", "1", "1000.0", "500.0",
                                            "0.50"])
        # a configuration the other run lacks has no ratio
        self.assertEqual(lines[3].split()[-2:], ["-", "-"])
        self.assertEqual(lines[-1].split(), ["16384", "500.0", "500.0",
                                             "1.00"])

    def test_builds_boots_the_second_qemu(self):
        import bench
        seen = []

        def fake_boot(rp, argv, label, log_path=None, verbose=False):
            args = rp.parse_args(argv)
            seen.append((label, args.qemu, args.no_counters))
            return unittest.mock.Mock(wall=1.0), [], []
        with unittest.mock.patch.object(runner, "bench_boot", fake_boot), \
                unittest.mock.patch.object(runner, "ioat_stats",
                                           lambda boot: []), \
                unittest.mock.patch("sys.stdout", io.StringIO()):
            bench.main(["--qemu", "/a/qemu", "--qemu-b", "/b/qemu",
                        "--kernel", "k", "--initrd", "i",
                        "--set", "builds", "--repeat", "2"])
        self.assertEqual(seen, [("qemu", "/a/qemu", True),
                                ("qemu-b", "/b/qemu", True)] * 2)
        with unittest.mock.patch("sys.stderr", io.StringIO()), \
                self.assertRaises(SystemExit):
            bench.main(["--qemu", "q", "--kernel", "k", "--initrd", "i",
                        "--set", "builds"])

class QemuProcessTests(unittest.TestCase):
    def test_device_counters_cross_check(self):
        args = runner.make_parser().parse_args(["--judge-log", "x"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        good = {"path": "/machine/peripheral-anon/device[0]",
                "descriptors": 1210, "bytes": 6000, "errors": 0,
                "interrupts": 1205}
        boot.device_stats = [dict(good)]
        self.assertEqual(runner.analyse(boot, args)[1], [])
        for field, value, words in (("bytes", 3999, "fewer than the 4000"),
                                    ("descriptors", 5, "fewer than the"),
                                    ("errors", 1, "channel error"),
                                    ("interrupts", 0, "no interrupt")):
            boot.device_stats = [dict(good, **{field: value})]
            reasons = runner.analyse(boot, args)[1]
            self.assertTrue(any(words in r for r in reasons), (field, reasons))
        boot.device_stats = []
        self.assertIn("QMP: no dmalab-ioat", runner.analyse(boot, args)[1][0])
        boot.device_stats, boot.qmp_error = None, "cannot connect to QMP"
        self.assertIn("QMP: cannot connect", runner.analyse(boot, args)[1][0])

    def test_counters_wanted_and_not_read_fail(self):
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        reasons = runner.analyse(boot, args)[1]
        self.assertTrue(any("wanted but not read" in r for r in reasons),
                        reasons)
        args.no_counters = True
        self.assertEqual(runner.analyse(boot, args)[1], [])

    def test_expect_vtd(self):
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i",
             "--device", "dmalab-vtd", "--device", "dmalab-ioat",
             "--expect-vtd", "waits>=ops", "--expect-vtd", "faults==0"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        ioat = {"path": "/machine/peripheral-anon/device[1]",
                "type": "dmalab-ioat", "descriptors": 1210, "bytes": 6000,
                "errors": 0, "interrupts": 1205}
        vtd = {"path": "/machine/peripheral-anon/device[0]",
               "type": "dmalab-vtd", "counter-names": ["waits", "faults"],
               "waits": 1200, "faults": 0}
        boot.device_stats = [ioat, dict(vtd)]
        self.assertEqual(runner.analyse(boot, args)[1], [])
        boot.device_stats = [ioat, dict(vtd, waits=10)]
        self.assertTrue(any("waits is 10" in r
                            for r in runner.analyse(boot, args)[1]))
        boot.device_stats = [ioat, dict(vtd, faults=1)]
        self.assertTrue(any("faults is 1" in r
                            for r in runner.analyse(boot, args)[1]))
        # A counter the device does not have is a failure, not a pass.
        boot.device_stats = [ioat, dict(vtd, **{"counter-names": ["waits"]})]
        self.assertTrue(any("no counter 'faults'" in r
                            for r in runner.analyse(boot, args)[1]))
        boot.device_stats = [ioat]
        self.assertTrue(any("no dmalab-vtd" in r
                            for r in runner.analyse(boot, args)[1]))
        boot.device_stats = None
        self.assertTrue(any("wanted but not read" in r
                            for r in runner.analyse(boot, args)[1]))

    def test_expect_vtd_values(self):
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()      # the guest verified 1200 copies
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        ioat = {"path": "/machine/peripheral-anon/device[2]",
                "type": "dmalab-ioat", "descriptors": 1210, "bytes": 6000,
                "errors": 0, "interrupts": 1205}
        names = ["iotlb-inv-page", "faults"]
        # two units: their counters are summed
        units = [{"path": "/machine/peripheral-anon/device[%d]" % i,
                  "type": "dmalab-vtd", "counter-names": names,
                  "iotlb-inv-page": 1200, "faults": 0} for i in (0, 1)]
        boot.device_stats = [ioat] + units
        for expect, ok in (("iotlb-inv-page>=ops*2", True),
                           ("iotlb-inv-page>ops*2", False),
                           ("iotlb-inv-page==2400", True),
                           ("iotlb-inv-page==ops", False),
                           ("iotlb-inv-page<=ops/10", False),
                           ("iotlb-inv-page<ops*3", True),
                           ("faults==0", True), ("faults>=1", False),
                           ("faults>0", False), ("faults<1", True)):
            args = runner.make_parser().parse_args(
                ["--judge-log", "x", "--expect-vtd", expect])
            reasons = runner.analyse(boot, args)[1]
            self.assertEqual(reasons == [], ok, (expect, reasons))
            if not ok:
                self.assertIn("(%s)" % expect, reasons[0])
        args.expect_vtd = ["iotlb-inv-page<=ops/10"]
        self.assertEqual(runner.analyse(boot, args)[1],
                         ["dmalab-vtd: iotlb-inv-page is 2400, expected <= "
                          "120 (iotlb-inv-page<=ops/10)"])

    def test_expectations_without_counters_fail(self):
        # A saved log has no counters: what names one cannot pass ...
        for extra, words in ((["--expect-vtd", "faults==0"],
                              "--expect-vtd faults==0"),
                             (["--min-device-descriptors", "1"],
                              "--min-device-descriptors 1"),
                             (["--expect-device-errors", "1+"],
                              "--expect-device-errors 1+")):
            _, reasons = judge(GOOD, *extra)
            self.assertEqual(reasons, ["the device counters were not read (a "
                                       "saved log): cannot check %s" % words])
        # ... nor with --no-counters; the default cross-check is not asked for
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--no-counters",
             "--expect-vtd", "faults==0"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        self.assertIn("(--no-counters): cannot check --expect-vtd faults==0",
                      runner.analyse(boot, args)[1][0])
        self.assertEqual(judge(GOOD)[1], [])
        self.assertEqual(judge(GOOD, "--expect-device-errors", "0")[1], [])
        # a live boot that ended in a reset has its counters too: read at
        # the reset (held back for it) or at the --reset-on marker
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--boots", "2",
             "--min-device-descriptors", "10"])
        boot.ended_by_reset = True
        self.assertEqual(runner.analyse(boot, args)[1],
                         ["QMP: the device counters were wanted but not read "
                          "(QEMU ended before the runner could ask): cannot "
                          "check --min-device-descriptors 10"])

    def test_timeout_kills_group(self):
        # the child forks a grandchild; both must be gone after the timeout
        t0 = time.monotonic()
        boot = runner.run_qemu(
            ["/bin/sh", "-c", "echo started; sleep 60 & sleep 60; wait"],
            1.0, False)
        self.assertTrue(boot.timed_out)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(boot.lines[0], "started")

    def test_missing_binary(self):
        boot = runner.run_qemu(["/nonexistent/qemu"], 5, False)
        self.assertEqual(boot.rc, 127)


class FaultLogTests(unittest.TestCase):
    LOG = "0 100ns rule=a kind=reorder unit=0 key=64\n1 200ns rule=a kind=reorder unit=0 key=128\n"

    def judge(self, logs):
        with unittest.mock.patch("sys.stdout", new=io.StringIO()):
            return runner.judge_fault_logs(logs)

    def test_identical_logs_pass(self):
        self.assertEqual(self.judge([self.LOG] * 5), [])

    def test_a_different_boot_is_named_with_the_first_difference(self):
        other = self.LOG.replace("200ns", "201ns")
        (label, reasons), = self.judge([self.LOG, self.LOG, other, self.LOG, other])
        self.assertEqual(label, "fault log")
        self.assertIn("boot(s) 3,5 injected differently", reasons[0])
        self.assertIn("line 2", reasons[0])
        (_, reasons), = self.judge([self.LOG, self.LOG.splitlines()[0] + "\n"])
        self.assertIn("'(end)'", reasons[0])

    def test_no_injection_fails(self):
        (_, reasons), = self.judge(["", ""])
        self.assertEqual(reasons, ["boot 1 injected no fault"])


class RaceTests(unittest.TestCase):
    def boot(self, lines, stats=()):
        b = runner.Boot.__new__(runner.Boot)
        b.lines, b.device_stats = list(lines), list(stats)
        return b

    def test_reports_get_the_symbol_of_their_pc(self):
        boot = self.boot(["DMALAB: ksym ffffffffc0001000 t dlx_a",
                          "DMALAB: ksym ffffffffc0001040 t dlx_b"])
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("race vcpu=1 pc=0xffffffffc0001045 kind=write-to-dma-source insn=\"mov\"\n"
                    "race vcpu=0 pc=0xffffffff81000000 kind=read-of-dma-destination\n"
                    "races 2\n")
        self.addCleanup(os.unlink, f.name)
        out = runner.symbolize_races(boot, f.name)
        self.assertTrue(out[0].endswith(" at dlx_b+0x5"), out[0])
        self.assertNotIn(" at ", out[1])     # not in our module: left as it is
        self.assertEqual(out[2], "races 2")

    def test_expectations_on_reports(self):
        args = runner.make_parser().parse_args(
            ["--expect-race", "kind=write.* at dlx_b", "--expect-race-count", "1"])
        good = ["race pc=0x1 kind=write-to-dma-source at dlx_b+0x5", "races 1"]
        self.assertEqual(runner.judge_races(good, args), [])
        bad = runner.judge_races(good + ["race pc=0x2 kind=read-of-dma-destination"], args)
        self.assertEqual(bad, ["the race detector reported 2 race(s), expected 1"])
        self.assertEqual(len(runner.judge_races([], args)), 2)

    def test_report_lists_injections_lines_and_findings(self):
        boot = self.boot(
            ["# dmalab_exercise: uaf: copy called back", "ok 1 copy-while-mapped",
             "noise"],
            [{"type": "dmalab-ioat", "fault-log": "0 5ns rule=r kind=delay-data unit=0 key=1\n"},
             {"type": "dmalab-vtd", "fault-log": "", "audit-stale": 1, "faults-recorded": 0}])
        text = "\n".join(runner.race_report(boot, "PASS"))
        self.assertIn("injected (1):\n  0 5ns rule=r kind=delay-data", text)
        self.assertIn("  dmalab_exercise: uaf: copy called back\n  ok 1 copy-while-mapped", text)
        self.assertNotIn("noise", text)
        self.assertIn("dmalab-vtd: audit-stale=1 faults-recorded=0", text)
        self.assertTrue(text.endswith("result: PASS"))


class ImageTests(unittest.TestCase):
    def test_cpio_roundtrip(self):
        buf = io.BytesIO()
        cp = image.Cpio(buf)
        cp.file("etc/a/b.txt", b"hello")
        cp.symlink("bin/sh", "/bin/busybox")
        cp.chardev("dev/console", 5, 1)
        cp.trailer()
        with tempfile.TemporaryDirectory() as d:
            res = subprocess.run(["/bin/busybox", "cpio", "-t"],
                                 input=buf.getvalue(),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, cwd=d)
        names = res.stdout.decode().split()
        for n in ("etc", "etc/a", "etc/a/b.txt", "bin/sh", "dev/console"):
            self.assertIn(n, names)

    def test_modinfo_of_busybox_like_elf(self):
        with self.assertRaises(image.ImageError):
            image.modinfo(b"not an elf")

    def test_boot_kernel_fallback(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"\0" * 4096)
            f.flush()
            elf, why = image.extract_vmlinux(f.name)
        self.assertIsNone(elf)
        self.assertIn("bzImage", why)
        self.assertFalse(image.has_pvh_note(b"\x7fELF" + b"\0" * 60))

    def test_closure_order(self):
        deps = {"a": ["b", "c"], "b": ["c"], "c": []}
        self.assertEqual(image.closure("a", deps), ["c", "b", "a"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
