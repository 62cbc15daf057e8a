# SPDX-License-Identifier: GPL-2.0-or-later
"""offload: NET_DMA's trade, copies through dmalab-ioat against the guest CPU's memcpy(),
as the CPU's busy time and the elapsed time, on the modelled clock at 1 ns per guest
instruction; measure.py's docstring and docs/offload.rst say more."""

import measure_checks as checks
from measure_tables import Table, crossover
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


def offload_configs(mode, ioat):
    """The same copies with the study's engine and with a slower one on the modelled CPU,
    and with the study's engine on a CPU whose copy costs an instruction per byte."""
    out = []
    for label, engine, cpu in OFFLOAD_CONFIGS:
        out.append((label, ["--device", "dmalab-ioat," + engine,
                            "--append", "dmalab_exercise.mode=" + mode] +
                    (["--cpu", cpu] if cpu else []) + checks.premise("identity", "none")))
    return out


STUDY = Study("offload", False, COPY_ENGINE, [
    Table("bench-offload", ("op", "size"), "busy_ns",
          ["elapsed_ns", "mean_ns", "p99_ns", "chunks"],
          "guest CPU busy ns per chunk copied (elapsed beside it)",
          derived=lambda s, labels: crossover(s, labels))],
    smp=1, icount=0, cpu=MODELLED_CPU, quick={"dmalab_exercise.offload_calls": 170},
    matrix=offload_configs, expect=orders.offload)
