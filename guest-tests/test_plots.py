#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""plots.py on results shaped as measure.py writes them: every study renders a
PNG and an SVG that name the clock (word for word) and mark the published figure.  Exits 77
(meson's skip) when matplotlib is not installed; ./dmalab test installs it, and fails on
that skip."""

import importlib.util
import os
import re
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402


def row(tag, config, metric, value, **keys):
    return dict(keys, tag=tag, config=config, metric=metric, value=value)


def results(study):
    rows = []
    if study in ("dma-api", "swiotlb"):
        configs = ["no-bounce", "swiotlb"] if study == "swiotlb" else ["no-iommu", "vtd-strict"]
        for i, cfg in enumerate(configs):
            for op in ("empty", "map", "unmap", "sync", "memcpy"):
                for size in ("4096", "65536"):
                    v = 100 * (i + 1) * (2 if size == "65536" else 1)
                    rows += [row("bench-map", cfg, m, v, op=op, size=size)
                             for m in ("net_mean_ns", "net_mean_ns:min", "net_mean_ns:max",
                                       "mean_ns")]
        if study == "swiotlb":
            for i, cfg in enumerate(configs):
                for op in ("fill", "rx"):
                    rows.append(row("bench-xdp", cfg, "net_mean_ns", 50 * (i + 1), op=op,
                                    size="1792"))
                rows.append(row("bench-nic", cfg, "busy_ns_per_packet", 20000 + i * 3000,
                                size="64", rate="1000"))
                rows.append(row("bench-nic-bounce", cfg, "bytes_per_packet", 3104 * i,
                                size="64"))
                for op in ("cpu", "wait"):
                    rows.append(row("bench-offload", cfg + "-engine", "busy_ns", 4000 + i,
                                    op=op, size="4096"))
    elif study == "iommu-flush":
        for i, cfg in enumerate(["no-iommu", "vtd-lazy", "vtd-strict"]):
            for size in ("4096", "65536"):
                rows.append(row("bench-copy", cfg, "busy_ns_per_copy:ratio", 1 + i, size=size,
                                rate="1000"))
            for nic in ("e1000e", "igb"):
                for size in ("64", "1500"):
                    rows.append(row("bench-nic", cfg, "busy_ns_per_packet:ratio", 1 + i / 10,
                                    nic=nic, size=size, rate="1000"))
    elif study == "xdp":
        for i, cfg in enumerate(["no-bounce", "swiotlb"]):
            for recv in ("stack", "xsk"):
                v = 12000 + 6000 * (recv == "xsk") + 2500 * i
                rows += [row("bench-xsk", cfg, m, x, receiver=recv, size="64", rate="5000")
                         for m, x in (("busy_ns_per_packet", v),
                                      ("busy_ns_per_packet:min", v - 5),
                                      ("busy_ns_per_packet:max", v + 5),
                                      ("count:bytes bounced", 128.0 * i))]
    elif study == "udp":
        for i, cfg in enumerate(["no-iommu", "vtd-lazy", "vtd-strict"]):
            for nic in ("e1000e", "igb"):
                for rate in ("100", "400"):
                    v = 100000 * (1 + i / 2)
                    rows += [row("bench-iperf", cfg, m, x, nic=nic, size="16384", rate=rate)
                             for m, x in (("busy_ns_per_datagram", v),
                                          ("busy_ns_per_datagram:min", v - 10),
                                          ("busy_ns_per_datagram:max", v + 10),
                                          ("busy_ns_per_datagram:ratio", 1 + i / 2))]
                rows.append(row("bench-iperf", cfg, "per_s", 60000 - 5000 * i, nic=nic,
                                size="32", rate="0"))
    else:
        for i, cfg in enumerate(["engine", "slow-engine"]):
            for size in ("256", "4096", "65536"):
                rows.append(row("bench-offload", cfg, "busy_ns", int(size), op="cpu",
                                size=size))
                for op in ("wait", "overlap", "ordered"):
                    rows.append(row("bench-offload", cfg, "busy_ns:per_cpu",
                                    (i + 1) * 4096 / int(size), op=op, size=size))
                    rows.append(row("bench-offload", cfg, "busy_ns", (i + 1) * 4096, op=op,
                                    size=size))
                    rows.append(row("bench-offload", cfg, "elapsed_ns", (i + 2) * 4096, op=op,
                                    size=size))
    clock = {"dma-api": "icount-0", "swiotlb": "icount-0", "iommu-flush": "icount-5",
             "offload": "icount-0", "udp": "icount-0", "xdp": "icount-0"}[study]
    return {"study": study, "clock": clock}, rows


# What each study's plot must say its clock is, word for word (with the guest kernel the
# results name): a plot of modelled figures labelled with the host's clock, or the
# wrong shift, would mislead.
# And the CPU profile whose nanoseconds they are ("model" unless the results name one).
ONE_NS = ("modelled time (-icount shift=0: 1 ns per guest instruction); Linux 6.1.0-57-amd64; "
          "CPU profile model")
CLOCKS = {"dma-api": ONE_NS, "swiotlb": ONE_NS, "offload": ONE_NS, "udp": ONE_NS,
          "xdp": ONE_NS,
          "iommu-flush": "modelled time (-icount shift=5: 32 ns per guest instruction); "
                         "Linux 6.1.0-57-amd64; CPU profile model"}


def text_of(svg):
    """The SVG's texts (matplotlib keeps each one as a comment; a title wrapped to the
    figure is several), joined by spaces."""
    return " ".join(" ".join(c.split()) for c in re.findall(r"<!-- (.*?) -->", svg, re.S))


class PlotTests(unittest.TestCase):
    def render(self, meta, rows, tmp):
        paths = plots.render(meta, rows, os.path.join(tmp, meta["study"]))
        self.assertEqual([os.path.splitext(p)[1] for p in paths], [".png", ".svg"])
        with open(paths[0], "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(paths[1]) as f:
            # matplotlib writes text as glyph paths unless told otherwise, but keeps
            # each text as an SVG comment
            return f.read()

    def test_every_study(self):
        marks = {"iommu-flush": "2008 DMAR thread", "offload": "tcp_dma_copybreak",
                 "swiotlb": "3104 bytes bounced each", "dma-api": "ns per call",
                 "udp": "its 16 KiB UDP at 826 Mbit/s on hardware, strict: 2.27",
                 "xdp": "the seed's 9% is a throughput loss on hardware, another metric"}
        with tempfile.TemporaryDirectory() as tmp:
            for study in plots.PLOTS:
                meta, rows = results(study)
                meta["kernel_version"] = "6.1.0-57-amd64"
                svg = self.render(meta, rows, tmp)
                for needle in (marks[study], CLOCKS[study]):
                    self.assertIn(needle, text_of(svg), "%s: %r" % (study, needle))

    def test_a_named_cpu_profile_is_in_the_title(self):
        meta, rows = results("dma-api")
        meta["cpu_profile"] = {"name": "haswell-ep-2620v3", "ipc": 1.0}
        with tempfile.TemporaryDirectory() as tmp:
            svg = self.render(meta, rows, tmp)
        self.assertIn("CPU profile haswell-ep-2620v3", text_of(svg))

    def test_the_shift_is_the_results_own(self):
        meta, rows = results("iommu-flush")
        with tempfile.TemporaryDirectory() as tmp:
            svg = self.render(dict(meta, clock="icount-3"), rows, tmp)
        self.assertIn("modelled time (-icount shift=3: 8 ns per guest instruction)",
                      text_of(svg))

    def test_a_gzipd_results_file_plots(self):
        # docs/results keeps them as NAME.json.gz; the plots are named NAME.png, .svg
        import contextlib
        import gzip
        import io
        import json
        meta, rows = results("dma-api")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "dma-api-6.1.json.gz")
            with gzip.open(path, "wt") as f:
                json.dump(dict(meta, summary=rows), f)
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(plots.main([path]), 0)
            self.assertEqual(out.getvalue().split(),
                             [os.path.join(tmp, "dma-api-6.1" + e) for e in (".png", ".svg")])

    def test_unknown_study_is_an_error(self):
        with self.assertRaises(KeyError):
            plots.render({"study": "nothing", "clock": "host"}, [], "/nonexistent/x")


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("test_plots.py: SKIP: python3-matplotlib is not installed")
        sys.exit(77)
    unittest.main()
