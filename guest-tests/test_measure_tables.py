#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's tables (test_measure.py runs them): the derived tables, the counts printed
first, and `measure.py tables RESULTS.json` from a results file."""

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
