#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the harness's QEMU process handling, resets, fault logs and race reports,
with fake_qemu.py standing in for QEMU; loading this loads test_harness_accel.py (the
clock and accelerator choice) and test_harness_dsa.py (judging a dmalab-dsa run) too."""

import io
import os
import re
import select
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from harness import expect  # noqa: E402

from test_runner import GOOD, RESET_BOOT, judge  # noqa: E402


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
        return boot, runner.judge_run(boot, *runner.judging(args))

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
        self.assertTrue(results[1][1].done)

    def test_without_counters_resets_are_not_held(self):
        boot, (results, _) = self.run_fake(["reset", "reset"],
                                           "--no-counters")
        self.assertNotIn("-action", boot.cmd)
        self.assertEqual((boot.boot_stats, boot.reset_ends), ({}, {0, 1}))
        self.assertEqual([r for _, _, r in results], [[], []])

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
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])
        for field, value, words in (("bytes", 3999, "fewer than the 4000"),
                                    ("descriptors", 5, "fewer than the"),
                                    ("errors", 1, "channel error"),
                                    ("interrupts", 0, "no interrupt")):
            boot.device_stats = [dict(good, **{field: value})]
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            self.assertTrue(any(words in r for r in reasons), (field, reasons))
        boot.device_stats = []
        self.assertIn("QMP: no dmalab-ioat", runner.analyse(boot, *runner.judging(args))[1][0])
        boot.device_stats, boot.qmp_error = None, "cannot connect to QMP"
        self.assertIn("QMP: cannot connect", runner.analyse(boot, *runner.judging(args))[1][0])

    def test_counters_wanted_and_not_read_fail(self):
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        reasons = runner.analyse(boot, *runner.judging(args))[1]
        self.assertTrue(any("wanted but not read" in r for r in reasons),
                        reasons)
        args.no_counters = True
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])

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
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])
        boot.device_stats = [ioat, dict(vtd, waits=10)]
        self.assertTrue(any("waits is 10" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        boot.device_stats = [ioat, dict(vtd, faults=1)]
        self.assertTrue(any("faults is 1" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        # A counter the device does not have is a failure, not a pass.
        boot.device_stats = [ioat, dict(vtd, **{"counter-names": ["waits"]})]
        self.assertTrue(any("no counter 'faults'" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        boot.device_stats = [ioat]
        self.assertTrue(any("no dmalab-vtd" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        boot.device_stats = None
        self.assertTrue(any("wanted but not read" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))

    def test_expect_a_counter_of_one_requester(self):
        # The unit-wide ir-remapped holds the IOAPIC's interrupts too (hundreds a boot): the
        # copies' own are ir-remapped@00:01.0, from the unit's ir-remapped-requesters.
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i",
             "--device", "dmalab-vtd", "--device", "dmalab-ioat",
             "--expect-vtd", "ir-remapped@00:01.0>=ops"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        ioat = {"path": "/machine/peripheral-anon/device[1]",
                "type": "dmalab-ioat", "descriptors": 1210, "bytes": 6000,
                "errors": 0, "interrupts": 1205}
        vtd = {"path": "/machine/peripheral-anon/device[0]", "type": "dmalab-vtd",
               "counter-names": ["ir-remapped"], "ir-remapped": 2000}
        vtd.update(runner.per_requester("ir-remapped", "ff:00.0=790 00:01.0=1210"))
        boot.device_stats = [ioat, vtd]
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])
        # the IOAPIC's alone: the unit-wide count would hold, the device's does not
        vtd.pop("ir-remapped@00:01.0")
        self.assertIn("dmalab-vtd: ir-remapped@00:01.0 is 0, expected >= 1200 "
                      "(ir-remapped@00:01.0>=ops)", runner.analyse(boot, *runner.judging(args))[1])
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--device", "dmalab-vtd",
             "--expect-vtd", "faults@00:01.0>=1"])
        self.assertTrue(any("keeps no counter 'faults' per requester" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))

    def test_expect_ioat(self):
        # the raid scenarios: dmalab-ioat's per-operation counters, summed over devices
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--scenario", "boot",
             "--expect-ioat", "xor-descriptors>0", "--expect-ioat", "pq-bytes==0"])
        boot = runner.Boot()
        boot.lines = GOOD.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        dev = {"type": "dmalab-ioat", "descriptors": 1210, "bytes": 6000, "errors": 0,
               "interrupts": 1205, "xor-descriptors": 0, "pq-bytes": 0}
        boot.device_stats = [dict(dev, path="a"), dict(dev, path="b", **{
            "xor-descriptors": 3})]
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])
        boot.device_stats = [dict(dev, path="a")]
        self.assertTrue(any("xor-descriptors is 0, expected > 0" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        # a counter the device does not have is a failure, not a pass
        boot.device_stats = [{k: v for k, v in dev.items() if k != "pq-bytes"}]
        self.assertTrue(any("no counter 'pq-bytes'" in r
                            for r in runner.analyse(boot, *runner.judging(args))[1]))
        # and from the registry
        e = expect.Expectations.from_entry({"expect": {"ioat": ["xor-descriptors>=2"]}})
        self.assertEqual([c.text for c in e.counters.ioat], ["xor-descriptors>=2"])
        with self.assertRaises(expect.ExpectationError):
            expect.Expectations.from_entry({"expect": {"ioat": "xor-descriptors>0"}})

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
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            self.assertEqual(reasons == [], ok, (expect, reasons))
            if not ok:
                self.assertIn("(%s)" % expect, reasons[0])
        args.expect_vtd = ["iotlb-inv-page<=ops/10"]
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1],
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
                      runner.analyse(boot, *runner.judging(args))[1][0])
        self.assertEqual(judge(GOOD)[1], [])
        self.assertEqual(judge(GOOD, "--expect-device-errors", "0")[1], [])
        # a live boot that ended in a reset has its counters too: read at
        # the reset (held back for it) or at the --reset-on marker
        args = runner.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--boots", "2",
             "--min-device-descriptors", "10"])
        boot.ended_by_reset = True
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1],
                         ["QMP: the device counters were wanted but not read "
                          "(QEMU ended before the runner could ask): cannot "
                          "check --min-device-descriptors 10"])

    def test_timeout_kills_group(self):
        # the child forks a grandchild that never ends on its own; the timeout
        # kills both.  The test waits for the grandchild's end with no limit of
        # its own: a run that killed only its child leaves the grandchild
        # sleeping, and meson's timeout says so.  No wall-clock reading decides.
        boot = runner.run_qemu(
            ["/bin/sh", "-c", "echo started; sleep infinity & echo $!; sleep infinity"],
            1.0, False)
        self.assertTrue(boot.timed_out)
        self.assertEqual(boot.lines[0], "started")
        try:
            fd = os.pidfd_open(int(boot.lines[1]))
        except ProcessLookupError:
            return   # already gone
        try:
            select.select([fd], [], [])   # readable once the process has ended
        finally:
            os.close(fd)

    def test_kvm_internal_error_ends_the_run(self):
        # QEMU pauses the machine for good after a KVM internal error: the runner
        # reads its register dump, ends it within the grace time, and says why
        script = ("echo 'Booting from ROM..KVM internal error. Suberror: 1'; "
                  "echo 'RAX=0000000000000000'; sleep 60")
        # under TCG the same words are only a guest's output: nothing happens
        boot = runner.run_qemu(["/bin/sh", "-c", script, "sh", "-accel", "tcg"], 3.0, False)
        self.assertTrue(boot.timed_out)
        self.assertIsNone(boot.kvm_error)
        # on KVM the report ends the run (after KVM_ERROR_GRACE), not the timeout
        boot = runner.run_qemu(["/bin/sh", "-c", script, "sh", "-accel", "kvm"], 30.0, False)
        self.assertFalse(boot.timed_out)
        self.assertEqual(boot.kvm_error, "KVM internal error. Suberror: 1")
        self.assertEqual(boot.lines[1], "RAX=0000000000000000")
        ap = runner.make_parser()
        args = ap.parse_args(["--qemu", "q", "--kernel", "k", "--initrd", "i"])
        os.environ["DMALAB_KVM_PROBE"] = "skip"
        try:
            runner.check_args(ap, args)
        finally:
            del os.environ["DMALAB_KVM_PROBE"]
        boot.started = 1  # even after the kernel's banner: KVM gave up, not the guest
        self.assertTrue(runner.kvm_failed_to_start(args, boot))
        results, _ = runner.judge_run(boot, *runner.judging(args))
        self.assertIn("KVM could not run the guest: KVM internal error. Suberror: 1",
                      results[0][2])

    def test_missing_binary(self):
        boot = runner.run_qemu(["/nonexistent/qemu"], 5, False)
        self.assertEqual(boot.rc, 127)

    def test_qmp_is_on_the_command_line_only_when_a_run_needs_it(self):
        from harness.qemu import QemuRun
        cmd = ["/nonexistent/qemu", "-accel", "tcg"]
        self.assertEqual(QemuRun(cmd, 5, False).cmd, cmd)
        for kwargs, action in (({"counters": True}, False), ({"probe": True}, False),
                               ({"boots": 2}, False),
                               ({"counters": True, "boots": 2}, True),
                               ({"counters": True, "reset_on": re.compile("x")}, True)):
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                run = QemuRun(cmd, 5, False, **kwargs)
                self.assertEqual(run.cmd[:3], cmd)
                self.assertEqual(run.cmd[3:6], ["-qmp", "unix:%s,server=on,wait=off" %
                                                run.qmp_path, "-no-shutdown"])
                self.assertEqual(run.cmd[6:], ["-action", "reboot=shutdown"] if action
                                 else [])
                # a QEMU that does not start leaves no QMP folder behind
                self.assertTrue(os.path.isdir(run.qmp_dir))
                self.assertEqual(run.run().rc, 127)
                self.assertFalse(os.path.exists(run.qmp_dir))


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
        races = runner.expectations(args).races
        self.assertEqual(runner.judge_races(good, races), [])
        bad = runner.judge_races(good + ["race pc=0x2 kind=read-of-dma-destination"], races)
        self.assertEqual(bad, ["the race detector reported 2 race(s), expected 1"])
        self.assertEqual(len(runner.judge_races([], races)), 2)

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


def load_tests(loader, tests, pattern):
    """Running this file (or loading it, as test_runner.py does) runs its part too."""
    import test_harness_accel
    import test_harness_dsa
    tests.addTests(loader.loadTestsFromModule(test_harness_accel))
    tests.addTests(loader.loadTestsFromModule(test_harness_dsa))
    return tests


if __name__ == "__main__":
    unittest.main(verbosity=2)
