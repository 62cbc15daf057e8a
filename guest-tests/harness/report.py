# SPDX-License-Identifier: GPL-2.0-or-later
"""What a run prints: the boot summary, the interesting lines of a failed boot,
and the verdict line."""

import re
import sys

from harness.judge import IOAT_LINE_RE
from harness.ktap import bench_tables, strip_ts
from harness.qemu import dsa_stats, ioat_stats, vtd_stats


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else \
                ("%.1f %s" % (n, unit))
        n /= 1024.0
    return str(n)


def print_summary(facts, boot, hdr="boot"):
    print("== %s summary ==" % hdr)
    print("  kernel:        %s" % (facts.kernel or "?"))
    if facts.bound:
        for bdf, ven, dev in facts.bound:
            print("  ioatdma bound: %s vendor=%s device=%s" % (bdf, ven, dev))
    else:
        print("  ioatdma bound: no")
    if facts.bound:
        # ioatdma registers its channels only after its probe-time copy
        # self-test (ioat_probe -> ioat3_dma_self_test) succeeded.
        print("  self-test:     %s" % (
            "passed (channels registered after ioatdma's probe self-test)"
            if facts.channels else "failed: no channels registered"))
    print("  dma channels:  %s %s" % (
        facts.channels if facts.channels is not None else "?",
        " ".join(facts.channel_names)))
    for c in facts.chan_stats:
        print("  %-12s ops=%-5d bytes=%-10s dma_time=%.3f s  %.1f MB/s  "
              "failures=%d" % (c["name"], c["ops"], fmt_bytes(c["bytes"]),
                               c["ns"] / 1e9, c["mbps"], c["failures"]))
    s = facts.summary
    if s:
        print("  total        ops=%-5d bytes=%-10s dma_time=%.3f s  %.1f MB/s  "
              "failures=%d" % (s["ops"], fmt_bytes(s["bytes"]), s["ns"] / 1e9,
                               s["mbps"], s["failures"]))
    cpu = facts.cpu
    if cpu:
        print("  cpu memcpy   ops=%-5d bytes=%-10s cpu_time=%.3f s  %.1f MB/s  "
              "(guest CPU, same length distribution)" % (
                  cpu["ops"], fmt_bytes(cpu["bytes"]), cpu["ns"] / 1e9,
                  cpu["mbps"]))
        if s and cpu["mbps"]:
            print("  dma / cpu:    %.2fx (QEMU's host memcpy behind the device "
                  "over the guest's TCG-emulated memcpy: a property of this "
                  "emulator, not of hardware)" % (s["mbps"] / cpu["mbps"]))
    for n, text in facts.irqs:
        print("  interrupt:    %-8d %s" % (n, text))
    if facts.allowed:
        print("  allowed:      %d expected error line(s) (--allow)" %
              len(facts.allowed))
    if facts.skipped:
        print("  skipped:      %s (--allow-skip)" %
              "; ".join(facts.skipped))
    for d in vtd_stats(boot):
        print("  vtd (QMP):    %s" % d["path"])
        names = [c for c in d["counter-names"] if d[c]]
        for i in range(0, len(names), 4):
            print("                %s" % "  ".join(
                "%s=%d" % (c, d[c]) for c in names[i:i + 4]))
        if d["waits"]:
            print("                wait latency: modelled %.1f us, achieved "
                  "%.1f us on average (max %.1f us)" % (
                      d["wait-modelled-ns"] / d["waits"] / 1e3,
                      d["wait-achieved-ns"] / d["waits"] / 1e3,
                      d["wait-max-achieved-ns"] / 1e3))
    for d in ioat_stats(boot):
        print("  device (QMP): %s descriptors=%d bytes=%s errors=%d "
              "interrupts=%d" % (d["path"], d["descriptors"],
                                 fmt_bytes(d["bytes"]), d["errors"],
                                 d["interrupts"]))
    for d in dsa_stats(boot):
        print("  dsa (QMP):    %s" % d["path"])
        names = d["counter-names"]
        for i in range(0, len(names), 4):
            print("                %s" % "  ".join(
                "%s=%d" % (c, d[c]) for c in names[i:i + 4]))
    if boot.qmp_latencies:
        lat = sorted(boot.qmp_latencies)
        print("  QMP probes:   %d, median %.1f ms, max %.1f ms" % (
            len(lat), 1000 * lat[len(lat) // 2], 1000 * lat[-1]))
    if boot.device_stats is None:
        print("  device (QMP): not read")
    for line in bench_tables(facts.bench):
        print("  %s" % line)
    if facts.init_seen is not None:
        up = facts.init_uptime
        print("  /init reached: %.1f s after QEMU start%s" % (
            facts.init_seen,
            (" (guest uptime %.2f s)" % up) if up is not None else ""))
    if boot.accel:
        print("  accelerator:   %s (%s)" % boot.accel)
    print("  boot wall time: %.1f s (%s%s)" % (
        boot.wall, "ended in a machine reset" if boot.ended_by_reset else
        "qemu exit status %s" % boot.rc, ", timed out" if boot.timed_out
        else ""))


def interesting(lines):
    keep = []
    for raw in lines:
        line = strip_ts(raw)
        if "DMALAB:" in line or "dmalab_exercise" in line or \
                IOAT_LINE_RE.search(line) or re.match(r"^(not )?ok \d|^1\.\.|^KTAP", line):
            keep.append(raw)
    return keep


def report_run(results, run_reasons, args, run_label="", seed=None,
               verbose=False, whole=None):
    """Prints each boot's status line, summary and reasons; returns the
    failures as [(label, reasons)].  whole: the run's Boot, whose serial
    log is printed after a failure (unless verbose)."""
    failed = []
    multi = args.boots > 1 or args.reset_on
    for j, (seg, facts, reasons) in enumerate(results, 1):
        if multi:
            label = "boot %d/%d" % (j, args.boots)
            if run_label:
                label = "%s %s" % (run_label, label)
        else:
            label = run_label or "boot"
        ops = facts.summary["ops"] if facts.summary else 0
        if multi or run_label or reasons:
            print("%s: %s in %.1f s, seed=%s, channels=%s, ops=%d%s%s" % (
                label, "PASS" if not reasons else "FAIL", seg.wall,
                seed if seed is not None else "default", facts.channels,
                ops, ", ended in a reset" if seg.ended_by_reset else "",
                (": " + reasons[0]) if reasons else ""), flush=True)
        if args.summary:
            if seg.accel is None and whole is not None:
                seg.accel = whole.accel
            print_summary(facts, seg, label)
        if reasons:
            failed.append((label, reasons))
            print("---- reasons (%s) ----" % label)
            for r in reasons:
                print("  - %s" % r)
    if run_reasons:
        label = run_label or "run"
        failed.append((label, run_reasons))
        print("---- reasons (%s) ----" % label)
        for r in run_reasons:
            print("  - %s" % r)
    if failed and whole is not None:
        if not verbose:
            print("---- serial log (%s) ----" % (run_label or "run"))
            print("\n".join(whole.lines))
            print("---- end of serial log ----")
        else:
            print("---- key lines (%s) ----" % (run_label or "run"))
            print("\n".join(interesting(whole.lines)))
    sys.stdout.flush()
    return failed


def verdict(name, failed):
    """Prints the last line; returns the exit status."""
    if not failed:
        print("guest %s: PASS" % name)
        return 0
    if len(failed) > 1:
        print("guest %s: FAIL: %d failed (%s); first: %s" % (
            name, len(failed), ", ".join(l for l, _ in failed),
            failed[0][1][0]))
    else:
        print("guest %s: FAIL: %s" % (name, failed[0][1][0]))
    return 1

