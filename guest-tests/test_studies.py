#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's spread and provenance, the empty region's subtraction, and what dma-api,
swiotlb and offload check (studies/orders.py), without a guest (run by runner-selftest)."""

import contextlib
import gzip
import io
import os
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import measure_provenance as prov  # noqa: E402
import runner  # noqa: E402
from imagelib.cpio import Cpio  # noqa: E402
from measure_tables import net_of_empty, summarise, table  # noqa: E402
from studies import orders  # noqa: E402


def calls(op, size, mean, p50=None, p99=None, tag="bench-map"):
    p50 = mean if p50 is None else p50
    return (tag, {"op": op, "size": str(size), "mean_ns": str(mean), "p50_ns": str(p50),
                  "p99_ns": str(p99 or p50), "max_ns": str(p99 or p50)})


class SpreadTests(unittest.TestCase):
    def variants(self, *argv, study="dma-api"):
        args = measure.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--study", study] + list(argv))
        return measure.spread(args, measure.STUDIES[study])

    def test_one_factor_at_a_time_from_the_reference(self):
        self.assertEqual(self.variants(), [("ref", 1, "a", 1000), ("seed=2", 2, "a", 1000),
                                           ("build=b", 1, "b", 1000)])
        # a study with a rate: 1% less and more
        self.assertEqual([v[0] for v in self.variants(study="swiotlb")],
                         ["ref", "seed=2", "build=b", "rate-1%", "rate+1%"])
        self.assertEqual([v[3] for v in self.variants(study="swiotlb")][-2:], [990, 1010])
        self.assertEqual(self.variants("--seeds", "7,8,9", "--builds", "1"),
                         [("ref", 7, "a", 1000), ("seed=8", 8, "a", 1000),
                          ("seed=9", 9, "a", 1000)])

    def test_quick_boots_the_reference_only_unless_told(self):
        self.assertEqual(self.variants("--quick", study="swiotlb"), [("ref", 1, "a", 1000)])
        self.assertEqual(len(self.variants("--quick", "--builds", "2")), 2)

    def test_the_spread_reaches_the_boots(self):
        seen = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            a = rp.parse_args(argv)
            seed = [q for q in a.qemu_arg][a.qemu_arg.index("-seed") + 1]
            seen.append((label, seed, os.path.basename(a.initrd), a.cpu))
            return runner.Boot(), [(None, runner.Facts(bench=[calls("map", 4096, 10)]), [])], []
        with tempfile.TemporaryDirectory() as tmp:
            ko = os.path.join(tmp, "initrd-build-b.cpio.gz")
            with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                    unittest.mock.patch.object(measure.prov, "second_build",
                                               lambda k, i, d: ko), \
                    contextlib.redirect_stdout(io.StringIO()):
                measure.main(["--study", "dma-api", "--qemu", "q", "--kernel", "k",
                              "--initrd", os.path.join(tmp, "i")])
        self.assertEqual(len(seen), 3 * 7)
        cpu = "max,-erms,-fsrm,-fzrm,-fsrs,-fsrc"
        self.assertEqual(seen[0], ("no-iommu", "1", "i", cpu))
        self.assertEqual(seen[7], ("no-iommu [seed=2]", "2", "i", cpu))
        self.assertEqual(seen[14][2], "initrd-build-b.cpio.gz")


class ProvenanceTests(unittest.TestCase):
    def test_second_builds_of_two_kernels_do_not_share_files(self):
        a = prov.second_build_paths("/b/guest-tests/initramfs.cpio.gz", "6.1.0-44-amd64", "/m")
        b = prov.second_build_paths("/b/guest-tests/bpo/initramfs.cpio.gz",
                                    "6.12.95+deb12-amd64", "/m")
        self.assertEqual(a, ("/m/module-build-b-6.1.0-44-amd64",
                             "/m/initramfs-6.1.0-44-amd64-build-b.cpio.gz"))
        self.assertFalse(set(a) & set(b))

    def test_two_studies_at_once_build_the_second_exerciser_once(self):
        """Two measure.py runs with one --log-dir: one builds, the other waits and
        takes the stamped result (each used to remove the other's folder mid-build)."""
        import threading
        import time
        makes = []

        def make(cmd, **kw):
            makes.append(cmd)
            time.sleep(0.3)          # long enough for the other thread to arrive
            bdir = next(a[2:] for a in cmd if a.startswith("M="))
            with open(os.path.join(bdir, prov.EXERCISER), "wb") as f:
                f.write(b"ko")
            return subprocess.CompletedProcess(cmd, 0, "", "")
        with tempfile.TemporaryDirectory() as tmp:
            initrd = os.path.join(tmp, "initramfs.cpio.gz")
            with open(initrd, "wb") as f:
                f.write(gzip.compress(b""))
            info = {"kernel_version": "6.1.0-57-amd64", "kbuild_dir": "/kb"}
            outs = []
            with unittest.mock.patch.object(prov, "image_info", lambda k: info), \
                    unittest.mock.patch.object(prov.subprocess, "run", make):
                threads = [threading.Thread(target=lambda: outs.append(
                    prov.second_build("k", initrd, tmp, log=lambda m: None)))
                    for _ in range(2)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            self.assertEqual(len(makes), 1)
            self.assertEqual(len(outs), 2)
            self.assertEqual(outs[0], outs[1])
            self.assertTrue(os.path.isfile(outs[0]))

    def test_the_last_archive_decides_a_modules_hash(self):
        def archive(files):
            buf = io.BytesIO()
            cp = Cpio(buf)
            for path, data in files.items():
                cp.file(path, data)
            cp.trailer()
            return gzip.compress(buf.getvalue())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "initrd")
            with open(path, "wb") as f:
                f.write(archive({"lib/modules/v/extra/dmalab_exercise.ko": b"first",
                                 "lib/modules/v/kernel/ioatdma.ko": b"driver",
                                 "init": b"#!/bin/sh"}))
                f.write(archive({"lib/modules/v/extra/dmalab_exercise.ko": b"second"}))
            mods = prov.initrd_modules(path)
            p = prov.provenance(path, path, path)
        self.assertEqual(sorted(mods), ["dmalab_exercise.ko", "ioatdma.ko"])
        self.assertEqual(mods["dmalab_exercise.ko"],
                         prov.hashlib.sha256(b"second").hexdigest()[:16])
        self.assertEqual(p["modules_sha256"], mods)
        self.assertEqual(len(p["qemu_sha256"]), 16)
        self.assertTrue(p["commit"])


class NetOfEmptyTests(unittest.TestCase):
    def test_the_empty_regions_cost_is_taken_from_each_call(self):
        rows = net_of_empty([calls("empty", 4096, 60, 58), calls("empty", 65536, 62, 60),
                             calls("map", 4096, 1061, 1000, 3059),
                             calls("fill", 3840, 561, tag="bench-xdp"),
                             ("bench-nic", {"size": "64", "busy_ns_per_packet": "9"})])
        f = {(t, r.get("op")): r for t, r in rows}
        self.assertEqual(f[("bench-map", "map")]["net_mean_ns"], "1000")
        self.assertEqual(f[("bench-map", "map")]["net_p50_ns"], "941")
        self.assertEqual(f[("bench-map", "map")]["net_p99_ns"], "3000")
        self.assertEqual(f[("bench-xdp", "fill")]["net_mean_ns"], "500")
        self.assertNotIn("net_mean_ns", f[("bench-nic", None)])
        s = summarise([[calls("empty", 4096, 60), calls("map", 4096, 1060)],
                       [calls("empty", 4096, 40), calls("map", 4096, 1140)]])
        self.assertEqual(s[("map", "4096")][:3], (1100, 1000, 1100))

    def test_a_table_leaves_out_configurations_without_figures(self):
        t = measure.STUDIES["swiotlb"].tables[-1]     # bench-offload: the engine's only
        row = ("bench-offload", {"op": "wait", "size": "4096", "busy_ns": "5",
                                 "elapsed_ns": "6", "mean_ns": "6", "p99_ns": "7"})
        s = {"no-bounce": {}, "no-bounce-engine": summarise([[row]], t)}
        lines = table(s, ["no-bounce", "no-bounce-engine"], t, "modelled")
        self.assertFalse(any(" no-bounce " in line for line in lines))
        self.assertTrue(any("busy_ns / no-bounce-engine" in line for line in lines))


def boots(**figures):
    """{label: [rows]} of one boot each."""
    return {label: [rows] for label, rows in figures.items()}


class DmaApiOrderTests(unittest.TestCase):
    def runs(self, strict=40000, lazy=20000, none=300, empty=60):
        out = {}
        for label, unmap in (("no-iommu", none), ("vtd-lazy", lazy), ("vtd-strict", strict)):
            rows = [calls("empty", s, empty) for s in (4096, 65536)]
            rows += [calls("unmap", s, unmap + empty) for s in (4096, 65536)]
            rows += [calls("map", s, (lazy if label != "no-iommu" else none) + empty)
                     for s in (4096, 65536)]
            out[label] = [rows]
        return out

    def test_strict_above_lazy_above_none(self):
        labels = ["no-iommu", "vtd-lazy", "vtd-strict"]
        lines, wrong = orders.dma_api(self.runs(), labels, [])
        self.assertEqual(wrong, [])
        self.assertEqual(len(lines), 1 + 6)
        # apart by less than the empty region's cost (60 ns): not told apart
        _, wrong = orders.dma_api(self.runs(strict=20100), labels, [])
        self.assertEqual(len(wrong), 2)
        self.assertIn("vtd-strict above vtd-lazy by 100", wrong[0])
        _, wrong = orders.dma_api(self.runs(strict=20200), labels, [])
        self.assertEqual(wrong, [])


class SwiotlbTests(unittest.TestCase):
    def test_bounced_bytes_where_forced_only(self):
        some = {"op": "map", "size": "4096", "bytes_per_call": "4096"}
        none = dict(some, bytes_per_call="0")
        self.assertEqual(orders.bounce_row("swiotlb", some, True) +
                         orders.bounce_row("no-bounce", none, True), [])
        self.assertIn("nothing copied", orders.bounce_row("swiotlb", none, True)[0])
        self.assertIn("without swiotlb=force", orders.bounce_row("no-bounce", some, True)[0])
        # need-sync copies nothing either way
        self.assertEqual(orders.bounce_row("swiotlb", dict(none, op="xdp-need-sync"), True),
                         [])
        nic = {"size": "64", "bytes_per_packet": "3104"}
        self.assertEqual(orders.bounce_row("swiotlb", nic, True), [])
        self.assertTrue(orders.bounce_row("no-bounce", nic, True))

    def test_bounced_above_not_bounced(self):
        def rows(k):
            out = [calls("empty", 4096, 60)]
            out += [calls(op, s, 60 + k * s) for op in ("map", "unmap", "sync")
                    for s in (4096, 65536)]
            out += [calls(op, s, 60 + k * s, tag="bench-xdp") for op in ("fill", "rx")
                    for s in (1792, 3840)]
            out += [("bench-bounce", {"op": op, "size": str(s), "bytes_per_call": str(k * s)})
                    for op in ("map", "unmap", "sync", "xdp-fill", "xdp-rx")
                    for s in (4096, 65536, 1792, 3840)]
            out += [("bench-nic", {"size": "64", "rate": "1000", "sent": "300",
                                   "clock_us": "1", "cpus": "1",
                                   "busy_ns_per_packet": str(20000 + 3000 * k)}),
                    ("bench-nic-bounce", {"size": "64", "bytes_per_packet": str(3104 * k)})]
            return out
        runs = {"no-bounce": [rows(0)], "swiotlb": [rows(1)]}
        lines, wrong = orders.swiotlb(runs, ["no-bounce", "swiotlb"], [])
        self.assertEqual(wrong, [])
        # a sync that bounced nothing more than the direct one is caught
        runs["swiotlb"][0] = [calls("sync", 4096, 60) if r[1].get("op") == "sync" and
                              r[0] == "bench-map" and r[1]["size"] == "4096" else r
                              for r in runs["swiotlb"][0]]
        _, wrong = orders.swiotlb(runs, ["no-bounce", "swiotlb"], [])
        self.assertEqual(len(wrong), 1)
        self.assertIn("bench-map net_mean_ns sync 4096", wrong[0])


class OffloadOrderTests(unittest.TestCase):
    def row(self, busy, elapsed, chunks=170):
        return ("bench-offload", {"op": "overlap", "size": "4096", "busy_ns": str(busy),
                                  "elapsed_ns": str(elapsed), "chunks": str(chunks),
                                  "cpus": "1"})

    def test_busy_below_elapsed_when_overlapping(self):
        lines, wrong = orders.offload({"engine": [[self.row(2000, 3000)]]}, ["engine"], [])
        self.assertEqual(wrong, [])
        # 2 us over 170 chunks, and 1 ns: 12.8 ns of resolution
        _, wrong = orders.offload({"engine": [[self.row(2000, 2012)]]}, ["engine"], [])
        self.assertEqual(len(wrong), 1)
        _, wrong = orders.offload({"engine": [[self.row(2000, 2014)]]}, ["engine"], [])
        self.assertEqual(wrong, [])
        _, wrong = orders.offload({"engine": [[]]}, ["engine"], [])
        self.assertEqual(wrong, ["--expect-order: no overlap figures"])


def offload_row(op, n, irqs, polls, sleeps, copies=None, batch=16, chunks=None):
    """A bench-offload row of n rounds of op (a read of batch + 1 chunks in overlap and
    ordered), copies seen complete by default those offloaded."""
    per = batch + 1 if op in ("overlap", "ordered") else 1
    if copies is None:
        copies = {"cpu": 0, "wait": n}.get(op, n * batch)
    return ("bench-offload", {"op": op, "size": "4096", "n": str(n),
                              "chunks": str(n * per if chunks is None else chunks),
                              "batch": str(batch), "dma_copies": str(copies),
                              "dma_irqs": str(irqs), "polls": str(polls),
                              "sleeps": str(sleeps), "busy_ns": "900", "elapsed_ns": "3000",
                              "cpus": "1"})


class OffloadRowTests(unittest.TestCase):
    """offload's rows: the copies seen complete are those offloaded, and the CPU learnt of
    them as the channel allows (polls on dmalab-ioat, a sleep per round on DSA); the
    device's descriptors against them; and what the tables say of DSA's waits."""

    def check(self, label, row):
        from studies import offload
        return offload.offload_row(label, row[1], True)

    # (op, rounds, interrupts asked, polls, sleeps) of a good boot of each channel
    GOOD = {"engine": [("cpu", 170, 0, 0, 0), ("wait", 170, 0, 170, 0),
                       ("overlap", 10, 10, 0, 10), ("ordered", 10, 0, 10, 0)],
            "dsa": [("cpu", 170, 0, 0, 0), ("wait", 170, 170, 0, 170),
                    ("overlap", 10, 160, 0, 10), ("ordered", 10, 160, 0, 10)]}

    def test_each_channel_is_waited_for_as_it_allows(self):
        for label, rows in self.GOOD.items():
            for args in rows:
                self.assertEqual(self.check(label, offload_row(*args)), [], (label, args))
        # an interrupt per copy on dmalab-ioat's channel, polled rounds on DSA's
        self.assertIn("where the channel wants 0, 170, 0",
                      self.check("engine", offload_row("wait", 170, 170, 0, 170))[0])
        self.assertIn("polls and sleeps 0, 10, 0 where the channel wants 160, 0, 10",
                      self.check("dsa", offload_row("ordered", 10, 0, 10, 0))[0])
        # one copy of the round whose interrupt was not asked for (never reaped by idxd)
        self.assertTrue(self.check("dsa", offload_row("overlap", 10, 159, 0, 10)))

    def test_every_offloaded_chunk_seen_complete(self):
        self.assertIn("159 copies seen complete for 160 chunks offloaded",
                      self.check("dsa", offload_row("overlap", 10, 160, 0, 10, 159))[0])
        self.assertIn("169 copies seen complete for 170",
                      self.check("engine", offload_row("wait", 170, 0, 170, 0, 169))[0])
        self.assertIn("1 copies seen complete for 0",
                      self.check("engine", offload_row("cpu", 170, 0, 0, 0, 1))[0])
        self.assertIn("171 chunks in 10 rounds of 17",
                      self.check("dsa", offload_row("ordered", 10, 160, 0, 10,
                                                    chunks=171))[0])
        self.assertTrue(self.check("dsa", ("bench-offload", {"op": "wait", "size": "1"})))

    def test_the_device_completed_the_copies_seen(self):
        from studies import offload
        rows = [offload_row("wait", 170, 170, 0, 170), offload_row("overlap", 10, 160, 0, 10)]
        self.assertEqual(offload.device_counts("dsa", rows,
                                               {"dmalab-dsa": {"descriptors": 330}}), [])
        self.assertEqual(offload.device_counts("dsa", rows,
                                               {"dmalab-dsa": {"descriptors": 331}}),
                         ["dmalab-dsa completed 331 descriptors, the exerciser saw 330 "
                          "copies complete"])
        self.assertTrue(offload.device_counts("dsa", rows, {}))
        # dmalab-ioat: its driver's own descriptors on top
        self.assertEqual(offload.device_counts("engine", rows,
                                               {"dmalab-ioat": {"descriptors": 335}}), [])
        self.assertTrue(offload.device_counts("engine", rows,
                                              {"dmalab-ioat": {"descriptors": 329}}))
        self.assertEqual(offload.device_counts("raid-cpu", [], {}), [])

    def test_dsa_has_the_study_s_engine_profile(self):
        from studies import offload
        from studies.iommu_flush import COPY_ENGINE
        self.assertEqual(COPY_ENGINE, "latency-ns=2000,bandwidth=4000000000")
        self.assertEqual(offload.dsa_profile(COPY_ENGINE),
                         "latency-ns=2000,bandwidth=8000000000")
        configs = dict(measure.STUDIES["offload"].configs())
        self.assertIn("dmalab-dsa,latency-ns=2000,bandwidth=8000000000", configs["dsa"])

    def test_waits_that_slept_are_said_so_and_ordered_by_busy_time(self):
        from studies import offload
        runs = {"engine": [[offload_row("wait", 170, 0, 170, 0)]],
                "dsa": [[offload_row("wait", 170, 170, 0, 170),
                         offload_row("ordered", 10, 160, 0, 10)]]}
        lines = offload.explain(runs, {}, ["engine", "dsa"], 0)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("dsa: wait and ordered slept"))
        self.assertEqual(offload.explain({"engine": runs["engine"]}, {}, ["engine"], 0), [])
        sleeping = {"dsa": ("4096",)}
        lines, wrong = orders.offload(runs, ["engine", "dsa"], [], sleeping)
        self.assertEqual(wrong, [])
        self.assertEqual(len(lines), 3)     # dsa's wait and ordered; engine polls its wait
        self.assertIn("dsa: wait, overlap and ordered at 4096 bytes only", lines[0])
        runs["dsa"][0][0][1]["busy_ns"] = "2990"
        _, wrong = orders.offload(runs, ["engine", "dsa"], [], sleeping)
        self.assertEqual(len(wrong), 1)
        self.assertIn("dsa wait size=4096: busy 2990 ns < elapsed 3000", wrong[0])
        # at the sizes where the CPU's work per copy outlasts the engine's, no order
        lines, wrong = orders.offload(runs, ["engine", "dsa"], [], {"dsa": ("65536",)})
        self.assertEqual((len(lines), wrong), (1, ["--expect-order: no overlap figures"]))
        self.assertEqual(offload.DSA_IDLE_SIZES, ("65536",))


class IommuFlushScalableTests(unittest.TestCase):
    """iommu-flush's vtd-sm-lazy and vtd-sm-strict: a figure under their labels is of
    scalable mode, which their boots must show (as each NAME-sm scenario's do)."""

    ECAP = "DMAR: dmar0: reg_base_addr fed90000 ver 1:0 cap 112078c222f0602 ecap %s"

    def reasons(self, label, ecap, pc_inv_global):
        """What the judge says of a boot of `label` whose unit printed ECAP `ecap` and
        counted `pc_inv_global` PASID-cache invalidations, on its lines and dmalab-vtd's
        counters."""
        from harness import judge
        configs = dict(measure.STUDIES["iommu-flush"].configs())
        args = runner.make_parser().parse_args(configs[label] + [
            "--qemu", "q", "--kernel", "k", "--initrd", "i"])
        _, expect = runner.judging(args)
        boot = runner.Boot()
        policy = "strict" if label.endswith("strict") else "lazy"
        boot.lines = [self.ECAP % ecap,
                      "iommu: DMA domain TLB invalidation policy: %s mode" % policy,
                      "# dmalab_exercise: iommu: domain %s, dmar0, translated" % (
                          "DMA" if policy == "strict" else "DMA-FQ")]
        boot.device_stats = [{"path": "/machine/peripheral-anon/device[0]",
                              "type": "dmalab-vtd", "counter-names": ["pc-inv-global"],
                              "pc-inv-global": pc_inv_global}]
        return (judge.judge_lines(boot, expect.log.lines) +
                judge.judge_vtd(runner.Facts(), boot, expect.counters.vtd))

    def test_the_scalable_configurations_must_run_scalable_mode(self):
        import scenarios
        for label in ("vtd-sm-lazy", "vtd-sm-strict"):
            with self.subTest(label=label):
                # ECAP.SMTS offered and Linux's PASID-cache invalidation
                self.assertEqual(self.reasons(label, "1c80000002043", 1), [])
                # the unit in legacy mode: neither
                self.assertEqual(self.reasons(label, "f0205e", 0), [
                    "no serial line matches %r" % scenarios.SCALABLE_ECAP_LINE,
                    "dmalab-vtd: pc-inv-global is 0, expected >= 1 (pc-inv-global>=1)"])
        # the legacy configurations ask for neither
        for label in ("vtd-lazy", "vtd-strict"):
            self.assertEqual(self.reasons(label, "f0205e", 0), [], label)

if __name__ == "__main__":
    unittest.main(verbosity=2)
