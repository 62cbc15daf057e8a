#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's pieces that need no guest: the modelled clock's arguments, dmalab-vtd's
--set and --sweep variants, what --same-counts compares and how main() acts on it (run by
runner-selftest)."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import runner  # noqa: E402


class ModelledClockTests(unittest.TestCase):
    def test_seed_and_rtc_come_with_icount(self):
        qemu = [a.split("=", 1)[1] for a in measure.modelled_clock(5)
                if a.startswith("--qemu-arg=")]
        self.assertEqual(qemu[:2], ["-icount", "shift=5,sleep=off"])
        self.assertIn("-seed", qemu)
        rtc = qemu[qemu.index("-rtc") + 1]
        self.assertIn("clock=vm", rtc)
        self.assertIn("base=", rtc)   # a fixed date, not the host's


class VariantTests(unittest.TestCase):
    CONFIGS = [("no-iommu", ["--device", "dmalab-ioat", "--append", "x"]),
               ("vtd-strict", ["--device", "dmalab-vtd", "--device", "dmalab-ioat"]),
               ("intel-lazy", ["--device", "intel-iommu", "--device", "dmalab-ioat"])]

    def test_set_reaches_dmalab_vtd_only(self):
        out = dict(measure.vtd_variants(self.CONFIGS, ["wait-ns=5000", "iotlb-entries=64"]))
        self.assertEqual(list(out), ["no-iommu", "vtd-strict", "intel-lazy"])
        self.assertIn("dmalab-vtd,wait-ns=5000,iotlb-entries=64", out["vtd-strict"])
        self.assertEqual(out["intel-lazy"], self.CONFIGS[2][1])
        self.assertEqual(out["no-iommu"], self.CONFIGS[0][1])

    def test_sweep_repeats_each_dmalab_vtd_configuration(self):
        out = measure.vtd_variants(self.CONFIGS, ["iotlb-entries=64"], "wait-ns=0,10000")
        self.assertEqual([label for label, _ in out],
                         ["no-iommu", "vtd-strict,wait-ns=0", "vtd-strict,wait-ns=10000",
                          "intel-lazy"])
        self.assertIn("dmalab-vtd,iotlb-entries=64,wait-ns=10000", out[2][1])

    def test_a_sweep_without_values_is_refused(self):
        for bad in ("wait-ns", "wait-ns=", "=1,2"):
            with self.assertRaises(ValueError):
                measure.vtd_variants(self.CONFIGS, [], bad)


class SameCountsTests(unittest.TestCase):
    def test_differences_are_named(self):
        runs = {"a": [[("bench-copy", {"size": "4096", "busy_us": "10", "per_s": "999"})],
                      [("bench-copy", {"size": "4096", "busy_us": "11", "per_s": "999"})]]}
        counters = {"a": [{"dmalab-vtd": {"waits": 130, "faults": 0}},
                          {"dmalab-vtd": {"waits": 128, "faults": 0}}]}
        devices, figures = measure.repeat_differences(runs, counters, ["a"])
        self.assertEqual(devices, ["a dmalab-vtd.waits 130/128"])
        self.assertEqual(figures, ["a bench-copy 4096 None busy_us 10/11"])

    def test_identical_boots_have_none(self):
        boot = [("bench-nic", {"size": "64", "sent": "300"})]
        devices, figures = measure.repeat_differences(
            {"a": [boot, list(boot)]}, {"a": [{"dmalab-ioat": {"descriptors": 5}}] * 2}, ["a"])
        self.assertEqual((devices, figures), ([], []))


class SameCountsWiringTests(unittest.TestCase):
    """main() with --same-counts, each boot a mocked runner.bench_boot whose QMP counters
    the test chooses: what reaches the verdict."""

    ARGS = ["--study", "dma-api", "--qemu", "q", "--kernel", "k", "--initrd", "i",
            "--icount", "5", "--same-counts", "--seeds", "1", "--builds", "1"]

    def run_main(self, extra, stats):
        """main() with boots whose device counters are stats(boot number); returns (exit
        status, boots run, output)."""
        boots = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            boot = runner.Boot()
            boot.device_stats = stats(len(boots))
            boots.append(label)
            row = ("bench-map", {"op": "map", "size": "4096", "p50_ns": "100", "p99_ns": "200"})
            return boot, [(None, runner.Facts(bench=[row]), [])], []

        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = measure.main(self.ARGS + extra)
        return rc, boots, out.getvalue()

    @staticmethod
    def waits(n):
        return [{"type": "dmalab-ioat", "descriptors": 10, "bytes": 4096},
                {"type": "dmalab-vtd", "waits": n, "audit": False}]

    def test_one_boot_is_refused_before_anything_boots(self):
        for extra in (["--quick"], ["--repeat", "1"], ["--quick", "--repeat", "1"]):
            rc, boots, out = self.run_main(extra, lambda i: self.waits(i))
            self.assertEqual((rc, boots), (2, []), extra)
            self.assertIn("needs --repeat 2 or more", out)

    def test_counters_that_differ_between_boots_fail(self):
        # boots alternate: the seven configurations, then all seven again
        rc, boots, out = self.run_main(["--repeat", "2"], lambda i: self.waits(128 + i // 7))
        self.assertEqual(len(boots), 14)   # 7 configurations, 2 boots each
        self.assertEqual(rc, 1, out)
        self.assertIn("device counters differ between boots: no-iommu dmalab-vtd.waits "
                      "128/129", out)

    def test_equal_counters_pass(self):
        rc, boots, out = self.run_main(["--repeat", "2"], lambda i: self.waits(128))
        self.assertEqual(rc, 0, out)
        self.assertIn("device counters and guest figures identical", out)

    def test_boots_without_counters_fail(self):
        rc, _, out = self.run_main(["--repeat", "2"], lambda i: None)
        self.assertEqual(rc, 1, out)
        self.assertIn("no device counters were read in a boot of: intel-lazy", out)


def copy_row(size, net, copies=300, slept=300, slots=300):
    return ("bench-copy", {"size": str(size), "rate": "1000", "copies": str(copies),
                           "slept": str(slept), "slots": str(slots), "cpus": "1",
                           "busy_ns_per_copy": str(net), "per_s": "1000",
                           "util_ppm": str(net), "pacing_ns_per_copy": "0",
                           "net_ns_per_copy": str(net)})


def nic_row(size, busy, sent=300, received=300, lost=0, clock_us=1):
    return ("bench-nic", {"nic": "igb", "size": str(size), "rate": "1000", "sent": str(sent),
                          "received": str(received), "lost": str(lost),
                          "clock_us": str(clock_us), "cpus": "1",
                          "busy_ns_per_packet": str(busy), "per_s": "1000",
                          "util_ppm": str(busy), "net_ns_per_packet": str(busy)})


def sg_row(way, waits=50, unmaps=50, descs=100):
    return ("bench-sg", {"way": way, "unmaps": str(unmaps), "waits": str(waits),
                         "descs": str(descs), "busy_ns_per_unmap": "1000",
                         "waits_per_kunmap": str(waits * 1000 // max(unmaps, 1)),
                         "iotlb_invs": str(waits)})


class IommuFlushWiringTests(unittest.TestCase):
    """main() for iommu-flush with mocked boots: the modelled CPU's speed in every header,
    --rates reaching the guest, --quick's configurations and the service-demand split."""

    def run_main(self, extra):
        argvs = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            argvs.append((label, argv))
            boot = runner.Boot()
            boot.device_stats = [{"type": "dmalab-vtd", "waits": 10,
                                  "wait-modelled-ns": 7500}]
            busy = {"no-iommu": 1000}.get(label, 3000 if "strict" in label else 2000)
            rows = [copy_row(4096, busy), nic_row(64, busy), sg_row("pages", 1000, 1000)]
            return boot, [(None, runner.Facts(bench=rows), [])], []
        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = measure.main(["--study", "iommu-flush", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i"] + extra)
        return rc, argvs, out.getvalue()

    def test_quick_boots_dmalab_vtd_only_on_a_1_ns_cpu(self):
        rc, argvs, out = self.run_main(["--quick", "--rates", "1000,0"])
        self.assertEqual(rc, 0, out)
        self.assertEqual([l for l, _ in argvs], ["no-iommu", "vtd-lazy", "vtd-strict"])
        argv = " ".join(argvs[0][1])
        self.assertIn("shift=0,sleep=off", argv)
        self.assertIn("dmalab_exercise.copycost_rates=1000,0", argv)
        self.assertIn("dmalab.pktgen_rate=1000,0", argv)
        self.assertIn("-icount shift=0: 1 ns per guest instruction, a 1-GIPS CPU", out)
        self.assertIn("size=4096 rate=1000 (guest CPU ns per copy, gross, 1 ns per guest "
                      "instruction):", out)
        # 1.000 waits per unmap, 750 ns per wait (QMP), two unmaps a copy
        split = [l.split() for l in out.splitlines() if l.strip().startswith("vtd-strict ")]
        self.assertIn(["vtd-strict", "3,000", "3,000", "1.000", "750", "1500", "3,024"], split)

    def test_quick_boots_the_e1000e_pair_only_and_the_full_run_both(self):
        # igb's boots do not repeat to the count (studies/iommu_flush.py, NIC_QUICK)
        _, quick, _ = self.run_main(["--quick", "--repeat", "2", "--same-counts"])
        _, full, _ = self.run_main(["--rates", "1000"])
        for _, argv in quick:
            self.assertIn("e1000e,netdev=dlx-e1000e-tx", " ".join(argv))
            self.assertNotIn("igb", " ".join(argv))
        for _, argv in full:
            self.assertIn("igb,netdev=dlx-igb-tx", " ".join(argv))
            self.assertIn("dmalab.nics=e1000e,igb", " ".join(argv))

    def test_the_spread_boots_the_nominal_rate_and_only_first_boots_are_profiled(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = os.path.join(tmp, "b.cpio.gz")
            with unittest.mock.patch.object(measure.prov, "second_build",
                                            lambda k, i, d: b), \
                    unittest.mock.patch.object(measure.studies.profiles, "load",
                                               unittest.mock.Mock(side_effect=OSError)):
                _, argvs, out = self.run_main(["--profile", "p.so"])
        rates = {}
        for label, argv in argvs:
            line = " ".join(argv)
            rates[label] = (line.split("copycost_rates=")[1].split()[0],
                            "--profile-plugin" in argv)
        self.assertEqual(rates["no-iommu"], ("1000,2000,5000,10000,0", True))
        self.assertEqual(rates["no-iommu [seed=2]"], ("1000", False))
        self.assertEqual(rates["vtd-strict [build=b]"], ("1000", False))
        self.assertEqual(len(argvs), 3 * 8)  # 8 configurations, 3 boots each

    def test_shift_5_says_32_ns(self):
        rc, _, out = self.run_main(["--quick", "--icount", "5"])
        self.assertIn("32 ns per guest instruction, a 31.25-MIPS CPU", out)


class PremiseTests(unittest.TestCase):
    """Each configuration's expectations, judged as the runner judges a boot's lines."""

    LINES = {
        "lazy": ["iommu: DMA domain TLB invalidation policy: lazy mode (set via kernel "
                 "command line)",
                 "# dmalab_exercise: iommu: domain DMA-FQ, phys 0x9 maps to dma 0xf, "
                 "translated"],
        "strict": ["iommu: DMA domain TLB invalidation policy: strict mode (set via "
                   "kernel command line)",
                   "# dmalab_exercise: iommu: domain DMA, phys 0x9 maps to dma 0xf, "
                   "translated"],
        "none": ["iommu: DMA domain TLB invalidation policy: lazy mode ",
                 "# dmalab_exercise: iommu: domain none, phys 0x9 maps to dma 0x9, "
                 "identity"],
        "pt": ["iommu: Default domain type: Passthrough (set via kernel command line)",
               "# dmalab_exercise: iommu: domain identity, phys 0x9 maps to dma 0x9, "
               "identity"],
        "bounced": ["software IO TLB: area num 1.",
                    "# dmalab_exercise: iommu: domain none, phys 0x9 maps to dma 0x7, "
                    "bounced"],
    }
    WANT = {"no-iommu": "none", "vtd-pt": "pt", "vtd-lazy": "lazy", "vtd-strict": "strict",
            "intel-lazy": "lazy", "intel-strict": "strict", "no-bounce": "none",
            "swiotlb": "bounced", "no-bounce-engine": "none", "swiotlb-engine": "bounced",
            "engine": "none"}

    def wrong(self, config_args, lines):
        from harness.judge import judge_lines
        args = runner.make_parser().parse_args(["--judge-log", "x"] + config_args)
        boot = runner.Boot()
        boot.lines = lines
        return judge_lines(boot, runner.expectations(args).log.lines)

    def test_each_configuration_passes_its_own_boot_only(self):
        configs = (measure.configs("mapcost") + measure.swiotlb_configs("mapcost", "d") +
                   measure.offload_configs("offload", "d"))
        for label, args in configs:
            want = self.WANT[label if label in self.WANT else "engine"]
            mapped = {"lazy": "translated", "strict": "translated",
                      "bounced": "bounced"}.get(want, "identity")
            self.assertIn("dmalab_exercise.iommu_expect=" + mapped, args, label)
            for boot, lines in self.LINES.items():
                with self.subTest(config=label, boot=boot):
                    if boot == want:
                        self.assertEqual(self.wrong(args, lines), [])
                    else:   # a strict boot that ran lazy, a pass-through one translated..
                        self.assertTrue(self.wrong(args, lines))


class RowCheckTests(unittest.TestCase):
    def test_copies_that_did_not_all_sleep(self):
        f = copy_row(4096, 1000, slept=299)[1]
        self.assertIn("299 of 300 copies slept", measure.checks.copy_row("a", f, True)[0])
        self.assertEqual(measure.checks.copy_row("a", f, False), [])   # host clock
        self.assertEqual(measure.checks.copy_row("a", copy_row(4096, 1)[1], True), [])
        self.assertTrue(measure.checks.copy_row("a", copy_row(4096, 1, 0, 0)[1], False))

    def test_packets_received_within_what_was_counted_lost(self):
        check = measure.checks.nic_row
        self.assertEqual(check("a", nic_row(64, 1)[1], True), [])
        self.assertEqual(check("a", nic_row(64, 1, received=297, lost=3)[1], True), [])
        self.assertIn("0 of 300 packets received",
                      check("a", nic_row(64, 1, received=0)[1], True)[0])
        self.assertTrue(check("a", nic_row(64, 1, received=296, lost=3)[1], True))
        self.assertTrue(check("a", nic_row(64, 1, received=301)[1], True))
        self.assertTrue(check("a", nic_row(64, 1, sent=0, received=0)[1], True))

    def test_sg_windows_read_the_unit_where_there_is_one(self):
        from studies.iommu_flush import sg_row as check
        self.assertEqual(check("vtd-strict", sg_row("sg")[1], True), [])
        self.assertEqual(check("no-iommu", sg_row("sg", 0, 50, -1)[1], True), [])
        self.assertIn("was not read", check("vtd-lazy", sg_row("sg", 0, 50, -1)[1], True)[0])
        self.assertIn("49 waits for 50 strict unmaps",
                      check("vtd-strict,wait-ns=0", sg_row("pages", 49)[1], True)[0])
        self.assertEqual(check("vtd-lazy", sg_row("pages", 1)[1], True), [])
        self.assertTrue(check("vtd-lazy", sg_row("pages", 1, 0)[1], True))

    def test_ratios_beside_the_2008_figures(self):
        from studies.iommu_flush import ratios_2008
        t = measure.STUDIES["iommu-flush"].tables[0]
        others = [0] * len(t.others)

        def s(v, rate):
            o = list(others)
            o[t.others.index("util_ppm")], o[t.others.index("per_s")] = v * 10, rate
            return {("4096", "1000"): (v, v, v, o, 1)}
        summaries = {"no-iommu": s(1000, 1000), "vtd-pt": s(1000, 1000),
                     "vtd-lazy": s(1640, 1000), "vtd-strict": s(2270, 995)}
        lines, rows = ratios_2008(summaries, list(summaries), t)
        self.assertIn("2.27", lines[0])
        self.assertEqual(lines[-1].split(), ["4096", "1000", "vtd", "1.00", "2.27", "1.64",
                                             "1.00", "equal", "yes;", "no:", "mapped",
                                             "copies", "through", "dmalab-ioat"])
        self.assertIn("on another workload", lines[0])
        self.assertEqual({r["config"]: r["value"] for r in rows},
                         {"vtd-strict": 2.27, "vtd-lazy": 1.64, "vtd-pt": 1.0})
        summaries["vtd-strict"] = s(2270, 900)     # 10% below no IOMMU's rate
        self.assertEqual(ratios_2008(summaries, list(summaries), t)[0][-1].split()[7:11],
                         ["differs", "no", "(rates", "differ);"])
        # a busy CPU without an IOMMU (pktgen spinning, back to back) is marked
        summaries["no-iommu"] = s(95000, 1000)
        self.assertEqual(ratios_2008(summaries, list(summaries), t)[0][-1].split()[7:9],
                         ["differs", "saturated"])

    def test_swiotlb_bounced_only_where_forced(self):
        check = measure.checks.swiotlb_row
        some = {"bounced_maps": "400", "bounced_bytes": "1638400"}
        none = {"bounced_maps": "0", "bounced_bytes": "0"}
        self.assertEqual(check("swiotlb", some, False) + check("no-bounce", none, False),
                         [])
        self.assertIn("bounced 0 mappings", check("swiotlb", none, False)[0])
        self.assertTrue(check("no-bounce", some, False))

    def test_a_failed_row_check_fails_the_study(self):
        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            slept = 200 if label == "vtd-lazy" else 300
            rows = [copy_row(4096, 1000, slept=slept), nic_row(64, 1000), sg_row("sg")]
            return runner.Boot(), [(None, runner.Facts(bench=rows), [])], []
        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out):
            rc = measure.main(["--study", "iommu-flush", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i", "--quick"])
        self.assertEqual(rc, 1)
        self.assertIn("FAIL: bench-copy size=4096 rate=1000: 200 of 300 copies slept",
                      out.getvalue())


class OrderTests(unittest.TestCase):
    TABLES = [t for t in measure.STUDIES["iommu-flush"].tables]
    LABELS = ["no-iommu", "vtd-lazy", "vtd-strict", "intel-lazy", "intel-strict"]

    def runs(self, copy, nic, boots=2):
        return {label: [[copy_row(4096, copy[label]), nic_row(1500, nic[label])]] * boots
                for label in self.LABELS}

    def test_bounds_are_the_clocks_units_over_the_count(self):
        # 2 us (one CPU) over 300 copies, and 1 ns
        self.assertAlmostEqual(measure.checks.copy_bound(copy_row(1, 1)[1]), 2000 / 300 + 1)
        # /proc/uptime's 10 ms over 300 packets, twice, and 1 ns
        self.assertAlmostEqual(measure.checks.nic_bound(nic_row(1, 1, clock_us=10000)[1]),
                               2 * 10_000_000 / 300 + 1)

    def test_strict_above_lazy_above_none(self):
        copy = {"no-iommu": 74450, "vtd-lazy": 241010, "vtd-strict": 296170,
                "intel-lazy": 213270, "intel-strict": 255934}
        nic = {"no-iommu": 700000, "vtd-lazy": 833333, "vtd-strict": 900000,
               "intel-lazy": 833333, "intel-strict": 933333}
        lines, wrong = measure.checks.expect_order(self.runs(copy, nic), self.LABELS,
                                                   self.TABLES)
        self.assertEqual(wrong, [])
        self.assertEqual(len(lines), 1 + 4)   # two tables, two chains
        # equal, or apart by less than the bounds (7.7 ns for 1 us over 300 packets)
        for gap, ok in ((0, False), (7, False), (8, False), (16, True)):
            nic2 = dict(nic, **{"vtd-strict": nic["vtd-lazy"] + gap})
            _, wrong = measure.checks.expect_order(self.runs(copy, nic2), self.LABELS,
                                                   self.TABLES)
            self.assertEqual(wrong == [], ok, (gap, wrong))
        # /proc/uptime's 10 ms over 300 packets: 33 us apart is within its resolution
        runs = self.runs(copy, nic)
        for label in runs:
            runs[label] = [[copy_row(4096, copy[label]),
                            nic_row(1500, nic[label], clock_us=10000)]] * 2
        _, wrong = measure.checks.expect_order(runs, self.LABELS, self.TABLES)
        self.assertTrue(any(w.startswith("bench-nic nic=igb size=1500 rate=1000: vtd-strict is not "
                                         "above vtd-lazy") for w in wrong), wrong)
        self.assertFalse(any(w.startswith("bench-copy") for w in wrong), wrong)

    def test_every_boot_counts(self):
        copy = {"no-iommu": 1000, "vtd-lazy": 2000, "vtd-strict": 3000,
                "intel-lazy": 2000, "intel-strict": 3000}
        runs = self.runs(copy, {k: v * 10 for k, v in copy.items()})
        runs["intel-lazy"] = runs["intel-lazy"] + [[copy_row(4096, 900),
                                                   nic_row(1500, 20000)]]
        _, wrong = measure.checks.expect_order(runs, self.LABELS, self.TABLES)
        self.assertEqual(len(wrong), 1)
        self.assertIn("bench-copy size=4096 rate=1000: intel-lazy is not above no-iommu",
                      wrong[0])

    def test_sweeps_pair_each_value(self):
        self.assertEqual(measure.checks.chains(
            ["no-iommu", "vtd-lazy,wait-ns=0", "vtd-lazy,wait-ns=9", "vtd-strict,wait-ns=0",
             "vtd-strict,wait-ns=9", "intel-strict"]),
            [("no-iommu", "vtd-lazy,wait-ns=0", "vtd-strict,wait-ns=0"),
             ("no-iommu", "vtd-lazy,wait-ns=9", "vtd-strict,wait-ns=9")])

    def test_caching_mode_maps_above_strict_ones(self):
        from studies import orders

        def boot(mapped, unmapped):
            rows = []
            for size in ("4096", "65536"):
                for op, v in (("empty", 40), ("map", mapped), ("unmap", unmapped)):
                    rows.append(("bench-map", {"op": op, "size": size, "mean_ns": str(v),
                                               "p50_ns": str(v), "p99_ns": str(v)}))
            return [rows]
        labels = ["no-iommu", "vtd-lazy", "vtd-strict", "vtd-cm"]
        runs = {"no-iommu": boot(150, 90), "vtd-lazy": boot(1600, 1150),
                "vtd-strict": boot(1120, 2640), "vtd-cm": boot(2270, 2680)}
        lines, wrong = orders.dma_api(runs, labels, None)
        self.assertEqual(wrong, [])
        self.assertIn("caching mode > strict (maps)", lines[0])
        runs["vtd-cm"] = boot(1150, 2680)   # within the empty region's 40 ns of strict's
        _, wrong = orders.dma_api(runs, labels, None)
        self.assertEqual(len(wrong), 2, wrong)
        self.assertTrue(all("vtd-cm above vtd-strict by 30" in w and "not beyond" in w
                            for w in wrong), wrong)

    def test_refused_where_there_is_no_order_to_check(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            for extra in (["--study", "dma-api", "--host-clock"],
                          ["--study", "iommu-flush", "--host-clock"]):
                self.assertEqual(measure.main(extra + [
                    "--qemu", "q", "--kernel", "k", "--initrd", "i", "--expect-order"]), 2)
        self.assertIn("--expect-order needs the modelled clock", err.getvalue())


class DerivedTableTests(unittest.TestCase):
    def test_crossover_is_where_offloading_stays_cheaper(self):
        # {(op, size): (median, min, max, others, boots)}, as summarise() gives them
        cpu = {("cpu", "256"): 128, ("cpu", "4096"): 1024, ("cpu", "65536"): 16384}
        a = {**cpu, ("wait", "256"): 384, ("wait", "4096"): 900, ("wait", "65536"): 2000,
             ("overlap", "256"): 50, ("overlap", "4096"): 1100, ("overlap", "65536"): 1000}
        b = {**cpu, ("wait", "256"): 300, ("wait", "4096"): 2000, ("wait", "65536"): 32768}
        summaries = {label: {k: (v, v, v, [], 1) for k, v in busy.items()}
                     for label, busy in (("a", a), ("b", b))}
        lines, rows = measure.crossover(summaries, ["a", "b"])
        cross = {(r["config"], r["op"]): r["value"] for r in rows
                 if r["metric"] == "crossover_bytes"}
        # a: wait cheaper from 4096 on; overlap cheaper at 256 but not at 4096: from 65536
        # b: wait never cheaper; overlap and ordered not measured
        self.assertEqual(cross, {("a", "wait"): 4096, ("a", "overlap"): 65536,
                                 ("b", "wait"): -1})
        ratios = {(r["config"], r["op"], r["size"]): r["value"] for r in rows
                  if r["metric"] == "busy_ns:per_cpu"}
        self.assertEqual(ratios[("a", "wait", 256)], 3.0)
        self.assertEqual(ratios[("b", "wait", 65536)], 2.0)
        per_byte = {(r["config"], r["size"]): r["value"] for r in rows
                    if r["metric"] == "busy_ns:per_byte"}
        self.assertEqual(per_byte[("a", 256)], 0.5)
        self.assertEqual(per_byte[("a", 65536)], 0.25)
        self.assertIn("crossover 4096 bytes", lines[2])
        self.assertIn("crossover none up to 65536 bytes", lines[5])

    def test_in_copies_divides_by_the_same_configurations_memcpy(self):
        def s(**p50):
            return {tuple(k.split("_")): (v, v, v, [], 1) for k, v in p50.items()}
        summaries = {"no-bounce": s(memcpy_4096=100, map_4096=50, unmap_4096=40,
                                    sync_4096=30),
                     "swiotlb": s(memcpy_4096=200, map_4096=300, unmap_4096=250,
                                  sync_4096=420, map_65536=9)}
        lines, rows = measure.in_copies(summaries, ["no-bounce", "swiotlb"])
        got = {(r["config"], r["op"]): r["value"] for r in rows}
        self.assertEqual(got, {("no-bounce", "map"): 0.5, ("no-bounce", "unmap"): 0.4,
                               ("no-bounce", "sync"): 0.3, ("swiotlb", "map"): 1.5,
                               ("swiotlb", "unmap"): 1.25, ("swiotlb", "sync"): 2.1})
        self.assertTrue(all(r["size"] == "4096" for r in rows))   # no memcpy at 65536
        self.assertEqual(lines[-1].split(), ["swiotlb", "4096", "1.50", "1.25", "2.10"])

    def test_byte_prices_divide_each_copy_and_fill_by_its_size(self):
        def s(**net):
            return {tuple(k.split("_")): (v, v, v, [], 1) for k, v in net.items()}
        summaries = {"a": s(memcpy_4096=1600, memset_4096=512, map_4096=50),
                     "b": s(memcpy_65536=26000)}
        lines, rows = measure.byte_prices(summaries, ["a", "b"])
        got = {(r["config"], r["op"], r["size"]): r["value"] for r in rows}
        self.assertEqual(got, {("a", "memcpy", "4096"): 0.3906, ("a", "memset", "4096"): 0.125,
                               ("b", "memcpy", "65536"): 0.3967})
        self.assertEqual(lines[-2].split(), ["a", "4096", "0.391", "0.125"])
        self.assertEqual(lines[-1].split(), ["b", "65536", "0.397", "-"])
        self.assertEqual(measure.byte_prices({"c": s(map_4096=1)}, ["c"]), ([], []))

    def test_every_study_boots_one_cpu_model(self):
        """One price for a byte (issue 42): every study's configurations run QEMU's
        CPU without the fast-string features, except the offload study's erms-cpu, the
        named variant whose copy is dearer on purpose."""
        from studies.common import MODELLED_CPU
        for name, study in measure.STUDIES.items():
            self.assertEqual(study.cpu, MODELLED_CPU, name)
            for label, args in study.configs():
                cpus = [a for i, a in enumerate(args) if i and args[i - 1] == "--cpu"]
                if label == "erms-cpu":
                    self.assertEqual(cpus, ["max"])
                else:
                    self.assertIn(cpus, ([], [MODELLED_CPU]), (name, label))


class CountsTests(unittest.TestCase):
    """The counts tables each study prints first: per operation, the median over the
    boots with the range where they differ, '-' for what was not counted."""

    @staticmethod
    def inv(op, calls, descs, waits):
        return ("bench-inv", {"op": op, "size": "4096", "calls": str(calls),
                              "descs": str(descs), "waits": str(waits),
                              "iotlb_invs": str(waits)})

    def test_counts_per_call_with_their_range(self):
        from studies.common import MAP_INVS
        runs = {"no-iommu": [[self.inv("unmap", 200, -1, 0)]],
                "vtd-strict": [[self.inv("unmap", 200, 400, 200)],
                               [self.inv("unmap", 200, 402, 201)]]}
        lines, rows = measure.count_lines(runs, ["no-iommu", "vtd-strict"], [MAP_INVS])
        self.assertTrue(lines[0].startswith("counts per operation (exact"))
        body = {x.split()[2]: x.split()[3:] for x in lines if "unmap" in x.split()[:1]}
        # no unit: not counted; strict: 2 descriptors per call (2.000-2.010 over the boots)
        self.assertEqual(body["no-iommu"], ["-", "-", "-"])
        self.assertEqual(body["vtd-strict"][:2], ["2.010", "(2.000-2.010)"])
        self.assertIn({"op": "unmap", "size": "4096", "tag": "bench-inv",
                       "config": "vtd-strict", "metric": "count:waits", "value": 1.005},
                      rows)

    def test_boots_without_the_counts_say_so_in_one_line(self):
        from studies.common import MAP_INVS
        runs = {"vtd-strict": [[("bench-inv", {"op": "map", "size": "4096", "calls": "5"})]]}
        lines, rows = measure.count_lines(runs, ["vtd-strict"], [MAP_INVS])
        self.assertEqual(lines[1:], ["bench-inv, per call: none counted in these boots"])
        self.assertEqual(rows, [])

    def test_every_study_prints_counts_before_its_tables(self):
        from studies import STUDIES
        for name, study in STUDIES.items():
            self.assertTrue(getattr(study, "counts", None), name)

    def test_print_tables_puts_the_counts_first(self):
        from studies import STUDIES
        study = STUDIES["dma-api"]
        runs = {"no-iommu": [[self.inv("map", 10, -1, 0)] + [
            ("bench-map", {"op": op, "size": "4096", "mean_ns": "5", "p50_ns": "5",
                           "p99_ns": "5", "max_ns": "5"}) for op in ("empty", "map")]]}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            measure.print_tables(unittest.mock.Mock(icount=0), study, ["no-iommu"], runs,
                                 {"no-iommu": [{}]}, {})
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("counts per operation"))
        self.assertLess(lines.index(next(x for x in lines if x.startswith("bench-inv"))),
                        lines.index(next(x for x in lines if x.startswith("op=map"))))


class SmpTests(unittest.TestCase):
    """--smp N: the TSC kept as the clocksource on the modelled clock, mapcost's
    concurrent windows, no profiler (it crashes such guests), and --configs."""

    @staticmethod
    def args(*argv):
        return measure.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--study", "dma-api"] +
            list(argv))

    def words(self, args):
        from studies import STUDIES
        study = STUDIES["dma-api"]
        self.assertIsNotNone(measure.settle(args, study))
        clock = measure.clock_args(args, study, ("ref", 1, "a", 1000), False)
        return clock[clock.index("--append") + 1].split(), clock

    def test_four_cpus_keep_the_tsc_and_map_on_every_cpu(self):
        words, clock = self.words(self.args("--smp", "4"))
        self.assertIn("tsc=reliable", words)
        self.assertIn("dmalab_exercise.mapcost_threads=4", words)
        self.assertEqual(clock[clock.index("--smp") + 1], "4")
        words, clock = self.words(self.args())
        self.assertNotIn("tsc=reliable", words)
        self.assertNotIn("dmalab_exercise.mapcost_threads=4", " ".join(words))
        self.assertEqual(clock[clock.index("--smp") + 1], "1")
        # the host clock: Linux's own choice of clocksource stands
        words, _ = self.words(self.args("--smp", "4", "--host-clock"))
        self.assertNotIn("tsc=reliable", words)

    def test_no_profiler_with_more_than_one_cpu_on_the_modelled_clock(self):
        from studies import STUDIES
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertIsNone(measure.settle(self.args("--smp", "2", "--profile", "p.so"),
                                             STUDIES["dma-api"]))
        self.assertIn("crashes in boot", err.getvalue())
        self.assertIsNotNone(measure.settle(self.args("--profile", "p.so"),
                                            STUDIES["dma-api"]))

    def test_configs_picks_and_refuses_unknown_ones(self):
        from studies import STUDIES
        configs = measure.settle(self.args("--configs", "vtd-strict,no-iommu"),
                                 STUDIES["dma-api"])
        self.assertEqual([c[0] for c in configs], ["no-iommu", "vtd-strict"])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertIsNone(measure.settle(self.args("--configs", "vtd-nope"),
                                             STUDIES["dma-api"]))
        self.assertIn("no configuration vtd-nope", err.getvalue())


class ConcurrentRowTests(unittest.TestCase):
    """The concurrent windows' rows (--smp N): their counts checked, and every
    configuration must print them on a guest of 2 CPUs or more, none on one CPU."""

    @staticmethod
    def mapmt(**kw):
        f = {"size": "4096", "threads": "4", "pairs": "800", "descs": "1600", "waits": "800"}
        f.update(kw)
        return f

    def test_strict_waits_once_per_unmap(self):
        from measure_checks import concurrent_row
        self.assertEqual(concurrent_row("vtd-strict", self.mapmt(), True), [])
        self.assertIn("799 waits for 800 strict unmaps",
                      concurrent_row("vtd-strict", self.mapmt(waits="799"), True)[0])
        # a copy unmaps twice
        copy = {"size": "4096", "threads": "4", "copies": "400", "descs": "1600",
                "waits": "800"}
        self.assertEqual(concurrent_row("vtd-strict", copy, True), [])
        self.assertIn("799 waits for 800",
                      concurrent_row("vtd-strict", dict(copy, waits="799"), True)[0])
        self.assertIn("queue was not read",
                      concurrent_row("vtd-lazy", self.mapmt(descs="-1"), True)[0])
        self.assertEqual(concurrent_row("no-iommu", self.mapmt(descs="-1", waits="0"), True),
                         [])
        self.assertIn("on 1 threads", concurrent_row("vtd-lazy", self.mapmt(threads="1"),
                                                     True)[0])

    def test_the_windows_are_wanted_from_two_cpus(self):
        from studies import STUDIES
        study = STUDIES["dma-api"]
        rows = [("bench-map", {"op": "map", "size": "4096"})]
        missing = "no '# bench-mapmt' lines from the guest"
        self.assertNotIn(missing, str(measure.check_rows(study, "vtd-lazy", rows, True, True,
                                                         1)))
        self.assertIn(missing, str(measure.check_rows(study, "vtd-lazy", rows, True, True,
                                                      2)))
        copy = STUDIES["iommu-flush"]
        self.assertIn("no '# bench-copymt' lines",
                      str(measure.check_rows(copy, "vtd-lazy", [], True, True, 4)))


class MemcpyRowTests(unittest.TestCase):
    """The CPU's own memcpy() row must time the kernel's copy loop on the modelled clock."""

    def test_a_per_byte_copy_is_refused(self):
        from measure_checks import memcpy_row
        row = {"op": "memcpy", "size": "4096", "mean_ns": "1652"}       # 0.40 a byte
        self.assertEqual(memcpy_row("no-iommu", row, True), [])
        inline = dict(row, mean_ns="4147")                             # rep movsb
        self.assertIn("1.01 ns per byte", memcpy_row("no-iommu", inline, True)[0])
        self.assertEqual(memcpy_row("no-iommu", inline, False), [])     # host clock
        self.assertEqual(memcpy_row("no-iommu", dict(inline, op="map"), True), [])

    def test_both_studies_check_it(self):
        from studies import STUDIES
        inline = {"op": "memcpy", "size": "4096", "mean_ns": "4147"}
        for name in ("dma-api", "swiotlb"):
            failed = measure.check_rows(STUDIES[name], "no-iommu" if name == "dma-api"
                                        else "no-bounce", [("bench-map", inline)], False,
                                        True)
            self.assertTrue(any("not the kernel's copy loop" in w for _, ws in failed
                                for w in ws), name)


class TablesFromResultsTests(unittest.TestCase):
    """`measure.py tables RESULTS.json` prints a run's tables again from its file."""

    @staticmethod
    def boot(mapped):
        rows = [("bench-map", {"op": op, "size": "4096", "mean_ns": str(v), "p50_ns": str(v),
                               "p99_ns": str(v), "max_ns": str(v)})
                for op, v in (("empty", 40), ("memcpy", 1640), ("map", mapped))]
        return [{"tag": tag, **f} for tag, f in rows]

    def test_the_tables_come_back_from_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            stem = os.path.join(tmp, "dma-api-6.1")
            meta = {"study": "dma-api", "clock": "icount-0", "clock_text": "modelled",
                    "kernel_version": "6.1.0-57-amd64",
                    "provenance": {"commit": "abcdef123456", "dirty": False}}
            measure.write_results(stem, meta, [], {"no-iommu": [self.boot(140)],
                                                   "vtd-strict": [self.boot(440)]},
                                  {"no-iommu": [{}], "vtd-strict": [{}]})
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(measure.main(["tables", stem + ".json"]), 0)
        text = out.getvalue()
        self.assertIn("commit abcdef123456", text)
        # map: 140 and 440 less the empty region's 40, the ratio 4.00
        lines = text.splitlines()
        at = lines.index(next(x for x in lines if x.startswith("op=map size=4096")))
        self.assertEqual(lines[at + 2].split()[:2], ["no-iommu", "100"])
        self.assertEqual(lines[at + 3].split()[:2], ["vtd-strict", "400"])
        self.assertEqual(lines[at + 3].split()[-1], "4.00")
        self.assertEqual(lines[-1].split(), ["vtd-strict", "4096", "0.391", "-"])

    def test_a_gzipd_results_file_reads_the_same(self):
        import gzip
        with tempfile.TemporaryDirectory() as tmp:
            stem = os.path.join(tmp, "r")
            meta = {"study": "dma-api", "clock": "icount-0", "clock_text": "modelled"}
            measure.write_results(stem, meta, [], {"no-iommu": [self.boot(140)]},
                                  {"no-iommu": [{}]})
            with open(stem + ".json", "rb") as f, gzip.open(stem + ".json.gz", "wb") as g:
                g.write(f.read())
            outs = []
            for path in (stem + ".json", stem + ".json.gz"):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    self.assertEqual(measure.main(["tables", path]), 0)
                outs.append(out.getvalue().replace(".json.gz", ".json"))
        self.assertEqual(outs[0], outs[1])
        self.assertIn("op=map size=4096", outs[0])

    def test_a_file_that_is_no_results_file_is_refused(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("{}")
            f.flush()
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(measure.main(["tables", f.name]), 2)
        self.assertIn("not a results file", err.getvalue())


class CpuProfileTests(unittest.TestCase):
    """--cpu-profile: the devices' delays in a published CPU's ns, scaled to its
    instructions on the 1-ns modelled clock."""

    CONFIGS = [("vtd-strict", ["--device", "dmalab-vtd,mode=scalable",
                               "--device", "dmalab-ioat,latency-ns=2000,bandwidth=4000000000",
                               "--append", "intel_iommu=on a=b,c=d"]),
               ("set", ["--device", "dmalab-vtd,wait-ns=1000"])]

    def test_every_delay_is_divided_and_every_bandwidth_multiplied_by_t(self):
        from studies import cpus
        prof = cpus.profile("cascade-lake-6234")
        self.assertAlmostEqual(prof.ns_per_insn(1), 1 / 3.3)
        (_, a), (_, b) = cpus.apply(self.CONFIGS, prof, 1)
        # t = 0.303 ns: the model's 500, 200, 10 ns and the paper's 197 ns walk read
        self.assertEqual(a[1], "dmalab-vtd,mode=scalable,wait-ns=1650,inv-desc-ns=660,"
                               "inv-page-ns=33,walk-read-ns=650")
        self.assertEqual(a[3], "dmalab-ioat,latency-ns=6600,bandwidth=1212121212")
        self.assertEqual(a[5], "intel_iommu=on a=b,c=d")       # not a device
        self.assertTrue(b[1].startswith("dmalab-vtd,wait-ns=3300,"))   # --set: that CPU's ns
        # IPC 2 halves t
        (_, a2), _ = cpus.apply(self.CONFIGS, prof, 2)
        self.assertIn("wait-ns=3300", a2[1])
        self.assertEqual(cpus.apply(self.CONFIGS, cpus.profile("model"), 1), self.CONFIGS)

    def test_a_profiles_sizes_are_set_as_they_are_unless_given(self):
        from studies import cpus
        prof = cpus.profile("haswell-ep-2620v3")
        (_, a), _ = cpus.apply(self.CONFIGS, prof, 1)
        self.assertIn("iotlb-entries=120,iotlb-ways=8", a[1])
        (_, a), = cpus.apply([("x", ["--device", "dmalab-vtd,iotlb-entries=64"])], prof, 1)
        self.assertIn("iotlb-entries=64,", a[1])
        self.assertNotIn("iotlb-entries=120", a[1])
        self.assertIn("iotlb-entries 120 (fitted), iotlb-ways 8 (chosen)",
                      cpus.describe(prof, 1))

    def test_the_models_defaults_are_the_ones_scaled(self):
        """VTD_DELAYS must be dmalab-vtd's defaults (vtd/include/dmalab/vtd/unit.h)."""
        import re
        from studies import cpus
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "vtd", "include", "dmalab", "vtd",
                               "unit.h")) as f:
            header = f.read()
        for prop, ns in cpus.VTD_DELAYS.items():
            member = prop.replace("-", "_")
            m = re.search(r"uint64_t %s = (\d+);" % member, header)
            self.assertIsNotNone(m, member)
            self.assertEqual(int(m.group(1)), ns, prop)

    def test_every_profile_number_names_its_source(self):
        from studies import cpus
        for prof in cpus.PROFILES.values():
            self.assertGreater(len(prof.ghz.where), 20, prof.name)
            for k, s in prof.delays.items():
                self.assertIn(k, cpus.VTD_DELAYS.keys() | set(cpus.IOAT_DELAYS)
                              | set(cpus.IOAT_RATES), prof.name)
                self.assertGreater(len(s.where), 20, (prof.name, k))

    def run_main(self, *extra):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = measure.main(["--study", "dma-api", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i"] + list(extra))
        return rc, err.getvalue()

    def test_a_profile_needs_the_1_ns_clock_and_a_known_name(self):
        rc, err = self.run_main("--cpu-profile", "pentium-4")
        self.assertEqual(rc, 2)
        self.assertIn("unknown CPU profile 'pentium-4'", err)
        rc, err = self.run_main("--cpu-profile", "cascade-lake-6234", "--icount", "3")
        self.assertEqual(rc, 2)
        self.assertIn("--icount 0", err)
        rc, err = self.run_main("--cpu-profile", "cascade-lake-6234", "--ipc", "0")
        self.assertEqual(rc, 2)
        self.assertIn("--ipc must be above 0", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
