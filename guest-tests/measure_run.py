# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's boots: the options settled against the study, the spread's variants, each
boot's runner arguments and clock, and the boots run with their rows checked."""

import os
import sys

import runner
import measure_provenance as prov
from studies import cpus
from studies.common import modelled_clock, vtd_variants
from measure_tables import unit_counters


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
        devices = unit_counters(boot)
        if not bad and getattr(study, "check_boot", None):
            # what the boot's rows and its devices' counters must agree on
            failed += [(label, [w]) for w in study.check_boot(label, rows, devices)]
        runs[label].append(rows)
        counters[label].append(devices)
        names[label].append(variant[0])
    return runs, counters, names, profiles, failed
