# SPDX-License-Identifier: GPL-2.0-or-later
"""What must hold in every boot of a study for its figures to mean what they say, checked
by measure.py: each configuration's premise (where a mapped page lands, the IOMMU domain
and the kernel's flush policy), each bench row's (every copy slept, every packet sent
arrived or was counted lost, swiotlb bounced or did not), and with --expect-order the
iommu-flush study's order: strict above lazy above no IOMMU, by more than the figures'
resolution."""

import re


def premise(mapped, domain, line=None):
    """Runner arguments for what a configuration's boots must show: where a page the
    exerciser maps lands (its iommu_expect, a KTAP result: translated, identity or
    bounced), the IOMMU domain it reports for its device (DMA is strict, DMA-FQ lazy;
    identity; none), and a kernel line (`line`, a regex), such as the flush policy."""
    args = ["--append", "dmalab_exercise.iommu_expect=" + mapped,
            "--expect-line", r"^# dmalab_exercise: iommu: domain %s, .*, %s$" % (
                re.escape(domain), mapped)]
    if line:
        args += ["--expect-line", line]
    return args


def policy(mode):
    """The kernel's line for the DMA domains' flush policy (iommu.strict)."""
    return r"^iommu: DMA domain TLB invalidation policy: %s mode" % mode


def _ints(f, *names):
    try:
        return [int(f[n]) for n in names]
    except (KeyError, ValueError):
        return None


def copy_row(label, f, modelled):
    """bench-copy: every copy made its thread sleep (the study's engine profile is chosen
    for it, so that every configuration pays one sleep and wake-up a copy); on the host's
    clock whether a copy is done before its thread waits depends on the host, so there
    it is only reported."""
    v = _ints(f, "copies", "slept")
    if v is None:
        return ["bench-copy size=%s: no copies= or slept=" % f.get("size")]
    copies, slept = v
    if not copies:
        return ["bench-copy size=%s: no copy was made" % f.get("size")]
    if slept != copies and modelled:
        return ["bench-copy size=%s rate=%s: %d of %d copies slept: the configurations do "
                "not compare" % (f.get("size"), f.get("rate"), slept, copies)]
    return []


def nic_row(label, f, modelled):
    """bench-nic: pktgen sent packets, and the receiver got every one the NICs did not
    count as lost (and no more)."""
    v = _ints(f, "sent", "received", "lost")
    if v is None:
        return ["bench-nic size=%s: no sent=, received= or lost=" % f.get("size")]
    sent, received, lost = v
    if not sent:
        return ["bench-nic size=%s: pktgen sent nothing" % f.get("size")]
    if not sent - lost <= received <= sent:
        return ["bench-nic size=%s: %d of %d packets received, %d counted lost" % (
            f.get("size"), received, sent, lost)]
    return []


def swiotlb_row(label, f, modelled):
    """bench-swiotlb: under swiotlb=force the exerciser's mappings bounced, without it
    none did."""
    v = _ints(f, "bounced_maps", "bounced_bytes")
    if v is None:
        return ["bench-swiotlb: no bounced_maps= or bounced_bytes="]
    maps, nbytes = v
    if label.split(",")[0] == "swiotlb":
        if not maps or not nbytes:
            return ["bench-swiotlb: swiotlb=force bounced %d mappings, %d bytes" % (
                maps, nbytes)]
    elif maps or nbytes:
        return ["bench-swiotlb: %d mappings (%d bytes) bounced without swiotlb=force" % (
            maps, nbytes)]
    return []


def copy_bound(f):
    """The most busy_ns_per_copy can be off by its clock: the window's busy time is a
    difference of wall time (times the CPUs) and of idle time, each read in whole us, so
    off by less than CPUs + 1 us; spread over the window's copies, with 1 ns for the
    integer division."""
    copies, cpus = _ints(f, "copies", "cpus") or (0, 0)
    if not copies:
        return None
    return (cpus + 1) * 1000 / copies + 1


def nic_bound(f):
    """The same for busy_ns_per_packet: one window in units of clock_us (1 us from the
    exerciser's cpu_us, 10 ms from /proc/uptime) over the packets sent."""
    sent, clock_us, cpus = _ints(f, "sent", "clock_us", "cpus") or (0, 0, 0)
    if not sent or not clock_us:
        return None
    return (cpus + 1) * clock_us * 1000 / sent + 1


def chains(labels):
    """(no-iommu, LAZY, STRICT) for each strict configuration with its lazy twin (the
    same IOMMU and --sweep value)."""
    out = []
    for strict in labels:
        name, _, rest = strict.partition(",")
        if name.endswith("-strict") and "no-iommu" in labels:
            lazy = name[:-len("-strict")] + "-lazy" + ("," + rest if rest else "")
            if lazy in labels:
                out.append(("no-iommu", lazy, strict))
    return out


def expect_order(runs, labels, tables, not_below=False):
    """--expect-order: for each table with a bound, each key and each chain, every boot of
    a stricter configuration above every boot of the laxer one by more than both figures'
    bounds: min(stricter - its bound) > max(laxer + its bound).  With not_below, the
    weaker order a workload without a strict cost of its own may only keep (udp's igb,
    which recycles its receive pages): no boot of the stricter one below a boot of the
    laxer one by more than the two bounds.  Returns (lines, failures)."""
    lines, failures = [], []
    found = chains(labels)
    if not found:
        return [], ["--expect-order: no strict configuration with its lazy twin and "
                    "no-iommu"]
    for t in tables:
        if not t.bound:
            continue
        per = {}    # (key, label) -> [(value, bound)] over the boots
        for label in labels:
            for rows in runs[label]:
                for tag, f in rows:
                    v = _ints(f, t.primary)
                    b = t.bound(f)
                    if tag == t.tag and v is not None and b is not None:
                        key = tuple(f.get(k) for k in t.keys)
                        per.setdefault((key, label), []).append((v[0], b))
        for key in sorted({k for k, _ in per}, key=str):
            what = "%s %s" % (t.tag, " ".join("%s=%s" % kv for kv in zip(t.keys, key)))
            for chain in found:
                boots = [per.get((key, label)) for label in chain]
                if not all(boots):
                    failures.append("%s: no figures from %s" % (
                        what, ", ".join(l for l, b in zip(chain, boots) if not b)))
                    continue
                parts = []
                pairs = list(zip(chain, boots))
                for (lax, lo), (strict, hi) in zip(pairs, pairs[1:]):
                    top = max(v + b for v, b in lo)
                    bottom = min(v - b for v, b in hi)
                    gap = min(v for v, _ in hi) - max(v for v, _ in lo)
                    if not_below:
                        tol = max(b for _, b in hi) + max(b for _, b in lo)
                        parts.append("%s - %s: %+d (tolerance %.0f)" % (strict, lax, gap, tol))
                        if gap < -tol:
                            failures.append("%s: %s is below %s by more than the figures' "
                                            "resolution: %s" % (what, strict, lax, parts[-1]))
                        continue
                    parts.append("%s above %s by %d (bounds %.0f and %.0f)" % (
                        strict, lax, gap, max(b for _, b in hi), max(b for _, b in lo)))
                    if bottom <= top:
                        failures.append("%s: %s is not above %s by more than the "
                                        "figures' resolution: %s" % (
                                            what, strict, lax, parts[-1]))
                lines.append("  %s: %s" % (what, "; ".join(parts)))
    order = ("strict >= lazy >= no IOMMU (%s, every boot, within the figures' resolution):"
             if not_below else
             "strict > lazy > no IOMMU (%s, every boot, beyond the figures' resolution):")
    return [order % ", ".join(t.primary for t in tables if t.bound)] + lines, failures


def concurrent_row(label, f, modelled):
    """bench-mapmt and bench-copymt, every CPU at work at once: each thread did its work,
    the unit's queue was read behind an IOMMU, and behind a strict one every unmap waited
    (a pair unmaps once, a copy twice): the counts read under the lock missed none."""
    what = "%s size=%s" % ("bench-mapmt" if "pairs" in f else "bench-copymt", f.get("size"))
    n = _ints(f, "pairs" if "pairs" in f else "copies", "threads", "descs", "waits")
    if n is None:
        return ["%s: no pairs= or copies=, threads=, descs=, waits=" % what]
    ops, threads, descs, waits = n
    if not ops or threads < 2:
        return ["%s: %d operations on %d threads" % (what, ops, threads)]
    iommu = label.split(",")[0] != "no-iommu"
    if iommu and descs < 0:
        return ["%s: the unit's invalidation queue was not read" % what]
    unmaps = ops * (1 if "pairs" in f else 2)
    if "-strict" in label and waits < unmaps:
        return ["%s: %d waits for %d strict unmaps: the queue reading missed some" % (
            what, waits, unmaps)]
    return []


# The most a byte of the CPU's own memcpy() may cost on the modelled clock: the studies'
# CPU has no fast strings, so Linux copies with its loop of 8-byte moves (0.38 ns a byte at
# 1 ns per instruction); a copy TCG counts per byte (rep movsb, as 6.1's build of mapcost.c
# once expanded memcpy() inline) costs 1.0, and the row would time the compiler's choice
MEMCPY_NS_PER_BYTE = 0.75


def memcpy_row(label, f, modelled):
    """bench-map op=memcpy on the modelled clock: the kernel's copy loop, not a copy TCG
    counts one instruction per byte (the mean, timer included, over the size)."""
    if not modelled or f.get("op") != "memcpy":
        return []
    n = _ints(f, "mean_ns", "size")
    if n is None or not n[1]:
        return ["bench-map op=memcpy: no mean_ns= or size="]
    per_byte = n[0] / n[1]
    if per_byte > MEMCPY_NS_PER_BYTE:
        return ["bench-map op=memcpy size=%d: %.2f ns per byte, not the kernel's copy loop "
                "(a copy TCG counts per byte, as an inlined rep movsb, costs 1.0)" % (
                    n[1], per_byte)]
    return []
