# SPDX-License-Identifier: GPL-2.0-or-later
"""offload: NET_DMA's trade, copies through dmalab-ioat (CBDMA) and dmalab-dsa (DSA) against
the guest CPU's memcpy(), as the CPU's busy time and the elapsed time, on the modelled clock
at 1 ns per guest instruction; measure.py's docstring and docs/offload.rst say more."""

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


def dsa_profile(ioat):
    """dmalab-dsa's properties for the engine profile of dmalab-ioat's `ioat`: the same
    latency, and twice the bandwidth, because dmalab-dsa paces the traffic of every range a
    descriptor touches (a copy's source and destination: docs/dsa.rst) where dmalab-ioat
    paces the bytes copied; either way a copy of N bytes completes latency-ns + N /
    (ioat's bandwidth) after it started."""
    props = []
    for p in ioat.split(","):
        key, _, value = p.partition("=")
        props.append("%s=%d" % (key, 2 * int(value)) if key == "bandwidth" else p)
    return ",".join(props)


# The DSA configuration: dmalab-dsa with the study's engine profile under Linux's idxd,
# group 0 with one engine and a dedicated kernel WQ of 16 entries set up by accel-config
# (init/dsa.sh, as in the dsa-memcpy scenario), the exerciser on its one channel; the
# study's CPU.  idxd completes out of order: every offloaded copy asks for an interrupt,
# and wait and ordered sleep until the callbacks instead of polling (offload.c).
DSA_CONFIGS = (("dsa", dsa_profile(COPY_ENGINE)),)
DSA_LABELS = tuple(label for label, _ in DSA_CONFIGS)
# Where the CPU must be idle for part of every offloaded kind through DSA (--expect-order):
# at 64 KiB a copy's engine time (2 us + 16.4 us at the study's profile) is well above the
# CPU's work for it.  Below, it need not be: each copy's interrupt, idxd's irq thread and
# the callback's wake-up took the CPU as long as the engine's copy or longer (2026-12-07,
# docs/offload.rst: overlap and ordered never idle up to 4 KiB, wait not at 256 B).
DSA_IDLE_SIZES = ("65536",)
# What every DSA boot must show besides the rows: idxd bound, one channel, the exerciser
# and the teardown ran, the WQ's interrupt fired, and the device saw no error of any kind
DSA_EXPECT = [
    "--expect-channels", "1",
    "--expect-line", r"^DMALAB: idxd bound [0-9a-f:.]+ vendor=0x8086 device=0x0b25$",
    "--expect-line", r"^DMALAB: dsa channels=1 \(dma0chan0\)$",
    "--expect-line", r"^DMALAB: exercise end rc=0 ",
    "--expect-line", r"^DMALAB: dsa end$",
    "--expect-irq", "idxd-portal"] + sum((["--expect-dsa", c] for c in (
        "descriptor-errors==0", "command-errors==0", "swerrs==0", "halts==0",
        "dropped==0")), [])
DSA_TCG = ("idxd needs MOVDIR64B, which TCG runs with qemu/patches/0007; under KVM the "
           "host CPU would store to emulated MMIO")


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
    with the study's engine on a CPU whose copy costs an instruction per byte, and through
    dmalab-dsa under idxd with the study's engine profile; then md RAID writes with the
    parity on the CPU and offloaded."""
    out = []
    for label, engine, cpu in OFFLOAD_CONFIGS:
        out.append((label, ["--device", "dmalab-ioat," + engine,
                            "--append", "dmalab_exercise.mode=" + mode] +
                    (["--cpu", cpu] if cpu else []) + checks.premise("identity", "none")))
    for label, engine in DSA_CONFIGS:
        out.append((label, ["--device", "dmalab-dsa," + engine, "--scenario", "dsa",
                            "--needs-tcg", DSA_TCG, "--append",
                            "dmalab.dsa_run=exercise dmalab_exercise.mode=" + mode] +
                    DSA_EXPECT + checks.premise("identity", "none")))
    for label, device, expect in RAID_CONFIGS:
        out.append((label, ["--device", device, "--scenario", "mdcost",
                            "--append", RAID_WORDS] + expect +
                    checks.premise("identity", "none")))
    return out


def _ints(f, names):
    try:
        return [int(f[n]) for n in names]
    except (KeyError, ValueError):
        return None


# How the CPU learns of an ordered channel's copies (dmalab-ioat), per round of a kind:
# (copies that asked for an interrupt, dma_sync_wait() calls, sleeps until a callback)
ORDERED_WAITS = {"cpu": (0, 0, 0), "wait": (0, 1, 0), "overlap": (1, 0, 1),
                 "ordered": (0, 1, 0)}


def offload_row(label, f, modelled):
    """bench-offload, every boot: the copies the exerciser saw complete are the chunks it
    offloaded (none of the CPU's own; every chunk of wait; `batch` of each read's batch +
    1 in overlap and ordered), and the CPU learnt of them as the channel allows.  Through
    DSA (idxd completes out of order) every copy asked for an interrupt and each round
    slept once until the callbacks, with no poll; through dmalab-ioat wait and ordered
    polled once a round and overlap slept on its round's one interrupt.  A row is only
    printed after the destination compared equal with the source (offload.c)."""
    op, what = f.get("op"), "bench-offload op=%s size=%s" % (f.get("op"), f.get("size"))
    v = _ints(f, ("n", "chunks", "batch", "dma_copies", "dma_irqs", "polls", "sleeps"))
    if v is None or op not in ORDERED_WAITS:
        return ["%s: no n=, chunks=, batch=, dma_copies=, dma_irqs=, polls= or sleeps=, "
                "or an unknown op" % what]
    n, chunks, batch, copies, irqs, polls, sleeps = v
    per, offloaded = {"cpu": (1, 0), "wait": (1, n)}.get(op, (batch + 1, n * batch))
    wrong = []
    if chunks != n * per:
        wrong.append("%d chunks in %d rounds of %d" % (chunks, n, per))
    if copies != offloaded:
        wrong.append("%d copies seen complete for %d chunks offloaded" % (copies, offloaded))
    if label in DSA_LABELS:
        want = (offloaded, 0, n if offloaded else 0)
    else:
        want = tuple(n * x for x in ORDERED_WAITS[op])
    if (irqs, polls, sleeps) != want:
        wrong.append("interrupts asked, polls and sleeps %d, %d, %d where the channel "
                     "wants %d, %d, %d" % ((irqs, polls, sleeps) + want))
    return ["%s: %s" % (what, w) for w in wrong]


def device_counts(label, rows, counters):
    """Every boot that printed offload rows: the device's own count of completed
    descriptors (QMP) against the copies the exerciser saw complete.  dmalab-dsa must have
    completed exactly those (idxd sends no descriptor of its own: its probe, the WQ's
    enable and drain and the device's disable are commands); dmalab-ioat at least those
    (ioatdma's self-test and its channels' null descriptors come on top)."""
    copies = [int(f["dma_copies"]) for tag, f in rows
              if tag == "bench-offload" and f.get("dma_copies", "").isdigit()]
    if not copies:
        return []
    dsa = label in DSA_LABELS
    device = "dmalab-dsa" if dsa else "dmalab-ioat"
    done = counters.get(device, {}).get("descriptors")
    if done is None:
        return ["%s's descriptors were not read (QMP)" % device]
    if (done != sum(copies)) if dsa else (done < sum(copies)):
        return ["%s completed %d descriptors, the exerciser saw %d copies complete" % (
            device, done, sum(copies))]
    return []


def explain(runs, counters, labels, shift):
    """After the tables, for the configurations whose wait rounds slept rather than
    polled (through DSA): what their wait and ordered figures are."""
    slept = [label for label in labels if any(
        tag == "bench-offload" and f.get("op") == "wait" and f.get("polls") == "0" and
        f.get("sleeps", "0") != "0" for rows in runs.get(label, []) for tag, f in rows)]
    if not slept:
        return []
    return ["%s: wait and ordered slept until the engine's callbacks, never polled: the "
            "channel completes out of order (idxd answers every cookie DMA_OUT_OF_ORDER and "
            "hears of a copy only from its interrupt), so their busy ns are the CPU's work "
            "around the copies, as overlap's are, not a CPU spinning until the engine is "
            "done as in the other configurations' wait and ordered" % ", ".join(slept)]


STUDY = Study("offload", False, COPY_ENGINE, [
    Table("bench-offload", ("op", "size"), "busy_ns",
          ["elapsed_ns", "mean_ns", "p99_ns", "chunks"],
          "guest CPU busy ns per chunk copied (elapsed beside it)",
          derived=lambda s, labels: crossover(s, [x for x in labels if not _raid(x)]),
          check=offload_row, only=lambda label: not _raid(label)),
    Table("bench-raid", ("level",), "busy_ns_per_mib",
          ["wall_ns_per_mib", "mb_per_s", "util_ppm"],
          "guest CPU busy ns per MiB written to md (elapsed and MB/s beside it)",
          only=_raid)],
    smp=1, icount=0, cpu=MODELLED_CPU,
    quick={"dmalab_exercise.offload_calls": 170, "dmalab.md_cost_mib": 4},
    matrix=offload_configs,
    # the dsa image's ioatdma (built by ioatdma_patched.py) is not signed: the kernel says so
    extra=["--allow", "ioatdma: module verification failed"],
    expect=lambda runs, labels, tables: orders.offload(
        runs, labels, tables, {label: DSA_IDLE_SIZES for label in DSA_LABELS}))


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
STUDY.check_boot = device_counts
STUDY.explain = explain
STUDY.counts = [
    Counts("bench-offload", ("op", "size"), "chunks", [("engine copies", "dma_copies")],
           "per chunk", "the exerciser's tally: how many of the chunks the engine copied",
           only=lambda label: not _raid(label)),
    Counts("bench-offload", ("op", "size"), "chunks",
           [("interrupts asked", "dma_irqs"), ("polls", "polls"), ("sleeps", "sleeps")],
           "how the CPU learnt of the engine's copies, per chunk",
           "the exerciser's tally: copies submitted with an interrupt, dma_sync_wait() "
           "calls, sleeps until a callback; dsa's channel (idxd) completes out of order "
           "and is never polled",
           only=lambda label: not _raid(label))]

