#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Instruction profiles of the copy-cost workload, without an IOMMU and behind dmalab-vtd.

Boots the iommu-flush study's copy workload (the exerciser's mode=copycost:
mapped copies through dmalab-ioat at 1,000 per second, one CPU, the study's
engine timing) on the modelled clock (-icount shift=5, deterministic guest
instruction counts) with the instruction profiler (runner.py --profile-plugin),
once per configuration: no-iommu (the baseline, first) and vtd-strict by
default; --nic adds the study's pktgen workload (init.sh's windows).  Prints
guest-tests/profile.py's tables: the top symbols per operation of each window
kind per configuration, and each configuration minus the baseline.

Checks, per boot: the plugin saw as many windows as the guest says it opened
("# dmalab-profile windows=N" lines), no stray, nested or unclosed marker;
every window ran instructions; each copy and packet window's operations (the
close marker's %rax) equal the copies and packets the guest's bench lines
report.  And per configuration whose label says strict, against the baseline:
more instructions per copy in every copy window, and among its --top symbols
that the baseline never ran in the 4 KiB copy window, one of Linux's strict
unmap path (UNMAP_PATH).  No expected count is written down anywhere.

--judge DIR checks and prints the profiles a run left in DIR (--log-dir)
without booting.  --cost boots each configuration also without the plugin
(same command line otherwise), alternating, and prints the host wall time and
QEMU's host CPU time of each boot and the ratios of the medians; the guest
runs the same instructions either way, so its bench figures must not differ.
The last line is "guest <name>: PASS" or "guest <name>: FAIL: <reason>".
"""

import argparse
import importlib.util
import os
import re
import resource
import shutil
import statistics
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from harness.insn_profile import kallsyms_path  # noqa: E402
from harness.ktap import parse_bench, strip_ts  # noqa: E402
from measure import COPY_ENGINE, modelled_clock  # noqa: E402
from studies.iommu_flush import nic_args  # noqa: E402

# The pktgen workload profiled: the two e1000e of the iommu-flush study, 64 and 1,500 bytes.
NIC = nic_args(("e1000e",), "64,1500")


def _profile_module():
    """guest-tests/profile.py, under a name that is not the standard library's."""
    spec = importlib.util.spec_from_file_location(
        "dmalab_profile", os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


prof = _profile_module()

IOAT = "dmalab-ioat," + COPY_ENGINE
VTD = ["--device", "dmalab-vtd", "--device", IOAT, "--append"]
CONFIGS = {
    "no-iommu": ["--device", IOAT],
    "vtd-lazy": VTD + ["intel_iommu=on iommu.strict=0"],
    "vtd-strict": VTD + ["intel_iommu=on iommu.strict=1"],
    "intel-strict": ["--device", "intel-iommu", "--device", IOAT,
                     "--append", "intel_iommu=on iommu.strict=1"],
}

# Linux's strict unmap path behind an Intel IOMMU, 6.1 and 6.12 (drivers/iommu/dma-iommu.c,
# iommu.c, intel/iommu.c, intel/dmar.c, intel/cache.c): what dma_unmap_single() runs
# below dma_unmap_page_attrs() to clear the page tables, invalidate the IOTLB and wait.
UNMAP_PATH = {
    "iommu_dma_unmap_page", "__iommu_dma_unmap", "iommu_unmap_fast", "__iommu_unmap",
    "intel_iommu_unmap_pages", "intel_iommu_unmap", "domain_unmap", "dma_pte_clear_range",
    "dma_pte_clear_level", "dma_pte_list_pagetables", "iommu_iotlb_sync",
    "intel_iommu_tlb_sync", "iommu_flush_iotlb_psi", "qi_flush_iotlb", "qi_submit_sync",
    "cache_tag_flush_range", "qi_batch_flush_descs", "qi_batch_add_iotlb",
}

WINDOWS_RE = re.compile(r"^# dmalab-profile windows=(\d+) source=(\S+)")


def bench_rows(lines):
    """(tag, {key: value}) of a serial log's bench lines."""
    return [r for r in (parse_bench(strip_ts(line)) for line in lines) if r]


def guest_windows(lines):
    """The windows the guest says it opened: {source: N}."""
    out = {}
    for line in lines:
        m = WINDOWS_RE.search(strip_ts(line))
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


def check_boot(lines, profile):
    """Reasons one boot's profile is not what its guest did ([] when it is)."""
    why = []
    s = profile.summary
    opened = guest_windows(lines)
    if not opened:
        why.append("the guest printed no '# dmalab-profile windows=' line")
    elif s.get("windows") != sum(opened.values()):
        why.append("the plugin saw %s windows, the guest opened %d (%s)" % (
            s.get("windows"), sum(opened.values()),
            ", ".join("%s %d" % kv for kv in opened.items())))
    for k in ("nested", "stray", "unclosed", "inexact", "ids_dropped", "blocks_dropped"):
        if s.get(k):
            why.append("the plugin counted %s=%d" % (k, s[k]))
    empty = [w["seq"] for w in profile.windows if w["insns"] <= 0]
    if empty:
        why.append("window(s) %s ran no instructions" % ", ".join(map(str, empty)))
    reported = {}   # window id -> operations the guest's bench lines report (all rates, NICs)
    for tag, f in bench_rows(lines):
        kind, n = {"bench-copy": ("copy", "copies"), "bench-nic": ("nic", "sent")}.get(
            tag, (None, None))
        if not kind or n not in f or "size" not in f:
            continue
        wid = prof.window_id("%s-%s" % (kind, f["size"]))
        reported[wid] = reported.get(wid, 0) + int(f[n])
    for wid, ops in reported.items():
        if wid not in profile.ids():
            why.append("no %s window in the profile" % prof.window_name(wid))
        elif profile.ops(wid) != ops:
            why.append("window %s: %d operations recorded, the guest reports %d" % (
                prof.window_name(wid), profile.ops(wid), ops))
    return why


def check_strict(label, base_label, cfg, base, top):
    """Reasons a strict configuration's profile does not show what strict
    flushing costs over the baseline's."""
    (_, p, sym), (_, bp, bsym) = cfg, base
    why = []
    copies = [w for w in p.ids() if prof.window_name(w).startswith("copy-")]
    if not copies:
        why.append("%s: no copy window" % label)
    for wid in copies:
        mine, theirs = prof.per_op(p, sym, wid)[0], prof.per_op(bp, bsym, wid)[0]
        if not mine > theirs:
            why.append("%s: %s instructions per copy in %s, not more than %s's %s" % (
                label, prof.fmt(mine), prof.window_name(wid), base_label, prof.fmt(theirs)))
    wid = prof.window_id("copy-4096")
    only = prof.only_in(prof.per_op(p, sym, wid)[1], prof.per_op(bp, bsym, wid)[1])[:top]
    if not UNMAP_PATH & set(only):
        why.append("%s: none of the top %d symbols %s never ran in copy-4096 (%s) is on "
                   "the strict unmap path" % (label, top, base_label, ", ".join(only) or "none"))
    return why


def judge(configs, logs, top):
    """(report lines, failures) for [(label, Profile, Symbols)] and their serial
    logs' lines; the first configuration is the baseline."""
    failed = []
    for (label, p, _), lines in zip(configs, logs):
        why = check_boot(lines, p)
        if why:
            failed.append((label, why))
    for cfg in configs[1:]:
        if "strict" in cfg[0]:
            why = check_strict(cfg[0], configs[0][0], cfg, configs[0], top)
            if why:
                failed.append((cfg[0], why))
    return prof.report(configs, top), failed


def saved(log_dir, name, label):
    stem = os.path.join(log_dir, "%s-%s" % (name, label))
    return stem + ".log", stem + ".profile"


def load(log_dir, name, labels):
    """The configurations a run left in log_dir, and their logs' lines."""
    configs, logs = [], []
    for label in labels:
        log, path = saved(log_dir, name, label)
        with open(log, errors="replace") as f:
            logs.append(f.read().splitlines())
        configs.append((label, prof.read_profile(path), prof.read_symbols(kallsyms_path(path))))
    return configs, logs


def children_cpu():
    """Host CPU seconds (user + system) of this process's children so far: QEMU's,
    once the runner has waited for it."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def boot_args(args, label):
    params = {"cryptomgr.notests": 1, "dmalab_exercise.mode": "copycost",
              "dmalab_exercise.copycost_rate": 1000,
              "dmalab_exercise.copycost_ms": 300 if args.quick else 2000}
    extra = []
    if args.nic:
        params.update({"dmalab.pktgen_rate": 1000,
                       "dmalab.pktgen_count": 300 if args.quick else 2000})
        extra = NIC
    return (["--qemu", os.path.abspath(args.qemu), "--kernel", os.path.abspath(args.kernel),
             "--initrd", os.path.abspath(args.initrd), "--smp", "1",
             "--timeout", str(args.timeout), "--name", "%s-%s" % (args.name, label)] +
            CONFIGS[label] + extra +
            # last: these words win over the NIC arguments' on the command line
            ["--append", " ".join("%s=%s" % kv for kv in params.items())] + modelled_clock(5))


def run(args):
    """Boots every configuration (and with --cost each also without the
    plugin); returns (configs, logs, failures)."""
    rp = runner.make_parser()
    failed, configs, logs = [], [], []
    walls, cpus = {}, {}
    plugin = args.profile_plugin + (",count=insn" if args.count == "insn" else "")
    ways = [("with", ["--profile-plugin", plugin])]
    if args.cost:
        # the same guest and command line, the plugin left out: its -serial kept,
        # /init told to profile (it marks windows and writes kallsyms all the same)
        ways.append(("without", ["--append", "dmalab.profile=1",
                                 "--qemu-arg=-serial", "--qemu-arg=file:/dev/null"]))
    figures = {}
    for i in range(args.repeat if args.cost else 1):
        for label in args.config:
            for way, extra in ways:
                tag = "%s %s %d" % (label, way, i + 1) if args.cost else label
                log = args.log_dir and saved(args.log_dir, args.name, label)[0]
                if way == "without" or i:
                    log = args.log_dir and os.path.join(
                        args.log_dir, "%s-%s-%s-%d.log" % (args.name, label, way, i + 1))
                cpu0 = children_cpu()
                boot, results, bad = runner.bench_boot(rp, boot_args(args, label) + extra,
                                                       tag, log, args.verbose)
                failed += bad
                walls.setdefault((label, way), []).append(boot.wall)
                cpus.setdefault((label, way), []).append(children_cpu() - cpu0)
                figures.setdefault(label, {}).setdefault(way, []).append(
                    sorted(str(r) for r in bench_rows(boot.lines)))
                if way != "with" or i:
                    continue
                path = getattr(boot, "profile", None)
                try:
                    p = prof.read_profile(path)
                    sym = prof.read_symbols(kallsyms_path(path))
                except (OSError, TypeError, prof.ProfileError) as e:
                    failed.append((label, ["no profile: %s" % e]))
                    continue
                if args.log_dir:
                    _, keep = saved(args.log_dir, args.name, label)
                    shutil.copyfile(path, keep)
                    shutil.copyfile(kallsyms_path(path), kallsyms_path(keep))
                configs.append((label, p, sym))
                logs.append(boot.lines)
    if args.cost:
        print("==== the profiler's cost per boot (QEMU start to exit), %d boot(s) each way: "
              "host wall time, and QEMU's host CPU time (user + system) ====" % args.repeat)
        for label in args.config:
            same = all(f == figures[label]["with"][0] for fs in figures[label].values()
                       for f in fs)
            for what, t in (("wall", walls), ("cpu", cpus)):
                w, wo = t[(label, "with")], t[(label, "without")]
                print("  %-12s %-4s with %s s, without %s s, ratio of medians %.2fx" % (
                    label, what, ", ".join("%.1f" % v for v in w),
                    ", ".join("%.1f" % v for v in wo),
                    statistics.median(w) / statistics.median(wo)))
            print("  %-12s guest figures with and without: %s" % (
                label, "identical" if same else "DIFFER"))
            if not same:
                # on the modelled clock the plugin must not change what the guest runs
                failed.append((label, ["the guest's bench figures differ between boots with "
                                       "and without the plugin"]))
    return configs, logs, failed


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu")
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    ap.add_argument("--profile-plugin", metavar="SO", help="libdmalab-profile.so")
    ap.add_argument("--name", default="profile")
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS),
                    help="a configuration, in order, the first the baseline (default "
                    "no-iommu, vtd-strict)")
    ap.add_argument("--quick", action="store_true",
                    help="300 ms of copies per size (300 packets with --nic), not 2 s")
    ap.add_argument("--nic", action="store_true", help="the pktgen workload too")
    ap.add_argument("--count", choices=("tb", "insn"), default="tb",
                    help="the plugin's count (insn: exact, slower)")
    ap.add_argument("--cost", action="store_true",
                    help="boot each configuration without the plugin too, and compare")
    ap.add_argument("--repeat", type=int, default=2,
                    help="with --cost: boots each way (default 2)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--log-dir", help="where the logs, profiles and kallsyms go")
    ap.add_argument("--judge", metavar="DIR",
                    help="check the profiles a run left in DIR instead of booting")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    ap = make_parser()
    args = ap.parse_args(argv)
    args.config = args.config or ["no-iommu", "vtd-strict"]
    if len(set(args.config)) != len(args.config):
        ap.error("a configuration is named twice")
    if args.judge:
        try:
            configs, logs = load(args.judge, args.name, args.config)
        except (OSError, prof.ProfileError) as e:
            print("profile_bench.py: %s" % e, file=sys.stderr)
            return 2
        failed = []
    else:
        for opt in ("qemu", "kernel", "initrd", "profile_plugin"):
            if not getattr(args, opt):
                ap.error("--%s is required (unless --judge)" % opt.replace("_", "-"))
        configs, logs, failed = run(args)
    if len(configs) == len(args.config):
        lines, bad = judge(configs, logs, args.top)
        print("\n".join(lines))
        failed += bad
    else:
        failed.append(("profiles", ["%d of %d configurations have a profile" % (
            len(configs), len(args.config))]))
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
