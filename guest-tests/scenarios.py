#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest scenarios as data: guest-tests/scenarios.json, one entry each.

  scenarios.py meson            one line per meson test: name, scenario, kernel,
                                suite, timeout, needs (tab-separated)
  scenarios.py list [--prefix P] the scenarios' names
  scenarios.py args NAME        the runner arguments NAME stands for
  scenarios.py run NAME [ARG..] run NAME's program (runner.py unless it names
                                another) with those arguments, then ARG..
                                (later ones win: --timeout 600 overrides)
  scenarios.py meson-benches    one line per bench: name, timeout, needs, suite
  scenarios.py benches          the benches' names and what each measures
  scenarios.py bench NAME [ARG..] run bench NAME's program with its arguments,
                                then ARG.. (--qemu, --kernel, --initrd, ...)

The registry's own "about" describes the fields.
"""

import json
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REGISTRY = os.path.join(HERE, "scenarios.json")
PLANS = os.path.join(HERE, "plans")
KERNELS = ("6.1", "6.12")

# Entry fields, and the runner option each expectation stands for.
FIELDS = {"doc", "kernels", "suite", "meson_timeout", "needs", "program",
          "devices", "kernel_args", "mode", "params", "iterations", "timeout",
          "expect", "allow", "qemu_args", "runner"}
EXPECT = {"channels": "--expect-channels", "min_ops": "--min-ops",
          "min_device_descriptors": "--min-device-descriptors",
          "min_device_bytes": "--min-device-bytes",
          "device_errors": "--expect-device-errors", "irq": "--expect-irq",
          "lines": "--expect-line", "vtd": "--expect-vtd",
          "races": "--expect-race", "race_count": "--expect-race-count"}
NEEDS = {"race_plugin", "profile_plugin", "ioatdma_patched"}
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


def load(path=REGISTRY):
    """{name: entry}, checked: unknown fields, kernels and needs are errors."""
    with open(path) as f:
        scenarios = json.load(f)["scenarios"]
    for name, e in scenarios.items():
        bad = set(e) - FIELDS
        bad |= {"expect." + k for k in set(e.get("expect", {})) - set(EXPECT)}
        bad |= {"kernels:" + k for k in set(e.get("kernels", [])) - set(KERNELS)}
        bad |= {"needs:" + k for k in set(e.get("needs", [])) - NEEDS}
        if bad:
            raise RegistryError("%s: scenario %s: unknown %s" % (
                path, name, ", ".join(sorted(bad))))
    return scenarios


def _text(v):
    return str(v).replace("@plans@", PLANS)


def runner_args(entry):
    """The runner's arguments for one entry (without --qemu, --kernel,
    --initrd, --name, --log: who runs it adds those)."""
    args = ["--scenario", "memcpy"]
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
    for key, opt in EXPECT.items():
        v = entry.get("expect", {}).get(key)
        for one in (v if isinstance(v, list) else [] if v is None else [v]):
            args += [opt, _text(one)]
    for a in entry.get("allow", []):
        args += ["--allow", a]
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
    if cmd in ("args", "run") and rest:
        if rest[0] not in scenarios:
            print("scenarios.py: no scenario %r (scenarios.py list names them)"
                  % rest[0], file=sys.stderr)
            return 2
        e = scenarios[rest[0]]
        args = runner_args(e) + rest[1:]
        if cmd == "args":
            print(shlex.join(args))
            return 0
        prog = os.path.join(HERE, e.get("program", "runner.py"))
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, prog] + args)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
