# SPDX-License-Identifier: GPL-2.0-or-later
"""xdp: what an AF_XDP socket's receive path costs the guest CPU when every DMA mapping
bounces (swiotlb=force) and when none does, per packet, with the DMA API's calls and
swiotlb's copies counted per packet.  pktgen sends from one igb to the other of a one-CPU
guest (no IOMMU) at fixed rates; the receiving igb hands each frame to the kernel's stack
alone (no XDP program; the frames are dropped in IP) and then to an AF_XDP socket
(dmalab-xsk: libxdp's program in driver mode, the socket bound in copy mode, every frame
handed straight back to the fill ring).  init.sh's dmalab.xsk workload; it needs the image
of guest-tests/net_image.py.  Beside the seed's figure: an AF_XDP receive path lost about 9%
to DMA syncs that bounced nothing.  measure.py's docstring and docs/measure.rst say more."""

import measure_checks as checks
from measure_tables import Counts, Table, aligned
from studies.common import MODELLED_CPU, Study, hub_pairs

# Offered rates (packets/s; pktgen spins below a 150 us gap, so 6,666/s at most), frame
# sizes, and packets per window
RATES = "1000,5000"
SIZES = "64,1500"
COUNT = 2000
# --quick: one rate and size, fewer packets
QUICK = {"dmalab.xsk": "5000", "dmalab.xsk_sizes": "64", "dmalab.xsk_count": 500}

# The seed's figure: an AF_XDP receive path (on hardware, without bouncing) lost about 9%
# of its throughput to DMA sync calls that bounced nothing, made where a shortcut had
# skipped them
SEED = "about 9%"


def xsk_configs(mode, ioat):
    """No IOMMU (intel_iommu=off), without and with swiotlb=force, which bounces every
    streaming mapping through its pool.  No DMA engine: the NICs' DMA is what is measured
    (ioatdma binds nothing, --expect-unbound: no binding and no channel); the exerciser
    only keeps the clock and counts swiotlb's copies (init.sh loads it for the workload,
    scenario boot).  The premise, besides each row's (xsk_row: the NIC in no IOMMU domain,
    bytes bounced or not): swiotlb's set-up line under swiotlb=force."""
    words = ["--scenario", "boot", "--expect-unbound", "--append",
             "intel_iommu=off dmalab.swiotlb_stats=1 dmalab_exercise.mode=" + mode]
    return [("no-bounce", words + PAIR),
            ("swiotlb", words + ["--append", "swiotlb=force"] + PAIR +
             ["--expect-line", r"^software IO TLB: area num"])]


# Runner arguments: the igb pair on a QEMU hub of its own, and the workload's words
PAIR = hub_pairs(("igb",), "xsk", ("tx", "rx")) + [
    "--append", "dmalab.xsk=%s dmalab.xsk_sizes=%s dmalab.xsk_count=%d" % (
        RATES, SIZES, COUNT)]


def _bounced(label):
    return label.split(",")[0] == "swiotlb"


def xsk_row(label, f, modelled):
    """bench-xsk: pktgen sent packets and the receiving NIC got every one the NICs did
    not count as lost (and no more); the socket took every frame the NIC received or
    counted it in its drops; the NIC in no IOMMU domain; busy time from the exerciser's
    cpu_us; in the counting pass swiotlb copied bytes under swiotlb=force and none
    without it."""
    what = "bench-xsk receiver=%s size=%s rate=%s" % (
        f.get("receiver"), f.get("size"), f.get("rate"))
    v = checks._ints(f, "sent", "received", "lost", "sock_rx", "sock_dropped",
                     "sock_invalid", "sock_full", "sock_empty", "to_dev_bytes",
                     "from_dev_bytes", "clock_us")
    if v is None:
        return ["%s: no sent=, received=, lost=, sock_*=, to_dev_bytes=, from_dev_bytes= "
                "or clock_us=" % what]
    sent, received, lost, sock_rx, dropped, invalid, full, empty, to_dev, from_dev, \
        clock_us = v
    out = []
    if not sent:
        out.append("%s: pktgen sent nothing" % what)
    elif not sent - lost <= received <= sent:
        out.append("%s: %d of %d packets received, %d counted lost" % (
            what, received, sent, lost))
    if f.get("receiver") == "xsk":
        if sock_rx < 0:
            out.append("%s: no counts from the socket" % what)
        elif sock_rx + dropped + invalid + full + empty != received:
            out.append("%s: the socket took %d frames and dropped %d of the %d the NIC "
                       "received" % (what, sock_rx, dropped + invalid + full + empty,
                                     received))
    elif f.get("receiver") != "stack":
        out.append("%s: unknown receiver" % what)
    if f.get("domain") != "none":
        out.append("%s: the NIC's IOMMU domain is %s, not none" % (what, f.get("domain")))
    if clock_us != 1:
        out.append("%s: busy time in units of %d us, not the exerciser's cpu_us" % (
            what, clock_us))
    if to_dev < 0 or from_dev < 0:
        out.append("%s: swiotlb's copies were not counted" % what)
    elif _bounced(label) and not to_dev + from_dev:
        out.append("%s: nothing bounced under swiotlb=force" % what)
    elif not _bounced(label) and to_dev + from_dev:
        out.append("%s: %d bytes bounced without swiotlb=force" % (what, to_dev + from_dev))
    return out


def xsk_bound(f):
    """The most busy_ns_per_packet can be off by its clock: one window in units of
    clock_us (1 us from cpu_us) on each CPU and the wall clock, over the packets sent, and
    1 ns for the division (measure_checks.nic_bound)."""
    return checks.nic_bound(f)


def expect_bounce_above(runs, labels, tables):
    """--expect-order: per size and rate, every boot of swiotlb above every boot of
    no-bounce in the AF_XDP socket's busy ns per packet, by more than both figures'
    resolution (xsk_bound).  Returns (lines, failures)."""
    hi, lo = "swiotlb", "no-bounce"
    if hi not in labels or lo not in labels:
        return [], ["--expect-order: no swiotlb and no-bounce configurations"]
    t = tables[0]

    def figures(label):
        out = {}
        for rows in runs.get(label, []):
            for tag, f in rows:
                v = checks._ints(f, t.primary)
                b = xsk_bound(f)
                if tag == t.tag and f.get("receiver") == "xsk" and v and b is not None:
                    out.setdefault((f.get("size"), f.get("rate")), []).append((v[0], b))
        return out
    a, b = figures(hi), figures(lo)
    lines, failures = [], []
    keys = sorted(set(a) | set(b), key=lambda k: tuple(int(x or 0) for x in k))
    if not keys:
        failures.append("bench-xsk receiver=xsk: no figures from %s or %s" % (hi, lo))
    for key in keys:
        name = "bench-xsk receiver=xsk size=%s rate=%s %s" % (key + (t.primary,))
        if key not in a or key not in b:
            failures.append("%s: no figures from %s" % (name, hi if key not in a else lo))
            continue
        gap = min(v for v, _ in a[key]) - max(v for v, _ in b[key])
        text = "%s: %s above %s by %d (bounds %.0f and %.0f)" % (
            name, hi, lo, gap, max(e for _, e in a[key]), max(e for _, e in b[key]))
        lines.append("  " + text)
        if min(v - e for v, e in a[key]) <= max(v + e for v, e in b[key]):
            failures.append(text + ": not beyond the figures' resolution")
    return ["xdp: bounced > not bounced for the AF_XDP socket, every boot, beyond the "
            "figures' resolution:"] + lines, failures


# The column "same metric? same workload?" beside the seed's figure
SAME = ("metric: no, the guest CPU's busy ns per packet with every mapping bounced against "
        "none bounced, not the throughput lost to sync calls that bounce nothing (that "
        "would need the calls skipped: the counts above give them per packet); workload: "
        "partly, an AF_XDP socket dropping every frame (copy mode, driver XDP, poll) on an "
        "emulated igb, %s-byte frames at %s/s from pktgen on a second igb of the same "
        "one-CPU guest, on a modelled 1-GIPS CPU, not the seed's hardware NIC, CPU and rate")


def seed_lines(summaries, labels, t):
    """Per size and rate: each configuration's busy ns per packet for the stack and the
    socket, the socket's over the stack's, swiotlb's over no-bounce's, the seed's figure
    beside it and whether the metric and the workload are the same.  (lines, CSV/JSON
    rows)."""
    lines = ["xdp beside the seed (an AF_XDP receive path on hardware, without bouncing, "
             "lost %s of its throughput to DMA sync calls that bounced nothing, made where "
             "a shortcut had skipped them); guest CPU busy ns per packet, sender and "
             "receiver, gross:" % SEED]
    rows = []
    base = summaries.get("no-bounce", {})
    keys = list(dict.fromkeys((k[1], k[2]) for label in labels
                              for k in summaries.get(label, {})))
    for size, rate in keys:
        head = ["config", "stack", "xsk", "xsk / stack", "xsk / no-bounce's", "seed",
                "same metric? same workload?"]
        body = []
        for label in labels:
            s = summaries.get(label, {})
            stack, xsk = s.get(("stack", size, rate)), s.get(("xsk", size, rate))
            if not xsk and not stack:
                continue
            b = base.get(("xsk", size, rate))
            body.append([label, str(stack[0]) if stack else "-",
                         str(xsk[0]) if xsk else "-",
                         "%.2f" % (xsk[0] / stack[0]) if xsk and stack and stack[0]
                         else "-",
                         "%.2f (%+.0f%%)" % (xsk[0] / b[0], 100 * (xsk[0] / b[0] - 1))
                         if xsk and b and b[0] else "-",
                         "-9% (throughput)" if not _bounced(label) else "-",
                         "no; partly (below)" if not _bounced(label) else "-"])
            if xsk and stack and stack[0]:
                rows.append(dict(receiver="xsk", size=size, rate=rate, tag=t.tag,
                                 config=label, metric="busy_ns_per_packet:ratio_stack",
                                 value=round(xsk[0] / stack[0], 4)))
            if xsk and b and b[0]:
                rows.append(dict(receiver="xsk", size=size, rate=rate, tag=t.tag,
                                 config=label, metric="busy_ns_per_packet:ratio_no_bounce",
                                 value=round(xsk[0] / b[0], 4)))
        lines.append("size=%s rate=%s/s:" % (size, rate))
        lines += aligned(head, body)
        lines.append("  same metric? same workload? " + SAME % (size, rate))
    if not keys:
        return [], []
    return lines, rows


STUDY = Study("clock", False, "", [
    Table("bench-xsk", ("receiver", "size", "rate"), "busy_ns_per_packet",
          ["net_ns_per_packet", "util_ppm", "per_s", "sent", "received", "irqs"],
          "guest CPU ns per packet sent and received, gross, two igb",
          check=xsk_row, bound=xsk_bound,
          derived=lambda s, labels: seed_lines(s, labels, STUDY.tables[0]))],
    smp=1, icount=0, cpu=MODELLED_CPU, matrix=xsk_configs, quick=QUICK,
    expect=expect_bounce_above)
# The rate is the workload's own (dmalab.xsk), not --rate's: no spread around one.  The
# spread: seeds 1 and 2; the exerciser only keeps the clock and counts, so no second build
STUDY.rated = False
STUDY.builds = 1
STUDY.counts = [
    Counts("bench-xsk", ("receiver", "size", "rate"), "sent", [("interrupts", "irqs")],
           "per packet sent", "/proc/interrupts, both igb's vectors, read around the "
           "window, the last after a 100 ms pause for the last frames"),
    Counts("bench-xsk", ("receiver", "size", "rate"), "count_sent",
           [("bytes bounced", lambda f: int(f["to_dev_bytes"]) + int(f["from_dev_bytes"])),
            ("bounce copies", lambda f: int(f["to_dev_copies"]) + int(f["from_dev_copies"])),
            ("syncs for cpu", "syncs_cpu"), ("syncs for device", "syncs_dev"),
            ("maps", "maps"), ("unmaps", "unmaps")],
           "per packet sent in the counting pass",
           "a counting pass after each window: the exerciser's kprobe on swiotlb_bounce "
           "(swiotlb's copies) and tracefs kprobe events on the DMA API's sync, map and "
           "unmap functions (calls made, bounced or not), both NICs' and the whole "
           "guest's")]
