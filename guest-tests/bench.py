#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the bench scenario in several IOMMU configurations and compare.

Runs runner.py's bench guest (dmalab_exercise mode=bench) once per
configuration, judges each boot like runner.py does (verification errors,
kernel problems, device counters ... fail), prints the bench tables and
the ops/s ratio of each configuration over the first one, per copy size and
channel count, and the host CPU time QEMU spent per GiB the device moved.
--set iommu (default): without an IOMMU, then QEMU's intel-iommu.
--set vtd: QEMU's intel-iommu, then dmalab-vtd without modelled walk time (the
emulation's own cost), then dmalab-vtd with its default walk cost, lazy and
strict (the modelled cost of translation).
--set host-cost: without an IOMMU, intel-iommu, and dmalab-vtd with every modelled
cost off (walks and invalidations): the host cost of translating through the unit.
--set walks: without an IOMMU, then dmalab-vtd (lazy) with its paging-structure caches
off, with them (the default), and without walk cost: what the modelled walks cost.
--set builds --qemu-b PATH: the same guest, without an IOMMU, one copy in flight
per channel (bench_depth=1), on --qemu and then on another QEMU build (for
example one built from an older commit with its own DMALAB_CACHE): what a change
to QEMU or the device glue costs a copy's round trip.  Device counters are not
read (an older build may not have them).
The figures are only reported, never asserted.  The last line is
"guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import os
import resource
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

# (label, runner arguments): the baseline first
WITHOUT = ("without", ["--device", "dmalab-ioat",
                       "--append", "dmalab_exercise.mode=bench"])
INTEL = ("intel-iommu", ["--device", "intel-iommu", "--device", "dmalab-ioat",
                         "--append", "intel_iommu=on dmalab_exercise.mode=bench"])
# dmalab-vtd without modelled walk time: what the emulation itself costs, beside
# intel-iommu (which models none); then with the default walk cost, lazy and strict.
VTD_FREE = ("vtd-no-walk-cost", ["--device", "dmalab-vtd,walk-read-ns=0",
                                 "--device", "dmalab-ioat", "--append",
                                 "intel_iommu=on dmalab_exercise.mode=bench"])
VTD = ("vtd-lazy", ["--device", "dmalab-vtd", "--device", "dmalab-ioat",
                    "--append", "intel_iommu=on dmalab_exercise.mode=bench"])
VTD_STRICT = ("vtd-strict", ["--device", "dmalab-vtd", "--device", "dmalab-ioat",
                             "--append", "intel_iommu=on iommu.strict=1 "
                             "dmalab_exercise.mode=bench"])
# Every modelled cost off (walks and invalidations): what translating through the unit
# costs the host, against no IOMMU and intel-iommu in the same run.
VTD_NO_COST = ("vtd-no-cost", ["--device", "dmalab-vtd,walk-read-ns=0,inv-desc-ns=0,"
                               "inv-page-ns=0,wait-ns=0",
                               "--device", "dmalab-ioat", "--append",
                               "intel_iommu=on dmalab_exercise.mode=bench"])
# dmalab-vtd with its paging-structure caches off: every IOTLB miss walks all four levels
# (the unit before they existed), beside the default (lazy) and without walk cost.
VTD_NO_PSC = ("vtd-no-psc", ["--device", "dmalab-vtd,pde-cache=0,pdpe-cache=0,pml4e-cache=0",
                             "--device", "dmalab-ioat", "--append",
                             "intel_iommu=on dmalab_exercise.mode=bench"])
# Two QEMU builds, the same guest: the second gets --qemu-b in main().
ROUND_TRIP = ["--device", "dmalab-ioat", "--no-counters", "--append",
              "dmalab_exercise.mode=bench dmalab_exercise.bench_depth=1"]
SETS = {"iommu": [WITHOUT, INTEL], "vtd": [INTEL, VTD_FREE, VTD, VTD_STRICT],
        "host-cost": [WITHOUT, INTEL, VTD_NO_COST],
        "walks": [WITHOUT, VTD_NO_PSC, VTD, VTD_FREE],
        "builds": [("qemu", ROUND_TRIP), ("qemu-b", ROUND_TRIP)]}


def rows_by_key(bench, tag, keys):
    """{(values of keys): fields} of the bench lines tagged tag."""
    return {tuple(f.get(k) for k in keys): f
            for t, f in bench if t == tag}


def ratio(a, b):
    try:
        return "%.2f" % (float(b) / float(a))
    except (TypeError, ValueError, ZeroDivisionError):
        return "-"


def compare(base, other, label, base_label="without"):
    """Text lines: ops/s of two configurations and their ratio."""
    out = []
    for tag, keys in (("bench", ("size", "channels")),
                      ("bench-cpu", ("size",))):
        a = rows_by_key(base, tag, keys)
        b = rows_by_key(other, tag, keys)
        if not a:
            continue
        head = list(keys) + ["ops_per_s", "ops_per_s(%s)" % label,
                             "ratio"]
        rows = [list(k) + [a[k].get("ops_per_s", "-"),
                           b.get(k, {}).get("ops_per_s", "-"),
                           ratio(a[k].get("ops_per_s"),
                                 b.get(k, {}).get("ops_per_s"))]
                for k in a]
        width = [max(len(str(r[i])) for r in [head] + rows)
                 for i in range(len(head))]
        out.append("%s ops/s, ratio = %s / %s:" % (tag, label, base_label))
        for r in [head] + rows:
            out.append("  " + "  ".join(str(v).rjust(w)
                                        for v, w in zip(r, width)))
    return out


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if v else None


def median_bench(runs):
    """One bench line list whose ops_per_s are the medians over runs."""
    if len(runs) == 1:
        return runs[0]
    out = []
    for tag, fields in runs[0]:
        keys = ("size", "channels") if tag == "bench" else ("size",)
        same = [f for r in runs for t, f in r if t == tag and
                all(f.get(k) == fields.get(k) for k in keys)]
        try:
            ops = median(float(f["ops_per_s"]) for f in same)
        except (KeyError, ValueError):
            ops = None
        out.append((tag, dict(fields, ops_per_s="%.1f" % ops
                              if ops is not None else "-")))
    return out


def median_cost(costs):
    """(label, cpu, wall, moved) with the median CPU and wall per byte."""
    good = [c for c in costs if c[3]]
    if not good:
        return costs[0]
    cpu = median(c[1] / c[3] for c in good)
    wall = median(c[2] / c[3] for c in good)
    moved = good[0][3]
    return (costs[0][0], cpu * moved, wall * moved, moved)


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--name", default="bench-compare")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per boot")
    ap.add_argument("--log-dir", help="write <name>-<config>.log here")
    ap.add_argument("--runner-arg", action="append", default=[],
                    help="extra runner.py argument for both boots "
                         "(repeatable)")
    ap.add_argument("--large-ops", type=int, default=400, metavar="N",
                    help="1 MiB copies per configuration in the guest (default "
                         "400: the module's own 100 take about 30 ms, too short "
                         "to measure on a busy host)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="boot each configuration N times, alternating, and "
                         "report medians (default 1)")
    ap.add_argument("--set", choices=sorted(SETS), default="iommu",
                    help="which configurations to compare (default iommu)")
    ap.add_argument("--qemu-b", metavar="PATH",
                    help="--set builds: the second QEMU binary")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    ap = make_parser()
    args = ap.parse_args(argv)
    configs = SETS[args.set]
    if args.set == "builds":
        if not args.qemu_b:
            ap.error("--set builds needs --qemu-b")
        b_label, b_extra = configs[1]
        configs = [configs[0],
                   (b_label, b_extra + ["--qemu", os.path.abspath(args.qemu_b)])]
    elif args.qemu_b:
        ap.error("--qemu-b goes with --set builds")

    rp = runner.make_parser()
    failed = []
    runs = {label: [] for label, _ in configs}   # label -> [(bench, cost)]
    for label, extra in [c for _ in range(max(args.repeat, 1)) for c in configs]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        boot, results, bad = runner.bench_boot(
            rp,
            ["--qemu", os.path.abspath(args.qemu),
             "--kernel", os.path.abspath(args.kernel),
             "--initrd", os.path.abspath(args.initrd),
             "--name", "%s-%s" % (args.name, label), "--summary",
             "--timeout", str(args.timeout)] + extra +
            ["--append", "dmalab_exercise.bench_ops_large=%d" % args.large_ops] +
            args.runner_arg,
            label,
            args.log_dir and os.path.join(args.log_dir,
                                          "%s-%s.log" % (args.name, label)),
            args.verbose)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + \
            (after.ru_stime - before.ru_stime)
        moved = sum(d["bytes"] for d in runner.ioat_stats(boot))
        failed += bad
        bench_lines = sum((facts.bench for _, facts, _ in results), [])
        if not bad and not bench_lines:
            failed.append((label, ["no '# bench' lines from the guest"]))
        runs[label].append((bench_lines, (label, cpu, boot.wall, moved)))
    benches = [median_bench([b for b, _ in runs[label]]) for label, _ in configs]
    costs = [median_cost([c for _, c in runs[label]]) for label, _ in configs]
    if args.repeat > 1:
        print("==== medians of %d boots per configuration ====" % args.repeat)

    print("==== comparison ====")
    for label, bench in zip([c[0] for c in configs[1:]], benches[1:]):
        for line in compare(benches[0], bench, label, configs[0][0]):
            print(line)
    print("QEMU host CPU time and wall time per GiB dmalab-ioat moved, whole "
          "boot (firmware and kernel boot included):")
    gib = 1 << 30
    for label, cpu, wall, moved in costs:
        if moved:
            print("  %-12s cpu %.2f s/GiB  wall %.2f s/GiB  (%.1f s cpu, "
                  "%.1f s wall, %.2f GiB)" % (label, cpu * gib / moved,
                                              wall * gib / moved, cpu, wall,
                                              moved / gib))
    a = costs[0]
    for b in costs[1:]:
        if a[3] and b[3]:
            print("  ratio %s / %s: cpu per byte %.2f, wall per byte %.2f" % (
                b[0], a[0], (b[1] / b[3]) / (a[1] / a[3]),
                (b[2] / b[3]) / (a[2] / a[3])))
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
