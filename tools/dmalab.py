#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab: set up, build, demo, test and measure in one place.

Each verb's own help: ./dmalab help VERB (or ./dmalab VERB --help).
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
import stress  # noqa: E402  (tools/, beside this file)
import testresults  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("DMALAB_BUILD", REPO / "build"))
# The TCG plugin that counts guest instructions per kernel function (tools/insn-profile)
PROFILE_PLUGIN = BUILD / "tools" / "insn-profile" / "libdmalab-profile.so"
# The models' unit tests again, built with AddressSanitizer and UBSan (no QEMU).
SAN_BUILD = Path(str(BUILD) + "-san")

APT_SOURCES = Path("/etc/apt/sources.list.d/dmalab.sources")
APT_SOURCES_TEMPLATE = """\
# Added by dmalab: QEMU 10.0 source from trixie, newer meson and QEMU data from backports,
# from the mirror this machine's own sources use.
Types: deb-src
URIs: {mirror}
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: {mirror}
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
PACKAGES = [
    # toolchain and dmalab's own build
    "build-essential", "g++", "pkg-config", "ninja-build", "patch", "xz-utils", "dpkg-dev",
    "clang-format", "libgtest-dev", "libgmock-dev", "libbenchmark-dev", "libisal-dev",
    # device tests: QEMU under valgrind for the hostile-guest qtests
    "valgrind",
    # QEMU's build dependencies (minimal x86_64 TCG build)
    "libglib2.0-dev", "libpixman-1-dev", "libcapstone-dev", "libfdt-dev", "libslirp-dev",
    "flex", "bison", "python3-venv",
    # guest: firmware, busybox; the exerciser module's build (gcc-12 and libelf1 for the
    # guest kernels' kbuild tools, which are unpacked in the cache, not installed)
    "seabios", "busybox-static", "kmod", "gcc-12", "libelf1",
]
BACKPORTS = ["meson", "python3-pycotap", "qemu-system-data"]
# What `measure` and `test` add: the studies' plots (guest-tests/plots.py) and the docs'
# check (tools/test_docs.py). The demo and a plain build do without them (matplotlib is
# about 60 MB to download).
PLOT_PACKAGES = ["python3-matplotlib", "python3-docutils"]


# The verbs: (verb, arguments, what it does in one line, an example). `./dmalab` alone
# lists them; `./dmalab help VERB` adds DETAILS[VERB].
VERBS = (
    ("demo", "", "build everything, boot one guest (ioatdma copies on dmalab-ioat) and "
     "summarise it", "./dmalab demo"),
    ("test", "[--stress N [--busy] NAME..]", "the whole suite; each failure ends with the "
     "command that replays it", "./dmalab test"),
    ("replay", "NAME [--seed N] [--clock C]", "one guest test again, as a failure's "
     "replay: line gives it", "./dmalab replay raid-ops --seed 3"),
    ("race", "[NAME]", "list the race scenarios, or run one and print its race report",
     "./dmalab race cow"),
    ("measure", "[STUDY [OPTION..]]", "list the cost studies, or run one on the modelled "
     "clock", "./dmalab measure offload --quick"),
    ("setup", "", "only install the Debian packages (as root)", "./dmalab setup"),
    ("build", "", "only build QEMU with dmalab's devices, the tests and the guest images",
     "./dmalab build"),
    ("help", "[VERB]", "this list, or one verb's details", "./dmalab help measure"),
)

DETAILS = {
    "demo": """\
Sets up this Debian 12 machine (as root: packages only; kernels and firmware go to the
cache), builds everything, boots the default guest (ioatdma on dmalab-ioat, the memcpy
exerciser) and prints a summary; the serial log stays in build/demo-serial.log.""",
    "test": """\
Sets up and builds as needed, then runs the models' unit tests under ASan and UBSan and
the suites unit, qemu, qtest, guest-unit and guest of the main build. Each failed test
is listed at the end with the command that replays it.

  ./dmalab test --stress N [--busy] [--first-seed S] NAME..
      the guest tests NAME (meson test names: raid-ops, raid-ops-6.12) N times each,
      each run with its own seed, on the host's clock with parallel vCPUs
      (multi-threaded TCG), with --busy beside a busy loop on every host core: what a
      run on the modelled clock cannot show.""",
    "replay": """\
  ./dmalab replay NAME [--seed N] [--clock modelled|host]
      one guest test again, as a failing run's "replay:" line gives it.""",
    "race": """\
  ./dmalab race         the race scenarios of guest-tests/scenarios.json, a line each
  ./dmalab race NAME    runs one (cow, uaf-lazy, uaf-strict, order, cpuwrite, fail,
                        lostirq, determinism; -6.12 for the backports kernel) and prints
                        its race report: what was injected, what the guest saw, what the
                        race detector or dmalab-vtd's audit found, and the fix path's
                        result (docs/races/).""",
    "measure": """\
  ./dmalab measure                 the studies, a line each
  ./dmalab measure STUDY [OPTION..]
      runs one (guest-tests/measure.py, docs/measure.rst): the same guest workload booted
      under several configurations, as ratios to the baseline of the same run, by
      default on a modelled CPU of 1 ns per guest instruction. Options go to measure.py:
      --quick, --repeat N, --icount SHIFT, --calls N, --rate N, --seeds, --builds,
      --expect-order, --cpu-profile NAME, --ipc X, --no-profile (iommu-flush and
      offload boot with the instruction profiler otherwise), --kernel 6.12 (the
      backports kernel instead of 6.1). guest-tests/measure.py tables RESULTS.json
      prints a run's tables again from its results file.""",
    "setup": "Installs the build's Debian packages (as root) and nothing else.",
    "build": "Builds QEMU with dmalab's devices, the unit tests and the guest images.",
    "help": "  ./dmalab help VERB    one verb's details",
}

EPILOGUE = """\
Before any verb, --accel kvm|tcg|auto: the accelerator guests boot with (default auto:
KVM when /dev/kvm is usable, TCG otherwise; runs that need TCG use it).

Environment: DMALAB_CACHE (downloads and QEMU build, default ~/.cache/dmalab), QEMU_SRC
(your own QEMU 10.0 tree), DMALAB_BUILD (meson build folder, default ./build),
DMALAB_ACCEL (as --accel)."""


def usage(verb=None):
    """The verbs, a line and an example each; or one verb's details."""
    if verb in DETAILS:
        args = next(a for v, a, _, _ in VERBS if v == verb)
        return "usage: ./dmalab %s %s\n\n%s" % (verb, args, DETAILS[verb])
    lines = ["dmalab: Intel DMA hardware (I/OAT, VT-d, DSA) for QEMU guests, and the tests",
             "and cost studies that use it.", "",
             "usage: ./dmalab [--accel kvm|tcg|auto] VERB [ARG..]", ""]
    for verb, args, what, example in VERBS:
        lines.append("  %-8s %s" % (verb, what))
        lines.append("  %-8s   e.g. %s" % ("", example))
    return "\n".join(lines + ["", EPILOGUE])

def say(msg):
    print(f"dmalab: {msg}", flush=True)


def run(cmd, **kw):
    say("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def missing(packages):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n"] + packages,
                         capture_output=True, text=True).stdout
    have = {l.split()[0] for l in out.splitlines() if l.endswith("install ok installed")}
    return [p for p in packages if p not in have]


def meson_new_enough():
    try:
        v = subprocess.run(["meson", "--version"], capture_output=True, text=True).stdout
        return tuple(int(x) for x in v.strip().split(".")[:2]) >= (1, 5)
    except (OSError, ValueError):
        return False


def apt_entries():
    """(type, uri, suites) of every entry in this machine's apt sources, one-line
    (sources.list) and deb822 (*.sources) alike."""
    files = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    for f in files:
        if f == APT_SOURCES or f.suffix not in (".list", ".sources") or not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if f.suffix == ".list":
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", " ", line.split("#")[0]).split()
                if len(words) >= 3 and words[0] in ("deb", "deb-src"):
                    yield words[0], words[1], words[2:3]
            continue
        for stanza in text.split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith(("#", " ")):
                    k, v = line.split(":", 1)
                    fields[k.strip().lower()] = v.split()
            if fields.get("enabled", ["yes"])[0] == "no":
                continue
            for t in fields.get("types", []):
                for uri in fields.get("uris", []):
                    yield t, uri, fields.get("suites", [])


def debian_mirror():
    """The URI this machine already fetches bookworm from, so that a local mirror or
    proxy keeps working for what dmalab adds; deb.debian.org when there is none."""
    for kind, uri, suites in apt_entries():
        if kind == "deb" and "bookworm" in suites:
            return uri.rstrip("/")
    return DEFAULT_MIRROR


def setup(extra=()):
    if os.geteuid() != 0:
        say("not root: skipping package installation (run './dmalab setup' as root once)")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    updated = False
    sources = APT_SOURCES_TEMPLATE.format(mirror=debian_mirror())
    if not APT_SOURCES.exists() or APT_SOURCES.read_text() != sources:
        APT_SOURCES.write_text(sources)
        run(["apt-get", "update", "-q"], env=env)
        updated = True
    need = missing(PACKAGES + list(extra))
    need_bpo = missing(BACKPORTS)
    if not meson_new_enough() and "meson" not in need_bpo:
        need_bpo.append("meson")
    if (need or need_bpo) and not updated:
        run(["apt-get", "update", "-q"], env=env)
        updated = True
    if need:
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + need, env=env)
    if need_bpo:
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "-t",
             "bookworm-backports"] + need_bpo, env=env)
    # The guest kernels and their headers are not installed: guest-tests/image.py
    # downloads and unpacks them into the cache.


# What the demo boots: QEMU with the devices and the 6.1 guest image. The rest (unit tests,
# benchmarks, the 6.12 image, the race detector) is built by `build` and `test`.
DEMO_TARGETS = ["qemu/qemu-system-x86_64", "guest-tests/boot-kernel",
                "guest-tests/initramfs.cpio.gz"]


def build(targets=(), extra=()):
    setup(extra)
    if not (BUILD / "build.ninja").exists():
        run(["meson", "setup", BUILD, REPO])
    run(["ninja", "-C", BUILD] + list(targets))


def demo():
    build(DEMO_TARGETS)
    # The memcpy scenario of guest-tests/scenarios.json, as its meson test runs it.
    cmd = [sys.executable, REPO / "guest-tests" / "scenarios.py", "run", "memcpy",
           "--qemu", BUILD / "qemu" / "qemu-system-x86_64",
           "--kernel", BUILD / "guest-tests" / "boot-kernel",
           "--initrd", BUILD / "guest-tests" / "initramfs.cpio.gz",
           "--timeout", "600", "--log", BUILD / "demo-serial.log", "--summary"]
    rc = subprocess.run([str(c) for c in cmd]).returncode
    say(f"guest serial log: {BUILD / 'demo-serial.log'}")
    return rc


def list_studies():
    """One entry per study of guest-tests/studies: its name for ./dmalab measure and the
    first clause of its module's docstring."""
    sys.path.insert(0, str(REPO / "guest-tests"))
    import studies
    for name in studies.STUDIES:
        module = sys.modules["studies." + name.replace("-", "_")]
        doc = " ".join((module.__doc__ or "").split())
        what = re.split(r"\. ", doc.split(": ", 1)[-1])[0].rstrip(".")
        what = textwrap.shorten(what, 150, placeholder=" ...")
        print(textwrap.fill(what, 88, initial_indent="%-13s " % name,
                            subsequent_indent=" " * 14))
    print("\nrun one: ./dmalab measure STUDY [--quick]; ./dmalab help measure for the "
          "options")
    return 0


def measure(rest):
    """A study of guest-tests/measure.py on the demo's QEMU and a guest image: the 6.1 one,
    or 6.12's with --kernel 6.12."""
    study = ["--study", rest.pop(0)] if rest and not rest[0].startswith("-") else []
    image = BUILD / "guest-tests"
    if "--kernel" in rest:
        i = rest.index("--kernel")
        kernel = rest[i + 1] if i + 1 < len(rest) else ""
        if kernel not in ("6.1", "6.12"):
            say("measure: --kernel takes 6.1 or 6.12")
            return 2
        del rest[i:i + 2]
        if kernel == "6.12":
            image = image / "bpo"
    initrd = "initramfs.cpio.gz"
    if study[1:] == ["swiotlb"]:
        # Debian's ioatdma refuses dmalab-ioat under swiotlb=force (the scenario
        # swiotlb-selftest-bug): this study boots the image with the patched one.
        initrd = "initramfs-ioatdma-patched.cpio.gz"
    if study[1:] == ["offload"]:
        # its dsa configuration sets dmalab-dsa up with accel-config, which the dsa image
        # (dsa_image.py) appends to the patched ioatdma's: every configuration boots it
        initrd = "initramfs-dsa.cpio.gz"
    if study[1:] in (["udp"], ["xdp"]):
        # iperf3, iproute2's ip and dmalab-xsk (with libxdp) are not in the default
        # image: net_image.py appends them from Debian's packages
        initrd = "initramfs-net.cpio.gz"
    if "--name" not in rest:
        # results and plots named by study and kernel, so that one run does not replace
        # another's (build/measure/iommu-flush-6.12.json ...)
        rest += ["--name", "%s-%s" % (study[1] if study else "dma-api",
                                      "6.12" if image.name == "bpo" else "6.1")]
    targets = ["qemu/qemu-system-x86_64"]
    profile = study[1:] in (["iommu-flush"], ["offload"]) and "--profile" not in rest
    if "--no-profile" in rest:
        rest.remove("--no-profile")
        profile = False
    if "--smp" in rest and rest[rest.index("--smp") + 1:][:1] != ["1"]:
        # the profiler crashes guests of more than one vCPU under -icount (measure.py
        # refuses the two together): more CPUs go without the profiles
        profile = False
    if profile:
        # iommu-flush and offload explain figures from instruction profiles
        # (docs/profile.rst): each configuration's first boot counts guest instructions
        # per kernel function
        targets.append(str(PROFILE_PLUGIN.relative_to(BUILD)))
        rest += ["--profile", PROFILE_PLUGIN]
    rel = image.relative_to(BUILD)
    build(targets + [str(rel / "boot-kernel"), str(rel / initrd)], PLOT_PACKAGES)
    cmd = [sys.executable, REPO / "guest-tests" / "measure.py"] + study + [
        "--qemu", BUILD / "qemu" / "qemu-system-x86_64",
        "--kernel", image / "boot-kernel",
        "--initrd", image / initrd,
        "--log-dir", BUILD / "measure"] + rest
    return subprocess.run([str(c) for c in cmd]).returncode


def sanitizer_build():
    if not (SAN_BUILD / "build.ninja").exists():
        run(["meson", "setup", SAN_BUILD, REPO, "-Dqemu=disabled",
             "-Db_sanitize=address,undefined", "-Db_lundef=false", "-Dbuildtype=debug"])
    run(["ninja", "-C", SAN_BUILD])


def test():
    build(extra=PLOT_PACKAGES)
    sanitizer_build()
    rc = 0
    results, problems = [], []
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    # The sanitizer build runs its tests several times slower (ASan's shadow memory costs
    # the vtd tests ~19 s of CPU each): on a busy 2-core machine they passed meson's 30 s.
    for folder, suites, extra in (
            (SAN_BUILD, ["unit"], ["--timeout-multiplier", "4"]),
            (BUILD, ["unit", "qemu", "qtest", "guest-unit", "guest"], [])):
        code, these, wrong = testresults.run_checked(folder, suites, env, extra=extra)
        rc = rc or code
        results += these
        problems += ["%s: %s" % (folder.name, p) for p in wrong]
    # An empty, stale or short result set, or a skip not allowed, fails the run too.
    for p in problems:
        say("FAIL: " + p)
    # Each failed test, and the command that runs it again (a guest test prints its own:
    # the runner's "replay:" line, with its seed and clock).
    for name, r, output in results:
        if r in ("OK", "EXPECTEDFAIL", "SKIP"):
            continue
        short = name.split(" / ")[-1]
        lines = [l for l in output.splitlines() if l.startswith("replay: ")]
        again = lines[-1][len("replay: "):] if lines else \
            f"meson test -C {BUILD} '{short}' --verbose"
        say(f"FAILED {name} ({r}): {again}")
    # One plain closing line for whoever reads the end of the output (CI does).
    passed = sum(r in ("OK", "EXPECTEDFAIL") for _, r, _ in results)
    skipped = sum(r == "SKIP" for _, r, _ in results)
    print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped"
          + (f", {len(problems)} problem(s) with the results" if problems else ""))
    return rc or (1 if problems else 0)


def race_scenarios():
    """{meson test name: registry entry} of the race scenarios."""
    sys.dont_write_bytecode = True # keep the source tree clean
    sys.path.insert(0, str(REPO / "guest-tests"))
    import scenarios
    return {t: e for t, _, _, e in scenarios.tests(scenarios.load()) if t.startswith("race-")}


def list_races():
    """One line per race scenario: its name for ./dmalab race, and the first sentence
    of what it shows."""
    for test, e in race_scenarios().items():
        first = e.get("doc", "").split(". ")[0].rstrip(".")
        print("%-18s %s" % (test[len("race-"):], first))
    return 0


def race(name):
    """One race scenario of guest-tests/scenarios.json, through meson (which builds what
    it needs), with the runner's race report."""
    known = sorted(race_scenarios())
    build()
    test = name if name.startswith("race-") else "race-" + name
    if test not in known:
        say("no race scenario %r; there are: %s" % (
            name, " ".join(k[len("race-"):] for k in known)))
        return 2
    return subprocess.run(["meson", "test", "-C", str(BUILD), test, "--verbose",
                           "--test-args=--report"]).returncode


def main():
    argv = sys.argv[1:]
    if "--accel" in argv:
        # Guests boot with KVM when /dev/kvm is usable, else TCG; --accel kvm|tcg|auto
        # forces one for everything started below (guest-tests/accel.py).
        i = argv.index("--accel")
        if i + 1 >= len(argv) or argv[i + 1] not in ("auto", "kvm", "tcg"):
            print("dmalab: --accel takes kvm, tcg or auto", file=sys.stderr)
            sys.exit(2)
        os.environ["DMALAB_ACCEL"] = argv[i + 1]
        del argv[i:i + 2]
    sys.argv[1:] = argv
    cmd = sys.argv[1] if len(sys.argv) > 1 else "help"
    rest = sys.argv[2:]
    if cmd in ("help", "-h", "--help") or rest[:1] in (["-h"], ["--help"]):
        verb = (rest[0] if rest else None) if cmd in ("help", "-h", "--help") else cmd
        verb = "help" if verb in ("-h", "--help") else verb
        if verb is not None and verb not in DETAILS:
            print("dmalab: no verb %r\n\n%s" % (verb, usage()), file=sys.stderr)
            sys.exit(2)
        print(usage(verb))
        sys.exit(0)
    elif cmd == "setup":
        setup()
    elif cmd == "build":
        build()
    elif cmd == "demo":
        sys.exit(demo())
    elif cmd == "test" and "--stress" in rest:
        build()
        sys.exit(stress.stress(BUILD, rest))
    elif cmd == "test" and rest:
        # anything else after "test" is a mistake: say so, run nothing
        print("dmalab: test takes no %r\n\n%s" % (rest[0], usage("test")), file=sys.stderr)
        sys.exit(2)
    elif cmd == "test":
        sys.exit(test())
    elif cmd == "replay":
        build()
        sys.exit(stress.replay(BUILD, rest))
    elif cmd == "measure" and not rest:
        sys.exit(list_studies())
    elif cmd == "measure":
        sys.exit(measure(rest))
    elif cmd == "race" and rest:
        sys.exit(race(rest[0]))
    elif cmd == "race":
        sys.exit(list_races())
    else:
        print("dmalab: no verb %r\n\n%s" % (cmd, usage()), file=sys.stderr)
        sys.exit(2)

if __name__ == "__main__":
    main()
