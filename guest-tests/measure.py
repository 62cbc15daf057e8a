#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab measure: what the DMA API costs, as ratios to a baseline measured in the same run.

--study map (the only one so far): the exerciser's mode=mapcost, which times
dma_map_single(), dma_unmap_single() and a dma_sync_single_for_cpu() +
_for_device() pair, one call at a time, on the DMA engine's PCI device, at
4 KiB and 64 KiB.  Configurations, one boot each in turn, --repeat times:
  no-iommu     no IOMMU: the direct mapping (the baseline)
  vtd-pt       dmalab-vtd, iommu=pt: the device in an identity domain
  vtd-lazy     dmalab-vtd, iommu.strict=0: unmaps queue their IOTLB flush
  vtd-strict   dmalab-vtd, iommu.strict=1: each unmap invalidates and waits

Per operation and size it prints, for each configuration, the median over the
boots of each boot's median (p50) and 99th percentile, the smallest and largest
p50 of the boots (the spread), and p50 over the baseline's p50.

Clock: the guest's (ktime_get_ns).  Under TCG (or KVM) guest time follows the
host's, so a figure is what this host took to emulate the call, not what
hardware takes; with --icount SHIFT (TCG only) guest time counts guest
instructions (-icount shift=SHIFT,sleep=off) and the figures are modelled ones,
the same on any host.  The figures are reported, never asserted; the last line
is "guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from bench import median  # noqa: E402  (the upper median, as the benches take it)

MODE = "dmalab_exercise.mode=mapcost"
STUDIES = {
    "map": [
        ("no-iommu", ["--device", "dmalab-ioat", "--append", MODE]),
        ("vtd-pt", ["--device", "dmalab-vtd", "--device", "dmalab-ioat",
                    "--append", "intel_iommu=on iommu=pt " + MODE]),
        ("vtd-lazy", ["--device", "dmalab-vtd", "--device", "dmalab-ioat",
                      "--append", "intel_iommu=on iommu.strict=0 " + MODE]),
        ("vtd-strict", ["--device", "dmalab-vtd", "--device", "dmalab-ioat",
                        "--append", "intel_iommu=on iommu.strict=1 " + MODE]),
    ],
}


def summarise(runs):
    """{(op, size): (p50 median, p50 min, p50 max, p99 median, boots)} of a
    configuration's boots, each a list of ("bench-map", fields) rows."""
    out = {}
    keys = []
    for rows in runs:
        for tag, f in rows:
            if tag == "bench-map" and (f.get("op"), f.get("size")) not in keys:
                keys.append((f.get("op"), f.get("size")))
    for key in keys:
        p50, p99 = [], []
        for rows in runs:
            for tag, f in rows:
                if tag == "bench-map" and (f.get("op"), f.get("size")) == key:
                    try:
                        p50.append(int(f["p50_ns"]))
                        p99.append(int(f["p99_ns"]))
                    except (KeyError, ValueError):
                        pass
        if p50:
            out[key] = (median(p50), min(p50), max(p50), median(p99), len(p50))
    return out


def table(summaries, labels):
    """Text lines: one block per (op, size), one row per configuration."""
    base = summaries[labels[0]]
    out = []
    for key in base:
        out.append("%s %s bytes (ns per call, guest clock):" % key)
        head = ["config", "p50", "p50 range", "p99", "boots", "p50 / %s" % labels[0]]
        rows = []
        for label in labels:
            s = summaries[label].get(key)
            if not s:
                rows.append([label, "-", "-", "-", "0", "-"])
                continue
            ratio = "%.2f" % (s[0] / base[key][0]) if base[key][0] else "-"
            rows.append([label, str(s[0]), "%d-%d" % (s[1], s[2]), str(s[3]),
                         str(s[4]), ratio])
        width = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        for r in [head] + rows:
            out.append("  " + "  ".join(v.rjust(w) for v, w in zip(r, width)))
    return out


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=sorted(STUDIES), default="map")
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--name", default="measure")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="boots per configuration, alternating (default 3)")
    ap.add_argument("--calls", type=int, default=2000,
                    help="calls timed per operation and size (default 2000)")
    ap.add_argument("--icount", type=int, metavar="SHIFT",
                    help="modelled time: -icount shift=SHIFT,sleep=off (forces TCG)")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--log-dir")
    ap.add_argument("--runner-arg", action="append", default=[],
                    help="one more runner.py argument, for every boot")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    args = make_parser().parse_args(argv)
    configs = STUDIES[args.study]
    clock = ["--append", "dmalab_exercise.mapcost_calls=%d" % args.calls]
    if args.icount is not None:
        clock += ["--accel", "tcg", "--qemu-arg=-icount",
                  "--qemu-arg=shift=%d,sleep=off" % args.icount]
    rp = runner.make_parser()
    failed = []
    runs = {label: [] for label, _ in configs}
    for label, extra in [c for _ in range(max(args.repeat, 1)) for c in configs]:
        boot, results, bad = runner.bench_boot(
            rp,
            ["--qemu", os.path.abspath(args.qemu),
             "--kernel", os.path.abspath(args.kernel),
             "--initrd", os.path.abspath(args.initrd),
             "--name", "%s-%s" % (args.name, label), "--no-counters",
             "--timeout", str(args.timeout)] + extra + clock + args.runner_arg,
            label,
            args.log_dir and os.path.join(args.log_dir, "%s-%s.log" % (args.name, label)),
            args.verbose)
        failed += bad
        rows = sum((facts["bench"] for _, facts, _ in results), [])
        if not bad and not any(t == "bench-map" for t, _ in rows):
            failed.append((label, ["no '# bench-map' lines from the guest"]))
        runs[label].append(rows)
    labels = [label for label, _ in configs]
    summaries = {label: summarise(runs[label]) for label in labels}
    print("==== %s: medians of %d boots per configuration, %s ====" % (
        args.study, max(args.repeat, 1),
        "modelled time (-icount shift=%d)" % args.icount if args.icount is not None
        else "host-driven guest time (not a hardware time)"))
    for line in table(summaries, labels):
        print(line)
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
