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
import json
import os
import resource
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_provenance as prov  # noqa: E402
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
    ap.add_argument("--results", metavar="PATH",
                    help="write the run (every boot's bench lines and host costs, the "
                         "provenance) to PATH as JSON, gzip'd if it ends in .gz; "
                         "'bench.py tables PATH' prints the comparison again")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tables"]:
        if len(argv) != 2:
            print("usage: bench.py tables RESULTS.json[.gz]", file=sys.stderr)
            return 2
        return tables_from(argv[1])
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
    # read before the boots: the tree (and its commit) can change during a run
    provenance = prov.provenance(args.qemu, args.kernel, args.initrd) if args.results \
        else None
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
    if args.repeat > 1:
        print("==== medians of %d boots per configuration ====" % args.repeat)
    print("==== comparison ====")
    report([label for label, _ in configs], runs)
    if args.results:
        save_results(args, configs, runs, provenance)
    return runner.verdict(args.name, failed)


def save_results(args, configs, runs, provenance):
    """--results PATH: the set, the runner arguments (the clock), the provenance and
    every boot's bench lines and host costs, which `bench.py tables PATH` reports
    again (PATH.gz is written gzip'd, as docs/results keeps them)."""
    res = {"set": args.set, "repeat": args.repeat, "large_ops": args.large_ops,
           "runner_args": args.runner_arg, "provenance": provenance,
           "kernel_version": prov.image_info(args.kernel).get("kernel_version"),
           "configs": [label for label, _ in configs],
           "boots": {label: [{"bench": [[t, f] for t, f in bench], "cost": list(cost[1:])}
                             for bench, cost in runs[label]] for label, _ in configs}}
    with prov.open_text(args.results, "w") as f:
        json.dump(res, f, indent=1)
    print("results: %s" % args.results)


def tables_from(path):
    """`bench.py tables RESULTS.json[.gz]`: the comparison a run printed, from the
    results file it wrote (--results). Exit status 2 when it is not one."""
    try:
        with prov.open_text(path) as f:
            res = json.load(f)
        labels = res["configs"]
        runs = {label: [([tuple(x) for x in b["bench"]], tuple([label] + b["cost"]))
                        for b in res["boots"][label]] for label in labels}
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:
        print("bench.py tables: %s is not a results file: %s" % (path, e), file=sys.stderr)
        return 2
    prov_ = res.get("provenance") or {}
    print("==== bench --set %s from %s: commit %s%s, Linux %s, %d boot(s) per "
          "configuration, runner %s ====" % (
              res.get("set"), os.path.basename(path), prov_.get("commit", "?"),
              " (dirty)" if prov_.get("dirty") else "", res.get("kernel_version", "?"),
              res.get("repeat", 1), " ".join(res.get("runner_args") or []) or "defaults"))
    report(labels, runs)
    return 0


def report(labels, runs):
    """The ops/s of every configuration against the first's (medians over its boots),
    then the host's CPU and wall time per GiB moved. runs: {label: [(bench lines,
    (label, cpu, wall, moved))]}."""
    benches = [median_bench([b for b, _ in runs[label]]) for label in labels]
    costs = [median_cost([c for _, c in runs[label]]) for label in labels]
    for label, bench in zip(labels[1:], benches[1:]):
        for line in compare(benches[0], bench, label, labels[0]):
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
        if a[3] and b[3] and a[1] and a[2]:
            print("  ratio %s / %s: cpu per byte %.2f, wall per byte %.2f" % (
                b[0], a[0], (b[1] / b[3]) / (a[1] / a[3]),
                (b[2] / b[3]) / (a[2] / a[3])))


if __name__ == "__main__":
    sys.exit(main())
