#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What sync-start saves a dmalab-ioat descriptor's round trip.

Boots runner.py's memcpy scenario with small copies (--max-len, default 64
bytes: lengths of 1 to 64 bytes; --iterations per channel on 4 channels, the
channels in turn, one copy in flight at a time) with -device
dmalab-ioat,sync-start=off and sync-start=on, alternating, --repeat times
each, judges every boot as runner.py does, and prints the guest's own sum of
submission-to-callback times over all copies (the summary's dma_time: guest
clock, under TCG in effect host time) per boot, and the change of the medians.

With --trace, one more boot each way runs under QEMU's log trace backend
(-trace dmalab_ioat_mmio_write, _decided, _completed, _irq; -msg
timestamp=on; -D FILE) and tools/roundtrip.py splits each descriptor's round
trip from it: doorbell -> start, start -> complete, complete -> message,
message -> doorbell (the guest), host wall time, medians in microseconds.
Tracing itself slows the run, which is why those boots are not the timed ones.

The figures are only reported, never asserted; the last line is
"guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile

sys.dont_write_bytecode = True     # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import runner  # noqa: E402
import roundtrip  # noqa: E402

WAYS = [("sync-start=off", "dmalab-ioat,sync-start=off"),
        ("sync-start=on", "dmalab-ioat,sync-start=on")]
TRACE_EVENTS = ["dmalab_ioat_mmio_write", "dmalab_ioat_decided",
                "dmalab_ioat_completed", "dmalab_ioat_irq"]


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--name", default="roundtrip")
    ap.add_argument("--iterations", type=int, default=1000,
                    help="copies per channel (default 1000: 4000 copies)")
    ap.add_argument("--max-len", type=int, default=64,
                    help="largest copy in bytes (default 64)")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="timed boots each way, alternating (default 3)")
    ap.add_argument("--trace", action="store_true",
                    help="also one traced boot each way, split by tools/roundtrip.py")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per boot")
    ap.add_argument("--log-dir", help="write <name>-<way>-<n>.log (and the "
                                      "trace logs) here")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def boot_plan(args):
    """Return the boots as (n, way, device, traced): timed, then traced."""
    plan = [(i, w, d, False) for i in range(1, max(args.repeat, 1) + 1)
            for w, d in WAYS]
    if args.trace:
        plan += [("traced", w, d, True) for w, d in WAYS]
    return plan


def trace_args(trace_log):
    """Return runner.py's --qemu-arg options tracing a boot into trace_log."""
    extra = []
    for ev in TRACE_EVENTS:
        extra += ["--qemu-arg=-trace", "--qemu-arg=" + ev]
    extra += ["--qemu-arg=-msg", "--qemu-arg=timestamp=on",
              "--qemu-arg=-D", "--qemu-arg=" + trace_log]
    return extra


def boot_args(args, tag, device, extra):
    """Return runner.py's arguments for one boot of the memcpy scenario."""
    return (["--qemu", os.path.abspath(args.qemu),
             "--kernel", os.path.abspath(args.kernel),
             "--initrd", os.path.abspath(args.initrd),
             "--name", tag, "--summary",
             "--device", device,
             "--scenario", "memcpy", "--iterations", str(args.iterations),
             "--max-len", str(args.max_len),
             "--expect-channels", "4", "--min-ops", str(4 * args.iterations),
             "--timeout", str(args.timeout)] + extra)


def run_boots(args):
    """Boot the plan, judged by runner.py; return (failed, sums, spans)."""
    rp = runner.make_parser()
    failed = []
    sums = {w: [] for w, _ in WAYS}
    spans = {}
    tmp = tempfile.mkdtemp(prefix="dmalab-roundtrip-")
    atexit.register(shutil.rmtree, tmp, True)
    for i, way, device, traced in boot_plan(args):
        label = "%s %s" % (way, i)
        tag = "%s-%s" % (args.name, label.replace(" ", "-").replace("=", "-"))
        extra = []
        trace_log = None
        if traced:
            trace_log = os.path.join(args.log_dir or tmp, tag + ".trace")
            extra = trace_args(trace_log)
        boot, results, bad = runner.bench_boot(
            rp, boot_args(args, tag, device, extra),
            label, args.log_dir and os.path.join(args.log_dir, tag + ".log"),
            args.verbose)
        failed += bad
        if bad or not results:
            continue
        if traced:
            spans[way] = roundtrip.breakdown(roundtrip.parse(trace_log))
            if not any(spans[way].values()):
                failed.append((label, ["no round trips in the trace log %s" %
                                       trace_log]))
        else:
            s = results[0][1].summary
            if s:
                sums[way].append((s["ns"] / 1e9, s["ops"]))
    return failed, sums, spans


def print_sums(args, sums):
    """Print the timed boots' sums per way and the ratio of their medians."""
    print("==== round trips: memcpy scenario, copies of at most %d bytes, %d per "
          "boot ====" % (args.max_len, 4 * args.iterations))
    print("guest's sum of submission-to-callback times (guest clock, TCG), per boot:")
    med = {}
    for way, _ in WAYS:
        v = sums[way]
        if v:
            med[way] = statistics.median(t for t, _ in v)
            print("  %-15s %s s (median %.3f s, %.1f us per copy)" % (
                way, ", ".join("%.3f" % t for t, _ in v), med[way],
                med[way] * 1e6 / statistics.median(n for _, n in v)))
        else:
            print("  %-15s -" % way)
    off, on = (med.get(w) for w, _ in WAYS)
    if off and on:
        print("  sync-start=on / off: %.2f (%.0f %% less per round trip)" % (
            on / off, 100 * (1 - on / off)))


def print_spans(spans):
    """Print the traced boots' round-trip spans per way, if any were traced."""
    if not spans:
        return
    print("one traced boot each way, tools/roundtrip.py (host wall time, "
          "microseconds, median / 90th percentile):")
    names = list(next(iter(spans.values())).keys())
    print("  %-22s %s" % ("span", "  ".join("%-22s" % w for w, _ in WAYS)))
    total = {w: 0.0 for w, _ in WAYS}
    for n in names:
        cells = []
        for w, _ in WAYS:
            v = sorted(spans.get(w, {}).get(n, []))
            if v:
                m = statistics.median(v)
                total[w] += m
                cells.append("%-22s" % ("%.1f / %.1f (%d)" % (
                    m, v[int(len(v) * 0.9)], len(v))))
            else:
                cells.append("%-22s" % "-")
        print("  %-22s %s" % (n, "  ".join(cells)))
    print("  %-22s %s" % ("sum of medians", "  ".join(
        "%-22s" % ("%.1f" % total[w] if w in spans else "-") for w, _ in WAYS)))


def main(argv=None):
    """Run the boots, print the figures; return runner.verdict's exit code."""
    args = make_parser().parse_args(argv)
    failed, sums, spans = run_boots(args)
    print_sums(args, sums)
    print_spans(spans)
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
