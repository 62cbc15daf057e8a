#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The xdp study without a guest: /init's "DMALAB: xsk" lines as bench rows, what each row
must show (studies/xdp.py xsk_row), the order --expect-order checks, the counts and the
table beside the seed's figure, the study's configurations and words, init.sh's line
against what the study reads, and net_image.py's dmalab-xsk pieces (run by
runner-selftest through test_runner.py)."""

import contextlib
import io
import os
import re
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import net_image  # noqa: E402
import runner  # noqa: E402
from harness.judge import parse_init_bench, read_log  # noqa: E402
from imagelib import init_files, userspace  # noqa: E402
from measure_tables import count_lines, summarise  # noqa: E402
from studies import STUDIES, xdp  # noqa: E402
from studies.common import MODELLED_CPU  # noqa: E402

# A swiotlb boot's line for the socket (6.1, the quick run of 2026-12-06)
LINE = ("DMALAB: xsk receiver=xsk size=64 rate=5000 sent=500 received=500 lost=0 per_s=5009 "
        "wall_us=130122 busy_us=10460 idle_busy_us=2697 busy_ns_per_packet=20920 "
        "net_ns_per_packet=15526 util_ppm=104788 irqs=1000 sock_rx=500 sock_bytes=32000 "
        "sock_polls=497 sock_batches=496 sock_dropped=0 sock_invalid=0 sock_full=0 "
        "sock_empty=0 count_sent=200 count_received=200 to_dev_copies=200 "
        "to_dev_bytes=12800 from_dev_copies=200 from_dev_bytes=12800 syncs_cpu=200 "
        "syncs_dev=200 maps=200 unmaps=200 domain=none clock_us=1 cpus=1")
# ... and the stack's: no socket
STACK = {"receiver": "stack", "sock_rx": "-1", "sock_bytes": "-1", "sock_polls": "-1",
         "sock_batches": "-1", "sock_dropped": "-1", "sock_invalid": "-1",
         "sock_full": "-1", "sock_empty": "-1"}
# the counting pass's fields, none counted (dmalab.swiotlb_stats off)
UNCOUNTED = {k: "-1" for k in ("count_sent", "count_received", "to_dev_copies",
                               "to_dev_bytes", "from_dev_copies", "from_dev_bytes",
                               "syncs_cpu", "syncs_dev", "maps", "unmaps")}


def row(**kw):
    """A bench-xsk row like LINE's, with fields replaced."""
    f = parse_init_bench(LINE[len("DMALAB: "):])[1]
    f.update({k: str(v) for k, v in kw.items()})
    return f


class ParseTests(unittest.TestCase):
    def test_an_xsk_line_is_a_bench_row(self):
        tag, f = parse_init_bench(LINE[len("DMALAB: "):])
        self.assertEqual(tag, "bench-xsk")
        self.assertEqual((f["receiver"], f["size"], f["rate"], f["busy_ns_per_packet"]),
                         ("xsk", "64", "5000", "20920"))

    def test_the_sockets_and_probes_lines_are_not(self):
        for msg in ("xsk-socket xsk ready ifname=eth1 queue=0 xdp=drv bind=copy",
                    "xsk-socket end rc=0 rx=700 bytes=44800 polls=699",
                    "xsk-probe xsk_sync_cpu on dma_sync_single_for_cpu",
                    "error: the xsk workload failed", "xsk"):
            self.assertIsNone(parse_init_bench(msg), msg)

    def test_the_log_gives_the_rows(self):
        boot = runner.Boot()
        boot.lines = ["[    1.0] DMALAB: init kernel=6.1 scenario=boot uptime=1.0",
                      LINE.replace("receiver=xsk", "receiver=stack"), LINE,
                      "DMALAB: xsk-socket end rc=0 rx=700", "DMALAB: done"]
        boot.stamps = [0.0] * len(boot.lines)
        facts = read_log(boot, [])
        self.assertEqual([(t, f["receiver"]) for t, f in facts.bench],
                         [("bench-xsk", "stack"), ("bench-xsk", "xsk")])


class RowTests(unittest.TestCase):
    def test_good_rows_pass(self):
        self.assertEqual(xdp.xsk_row("swiotlb", row(), True), [])
        self.assertEqual(xdp.xsk_row("swiotlb", row(**STACK), True), [])
        self.assertEqual(xdp.xsk_row("no-bounce", row(to_dev_bytes=0, from_dev_bytes=0),
                                     True), [])

    def test_packets_accounted(self):
        self.assertIn("501 of 500 packets received",
                      xdp.xsk_row("swiotlb", row(received=501, sock_rx=501), True)[0])
        self.assertIn("490 of 500 packets received, 0 counted lost",
                      xdp.xsk_row("swiotlb", row(received=490, sock_rx=490), True)[0])
        # lost where the NICs counted them
        self.assertEqual(xdp.xsk_row("swiotlb", row(received=490, sock_rx=490, lost=10),
                                     True), [])
        self.assertIn("pktgen sent nothing", xdp.xsk_row("swiotlb", row(sent=0), True)[0])

    def test_the_socket_takes_what_the_nic_received(self):
        bad = xdp.xsk_row("swiotlb", row(sock_rx=498), True)
        self.assertEqual(bad, ["bench-xsk receiver=xsk size=64 rate=5000: the socket took "
                               "498 frames and dropped 0 of the 500 the NIC received"])
        # what the socket counted as dropped (ring full, fill ring empty...) is accounted
        self.assertEqual(xdp.xsk_row("swiotlb", row(sock_rx=498, sock_full=1, sock_empty=1),
                                     True), [])
        self.assertIn("no counts from the socket",
                      xdp.xsk_row("swiotlb", row(sock_rx=-1), True)[0])
        self.assertIn("unknown receiver",
                      xdp.xsk_row("swiotlb", row(receiver="xdp-drop"), True)[0])

    def test_bounced_or_not(self):
        self.assertEqual(xdp.xsk_row("no-bounce", row(), True),
                         ["bench-xsk receiver=xsk size=64 rate=5000: 25600 bytes bounced "
                          "without swiotlb=force"])
        self.assertIn("nothing bounced under swiotlb=force",
                      xdp.xsk_row("swiotlb", row(to_dev_bytes=0, from_dev_bytes=0), True)[0])
        self.assertIn("swiotlb's copies were not counted",
                      xdp.xsk_row("swiotlb", row(**UNCOUNTED), True)[0])

    def test_domain_clock_and_missing_fields(self):
        self.assertIn("IOMMU domain is DMA, not none",
                      xdp.xsk_row("swiotlb", row(domain="DMA"), True)[0])
        self.assertIn("units of 10000 us", xdp.xsk_row("swiotlb", row(clock_us=10000),
                                                       True)[0])
        f = row()
        del f["sock_full"]
        self.assertIn("no sent=", xdp.xsk_row("swiotlb", f, True)[0])

    def test_the_bound(self):
        # (1 CPU + 1) us of the clock over 500 packets, and 1 ns
        self.assertAlmostEqual(xdp.xsk_bound(row()), 2000 / 500 + 1)
        self.assertIsNone(xdp.xsk_bound(row(sent=0)))


def boots(**per_label):
    """runs: {label: [[(tag, row)]]}, one boot per value: the socket's busy ns per packet,
    a stack row beside it at 10000."""
    return {label.replace("_", "-"): [[("bench-xsk", row(busy_ns_per_packet=v)),
                                       ("bench-xsk", row(busy_ns_per_packet=10000, **STACK))]
                                      for v in values]
            for label, values in per_label.items()}


class OrderTests(unittest.TestCase):
    LABELS = ["no-bounce", "swiotlb"]

    def expect(self, runs):
        return xdp.expect_bounce_above(runs, self.LABELS, xdp.STUDY.tables)

    def test_bounced_above_passes(self):
        lines, failures = self.expect(boots(no_bounce=[18646, 18650], swiotlb=[20920]))
        self.assertEqual(failures, [])
        self.assertEqual(lines[1], "  bench-xsk receiver=xsk size=64 rate=5000 "
                         "busy_ns_per_packet: swiotlb above no-bounce by 2270 (bounds 5 "
                         "and 5)")

    def test_within_the_resolution_fails(self):
        # bounds of 5 ns each: 9 ns apart is not beyond them, and below is not above
        for hi in (18655, 18000):
            _, failures = self.expect(boots(no_bounce=[18646], swiotlb=[hi]))
            self.assertEqual(len(failures), 1, hi)
            self.assertIn("not beyond the figures' resolution", failures[0])

    def test_only_the_socket_is_ordered(self):
        # the stack's rows (10000 in both) are not compared
        runs = boots(no_bounce=[18646], swiotlb=[20920])
        runs["swiotlb"][0][1][1]["busy_ns_per_packet"] = "9000"
        self.assertEqual(self.expect(runs)[1], [])

    def test_missing_figures_fail(self):
        _, failures = self.expect({"no-bounce": boots(x=[1])["x"], "swiotlb": [[]]})
        self.assertIn("no figures from swiotlb", failures[0])
        _, failures = xdp.expect_bounce_above({}, ["no-bounce"], xdp.STUDY.tables)
        self.assertIn("no swiotlb and no-bounce", failures[0])
        _, failures = self.expect({"no-bounce": [[]], "swiotlb": [[]]})
        self.assertIn("no figures from swiotlb or no-bounce", failures[0])


class TableTests(unittest.TestCase):
    LABELS = ["no-bounce", "swiotlb"]

    def summaries(self):
        t = xdp.STUDY.tables[0]
        runs = {"no-bounce": [[("bench-xsk", row(busy_ns_per_packet=12904, **STACK)),
                               ("bench-xsk", row(busy_ns_per_packet=18646))]],
                "swiotlb": [[("bench-xsk", row(busy_ns_per_packet=15430, **STACK)),
                             ("bench-xsk", row(busy_ns_per_packet=20920))]]}
        return {label: summarise(runs[label], t) for label in self.LABELS}, runs

    def test_beside_the_seed(self):
        s, _ = self.summaries()
        lines, rows = xdp.STUDY.tables[0].derived(s, self.LABELS)
        self.assertIn("lost about 9% of its throughput", lines[0])
        self.assertEqual(lines[1], "size=64 rate=5000/s:")
        self.assertEqual(lines[2].split()[-5:], ["seed", "same", "metric?", "same",
                                                 "workload?"])
        base = lines[3].split()
        self.assertEqual(base[:7], ["no-bounce", "12904", "18646", "1.44", "1.00", "(+0%)",
                                    "-9%"])
        self.assertTrue(lines[3].endswith("no; partly (below)"))
        self.assertEqual(lines[4].split()[:6], ["swiotlb", "15430", "20920", "1.36", "1.12",
                                                "(+12%)"])
        self.assertIn("same metric? same workload? metric: no,", lines[5])
        self.assertIn("workload: partly", lines[5])
        self.assertIn("64-byte frames at 5000/s", lines[5])
        got = {(r["config"], r["metric"]): r["value"] for r in rows}
        self.assertEqual(got, {("no-bounce", "busy_ns_per_packet:ratio_stack"): 1.445,
                               ("no-bounce", "busy_ns_per_packet:ratio_no_bounce"): 1.0,
                               ("swiotlb", "busy_ns_per_packet:ratio_stack"): 1.3558,
                               ("swiotlb", "busy_ns_per_packet:ratio_no_bounce"): 1.122})

    def test_nothing_to_put_beside_it(self):
        self.assertEqual(xdp.seed_lines({"no-bounce": {}, "swiotlb": {}}, self.LABELS,
                                        xdp.STUDY.tables[0]), ([], []))

    def test_the_counts_per_packet(self):
        _, runs = self.summaries()
        runs["no-bounce"] = [[(t, dict(f, to_dev_bytes=0, from_dev_bytes=0, to_dev_copies=0,
                                       from_dev_copies=0)) for t, f in runs["no-bounce"][0]]]
        # each column its own figure: 1, 1.5, 2 and 2.5 calls per packet
        runs["swiotlb"][0][1][1].update(syncs_dev="300", maps="400", unmaps="500")
        lines, rows = count_lines(runs, self.LABELS, xdp.STUDY.counts)
        second = next(i for i, x in enumerate(lines) if "in the counting pass" in x)
        irqs = {tuple(x.split()[:4]): x.split()[4:] for x in lines[1:second]}
        bounces = {tuple(x.split()[:4]): x.split()[4:] for x in lines[second:]}
        # interrupts per packet sent in the window; the counting pass's per its 200
        self.assertEqual(irqs[("xsk", "64", "5000", "swiotlb")], ["2.000"])
        self.assertEqual(irqs[("stack", "64", "5000", "no-bounce")], ["2.000"])
        self.assertEqual(bounces[("xsk", "64", "5000", "swiotlb")],
                         ["128.000", "2.000", "1.000", "1.500", "2.000", "2.500"])
        self.assertEqual(bounces[("xsk", "64", "5000", "no-bounce")][:2], ["0.000", "0.000"])
        self.assertIn({"receiver": "xsk", "size": "64", "rate": "5000", "tag": "bench-xsk",
                       "config": "swiotlb", "metric": "count:syncs for device",
                       "value": 1.5}, rows)

    def test_uncounted_passes_print_nothing(self):
        runs = {"swiotlb": [[("bench-xsk", row(**UNCOUNTED))]]}
        lines, _ = count_lines(runs, ["swiotlb"], xdp.STUDY.counts[1:])
        self.assertEqual(lines[1:], [])


class StudyTests(unittest.TestCase):
    def args(self, *argv):
        return measure.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--study", "xdp"] + list(argv))

    def test_registered(self):
        self.assertIs(STUDIES["xdp"], xdp.STUDY)
        self.assertEqual(xdp.STUDY.cpu, MODELLED_CPU)
        self.assertEqual((xdp.STUDY.smp, xdp.STUDY.icount), (1, 0))
        self.assertEqual(xdp.STUDY.tables[0].keys, ("receiver", "size", "rate"))

    def test_the_spread_is_two_seeds(self):
        self.assertEqual(measure.spread(self.args(), xdp.STUDY),
                         [("ref", 1, "a", 1000), ("seed=2", 2, "a", 1000)])
        self.assertEqual(measure.spread(self.args("--quick"), xdp.STUDY),
                         [("ref", 1, "a", 1000)])

    def test_configurations(self):
        configs = dict(measure.settle(self.args("--quick"), xdp.STUDY))
        self.assertEqual(list(configs), ["no-bounce", "swiotlb"])
        for label, argv in configs.items():
            words = " ".join(a for i, a in enumerate(argv) if argv[i - 1] == "--append")
            self.assertIn("intel_iommu=off dmalab.swiotlb_stats=1", words)
            self.assertEqual("swiotlb=force" in words, label == "swiotlb")
            self.assertEqual(argv[argv.index("--scenario") + 1], "boot")
            self.assertIn("--expect-unbound", argv)
            self.assertEqual([a for a in argv if a.startswith("igb,")],
                             ["igb,netdev=xsk-igb-tx,romfile=,addr=0x8",
                              "igb,netdev=xsk-igb-rx,romfile=,addr=0xa"])
            self.assertFalse([a for a in argv if a.startswith("dmalab-")], "no DMA engine")
            lines = [argv[i + 1] for i, a in enumerate(argv) if a == "--expect-line"]
            self.assertEqual(lines, [r"^software IO TLB: area num"] if label == "swiotlb"
                             else [])

    def test_quick_words_come_last(self):
        args = self.args("--quick")
        argv = dict(measure.settle(args, xdp.STUDY))["swiotlb"]
        text = " ".join(argv + measure.clock_args(args, xdp.STUDY, ("ref", 1, "a", 1000),
                                                  False))
        # init.sh takes the last of each word
        self.assertLess(text.index("dmalab.xsk=%s" % xdp.RATES), text.index("dmalab.xsk=5000"))
        self.assertLess(text.index("dmalab.xsk_count=2000"), text.index("dmalab.xsk_count=500"))
        self.assertIn("dmalab_exercise.mode=clock", text)
        self.assertIn("shift=0,sleep=off", text)

    def test_expect_order_is_offered(self):
        args = self.args("--quick", "--expect-order")
        self.assertIsNotNone(measure.settle(args, xdp.STUDY))

    def test_dmalab_measure_boots_the_net_image(self):
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
        import dmalab
        with unittest.mock.patch.object(dmalab, "build") as build, \
                unittest.mock.patch.object(dmalab.subprocess, "run") as run:
            dmalab.measure(["xdp", "--quick"])
        self.assertTrue(build.call_args[0][0][-1].endswith("initramfs-net.cpio.gz"))
        cmd = [str(c) for c in run.call_args[0][0]]
        self.assertEqual(cmd[cmd.index("--study") + 1], "xdp")
        self.assertTrue(cmd[cmd.index("--initrd") + 1].endswith("initramfs-net.cpio.gz"))


def init_sh():
    return init_files.init_text()


class InitTests(unittest.TestCase):
    def test_the_line_has_every_field_the_study_reads(self):
        m = re.search(r'^\s*say "xsk (receiver=.*)"$', init_sh(), re.M)
        self.assertTrue(m, "init.sh says an xsk line")
        keys = re.findall(r'(?:^|\s)(\w+)=', m.group(1))
        t = xdp.STUDY.tables[0]
        wanted = set(t.keys) | {t.primary} | set(t.others) | {
            "sent", "received", "lost", "sock_rx", "sock_dropped", "sock_invalid",
            "sock_full", "sock_empty", "to_dev_bytes", "from_dev_bytes", "to_dev_copies",
            "from_dev_copies", "clock_us", "cpus", "domain"}
        for c in xdp.STUDY.counts:
            wanted.add(c.ops)
            wanted |= {field for _, field in c.columns if isinstance(field, str)}
        self.assertEqual(sorted(wanted - set(keys)), [])
        self.assertEqual(len(keys), len(set(keys)))

    def test_the_workload_reads_its_words(self):
        text = init_sh()
        for word in ("dmalab.xsk=", "dmalab.xsk_sizes=", "dmalab.xsk_count="):
            self.assertIn("\t%s" % word, text)
        self.assertIn('nic_xsk || say "error: the xsk workload failed"', text)


class NetImageTests(unittest.TestCase):
    def test_dmalab_xsk_is_built_once_per_input(self):
        cmds = []

        def run(cmd, **kw):
            cmds.append(cmd)
            if cmd[:2] == ["gcc", "-dumpfullversion"]:
                return "12.2.0\n"
            with open(cmd[cmd.index("-o") + 1], "wb") as f:
                f.write(b"elf")
            return ""
        versions = {"libxdp-dev": "1.3.1-1", "libbpf-dev": "1:1.1.2", "libxdp1": "1.3.1-1",
                    "libbpf1": "1:1.1.2"}
        with tempfile.TemporaryDirectory() as tmp, \
                unittest.mock.patch.object(net_image, "run", run), \
                contextlib.redirect_stderr(io.StringIO()):
            exe = net_image.build_xsk("/root-x", tmp, versions)
            self.assertEqual(exe, os.path.join(tmp, "net-helpers", "dmalab-xsk"))
            gcc = [c for c in cmds if "-o" in c]
            self.assertEqual(len(gcc), 1)
            self.assertIn("/root-x/usr/include", gcc[0])
            self.assertEqual(gcc[0][-3:], ["-Wl,-rpath-link=/root-x/usr/lib/x86_64-linux-gnu:"
                                           "/root-x/lib/x86_64-linux-gnu", "-lxdp", "-lbpf"])
            self.assertIn("-L/root-x/usr/lib/x86_64-linux-gnu", gcc[0])
            self.assertNotIn("-static", gcc[0])
            net_image.build_xsk("/root-x", tmp, versions)
            self.assertEqual(len([c for c in cmds if "-o" in c]), 1, "nothing changed")
            versions["libxdp-dev"] = "1.4.0-1"
            net_image.build_xsk("/root-x", tmp, versions)
            self.assertEqual(len([c for c in cmds if "-o" in c]), 2, "a new libxdp")

    def test_the_archive_has_the_program_its_libraries_bpf_files_and_init(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "root")
            files = {"usr/lib/x86_64-linux-gnu/libxdp.so.1.3.0": b"xdp",
                     "lib/x86_64-linux-gnu/libc.so.6": b"libc",
                     "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2": b"ld"}
            files.update({"%s/%s" % (net_image.BPF_DIR, n): n.encode()
                          for n in net_image.BPF_OBJECTS})
            for path, data in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "wb") as f:
                    f.write(data)
            os.symlink("libxdp.so.1.3.0",
                       os.path.join(root, "usr/lib/x86_64-linux-gnu/libxdp.so.1"))
            xsk = os.path.join(tmp, "dmalab-xsk")
            with open(xsk, "wb") as f:
                f.write(b"xsk-elf")
            base = os.path.join(tmp, "base.cpio.gz")
            with open(base, "wb") as f:
                f.write(b"base")

            def elf_info(path):
                if path == xsk:
                    return ["libxdp.so.1", "libc.so.6"], "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
                return [], None
            with unittest.mock.patch.object(userspace, "elf_info", elf_info), \
                    unittest.mock.patch.object(net_image, "PROGRAMS", {}):
                added = dict(net_image.write_initrd(os.path.join(tmp, "out.cpio.gz"), base,
                                                    root, xsk))
        self.assertEqual(added["usr/bin/dmalab-xsk"], len(b"xsk-elf"))
        self.assertEqual(added["usr/lib/x86_64-linux-gnu/libxdp.so.1"], "-> libxdp.so.1.3.0")
        self.assertIn("usr/lib/x86_64-linux-gnu/libxdp.so.1.3.0", added)
        self.assertIn("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", added)
        for n in ("xsk_def_xdp_prog.o", "xsk_def_xdp_prog_5.3.o", "xdp-dispatcher.o"):
            self.assertEqual(added["usr/lib/x86_64-linux-gnu/bpf/" + n], len(n))
        for path, src in init_files.init_files():
            self.assertEqual(added[path], os.path.getsize(src))
        self.assertIn("lib/dmalab/xsk.sh", added)

    def test_the_packages(self):
        self.assertIn("libxdp1", net_image.PACKAGES)
        self.assertEqual(net_image.BUILD_PACKAGES, ("libxdp-dev", "libbpf-dev"))
        self.assertTrue(os.path.isfile(net_image.XSK_SRC))
        # not among image.py's static helpers (helpers/*.c), which it builds with -static
        self.assertNotEqual(os.path.dirname(net_image.XSK_SRC), os.path.join(HERE, "helpers"))


if __name__ == "__main__":
    unittest.main()
