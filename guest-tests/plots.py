#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Plots of dmalab measure's results, with Debian's matplotlib (python3-matplotlib).

  plots.py RESULTS.json [OUT_STEM]   render RESULTS.json (measure.py's) as
                                     OUT_STEM.png and OUT_STEM.svg (default:
                                     the JSON's path without .json)

measure.py calls render() after every study.  Every plot names its clock (and on the
modelled clock the ns per guest instruction), the guest kernel and the spread its range
bars show (the boots: seeds, builds, rates); every axis says what its figure is (net of
what, or gross; per what; at which offered rate); absolute figures are plotted beside
their baseline's, not only as ratios; a published figure is drawn only on a panel whose
axis measures the same thing.
"""

import json
import os
import sys
import textwrap

import measure_provenance as prov

# The published figures the studies relate to (docs/measure.rst, docs/offload.rst).
# The 2008 Intel DMAR thread: 16 KiB UDP sends at equal throughput, CPU
# utilisation 25% strict, 18% deferred, 11% without the IOMMU.
DMAR_2008 = {"strict": 25 / 11, "deferred": 18 / 11}
# NET_DMA's net.ipv4.tcp_dma_copybreak: the smallest read it offloaded, tuned per I/OAT
# version by Intel in 2008 (4096 bytes for I/OAT 1.2, 2048 for 2.0).
NET_DMA_COPYBREAK = {"I/OAT 1.2": 4096, "I/OAT 2.0": 2048}

OPS = ("empty", "memcpy", "memset", "map", "unmap", "sync")


def _values(rows, metric, tag=None):
    """{(config, op, size): value} of one metric."""
    out = {}
    for r in rows:
        if r["metric"] == metric and (tag is None or r["tag"] == tag):
            out[(r["config"], r.get("op"), str(r.get("size")))] = r["value"]
    return out


def _op_order(key):
    """(op, size) sorted by size, then in the order a mapping lives."""
    op, size = key
    return int(size), OPS.index(op) if op in OPS else len(OPS), op


def _size_label(size):
    size = int(size)
    return "%d KiB" % (size // 1024) if size >= 1024 and size % 1024 == 0 else "%d B" % size


def _clock(meta):
    """The clock (with the ns per instruction), the guest kernel, the CPU profile the
    modelled clock's ns belong to, and the spread."""
    ver = meta.get("kernel_version")
    spread = meta.get("spread") or []
    boots = len(spread) * meta.get("repeat", 1)
    text = _clock_only(meta) + ("; Linux %s" % ver if ver else "")
    if meta.get("clock", "").startswith("icount-"):
        # whose nanoseconds these are (measure.py --cpu-profile; "model" by default)
        text += "; CPU profile %s" % ((meta.get("cpu_profile") or {}).get("name") or "model")
    if spread:
        text += "; bars: range over %d boot%s (%s)" % (
            boots, "" if boots == 1 else "s", ", ".join(v["name"] for v in spread))
    return text


def _clock_only(meta):
    clock = meta.get("clock", "")
    if clock == "host":
        return "host-driven guest time (TCG), not a hardware time"
    if clock == "icount-per-config":
        return "modelled time (-icount), each configuration's own"
    shift = clock.split("-")[-1]
    return "modelled time (-icount shift=%s: %d ns per guest instruction)" % (
        shift, 2 ** int(shift)) if shift.isdigit() else "modelled time (%s)" % clock


def _title(fig, text, width=110):
    """A figure title wrapped to the figure, never clipped (render saves the whole
    drawing: bbox_inches="tight")."""
    fig.suptitle("\n".join(textwrap.wrap(text, width)), fontsize="medium")


def _configs(rows, tag=None):
    seen = []
    for r in rows:
        if (tag is None or r["tag"] == tag) and r["config"] not in seen:
            seen.append(r["config"])
    return seen


def _bars(ax, groups, configs, value, err=None, log=False):
    """One group of bars per entry of groups, one bar per configuration; err(cfg, key)
    -> (min, max) draws the range."""
    width = 0.8 / max(len(configs), 1)
    for i, cfg in enumerate(configs):
        xs, ys, lo, hi = [], [], [], []
        for g, key in enumerate(groups):
            v = value(cfg, key)
            if v is None:
                continue
            v = max(v, 0.5) if log else v
            xs.append(g + (i - (len(configs) - 1) / 2) * width)
            ys.append(v)
            a, b = err(cfg, key) if err else (v, v)
            a, b = (v if a is None else a), (v if b is None else b)
            lo.append(max(v - a, 0))
            hi.append(max(b - v, 0))
        ax.bar(xs, ys, width, label=cfg, yerr=[lo, hi] if err and xs else None, capsize=2,
               error_kw={"elinewidth": 1})
    if log:
        ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))


def _metric(rows, tag, metric):
    """(value, range) accessors of one metric: value(cfg, (op, size)) and err(...)."""
    v = _values(rows, metric, tag)
    lo, hi = _values(rows, metric + ":min", tag), _values(rows, metric + ":max", tag)
    return (lambda c, g: v.get((c,) + g),
            lambda c, g: (lo.get((c,) + g), hi.get((c,) + g)))


def _empty_line(ax, rows, tag="bench-map"):
    empty = [v for (c, op, s), v in _values(rows, "mean_ns", tag).items() if op == "empty"]
    if empty:
        e = sorted(empty)[len(empty) // 2]
        ax.axhline(e, color="grey", linestyle=":", linewidth=0.8)
        ax.text(-0.45, e, "the empty timed region: %d ns (subtracted)" % e, va="bottom",
                fontsize="x-small", color="dimgrey")


def plot_dma_api(plt, meta, rows):
    value, err = _metric(rows, "bench-map", "net_mean_ns")
    configs = _configs(rows, "bench-map")
    groups = sorted({(k[1], k[2]) for k in _values(rows, "net_mean_ns", "bench-map")
                     if k[1] != "empty"}, key=_op_order)
    fig, ax = plt.subplots(figsize=(11, 5.5))
    _bars(ax, groups, configs, value, err, log=True)
    _empty_line(ax, rows)
    ax.set_xticklabels(["%s\n%s" % (op, _size_label(size)) for op, size in groups])
    ax.set_ylabel("ns per call: mean, net of the empty timed region\n"
                  "(median over boots; bars: their range)")
    ax.legend(fontsize="small", ncol=2)
    _title(fig, "dma-api: the DMA API per call on dmalab-ioat's device, absolute (no-iommu "
           "is the baseline). %s" % _clock(meta))
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
        def at_low(metric):
            return {(r["config"], r.get("nic"), str(r.get("size"))): r["value"] for r in rows
                    if r["metric"] == metric and r["tag"] == tag and
                    str(r.get("rate")) == low}
        ratio, lo, hi = (at_low(primary + m) for m in (":ratio", ":min", ":max"))
        base = at_low(primary)
        groups = sorted({k[1:] for k in ratio}, key=lambda g: (str(g[0]), int(g[1])))

        def err(c, g):
            # the configuration's range over its boots, over no IOMMU's figure
            b = base.get(("no-iommu",) + g)
            if not b or (c,) + g not in lo:
                return (None, None)
            return (lo[(c,) + g] / b, hi[(c,) + g] / b)
        _bars(ax, groups, configs, lambda c, g: ratio.get((c,) + g), err)
        ax.set_xticks(range(len(groups)))
        # the baseline's absolute figure under each group: what the ratios are of
        ax.set_xticklabels(["%s%s\nnone %.1f us" % (
            nic + "\n" if nic else "", _size_label(s),
            base.get(("no-iommu", nic, s), 0) / 1000) for nic, s in groups],
            fontsize="small")
        ax.axhline(1, color="black", linewidth=0.8)
        for name, v in DMAR_2008.items():
            ax.axhline(v, color="grey", linestyle="--", linewidth=0.8)
            ax.text(-0.45, v, "2008 DMAR thread, another workload (16 KiB UDP on hardware), "
                    "%s: %.2f" % (name, v),
                    va="bottom", ha="left", fontsize="x-small", color="dimgrey",
                    bbox=dict(facecolor="white", edgecolor="none", pad=1))
        ax.set_ylabel("gross guest CPU per %s, / no IOMMU" % ("copy" if tag == "bench-copy"
                                                                else "packet"))
        ax.set_title("%s, %s/s" % (what, low), fontsize="medium")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1),
               fontsize="small")
    _title(fig, "%s: gross service demand at equal offered rate, ratio to no IOMMU. %s" % (
        meta["study"], _clock(meta)))
    return fig


def plot_swiotlb(plt, meta, rows):
    fig, axes = plt.subplots(2, 2, figsize=(13, 10))
    (calls, xdp), (nic, engine) = axes
    # the DMA API per call, with the CPU's own memcpy of the same size beside it
    value, err = _metric(rows, "bench-map", "net_mean_ns")
    cfgs = _configs(rows, "bench-map")
    groups = sorted({(k[1], k[2]) for k in _values(rows, "net_mean_ns", "bench-map")
                     if k[1] != "empty"}, key=_op_order)
    _bars(calls, groups, cfgs, value, err, log=True)
    _empty_line(calls, rows)
    calls.set_xticklabels(["%s\n%s" % (op, _size_label(s)) for op, s in groups])
    calls.set_ylabel("ns per call: mean, net of the empty timed region")
    calls.set_title("DMA API calls; memcpy: the CPU's copy of that size", fontsize="medium")
    calls.legend(fontsize="small")
    # AF_XDP-like syncs per frame
    value, err = _metric(rows, "bench-xdp", "net_mean_ns")
    groups = sorted({(k[1], k[2]) for k in _values(rows, "net_mean_ns", "bench-xdp")},
                    key=lambda k: (int(k[1]), k[0]))
    _bars(xdp, groups, _configs(rows, "bench-xdp"), value, err, log=True)
    xdp.set_xticklabels(["%s\n%s" % (op, _size_label(s)) for op, s in groups], rotation=45,
                        fontsize="small")
    xdp.set_ylabel("ns per call: mean, net of the empty timed region")
    xdp.set_title("\n".join(textwrap.wrap(
        "AF_XDP-like syncs of one long-lived bidirectional mapping, per frame (its length "
        "below); fill: for the device, on a frame the CPU did not write", 70)),
        fontsize="medium")
    # the NICs' packets
    value, err = _metric(rows, "bench-nic", "busy_ns_per_packet")
    rates = sorted({str(r.get("rate")) for r in rows if r["tag"] == "bench-nic"})
    sizes = sorted({str(r.get("size")) for r in rows if r["tag"] == "bench-nic"}, key=int)
    bounce = _values(rows, "bytes_per_packet", "bench-nic-bounce")
    groups = [(None, s) for s in sizes]
    _bars(nic, groups, _configs(rows, "bench-nic"), value, err)
    nic.set_xticklabels(["%s-byte packets\n%s bytes\nbounced each" % (
        s, bounce.get(("swiotlb", None, s), "?")) for _, s in groups], fontsize="small")
    nic.set_xlabel("offered rate: %s packets/s" % "/".join(rates))
    nic.set_ylabel("guest CPU busy ns per packet, gross\n(sent by one e1000e, received by "
                   "the other, at the offered rate)")
    nic.set_title("a real driver: pktgen between two e1000e on a QEMU hub",
                  fontsize="medium")
    nic.legend(fontsize="small")
    # the copy engine
    value, err = _metric(rows, "bench-offload", "busy_ns")
    groups = sorted({(k[1], k[2]) for k in _values(rows, "busy_ns", "bench-offload")},
                    key=lambda k: (int(k[1]), k[0]))
    _bars(engine, groups, _configs(rows, "bench-offload"), value, err, log=True)
    engine.set_xticklabels(["%s %s" % (op, _size_label(s)) for op, s in groups],
                           fontsize="x-small", rotation=90)
    engine.set_ylabel("guest CPU busy ns per chunk copied, gross")
    engine.set_title("dmalab-ioat through the patched ioatdma (cpu: the CPU's own copy)",
                     fontsize="medium")
    engine.legend(fontsize="small")
    _title(fig, "swiotlb: what bouncing costs, without (no-bounce) and with "
           "swiotlb=force, absolute. %s" % _clock(meta))
    return fig


def plot_offload(plt, meta, rows):
    fig, (busy_ax, ratio_ax) = plt.subplots(1, 2, figsize=(13, 5.5))
    busy = _values(rows, "busy_ns", "bench-offload")
    lo, hi = _values(rows, "busy_ns:min", "bench-offload"), \
        _values(rows, "busy_ns:max", "bench-offload")
    elapsed = _values(rows, "elapsed_ns", "bench-offload")
    first = (_configs(rows, "bench-offload") or [None])[0]
    for i, op in enumerate(("cpu", "wait", "overlap", "ordered")):
        pts = sorted((int(k[2]), v, lo.get(k, v), hi.get(k, v)) for k, v in busy.items()
                     if k[0] == first and k[1] == op)
        if not pts:
            continue
        busy_ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                         yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                         marker="o", capsize=2, color="C%d" % i, label="%s: busy" % op)
        if op == "overlap":
            e = sorted((int(k[2]), v) for k, v in elapsed.items()
                       if k[0] == first and k[1] == op)
            busy_ax.plot([p[0] for p in e], [p[1] for p in e], ":", marker=".",
                         color="C%d" % i, label="overlap: elapsed")
    busy_ax.set_xscale("log", base=2)
    busy_ax.set_yscale("log")
    busy_ax.set_xlabel("chunk size")
    busy_ax.set_ylabel("guest CPU ns per chunk copied, gross (busy: elapsed less idle)")
    busy_ax.set_title("%s: absolute, per kind" % first, fontsize="medium")
    busy_ax.legend(fontsize="x-small")
    per = _values(rows, "busy_ns:per_cpu", "bench-offload")
    styles = {"wait": "-", "overlap": "--", "ordered": "-."}
    for i, cfg in enumerate(_configs(rows, "bench-offload")):
        for op, style in styles.items():
            pts = sorted((int(k[2]), v) for k, v in per.items() if k[0] == cfg and k[1] == op)
            if pts:
                ratio_ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                              color="C%d" % i, label="%s, %s" % (cfg, op))
    sizes = sorted({int(k[2]) for k in per})
    for ax in (busy_ax, ratio_ax):
        ax.set_xticks(sizes)
        ax.set_xticklabels([_size_label(x) for x in sizes])
    ratio_ax.set_xscale("log", base=2)
    ratio_ax.set_yscale("log")
    ratio_ax.set_xticks(sizes)
    ratio_ax.set_xticklabels([_size_label(x) for x in sizes])
    ratio_ax.axhline(1, color="black", linewidth=0.8)
    ratio_ax.text(sizes[0] if sizes else 1, 1, "break-even: the CPU's own copy",
                  va="bottom", fontsize="x-small")
    # the copybreak is a size from which offloading was chosen: this panel's question
    for name, size in NET_DMA_COPYBREAK.items():
        ratio_ax.axvline(size, color="grey", linestyle=":")
        ratio_ax.text(size, ratio_ax.get_ylim()[1], " tcp_dma_copybreak, %s" % name,
                      va="top", rotation=90, fontsize="x-small", color="grey")
    ratio_ax.set_xlabel("chunk size")
    ratio_ax.set_ylabel("CPU busy time of the offloaded chunk / of the CPU's own copy")
    ratio_ax.set_title("below 1 offloading costs the CPU less", fontsize="medium")
    ratio_ax.legend(fontsize="x-small", loc="lower left")
    _title(fig, "offload: copies through dmalab-ioat against the CPU's memcpy; wait: one at "
           "a time, polled; overlap: 16 offloaded while the CPU copies one, then sleeps; "
           "ordered: 16 offloaded, polled, then the CPU's one. %s" % _clock(meta))
    return fig


def plot_udp(plt, meta, rows):
    """iperf3's UDP: the 16 KiB sends at fixed rates (gross CPU per datagram over no
    IOMMU's, the 2008 thread's metric at equal throughput, on its own workload here) and
    the 32-byte stream at saturation (datagrams per second over no IOMMU's)."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    configs = [c for c in _configs(rows, "bench-iperf") if c != "no-iommu"]

    def series(metric, pick):
        return {(r["config"], r.get("nic"), str(r.get("size")), str(r.get("rate"))): r["value"]
                for r in rows if r["tag"] == "bench-iperf" and r["metric"] == metric and
                pick(r)}
    fixed = lambda r: str(r.get("rate")) != "0"          # noqa: E731
    ratio = series("busy_ns_per_datagram:ratio", fixed)
    base = series("busy_ns_per_datagram", fixed)
    lo, hi = (series("busy_ns_per_datagram" + m, fixed) for m in (":min", ":max"))
    groups = sorted({k[1:] for k in ratio}, key=lambda g: (g[0], int(g[1]), int(g[2])))

    def err(c, g):
        b = base.get(("no-iommu",) + g)
        if not b or (c,) + g not in lo:
            return (None, None)
        return (lo[(c,) + g] / b, hi[(c,) + g] / b)
    ax = axes[0]
    _bars(ax, groups, configs, lambda c, g: ratio.get((c,) + g), err)
    ax.set_xticklabels(["%s\n%s Mbit/s\nnone %.0f us" % (
        nic, rate, base.get(("no-iommu", nic, size, rate), 0) / 1000)
        for nic, size, rate in groups], fontsize="small")
    ax.axhline(1, color="black", linewidth=0.8)
    for name, v in DMAR_2008.items():
        ax.axhline(v, color="grey", linestyle="--", linewidth=0.8)
        ax.text(-0.45, v, "2008 DMAR thread, its 16 KiB UDP at 826 Mbit/s on hardware, "
                "%s: %.2f" % (name, v), va="bottom", ha="left", fontsize="x-small",
                color="dimgrey", bbox=dict(facecolor="white", edgecolor="none", pad=1))
    ax.set_ylabel("gross guest CPU per 16 KiB datagram, / no IOMMU")
    ax.set_title("16 KiB datagrams at a fixed rate (equal throughput)", fontsize="medium")
    sat = lambda r: str(r.get("rate")) == "0"            # noqa: E731
    rate = series("per_s", sat)
    groups = sorted({k[1:] for k in rate}, key=lambda g: (g[0], int(g[1])))
    ax = axes[1]
    _bars(ax, groups, configs, lambda c, g: (
        rate[(c,) + g] / rate[("no-iommu",) + g]
        if (c,) + g in rate and rate.get(("no-iommu",) + g) else None))
    ax.set_xticklabels(["%s\n%s B\nnone %.0f k/s" % (
        nic, size, rate.get(("no-iommu", nic, size, r), 0) / 1000)
        for nic, size, r in groups], fontsize="small")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_ylabel("datagrams per second received, / no IOMMU")
    ax.set_title("32-byte datagrams as fast as one CPU sends them", fontsize="medium")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1),
               fontsize="small")
    _title(fig, "udp: iperf3 from one NIC of the guest to another, gross guest CPU (sender "
           "and receiver on one CPU). %s" % _clock(meta))
    return fig


def plot_xdp(plt, meta, rows):
    """The xdp study: gross CPU per packet received by the kernel's stack and by an AF_XDP
    socket, without and with bouncing (absolute, the baseline beside), and swiotlb's bytes
    per packet.  The seed's 9% is a throughput loss, another metric: not drawn."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 2]})

    def series(metric):
        """{(config, receiver, size, rate): value} of one metric of bench-xsk."""
        return {(r["config"], r.get("receiver"), str(r.get("size")), str(r.get("rate"))):
                r["value"] for r in rows if r["tag"] == "bench-xsk" and r["metric"] == metric}
    busy, lo, hi = (series("busy_ns_per_packet" + m) for m in ("", ":min", ":max"))
    configs = _configs(rows, "bench-xsk")
    groups = sorted({k[1:] for k in busy}, key=lambda g: (int(g[2]), int(g[1]), g[0]))
    _bars(ax, groups, configs,
          lambda c, g: busy[(c,) + g] / 1000 if (c,) + g in busy else None,
          lambda c, g: tuple(x.get((c,) + g, 0) / 1000 or None for x in (lo, hi)))
    ax.set_xticklabels(["%s\n%s B\n%s/s" % g for g in groups], fontsize="small")
    ax.set_ylabel("gross guest CPU per packet, us (sender and receiver;\n"
                  "median over boots, bars: their range)")
    ax.set_title("the receive path: the stack, or an AF_XDP socket (copy mode)",
                 fontsize="medium")
    ax.legend(fontsize="small")
    bounced = series("count:bytes bounced")
    _bars(bx, groups, configs, lambda c, g: bounced.get((c,) + g))
    bx.set_xticklabels(["%s\n%s B" % g[:2] for g in groups], fontsize="small")
    bx.set_ylabel("bytes swiotlb copied per packet (counting pass)")
    bx.set_title("what bouncing copies", fontsize="medium")
    _title(fig, "xdp: pktgen from one igb to the other; the seed's 9%% is a throughput loss "
           "on hardware, another metric, so it is not drawn. %s" % _clock(meta))
    return fig


PLOTS = {"dma-api": plot_dma_api, "iommu-flush": plot_iommu_flush,
         "swiotlb": plot_swiotlb, "offload": plot_offload, "udp": plot_udp,
         "xdp": plot_xdp}


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
        fig.savefig(path, dpi=100, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else None)
        out.append(path)
    plt.close(fig)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or len(argv) > 2:
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    # docs/results keeps results files gzip'd (NAME.json.gz)
    with prov.open_text(argv[0]) as f:
        res = json.load(f)
    name = argv[0][:-len(".gz")] if argv[0].endswith(".gz") else argv[0]
    stem = argv[1] if len(argv) > 1 else os.path.splitext(name)[0]
    try:
        for path in render(res, res["summary"], stem):
            print(path)
    except ImportError:
        print("plots.py: no matplotlib (apt-get install python3-matplotlib)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
