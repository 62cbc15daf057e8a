# SPDX-License-Identifier: GPL-2.0-or-later
"""What dma-api, swiotlb and offload must show in every boot, checked by measure.py: the
rows each configuration's boots print (bounce_row), and with --expect-order the orderings
their figures must come in, each by more than the figures' resolution.  Only orderings:
no figure is compared with a number written down here.

A figure's resolution, per boot: for a call's net mean (dma-api, swiotlb's calls and
AF_XDP syncs), the timed region's own cost, the "empty" op's mean, which was subtracted
from it (two figures closer than that are not told apart); for bytes swiotlb copied, a
byte (they are counts); for a busy time per chunk (offload) or per packet, the clocks it
is read from over the chunks or packets (measure_checks.copy_bound's reasoning)."""

import measure_checks as checks
from measure_tables import net_of_empty


def _int(f, name):
    try:
        return int(f[name])
    except (KeyError, ValueError):
        return None


def _figures(runs, label, tag, field, bound, per_boot=None):
    """{key (op, size): [(value, bound)] over the boots of label}."""
    out = {}
    for rows in runs.get(label, []):
        rows = per_boot(rows) if per_boot else rows
        for t, f in rows:
            v = _int(f, field)
            if t == tag and v is not None:
                out.setdefault((f.get("op"), f.get("size")), []).append((v, bound(f, rows)))
    return out


def above(runs, hi, lo, tag, field, bound, keys=None, per_boot=None, what=None):
    """Every boot of configuration hi above every boot of lo, per key (op, size) both
    have (or `keys`), by more than both figures' bounds.  Returns (lines, failures)."""
    a = _figures(runs, hi, tag, field, bound, per_boot)
    b = _figures(runs, lo, tag, field, bound, per_boot)
    lines, failures = [], []
    for key in sorted(keys or set(a) & set(b), key=str):
        name = "%s %s %s" % (what or tag, field, " ".join(str(k) for k in key if k))
        if key not in a or key not in b:
            failures.append("%s: no figures from %s" % (name, hi if key not in a else lo))
            continue
        bottom = min(v - e for v, e in a[key])
        top = max(v + e for v, e in b[key])
        gap = min(v for v, _ in a[key]) - max(v for v, _ in b[key])
        text = "%s: %s above %s by %d (bounds %.0f and %.0f)" % (
            name, hi, lo, gap, max(e for _, e in a[key]), max(e for _, e in b[key]))
        lines.append("  " + text)
        if bottom <= top:
            failures.append(text + ": not beyond the figures' resolution")
    return lines, failures


def empty_bound(f, rows):
    """A net mean's resolution: the empty region's mean that was subtracted from it."""
    return max(_int(f, "empty_mean_ns") or 0, 1)


def byte_bound(f, rows):
    return 0.5


def busy_bound(f, rows):
    """busy_ns per chunk: wall time (ns) less idle time (whole us) on each CPU, so off by
    less than (CPUs + 1) us over the window's chunks, and 1 ns for the division."""
    chunks, cpus = _int(f, "chunks") or 0, _int(f, "cpus") or 1
    return (cpus + 1) * 1000 / chunks + 1 if chunks else float("inf")


def _join(*parts):
    lines, failures = [], []
    for l, f in parts:
        lines += l
        failures += f
    return lines, failures


def dma_api(runs, labels, tables):
    """Unmaps: strict above lazy above no IOMMU, behind either IOMMU; maps: lazy above no
    IOMMU (the IOVA and page-table work); per size, net means."""
    parts = []
    for iommu in ("vtd", "intel"):
        lazy, strict = iommu + "-lazy", iommu + "-strict"
        if lazy not in labels or strict not in labels or "no-iommu" not in labels:
            continue
        for size in ("4096", "65536"):
            k = [("unmap", size)]
            parts.append(above(runs, strict, lazy, "bench-map", "net_mean_ns", empty_bound,
                               k, net_of_empty))
            parts.append(above(runs, lazy, "no-iommu", "bench-map", "net_mean_ns",
                               empty_bound, k, net_of_empty))
            parts.append(above(runs, lazy, "no-iommu", "bench-map", "net_mean_ns",
                               empty_bound, [("map", size)], net_of_empty))
    if not parts:
        return [], ["--expect-order: no no-iommu, lazy and strict configurations"]
    if "vtd-cm" in labels and "vtd-strict" in labels:
        # caching mode invalidates (and waits) on map too
        for size in ("4096", "65536"):
            parts.append(above(runs, "vtd-cm", "vtd-strict", "bench-map", "net_mean_ns",
                               empty_bound, [("map", size)], net_of_empty))
    lines, failures = _join(*parts)
    return ["dma-api: strict > lazy > no IOMMU (unmaps), lazy > no IOMMU (maps), caching "
            "mode > strict (maps), net means, every boot, beyond the empty region's "
            "cost:"] + lines, failures


def bounce_row(label, f, modelled):
    """bench-bounce and bench-nic-bounce: swiotlb copied bytes where it bounces (every op
    that moves data: not need-sync), none where it does not."""
    field = "bytes_per_packet" if "bytes_per_packet" in f else "bytes_per_call"
    v = _int(f, field)
    what = "%s op=%s size=%s" % (field, f.get("op", "nic"), f.get("size"))
    if v is None:
        return ["%s: missing" % what]
    bounced = label.split(",")[0].startswith("swiotlb")
    if not bounced and v:
        return ["%s: %d bytes copied without swiotlb=force" % (what, v)]
    if bounced and not v and f.get("op") != "xdp-need-sync":
        return ["%s: nothing copied under swiotlb=force" % what]
    return []


def swiotlb(runs, labels, tables):
    """Bounced above not bounced: every call's net mean that moves data (map, unmap, the
    sync pair, the AF_XDP fill and rx syncs), the bytes copied per call and per packet,
    the guest CPU per packet, and the offloaded copy's CPU time (wait, per size)."""
    hi, lo = "swiotlb", "no-bounce"
    parts = []
    if hi in labels and lo in labels:
        maps = [(op, s) for op in ("map", "unmap", "sync") for s in ("4096", "65536")]
        xdp = [(op, s) for op in ("fill", "rx") for s in ("1792", "3840")]
        parts += [above(runs, hi, lo, "bench-map", "net_mean_ns", empty_bound, maps,
                        net_of_empty),
                  above(runs, hi, lo, "bench-xdp", "net_mean_ns", empty_bound, xdp,
                        net_of_empty),
                  above(runs, hi, lo, "bench-bounce", "bytes_per_call", byte_bound,
                        [(op, s) for op, s in maps] +
                        [("xdp-" + op, s) for op, s in xdp]),
                  above(runs, hi, lo, "bench-nic", "busy_ns_per_packet",
                        lambda f, rows: checks.nic_bound(f) or float("inf")),
                  above(runs, hi, lo, "bench-nic-bounce", "bytes_per_packet", byte_bound)]
    if hi + "-engine" in labels and lo + "-engine" in labels:
        parts.append(above(runs, hi + "-engine", lo + "-engine", "bench-offload", "busy_ns",
                           busy_bound, [("wait", s) for s in ("4096", "65536")]))
    if not parts:
        return [], ["--expect-order: no swiotlb and no-bounce configurations"]
    lines, failures = _join(*parts)
    return ["swiotlb: bounced > not bounced, every boot, beyond the figures' "
            "resolution:"] + lines, failures


def offload(runs, labels, tables, sleeping=None):
    """When the CPU overlaps its own work with the engine's, it is idle for part of the
    time: overlap's busy time below its elapsed time, per configuration and size, by
    more than the busy figure's resolution.  `sleeping`, {label: sizes}: configurations
    whose three offloaded kinds all sleep until the callbacks (a channel that completes
    out of order, DSA's: nothing polls it), where this holds for wait, overlap and ordered
    at those sizes only: where a copy's engine time is longer than the CPU's work per copy
    (its submission, its interrupt and the callback's wake-up)."""
    sleeping = sleeping or {}
    lines, failures = [], []
    for label in labels:
        ops = ("wait", "overlap", "ordered") if label in sleeping else ("overlap",)
        for rows in runs.get(label, []):
            for t, f in rows:
                if t != "bench-offload" or f.get("op") not in ops or (
                        label in sleeping and f.get("size") not in sleeping[label]):
                    continue
                op = f.get("op")
                busy, wall = _int(f, "busy_ns"), _int(f, "elapsed_ns")
                if busy is None or wall is None:
                    failures.append("%s %s size=%s: no busy_ns or elapsed_ns" % (
                        label, op, f.get("size")))
                    continue
                text = "%s %s size=%s: busy %d ns < elapsed %d ns per chunk " \
                    "(bound %.0f)" % (label, op, f.get("size"), busy, wall,
                                      busy_bound(f, rows))
                lines.append("  " + text)
                if not busy + busy_bound(f, rows) < wall:
                    failures.append(text + ": not beyond the figures' resolution")
    if not lines and not failures:
        failures.append("--expect-order: no overlap figures")
    return ["offload: the CPU busy for less than the elapsed time while the engine "
            "copies (overlap; %s), every boot:" % (
                "; ".join("%s: wait, overlap and ordered at %s bytes only" % (
                    label, ", ".join(sizes)) for label, sizes in sleeping.items()) or
                "none sleeps in wait or ordered")] + lines, failures
