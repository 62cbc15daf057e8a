#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the dmalab guest under QEMU (TCG) and judge its serial log.

The command line over guest-tests/harness/: qmp (the QMP client), qemu (the
QEMU process and its run), ktap (the exerciser's output), judge (the verdict
on a run), report (what it prints) and races (the race detector's reports).

Exit status 0 when every boot passed, 1 otherwise; the last line printed
is "guest <name>: PASS" or "guest <name>: FAIL: <reason>".  With --boots N
one QEMU run holds N boots (the guest reboots, or the runner resets it at
a marker line); the serial log is split into one segment per boot and
each is judged on its own.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accel  # noqa: E402
from harness.ktap import (  # noqa: E402
    bench_tables,
    parse_bench)
from harness.qemu import (  # noqa: E402
    Boot,
    DEFAULT_FIRMWARE_DIRS,
    build_cmdline,
    clock_args,
    per_requester,
    disk_data,
    has_ioat,
    ioat_stats,
    kvm_failed_to_start,
    run_qemu,
    want_counters)
from harness.expect import (  # noqa: E402
    Binding,
    DeviceCounters,
    DeviceErrors,
    ExpectationError,
    Expectations,
    KtapResults,
    Liveness,
    LogLines,
    RaceReports,
    VtdCondition)
from harness.judge import (  # noqa: E402
    Facts,
    RunSetup,
    analyse,
    judge_fault_logs,
    judge_run,
    split_boots)
from harness.report import (  # noqa: E402
    report_run,
    verdict)
from harness.insn_profile import (  # noqa: E402
    profile_out,
    summary_lines,
    with_profiler)
from harness.vhost_user import BackendError, VhostUserNet  # noqa: E402
from harness.races import (  # noqa: E402
    judge_races,
    race_files,
    race_report,
    symbolize_races)

# What bench.py, the other bench scripts and test_runner.py take from here.
__all__ = ["Boot", "DEFAULT_FIRMWARE_DIRS", "DeviceErrors", "ExpectationError",
           "Expectations", "Facts", "RunSetup", "VtdCondition", "analyse", "bench_boot",
           "bench_tables", "build_cmdline", "check_args", "disk_data", "expectations",
           "ioat_stats", "judge_fault_logs", "judge_races", "judge_run", "judging",
           "kvm_failed_to_start", "main", "make_parser", "parse_bench", "race_report",
           "run_once", "run_qemu", "run_setup", "split_boots", "symbolize_races", "verdict",
           "want_counters"]


def judge_file(args, name):
    """Judge a saved serial log (one QEMU run; with --boots, split into
    its boots)."""
    boot = Boot()
    with open(args.judge_log, errors="replace") as f:
        boot.lines = [l.rstrip("\r\n").replace("\r", "") for l in f]
    boot.stamps = [0.0] * len(boot.lines)
    boot.rc = 0
    boot.reset_ends = None
    results, run_reasons = judge_run(boot, *judging(args))
    failed = report_run(results, run_reasons, args)
    return verdict(name, failed)


def run_once(args, seed=None, announce=True):
    """Boots QEMU once for args (possibly several guest boots);
    returns (boot, results, run_reasons) as judge_run does."""
    if args.race_plugin:
        args.race_files = race_files(args)
    cmd = build_cmdline(args, seed)
    if args.profile_plugin:
        args.profile_out = profile_out(args)
        cmd = with_profiler(cmd, args.profile_plugin, args.profile_out)
    if announce:
        print("runner: %s" % " ".join(
            "'%s'" % c if (" " in c or not c) else c for c in cmd),
            flush=True)
    if announce:
        print("runner: accelerator %s (%s)" % (args.accel_used, args.accel_why),
              flush=True)
        print("runner: clock %s" % clock_text(cmd), flush=True)
    backend = VhostUserNet(args.memory, args.vhost_user_net == "ats",
                           args.vhost_user_backend) if args.vhost_user_net else None
    try:
        cmd += backend.start() if backend else []
    except BackendError as e:
        sys.exit("runner: --vhost-user-net: %s" % e)
    try:
        boot = run_qemu(cmd, args.timeout * max(args.boots, 1), args.verbose,
                        counters=want_counters(args), boots=args.boots,
                        reset_on=re.compile(args.reset_on) if args.reset_on
                        else None, probe=args.probe_qmp is not None)
    finally:
        backend_lines = backend.stop() if backend else []
    boot.lines += backend_lines
    boot.stamps += [boot.stamps[-1] if boot.stamps else 0.0] * len(backend_lines)
    boot.accel = (args.accel_used, args.accel_why)
    if kvm_failed_to_start(args, boot):
        # auto chose KVM, but QEMU could not run the guest with it: say so
        # and boot again with TCG.
        args.accel_used, args.accel_why = "tcg", (
            "KVM failed to run the guest: %s" % boot.kvm_error if boot.kvm_error
            else "KVM failed to start the guest (qemu exit status %s: %s)" % (
                boot.rc, (boot.lines or ["no output"])[-1][:160]))
        return run_once(args, seed, announce=True)
    results, run_reasons = judge_run(boot, *judging(args))
    if args.race_plugin:
        boot.races = symbolize_races(boot, args.race_files[1])
        print("---- race detector ----")
        for line in boot.races:
            print("  " + line)
        run_reasons = run_reasons + judge_races(boot.races, expectations(args).races)
    if args.profile_plugin:
        boot.profile = args.profile_out
        print("---- instruction profile ----")
        for line in summary_lines(boot.profile):
            print("  " + line)
    return boot, results, run_reasons


def clock_text(cmd):
    """Which clock a QEMU command line runs the guest on, for the log."""
    if "-icount" in cmd:
        i = cmd.index("-icount")
        seed = cmd[cmd.index("-seed") + 1] if "-seed" in cmd else "none"
        return "modelled (-icount %s, -seed %s)" % (cmd[i + 1] if i + 1 < len(cmd) else "",
                                                   seed)
    return "host (the guest's time follows the host's)"


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_guest_options(ap)
    add_judge_options(ap)
    add_device_options(ap)
    add_tool_options(ap)
    # Not an option: a registry entry's Expectations, which main() is given by
    # scenarios.py and the expectation options above add to.
    ap.set_defaults(registry_expect=Expectations())
    return ap


def add_guest_options(ap):
    """The machine, the guest and its exerciser."""
    ap.add_argument("--qemu", help="qemu-system-x86_64 binary")
    ap.add_argument("--kernel", help="guest kernel (vmlinuz from image.py)")
    ap.add_argument("--initrd", help="initramfs.cpio.gz from image.py")
    ap.add_argument("--judge-log", metavar="FILE",
                    help="judge an existing serial log instead of booting")
    ap.add_argument("--firmware-dir", action="append", default=[],
                    help="-L directory (repeatable; default %s)" %
                    " ".join(DEFAULT_FIRMWARE_DIRS))
    ap.add_argument("--device", action="append", default=[],
                    help="-device argument (repeatable; default dmalab-ioat; "
                         "'none' adds no device)")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="extra raw QEMU argument (repeatable)")
    ap.add_argument("--append", action="append", default=[],
                    help="extra kernel command line text")
    ap.add_argument("--machine", default="q35,sata=off,smbus=off")
    ap.add_argument("--memory", default="1G")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--cpu", default="max",
                    help="QEMU's -cpu model (default max; the cost studies take away "
                    "the fast-string features: max,-erms,-fsrm)")
    ap.add_argument("--scenario", default="memcpy",
                    help="guest scenario: memcpy (default, the exerciser), boot, "
                         "raid5 or raid6 (an md array over RAM disks, init.sh), mdcost "
                         "(the offload study's timed md writes), vfio or dsa-vfio "
                         "(dmalab-ioat or dmalab-dsa driven from user space through VFIO, "
                         "init.sh), dsa (dmalab-dsa under idxd: dmatest, or the exerciser "
                         "with dmalab.dsa_run=exercise, init/dsa.sh), dsa-dpdk (DPDK's "
                         "dpdk-test dmadev_autotest on dmalab-dsa through vfio-pci, "
                         "init/dpdk.sh); also net, movdir, dmatest")
    ap.add_argument("--name", help="test name for the verdict line "
                    "(default: the scenario)")
    ap.add_argument("--iterations", type=int,
                    help="copies per channel (guest default 300)")
    ap.add_argument("--max-len", type=int, help="largest copy in bytes")
    ap.add_argument("--seed", type=int,
                    help="exerciser PRNG seed (default: the module's; "
                         "with --repeat, the boot number); on the modelled clock "
                         "also QEMU's -seed")
    ap.add_argument("--clock", choices=("modelled", "host"),
                    help="modelled: guest time counts guest instructions (TCG, "
                         "-icount, harness/qemu.py MODELLED_CLOCK), so a seed gives "
                         "one run on any host; host: plain TCG (multi-threaded) or "
                         "KVM on the host's clock, -icount taken out (stress runs); "
                         "default: the QEMU arguments as given. --accel kvm turns "
                         "modelled into host, and says so")


def add_judge_options(ap):
    """The run, and what it must show."""
    ap.add_argument("--expect-channels", type=int,
                    help="exact number of DMA channels the guest must see "
                         "(default 4; -1 to skip the check)")
    ap.add_argument("--expect-id",
                    help="vendor:device the bound function must have "
                         "(default 0x8086:0x2021; '' to skip)")
    ap.add_argument("--min-ops", type=int,
                    help="minimum verified copies in total (memcpy; default 0)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per boot before QEMU is killed")
    ap.add_argument("--log", help="write the serial log(s) here")
    ap.add_argument("--summary", action="store_true",
                    help="print a readable summary of each boot")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run QEMU N times")
    ap.add_argument("--boots", type=int, default=1, metavar="N",
                    help="let the guest boot N times in one QEMU run "
                         "(without -no-reboot): each machine reset starts "
                         "the next boot, QEMU is ended after the Nth; the "
                         "serial log is split per boot and every boot is "
                         "judged (a boot that ends in a reset need not "
                         "finish /init)")
    ap.add_argument("--reset-on", metavar="REGEX",
                    help="when a serial line matches REGEX, read the device "
                         "counters (for that boot's cross-check) and reset "
                         "the machine with QMP system_reset")
    ap.add_argument("--allow", action="append", default=[], metavar="REGEX",
                    help="a log line matching REGEX is expected: it does not "
                         "count as an ioatdma error or kernel problem "
                         "(repeatable)")
    ap.add_argument("--expect-irq", action="append", default=[],
                    metavar="NAME",
                    help="require an interrupt named NAME (a whole word of "
                         "the /proc/interrupts line /init reports) with a "
                         "non-zero count summed over CPUs (repeatable)")
    ap.add_argument("--probe-qmp", type=float, metavar="SECONDS",
                    help="while the guest runs, time a QMP round trip every "
                         "half second; fail if one takes longer than SECONDS "
                         "(QEMU's main loop starved)")
    ap.add_argument("--min-device-descriptors", type=int,
                    metavar="N", help="dmalab-ioat must count at least N "
                                      "completed descriptors (QMP)")
    ap.add_argument("--min-device-bytes", type=int, metavar="N",
                    help="dmalab-ioat must count at least N bytes moved (QMP): "
                         "descriptors that complete without moving data do not")
    ap.add_argument("--expect-device-errors", metavar="N[+]",
                    help="channel errors dmalab-ioat must count (QMP): N "
                         "exactly, N+ at least N (default 0)")
    ap.add_argument("--expect-vtd", action="append", default=[],
                    metavar="NAME OP VALUE",
                    help="a condition on dmalab-vtd's counters, e.g. "
                         "'iotlb-inv-page>=ops*2' (ops: verified copies)")
    ap.add_argument("--expect-ioat", action="append", default=[],
                    metavar="NAME OP VALUE",
                    help="a condition on dmalab-ioat's counters summed over its devices, "
                         "e.g. 'xor-descriptors>0' (every operation's NAME-descriptors "
                         "and NAME-bytes, docs/ioat.rst)")
    ap.add_argument("--expect-dsa", action="append", default=[],
                    metavar="NAME OP VALUE",
                    help="a condition on dmalab-dsa's counters summed over its devices, "
                         "e.g. 'descriptor-errors==0' (devices/dsa/dsa-host.c)")
    ap.add_argument("--expect-line", action="append", default=[],
                    metavar="REGEX",
                    help="a serial line must match REGEX (re.search, after "
                         "the timestamp; repeatable); a KTAP result needs "
                         "'^ok N ...', which 'not ok N ...' does not match")
    ap.add_argument("--expect-unbound", action="store_true",
                    help="ioatdma must refuse the device (a scenario that reproduces a "
                         "driver's failure, named with --expect-line and --allow): the "
                         "boot fails if it binds, and the guest must have no DMA channel")
    ap.add_argument("--allow-skip", action="append", default=[],
                    metavar="NAME",
                    help="a KTAP 'ok N NAME # SKIP' passes (NAME a regex the "
                         "whole test name must match; repeatable); any other "
                         "skipped test fails the boot")


def add_device_options(ap):
    """The devices a boot adds besides the registry's -device list (stock QEMU devices
    behind the platform IOMMU, and their backends)."""
    ap.add_argument("--virtio-disk", type=int, default=0, metavar="MIB",
                    help="add a read-only virtio-blk disk of MIB MiB "
                         "(iommu_platform=on); the guest checksums it")
    ap.add_argument("--virtio-disk-ats", action="store_true",
                    help="with --virtio-disk: the disk behind a PCIe root port, with "
                         "the ATS capability (ats=on)")
    ap.add_argument("--vhost-user-net", choices=("plain", "ats"),
                    help="add a virtio-net device (iommu_platform=on) whose vhost-user "
                         "backend returns every frame with its MAC addresses swapped "
                         "(harness/vhost_user.py); ats: behind a PCIe root port, with "
                         "the ATS capability")
    ap.add_argument("--vhost-user-backend", choices=("dmalab", "testpmd"), default="dmalab",
                    help="with --vhost-user-net: dmalab's own backend "
                         "(harness/vhost_backend.py, the default) or DPDK's testpmd "
                         "(Debian's dpdk-dev package)")


def add_tool_options(ap):
    """The race detector, the profiler, reports, counters and the accelerator."""
    ap.add_argument("--race-plugin", metavar="SO",
                    help="load the DMA race detector (libdmalab-race.so) with a "
                         "table shared with dmalab-ioat; its reports are "
                         "printed with the kernel symbol of each PC")
    ap.add_argument("--profile-plugin", metavar="SO[,ARG=VALUE...]",
                    help="load the instruction profiler (libdmalab-profile.so, TCG; "
                         "SO,count=insn for its exact count): "
                         "guest instructions per translation block inside the windows "
                         "the guest marks; the profile goes beside --log (NAME.profile) "
                         "or to a temporary file, and the kernel gets dmalab.profile=1 "
                         "(docs/profile.rst)")
    ap.add_argument("--expect-race", action="append", default=[],
                    metavar="REGEX",
                    help="a race report (symbolized) must match REGEX")
    ap.add_argument("--expect-race-count", type=int, metavar="N",
                    help="the race detector must report exactly N races")
    ap.add_argument("--report", action="store_true",
                    help="print a race report after each boot: the injections, "
                         "the scenario's own lines and results, the detector's "
                         "and the audit's findings, the verdict")
    ap.add_argument("--same-fault-log", action="store_true",
                    help="with --repeat: every boot's fault log (dmalab-ioat's "
                         "fault-log over QMP: which rules fired, on what, at "
                         "which virtual time) must be non-empty and the same "
                         "as the first boot's")
    ap.add_argument("--no-counters", action="store_true",
                    help="do not read dmalab-ioat's counters over QMP at "
                         "the end (they are cross-checked against the "
                         "guest's figures)")
    ap.add_argument("--accel", choices=accel.CHOICES,
                    help="kvm, tcg, or auto: KVM when /dev/kvm is usable, "
                         "else TCG (default $DMALAB_ACCEL, else auto); runs "
                         "that need TCG (race detector, -icount) use it")
    ap.add_argument("--needs-tcg", metavar="REASON",
                    help="this run needs TCG, for REASON: it boots under TCG "
                         "and says why, and --accel kvm is refused")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="stream the serial console while it runs")


def given(value, base):
    """An option's value when it was given, else base's."""
    return base if value is None else value


def expectations(args):
    """The judge's Expectations: the registry entry's (args.registry_expect) with the
    expectation options over them: a value given replaces the entry's, a repeatable
    option's values add to the entry's.  Raises ExpectationError on a bad one."""
    base = args.registry_expect
    channels = given(args.expect_channels, base.binding.channels)
    errors = args.expect_device_errors
    return Expectations(
        binding=Binding(unbound=base.binding.unbound or args.expect_unbound,
                        device_id=given(args.expect_id, base.binding.device_id),
                        channels=None if channels is not None and channels < 0
                        else channels),
        ktap=KtapResults(min_ops=given(args.min_ops, base.ktap.min_ops),
                         allow_skip=base.ktap.allow_skip + tuple(args.allow_skip)),
        counters=DeviceCounters(
            min_descriptors=given(args.min_device_descriptors,
                                  base.counters.min_descriptors),
            min_bytes=given(args.min_device_bytes, base.counters.min_bytes),
            errors=base.counters.errors if errors is None else DeviceErrors.parse(errors),
            vtd=base.counters.vtd + tuple(VtdCondition.parse(t) for t in args.expect_vtd),
            ioat=base.counters.ioat + tuple(VtdCondition.parse(t)
                                            for t in args.expect_ioat),
            dsa=base.counters.dsa + tuple(VtdCondition.parse(t) for t in args.expect_dsa)),
        log=LogLines(lines=base.log.lines + tuple(args.expect_line),
                     allow=base.log.allow + tuple(args.allow),
                     irqs=base.log.irqs + tuple(args.expect_irq)),
        races=RaceReports(patterns=base.races.patterns + tuple(args.expect_race),
                          count=given(args.expect_race_count, base.races.count)),
        liveness=Liveness(given(args.probe_qmp, base.liveness.max_round_trip)))


def run_setup(args):
    """How the run was made, for the judge."""
    if args.judge_log:
        unread = "a saved log"
    elif args.no_counters:
        unread = "--no-counters"
    elif not want_counters(args):
        unread = "no dmalab device"
    else:
        unread = None
    disk = getattr(args, "disk", None)
    return RunSetup(scenario=args.scenario, boots=args.boots, reset_on=args.reset_on,
                    timeout=args.timeout, counters_unread=unread, virtio_disk=args.virtio_disk,
                    disk_sha256=disk[1] if disk else None, ioat_device=has_ioat(args))


def judging(args):
    """What the judge takes from the parsed options: (RunSetup, Expectations)."""
    return run_setup(args), expectations(args)


def bench_boot(rp, argv, label, log_path=None, verbose=False):
    """One boot of a bench script (bench.py, race_cost.py, roundtrip_bench.py):
    argv as runner arguments, the boot, its serial log written to log_path, the
    verdict reported.  Returns (boot, results, failures)."""
    rargs = rp.parse_args(argv + (["--verbose"] if verbose else []))
    check_args(rp, rargs)
    print("==== %s ====" % label, flush=True)
    boot, results, run_reasons = run_once(rargs)
    if log_path:
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        with open(log_path, "w") as f:
            f.write("\n".join(boot.lines) + "\n")
    bad = report_run(results, run_reasons, rargs, run_label=label,
                     verbose=verbose, whole=boot)
    return boot, results, bad


def check_args(ap, args):
    """Normalises and validates parsed arguments (ap.error on bad ones)."""
    if args.boots < 1:
        ap.error("--boots must be at least 1")
    try:
        expectations(args)
        if args.reset_on:
            re.compile(args.reset_on)
    except (ExpectationError, re.error) as e:
        ap.error(str(e))
    args.accel_used, args.accel_why = "tcg", "not started"
    if args.clock == "modelled" and (args.accel or os.environ.get("DMALAB_ACCEL")) == "kvm":
        # KVM was asked for by name: the run follows the host's clock, as it says.
        print("runner: clock host: KVM was asked for, and the modelled clock needs TCG",
              flush=True)
        args.clock = "host"
    try:
        if not args.judge_log:
            qemu_args = clock_args(args.clock, args.qemu_arg)
            if args.profile_plugin and args.smp > 1 and "-icount" in qemu_args:
                # QEMU 10.0 with any TCG plugin of ours (count=tb or insn), -icount and
                # two or more vCPUs ran guests into page faults at instructions that
                # touch no memory, in boot, before any window (2026-12-06): refused
                # rather than reported as the guest's bug
                ap.error("--profile-plugin with --smp %d under -icount: the guest "
                         "crashes in boot (QEMU's plugins with -icount and more than one "
                         "vCPU); profile with --smp 1, or on the host clock" % args.smp)
            args.accel_used, args.accel_why = accel.choose(
                args.accel,
                accel.tcg_reason(qemu_args,
                                 bool(args.race_plugin or args.profile_plugin))
                or args.needs_tcg)
    except accel.AccelError as e:
        ap.error(str(e))


def main(argv=None, expect=None):
    """The command line; expect: a registry entry's Expectations, which the
    expectation options add to (scenarios.py run gives them)."""
    ap = make_parser()
    args = ap.parse_args(argv)
    if expect is not None:
        args.registry_expect = expect
    check_args(ap, args)
    name = args.name or args.scenario
    if args.repeat > 1:
        name += " x%d" % args.repeat

    if args.judge_log:
        return judge_file(args, name)
    for opt in ("qemu", "kernel", "initrd"):
        if not getattr(args, opt):
            ap.error("--%s is required (unless --judge-log)" % opt)
    # meson hands over paths relative to the build dir: make them absolute
    # (a bare "qemu-system-x86_64" would otherwise be looked up in PATH).
    args.qemu = os.path.abspath(args.qemu)
    args.kernel = os.path.abspath(args.kernel)
    args.initrd = os.path.abspath(args.initrd)
    for path, what in ((args.qemu, "--qemu"), (args.kernel, "--kernel"),
                       (args.initrd, "--initrd")):
        if not os.path.isfile(path):
            print("guest %s: FAIL: %s %s not found" % (name, what, path))
            return 1

    logf = open(args.log, "w") if args.log else None
    failed = []
    fault_logs = []
    kept = []   # (label, Boot) of each QEMU run, for keep_artifacts
    try:
        for i in range(1, args.repeat + 1):
            # repeated boots each get their own (reproducible) seed
            seed = args.seed if args.seed is not None else \
                (i if args.repeat > 1 else None)
            boot, results, run_reasons = run_once(
                args, seed, announce=i == 1 or args.verbose)
            if logf:
                if args.repeat > 1:
                    logf.write("===== boot %d/%d =====\n" % (i, args.repeat))
                logf.write("\n".join(boot.lines) + "\n")
                logf.flush()
            this = report_run(
                results, run_reasons, args,
                run_label=(("run %d/%d" if args.boots > 1 or args.reset_on
                            else "boot %d/%d") % (i, args.repeat)
                           if args.repeat > 1 else ""),
                seed=seed, verbose=args.verbose, whole=boot)
            failed += this
            kept.append(("boot %d" % i, seed, boot))
            fault_logs.append("".join(d.get("fault-log", "")
                                      for d in ioat_stats(boot)))
            if args.report:
                print("\n".join(race_report(boot, "FAIL: %s" % this[0][1][0]
                                             if this else "PASS")))
        if args.same_fault_log:
            failed += judge_fault_logs(fault_logs)
    finally:
        if logf:
            logf.close()
    if args.log:
        files = keep_artifacts(args.log, kept)
        if failed:
            print("kept: %s" % ", ".join([args.log] + files))
    if failed:
        print("replay: %s" % replay_command(args, kept[0][1] if kept else None))
    return verdict(name, failed)


def keep_artifacts(log, runs):
    """Beside the serial log LOG: LOG.counters.json, every dmalab device's counters
    (QMP, read at the end of each QEMU run, and at each --reset-on marker), and
    LOG.faults, the fault plans' injection logs. Returns the files written."""
    stem = log[:-4] if log.endswith(".log") else log
    counters = {label: {"seed": seed, "devices": boot.device_stats,
                        "boots": {str(k): v for k, v in sorted(boot.boot_stats.items())}}
                for label, seed, boot in runs}
    faults = []
    for label, _, boot in runs:
        for d in boot.device_stats or []:
            if d.get("fault-log"):
                faults.append("== %s %s %s ==\n%s" % (label, d.get("type"), d.get("path"),
                                                     d["fault-log"].rstrip("\n")))
    out = [stem + ".counters.json"]
    with open(out[0], "w") as f:
        json.dump(counters, f, indent=1, sort_keys=True)
        f.write("\n")
    if faults:
        out.append(stem + ".faults")
        with open(out[1], "w") as f:
            f.write("\n".join(faults) + "\n")
    return out


def replay_command(args, seed):
    """The one command that runs this test again as it ran: its name (the meson test's,
    which fixes the kernel and the registry entry), the seed and the clock."""
    words = ["./dmalab", "replay", args.name or args.scenario]
    if seed is not None:
        words += ["--seed", str(seed)]
    if args.clock:
        words += ["--clock", args.clock]
    note = ""
    if args.clock != "modelled":
        note = "  (host clock: the same command and seed, not the same interleaving)"
    return " ".join(words) + note


if __name__ == "__main__":
    sys.exit(main())
