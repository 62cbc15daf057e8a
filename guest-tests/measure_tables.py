# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's tables: how the boots' bench lines become medians, ranges and ratios to the
baseline (text, CSV and JSON rows), the derived tables (swiotlb's calls in copies, offload's
crossover), and the devices' counters at the end of each boot with what differs between boots
of one configuration."""

import measure_checks
from bench import median  # the upper median, as the benches take it


class Table:
    """How bench lines become one table: rows tagged `tag`, one block per
    value of `keys`, the median over boots of `primary` (with its range and
    ratio to the baseline) and of each of `others`; `derived`, if given, turns
    the table's summaries into more lines and rows (derived(summaries, labels)
    -> (lines, rows)); `check(label, fields, modelled)` lists what is wrong
    with one row of a boot (measure_checks.py); `bound(fields)` is the most
    a row's primary figure can be off by the clocks it was read from;
    `per_boot(rows) -> rows`, if given, adds fields to one boot's rows before
    they are summed up (net_of_empty); `only(label)`, if given, says which
    configurations must print the table's lines (default: every one); `smp`, the
    fewest guest CPUs with which they must (the concurrent windows: 2)."""

    def __init__(self, tag, keys, primary, others, unit, derived=None, check=None,
                 bound=None, per_boot=None, only=None, smp=1):
        self.tag, self.keys = tag, keys
        self.primary, self.others, self.unit = primary, others, unit
        self.derived, self.check, self.bound = derived, check, bound
        self.per_boot, self.only, self.smp = per_boot, only, smp

    def wants(self, label, smp=None):
        """Whether configuration `label` must print this table's lines (on a guest of
        `smp` CPUs; None: any)."""
        if smp is not None and smp < self.smp:
            return False
        return self.only is None or self.only(label)


def net_of_empty(rows):
    """One boot's bench-map and bench-xdp rows with the timed region's own cost taken
    away: the mean and median of mapcost's "empty" op (nothing between the two
    ktime_get_ns() reads; the mean of its rows, one per size) subtracted from every
    call's mean (net_mean_ns), median (net_p50_ns) and 99th percentile (net_p99_ns:
    less the empty region's median).  Rows of other tags pass unchanged; without an
    empty row, so do all."""
    empty = [(int(f["mean_ns"]), int(f["p50_ns"])) for tag, f in rows
             if tag == "bench-map" and f.get("op") == "empty" and "mean_ns" in f]
    if not empty:
        return rows
    mean = sum(e[0] for e in empty) / len(empty)
    p50 = sum(e[1] for e in empty) / len(empty)
    out = []
    for tag, f in rows:
        if tag in ("bench-map", "bench-xdp") and "mean_ns" in f:
            f = dict(f, net_mean_ns=str(round(int(f["mean_ns"]) - mean)),
                     net_p50_ns=str(round(int(f["p50_ns"]) - p50)),
                     net_p99_ns=str(round(int(f["p99_ns"]) - p50)),
                     empty_mean_ns=str(round(mean)))
        out.append((tag, f))
    return out

# dma-api's table, and what summarise() and table() take by default: per call, the
# mean first (lazy mode's queue flushes and the IOVA allocator's slow paths are rare and
# costly: they are in the mean and the tail, not in the median), the timed region's own
# cost subtracted (net_of_empty), and the gross mean beside it.
BENCH_MAP = Table("bench-map", ("op", "size"), "net_mean_ns",
                  ["mean_ns", "net_p50_ns", "net_p99_ns", "max_ns"],
                  "ns per call, mean less the empty region's", per_boot=net_of_empty,
                  derived=lambda s, labels: byte_prices(s, labels),
                  check=measure_checks.memcpy_row)


def summarise(runs, study=None):
    """{key: (primary median, min, max, [other medians], boots, [(other min, max)])}
    of one configuration's boots, each a list of (tag, fields) bench rows, for one
    Table (by default dma-api's)."""
    study = study or BENCH_MAP
    if study.per_boot:
        runs = [study.per_boot(rows) for rows in runs]
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
                        [median(o) for o in others], len(prim),
                        [(min(o), max(o)) for o in others])
    return out


def base_label(summaries, labels):
    """The baseline of one table: the first configuration with figures in it."""
    return next((label for label in labels if summaries.get(label)), labels[0])


def aligned(head, rows):
    """A header and rows of strings as right-aligned text columns."""
    width = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    return ["  " + "  ".join(v.rjust(w) for v, w in zip(r, width)) for r in [head] + rows]


def table(summaries, labels, study=None, clock="guest clock"):
    """Text lines: one block per key, one row per configuration (those with figures
    in the table); each figure the median over the boots, the primary one's range
    beside it; clock: what the figures were read from, printed with every block."""
    study = study or BENCH_MAP
    first = base_label(summaries, labels)
    base = summaries[first]
    out = []
    for key in base:
        out.append("%s (%s, %s):" % (
            " ".join("%s=%s" % kv for kv in zip(study.keys, key)) or study.tag, study.unit,
            clock))
        p = study.primary
        head = (["config", p, "range"] + list(study.others) +
                ["boots", "%s / %s" % (p, first)])
        rows = []
        for label in labels:
            s = summaries[label].get(key)
            if not s and not study.wants(label):
                continue        # this table is not this configuration's
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
    base = summaries[base_label(summaries, labels)]
    out = []
    for key in base:
        for label in labels:
            s = summaries[label].get(key)
            if not s:
                continue
            ranges = s[5] if len(s) > 5 else []
            metrics = [(t.primary, s[0]), (t.primary + ":min", s[1]),
                       (t.primary + ":max", s[2])] + list(zip(t.others, s[3])) + [
                (o + ":" + m, r[i]) for o, r in zip(t.others, ranges)
                for i, m in enumerate(("min", "max"))] + [("boots", s[4])]
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


def byte_prices(summaries, labels):
    """What a byte costs the modelled CPU on each string path the study timed: the net
    mean of its memcpy() and memset() rows over their size, per configuration (a
    consistency check: every configuration boots the same CPU, so the prices agree
    unless something else ran in the timed regions)."""
    ops = ("memcpy", "memset")
    lines = ["ns per byte on the guest's clock (net mean / size): the CPU's own copy and "
             "fill"]
    head = ["config", "size"] + list(ops)
    body, rows = [], []
    for label in labels:
        s = summaries[label]
        for size in sorted({k[1] for k in s if k[0] in ops}, key=int):
            row = [label, str(size)]
            for op in ops:
                v = s.get((op, size))
                if not v or int(size) <= 0:
                    row.append("-")
                    continue
                per = v[0] / int(size)
                row.append("%.3f" % per)
                rows.append({"tag": "bench-map", "op": op, "size": size, "config": label,
                             "metric": "ns_per_byte", "value": round(per, 4)})
            body.append(row)
    if not body:
        return [], []
    return lines + aligned(head, body), rows


OFFLOADED = ("wait", "overlap", "ordered")


def crossover(summaries, labels):
    """The offload study per configuration: the CPU copy's cost per byte at each size,
    each offloaded kind's CPU busy time over the CPU copy's (per chunk, median over
    median) at each size, and the crossover, the smallest size from which on the
    engine's copy costs the CPU less than its own."""
    lines = ["offload against the CPU's copy (busy ns per chunk / cpu's; the cpu row: its "
             "ns per byte):"]
    rows = []
    for label in labels:
        s = summaries[label]
        sizes = sorted({int(k[1]) for k in s})
        cpu = {size: s[("cpu", str(size))][0] for size in sizes if ("cpu", str(size)) in s}
        if not cpu:
            continue
        per_byte = [(size, cpu[size] / size) for size in sizes if size in cpu]
        for size, v in per_byte:
            rows.append({"tag": "bench-offload", "op": "cpu", "size": size, "config": label,
                         "metric": "busy_ns:per_byte", "value": round(v, 4)})
        lines.append("  %-20s %-7s %s" % (label, "cpu", " ".join(
            "%d:%.3f" % r for r in per_byte)))
        for op in OFFLOADED:
            ratios = []
            for size in sizes:
                off = s.get((op, str(size)))
                if cpu.get(size) and off:
                    ratios.append((size, off[0] / cpu[size]))
                    rows.append({"tag": "bench-offload", "op": op, "size": size,
                                 "config": label, "metric": "busy_ns:per_cpu",
                                 "value": round(off[0] / cpu[size], 4)})
            if not ratios:
                continue
            cross = next((size for i, (size, _) in enumerate(ratios)
                          if all(r < 1 for _, r in ratios[i:])), None)
            rows.append({"tag": "bench-offload", "op": op, "config": label,
                         "metric": "crossover_bytes", "value": cross or -1})
            lines.append("  %-20s %-7s %s; crossover %s" % (
                label, op, " ".join("%d:%.2f" % r for r in ratios),
                "%d bytes" % cross if cross else "none up to %d bytes" % sizes[-1]))
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


def repeat_differences(runs, counters, labels, variants=None):
    """What differs between the boots of each configuration that should be the same
    (with variants, {label: [variant name per boot]}, only boots of one variant are
    compared: the spread's boots differ on purpose): (device counter lines, guest
    figure lines), each "CONFIG DEVICE.NAME a/b/..." (or "CONFIG TAG SIZE OP FIELD
    a/b/..."), empty when the boots agree."""
    devices, figures = [], []
    for label in labels:
        names = (variants or {}).get(label) or [None] * len(runs[label])
        for v in dict.fromkeys(names):
            which = [i for i, n in enumerate(names) if n == v]
            if len(which) < 2:
                continue
            tag = label if v in (None, "ref") else "%s[%s]" % (label, v)
            boots = [counters[label][i] for i in which if i < len(counters[label])]
            for dev in sorted({d for b in boots for d in b}):
                for name in sorted({n for b in boots for n in b.get(dev, {})}):
                    vals = [b.get(dev, {}).get(name) for b in boots]
                    if len(set(vals)) > 1:
                        devices.append("%s %s.%s %s" % (tag, dev, name,
                                                        "/".join(str(x) for x in vals)))
            per_boot = [{(t, f.get("size"), f.get("op"), k): x for t, f in runs[label][i]
                         for k, x in f.items()} for i in which]
            for key in sorted({k for b in per_boot for k in b}, key=str):
                vals = [b.get(key) for b in per_boot]
                if len(set(vals)) > 1:
                    figures.append("%s %s %s %s %s %s" % ((tag,) + key + (
                        "/".join(str(x) for x in vals),)))
    return devices, figures


class Counts:
    """One of a study's counts tables, which it prints first: per value of `keys` and per
    configuration, each column's count per operation (the row's `ops` field), the median
    over the boots with the range beside it where the boots differ.  Counts are read from
    the hardware's or the kernel's own state around or inside the window (the unit's
    invalidation queue, /proc/interrupts, swiotlb's copies, the exerciser's own tally), not
    timed: exact, whatever the clock, where `how` does not say otherwise.  `columns`:
    [(name, field)], field a bench field's name or a function of the row's fields giving a
    number or None; a field read as a negative number was not counted ("-")."""

    def __init__(self, tag, keys, ops, columns, what, how, only=None):
        self.tag, self.keys, self.ops, self.columns = tag, keys, ops, columns
        self.what, self.how, self.only = what, how, only

    def value(self, f, field):
        """The count of one row's column, or None where it was not counted."""
        try:
            v = field(f) if callable(field) else int(f[field])
        except (KeyError, ValueError, TypeError):
            return None
        return None if v is None or v < 0 else v

    def per_op(self, runs):
        """{key: {column: [count per op, one per boot]}} of one configuration's boots."""
        out = {}
        for rows in runs:
            for tag, f in rows:
                if tag != self.tag:
                    continue
                try:
                    ops = int(f[self.ops])
                except (KeyError, ValueError):
                    continue
                if ops <= 0:
                    continue
                cols = out.setdefault(tuple(f.get(k) for k in self.keys), {})
                for name, field in self.columns:
                    v = self.value(f, field)
                    if v is not None:
                        cols.setdefault(name, []).append(v / ops)
        return out


def _count_text(values):
    if not values:
        return "-"
    m = median(values)
    lo, hi = min(values), max(values)
    text = "%.3f" % m
    return text if "%.3f" % lo == "%.3f" % hi else "%s (%.3f-%.3f)" % (text, lo, hi)


def count_lines(runs, labels, counts):
    """The counts tables of a study (Counts), first of what it prints: (lines, rows)."""
    if not counts:
        return [], []
    lines = ["counts per operation (exact unless the table says otherwise: read from the "
             "unit's queue, the kernel's own counters or the exerciser's tally, not timed; "
             "median over the boots, range where they differ; - not counted):"]
    rows = []
    for c in counts:
        labels_c = [x for x in labels if not c.only or c.only(x)]
        per = {label: c.per_op(runs.get(label, [])) for label in labels_c}
        keys = list(dict.fromkeys(k for label in labels_c for k in per[label]))
        if not keys:
            continue
        if not any(per[label][k] for label in labels_c for k in per[label]):
            # boots of an exerciser from before these counts, say
            lines.append("%s, %s: none counted in these boots" % (c.tag, c.what))
            continue
        lines.append("%s, %s (%s):" % (c.tag, c.what, c.how))
        head = list(c.keys) + ["config"] + [name for name, _ in c.columns]
        body = []
        for key in keys:
            for label in labels_c:
                cols = per[label].get(key)
                if cols is None:
                    continue
                body.append([str(k) for k in key] + [label] +
                            [_count_text(cols.get(name)) for name, _ in c.columns])
                for name, _ in c.columns:
                    if cols.get(name):
                        rows.append(dict(zip(c.keys, key), tag=c.tag, config=label,
                                         metric="count:%s" % name,
                                         value=round(median(cols[name]), 6)))
        lines += aligned(head, body)
    return lines, rows
