# SPDX-License-Identifier: GPL-2.0-or-later
"""What `./dmalab test` accepts from a meson test run: meson itself exits 0 when every test
skipped and when no test matched the suites, and its results file (meson-logs/testlog.json)
outlives the run that wrote it, so a run that executed nothing could pass on the last one's
results.  Here a run counts only when its own results are there, name every test `meson
test --list` names for the same suites, and skip none but the ones below, each for its
stated reason."""

import collections
import json
import re
import subprocess

# The tests that may skip, each with the text its output must hold (the only case in which
# its skip is accepted) and why that skip is not a hole in the run.  Any other SKIP fails
# ./dmalab test.
ALLOWED_SKIPS = {
    "ioat-hostile-qtest": (
        r"valgrind is not installed",
        "./dmalab test installs valgrind only as root: without it the hostile cases still "
        "run and must pass, but QEMU's memory errors go unseen, and the test says so"),
    "accel-fallback": (
        r"KVM runs guests on this host",
        "the end-to-end fall-back needs a KVM that fails; where KVM works there is none to "
        "see (runner-selftest checks the fall-back with a scripted QEMU on every host)"),
    "qemu-patches": (
        r"no Debian QEMU source package in .+: QEMU_SRC=\S.* named your own QEMU tree",
        "QEMU_SRC named your own QEMU tree, so Debian's source package that the test "
        "copies was never downloaded (the skip names QEMU_SRC's tree)"),
}


def test_name(full):
    """'dmalab:unit / vtd-translate' -> 'vtd-translate'."""
    return full.rsplit(" / ", 1)[-1]


def listed_tests(folder, suites, meson="meson"):
    """The tests `meson test --list` names for these suites in folder, a name once per
    test (two tests may share one), as testlog.json names them: 'project:suite / name',
    or the bare name where the build has one suite only."""
    cmd = [meson, "test", "-C", str(folder), "--list"]
    for s in suites:
        cmd += ["--suite", s]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return []   # "No suitable tests defined."
    return [l.strip() for l in res.stdout.splitlines()
            if l.strip() and not l.startswith("ninja: ")]


def read_results(log):
    """[(full name, result, output)] of a testlog.json, or None when there is none."""
    try:
        text = log.read_text()
    except FileNotFoundError:
        return None
    out = []
    for line in text.splitlines():
        if line.strip():
            r = json.loads(line)
            out.append((r.get("name", "?"), r.get("result", "?"),
                        (r.get("stdout") or "") + (r.get("stderr") or "")))
    return out


def check_results(listed, results, allowed=None):
    """What is wrong with one folder's run: [] when every listed test has a result of this
    run and none skipped unless allowed ({name: (output regex, reason)})."""
    allowed = ALLOWED_SKIPS if allowed is None else allowed
    if not listed:
        return ["meson lists no test for these suites: nothing would run"]
    if results is None:
        return ["no results: meson wrote no meson-logs/testlog.json for this run"]
    problems = []
    missing = collections.Counter(listed) - collections.Counter(n for n, _, _ in results)
    if missing:
        problems.append("%d of the %d tests meson lists have no result: %s" % (
            sum(missing.values()), len(listed), ", ".join(sorted(missing))))
    for name, result, output in results:
        if result != "SKIP":
            continue
        rule = allowed.get(test_name(name))
        if rule is None:
            problems.append("%s skipped, and it is not on the allowed list "
                            "(tools/testresults.py)" % name)
        elif not re.search(rule[0], output):
            problems.append("%s skipped, but not because %r (the one skip allowed for it)"
                            % (name, rule[0]))
    return problems


def run_checked(folder, suites, env=None, meson="meson", command=None, allowed=None,
                extra=()):
    """Runs meson test for suites in folder (extra: more meson test options; command:
    another program in meson's place, for tests) and returns (exit status, results,
    problems)."""
    listed = listed_tests(folder, suites, meson)
    log = folder / "meson-logs" / "testlog.json"
    if log.exists():
        log.unlink()    # the last run's results must not pass for this one's
    args = list(command or [meson, "test", "-C", str(folder), "--print-errorlogs"])
    args += list(extra)
    for s in suites:
        args += ["--suite", s]
    print("dmalab: $ " + " ".join(args), flush=True)
    rc = subprocess.run(args, env=env).returncode
    results = read_results(log)
    return rc, results or [], check_results(listed, results, allowed)
