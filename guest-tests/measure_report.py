# SPDX-License-Identifier: GPL-2.0-or-later
"""What measure.py prints and saves of a study's boots: the counts and tables, the
comparison of boots, the results files and plots, and `measure.py tables RESULTS.json`."""

import argparse
import csv
import json
import os
import sys

import measure_provenance as prov
import plots
from studies import STUDIES
import studies.profiles
from studies import cpus
from measure_tables import (
    count_lines,
    counter_lines,
    records,
    repeat_differences,
    summarise,
    table)


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
