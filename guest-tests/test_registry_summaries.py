#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the bench and measure summaries: measure.py's medians, tables and results
files, bench.py's medians, comparisons and results (no QEMU; test_registry.py runs them)."""

import io
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402


class MeasureTests(unittest.TestCase):
    """guest-tests/measure.py's summary of bench-map lines."""

    def row(self, op, p50, p99, size="4096"):
        return ("bench-map", {"op": op, "size": size, "n": "10", "p50_ns": str(p50),
                              "p99_ns": str(p99)})

    @staticmethod
    def p50():
        """bench-map read by its median (dma-api's own table reads the mean, net of the
        empty region: test_studies.py)."""
        import measure
        return measure.Table("bench-map", ("op", "size"), "p50_ns", ["p99_ns"], "ns per call")

    def test_medians_ranges_and_ratio_to_the_baseline(self):
        import measure
        t = self.p50()
        base = measure.summarise([[self.row("map", 100, 150)], [self.row("map", 300, 350)],
                                  [self.row("map", 200, 250)]], t)
        self.assertEqual(base, {("map", "4096"): (200, 100, 300, [250], 3, [(150, 350)])})
        other = measure.summarise([[self.row("map", 500, 900), ("bench", {"x": "1"})],
                                   [self.row("map", 700, 800)]], t)
        # An even count takes the upper median, as bench.py's median does.
        self.assertEqual(other[("map", "4096")][:5], (700, 500, 700, [900], 2))
        lines = measure.table({"a": base, "b": other}, ["a", "b"], t)
        self.assertEqual(lines[0], "op=map size=4096 (ns per call, guest clock):")
        self.assertEqual(lines[3].split(), ["b", "700", "500-700", "900", "2", "3.50"])

    def test_the_copy_study_reads_service_demand(self):
        import measure
        study = measure.STUDIES["iommu-flush"].tables[0]

        def copy(busy, per_s, slept=9):
            return ("bench-copy", {"size": "4096", "rate": "1000", "copies": "9",
                                   "slept": str(slept), "per_s": str(per_s),
                                   "util_ppm": str(busy), "busy_ns_per_copy": str(busy),
                                   "pacing_ns_per_copy": "50", "net_ns_per_copy": str(busy - 50)})
        base = measure.summarise([[copy(400, 999)], [copy(600, 998, slept=8)]], study)
        self.assertEqual(base[("4096", "1000")][:5], (600, 400, 600, [999, 600, 9, 50, 550], 2))
        strict = measure.summarise([[copy(1800, 997)]], study)
        lines = measure.table({"a": base, "b": strict}, ["a", "b"], study, "1 ns per guest "
                              "instruction")
        self.assertEqual(lines[0], "size=4096 rate=1000 (guest CPU ns per copy, gross, 1 ns "
                                   "per guest instruction):")
        self.assertEqual(lines[-1].split(), ["b", "1800", "1800-1800", "997", "1800", "9", "50",
                                             "1750", "1", "3.00"])

    def test_results_are_written_as_json_and_csv_rows(self):
        import csv
        import json
        import tempfile
        import measure
        t = self.p50()
        base = measure.summarise([[self.row("unmap", 100, 150)]], t)
        strict = measure.summarise([[self.row("unmap", 350, 900)]], t)
        rows = measure.records({"a": base, "b": strict}, ["a", "b"], t)
        ratio = [r for r in rows if r["config"] == "b" and r["metric"] == "p50_ns:ratio"]
        self.assertEqual(ratio, [{"op": "unmap", "size": "4096", "tag": "bench-map",
                                  "config": "b", "metric": "p50_ns:ratio", "value": 3.5}])
        with tempfile.TemporaryDirectory() as d:
            stem = d + "/m"
            measure.write_results(stem, {"study": "dma-api", "clock": "host"}, rows,
                                  {"a": [[{"tag": "bench-map", "op": "unmap"}]]})
            with open(stem + ".json") as f:
                doc = json.load(f)
            self.assertEqual(doc["summary"], rows)
            self.assertEqual(doc["boots"]["a"][0][0]["op"], "unmap")
            with open(stem + ".csv") as f:
                lines = list(csv.DictReader(f))
            self.assertEqual(len(lines), len(rows))
            self.assertEqual((lines[-1]["config"], lines[-1]["metric"], lines[-1]["value"],
                              lines[-1]["clock"]), ("b", "p50_ns:ratio", "3.5", "host"))

    def test_each_study_boots_dmalab_ioat_with_its_engine_profile(self):
        import measure
        copy = dict(measure.STUDIES["iommu-flush"].configs())
        self.assertEqual(list(copy), ["no-iommu", "vtd-pt", "vtd-lazy", "vtd-strict",
                                      "vtd-sm-lazy", "vtd-sm-strict", "intel-lazy",
                                      "intel-strict"])
        self.assertIn("dmalab-vtd,mode=scalable", copy["vtd-sm-strict"])
        self.assertIn("intel-iommu", copy["intel-strict"])
        self.assertIn("dmalab-ioat," + measure.COPY_ENGINE, copy["vtd-strict"])
        self.assertIn("dmalab-ioat", dict(measure.STUDIES["dma-api"].configs())["vtd-pt"])
        # --engine "" boots the copy study with dmalab-ioat's own defaults
        self.assertIn("dmalab-ioat", dict(measure.STUDIES["iommu-flush"].configs(""))["no-iommu"])

    def test_a_configuration_without_rows_shows_dashes(self):
        import measure
        base = measure.summarise([[self.row("unmap", 10, 20)]], self.p50())
        lines = measure.table({"a": base, "b": {}}, ["a", "b"], self.p50())
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

    def test_results_give_the_comparison_again(self):
        import bench
        ops = {"without": "1000.0", "vtd-lazy": "250.0"}

        def fake_boot(rp, argv, label, log_path=None, verbose=False):
            facts = unittest.mock.Mock(bench=[("bench", {"size": "1048576", "channels": "1",
                                                         "ops_per_s": ops[label]})])
            return unittest.mock.Mock(wall=2.0), [(None, facts, None)], []
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "walks.json.gz")
            run, again = io.StringIO(), io.StringIO()
            with unittest.mock.patch.object(runner, "bench_boot", fake_boot), \
                    unittest.mock.patch.object(runner, "ioat_stats",
                                               lambda boot: [{"bytes": 1 << 30}]), \
                    unittest.mock.patch.object(bench, "SETS",
                                               {"walks": [bench.WITHOUT, bench.VTD]}), \
                    unittest.mock.patch("sys.stdout", run):
                bench.main(["--qemu", "q", "--kernel", "k", "--initrd", "i",
                            "--set", "walks", "--results", path])
            with unittest.mock.patch("sys.stdout", again):
                self.assertEqual(bench.main(["tables", path]), 0)
        # the run's comparison, from "bench ops/s" to its host costs, comes back the same
        cut = lambda text, end: text[text.index("bench ops/s"):text.index(end)]
        self.assertEqual(cut(again.getvalue() + "results:", "results:"),
                         cut(run.getvalue(), "results:"))
        self.assertIn(["1048576", "1", "1000.0", "250.0", "0.25"],
                      [line.split() for line in again.getvalue().splitlines()])
        self.assertIn("==== bench --set walks from walks.json.gz", again.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=2)
