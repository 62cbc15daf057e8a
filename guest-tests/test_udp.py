#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The udp study without a guest: /init's "DMALAB: iperf" lines as bench rows, what each
row must show (studies/udp.py udp_row), the order --expect-order checks and its tolerance,
the table beside the 2008 figures, the spread, and net_image.py's user-space pieces
(imagelib/userspace.py) and stamp (run by runner-selftest)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import net_image  # noqa: E402
import runner  # noqa: E402
from harness.judge import parse_init_bench, read_log  # noqa: E402
from imagelib import init_files, userspace  # noqa: E402
from imagelib.cpio import Cpio  # noqa: E402
from measure_tables import summarise  # noqa: E402
from studies import udp  # noqa: E402
from studies.common import MODELLED_CPU  # noqa: E402

LINE = ("DMALAB: iperf nic=e1000e size=16384 rate=200 window_us=502000 busy_us=77000 "
        "win_received=775 win_sent=775 per_s=1543 kbit_s=202300 util_ppm=153386 "
        "busy_ns_per_datagram=99354 sent=1526 sent_by_window_end=1150 received=1526 "
        "lost=0 iperf_sent=1525 iperf_lost=0 iperf_total=1525 domain=none "
        "domain_srv=none clock_us=1 cpus=1")


def row(**kw):
    """A bench-iperf row like LINE's, with fields replaced."""
    f = parse_init_bench(LINE[len("DMALAB: "):])[1]
    f.update({k: str(v) for k, v in kw.items()})
    return f


class ParseTests(unittest.TestCase):
    def test_an_iperf_line_is_a_bench_row(self):
        tag, f = parse_init_bench(LINE[len("DMALAB: "):])
        self.assertEqual(tag, "bench-iperf")
        self.assertEqual((f["nic"], f["size"], f["rate"], f["busy_ns_per_datagram"]),
                         ("e1000e", "16384", "200", "99354"))

    def test_other_init_lines_are_not(self):
        for msg in ("init kernel=6.1 scenario=memcpy uptime=1.2", "done",
                    "irq 3 PCI-MSI 49152-edge ioat-msix", "iperf", "iperf: error",
                    "error: the iperf workload failed", "iperfx nic=e1000e"):
            self.assertIsNone(parse_init_bench(msg), msg)

    def test_the_log_gives_the_rows(self):
        boot = runner.Boot()
        boot.lines = ["[    1.0] DMALAB: init kernel=6.1 scenario=memcpy uptime=1.0",
                      LINE, LINE.replace("rate=200", "rate=0"), "DMALAB: done"]
        boot.stamps = [0.0] * len(boot.lines)
        facts = read_log(boot, [])
        self.assertEqual([(t, f["rate"]) for t, f in facts.bench],
                         [("bench-iperf", "200"), ("bench-iperf", "0")])


class RowTests(unittest.TestCase):
    def test_a_good_row_passes(self):
        self.assertEqual(udp.udp_row("no-iommu", row(), True), [])
        self.assertEqual(udp.udp_row("vtd-lazy", row(domain="DMA-FQ", domain_srv="DMA-FQ"),
                                     True), [])

    def test_datagrams_accounted(self):
        self.assertIn("received, 1526 sent",
                      udp.udp_row("no-iommu", row(received=1527), True)[0])
        # 8 missing at the end, all sent after the window: still fine
        self.assertEqual(udp.udp_row("no-iommu", row(received=1518), True), [])
        # counted lost (by the stack or by iperf3) is fine too
        self.assertEqual(udp.udp_row("no-iommu", row(received=1000, lost=526,
                                                     sent_by_window_end=1526), True), [])
        self.assertEqual(udp.udp_row("no-iommu", row(received=1000, iperf_lost=526,
                                                     sent_by_window_end=1526), True), [])
        # more missing than were sent after the window
        bad = udp.udp_row("no-iommu", row(received=1000, sent_by_window_end=1500), True)
        self.assertIn("526 of 1526 datagrams neither received nor counted lost", bad[0])
        self.assertIn("iperf3 sent nothing", udp.udp_row("no-iommu", row(sent=0), True)[0])

    def test_the_offered_rate(self):
        self.assertEqual(udp.udp_row("no-iommu", row(kbit_s=208000), True), [])
        self.assertEqual(udp.udp_row("no-iommu", row(kbit_s=192000), True), [])
        bad = udp.udp_row("no-iommu", row(kbit_s=189000), True)
        self.assertIn("189.0 Mbit/s in the window, not the offered 200 (within 5%)", bad[0])
        self.assertTrue(udp.udp_row("no-iommu", row(kbit_s=211000), True))
        # at saturation (rate 0) there is none to reach
        self.assertEqual(udp.udp_row("no-iommu", row(rate=0, kbit_s=15000), True), [])

    def test_the_domain_of_each_configuration(self):
        for label, want in (("no-iommu", "none"), ("vtd-pt", "identity"),
                            ("intel-lazy", "DMA-FQ"), ("vtd-strict,wait-ns=0", "DMA")):
            self.assertEqual(udp.udp_row(label, row(domain=want, domain_srv=want), True), [])
        bad = udp.udp_row("vtd-strict", row(domain="DMA", domain_srv="DMA-FQ"), True)
        self.assertEqual(len(bad), 1)
        self.assertIn("domain_srv DMA-FQ, expected DMA", bad[0])

    def test_the_clock_and_missing_fields(self):
        self.assertIn("units of 10000 us", udp.udp_row("no-iommu", row(clock_us=10000),
                                                       True)[0])
        f = row()
        del f["sent_by_window_end"]
        self.assertIn("no sent=", udp.udp_row("no-iommu", f, True)[0])

    def test_the_bound(self):
        # 2 us over 775 datagrams, one datagram's share at each end, and 1 ns
        self.assertAlmostEqual(udp.udp_bound(row()), 2000 / 775 + 2 * 99354 / 775 + 1)
        self.assertIsNone(udp.udp_bound(row(win_received=0)))


def boots(**per_label):
    """runs: {label: [[(tag, row)]]}, one boot per value, e1000e 16 KiB at 200 Mbit/s."""
    return {label: [[("bench-iperf", row(busy_ns_per_datagram=v, win_received=1000))]
                    for v in values] for label, values in per_label.items()}


class OrderTests(unittest.TestCase):
    LABELS = ["no-iommu", "vtd-lazy", "vtd-strict"]

    def expect(self, runs):
        return udp.expect_not_below(runs, self.LABELS, udp.STUDY.tables)

    def test_in_order_passes(self):
        lines, failures = self.expect(boots(**{"no-iommu": [100000], "vtd-lazy": [140000],
                                               "vtd-strict": [170000]}))
        self.assertEqual(failures, [])
        self.assertIn("vtd-strict - vtd-lazy: +30000", lines[1])

    def test_equal_within_the_resolution_passes(self):
        # the bound of each figure: 2 + 2 * 100 + 1 = 203 ns; strict 300 below lazy
        lines, failures = self.expect(boots(**{"no-iommu": [100000], "vtd-lazy": [100300],
                                               "vtd-strict": [100000]}))
        self.assertEqual(failures, [])

    def test_below_beyond_the_resolution_fails(self):
        lines, failures = self.expect(boots(**{"no-iommu": [100000], "vtd-lazy": [140000],
                                               "vtd-strict": [139000, 150000]}))
        self.assertEqual(len(failures), 1)
        self.assertIn("vtd-strict is below vtd-lazy", failures[0])

    def test_igb_strict_below_lazy_passes_but_not_below_none(self):
        igb = lambda **per: {label: [[("bench-iperf", row(nic="igb", busy_ns_per_datagram=v,
                                                          win_received=1000))]
                                     for v in values] for label, values in per.items()}
        lines, failures = self.expect(igb(**{"no-iommu": [100000], "vtd-lazy": [140000],
                                             "vtd-strict": [130000]}))
        self.assertEqual(failures, [])
        self.assertTrue([l for l in lines if "vtd-strict - no-iommu: +30000" in l])
        _, failures = self.expect(igb(**{"no-iommu": [100000], "vtd-lazy": [140000],
                                         "vtd-strict": [99000]}))
        self.assertEqual(len(failures), 1)
        self.assertIn("vtd-strict is below no-iommu", failures[0])

    def test_a_missing_configuration_fails(self):
        _, failures = self.expect({"no-iommu": boots(**{"x": [1]})["x"], "vtd-lazy": [[]],
                                   "vtd-strict": boots(**{"x": [1]})["x"]})
        self.assertIn("no figures from vtd-lazy", failures[0])


class SeedTableTests(unittest.TestCase):
    LABELS = ["no-iommu", "vtd-lazy", "vtd-strict"]

    def summaries(self, fixed, sat):
        t = udp.STUDY.tables[0]
        runs = {}
        for label, (util, per_s) in zip(self.LABELS, zip(fixed, sat)):
            runs[label] = [[("bench-iperf", row(util_ppm=util)),
                            ("bench-iperf", row(rate=0, size=32, per_s=per_s,
                                                util_ppm=1000000))]]
        return {label: summarise(runs[label], t) for label in self.LABELS}

    def test_utilisation_and_datagrams_beside_2008(self):
        s = self.summaries((110000, 165000, 220000), (60000, 45000, 40000))
        lines, rows = udp.seed_lines(s, self.LABELS, udp.STUDY.tables[0])
        text = "\n".join(lines)
        self.assertIn("nic=e1000e size=16384 rate=200 Mbit/s offered:", text)
        strict = next(l for l in lines if l.strip().startswith("vtd-strict") and "%" in l)
        self.assertEqual(strict.split(), ["vtd-strict", "22.00", "202.3", "2.00", "25%",
                                          "2.27"])
        sat = next(l for l in lines if l.strip().startswith("vtd-strict") and
                   "40000" in l)
        self.assertEqual(sat.split()[-3:], ["0.67", "-", "-"])
        # lazy recovers (45000 - 40000) / (60000 - 40000) = 25% of what strict lost
        self.assertIn("vtd: lazy recovers 25% of the datagrams/s strict lost (2008: about "
                      "15-20%)", text)
        self.assertIn("workload: no, iperf3 not netperf, 200 Mbit/s not 826", text)
        self.assertIn("metric: partly, datagrams/s at saturation", text)
        share = [r for r in rows if r["metric"] == "per_s:recovered_share"]
        self.assertEqual([(r["config"], r["value"]) for r in share], [("vtd-lazy", 0.25)])

    def test_no_share_when_strict_lost_nothing(self):
        s = self.summaries((110000, 110000, 110000), (60000, 60000, 60000))
        lines, _ = udp.seed_lines(s, self.LABELS, udp.STUDY.tables[0])
        self.assertFalse([l for l in lines if "recovers" in l and "vtd:" in l])

    def test_the_study_derives_both_tables(self):
        # the table beside the 2008 figures, then iommu_flush.ratios_2008's (whatever its
        # wording: another study's)
        s = self.summaries((110000, 165000, 220000), (60000, 45000, 40000))
        t = udp.STUDY.tables[0]
        lines, rows = t.derived(s, self.LABELS)
        own, own_rows = udp.seed_lines(s, self.LABELS, t)
        self.assertEqual(lines[:len(own)], own)
        self.assertGreater(len(lines), len(own))
        self.assertGreater(len(rows), len(own_rows))
        # its "same workload?" column names iperf3, this study's workload, not pktgen
        tail = lines[len(own):]
        self.assertTrue([l for l in tail if l.rstrip().endswith("one vCPU")])
        self.assertFalse([l for l in tail if "pktgen" in l])


class StudyTests(unittest.TestCase):
    def args(self, *argv):
        return measure.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--study", "udp"] + list(argv))

    def test_the_spread_is_two_seeds(self):
        self.assertEqual(measure.spread(self.args(), udp.STUDY),
                         [("ref", 1, "a", 1000), ("seed=2", 2, "a", 1000)])
        self.assertEqual(len(measure.spread(self.args("--builds", "2"), udp.STUDY)), 3)

    def test_configurations_and_quick(self):
        args = self.args("--quick")
        configs = measure.settle(args, udp.STUDY)
        self.assertEqual([c[0] for c in configs], ["no-iommu", "vtd-lazy", "vtd-strict"])
        full = measure.settle(self.args(), udp.STUDY)
        self.assertEqual([c[0] for c in full], ["no-iommu", "vtd-pt", "vtd-lazy",
                                                "vtd-strict", "intel-lazy", "intel-strict"])
        argv = " ".join(full[0][1] + measure.clock_args(args, udp.STUDY,
                                                        ("ref", 1, "a", 1000), False))
        # the quick run's words come last: init.sh takes the last of each
        self.assertLess(argv.index("dmalab.iperf=%s" % udp.RUNS),
                        argv.index("dmalab.iperf=16384:200,32:0"))
        self.assertIn("dmalab_exercise.mode=clock", argv)
        self.assertIn("shift=0,sleep=off", argv)
        self.assertEqual(udp.STUDY.cpu, MODELLED_CPU)


class UserspaceTests(unittest.TestCase):
    def tree(self, tmp):
        """lib64/ld -> /lib/x86_64-linux-gnu/ld (absolute, as libc6 has it), a library
        with its SONAME link, an executable."""
        for d in ("lib/x86_64-linux-gnu", "lib64", "usr/bin"):
            os.makedirs(os.path.join(tmp, d))
        for path, mode in (("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0o755),
                           ("lib/x86_64-linux-gnu/libfoo.so.1.2", 0o644),
                           ("usr/bin/prog", 0o755)):
            with open(os.path.join(tmp, path), "wb") as f:
                f.write(path.encode())
            os.chmod(os.path.join(tmp, path), mode)
        os.symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                   os.path.join(tmp, "lib64/ld-linux-x86-64.so.2"))
        os.symlink("libfoo.so.1.2", os.path.join(tmp, "lib/x86_64-linux-gnu/libfoo.so.1"))

    def test_absolute_links_stay_inside_the_root(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.tree(tmp)
            self.assertEqual(userspace.inside(tmp, "/lib64/ld-linux-x86-64.so.2"),
                             os.path.join(tmp, "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"))
            self.assertEqual(userspace.inside(tmp, "lib/x86_64-linux-gnu/libfoo.so.1"),
                             os.path.join(tmp, "lib/x86_64-linux-gnu/libfoo.so.1.2"))

    def test_closure_and_archive(self):
        readelf = {"usr/bin/prog": (["libfoo.so.1", "libc.so.6"],
                                    "/lib64/ld-linux-x86-64.so.2"),
                   "lib/x86_64-linux-gnu/libfoo.so.1.2": (["ld-linux-x86-64.so.2"], None)}
        with tempfile.TemporaryDirectory() as tmp:
            self.tree(tmp)
            with open(os.path.join(tmp, "lib/x86_64-linux-gnu/libc.so.6"), "wb") as f:
                f.write(b"libc")

            def elf_info(path):
                return readelf.get(os.path.relpath(path, tmp), ([], None))
            with unittest.mock.patch.object(userspace, "elf_info", elf_info):
                libs, loaders = userspace.closure(tmp, ["usr/bin/prog"])
                self.assertEqual(libs, {"libfoo.so.1": "lib/x86_64-linux-gnu/libfoo.so.1",
                                        "libc.so.6": "lib/x86_64-linux-gnu/libc.so.6"})
                self.assertEqual(loaders, {"/lib64/ld-linux-x86-64.so.2"})
                cp = Cpio(io.BytesIO())
                added = dict(userspace.add_programs(cp, tmp, {"usr/bin/prog": "usr/bin/p2"}))
            self.assertEqual(added["lib64/ld-linux-x86-64.so.2"],
                             "-> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
            self.assertIn("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", added)
            self.assertEqual(added["lib/x86_64-linux-gnu/libfoo.so.1"], "-> libfoo.so.1.2")
            self.assertEqual(added["usr/bin/p2"], len(b"usr/bin/prog"))
            self.assertNotIn("usr/bin/prog", added)

    def test_a_library_no_package_has(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.tree(tmp)
            with unittest.mock.patch.object(userspace, "elf_info",
                                            lambda p: (["libnone.so.9"], None)):
                with self.assertRaisesRegex(userspace.ImageError, "no libnone.so.9"):
                    userspace.closure(tmp, ["usr/bin/prog"])

    def test_elf_info_reads_readelf(self):
        out = (" 0x0000000000000001 (NEEDED)             Shared library: [libiperf.so.0]\n"
               " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]\n"
               "      [Requesting program interpreter: /lib64/ld-linux-x86-64.so.2]\n")
        with unittest.mock.patch.object(userspace, "run", lambda cmd: out):
            self.assertEqual(userspace.elf_info("x"), (
                ["libiperf.so.0", "libc.so.6"], "/lib64/ld-linux-x86-64.so.2"))

    def test_versions_from_deb_names(self):
        self.assertEqual(userspace.deb_version("/x/libcap2_1%3a2.66-4+deb12u3+b1_amd64.deb"),
                         "1:2.66-4+deb12u3+b1")
        with self.assertRaises(userspace.ImageError):
            userspace.deb_version("iperf3.deb")


class NetImageTests(unittest.TestCase):
    def test_nothing_is_rebuilt_when_inputs_did_not_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "initramfs.cpio.gz")
            with open(base, "wb") as f:
                f.write(b"base")
            writes = []

            def add_programs(cp, root, exes):
                writes.append(root)
                return [("usr/bin/iperf3", 5), ("lib64/ld", "-> /lib/ld")]
            versions = {p: "1.0" for p in net_image.PACKAGES + net_image.BUILD_PACKAGES}
            out = os.path.join(tmp, "initramfs-net.cpio.gz")
            argv = ["--cache", tmp, "--base-initrd", base, "--out-initrd", out]
            # dmalab-xsk and libxdp's program files (test_xdp.py tests them)
            xsk = os.path.join(tmp, "dmalab-xsk")
            with open(xsk, "wb") as f:
                f.write(b"xsk")
            with unittest.mock.patch.object(net_image.userspace, "fetch",
                                            lambda cache, name, pkgs: (tmp, versions)), \
                    unittest.mock.patch.object(net_image.userspace, "add_programs",
                                               lambda cp, root, exes, built: add_programs(
                                                   cp, root, exes)), \
                    unittest.mock.patch.object(net_image, "build_xsk",
                                               lambda root, outdir, versions: xsk), \
                    unittest.mock.patch.object(net_image.userspace, "add_path"), \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(net_image.main(argv), 0)
                self.assertEqual(net_image.main(argv), 0)
                self.assertIn("up to date", err.getvalue())
                self.assertEqual(len(writes), 1)
                with open(os.path.join(tmp, "net-image-info.json")) as f:
                    info = json.load(f)
                self.assertEqual(info["packages"]["iperf3"], "1.0")
                # iperf3's 5 bytes, and init.sh as /init with the parts it sources
                init = sum(os.path.getsize(src) for _, src in init_files.init_files())
                self.assertEqual(info["added_bytes"], 5 + init)
                with open(out, "rb") as f:
                    self.assertTrue(f.read().startswith(b"base"))
                # a new version of a package builds again
                versions["iperf3"] = "1.1"
                self.assertEqual(net_image.main(argv), 0)
                self.assertEqual(len(writes), 2)


if __name__ == "__main__":
    unittest.main()
