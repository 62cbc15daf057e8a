# SPDX-License-Identifier: GPL-2.0-or-later
"""The instruction profiler in a run (runner.py --profile-plugin): where its
output goes, what it adds to QEMU's command line, and the few lines the runner
prints about it.  guest-tests/profile.py reads the output (docs/profile.rst)."""

import atexit
import os
import re
import shutil
import tempfile


def profile_out(args):
    """The profile's path: beside --log (NAME.log -> NAME.profile), or in a
    temporary folder removed at exit (a bench script reads boot.profile
    before that)."""
    if getattr(args, "log", None):
        stem = args.log[:-4] if args.log.endswith(".log") else args.log
        return os.path.abspath(stem + ".profile")
    d = tempfile.mkdtemp(prefix="dmalab-profile-")
    atexit.register(shutil.rmtree, d, True)
    return os.path.join(d, "insns.profile")


def kallsyms_path(profile):
    """Where the guest's /proc/kallsyms of a profile's boot goes: NAME.kallsyms
    beside NAME.profile."""
    stem = profile[:-len(".profile")] if profile.endswith(".profile") else profile
    return stem + ".kallsyms"


def with_profiler(cmd, plugin, out):
    """QEMU's command line with the plugin (SO or SO,ARG=VALUE,... for its own
    arguments, such as count=insn) loaded, a second serial port written
    to kallsyms_path(out), and the kernel told so (dmalab.profile=1: /init
    marks its pktgen windows and, once every window closed, copies the kernel's
    and the modules' functions from /proc/kallsyms to that port)."""
    cmd = list(cmd)
    i = cmd.index("-append") + 1
    cmd[i] += " dmalab.profile=1"
    so, comma, rest = plugin.partition(",")
    return cmd + ["-serial", "file:%s" % kallsyms_path(out),
                  "-plugin", "%s%s%s,out=%s" % (os.path.abspath(so), comma, rest, out)]


SUMMARY_RE = re.compile(r"^summary (.*)$")
WINDOW_RE = re.compile(r"^window .*\bid=(0x[0-9a-f]+) .*\bops=(\d+) insns=(\d+)")


def summary_lines(path):
    """A few lines on a profile: the plugin's summary, and per window id the
    windows, operations and instructions."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        return ["no profile: %s" % e]
    out = []
    per_id = {}
    for line in lines:
        m = SUMMARY_RE.match(line)
        if m:
            out.append(m.group(1))
        m = WINDOW_RE.match(line)
        if m:
            w = per_id.setdefault(m.group(1), [0, 0, 0])
            w[0] += 1
            w[1] += int(m.group(2))
            w[2] += int(m.group(3))
    if not out:
        out.append("the plugin wrote no summary (did QEMU exit normally?)")
    for wid, (n, ops, insns) in per_id.items():
        out.append("id %s: %d window(s), %d ops, %d instructions%s" % (
            wid, n, ops, insns, ", %d per op" % (insns // ops) if ops else ""))
    out.append("files: %s, %s" % (path, kallsyms_path(path)))
    return out
