#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The runner's KVM fall-back, end to end: with the KVM probe skipped
(DMALAB_KVM_PROBE=skip), auto picks KVM whatever the host can do. Where KVM
cannot run guests (no /dev/kvm, or
a /dev/kvm that cannot run a vCPU, as on the project's machines) QEMU fails to
start, or starts and then stops on a KVM internal error (a /dev/kvm that cannot
emulate what the guest runs, as on one of them), and the runner must say so and
pass the same boot under TCG. Where KVM runs the guest there is no fall-back to
see: the test exits 77 (skipped) and says so; runner-selftest checks the
fall-back on every host with a scripted QEMU that fails under -accel kvm.

Usage: accel_fallback_test.py NAME RUNNER_ARGS...: the registry's scenario NAME,
run with runner.py (scenarios.py runner NAME RUNNER_ARGS...)."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    env = dict(os.environ, DMALAB_KVM_PROBE="skip")
    env.pop("DMALAB_ACCEL", None)
    res = subprocess.run([sys.executable, os.path.join(HERE, "scenarios.py"), "runner",
                          sys.argv[1], "--accel", "auto"] + sys.argv[2:],
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = res.stdout
    print(out)
    chosen = re.findall(r"^runner: accelerator (\w+) \((.*)\)$", out, re.M)
    problems = []
    kvm_ran = False
    if res.returncode != 0:
        problems.append("the runner failed (exit status %d)" % res.returncode)
    if not chosen or chosen[0][0] != "kvm":
        problems.append("auto with the probe skipped did not choose KVM: %r"
                        % chosen)
    elif len(chosen) == 1:
        # A pass here would say nothing about the fall-back: skip, and say why.
        kvm_ran = True
        print("accel-fallback: KVM runs guests on this host: there is no fall-back "
              "to see here (runner-selftest checks it with a scripted QEMU)")
    elif chosen[1][0] != "tcg" or not re.match(r"KVM failed to (start|run) the guest",
                                                chosen[1][1]):
        problems.append("the fall-back was not to TCG with the reason: %r"
                        % chosen)
    else:
        print("accel-fallback: KVM could not run the guest here; the "
              "runner fell back to TCG: %s" % chosen[1][1])
    if not re.search(r"^  accelerator: +(kvm|tcg) \(", out, re.M):
        problems.append("the summary does not say which accelerator ran")
    for p in problems:
        print("accel-fallback: FAIL: " + p)
    if problems:
        return 1
    return 77 if kvm_ran else 0


if __name__ == "__main__":
    sys.exit(main())
