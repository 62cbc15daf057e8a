# SPDX-License-Identifier: GPL-2.0-or-later
"""swiotlb: the DMA API's per-call cost without an IOMMU, with and without swiotlb=force,
in memcpy()s of the same size, and the bytes bounced; measure.py's docstring and
docs/swiotlb.rst say more."""

import measure_checks as checks
from measure_tables import Table, in_copies
from studies.common import Study


def swiotlb_configs(mode, ioat):
    """No IOMMU, with and without swiotlb=force (which bounces every streaming
    mapping through its pool; it applies only where no IOMMU translates, hence
    intel_iommu=off in both)."""
    words = "intel_iommu=off dmalab.swiotlb_stats=1 dmalab_exercise.mode=" + mode
    return [("no-bounce", ["--device", ioat, "--append", words] +
             checks.premise("identity", "none")),
            ("swiotlb", ["--device", ioat, "--append", "swiotlb=force " + words] +
             checks.premise("bounced", "none", r"^software IO TLB: area num"))]


# Needs the patched ioatdma (guest-tests/ioatdma_patched.py): Debian's refuses
# dmalab-ioat under swiotlb=force (scenario swiotlb-selftest-bug).
STUDY = Study("mapcost", False, "", [
    Table("bench-map", ("op", "size"), "p50_ns", ["p99_ns"], "ns per call",
          derived=lambda s, labels: in_copies(s, labels)),
    Table("bench-swiotlb", (), "bounced_bytes",
          ["bounced_maps", "slabs", "used_slabs", "hiwater_slabs"],
          "bytes in mappings swiotlb bounced while the exerciser ran",
          check=checks.swiotlb_row)],
    smp=1, quick={"dmalab_exercise.mapcost_calls": 200}, matrix=swiotlb_configs,
    extra=["--allow", "ioatdma: module verification failed"])
