# SPDX-License-Identifier: GPL-2.0-or-later
"""swiotlb: what bouncing costs, without an IOMMU, with and without swiotlb=force: the DMA
API per call and the AF_XDP-like syncs per frame (mode=mapcost, mapcost_xdp=1), a real
driver's packets (init.sh's pktgen between two e1000e on a QEMU hub) with the bytes bounced
per packet, and a copy through dmalab-ioat (mode=offload); measure.py's docstring and
docs/swiotlb.rst say more."""

import measure_checks as checks
from measure_tables import BENCH_MAP, Counts, Table, byte_prices, in_copies, net_of_empty
from studies import orders
from studies.common import MAP_BOUNCES, MODELLED_CPU, NIC_IRQS, Study
from studies.iommu_flush import COPY_ENGINE, nic_args


# One pair of e1000e (igb's page recycling under swiotlb=force is not measured here: its
# rows would mix with e1000e's, keyed by size and rate only)
NIC = nic_args(("e1000e",))


def _calls(label):
    return not label.endswith("-engine")


def _engine(label):
    return label.endswith("-engine")


def swiotlb_configs(mode, ioat):
    """No IOMMU, without and with swiotlb=force (which bounces every streaming mapping
    through its pool; it applies only where no IOMMU translates, hence intel_iommu=off
    in all four): the calls, the syncs and the NICs' packets; then a copy through the
    engine (mode=offload), under the study's engine profile."""
    words = "intel_iommu=off dmalab.swiotlb_stats=1 "
    calls = words + "dmalab_exercise.mapcost_xdp=1 dmalab_exercise.mode=" + mode
    copies = words + "dmalab_exercise.mode=offload"
    engine = "dmalab-ioat," + COPY_ENGINE
    direct = checks.premise("identity", "none")
    bounced = checks.premise("bounced", "none", r"^software IO TLB: area num")
    return [("no-bounce", ["--device", ioat, "--append", calls] + NIC + direct),
            ("swiotlb", ["--device", ioat, "--append", "swiotlb=force " + calls] + NIC +
             bounced),
            ("no-bounce-engine", ["--device", engine, "--append", copies] + direct),
            ("swiotlb-engine", ["--device", engine, "--append", "swiotlb=force " + copies] +
             bounced)]


def _map_in_copies(summaries, labels):
    summaries = {k: v for k, v in summaries.items() if _calls(k)}
    labels = [label for label in labels if _calls(label)]
    lines, rows = in_copies(summaries, labels)
    more, more_rows = byte_prices(summaries, labels)
    return lines + more, rows + more_rows


# Needs the patched ioatdma (guest-tests/ioatdma_patched.py): Debian's refuses
# dmalab-ioat under swiotlb=force (scenario swiotlb-selftest-bug).
STUDY = Study("mapcost", False, "", [
    Table(BENCH_MAP.tag, BENCH_MAP.keys, BENCH_MAP.primary, BENCH_MAP.others, BENCH_MAP.unit,
          derived=_map_in_copies, per_boot=net_of_empty, only=_calls,
          check=BENCH_MAP.check),
    Table("bench-xdp", ("op", "size"), "net_mean_ns", ["mean_ns", "net_p50_ns", "net_p99_ns"],
          "ns per AF_XDP-like sync of a frame (size: its length), mean less the empty "
          "region's", per_boot=net_of_empty, only=_calls),
    Table("bench-bounce", ("op", "size"), "bytes_per_call",
          ["to_dev_bytes", "from_dev_bytes", "calls"],
          "bytes swiotlb copied per call (a kprobe on swiotlb_bounce, untimed passes)",
          check=orders.bounce_row, only=_calls),
    Table("bench-nic", ("size", "rate"), "busy_ns_per_packet",
          ["per_s", "sent", "received", "net_ns_per_packet"],
          "guest CPU ns per packet sent and received, two e1000e", check=checks.nic_row,
          only=_calls),
    Table("bench-nic-bounce", ("size",), "bytes_per_packet",
          ["to_dev_bytes", "from_dev_bytes", "sent", "received"],
          "bytes swiotlb copied per packet (a counting pass after the timed one)",
          check=orders.bounce_row, only=_calls),
    Table("bench-offload", ("op", "size"), "busy_ns", ["elapsed_ns", "mean_ns", "p99_ns"],
          "guest CPU busy ns per chunk copied through the engine (elapsed beside it)",
          only=_engine)],
    smp=1, icount=0, cpu=MODELLED_CPU, rated=True, matrix=swiotlb_configs,
    quick={"dmalab_exercise.mapcost_calls": 200, "dmalab.pktgen_count": 300,
           "dmalab_exercise.offload_calls": 170},
    extra=["--allow", "ioatdma: module verification failed"], expect=orders.swiotlb)
STUDY.counts = [
    MAP_BOUNCES,
    Counts("bench-nic-bounce", ("size",), "sent",
           [("bytes bounced", lambda f: int(f["to_dev_bytes"]) + int(f["from_dev_bytes"])),
            ("copies", lambda f: int(f["to_dev_copies"]) + int(f["from_dev_copies"]))],
           "per packet sent", "swiotlb's trace event summed by a histogram trigger, a "
           "counting pass after the timed one"),
    Counts("bench-nic", ("size", "rate"), "sent", [("interrupts", "irqs")],
           "per packet sent", NIC_IRQS.how)]
