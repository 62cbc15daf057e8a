# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py --profile: the instruction profiles of a study's boots (guest-tests/profile.py,
docs/profile.rst) as tables a study prints beside its figures: instructions per operation
per window and configuration, and one configuration minus another, symbol by symbol."""

import importlib.util
import os

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _profile_module():
    """guest-tests/profile.py, under a name that is not the standard library's."""
    spec = importlib.util.spec_from_file_location("dmalab_profile",
                                                  os.path.join(_HERE, "profile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


prof = _profile_module()


def load(path):
    """(Profile, Symbols) of one boot's NAME.profile and NAME.kallsyms."""
    return prof.read_profile(path), prof.read_symbols(prof.kallsyms_for(path))


def per_op_table(profiles, labels):
    """Instructions per operation of each window kind, one column per configuration
    ({label: (Profile, Symbols)}); windows of one id over several rates add up."""
    have = [l for l in labels if l in profiles]
    wids = list(dict.fromkeys(w for l in have for w in profiles[l][0].ids()))
    out = ["guest instructions per operation (instruction profiles, count=%s):" %
           profiles[have[0]][0].count if have else "no profiles"]
    width = max([len(l) for l in have] + [10])
    out.append("  %-14s" % "window" + "".join(" %*s" % (width, l) for l in have))
    for wid in wids:
        cells = []
        for l in have:
            p, sym = profiles[l]
            cells.append(prof.fmt(prof.per_op(p, sym, wid)[0]) if wid in p.ids() else "-")
        out.append("  %-14s" % prof.window_name(wid) + "".join(
            " %*s" % (width, c) for c in cells))
    return out


def diff_lines(profiles, label, base, window, top):
    """profile.py's difference table of `label` minus `base` in one window."""
    wid = prof.window_id(window)
    (p, sym), (bp, bsym) = profiles[label], profiles[base]
    if wid not in p.ids() or wid not in bp.ids():
        return ["%s minus %s: no %s window in both" % (label, base, window)]
    t_o, s_o = prof.per_op(p, sym, wid)
    t_b, s_b = prof.per_op(bp, bsym, wid)
    return prof.diff_table(label, base, window, (t_o, t_b), (s_o, s_b), top)


def window_diff_lines(profiles, label, window, base_window, top):
    """One configuration's `window` minus its `base_window`, symbol by symbol."""
    p, sym = profiles[label]
    wid, bid = prof.window_id(window), prof.window_id(base_window)
    if wid not in p.ids() or bid not in p.ids():
        return ["%s: no %s and %s windows" % (label, window, base_window)]
    t_o, s_o = prof.per_op(p, sym, wid)
    t_b, s_b = prof.per_op(p, sym, bid)
    return prof.diff_table("%s %s" % (label, window), base_window, window, (t_o, t_b),
                           (s_o, s_b), top)


class _Names:
    """Symbols for a compact profile: its 'addresses' index the names it keeps."""

    def __init__(self, names):
        self.names = names

    def name(self, index):
        return self.names[index]


def compact(profile, symbols):
    """What a study's tables read of one boot's profile, to keep in its results file
    (measure.py save_results): the count mode, the windows, and instructions per kernel
    symbol in each window id, the blocks already named (NAME.profile and NAME.kallsyms
    together run to megabytes; this to a few kilobytes)."""
    return {"count": profile.count, "summary": profile.summary,
            "windows": profile.windows,
            "symbols": {str(wid): prof.per_symbol(profile, symbols, wid)
                        for wid in profile.ids()}}


def expand(data):
    """(Profile, symbols) from compact()'s dict, reading as the boot's own profile does in
    per_op, per_symbol and the tables above."""
    p = prof.Profile()
    p.count, p.summary = data["count"], dict(data["summary"])
    p.windows = [dict(w) for w in data["windows"]]
    names = []
    for wid, syms in data["symbols"].items():
        for name, insns in sorted(syms.items()):
            p.blocks.setdefault(int(wid), []).append((len(names), 0, insns))
            names.append(name)
    return p, _Names(names)
