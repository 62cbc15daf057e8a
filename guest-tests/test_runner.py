#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of runner.py's log judging and, in test_runner_options.py, its options (no
QEMU needed). The boot splitting of --boots (test_boots.py), the harness's process handling
(test_harness.py), the registry, summaries and image helpers
(test_registry.py) and measure.py's variants and repeat checks
(test_measure.py), the studies' spread, provenance and orders
(test_studies.py), the vhost-user backend's IOTLB, rings and messages
(test_vhost_backend.py), the udp study's parsing, checks and tables and its
image's pieces (test_udp.py) and the xdp study's, with dmalab-xsk's build and
archive (test_xdp.py), run with them: `test_runner.py` runs all ten."""

import os
import sys
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
    boot = runner.Boot()
    boot.lines = text.splitlines()
    boot.stamps = [0.0] * len(boot.lines)
    boot.rc = 0
    return runner.analyse(boot, *runner.judging(args))


class JudgeTests(unittest.TestCase):
    def assertPass(self, text, *extra):
        facts, reasons = judge(text, *extra)
        self.assertEqual(reasons, [])
        return facts

    def assertFail(self, text, needle, *extra):
        _, reasons = judge(text, *extra)
        self.assertTrue(any(needle in r for r in reasons),
                        "%r not in %r" % (needle, reasons))

    def test_the_exercisers_results_count_in_any_scenario_that_loads_it(self):
        # dsa with dmalab.dsa_run=exercise: a failed copy fails the scenario
        bad = GOOD.replace("ok 2 dma0chan1", "not ok 2 dma0chan1")
        self.assertFail(bad, "KTAP not ok: 2 dma0chan1", "--scenario", "dsa",
                        "--device", "dmalab-dsa")
        # another scenario without the exerciser is not asked for its KTAP
        none = "\n".join(l for l in GOOD.splitlines() if "exercise start" not in l and
                         not l.startswith(("KTAP", "#", "1..", "ok ", "DMALAB: exercise")))
        _, reasons = judge(none, "--scenario", "dsa", "--device", "dmalab-dsa",
                           "--min-ops", "0")
        self.assertFalse(any("KTAP" in r for r in reasons), reasons)

    def test_good(self):
        facts = self.assertPass(GOOD)
        self.assertEqual(facts.summary["ops"], 1200)
        self.assertEqual(len(facts.chan_stats), 4)
        self.assertEqual(facts.kernel, "6.1.0-57-amd64")

    def test_run_setup_says_why_the_counters_were_not_read(self):
        for argv, why in ((["--judge-log", "x"], "a saved log"),
                          (["--qemu", "q", "--no-counters"], "--no-counters"),
                          (["--qemu", "q", "--device", "none"], "no dmalab device"),
                          (["--qemu", "q"], None),
                          (["--qemu", "q", "--device", "dmalab-vtd"], None)):
            setup = runner.run_setup(runner.make_parser().parse_args(argv))
            self.assertEqual(setup.counters_unread, why, argv)
        setup = runner.run_setup(runner.make_parser().parse_args(
            ["--qemu", "q", "--scenario", "boot", "--boots", "3", "--timeout", "20",
             "--reset-on", "^x$", "--virtio-disk", "4"]))
        self.assertEqual(setup, runner.RunSetup("boot", 3, "^x$", 20.0, None, 4, None))

    def test_facts_are_a_typed_result(self):
        facts = self.assertPass(GOOD)
        self.assertIsInstance(facts, runner.Facts)
        self.assertEqual((facts.bound, facts.channels, facts.channel_names),
                         ([("0000:00:03.0", "0x8086", "0x2021")], 4,
                          ["dma0chan0", "dma0chan1", "dma0chan2", "dma0chan3"]))
        self.assertEqual((facts.init_seen, facts.init_uptime, facts.done,
                          facts.exercise_rc, facts.ex_channels),
                         (0.0, 2.5, True, 0, 4))
        self.assertEqual((facts.errors, facts.dmalab_errors, facts.allowed, facts.skipped),
                         ([], [], [], []))
        self.assertEqual((facts.ktap["plan"], sorted(facts.ktap["results"])), (4, [1, 2, 3, 4]))
        # a fresh Facts shares no list with another
        self.assertIsNot(runner.Facts().bench, runner.Facts().bench)

    def test_timestamps_and_prefix(self):
        stamped = "".join("[%5d.%06d] %s\n" % (i, i, l)
                          for i, l in enumerate(GOOD.splitlines()))
        self.assertPass(stamped)
        prefixed = GOOD.replace("KTAP version", "kern  :info  : KTAP version")
        for tag in ("1..4", "ok ", "# dmalab_exercise"):
            prefixed = prefixed.replace("\n" + tag, "\nkern  :info  : " + tag)
        facts = self.assertPass(prefixed)
        self.assertEqual(facts.summary["ops"], 1200)

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
        self.assertEqual((facts.ex_mode, facts.ex_channels),
                         ("recover", 4))

    def test_not_bound(self):
        text = GOOD.replace(
            "DMALAB: ioatdma bound 0000:00:03.0 vendor=0x8086 device=0x2021",
            "DMALAB: ioatdma not bound")
        self.assertFail(text, "ioatdma not bound")

    def test_expect_unbound(self):
        # swiotlb-selftest-bug: the driver must refuse the device, for the
        # reason --expect-line names, and the refusal is --allow'ed.
        refused = "\n".join(
            l for l in GOOD.splitlines() if l.startswith(("DMALAB", "Linux"))
            and "bound" not in l and "channels" not in l and "exercise" not in l).replace(
            "scenario=memcpy", "scenario=boot")
        refused += ("\nioatdma 0000:00:01.0: Self-test copy failed compare, disabling"
                    "\nDMALAB: ioatdma not bound\nDMALAB: dma channels=0 ()\n")
        why = ["--scenario", "boot", "--expect-unbound",
               "--allow", "Self-test copy failed compare",
               "--expect-line", "Self-test copy failed compare"]
        self.assertPass(refused, *why)
        # without --allow the refusal is a driver error as usual
        self.assertFail(refused, "ioatdma error", *why[:3])
        # a driver that binds fails it, channels or not
        bound = refused.replace(
            "DMALAB: ioatdma not bound",
            "DMALAB: ioatdma bound 0000:00:01.0 vendor=0x8086 device=0x2021")
        self.assertFail(bound, "expected it to refuse the device", *why)
        self.assertFail(refused.replace("channels=0 ()", "channels=1 (dma0chan0)"),
                        "expected no DMA channel", *why)
        self.assertFail(refused.replace("Self-test copy failed compare, disabling", ""),
                        "no serial line matches", *why)

    def test_wrong_id(self):
        self.assertFail(GOOD.replace("device=0x2021", "device=0x0e20"),
                        "expected 0x8086:0x2021")

    def test_boot_scenario_needs_no_ktap(self):
        # (a boot scenario loads no exerciser: its start and end lines are gone too)
        text = "\n".join(l for l in GOOD.splitlines()
                         if l.startswith(("DMALAB", "Linux")) and "exercise" not in l)
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
        self.assertEqual(facts.skipped, ["4 dma0chan3"])
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
            reasons = runner.analyse(boot, *runner.judging(args))[1]
            self.assertEqual(reasons[:1], [words], reasons)
        # a killed QEMU that did not time out says how it ended
        boot.timed_out = False
        self.assertIn("qemu exited with status -9",
                      runner.analyse(boot, *runner.judging(args))[1][0])

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


def with_lines(text, extra, before="DMALAB: done"):
    return text.replace(before, extra.rstrip("\n") + "\n" + before)


def met(conditions, ops):
    """Counters that meet every condition (the guest verified ops copies): per counter
    the first of 0 and each condition's value and its neighbours that meets them all."""
    out = {}
    for name in {c.counter for c in conditions}:
        these = [c for c in conditions if c.counter == name]
        tries = sorted({0} | {max(c.want(ops) + d, 0) for c in these for d in (-1, 0, 1)})
        out[name] = next(v for v in tries if all(c.holds(v, ops) for c in these))
    return out


class RegistryLogTests(unittest.TestCase):
    """The registry's own entries judged on synthetic serial logs and counters: what a
    boot that printed these lines and counted so would be told (only the reasons about
    the lines and counters each test is about are looked at, so that the entries'
    other expectations may change without these tests)."""

    def judge(self, name, extra, text=GOOD, **counts):
        """analyse() with the entry's expectations: `text` (GOOD) with lines `extra`
        (before its end) and counters that meet the entry's conditions but for `counts`
        (dmalab-vtd's; '_' for '-' in their names). Returns (facts, reasons)."""
        import scenarios
        entry = scenarios.load()[name]
        expect = runner.Expectations.from_entry(entry)
        ops = 1200      # GOOD's summary
        vtd = dict(met(expect.counters.vtd, ops),
                   **{k.replace("_", "-"): v for k, v in counts.items()})
        ioat = dict(met(expect.counters.ioat, ops), path="/machine/peripheral-anon/device[1]",
                    type="dmalab-ioat", descriptors=5000, bytes=10 ** 7, errors=0,
                    interrupts=5000)
        boot = runner.Boot()
        boot.lines = with_lines(text, extra).splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        boot.device_stats = [ioat, dict(vtd, path="/machine/peripheral-anon/device[0]",
                                        type="dmalab-vtd", **{"counter-names": sorted(vtd)})]
        setup = runner.RunSetup(entry.get("runner", {}).get("scenario", "memcpy"))
        return runner.analyse(boot, setup, expect)

    def about(self, reasons, *words):
        return [r for r in reasons if any(w in r for w in words)]

    IOAPIC = ("DMAR: [INTR-REMAP] Request device [ff:00.0] fault index 0x0 [fault reason "
              "0x25] Blocked a compatibility format interrupt request")
    IOAT_24 = ("DMAR: [INTR-REMAP] Request device [00:01.0] fault index 0x10 [fault reason "
               "0x24] Detected reserved fields in the IRTE entry")
    # the reasons about IOMMU fault lines and the IR fault count
    IR_WORDS = ("IOMMU interrupt-remapping fault: ", "IOMMU fault: ", "ir-faults is")

    def test_an_ir_entry_passes_only_the_interrupt_faults_it_names(self):
        status = "DMAR: DRHD: handling fault status reg 2"
        for name in ("vtd-intremap", "vtd-intremap-smp16", "vtd-irfault", "vfio-ir",
                     "vtd-intremap-sm", "vfio-ir-sm"):
            with self.subTest(scenario=name):
                # dmalab-ioat's own interrupt blocked: one IR fault, within the bound
                bad = self.IOAT_24 if name != "vtd-irfault" else self.IOAT_24.replace(
                    "0x24] Detected reserved fields in the IRTE entry",
                    "0x22] Present field in the IRTE entry is clear")
                _, reasons = self.judge(name, "%s\n%s" % (status, bad), ir_faults=1)
                self.assertEqual(self.about(reasons, *self.IR_WORDS),
                                 ["IOMMU interrupt-remapping fault: " + bad])
                # but the IOAPIC's compatibility-format request, which they all allow
                facts, reasons = self.judge(name, "%s\n%s" % (status, self.IOAPIC),
                                            ir_faults=1)
                self.assertEqual(self.about(reasons, *self.IR_WORDS), [])
                self.assertEqual(facts.allowed, [status, self.IOAPIC])
                # the fault status line allowed is a primary fault's, not a queue error's
                for reg, ok in (("2", True), ("3", True), ("102", True), ("ff03", True),
                                ("40", False), ("10", False), ("12", False), ("20", False),
                                ("1", False)):
                    line = "DMAR: DRHD: handling fault status reg " + reg
                    _, reasons = self.judge(name, line)
                    self.assertEqual(self.about(reasons, *self.IR_WORDS),
                                     [] if ok else ["IOMMU fault: " + line], reg)

    def test_vtd_irfault_allows_its_own_fault_only(self):
        facts, reasons = self.judge("vtd-irfault", "DMAR: DRHD: handling fault status reg 2\n"
                                    + self.IOAT_24, ir_faults=1)
        self.assertEqual(self.about(reasons, *self.IR_WORDS), [])
        self.assertIn(self.IOAT_24, facts.allowed)

    def test_vfio_ir_bounds_its_interrupt_faults(self):
        # the IOAPIC's one request: one IR fault at most, as the other IR entries
        _, reasons = self.judge("vfio-ir", self.IOAPIC, ir_faults=2)
        self.assertEqual(self.about(reasons, *self.IR_WORDS),
                         ["dmalab-vtd: ir-faults is 2, expected <= 1 (ir-faults<=1)"])
        # the audit's demo: 50 faults of another requester and reason
        storm = "\n".join(["DMAR: DRHD: handling fault status reg 2",
                           "DMAR: [INTR-REMAP] Request device [00:1f.2] fault index 0x3 "
                           "[fault reason 0x22] Present field in the IRTE entry is "
                           "clear"] * 50)
        _, reasons = self.judge("vfio-ir", storm, ir_faults=50)
        self.assertIn("dmalab-vtd: ir-faults is 50, expected <= 1 (ir-faults<=1)", reasons)
        self.assertEqual(len(self.about(reasons, "IOMMU interrupt-remapping fault")), 50)


    # Linux's lines for queued-invalidation errors (drivers/iommu/intel/dmar.c:
    # qi_dump_fault's and qi_check_fault's, 5.15 to 6.12, and an older kernel's IQE)
    IQE = ["DMAR: VT-d detected Invalidation Queue Error: Reason 1",
           "DMAR: QI HEAD: Interrupt Entry Cache Invalidation qw0 = 0x7fff0014, qw1 = 0x0",
           "DMAR: QI PRIOR: Invalidation Wait qw0 = 0x200000025, qw1 = 0x1001000",
           "DMAR: Invalidation Queue Error (IQE) cleared"]
    ITE = ["DMAR: DRHD: handling fault status reg 40",
           "DMAR: VT-d detected Invalidation Time-out Error: SID 0",
           "DMAR: QI HEAD: Device-TLB Invalidation qw0 = 0x8000003, qw1 = 0x7ffffffff001",
           "DMAR: QI PRIOR: IOTLB Invalidation qw0 = 0x10072, qw1 = 0xffffe000",
           "DMAR: Invalidation Time-out Error (ITE) cleared"]
    QI_WORDS = ("IOMMU invalidation queue error: ", "IOMMU fault: ")

    def test_queued_invalidation_errors_fail_a_scenario(self):
        # the audit's demo: vtd-intremap-sm with the unit refusing a descriptor and timing
        # out, its counters of neither judged
        for name in ("vtd-intremap-sm", "vtd-strict", "vtd-ats-ioat-drop"):
            with self.subTest(scenario=name):
                _, reasons = self.judge(name, "\n".join(self.IQE + self.ITE))
                qi = ["IOMMU invalidation queue error: " + line
                      for line in (self.IQE[0], self.IQE[3], self.ITE[1], self.ITE[4])]
                # (vtd-ats-ioat-drop allows any fault status line: its DMA fault's)
                status = ["IOMMU fault: " + self.ITE[0]] if name != "vtd-ats-ioat-drop" \
                    else []
                self.assertEqual(sorted(self.about(reasons, *self.QI_WORDS)),
                                 sorted(qi + status))
        _, reasons = self.judge("vtd-strict", "DMAR: VT-d detected invalid descriptor: qw0 = "
                                "4, qw1 = 0\nDMAR: Invalidation Completion Error (ICE) "
                                "cleared")
        self.assertEqual(len(self.about(reasons, "IOMMU invalidation queue error: ")), 2)

    def test_vtd_ite_allows_its_time_out_and_no_other_queue_error(self):
        for name in ("vtd-ite", "vtd-ite-sm"):
            with self.subTest(scenario=name):
                facts, reasons = self.judge(name, "\n".join(self.ITE))
                self.assertEqual(self.about(reasons, *self.QI_WORDS), [])
                self.assertEqual(facts.allowed, [self.ITE[0], self.ITE[1], self.ITE[4]])
                # an IQE is not its time-out
                _, reasons = self.judge(name, "\n".join(self.ITE + self.IQE))
                self.assertEqual(self.about(reasons, *self.QI_WORDS), [
                    "IOMMU invalidation queue error: " + self.IQE[0],
                    "IOMMU invalidation queue error: " + self.IQE[3]])
                # nor a time-out that names a requester: the unit has no IQERCD register
                sid = self.ITE[1].replace("SID 0", "SID 8")
                _, reasons = self.judge(name, "\n".join([sid] + self.ITE[2:]))
                self.assertEqual(self.about(reasons, *self.QI_WORDS),
                                 ["IOMMU invalidation queue error: " + sid])
                # and Linux must have seen the time-out and cleared it
                _, reasons = self.judge(name, "\n".join(self.ITE[:4]))
                self.assertIn("no serial line matches '^DMAR: Invalidation Time-out Error "
                              "\\\\(ITE\\\\) cleared$'", reasons)

    def test_a_condition_on_ops_fails_without_the_summary_line(self):
        # the audit's demo: vtd-strict with no invalidation and no translation, and no
        # summary line (a changed printk format), its per-channel lines as before
        summary = [l for l in GOOD.splitlines() if "dmalab_exercise: summary" in l]
        self.assertEqual(len(summary), 1)
        unsummed = GOOD.replace(summary[0] + "\n", "")
        _, reasons = self.judge("vtd-strict", "", text=unsummed, iotlb_inv_page=0,
                                translations=0)
        self.assertEqual(self.about(reasons, "iotlb-inv-page", "translations"), [
            "dmalab-vtd: %s names ops, the copies the guest verified, but the exerciser "
            "printed no summary line" % c for c in ("iotlb-inv-page>=ops*2",
                                                    "translations>=ops")])
        # the same counters with the line: compared with its 1200 copies
        _, reasons = self.judge("vtd-strict", "", iotlb_inv_page=0, translations=0)
        self.assertEqual(self.about(reasons, "iotlb-inv-page", "translations"), [
            "dmalab-vtd: iotlb-inv-page is 0, expected >= 2400 (iotlb-inv-page>=ops*2)",
            "dmalab-vtd: translations is 0, expected >= 1200 (translations>=ops)"])
        # a condition without ops needs no summary line
        _, reasons = self.judge("vtd-strict", "", text=unsummed, faults=1)
        self.assertIn("dmalab-vtd: faults is 1, expected == 0 (faults==0)", reasons)

    def test_a_module_parameter_linux_ignored_fails_a_scenario(self):
        # memcpy-iommu's iommu_expect misspelt: the exerciser would run its copies without
        # checking they were translated (init.sh's insmod, Linux's kernel/module/main.c)
        line = "dmalab_exercise: unknown parameter 'iommu_expct' ignored"
        _, reasons = self.judge("memcpy-iommu", line)
        self.assertIn("unknown module parameter: " + line, reasons)

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


def load_tests(loader, tests, pattern):
    """unittest.main() here runs the other files' tests too."""
    import test_boots
    import test_harness
    import test_measure
    import test_registry
    import test_runner_options
    import test_studies
    import test_udp
    import test_vhost_backend
    import test_xdp
    for module in (test_boots, test_harness, test_measure, test_registry, test_runner_options,
                   test_studies, test_udp, test_vhost_backend, test_xdp):
        tests.addTests(loader.loadTestsFromModule(module))
    return tests


if __name__ == "__main__":
    unittest.main(verbosity=2)
