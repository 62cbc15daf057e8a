# SPDX-License-Identifier: GPL-2.0-or-later
"""offload: NET_DMA's trade, copies through dmalab-ioat against the guest CPU's memcpy(),
as the CPU's busy time and the elapsed time, on the modelled clock at 1 ns per guest
instruction; measure.py's docstring and docs/offload.rst say more."""

import measure_checks as checks
from measure_tables import Counts, Table, crossover
from studies import orders
from studies.common import MODELLED_CPU, Study
from studies.iommu_flush import COPY_ENGINE


# The second engine profile: slower to start and to move bytes.  Neither is a measured
# one: no published per-channel latency or bandwidth of Intel's I/OAT (CBDMA) engines was
# found (docs/offload.rst); COPY_ENGINE is the iommu-flush study's chosen profile.
SLOW_ENGINE = "latency-ns=10000,bandwidth=1000000000"
# The configurations: (label, dmalab-ioat's properties, QEMU's -cpu).  The CPU's copy is
# the modelled CPU's own memcpy (studies.common.MODELLED_CPU; the study's cpu rows measure
# its ns per byte); "erms-cpu" is QEMU's max CPU, whose memcpy is one rep movsb that TCG
# counts as one instruction per byte: a dearer CPU copy, to show what the crossover owes
# to the CPU copy's cost.
OFFLOAD_CONFIGS = (("engine", COPY_ENGINE, None), ("slow-engine", SLOW_ENGINE, None),
                   ("erms-cpu", COPY_ENGINE, "max"))


# The RAID rows: md writes (init.sh, dmalab.scenario=mdcost: RAID5 over 3 and RAID6 over 4
# RAM disks of 16 MiB, 16 MiB written with O_DIRECT) with the parity computed by the CPU
# (the skx personality: ioatdma keeps no XOR or PQ, async_tx computes in software) and
# offloaded (bwd: async_tx gives XOR and PQ to ioatdma), the study's engine profile in
# both.  The exerciser only keeps the clock (mode=clock).  The counters must agree: no
# XOR or PQ descriptor on the CPU's boots, some on the offloaded ones: more XOR than the
# one ioatdma's probe self-test completes, and PQ, of which it runs none.
RAID_WORDS = "brd.rd_nr=7 brd.rd_size=16384 dmalab_exercise.mode=clock"
RAID_CONFIGS = (
    ("raid-cpu", "dmalab-ioat," + COPY_ENGINE,
     ["--expect-ioat", "xor-descriptors==0", "--expect-ioat", "pq-descriptors==0"]),
    ("raid-offload", "dmalab-ioat,personality=bwd," + COPY_ENGINE,
     ["--expect-id", "0x8086:0x0c50", "--expect-device-errors", "1",
      "--expect-ioat", "xor-descriptors>1", "--expect-ioat", "pq-descriptors>0"]))


def _raid(label):
    return label.startswith("raid-")


def offload_configs(mode, ioat):
    """The same copies with the study's engine and with a slower one on the modelled CPU,
    and with the study's engine on a CPU whose copy costs an instruction per byte; then
    md RAID writes with the parity on the CPU and offloaded."""
    out = []
    for label, engine, cpu in OFFLOAD_CONFIGS:
        out.append((label, ["--device", "dmalab-ioat," + engine,
                            "--append", "dmalab_exercise.mode=" + mode] +
                    (["--cpu", cpu] if cpu else []) + checks.premise("identity", "none")))
    for label, device, expect in RAID_CONFIGS:
        out.append((label, ["--device", device, "--scenario", "mdcost",
                            "--append", RAID_WORDS] + expect +
                    checks.premise("identity", "none")))
    return out


STUDY = Study("offload", False, COPY_ENGINE, [
    Table("bench-offload", ("op", "size"), "busy_ns",
          ["elapsed_ns", "mean_ns", "p99_ns", "chunks"],
          "guest CPU busy ns per chunk copied (elapsed beside it)",
          derived=lambda s, labels: crossover(s, [x for x in labels if not _raid(x)]),
          only=lambda label: not _raid(label)),
    Table("bench-raid", ("level",), "busy_ns_per_mib",
          ["wall_ns_per_mib", "mb_per_s", "util_ppm"],
          "guest CPU busy ns per MiB written to md (elapsed and MB/s beside it)",
          only=_raid)],
    smp=1, icount=0, cpu=MODELLED_CPU,
    quick={"dmalab_exercise.offload_calls": 170, "dmalab.md_cost_mib": 4},
    matrix=offload_configs, expect=orders.offload)


def profile_lines(profiles, labels, top=12):
    """With --profile, among the counts: instructions per MiB in each configuration's md
    write windows, and what the CPU's parity costs over the offloaded one, symbol by
    symbol, per level."""
    from studies.profiles import per_op_table, diff_lines
    have = [label for label in labels if _raid(label) and label in profiles]
    out = ["", "md writes, instruction profiles (window md-5: RAID5, md-6: RAID6; "
           "operations: MiB written):"] + per_op_table(profiles, have)
    if "raid-cpu" in profiles and "raid-offload" in profiles:
        for window in ("md-5", "md-6"):
            out += diff_lines(profiles, "raid-cpu", "raid-offload", window, top)
    return out


STUDY.profile_lines = profile_lines
STUDY.counts = [
    Counts("bench-offload", ("op", "size"), "chunks", [("engine copies", "dma_copies")],
           "per chunk", "the exerciser's tally: how many of the chunks the engine copied",
           only=lambda label: not _raid(label))]

