#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab measure: what the DMA API costs, as ratios to a baseline measured in the same run.

--study dma-api: the exerciser's mode=mapcost, which times
dma_map_single(), dma_unmap_single() and a dma_sync_single_for_cpu() +
_for_device() pair, one call at a time, on the DMA engine's PCI device, at
4 KiB and 64 KiB.  Configurations, one boot each in turn, --repeat times:
  no-iommu     no IOMMU: the direct mapping (the baseline)
  vtd-pt       dmalab-vtd, iommu=pt: the device in an identity domain
  vtd-lazy     dmalab-vtd, iommu.strict=0: unmaps queue their IOTLB flush
  vtd-strict   dmalab-vtd, iommu.strict=1: each unmap invalidates and waits
  intel-lazy, intel-strict   the same behind QEMU's intel-iommu, the peer
  vtd-cm       dmalab-vtd, caching-mode=on: strict, and each map invalidates too

Per operation and size it prints, for each configuration, the mean per call less
the mean of an empty timed region (the median over the boots of that, with the
smallest and largest boot beside it: the spread), the median and 99th percentile
likewise, the ratio to the baseline, and what a byte of the CPU's own memcpy()
and memset() costs (the same in every configuration: a consistency check).

--study iommu-flush (studies/iommu_flush.py), on a modelled CPU of 1 ns per
guest instruction (-icount shift=0; --icount N for 2^N ns), one CPU: the
exerciser's mode=copycost, copies through dmalab-ioat each mapped and unmapped
as a driver would, 4, 16 and 64 KiB; pktgen packets of 64, 512 and 1,500 bytes
between two e1000e and between two igb (init.sh's nic_pktgen); each at offered
rates up to back to back (--rates, default 1000,2000,5000,10000,0; --rate N one
rate); and scatter-gather maps and unmaps with the invalidation waits the unit
processed.  No IOMMU, dmalab-vtd pass-through, lazy and strict, dmalab-vtd in
scalable mode lazy and strict (vtd-sm-*), intel-iommu lazy and strict.  Per rate and size: the gross guest CPU time (wall minus idle, in
us) per operation, the utilisation, and the ratios strict / lazy /
pass-through / none beside the 2008 DMAR thread's 2.27 / 1.64 / 1.00; then
what a copy's figure is made of (instructions, the unit's waits, the engine's
time), with --profile SO the instruction profiles.

--study swiotlb: mode=mapcost again, on a one-CPU guest (with two, Linux
distrusted the TSC and timed with the 279 ns ACPI PM timer), without an IOMMU,
with and without swiotlb=force; the memcpy row is the guest CPU's own copy of
the buffer, what each bounce is made of.  The bench-swiotlb table is what
swiotlb bounced meanwhile (init.sh's dmalab.swiotlb_stats: the swiotlb_bounced
trace event summed by a histogram trigger, one per bounced mapping, and the
pool's slabs from debugfs).  It needs the image with the patched ioatdma
(guest-tests/ioatdma_patched.py): Debian's refuses the device under
swiotlb=force.

--study offload: the exerciser's mode=offload, NET_DMA's trade: per size
(256 B to 64 KiB) the guest CPU's busy time per chunk for its own memcpy() and
for a copy through dmalab-ioat waited for at once ("wait"), overlapped with
the CPU's own copy ("overlap") or synchronised before it ("ordered"), on a
one-CPU guest at 1 ns per guest instruction, with the study's engine, a slower
one, a CPU whose copy costs an instruction per byte, and through dmalab-dsa
under idxd with the study's engine profile ("dsa": idxd cannot be polled, so
there every copy asks for an interrupt and wait and ordered sleep until the
callbacks); each kind's cost over the CPU copy's per size and the crossover,
the size from which on offloading costs less.  Then md RAID5 and RAID6 writes
(init.sh's mdcost scenario) with the parity on the CPU (skx) and offloaded
(bwd): busy time per MiB written.  It boots the dsa image (accel-config).

--study udp (studies/udp.py): iperf3 (Debian's, in the image of net_image.py) sending
UDP from one NIC of a one-CPU guest to another in a network namespace of its own, two
e1000e and two igb (init.sh's dmalab.iperf): 16 KiB datagrams at 100, 200 and 400 Mbit/s
and 32-byte ones as fast as it can, each run one second with its middle 500 ms measured, on
the modelled CPU (1 ns per guest instruction, QEMU's max CPU without the fast-string
features); the same configurations as iommu-flush without scalable mode.  Per NIC, size and
rate: the gross guest CPU per datagram and the utilisation (at a fixed rate) or the
datagrams per second (at saturation), each over no IOMMU's, beside the 2008 thread's
figures with whether the metric and the workload are the same.

--study xdp (studies/xdp.py): pktgen from one igb of a one-CPU guest to the other (init.sh's
dmalab.xsk) at 1,000 and 5,000 packets/s, 64- and 1,500-byte frames, received first by the
kernel's stack alone and then by an AF_XDP socket that drops every frame (dmalab-xsk, in the
image of net_image.py: libxdp's program in driver mode, the socket in copy mode), without an
IOMMU, without (no-bounce) and with swiotlb=force (swiotlb), no DMA engine, on the modelled
CPU.  Per receiver, size and rate: the gross guest CPU per packet, counted first the
interrupts, swiotlb's copies and bytes and the DMA API's syncs, maps and unmaps per packet
(a counting pass after each window), and beside the seed's figure (an AF_XDP receive path
lost about 9% to syncs that bounced nothing) the socket's CPU over the stack's and
swiotlb's over no-bounce's, with whether the metric and the workload are the same.

Every study prints its counts first (measure_tables.Counts, docs/measure.rst, Counts and
times): per operation, invalidation descriptors and waits from the remapping unit's queue as
the exerciser reads it, bytes bounced, interrupts, engine copies; exact and untimed.  With
--profile, the instruction profiles follow them.

--smp N (2 or more): the guest gets N CPUs (on the modelled clock with tsc=reliable: every
vCPU's TSC reads the one virtual clock), and dma-api and iommu-flush add windows in which
every CPU maps and unmaps (bench-mapmt) or copies on a channel of its own (bench-copymt) at
once.  Under -icount QEMU runs the vCPUs in turn on one host thread and the virtual clock
counts every vCPU's instructions: N busy CPUs share one 1-GIPS clock, so their times are
not N CPUs' times; their counts are exact (docs/measure.rst, More than one CPU).

--quick: fewer calls and shorter windows, one boot per configuration unless
--repeat says otherwise; a smoke run of the machinery, not a measurement to
quote.  --same-counts (modelled clock, --repeat 2 or more): fail unless the
boots of each configuration end with the same device counters.

Clock: the guest's (ktime_get_ns).  Under TCG (or KVM) guest time follows the
host's, so a figure is what this host took to emulate the work, not what
hardware takes; with --icount SHIFT (TCG only) guest time counts guest
instructions (-icount shift=SHIFT,sleep=off, with QEMU's guest random numbers
seeded and the RTC on virtual time) and the figures are modelled ones, which
do not depend on the host: boots of one configuration agree.

What each boot must show for its figures to mean what they say is checked
(measure_checks.py): where a mapped page lands (translated, identity or
bounced), the device's IOMMU domain and the kernel's flush policy line per
configuration; that every copy slept (modelled clock), that every packet sent
was received or counted lost, that swiotlb bounced under swiotlb=force and
not without.  The figures themselves are reported, not asserted, except with
--expect-order.  The last line is "guest <name>: PASS" or "guest <name>:
FAIL: <reason>".
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
import measure_checks as checks  # noqa: E402,F401
import measure_provenance as prov  # noqa: E402
import plots  # noqa: E402,F401
from studies import STUDIES  # noqa: E402
import studies.profiles  # noqa: E402,F401
from studies import cpus  # noqa: E402
from studies.common import Study, configs, modelled_clock, vtd_variants  # noqa: E402,F401
from studies.iommu_flush import COPY_ENGINE, NIC  # noqa: E402,F401
from studies.offload import OFFLOAD_CONFIGS, SLOW_ENGINE, offload_configs  # noqa: E402,F401
from studies.swiotlb import swiotlb_configs  # noqa: E402,F401
from measure_tables import (  # noqa: E402,F401  (tests and bench scripts use them here)
    BENCH_MAP,
    Counts,
    Table,
    byte_prices,
    count_lines,
    counter_lines,
    crossover,
    in_copies,
    records,
    repeat_differences,
    summarise,
    table,
    unit_counters)
# The boots (measure_run.py) and what is printed and saved of them (measure_report.py),
# importable from here as before.
from measure_run import (  # noqa: E402,F401
    check_rows,
    clock_args,
    clock_words,
    initrd_builds,
    measure_boot,
    run_boots,
    settle,
    spread)
from measure_report import (  # noqa: E402,F401
    compare_boots,
    print_tables,
    save_results,
    tables_from,
    write_results)


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=sorted(STUDIES), default="dma-api")
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--name", default="measure")
    ap.add_argument("--repeat", type=int, metavar="N",
                    help="boots per configuration, alternating (default 3, with --quick 1)")
    ap.add_argument("--calls", type=int, default=2000,
                    help="dma-api: calls timed per operation and size (default 2000)")
    ap.add_argument("--rate", type=int,
                    help="iommu-flush, swiotlb: offered copies and packets per second, 0 for back to back "
                    "(default 1000; without --quick, the study's sweep unless this is given)")
    ap.add_argument("--rates", metavar="R1,R2,...",
                    help="iommu-flush: offered rates to sweep in each boot, copies and "
                    "packets per second, 0 for back to back (e.g. 1000,2000,5000,10000,0)")
    ap.add_argument("--profile", metavar="SO",
                    help="iommu-flush: boot with the instruction profiler "
                    "(libdmalab-profile.so) and print instructions per operation and "
                    "strict's top symbols over no IOMMU and over lazy")
    ap.add_argument("--seeds", metavar="N1,N2,...",
                    help="the spread: QEMU -seed of the reference boot, then one boot more "
                    "per further seed (default 1,2; with --quick 1)")
    ap.add_argument("--builds", type=int, choices=(1, 2),
                    help="the spread: 2 adds a boot with the exerciser built again in "
                    "another folder (default 2; with --quick 1)")
    ap.add_argument("--rate-spread", type=float, metavar="PCT",
                    help="the spread, studies with a rate: a boot at the rate less and one "
                    "at the rate more by PCT percent (default 1; with --quick 0)")
    ap.add_argument("--quick", action="store_true",
                    help="fewer calls, shorter windows, and one boot per configuration "
                    "unless --repeat says otherwise: a smoke run, not a measurement")
    ap.add_argument("--same-counts", action="store_true",
                    help="modelled clock, --repeat 2 or more: fail unless every boot of a "
                    "configuration ends with the same device counters (QMP); the guest's "
                    "figures that differ between boots are listed either way")
    ap.add_argument("--expect-order", action="store_true",
                    help="modelled clock: fail unless the study's figures come in the order "
                    "they must (iommu-flush: every strict boot above every lazy one above "
                    "no IOMMU; dma-api, swiotlb, offload: studies/orders.py; udp, xdp: "
                    "their modules), each by more than the figures' resolution")
    ap.add_argument("--set", action="append", default=[], metavar="PROP=VALUE",
                    help="a dmalab-vtd property for every configuration with dmalab-vtd, "
                    "e.g. wait-ns=5000 or iotlb-entries=64 (repeatable)")
    ap.add_argument("--sweep", metavar="PROP=V1,V2,...",
                    help="each configuration with dmalab-vtd once per value of this "
                    "dmalab-vtd property, e.g. wait-ns=0,1000,10000")
    ap.add_argument("--engine", metavar="PROPS",
                    help="dmalab-ioat's properties, e.g. latency-ns=0 (default: none for "
                    "dma-api; %s for iommu-flush)" % COPY_ENGINE)
    ap.add_argument("--smp", type=int, metavar="N",
                    help="guest CPUs (default: the study's, 1 for every study today)")
    ap.add_argument("--configs", metavar="LABEL,...",
                    help="boot only these configurations (e.g. no-iommu,vtd-strict)")
    ap.add_argument("--cpu-profile", metavar="NAME", default="model",
                    help="a published CPU (studies/cpus.py: %s): every dmalab delay is set "
                    "in that CPU's ns and scaled to its instructions on the 1-ns modelled "
                    "clock; default model (the models' delays as they are)"
                    % ", ".join(sorted(cpus.PROFILES)))
    ap.add_argument("--ipc", type=float, default=1.0,
                    help="with --cpu-profile: the instructions per cycle assumed (no "
                    "source gives the kernel's; default 1)")
    clock = ap.add_mutually_exclusive_group()
    clock.add_argument("--icount", type=int, metavar="SHIFT",
                       help="modelled time: -icount shift=SHIFT,sleep=off, -seed 1, the RTC "
                       "on virtual time (forces TCG; "
                       "the studies' default is 0: 1 ns per instruction)")
    clock.add_argument("--host-clock", action="store_true",
                       help="host-driven guest time, also for iommu-flush")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--log-dir", help="where each boot's serial log goes, and the results as "
                    "NAME.json and NAME.csv, and the plot as NAME.png and NAME.svg")
    ap.add_argument("--runner-arg", action="append", default=[],
                    help="one more runner.py argument, for every boot")
    ap.add_argument("--verbose", "-v", action="store_true")
    return ap


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tables"]:
        if len(argv) != 2:
            print("usage: measure.py tables RESULTS.json[.gz]", file=sys.stderr)
            return 2
        return tables_from(argv[1])
    args = make_parser().parse_args(argv)
    study = STUDIES[args.study]
    configs = settle(args, study)
    if configs is None:
        return 2
    variants = spread(args, study)
    try:
        initrds = initrd_builds(args, variants)
    except (RuntimeError, OSError) as e:
        print("measure.py: %s" % e, file=sys.stderr)
        return 2
    # read before the boots: the tree (and its commit) can change during a long run
    provenance = prov.provenance(args.qemu, args.kernel, initrds["a"])
    runs, counters, names, profiles, failed = run_boots(args, study, configs, variants,
                                                        initrds)
    labels = list(dict.fromkeys(label for label, _ in configs))
    clock_text = clock_words(args.icount, study)
    print("==== %s: medians of %d boots per configuration (%s), %d CPU(s), %s ====" % (
        args.study, len(variants) * args.repeat, ", ".join(v[0] for v in variants),
        args.smp or study.smp or 2, clock_text))
    print(cpus.describe(args.profile_, args.ipc))
    rows, bad, loaded = print_tables(args, study, labels, runs, counters, profiles)
    failed += bad
    failed += compare_boots(args, study, labels, runs, counters, names)
    if args.log_dir:
        save_results(args, study, configs, variants, initrds, clock_text,
                     (rows, runs, counters, names, provenance), loaded)
    return runner.verdict(args.name, failed)


if __name__ == "__main__":
    sys.exit(main())
