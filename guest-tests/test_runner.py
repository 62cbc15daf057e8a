#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of runner.py's log judging and image.py's cpio/ELF helpers
(no QEMU needed)."""

import io
import os
import subprocess
import sys
import tempfile
import time
import unittest

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
        self.assertFail(text, "could use 3 DMA channel(s), expected 4")

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
