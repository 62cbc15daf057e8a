#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The xdp study's pieces without a guest: /init's "DMALAB: xsk" lines as bench rows,
init.sh's words, and net_image.py's dmalab-xsk (its build and what the archive carries),
run by runner-selftest through test_runner.py."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import net_image  # noqa: E402
import runner  # noqa: E402
from harness.judge import parse_init_bench, read_log  # noqa: E402
from imagelib import userspace  # noqa: E402

# A swiotlb boot's line for the socket (6.1, the quick run of 2026-12-06)
LINE = ("DMALAB: xsk receiver=xsk size=64 rate=5000 sent=500 received=500 lost=0 per_s=5009 "
        "wall_us=130122 busy_us=10460 idle_busy_us=2697 busy_ns_per_packet=20920 "
        "net_ns_per_packet=15526 util_ppm=104788 irqs=1000 sock_rx=500 sock_bytes=32000 "
        "sock_polls=497 sock_batches=496 sock_dropped=0 sock_invalid=0 sock_full=0 "
        "sock_empty=0 count_sent=200 count_received=200 to_dev_copies=200 "
        "to_dev_bytes=12800 from_dev_copies=200 from_dev_bytes=12800 syncs_cpu=200 "
        "syncs_dev=200 maps=200 unmaps=200 domain=none clock_us=1 cpus=1")


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


def init_sh():
    with open(os.path.join(HERE, "init.sh")) as f:
        return f.read()


class InitTests(unittest.TestCase):
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
        self.assertEqual(added["init"], os.path.getsize(net_image.INIT))

    def test_the_packages(self):
        self.assertIn("libxdp1", net_image.PACKAGES)
        self.assertEqual(net_image.BUILD_PACKAGES, ("libxdp-dev", "libbpf-dev"))
        self.assertTrue(os.path.isfile(net_image.XSK_SRC))
        # not among image.py's static helpers (helpers/*.c), which it builds with -static
        self.assertNotEqual(os.path.dirname(net_image.XSK_SRC), os.path.join(HERE, "helpers"))


if __name__ == "__main__":
    unittest.main()
