#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the DMA race detector costs a guest: the same boot without and with it.

Boots runner.py's memcpy scenario (--iterations copies per channel on 4
channels, then the guest CPU's memcpy baseline) under TCG without the race
detector and with it (--race-plugin, as ./dmalab race and the race-cpuwrite
test load it), alternating, --repeat times each way, judges every boot as
runner.py does, and prints per boot and as the ratio of the medians:
  boot to power-off     host wall time of the whole QEMU run
  QEMU start to /init   host wall time until the guest's /init spoke
  guest CPU memcpy      MB/s, timed by the guest's clock
  guest DMA copy rate   MB/s, submission to callback, timed by the guest's clock
Both ways run under TCG (a plugin needs it), so the ratios compare like with
like.  The figures are only reported, never asserted; the last line is
"guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import os
import statistics
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

MEASURES = [
    # (label, unit, function of (boot, facts) giving the value or None)
    ("boot to power-off (host wall)", "s", lambda b, f: b.wall),
    ("QEMU start to /init (host wall)", "s", lambda b, f: f.init_seen),
    ("guest CPU memcpy (guest clock)", "MB/s",
     lambda b, f: (f.cpu or {}).get("mbps")),
    ("guest DMA copy rate (guest clock)", "MB/s",
     lambda b, f: (f.summary or {}).get("mbps")),
]


def fmt(values, unit):
    if not values:
        return "-"
    form = "%.1f" if unit == "s" else "%.0f"
    return ", ".join(form % v for v in values) + " " + unit


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--race-plugin", required=True, metavar="SO",
                    help="libdmalab-race.so (build/tools/race-detector/)")
    ap.add_argument("--name", default="race-cost")
    ap.add_argument("--iterations", type=int, default=100,
                    help="verified copies per channel (default 100: 400 copies)")
    ap.add_argument("--repeat", type=int, default=2, metavar="N",
                    help="boots each way, alternating (default 2)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per boot")
    ap.add_argument("--log-dir", help="write <name>-<way>-<n>.log here")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    args = make_parser().parse_args(argv)

    ways = [("without", []),
            ("with the plugin", ["--race-plugin", os.path.abspath(args.race_plugin)])]
    rp = runner.make_parser()
    failed = []
    values = {w: [[] for _ in MEASURES] for w, _ in ways}
    for i in range(1, max(args.repeat, 1) + 1):
        for way, extra in ways:
            label = "%s %d" % (way, i)
            name = "%s-%s" % (args.name, label.replace(" ", "-"))
            boot, results, bad = runner.bench_boot(
                rp,
                ["--qemu", os.path.abspath(args.qemu),
                 "--kernel", os.path.abspath(args.kernel),
                 "--initrd", os.path.abspath(args.initrd),
                 "--name", name, "--summary", "--accel", "tcg",
                 "--scenario", "memcpy", "--iterations", str(args.iterations),
                 "--expect-channels", "4", "--min-ops", str(4 * args.iterations),
                 "--timeout", str(args.timeout)] + extra,
                label, args.log_dir and os.path.join(args.log_dir, name + ".log"),
                args.verbose)
            failed += bad
            if bad or not results:
                continue
            facts = results[0][1]
            for k, (_, _, get) in enumerate(MEASURES):
                v = get(boot, facts)
                if v is not None:
                    values[way][k].append(float(v))

    print("==== race detector cost: memcpy scenario, %d copies per boot, %d boot(s) "
          "each way, TCG ====" % (4 * args.iterations, max(args.repeat, 1)))
    head = ["measure", ways[0][0], ways[1][0], "ratio of medians"]
    rows = []
    for k, (name, unit, _) in enumerate(MEASURES):
        a, b = values[ways[0][0]][k], values[ways[1][0]][k]
        r = "%.2fx" % (statistics.median(b) / statistics.median(a)) \
            if a and b and statistics.median(a) else "-"
        rows.append([name, fmt(a, unit), fmt(b, unit), r])
    width = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    for r in [head] + rows:
        print("  " + "  ".join(v.ljust(w) for v, w in zip(r, width)).rstrip())
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
