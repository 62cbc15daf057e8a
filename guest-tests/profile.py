#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Instruction profiles: guest instructions per kernel symbol inside marked windows.

Reads what the TCG plugin libdmalab-profile.so wrote (runner.py --profile-plugin
keeps it beside the serial log as NAME.profile: per window id and translation
block start address, the block's executions and instructions inside windows of
that id; and each window's id, operations and instructions), names the code
each block starts in, and prints per configuration the symbols that ran the
most instructions per operation of each window kind, and, given two or more
configurations, each one's difference to the first, per operation:

  profile.py no-iommu=build/guest-tests/p-no-iommu.profile \\
      vtd-strict=build/guest-tests/p-vtd-strict.profile

LABEL=PROFILE[,KALLSYMS]: KALLSYMS is the boot's /proc/kallsyms (default
PROFILE with .kallsyms for .profile: with dmalab.profile=1 /init copies the
kernel's and the modules' functions there, through a second serial port the
runner gives the guest).  A block counts to the function it starts in.  Under
-icount the counts are deterministic: they are guest instructions, not time
(docs/profile.rst).
"""

import argparse
import bisect
import re
import sys

# Window kinds, as module/exercise.h's DLX_PROF_* (test_profile.py checks the two agree).
KINDS = {1: "copy", 2: "pace", 3: "map", 4: "unmap", 5: "sync", 6: "memcpy", 7: "nic",
         8: "marks", 9: "sg", 10: "sgpages", 11: "md", 12: "memset", 13: "mapmt"}

USER_TOP = 0x0000800000000000     # below: user space
MODULE_REACH = 0x10000            # a module address this far past its symbol is unknown


class ProfileError(Exception):
    pass


def window_name(wid):
    """'copy-4096' for DLX_PROF_ID(DLX_PROF_COPY, 4096)."""
    kind, size = wid >> 24, wid & 0xffffff
    return "%s-%d" % (KINDS.get(kind, "kind%d" % kind), size)


def window_id(name):
    """The id window_name() names (or a number, 0x... for hex)."""
    kind, _, size = name.rpartition("-")
    for k, v in KINDS.items():
        if v == kind and size.isdigit():
            return (k << 24) | int(size)
    try:
        return int(name, 0)
    except ValueError:
        raise ProfileError("no window kind %r (known: %s)" % (name, ", ".join(KINDS.values())))


class Profile:
    """One plugin output: count mode, the summary's fields, the windows (dicts of
    seq, id, vcpu, ops, insns, execs) and blocks[id] = [(vaddr, execs, insns)]."""

    def __init__(self):
        self.count = None
        self.summary = {}
        self.windows = []
        self.blocks = {}

    def ids(self):
        return list(dict.fromkeys(w["id"] for w in self.windows))

    def ops(self, wid):
        return sum(w["ops"] for w in self.windows if w["id"] == wid)

    def insns(self, wid):
        return sum(w["insns"] for w in self.windows if w["id"] == wid)


FIELDS_RE = re.compile(r"(\w+)=(\S+)")


def _fields(line, want, lineno):
    f = dict(FIELDS_RE.findall(line))
    missing = [k for k in want if k not in f]
    if missing:
        raise ProfileError("line %d: no %s: %r" % (lineno, ", ".join(missing), line))
    try:
        return {k: int(f[k], 0) for k in want}
    except ValueError:
        raise ProfileError("line %d: not a number: %r" % (lineno, line))


def parse_profile(text):
    """A Profile from the plugin's text; ProfileError when it is not one."""
    p = Profile()
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        word = line.split()[0]
        if word == "count":
            p.count = line.split()[1] if len(line.split()) > 1 else None
        elif word == "summary":
            p.summary = {k: int(v) for k, v in FIELDS_RE.findall(line)}
        elif word == "window":
            p.windows.append(_fields(line, ("seq", "id", "vcpu", "ops", "insns", "execs"), n))
        elif word == "tb":
            f = _fields(line, ("id", "vaddr", "execs", "insns"), n)
            p.blocks.setdefault(f["id"], []).append((f["vaddr"], f["execs"], f["insns"]))
        else:
            raise ProfileError("line %d: unknown %r" % (n, line))
    if p.count not in ("tb", "insn") or "windows" not in p.summary:
        raise ProfileError("not a complete dmalab-profile output (no count or summary line: "
                           "did QEMU exit normally?)")
    if p.summary["windows"] != len(p.windows):
        raise ProfileError("the summary says %d windows, %d are listed" % (
            p.summary["windows"], len(p.windows)))
    return p


def read_profile(path):
    with open(path) as f:
        return parse_profile(f.read())


def parse_kallsyms(lines):
    """{"_text": addr, "_etext": addr} and the sorted [(addr, name)] functions
    of /proc/kallsyms text ("ADDR TYPE NAME [MODULE]"; a module's functions
    named "NAME [MODULE]").  Lines a serial port mangled are skipped."""
    marks, syms = {}, []
    for line in lines:
        parts = line.split()
        if len(parts) < 3 or len(parts[1]) != 1:
            continue
        try:
            addr = int(parts[0], 16)
        except ValueError:
            continue
        if parts[2] in ("_text", "_etext") and len(parts) == 3:
            marks[parts[2]] = addr
        if parts[1] in "tTwW":
            syms.append((addr, parts[2] if len(parts) == 3 else
                         "%s %s" % (parts[2], parts[3])))
    if "_text" not in marks or "_etext" not in marks:
        raise ProfileError("no _text or _etext: not the guest's /proc/kallsyms")
    if not marks["_text"]:
        raise ProfileError("every address is 0: /proc/kallsyms was read without the "
                           "right to see them (kptr_restrict)")
    return marks, sorted(syms)


class Symbols:
    """Names for guest virtual addresses from /proc/kallsyms: the kernel's text
    between _text and _etext, modules' functions (at most MODULE_REACH past
    their start), "[user]" below the kernel half, "[kernel?]" elsewhere."""

    def __init__(self, marks, syms):
        self.lo, self.hi = marks["_text"], marks["_etext"]
        self.addr = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def name(self, vaddr):
        if vaddr < USER_TOP:
            return "[user]"
        i = bisect.bisect_right(self.addr, vaddr) - 1
        if i < 0:
            return "[kernel?]"
        if self.lo <= vaddr < self.hi:
            return self.names[i]
        if self.names[i].endswith("]") and vaddr - self.addr[i] < MODULE_REACH:
            return self.names[i]
        return "[kernel?]"


def read_symbols(path):
    with open(path, errors="replace") as f:
        return Symbols(*parse_kallsyms(f))


def kallsyms_for(profile_path):
    """NAME.kallsyms for NAME.profile (harness/insn_profile.py's kallsyms_path)."""
    stem = profile_path[:-len(".profile")] if profile_path.endswith(".profile") \
        else profile_path
    return stem + ".kallsyms"


def per_symbol(profile, symbols, wid):
    """{symbol: instructions} inside the windows of id `wid`."""
    out = {}
    for vaddr, _, insns in profile.blocks.get(wid, []):
        name = symbols.name(vaddr)
        out[name] = out.get(name, 0) + insns
    return out


def per_op(profile, symbols, wid):
    """(total instructions per operation, {symbol: instructions per operation})
    for the windows of id `wid` (per window when they count no operations)."""
    ops = profile.ops(wid) or sum(w["id"] == wid for w in profile.windows)
    if not ops:
        return 0.0, {}
    return (profile.insns(wid) / ops,
            {s: v / ops for s, v in per_symbol(profile, symbols, wid).items()})


def window_totals(profile):
    """[(window name, windows, ops, instructions, per op)] in the order seen."""
    out = []
    for wid in profile.ids():
        n = sum(w["id"] == wid for w in profile.windows)
        ops, insns = profile.ops(wid), profile.insns(wid)
        out.append((window_name(wid), n, ops, insns, insns / (ops or n)))
    return out


def only_in(other, base):
    """Symbols of `other` ({symbol: v}) with instructions there and none in `base`,
    most first."""
    return sorted((s for s, v in other.items() if v > 0 and not base.get(s)),
                  key=lambda s: (-other[s], s))


def fmt(v):
    if not v:
        return "0"
    return "{:,.0f}".format(v) if abs(v) >= 100 else "{:,.1f}".format(v)


def top_table(label, wname, total, syms, top):
    """Text lines: a configuration's `top` symbols in one window kind."""
    out = ["%s, window %s: %s instructions per op" % (label, wname, fmt(total))]
    rows = sorted(syms.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    for name, v in rows:
        out.append("  %12s  %5.1f%%  %s" % (fmt(v), 100.0 * v / total if total else 0, name))
    return out


def diff_table(label, base_label, wname, totals, syms, top):
    """Text lines: `label` minus `base_label` per op in one window kind, the
    symbols whose difference is largest either way; '*' marks a symbol that
    has no instructions in the base."""
    (t_other, t_base), (s_other, s_base) = totals, syms
    ratio = " (%.2fx)" % (t_other / t_base) if t_base else ""
    out = ["%s minus %s, window %s: %s - %s = %s instructions per op%s" % (
        label, base_label, wname, fmt(t_other), fmt(t_base), ("+" if t_other >= t_base else "")
        + fmt(t_other - t_base), ratio)]
    names = set(s_other) | set(s_base)
    diffs = sorted(((s_other.get(s, 0) - s_base.get(s, 0), s) for s in names),
                   key=lambda d: (-abs(d[0]), d[1]))[:top]
    out.append("  %12s  %12s  %12s  symbol" % ("difference", label[:12], base_label[:12]))
    for d, s in diffs:
        out.append("  %12s  %12s  %12s  %s%s" % (("+" if d >= 0 else "") + fmt(d),
                                                 fmt(s_other.get(s, 0)), fmt(s_base.get(s, 0)),
                                                 s, "" if s_base.get(s) else " *"))
    return out


def report(configs, top=10, windows=None):
    """Text lines for [(label, Profile, Symbols)]: window totals and top
    symbols per configuration, then each configuration against the first."""
    out = []
    for label, p, _ in configs:
        out.append("== %s: %s windows, counted per %s ==" % (
            label, p.summary.get("windows"), "instruction" if p.count == "insn" else
            "translation block"))
        for name, n, ops, insns, each in window_totals(p):
            out.append("  %-14s %6d window(s) %8d ops %14s instructions %12s per op" % (
                name, n, ops, "{:,}".format(insns), fmt(each)))
    for label, p, sym in configs:
        for wid in p.ids():
            if windows and wid not in windows:
                continue
            total, syms = per_op(p, sym, wid)
            out += top_table(label, window_name(wid), total, syms, top)
    if len(configs) > 1:
        base_label, base, base_sym = configs[0]
        for label, p, sym in configs[1:]:
            for wid in p.ids():
                if (windows and wid not in windows) or wid not in base.ids():
                    continue
                t_o, s_o = per_op(p, sym, wid)
                t_b, s_b = per_op(base, base_sym, wid)
                out += diff_table(label, base_label, window_name(wid), (t_o, t_b), (s_o, s_b),
                                  top)
    return out


def load_config(spec):
    """LABEL=PROFILE[,KALLSYMS] -> (label, Profile, Symbols)."""
    label, eq, rest = spec.partition("=")
    if not eq or not label or not rest:
        raise ProfileError("want LABEL=PROFILE[,KALLSYMS]: %r" % spec)
    path, _, ksyms = rest.partition(",")
    return label, read_profile(path), read_symbols(ksyms or kallsyms_for(path))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("configs", nargs="+", metavar="LABEL=PROFILE[,KALLSYMS]")
    ap.add_argument("--top", type=int, default=10, help="symbols per table (default 10)")
    ap.add_argument("--window", action="append", default=[], metavar="NAME",
                    help="only this window kind, e.g. copy-4096 (repeatable)")
    args = ap.parse_args(argv)
    try:
        windows = {window_id(w) for w in args.window}
        configs = [load_config(c) for c in args.configs]
    except (OSError, ProfileError) as e:
        print("profile.py: %s" % e, file=sys.stderr)
        return 1
    print("\n".join(report(configs, args.top, windows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
