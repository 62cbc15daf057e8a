# SPDX-License-Identifier: GPL-2.0-or-later
"""Running guest scenarios again: one as it ran (./dmalab replay), or many times with a
new seed each, on the host's clock and real parallel vCPUs, beside a busy host
(./dmalab test --stress), to find what a deterministic run cannot show."""

import os
import random
import subprocess
import sys
import time
from pathlib import Path


def meson_test(build, name, test_args, verbose=False, log=None, multiplier=1):
    """Runs meson test NAME (which builds what the test needs first) with test_args
    added to its command line; returns its exit status. log: a file for its output."""
    cmd = ["meson", "test", "-C", str(build), name, "--test-args=" + " ".join(test_args)]
    if verbose:
        cmd.append("--verbose")
    if multiplier != 1:
        cmd += ["--timeout-multiplier", str(multiplier)]
    if log is None:
        return subprocess.run(cmd).returncode
    with open(log, "w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode


def replay(build, argv):
    """./dmalab replay NAME [--seed N] [--clock modelled|host]: the guest test NAME (a meson
    test name, such as raid-ops-6.12) again, as a failing run printed it, streamed."""
    if not argv or argv[0].startswith("-"):
        print("usage: ./dmalab replay NAME [--seed N] [--clock modelled|host]",
              file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    allowed = {"--seed", "--clock"}
    for i in range(0, len(rest), 2):
        if rest[i] not in allowed or i + 1 >= len(rest):
            print("replay: takes --seed N and --clock modelled|host, not %s" % rest[i],
                  file=sys.stderr)
            return 2
    return meson_test(build, name, rest, verbose=True)


class BusyHost:
    """A busy loop on every host core, for as long as the with-block lasts."""

    def __init__(self, on):
        self.on = on
        self.procs = []

    def __enter__(self):
        if self.on:
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                          for _ in range(os.cpu_count() or 1)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def parse_stress(argv):
    """(runs, busy, first_seed, names) from --stress N [--busy] [--first-seed S] NAME..."""
    runs, busy, first, names = None, False, None, []
    it = iter(argv)
    for a in it:
        if a == "--stress":
            runs = int(next(it, "0"))
        elif a == "--busy":
            busy = True
        elif a == "--first-seed":
            first = int(next(it, "0"))
        elif a.startswith("-"):
            raise ValueError("unknown option %s" % a)
        else:
            names.append(a)
    if not runs or runs < 1 or not names:
        raise ValueError("--stress N [--busy] [--first-seed S] NAME... (N at least 1, "
                         "at least one meson test name)")
    return runs, busy, first, names


def stress(build, argv):
    """./dmalab test --stress N [--busy] [--first-seed S] NAME...: each guest test N times,
    each run with its own seed (S, S+1, ...; S random unless given) on the host's clock
    (--clock host: multi-threaded TCG, -icount taken out), with a busy loop on every host
    core beside them with --busy. Prints each test's count and every failing run's replay
    command; the serial logs, counters and fault logs stay in BUILD/stress/."""
    try:
        runs, busy, first, names = parse_stress(argv)
    except ValueError as e:
        print("stress: %s" % e, file=sys.stderr)
        return 2
    if first is None:
        first = random.SystemRandom().randrange(1, 1 << 20)
    out = Path(build) / "stress"
    out.mkdir(exist_ok=True)
    print("stress: %d run(s) of %s, seeds %d..%d, host clock%s" % (
        runs, " ".join(names), first, first + runs - 1,
        ", a busy loop on each of %d host cores" % (os.cpu_count() or 1) if busy else ""),
        flush=True)
    tally = {}
    with BusyHost(busy):
        for name in names:
            failed = []
            for i in range(runs):
                seed = first + i
                stem = out / ("%s.seed%d" % (name, seed))
                start = time.monotonic()
                rc = meson_test(build, name, ["--seed", str(seed), "--clock", "host",
                                              "--log", str(stem) + ".log"],
                                log=str(stem) + ".meson.txt", multiplier=4)
                took = time.monotonic() - start
                print("  %s seed %d: %s (%.0f s)" % (name, seed, "PASS" if rc == 0 else "FAIL",
                                                     took), flush=True)
                if rc:
                    failed.append(seed)
                else:
                    for f in out.glob(stem.name + ".*"):
                        f.unlink()
            tally[name] = failed
    bad = 0
    print("stress results:")
    for name, failed in tally.items():
        print("  %-28s %d of %d passed" % (name, runs - len(failed), runs))
        for seed in failed:
            bad += 1
            print("    replay: ./dmalab replay %s --seed %d --clock host   (logs: %s)" % (
                name, seed, out / ("%s.seed%d.*" % (name, seed))))
    return 1 if bad else 0
