#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the bench scenario without and with QEMU's intel-iommu and compare.

Runs runner.py's bench guest (dmalab_exercise mode=bench) once per
configuration, judges each boot like runner.py does (verification errors,
kernel problems, device counters ... fail), prints both bench tables and
the ops/s ratio "with intel-iommu / without" per copy size and channel
count.  The figures are only reported, never asserted.  The last line is
"guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

# (label, runner arguments): the baseline first
CONFIGS = [
    ("without", ["--device", "dmalab-ioat",
                 "--append", "dmalab_exercise.mode=bench"]),
    ("intel-iommu", ["--device", "intel-iommu", "--device", "dmalab-ioat",
                     "--append", "intel_iommu=on dmalab_exercise.mode=bench"]),
]


def rows_by_key(bench, tag, keys):
    """{(values of keys): fields} of the bench lines tagged tag."""
    return {tuple(f.get(k) for k in keys): f
            for t, f in bench if t == tag}


def ratio(a, b):
    try:
        return "%.2f" % (float(b) / float(a))
    except (TypeError, ValueError, ZeroDivisionError):
        return "-"


def compare(base, other, label):
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
        out.append("%s ops/s, ratio = with %s / without:" % (tag, label))
        for r in [head] + rows:
            out.append("  " + "  ".join(str(v).rjust(w)
                                        for v, w in zip(r, width)))
    return out


def main(argv=None):
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
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)

    rp = runner.make_parser()
    failed = []
    benches = []
    for label, extra in CONFIGS:
        rargs = rp.parse_args(
            ["--qemu", os.path.abspath(args.qemu),
             "--kernel", os.path.abspath(args.kernel),
             "--initrd", os.path.abspath(args.initrd),
             "--name", "%s-%s" % (args.name, label), "--summary",
             "--timeout", str(args.timeout)] + extra + args.runner_arg +
            (["--verbose"] if args.verbose else []))
        runner.check_args(rp, rargs)
        print("==== %s ====" % label, flush=True)
        boot, results, run_reasons = runner.run_once(rargs)
        if args.log_dir:
            with open(os.path.join(args.log_dir, "%s-%s.log" %
                                   (args.name, label)), "w") as f:
                f.write("\n".join(boot.lines) + "\n")
        bad = runner.report_run(results, run_reasons, rargs,
                                run_label=label, verbose=args.verbose,
                                whole=boot)
        failed += bad
        benches.append(sum((facts["bench"] for _, facts, _ in results), []))
        if not bad and not benches[-1]:
            failed.append((label, ["no '# bench' lines from the guest"]))

    print("==== comparison ====")
    for label, bench in zip([c[0] for c in CONFIGS[1:]], benches[1:]):
        for line in compare(benches[0], bench, label):
            print(line)
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
