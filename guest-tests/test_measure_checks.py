#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's checks of a boot (test_measure.py runs them): each configuration's premise,
the bench rows' checks (copies, packets, sg windows, concurrent and memcpy rows) and the
iommu-flush study's order (--expect-order), on rows made here."""

import contextlib
import io
import os
import sys
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import runner  # noqa: E402
from studies.offload import DSA_LABELS  # noqa: E402


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

    # what a boot through dmalab-dsa prints besides (init/dsa.sh, the exerciser's end)
    DSA_LINES = ["DMALAB: idxd bound 0000:00:03.0 vendor=0x8086 device=0x0b25",
                 "DMALAB: dsa channels=1 (dma0chan0)",
                 "DMALAB: exercise end rc=0 uptime=9.50", "DMALAB: dsa end"]

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
            dsa = label in DSA_LABELS
            if dsa:     # its own premise, without idxd's set-up and teardown
                self.assertTrue(self.wrong(args, self.LINES["none"]))
            for boot, lines in self.LINES.items():
                lines = lines + (self.DSA_LINES if dsa else [])
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
