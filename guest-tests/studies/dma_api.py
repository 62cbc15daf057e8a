# SPDX-License-Identifier: GPL-2.0-or-later
"""dma-api: what dma_map_single(), dma_unmap_single() and a sync pair cost per call on
dmalab-ioat's device (the exerciser's mode=mapcost), without an IOMMU and behind dmalab-vtd
and intel-iommu; measure.py's docstring and docs/measure.rst say more."""

from measure_tables import BENCH_MAP
from studies.common import Study


STUDY = Study("mapcost", True, "", [BENCH_MAP],
    quick={"dmalab_exercise.mapcost_calls": 200})
