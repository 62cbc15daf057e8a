#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest scenarios as data: guest-tests/scenarios.json, one entry each.

  scenarios.py meson            one line per meson test: name, scenario, kernel,
                                suite, timeout, needs (tab-separated)
  scenarios.py list [--prefix P] the scenarios' names
  scenarios.py args NAME        the runner arguments NAME stands for, and what
                                it expects
  scenarios.py run NAME [ARG..] run NAME with runner.py: those arguments, then ARG..
                                (later ones win: --timeout 600 overrides), judged
                                against its expectations (the options among ARG..
                                add to them); an entry that names another program
                                runs that with NAME and ARG..
  scenarios.py runner NAME [ARG..]  run NAME with runner.py, whatever program it names
  scenarios.py meson-benches    one line per bench: name, timeout, needs, suite
  scenarios.py benches          the benches' names and what each measures
  scenarios.py bench NAME [ARG..] run bench NAME's program with its arguments,
                                then ARG.. (--qemu, --kernel, --initrd, ...)

The registry's own "about" describes the fields.
"""

import dataclasses
import json
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness.expect import ExpectationError, Expectations  # noqa: E402

REGISTRY = os.path.join(HERE, "scenarios.json")
PLANS = os.path.join(HERE, "plans")
KERNELS = ("6.1", "6.12")

# Entry fields; "expect" and "allow" become the judge's Expectations
# (harness/expect.py), the rest runner.py's arguments.
FIELDS = {"doc", "kernels", "suite", "meson_timeout", "needs", "program",
          "devices", "kernel_args", "mode", "params", "iterations", "timeout",
          "expect", "allow", "qemu_args", "runner", "scalable", "clock"}
# What a "scalable" variant may change: the fields of an entry that decide what the
# guest runs and what is expected of it (expect merges kind by kind), and "vtd", the
# dmalab-vtd options added after mode=scalable.
SCALABLE_FIELDS = {"doc", "devices", "kernel_args", "mode", "params", "iterations",
                   "expect", "allow", "qemu_args", "runner", "vtd", "clock"}
# An entry's "clock": absent, the modelled clock (runner.py --clock modelled); or
# "host: WHY", for a scenario whose point needs the host's clock or real parallel vCPUs.
HOST_CLOCK = "host: "
SCALABLE_SUFFIX = "-sm"
# The unit's registers as Linux prints them, with ECAP bit 43 (SMTS) set: the hex digit of
# bits 43:40 is 8 or above.
SCALABLE_ECAP_LINE = (r"^DMAR: dmar0: reg_base_addr [0-9a-f]+ ver \d+:\d+ cap [0-9a-f]+ "
                      r"ecap [0-9a-f]*[89a-f][0-9a-f]{10}$")
NEEDS = {"race_plugin", "profile_plugin", "ioatdma_patched", "net_image", "dsa_image",
         "dpdk_image"}
BENCH_FIELDS = {"doc", "program", "args", "needs", "meson_timeout", "suite"}


class RegistryError(Exception):
    pass


def load_benches(path=REGISTRY):
    """{name: bench}, checked like the scenarios."""
    with open(path) as f:
        benches = json.load(f)["benches"]
    for name, b in benches.items():
        bad = set(b) - BENCH_FIELDS
        bad |= {"needs:" + k for k in set(b.get("needs", [])) - NEEDS}
        if "program" not in b:
            bad.add("program (missing)")
        if bad:
            raise RegistryError("%s: bench %s: unknown %s" % (
                path, name, ", ".join(sorted(bad))))
    return benches


def scalable_variant(name, entry):
    """The entry NAME-sm stands for: NAME with dmalab-vtd in scalable mode
    (mode=scalable, then the variant's "vtd" options) and the variant's changes
    ("scalable": true is none)."""
    changes = entry["scalable"] if isinstance(entry["scalable"], dict) else {}
    bad = set(changes) - SCALABLE_FIELDS
    if bad:
        raise RegistryError("scenario %s: scalable: unknown %s" % (
            name, ", ".join(sorted(bad))))
    v = {k: val for k, val in entry.items() if k != "scalable"}
    for key, val in changes.items():
        if key == "expect":
            v["expect"] = dict(entry.get("expect", {}), **val)
        elif key != "vtd":
            v[key] = val
    # Every variant checks that Linux found scalable mode offered (ECAP.SMTS, bit 43, in
    # the registers it prints) and ran it: only in scalable mode does it send the
    # PASID-cache invalidation that follows setting the root table. No line of Linux's
    # says "scalable mode".
    expect = v["expect"] = dict(v.get("expect", {}))  # the entry's own stays as it is
    expect["lines"] = list(expect.get("lines", [])) + [SCALABLE_ECAP_LINE]
    expect["vtd"] = list(expect.get("vtd", [])) + ["pc-inv-global>=1"]
    options = ",mode=scalable" + changes.get("vtd", "")
    devices = v.get("devices", [])
    if not any(d.split(",")[0] == "dmalab-vtd" for d in devices):
        raise RegistryError("scenario %s: scalable without dmalab-vtd" % name)
    # right after the device's name: a fault-plan path, which runs to the end, stays last
    v["devices"] = ["dmalab-vtd" + options + d[len("dmalab-vtd"):]
                    if d.split(",")[0] == "dmalab-vtd" else d for d in devices]
    v["doc"] = "%s (In scalable mode: dmalab-vtd%s.%s)" % (
        entry.get("doc", name), options,
        " " + changes["doc"] if "doc" in changes else "")
    return v


def load(path=REGISTRY):
    """{name: entry}, checked: unknown fields, kernels and needs are errors, and so
    is an expectation that cannot be judged. An entry with "scalable" also stands
    for NAME-sm, its scalable-mode variant (scalable_variant)."""
    with open(path) as f:
        scenarios = json.load(f)["scenarios"]
    for name in [n for n, e in scenarios.items() if "scalable" in e]:
        variant = name + SCALABLE_SUFFIX
        if variant in scenarios:
            raise RegistryError("%s: scenario %s: also a variant's name" % (
                path, variant))
        scenarios[variant] = scalable_variant(name, scenarios[name])
    for name, e in scenarios.items():
        bad = set(e) - FIELDS
        clock = e.get("clock")
        if clock is not None and not (isinstance(clock, str) and clock.startswith(HOST_CLOCK)
                                      and clock[len(HOST_CLOCK):].strip()):
            bad.add("clock %r (absent for the modelled clock, or %r and why)" % (
                clock, HOST_CLOCK + "..."))
        bad |= {"kernels:" + k for k in set(e.get("kernels", [])) - set(KERNELS)}
        bad |= {"needs:" + k for k in set(e.get("needs", [])) - NEEDS}
        if bad:
            raise RegistryError("%s: scenario %s: unknown %s" % (
                path, name, ", ".join(sorted(bad))))
        try:
            Expectations.from_entry(e)
        except ExpectationError as err:
            raise RegistryError("%s: scenario %s: %s" % (path, name, err)) from None
    return scenarios


def _text(v):
    return str(v).replace("@plans@", PLANS)


def runner_args(entry):
    """The runner's arguments for one entry (without --qemu, --kernel,
    --initrd, --name, --log: who runs it adds those; nor its expectations:
    Expectations.from_entry)."""
    args = ["--scenario", "memcpy",
            "--clock", "host" if "clock" in entry else "modelled"]
    for d in entry.get("devices", []):
        args += ["--device", _text(d)]
    words = [entry["kernel_args"]] if "kernel_args" in entry else []
    if "mode" in entry:
        words.append("dmalab_exercise.mode=" + entry["mode"])
    words += ["dmalab_exercise.%s=%s" % (k, v)
              for k, v in entry.get("params", {}).items()]
    if words:
        args += ["--append", " ".join(words)]
    if "iterations" in entry:
        args += ["--iterations", str(entry["iterations"])]
    args += ["--timeout", str(entry.get("timeout", 300))]
    args += ["--qemu-arg=" + _text(a) for a in entry.get("qemu_args", [])]
    for key, v in entry.get("runner", {}).items():
        opt = "--" + key.replace("_", "-")
        if v is True:
            args.append(opt)
        else:
            for one in (v if isinstance(v, list) else [v]):
                args += [opt, _text(one)]
    return args


def tests(scenarios):
    """(test name, scenario, kernel, entry) for every meson test."""
    for name, e in scenarios.items():
        for k in e.get("kernels", ["6.1"]):
            yield (name if k == "6.1" else "%s-%s" % (name, k)), name, k, e


def expect_lines(entry):
    """What an entry expects, one line per kind that differs from the defaults."""
    expect, default = Expectations.from_entry(entry), Expectations()
    return ["expect %s: %s" % (f.name, getattr(expect, f.name))
            for f in dataclasses.fields(expect)
            if getattr(expect, f.name) != getattr(default, f.name)]


def run(name, entry, rest, program=None):
    """Runs an entry: runner.py in this process, judged against the entry's
    expectations, or the program it names with name and rest."""
    program = program or entry.get("program", "runner.py")
    if program != "runner.py":
        prog = os.path.join(HERE, program)
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, prog, name] + rest)
    import runner
    sys.argv[0] = os.path.join(HERE, "runner.py")    # its usage and errors name it
    return runner.main(runner_args(entry) + rest, Expectations.from_entry(entry))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        scenarios = load()
        benches = load_benches()
    except (OSError, ValueError, KeyError, RegistryError) as e:
        print("scenarios.py: %s" % e, file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "meson-benches":
        for name, b in benches.items():
            print("\t".join([name, str(b.get("meson_timeout", 600)),
                             ",".join(b.get("needs", [])), b.get("suite", "guest-bench")]))
        return 0
    if cmd == "benches":
        width = max(map(len, benches))
        for name, b in benches.items():
            print("%-*s  %s" % (width, name, b.get("doc", "")))
        return 0
    if cmd == "bench" and rest:
        if rest[0] not in benches:
            print("scenarios.py: no bench %r (scenarios.py benches names them)"
                  % rest[0], file=sys.stderr)
            return 2
        b = benches[rest[0]]
        prog = os.path.join(HERE, b["program"])
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, prog] + b.get("args", []) + rest[1:])
    if cmd == "meson":
        for test, name, k, e in tests(scenarios):
            print("\t".join([test, name, k, e.get("suite", "guest"),
                             str(e.get("meson_timeout", 360)),
                             ",".join(e.get("needs", []))]))
        return 0
    if cmd == "list":
        prefix = rest[1] if rest[:1] == ["--prefix"] and len(rest) > 1 else ""
        print("\n".join(n for n in scenarios if n.startswith(prefix)))
        return 0
    if cmd in ("args", "run", "runner") and rest:
        if rest[0] not in scenarios:
            print("scenarios.py: no scenario %r (scenarios.py list names them)"
                  % rest[0], file=sys.stderr)
            return 2
        e = scenarios[rest[0]]
        if cmd == "args":
            print("\n".join([shlex.join(runner_args(e) + rest[1:])] + expect_lines(e)))
            return 0
        return run(rest[0], e, rest[1:], "runner.py" if cmd == "runner" else None)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
