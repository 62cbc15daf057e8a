#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab measure: what the DMA API costs, as ratios to a baseline measured in the same run.

--study dma-api: the exerciser's mode=mapcost, which times
dma_map_single(), dma_unmap_single() and a dma_sync_single_for_cpu() +
_for_device() pair, one call at a time, on the DMA engine's PCI device, at
4 KiB and 64 KiB.  Configurations, one boot each in turn, --repeat times:
  no-iommu     no IOMMU: the direct mapping (the baseline)
  vtd-pt       dmalab-vtd, iommu=pt: the device in an identity domain
  vtd-lazy     dmalab-vtd, iommu.strict=0: unmaps queue their IOTLB flush
  vtd-strict   dmalab-vtd, iommu.strict=1: each unmap invalidates and waits
  intel-lazy, intel-strict   the same behind QEMU's intel-iommu, the peer
  vtd-cm       dmalab-vtd, caching-mode=on: strict, and each map invalidates too

Per operation and size it prints, for each configuration, the mean per call less
the mean of an empty timed region (the median over the boots of that, with the
smallest and largest boot beside it: the spread), the median and 99th percentile
likewise, the ratio to the baseline, and what a byte of the CPU's own memcpy()
and memset() costs (the same in every configuration: a consistency check).

--study iommu-flush (studies/iommu_flush.py), on a modelled CPU of 1 ns per
guest instruction (-icount shift=0; --icount N for 2^N ns), one CPU: the
exerciser's mode=copycost, copies through dmalab-ioat each mapped and unmapped
as a driver would, 4, 16 and 64 KiB; pktgen packets of 64, 512 and 1,500 bytes
between two e1000e and between two igb (init.sh's nic_pktgen); each at offered
rates up to back to back (--rates, default 1000,2000,5000,10000,0; --rate N one
rate); and scatter-gather maps and unmaps with the invalidation waits the unit
processed.  No IOMMU, dmalab-vtd pass-through, lazy and strict, dmalab-vtd in
scalable mode lazy and strict (vtd-sm-*), intel-iommu lazy and strict.  Per rate and size: the gross guest CPU time (wall minus idle, in
us) per operation, the utilisation, and the ratios strict / lazy /
pass-through / none beside the 2008 DMAR thread's 2.27 / 1.64 / 1.00; then
what a copy's figure is made of (instructions, the unit's waits, the engine's
time), with --profile SO the instruction profiles.

--study swiotlb: mode=mapcost again, on a one-CPU guest (with two, Linux
distrusted the TSC and timed with the 279 ns ACPI PM timer), without an IOMMU,
with and without swiotlb=force; the memcpy row is the guest CPU's own copy of
the buffer, what each bounce is made of.  The bench-swiotlb table is what
swiotlb bounced meanwhile (init.sh's dmalab.swiotlb_stats: the swiotlb_bounced
trace event summed by a histogram trigger, one per bounced mapping, and the
pool's slabs from debugfs).  It needs the image with the patched ioatdma
(guest-tests/ioatdma_patched.py): Debian's refuses the device under
swiotlb=force.

--study offload: the exerciser's mode=offload, NET_DMA's trade: per size
(256 B to 64 KiB) the guest CPU's busy time per chunk for its own memcpy() and
for a copy through dmalab-ioat waited for at once ("wait"), overlapped with
the CPU's own copy ("overlap") or synchronised before it ("ordered"), on a
one-CPU guest at 1 ns per guest instruction, with the study's engine, a slower
one, and a CPU whose copy costs an instruction per byte; each kind's cost over
the CPU copy's per size and the crossover, the size from which on offloading
costs less.  Then md RAID5 and RAID6 writes (init.sh's mdcost scenario) with
the parity on the CPU (skx) and offloaded (bwd): busy time per MiB written.

--study udp (studies/udp.py): iperf3 (Debian's, in the image of net_image.py) sending
UDP from one NIC of a one-CPU guest to another in a network namespace of its own, two
e1000e and two igb (init.sh's dmalab.iperf): 16 KiB datagrams at 100, 200 and 400 Mbit/s
and 32-byte ones as fast as it can, each run one second with its middle 500 ms measured, on
the modelled CPU (1 ns per guest instruction, QEMU's max CPU without the fast-string
features); the same configurations as iommu-flush without scalable mode.  Per NIC, size and
rate: the gross guest CPU per datagram and the utilisation (at a fixed rate) or the
datagrams per second (at saturation), each over no IOMMU's, beside the 2008 thread's
figures with whether the metric and the workload are the same.

--study xdp (studies/xdp.py): pktgen from one igb of a one-CPU guest to the other (init.sh's
dmalab.xsk) at 1,000 and 5,000 packets/s, 64- and 1,500-byte frames, received first by the
kernel's stack alone and then by an AF_XDP socket that drops every frame (dmalab-xsk, in the
image of net_image.py: libxdp's program in driver mode, the socket in copy mode), without an
IOMMU, without (no-bounce) and with swiotlb=force (swiotlb), no DMA engine, on the modelled
CPU.  Per receiver, size and rate: the gross guest CPU per packet, counted first the
interrupts, swiotlb's copies and bytes and the DMA API's syncs, maps and unmaps per packet
(a counting pass after each window), and beside the seed's figure (an AF_XDP receive path
lost about 9% to syncs that bounced nothing) the socket's CPU over the stack's and
swiotlb's over no-bounce's, with whether the metric and the workload are the same.

Every study prints its counts first (measure_tables.Counts, docs/measure.rst, Counts and
times): per operation, invalidation descriptors and waits from the remapping unit's queue as
the exerciser reads it, bytes bounced, interrupts, engine copies; exact and untimed.  With
--profile, the instruction profiles follow them.

--smp N (2 or more): the guest gets N CPUs (on the modelled clock with tsc=reliable: every
vCPU's TSC reads the one virtual clock), and dma-api and iommu-flush add windows in which
every CPU maps and unmaps (bench-mapmt) or copies on a channel of its own (bench-copymt) at
once.  Under -icount QEMU runs the vCPUs in turn on one host thread and the virtual clock
counts every vCPU's instructions: N busy CPUs share one 1-GIPS clock, so their times are
not N CPUs' times; their counts are exact (docs/measure.rst, More than one CPU).

--quick: fewer calls and shorter windows, one boot per configuration unless
--repeat says otherwise; a smoke run of the machinery, not a measurement to
quote.  --same-counts (modelled clock, --repeat 2 or more): fail unless the
boots of each configuration end with the same device counters.

Clock: the guest's (ktime_get_ns).  Under TCG (or KVM) guest time follows the
host's, so a figure is what this host took to emulate the work, not what
hardware takes; with --icount SHIFT (TCG only) guest time counts guest
instructions (-icount shift=SHIFT,sleep=off, with QEMU's guest random numbers
seeded and the RTC on virtual time) and the figures are modelled ones, which
do not depend on the host: boots of one configuration agree.

What each boot must show for its figures to mean what they say is checked
(measure_checks.py): where a mapped page lands (translated, identity or
bounced), the device's IOMMU domain and the kernel's flush policy line per
configuration; that every copy slept (modelled clock), that every packet sent
was received or counted lost, that swiotlb bounced under swiotlb=force and
not without.  The figures themselves are reported, not asserted, except with
--expect-order.  The last line is "guest <name>: PASS" or "guest <name>:
FAIL: <reason>".
"""

import argparse
import csv
import json
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
import measure_checks as checks  # noqa: E402
import measure_provenance as prov  # noqa: E402
import plots  # noqa: E402
from studies import STUDIES  # noqa: E402
import studies.profiles  # noqa: E402
from studies import cpus  # noqa: E402
from studies.common import Study, configs, modelled_clock, vtd_variants  # noqa: E402,F401
from studies.iommu_flush import COPY_ENGINE, NIC  # noqa: E402,F401
from studies.offload import OFFLOAD_CONFIGS, SLOW_ENGINE, offload_configs  # noqa: E402,F401
from studies.swiotlb import swiotlb_configs  # noqa: E402,F401
from measure_tables import (  # noqa: E402,F401  (tests and bench scripts use them here)
    BENCH_MAP,
    Counts,
    Table,
    byte_prices,
    count_lines,
    counter_lines,
    crossover,
    in_copies,
    records,
    repeat_differences,
    summarise,
    table,
    unit_counters)



def write_results(path_stem, meta, rows, boots, counters=None, variants=None):
    """PATH_STEM.json (meta with the provenance, the summary rows, every boot's bench
    rows, the devices' counters at the end of every boot and each boot's variant of
    the spread) and PATH_STEM.csv (the summary rows, one per line)."""
    with open(path_stem + ".json", "w") as f:
        json.dump(dict(meta, summary=rows, boots=boots, counters=counters or {},
                       variants=variants or {}), f, indent=1)
    fields = ["study", "clock", "tag", "nic", "way", "size", "op", "rate", "config", "metric",
              "value"]
    with open(path_stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, study=meta["study"], clock=meta["clock"]))


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=sorted(STUDIES), default="dma-api")
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--name", default="measure")
    ap.add_argument("--repeat", type=int, metavar="N",
                    help="boots per configuration, alternating (default 3, with --quick 1)")
    ap.add_argument("--calls", type=int, default=2000,
                    help="dma-api: calls timed per operation and size (default 2000)")
    ap.add_argument("--rate", type=int,
                    help="iommu-flush, swiotlb: offered copies and packets per second, 0 for back to back "
                    "(default 1000; without --quick, the study's sweep unless this is given)")
    ap.add_argument("--rates", metavar="R1,R2,...",
                    help="iommu-flush: offered rates to sweep in each boot, copies and "
                    "packets per second, 0 for back to back (e.g. 1000,2000,5000,10000,0)")
    ap.add_argument("--profile", metavar="SO",
                    help="iommu-flush: boot with the instruction profiler "
                    "(libdmalab-profile.so) and print instructions per operation and "
                    "strict's top symbols over no IOMMU and over lazy")
    ap.add_argument("--seeds", metavar="N1,N2,...",
                    help="the spread: QEMU -seed of the reference boot, then one boot more "
                    "per further seed (default 1,2; with --quick 1)")
    ap.add_argument("--builds", type=int, choices=(1, 2),
                    help="the spread: 2 adds a boot with the exerciser built again in "
                    "another folder (default 2; with --quick 1)")
    ap.add_argument("--rate-spread", type=float, metavar="PCT",
                    help="the spread, studies with a rate: a boot at the rate less and one "
                    "at the rate more by PCT percent (default 1; with --quick 0)")
    ap.add_argument("--quick", action="store_true",
                    help="fewer calls, shorter windows, and one boot per configuration "
                    "unless --repeat says otherwise: a smoke run, not a measurement")
    ap.add_argument("--same-counts", action="store_true",
                    help="modelled clock, --repeat 2 or more: fail unless every boot of a "
                    "configuration ends with the same device counters (QMP); the guest's "
                    "figures that differ between boots are listed either way")
    ap.add_argument("--expect-order", action="store_true",
                    help="modelled clock: fail unless the study's figures come in the order "
                    "they must (iommu-flush: every strict boot above every lazy one above "
                    "no IOMMU; dma-api, swiotlb, offload: studies/orders.py; udp, xdp: "
                    "their modules), each by more than the figures' resolution")
    ap.add_argument("--set", action="append", default=[], metavar="PROP=VALUE",
                    help="a dmalab-vtd property for every configuration with dmalab-vtd, "
                    "e.g. wait-ns=5000 or iotlb-entries=64 (repeatable)")
    ap.add_argument("--sweep", metavar="PROP=V1,V2,...",
                    help="each configuration with dmalab-vtd once per value of this "
                    "dmalab-vtd property, e.g. wait-ns=0,1000,10000")
    ap.add_argument("--engine", metavar="PROPS",
                    help="dmalab-ioat's properties, e.g. latency-ns=0 (default: none for "
                    "dma-api; %s for iommu-flush)" % COPY_ENGINE)
    ap.add_argument("--smp", type=int, metavar="N",
                    help="guest CPUs (default: the study's, 1 for every study today)")
    ap.add_argument("--configs", metavar="LABEL,...",
                    help="boot only these configurations (e.g. no-iommu,vtd-strict)")
    ap.add_argument("--cpu-profile", metavar="NAME", default="model",
                    help="a published CPU (studies/cpus.py: %s): every dmalab delay is set "
                    "in that CPU's ns and scaled to its instructions on the 1-ns modelled "
                    "clock; default model (the models' delays as they are)"
                    % ", ".join(sorted(cpus.PROFILES)))
    ap.add_argument("--ipc", type=float, default=1.0,
                    help="with --cpu-profile: the instructions per cycle assumed (no "
                    "source gives the kernel's; default 1)")
    clock = ap.add_mutually_exclusive_group()
    clock.add_argument("--icount", type=int, metavar="SHIFT",
                       help="modelled time: -icount shift=SHIFT,sleep=off, -seed 1, the RTC "
                       "on virtual time (forces TCG; "
                       "the studies' default is 0: 1 ns per instruction)")
    clock.add_argument("--host-clock", action="store_true",
                       help="host-driven guest time, also for iommu-flush")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--log-dir", help="where each boot's serial log goes, and the results as "
                    "NAME.json and NAME.csv, and the plot as NAME.png and NAME.svg")
    ap.add_argument("--runner-arg", action="append", default=[],
                    help="one more runner.py argument, for every boot")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def spread(args, study):
    """The boots of each configuration, one per variant: the reference (the first seed,
    the image's exerciser, the offered rate), then one factor changed at a time: each
    further seed, the exerciser's second build, the rate less and more by
    --rate-spread percent.  [(name, seed, build, rate)]."""
    quick = args.quick
    seeds = [int(x) for x in (args.seeds or ("1" if quick else "1,2")).split(",") if x]
    # a study whose exerciser only keeps the clock has no second build to boot (builds = 1)
    builds = args.builds or (1 if quick else getattr(study, "builds", 2))
    pct = args.rate_spread if args.rate_spread is not None else (0 if quick else 1)
    rate = 1000 if args.rate is None else args.rate
    out = [("ref", seeds[0], "a", rate)]
    out += [("seed=%d" % x, x, "a", rate) for x in seeds[1:]]
    if builds > 1:
        out.append(("build=b", seeds[0], "b", rate))
    # a sweep (--rates) offers its own rates: no spread around one
    if study.rated and pct and rate and not getattr(args, "rates", None):
        out += [("rate%+g%%" % (sign * pct), seeds[0], "a",
                 int(round(rate * (1 + sign * pct / 100)))) for sign in (-1, 1)]
    return out


def clock_words(icount, study):
    """What the figures were read from, for every table and plot."""
    if icount is not None:
        return "modelled time (-icount shift=%d: %d ns per guest instruction, a %s CPU)" % (
            icount, 2 ** icount, "1-GIPS" if not icount else "%g-MIPS" % (1000 / 2 ** icount))
    return "host-driven guest time (not a hardware time)"


def settle(args, study):
    """Fills in the study's defaults (clock, rates, repeat) and checks the options
    against each other: the configurations to boot, or None after saying why not."""
    try:
        configs = vtd_variants(study.configs(args.engine, args.quick), args.set,
                               args.sweep)
    except ValueError as e:
        print("measure.py: %s" % e, file=sys.stderr)
        return None
    if args.icount is None and not args.host_clock:
        args.icount = study.icount
    try:
        args.profile_ = cpus.profile(args.cpu_profile)
        if args.profile_ and args.icount != 0:
            raise ValueError("--cpu-profile needs the modelled clock at 1 ns per "
                             "instruction (--icount 0, the studies' default)")
        if not args.ipc > 0:
            raise ValueError("--ipc must be above 0")
        configs = cpus.apply(configs, args.profile_, args.ipc)
    except (KeyError, ValueError) as e:
        print("measure.py: %s" % (e.args[0] if e.args else e), file=sys.stderr)
        return None
    if args.rate is None and not args.quick and args.rates is None:
        args.rates = getattr(study, "rates", None)
    if args.same_counts and args.icount is None:
        print("measure.py: --same-counts needs the modelled clock", file=sys.stderr)
        return None
    if args.quick:
        keep = getattr(study, "quick_labels", None)
        configs = [c for c in configs if not keep or c[0].split(",")[0] in keep]
    if args.configs:
        want = args.configs.split(",")
        unknown = sorted(set(want) - {c[0] for c in configs})
        if unknown:
            print("measure.py: --configs: no configuration %s in this run (%s)" % (
                ", ".join(unknown), ", ".join(c[0] for c in configs)), file=sys.stderr)
            return None
        configs = [c for c in configs if c[0] in want]
    if args.smp is not None and args.smp < 1:
        print("measure.py: --smp must be 1 or more", file=sys.stderr)
        return None
    if args.profile and (args.smp or study.smp or 1) > 1 and args.icount is not None:
        # runner.py refuses it too: QEMU's plugins with -icount and more than one vCPU
        # crashed the guest in boot (docs/profile.rst)
        print("measure.py: --profile with --smp %d on the modelled clock: the guest "
              "crashes in boot (QEMU's plugins with -icount and more than one vCPU); "
              "profile at --smp 1" % (args.smp or study.smp), file=sys.stderr)
        return None
    if args.repeat is None:
        args.repeat = 1
    if args.same_counts and args.repeat < 2:
        # one boot per variant has nothing to compare with
        print("measure.py: --same-counts compares the boots of each configuration: it "
              "needs --repeat 2 or more", file=sys.stderr)
        return None
    if args.expect_order and not (args.icount is not None and study.expect):
        print("measure.py: --expect-order needs the modelled clock and a study whose "
              "figures come in an order (%s has none)" % args.study, file=sys.stderr)
        return None
    return configs


def initrd_builds(args, variants):
    """{build: initrd}: the image's, and the second build's when a variant boots it."""
    initrds = {"a": os.path.abspath(args.initrd)}
    if any(v[2] == "b" for v in variants):
        initrds["b"] = prov.second_build(args.kernel, initrds["a"],
                                         args.log_dir or os.path.dirname(initrds["a"]))
    return initrds


def clock_args(args, study, variant, profile):
    """The runner arguments of one boot's guest parameters, CPUs and clock; `profile`:
    whether it carries the instruction profiler."""
    vname, seed, _, rate = variant
    # cryptomgr.notests=1: no crypto self-tests.  The kernel runs them in a thread
    # when an algorithm is first used, as when it checks the exerciser's signature;
    # on 6.12 under -icount that thread ran through the whole measurement and took
    # every idle moment of its one CPU (the copy workload read no idle time at all).
    params = {"cryptomgr.notests": 1,
              "dmalab_exercise.mapcost_calls": args.calls,
              "dmalab_exercise.offload_calls": args.calls // 4,
              "dmalab_exercise.copycost_rate": rate, "dmalab.pktgen_rate": rate}
    if args.rates:
        # the reference boots run the whole sweep; the spread's boots (another seed,
        # the second build) the nominal rate only, the figure their range is for
        sweep = args.rates if vname == "ref" else str(rate)
        params.update({"dmalab_exercise.copycost_rates": sweep,
                       "dmalab.pktgen_rate": sweep})
    if args.quick:
        params.update(study.quick)
    smp = args.smp or study.smp
    if smp and smp > 1 and args.icount is not None:
        # Under -icount every vCPU's TSC reads the one virtual clock, so they agree; Linux
        # cannot tell (TCG's CPU has no invariant-TSC flag) and would time with the ACPI
        # PM timer's 279 ns ticks: tsc=reliable keeps the TSC as the clocksource
        params["tsc"] = "reliable"
    if smp and smp > 1:
        # the concurrent windows: every CPU maps and unmaps at once (mapcost), every CPU
        # copies on a channel of its own at once (copycost)
        params["dmalab_exercise.mapcost_threads"] = smp
        params["dmalab_exercise.copycost_threads"] = smp
    clock = ["--append", " ".join("%s=%s" % kv for kv in params.items())]
    if smp:
        clock += ["--smp", str(smp)]
    if args.icount is not None:
        clock += modelled_clock(args.icount, seed)
    else:
        clock += ["--qemu-arg=-seed", "--qemu-arg=%d" % seed]
    if args.profile and profile:
        clock += ["--profile-plugin", os.path.abspath(args.profile)]
    return clock


def measure_boot(args, study, rp, initrds, variant, config, profile):
    """Boots one configuration in one variant of the spread, with the instruction
    profiler if `profile`: (boot, its bench rows, failures)."""
    (vname, seed, build, rate), (label, extra) = variant, config
    boot, results, bad = runner.bench_boot(
        rp,
        ["--qemu", os.path.abspath(args.qemu),
         "--kernel", os.path.abspath(args.kernel),
         "--initrd", initrds[build],
         "--name", "%s-%s" % (args.name, label),
         "--timeout", str(args.timeout)] +
        (["--cpu", study.cpu] if study.cpu else []) + extra +
        clock_args(args, study, variant, profile) + args.runner_arg,
        label if vname == "ref" else "%s [%s]" % (label, vname),
        args.log_dir and os.path.join(args.log_dir, "%s-%s%s.log" % (
            args.name, label, "" if vname == "ref" else "-" + vname.replace("%", ""))),
        args.verbose)
    rows = sum((facts.bench for _, facts, _ in results), [])
    return boot, rows, list(bad)


def check_rows(study, label, rows, booted, modelled, smp=1):
    """What one boot's rows must show (measure_checks.py), and that every table of
    the configuration got its lines when the boot passed (on a guest of `smp` CPUs)."""
    failed = []
    for t in study.tables:
        if booted and t.wants(label, smp) and not any(tag == t.tag for tag, _ in rows):
            failed.append((label, ["no '# %s' lines from the guest" % t.tag]))
        for tag, f in rows:
            wrong = t.check(label, f, modelled) if t.check and tag == t.tag else []
            failed += [(label, [w]) for w in wrong]
    return failed


def run_boots(args, study, configs, variants, initrds):
    """Every boot, --repeat rounds of every variant of every configuration:
    (runs, counters, names, profiles, failures), the first three by label."""
    rp = runner.make_parser()
    nominal = variants[0][3]
    failed = []
    profiles = {}
    runs = {label: [] for label, _ in configs}
    counters = {label: [] for label, _ in configs}
    names = {label: [] for label, _ in configs}
    for variant, config in [(v, c) for _ in range(args.repeat) for v in variants
                            for c in configs]:
        label, rate = config[0], variant[3]
        # each configuration's first boot carries the profiler, the one its profile is
        # read from
        boot, rows, bad = measure_boot(args, study, rp, initrds, variant, config,
                                       label not in profiles)
        failed += bad
        if args.profile and label not in profiles:
            profiles[label] = getattr(boot, "profile", None)
        if rate != nominal:
            # the spread's rate boots count towards the nominal rate's figures (tables
            # keyed by the rate); the rate the boot offered stays beside it
            rows = [(tag, dict(f, rate=str(nominal), offered_rate=f["rate"])
                     if f.get("rate") == str(rate) else f) for tag, f in rows]
        failed += check_rows(study, label, rows, not bad, args.icount is not None,
                             args.smp or study.smp or 1)
        runs[label].append(rows)
        counters[label].append(unit_counters(boot))
        names[label].append(variant[0])
    return runs, counters, names, profiles, failed


def print_tables(args, study, labels, runs, counters, profiles):
    """The study's counts first (count_lines, and with profiles the instructions per
    operation), then its tables, derived lines, the devices' counters and its
    explanation: (summary rows, failures, the profiles read). profiles is by label: a
    boot's NAME.profile path, or a results file's compact profile."""
    failed = []
    loaded = {}
    if profiles and args.icount is not None:
        try:
            loaded = {label: studies.profiles.expand(p) if isinstance(p, dict)
                      else studies.profiles.load(p) for label, p in profiles.items()}
        except (OSError, TypeError, KeyError, ValueError,
                studies.profiles.prof.ProfileError) as e:
            failed.append(("profile", ["no profile: %s" % e]))
    lines, rows = count_lines(runs, labels, getattr(study, "counts", None))
    for line in lines:
        print(line)
    if loaded and getattr(study, "profile_lines", None):
        print("\n".join(study.profile_lines(loaded, labels)))
    for t in study.tables:
        summaries = {label: summarise(runs[label], t) for label in labels}
        for line in table(summaries, labels, t, "%d ns per guest instruction" % (
                2 ** args.icount) if args.icount is not None else "guest clock"):
            print(line)
        rows += records(summaries, labels, t)
        if t.derived:
            lines, extra = t.derived(summaries, labels)
            for line in lines:
                print(line)
            rows += extra
    for line in counter_lines(counters, labels):
        print(line)
    if getattr(study, "explain", None) and args.icount is not None:
        print("\n".join(study.explain(runs, counters, labels, args.icount)))
    return rows, failed, loaded


def compare_boots(args, study, labels, runs, counters, names):
    """--expect-order, and how the boots of each configuration differ (--same-counts
    fails when their device counters do, or were not read): the failures."""
    failed = []
    if args.expect_order:
        lines, wrong = study.expect(runs, labels, study.tables)
        print("\n".join(lines))
        failed += [("expect-order", [w]) for w in wrong]
    if args.repeat > 1:
        devices, figures = repeat_differences(runs, counters, labels, names)
        print("between boots of each configuration and variant: %s" % (
            "; ".join(devices + figures) or "device counters and guest figures identical"))
        if args.same_counts and devices:
            failed.append(("same-counts", ["device counters differ between boots: " +
                                           "; ".join(devices)]))
    if args.same_counts:
        unread = sorted({label for label in labels for c in counters[label] if not c})
        if unread:
            # no counters compare equal to no counters: that is not the same counts
            failed.append(("same-counts", ["no device counters were read in a boot of: " +
                                           ", ".join(unread)]))
    return failed


def save_results(args, study, configs, variants, initrds, clock_text, results,
                 profiles=None):
    """NAME.json, NAME.csv and the plots in --log-dir; results is (summary rows,
    runs, counters, names, provenance) with the middle three by label; profiles, by
    label, the (Profile, Symbols) the tables were made from, kept compact (so that
    `tables` prints the profiles' tables again)."""
    rows, runs, counters, names, provenance = results
    labels = list(dict.fromkeys(label for label, _ in configs))
    stem = os.path.join(args.log_dir, args.name)
    meta = {"study": args.study, "repeat": args.repeat,
            "clock": "icount-%d" % args.icount if args.icount is not None else "host",
            "clock_text": clock_text,
            "ns_per_insn": 2 ** args.icount if args.icount is not None else None,
            "cpu": study.cpu or "max", "smp": args.smp or study.smp or 2,
            "kernel": os.path.abspath(args.kernel), "configs": dict(configs),
            "set": args.set, "sweep": args.sweep, "rate": args.rate,
            "cpu_profile": {"name": args.cpu_profile, "ipc": args.ipc,
                            "text": cpus.describe(args.profile_, args.ipc)},
            "spread": [dict(zip(("name", "seed", "build", "rate"), v))
                       for v in variants],
            "provenance": provenance,
            "builds": {b: {"initrd": p, "initrd_sha256": prov.sha256(p),
                           "modules_sha256": prov.initrd_modules(p)
                           if os.path.isfile(p) else {}}
                       for b, p in initrds.items()}}
    meta["kernel_version"] = prov.image_info(args.kernel).get("kernel_version")
    meta["profiles"] = {label: studies.profiles.compact(*p)
                        for label, p in (profiles or {}).items()}
    write_results(stem, meta, rows,
                  {label: [[{"tag": tag, **f} for tag, f in boot] for boot in runs[label]]
                   for label in labels}, counters, names)
    print("results: %s.json, %s.csv" % (stem, stem))
    if args.study not in plots.PLOTS:
        print("plots: none for the %s study" % args.study)
        return
    try:
        print("plots: %s" % ", ".join(plots.render(meta, rows, stem)))
    except ImportError:
        print("plots: not rendered, python3-matplotlib is not installed "
              "(./dmalab measure and ./dmalab test install it)")


def tables_from(path):
    """`measure.py tables RESULTS.json`: the tables, derived lines and counters a run
    printed, printed again from the results file it wrote (its boots' rows and counters),
    so that a table quoted in docs/ can be regenerated from the file committed beside it,
    the study's explanation, and the instruction profiles' tables where the run kept its
    profiles (since 2026-12-06: save_results). Exit status 2 when the file is not a
    results file."""
    try:
        # docs/results keeps them gzip'd (NAME.json.gz), a tenth of the size
        with prov.open_text(path) as f:
            res = json.load(f)
        study = STUDIES[res["study"]]
        boots = res["boots"]
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:
        print("measure.py tables: %s is not a results file: %s" % (path, e), file=sys.stderr)
        return 2
    clock = res.get("clock", "host")
    icount = int(clock[len("icount-"):]) if clock.startswith("icount-") else None
    labels = list(boots)
    runs = {label: [[(r["tag"], {k: v for k, v in r.items() if k != "tag"}) for r in boot]
                    for boot in boots[label]] for label in labels}
    counters = {label: (res.get("counters") or {}).get(label, [{}] * len(runs[label]))
                for label in labels}
    prov_ = res.get("provenance") or {}
    print("==== %s from %s: commit %s%s, Linux %s, %s CPU(s), %s ====" % (
        res["study"], os.path.basename(path), prov_.get("commit", "?"),
        " (dirty)" if prov_.get("dirty") else "", res.get("kernel_version", "?"),
        res.get("smp", "?"), res.get("clock_text", clock)))
    print((res.get("cpu_profile") or {}).get("text", cpus.describe(None, 1)))
    args = argparse.Namespace(icount=icount)
    _, bad, _ = print_tables(args, study, labels, runs, counters, res.get("profiles") or {})
    for name, lines in bad:
        print("%s: %s" % (name, "; ".join(lines)), file=sys.stderr)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tables"]:
        if len(argv) != 2:
            print("usage: measure.py tables RESULTS.json[.gz]", file=sys.stderr)
            return 2
        return tables_from(argv[1])
    args = make_parser().parse_args(argv)
    study = STUDIES[args.study]
    configs = settle(args, study)
    if configs is None:
        return 2
    variants = spread(args, study)
    try:
        initrds = initrd_builds(args, variants)
    except (RuntimeError, OSError) as e:
        print("measure.py: %s" % e, file=sys.stderr)
        return 2
    # read before the boots: the tree (and its commit) can change during a long run
    provenance = prov.provenance(args.qemu, args.kernel, initrds["a"])
    runs, counters, names, profiles, failed = run_boots(args, study, configs, variants,
                                                        initrds)
    labels = list(dict.fromkeys(label for label, _ in configs))
    clock_text = clock_words(args.icount, study)
    print("==== %s: medians of %d boots per configuration (%s), %d CPU(s), %s ====" % (
        args.study, len(variants) * args.repeat, ", ".join(v[0] for v in variants),
        args.smp or study.smp or 2, clock_text))
    print(cpus.describe(args.profile_, args.ipc))
    rows, bad, loaded = print_tables(args, study, labels, runs, counters, profiles)
    failed += bad
    failed += compare_boots(args, study, labels, runs, counters, names)
    if args.log_dir:
        save_results(args, study, configs, variants, initrds, clock_text,
                     (rows, runs, counters, names, provenance), loaded)
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
