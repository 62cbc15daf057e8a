# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's tables: how the boots' bench lines become medians, ranges and ratios to the
baseline (text, CSV and JSON rows), the derived tables (swiotlb's calls in copies, offload's
crossover), and the devices' counters at the end of each boot with what differs between boots
of one configuration."""

from bench import median  # the upper median, as the benches take it


class Table:
    """How bench lines become one table: rows tagged `tag`, one block per
    value of `keys`, the median over boots of `primary` (with its range and
    ratio to the baseline) and of each of `others`; `derived`, if given, turns
    the table's summaries into more lines and rows (derived(summaries, labels)
    -> (lines, rows)); `check(label, fields, modelled)` lists what is wrong
    with one row of a boot (measure_checks.py); `bound(fields)` is the most
    a row's primary figure can be off by the clocks it was read from."""

    def __init__(self, tag, keys, primary, others, unit, derived=None, check=None,
                 bound=None):
        self.tag, self.keys = tag, keys
        self.primary, self.others, self.unit = primary, others, unit
        self.derived, self.check, self.bound = derived, check, bound

# dma-api's table, and what summarise() and table() take by default.
BENCH_MAP = Table("bench-map", ("op", "size"), "p50_ns", ["p99_ns"], "ns per call")


def summarise(runs, study=None):
    """{key: (primary median, min, max, [other medians], boots)} of one
    configuration's boots, each a list of (tag, fields) bench rows, for one
    Table (by default dma-api's)."""
    study = study or BENCH_MAP
    out = {}
    keys = []
    for rows in runs:
        for tag, f in rows:
            key = tuple(f.get(k) for k in study.keys)
            if tag == study.tag and key not in keys:
                keys.append(key)
    for key in keys:
        prim, others = [], [[] for _ in study.others]
        for rows in runs:
            for tag, f in rows:
                if tag != study.tag or tuple(f.get(k) for k in study.keys) != key:
                    continue
                try:
                    values = [int(f[study.primary])] + [int(f[o]) for o in study.others]
                except (KeyError, ValueError):
                    continue
                prim.append(values[0])
                for i, v in enumerate(values[1:]):
                    others[i].append(v)
        if prim:
            out[key] = (median(prim), min(prim), max(prim),
                        [median(o) for o in others], len(prim))
    return out


def aligned(head, rows):
    """A header and rows of strings as right-aligned text columns."""
    width = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    return ["  " + "  ".join(v.rjust(w) for v, w in zip(r, width)) for r in [head] + rows]


def table(summaries, labels, study=None, clock="guest clock"):
    """Text lines: one block per key, one row per configuration."""
    study = study or BENCH_MAP
    base = summaries[labels[0]]
    out = []
    for key in base:
        out.append("%s (%s, %s):" % (
            " ".join("%s=%s" % kv for kv in zip(study.keys, key)) or study.tag, study.unit,
            clock))
        p = study.primary
        head = (["config", p, "range"] + list(study.others) +
                ["boots", "%s / %s" % (p, labels[0])])
        rows = []
        for label in labels:
            s = summaries[label].get(key)
            if not s:
                rows.append([label] + ["-"] * (len(head) - 3) + ["0", "-"])
                continue
            ratio = "%.2f" % (s[0] / base[key][0]) if base[key][0] else "-"
            rows.append([label, str(s[0]), "%d-%d" % (s[1], s[2])] +
                        [str(v) for v in s[3]] + [str(s[4]), ratio])
        out += aligned(head, rows)
    return out


def records(summaries, labels, t):
    """The summaries of one table as flat rows, for CSV and JSON: one per
    (key, configuration, metric), where metric is the primary figure's median,
    min and max, each other figure's median, the boot count and the ratio of
    the primary median to the baseline's."""
    base = summaries[labels[0]]
    out = []
    for key in base:
        for label in labels:
            s = summaries[label].get(key)
            if not s:
                continue
            metrics = [(t.primary, s[0]), (t.primary + ":min", s[1]),
                       (t.primary + ":max", s[2])] + list(zip(t.others, s[3])) + [
                ("boots", s[4])]
            if base[key][0]:
                metrics.append((t.primary + ":ratio", round(s[0] / base[key][0], 4)))
            for metric, value in metrics:
                out.append(dict({k: v for k, v in zip(t.keys, key)}, tag=t.tag,
                                config=label, metric=metric, value=value))
    return out


def in_copies(summaries, labels):
    """The swiotlb study's calls in units of the guest's own memcpy() of the
    same size in the same configuration (p50 over p50): what bouncing costs in
    copies, a ratio that does not depend on how fast this host emulates one."""
    lines = ["DMA API calls in memcpy()s of their size (p50 / memcpy's p50, guest clock):"]
    head = ["config", "size"] + [op for op in ("map", "unmap", "sync")]
    body, rows = [], []
    for label in labels:
        s = summaries[label]
        for size in sorted({k[1] for k in s}, key=int):
            copy = s.get(("memcpy", size))
            if not copy or not copy[0]:
                continue
            row = [label, str(size)]
            for op in head[2:]:
                v = s.get((op, size))
                row.append("%.2f" % (v[0] / copy[0]) if v else "-")
                if v:
                    rows.append({"tag": "bench-map", "op": op, "size": size, "config": label,
                                 "metric": "p50_ns:per_memcpy",
                                 "value": round(v[0] / copy[0], 4)})
            body.append(row)
    return lines + aligned(head, body), rows


def crossover(summaries, labels):
    """The offload study per configuration: each offloaded kind's p50 over the
    CPU copy's at each size, and the crossover, the smallest size from which
    on the engine's copy costs the CPU less than its own."""
    lines = ["offload against the CPU's copy (p50 / cpu's p50, modelled clock):"]
    rows = []
    for label in labels:
        s = summaries[label]
        sizes = sorted({int(k[1]) for k in s})
        for op in ("sync", "async"):
            ratios = []
            for size in sizes:
                cpu, off = s.get(("cpu", str(size))), s.get((op, str(size)))
                if cpu and off and cpu[0]:
                    ratios.append((size, off[0] / cpu[0]))
                    rows.append({"tag": "bench-offload", "op": op, "size": size,
                                 "config": label, "metric": "p50_ns:per_cpu",
                                 "value": round(off[0] / cpu[0], 4)})
            cross = next((size for i, (size, _) in enumerate(ratios)
                          if all(r < 1 for _, r in ratios[i:])), None)
            rows.append({"tag": "bench-offload", "op": op, "config": label,
                         "metric": "crossover_bytes", "value": cross or -1})
            lines.append("  %-20s %-5s %s; crossover %s" % (
                label, op, " ".join("%d:%.2f" % r for r in ratios),
                "%d bytes" % cross if cross else "none up to %d bytes" % sizes[-1]
                if sizes else "-"))
    return lines, rows


def unit_counters(boot):
    """The devices' own counters at the end of a boot (QMP): {device type:
    {counter: value}}, numbers only (dmalab-vtd's invalidations by kind, waits,
    IOTLB misses, walks, faults...; dmalab-ioat's descriptors and bytes)."""
    out = {}
    for d in boot.device_stats or []:
        out[d["type"]] = {k: v for k, v in d.items()
                          if isinstance(v, int) and not isinstance(v, bool)}
    return out


def counter_lines(counters, labels):
    """dmalab-vtd's counters per configuration at the end of each boot (the
    whole boot: both workloads and the boot itself), median and range over the
    boots, the counters that are not zero."""
    out = []
    for label in labels:
        boots = [c.get("dmalab-vtd") for c in counters[label] if c.get("dmalab-vtd")]
        if not boots:
            continue
        parts = []
        for name in boots[0]:
            vals = [b.get(name, 0) for b in boots]
            if any(vals):
                lo, hi = min(vals), max(vals)
                parts.append("%s=%d%s" % (name, median(vals),
                                          "" if lo == hi else " (%d-%d)" % (lo, hi)))
        out.append("  %s: %s" % (label, ", ".join(parts)))
    return (["dmalab-vtd's counters at the end of each boot (QMP; median over the boots, "
             "range where they differ):"] + out) if out else []


def repeat_differences(runs, counters, labels):
    """What differs between the boots of each configuration: (device counter
    lines, guest figure lines), each "CONFIG DEVICE.NAME a/b/..." (or "CONFIG TAG
    SIZE OP FIELD a/b/..."), empty when the boots agree."""
    devices, figures = [], []
    for label in labels:
        boots = counters[label]
        for dev in sorted({d for b in boots for d in b}):
            for name in sorted({n for b in boots for n in b.get(dev, {})}):
                vals = [b.get(dev, {}).get(name) for b in boots]
                if len(set(vals)) > 1:
                    devices.append("%s %s.%s %s" % (label, dev, name,
                                                    "/".join(str(v) for v in vals)))
        per_boot = [{(tag, f.get("size"), f.get("op"), k): v for tag, f in rows
                     for k, v in f.items()} for rows in runs[label]]
        for key in sorted({k for b in per_boot for k in b}, key=str):
            vals = [b.get(key) for b in per_boot]
            if len(set(vals)) > 1:
                figures.append("%s %s %s %s %s %s" % ((label,) + key + (
                    "/".join(str(v) for v in vals),)))
    return devices, figures
