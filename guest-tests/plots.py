#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Plots of dmalab measure's results, with Debian's matplotlib (python3-matplotlib).

  plots.py RESULTS.json [OUT_STEM]   render RESULTS.json (measure.py's) as
                                     OUT_STEM.png and OUT_STEM.svg (default:
                                     the JSON's path without .json)

measure.py calls render() after every study.  Each plot names its clock, its
units and its baseline, and marks the published figure the study relates to
where there is one.
"""

import json
import os
import sys

# The published figures the studies relate to (docs/measure.rst, docs/offload.rst).
# The 2008 Intel DMAR thread: 16 KiB UDP sends at equal throughput, CPU
# utilisation 25% strict, 18% deferred, 11% without the IOMMU.
DMAR_2008 = {"strict": 25 / 11, "deferred": 18 / 11}
# NET_DMA's net.ipv4.tcp_dma_copybreak default: the smallest read it offloaded.
NET_DMA_COPYBREAK = 4096


def _values(rows, metric, tag=None):
    """{(config, op, size): value} of one metric."""
    out = {}
    for r in rows:
        if r["metric"] == metric and (tag is None or r["tag"] == tag):
            out[(r["config"], r.get("op"), str(r.get("size")))] = r["value"]
    return out


OPS = ("memcpy", "map", "unmap", "sync")


def _op_order(key):
    """(op, size) sorted by size, then in the order a mapping lives."""
    op, size = key
    return int(size), OPS.index(op) if op in OPS else len(OPS), op


def _size_label(size):
    size = int(size)
    return "%d KiB" % (size // 1024) if size >= 1024 and size % 1024 == 0 else "%d B" % size


def _clock(meta):
    """The clock, and the guest kernel where the results name it."""
    ver = meta.get("kernel_version")
    return _clock_only(meta) + ("; Linux %s" % ver if ver else "")


def _clock_only(meta):
    clock = meta.get("clock", "")
    if clock == "host":
        return "host-driven guest time (TCG), not a hardware time"
    if clock == "icount-per-config":
        return "modelled time (-icount), each configuration's own"
    shift = clock.split("-")[-1]
    return "modelled time (-icount shift=%s: %d ns per guest instruction)" % (
        shift, 2 ** int(shift)) if shift.isdigit() else "modelled time (%s)" % clock


def _configs(rows):
    seen = []
    for r in rows:
        if r["config"] not in seen:
            seen.append(r["config"])
    return seen


def _bars(ax, groups, configs, value, err=None):
    """One group of bars per entry of groups, one bar per configuration."""
    width = 0.8 / max(len(configs), 1)
    for i, cfg in enumerate(configs):
        xs, ys, lo, hi = [], [], [], []
        for g, key in enumerate(groups):
            v = value(cfg, key)
            if v is None:
                continue
            xs.append(g + (i - (len(configs) - 1) / 2) * width)
            ys.append(v)
            if err:
                a, b = err(cfg, key)
                lo.append(max(v - a, 0))
                hi.append(max(b - v, 0))
        ax.bar(xs, ys, width, label=cfg, yerr=[lo, hi] if err and xs else None, capsize=2)


def plot_dma_api(plt, meta, rows):
    p50 = _values(rows, "p50_ns", "bench-map")
    lo, hi = _values(rows, "p50_ns:min", "bench-map"), _values(rows, "p50_ns:max", "bench-map")
    configs = _configs(rows)
    groups = sorted({(k[1], k[2]) for k in p50}, key=_op_order)
    fig, ax = plt.subplots(figsize=(10, 5))
    _bars(ax, groups, configs, lambda c, g: p50.get((c,) + g),
          lambda c, g: (lo.get((c,) + g, 0), hi.get((c,) + g, 0)))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["%s\n%s" % (op, _size_label(size)) for op, size in groups])
    ax.set_yscale("log")
    ax.set_ylabel("ns per call (median over boots; bars: range of the boots)")
    ax.set_title("%s: the DMA API per call\n%s" % (meta["study"], _clock(meta)))
    ax.legend(fontsize="small")
    return fig


def plot_iommu_flush(plt, meta, rows):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    configs = [c for c in _configs(rows) if c != "no-iommu"]
    rates = sorted({int(r["rate"]) for r in rows if r.get("rate") is not None} - {0})
    low = str(rates[0]) if rates else None
    for ax, tag, primary, what in (
            (axes[0], "bench-copy", "busy_ns_per_copy", "copy through dmalab-ioat"),
            (axes[1], "bench-nic", "busy_ns_per_packet", "pktgen packet, e1000e and igb")):
        # the lowest paced rate: every configuration at the same throughput
        ratio = {(r["config"], r.get("nic"), str(r.get("size"))): r["value"] for r in rows
                 if r["metric"] == primary + ":ratio" and r["tag"] == tag and
                 str(r.get("rate")) == low}
        groups = sorted({k[1:] for k in ratio}, key=lambda g: (str(g[0]), int(g[1])))
        _bars(ax, groups, configs, lambda c, g: ratio.get((c,) + g))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([(nic + "\n" if nic else "") + _size_label(s) for nic, s in groups])
        ax.axhline(1, color="black", linewidth=0.8)
        for name, v in DMAR_2008.items():
            ax.axhline(v, color="grey", linestyle="--", linewidth=0.8)
            ax.text(-0.45, v, "2008 DMAR thread (16 KiB UDP), %s: %.2f" % (name, v),
                    va="bottom", ha="left", fontsize="x-small", color="dimgrey",
                    bbox=dict(facecolor="white", edgecolor="none", pad=1))
        ax.set_ylabel("gross guest CPU per %s, / no IOMMU" % ("copy" if tag == "bench-copy"
                                                                else "packet"))
        ax.set_title("%s, %s/s" % (what, low), fontsize="medium")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1),
               fontsize="small")
    fig.suptitle("%s: gross service demand at equal offered rate, ratio to no IOMMU\n%s" % (
        meta["study"], _clock(meta)))
    return fig


def plot_swiotlb(plt, meta, rows):
    per = _values(rows, "p50_ns:per_memcpy", "bench-map")
    configs = _configs(rows)
    groups = sorted({(k[1], k[2]) for k in per}, key=_op_order)
    fig, ax = plt.subplots(figsize=(9, 5))
    _bars(ax, groups, configs, lambda c, g: per.get((c,) + g))
    for n in (1, 2):
        ax.axhline(n, color="grey", linestyle="--", linewidth=0.8)
        ax.text(-0.45, n, "%d cop%s of the buffer" % (n, "y" if n == 1 else "ies"),
                va="bottom", ha="left", fontsize="x-small", color="dimgrey",
                bbox=dict(facecolor="white", edgecolor="none", pad=1))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["%s\n%s" % (op, _size_label(size)) for op, size in groups])
    ax.set_ylabel("cost per call, in memcpy()s of the same size (p50 / memcpy's p50)")
    ax.set_title("%s: DMA API calls with and without bouncing\n%s" % (
        meta["study"], _clock(meta)))
    ax.legend(fontsize="small", loc="upper center")
    return fig


def plot_offload(plt, meta, rows):
    per = _values(rows, "p50_ns:per_cpu", "bench-offload")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    styles = {"sync": "-", "async": "--"}
    for i, cfg in enumerate(_configs(rows)):
        for op, style in styles.items():
            pts = sorted((int(k[2]), v) for k, v in per.items() if k[0] == cfg and k[1] == op)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                        color="C%d" % i, label="%s, %s" % (cfg, op))
    sizes = sorted({int(k[2]) for k in per})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([_size_label(x) for x in sizes])
    ax.axhline(1, color="black", linewidth=0.8)
    ax.text(sizes[0] if sizes else 1, 1, "break-even: the CPU's own copy", va="bottom",
            fontsize="x-small")
    ax.axvline(NET_DMA_COPYBREAK, color="grey", linestyle=":")
    ax.text(NET_DMA_COPYBREAK, ax.get_ylim()[1], " NET_DMA's tcp_dma_copybreak (4096 B)",
            va="top", fontsize="x-small", color="grey")
    ax.set_xlabel("copy size")
    ax.set_ylabel("offloaded copy / CPU memcpy (p50 over p50)")
    ax.set_title("%s: copy through dmalab-ioat against the CPU's (below 1: offload is "
                 "cheaper)\nsync: waited for at once; async: 16 per wait; %s" % (
                     meta["study"], _clock(meta)))
    ax.legend(fontsize="x-small", loc="lower left")
    return fig


PLOTS = {"dma-api": plot_dma_api, "iommu-flush": plot_iommu_flush,
         "swiotlb": plot_swiotlb, "offload": plot_offload}


def render(meta, rows, stem):
    """stem.png and stem.svg for one study's results; returns their paths.
    Raises ImportError when matplotlib is not installed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = PLOTS[meta["study"]](plt, meta, rows)
    fig.tight_layout(rect=(0, 0.07, 1, 1) if fig.legends else None)
    out = []
    for ext in ("png", "svg"):
        path = "%s.%s" % (stem, ext)
        fig.savefig(path, dpi=100, metadata={"Date": None} if ext == "svg" else None)
        out.append(path)
    plt.close(fig)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or len(argv) > 2:
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    with open(argv[0]) as f:
        res = json.load(f)
    stem = argv[1] if len(argv) > 1 else os.path.splitext(argv[0])[0]
    try:
        for path in render(res, res["summary"], stem):
            print(path)
    except ImportError:
        print("plots.py: no matplotlib (apt-get install python3-matplotlib)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
