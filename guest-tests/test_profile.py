#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of guest-tests/profile.py (instruction profiles: the plugin's
output, /proc/kallsyms, instructions per symbol and per operation, the tables),
of profile_bench.py's checks and of the runner's part (harness/insn_profile.py),
on synthetic profiles and symbols.  No QEMU."""

import importlib.util
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import insn_profile  # noqa: E402
from imagelib import init_files  # noqa: E402
import profile_bench  # noqa: E402

# guest-tests/profile.py, under a name that is not the standard library's profile
_spec = importlib.util.spec_from_file_location("dmalab_profile",
                                               os.path.join(HERE, "profile.py"))
prof = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prof)

COPY4K, PACE4K, COPY64K = 0x01001000, 0x02001000, 0x01010000

KALLSYMS = """\
ffffffff81000000 T _text\r
ffffffff81000000 T startup_64\r
ffffffff81001000 T iommu_dma_unmap_page\r
ffffffff81002000 t qi_submit_sync\r
ffffffff81003000 T __schedule\r
ffffffff81004000 T dma_map_page_attrs\r
ffffffff81e00000 T _etext\r
ffffffffc0200000 t ioat_tx_submit_unlock\t[ioatdma]\r
ffffffffc0201000 t dlx_copy_wait\t[dmalab_exercise]\r
garbled line\r
"""


def profile_text(windows, blocks, count="tb", **summary):
    """A plugin output: windows [(id, ops, insns)], blocks [(id, vaddr, execs, insns)]."""
    fields = dict(windows=len(windows), opens=len(windows), closes=len(windows), nested=0,
                  stray=0, unclosed=0, inexact=0, ids=len({w[0] for w in windows}),
                  ids_dropped=0, blocks=len(blocks), blocks_dropped=0)
    fields.update(summary)
    out = ["# dmalab-profile 1: synthetic", "count " + count,
           "summary " + " ".join("%s=%d" % kv for kv in fields.items())]
    out += ["window seq=%d id=0x%08x vcpu=0 ops=%d insns=%d execs=%d" % (i + 1, w, o, n, n // 4)
            for i, (w, o, n) in enumerate(windows)]
    out += ["tb id=0x%08x vaddr=0x%x execs=%d insns=%d" % b for b in blocks]
    return "\n".join(out) + "\n"


def symbols():
    return prof.Symbols(*prof.parse_kallsyms(KALLSYMS.splitlines()))


def baseline():
    """No IOMMU: 100 copies of 4 KiB, scheduler and map path only."""
    return prof.parse_profile(profile_text(
        [(PACE4K, 100, 20000), (COPY4K, 100, 50000)],
        [(PACE4K, 0xffffffff81003010, 2000, 20000),
         (COPY4K, 0xffffffff81003010, 3000, 30000),
         (COPY4K, 0xffffffff81004000, 1000, 10000),
         (COPY4K, 0xffffffffc0200010, 1000, 10000)]))


def strict():
    """Strict: the same plus the unmap path."""
    return prof.parse_profile(profile_text(
        [(PACE4K, 100, 20000), (COPY4K, 100, 90000)],
        [(PACE4K, 0xffffffff81003010, 2000, 20000),
         (COPY4K, 0xffffffff81003010, 3000, 30000),
         (COPY4K, 0xffffffff81004000, 1000, 10000),
         (COPY4K, 0xffffffffc0200010, 1000, 10000),
         (COPY4K, 0xffffffff81002004, 2000, 25000),
         (COPY4K, 0xffffffff81002100, 500, 5000),
         (COPY4K, 0xffffffff81001000, 1000, 10000)]))


LOG = ["# bench-copy size=4096 rate=1000 copies=100 slept=100 per_s=999",
       "ok 1 copy-4096", "# dmalab-profile windows=2 source=copycost"]


class ProfileParsing(unittest.TestCase):
    def test_reads_windows_and_blocks(self):
        p = strict()
        self.assertEqual(p.count, "tb")
        self.assertEqual(p.ids(), [PACE4K, COPY4K])
        self.assertEqual((p.ops(COPY4K), p.insns(COPY4K)), (100, 90000))
        self.assertEqual(len(p.blocks[COPY4K]), 6)

    def test_refuses_what_is_not_a_whole_profile(self):
        good = profile_text([(COPY4K, 1, 10)], [])
        prof.parse_profile(good)
        for bad, why in ((good.replace("count tb\n", ""), "complete"),
                         (good.replace("windows=1", "windows=2"), "2 windows, 1"),
                         (good + "tb id=0x1 vaddr=0x2 execs=1\n", "no insns"),
                         (good + "tb id=0x1 vaddr=zz execs=1 insns=1\n", "not a number"),
                         (good + "bogus\n", "unknown")):
            with self.subTest(why=why), self.assertRaisesRegex(prof.ProfileError, why):
                prof.parse_profile(bad)

    def test_window_names_round_trip(self):
        self.assertEqual(prof.window_name(COPY64K), "copy-65536")
        self.assertEqual(prof.window_name(0x07000040), "nic-64")
        self.assertEqual(prof.window_id("unmap-4096"), 0x04001000)
        self.assertEqual(prof.window_id("0x2a"), 42)
        with self.assertRaises(prof.ProfileError):
            prof.window_id("nosuch-1")

    def test_kinds_are_the_modules(self):
        """profile.py's names for the window kinds are exercise.h's DLX_PROF_* (and
        init.sh's pktgen windows use the nic kind)."""
        with open(os.path.join(HERE, "module", "exercise.h")) as f:
            header = dict((int(v), k.lower()) for k, v in
                          re.findall(r"#define DLX_PROF_(\w+)\s+(\d+)", f.read()))
        self.assertEqual(header, prof.KINDS)
        text = init_files.init_text()
        self.assertIn("dmalab-mark open $((0x07000000 + size))", text)
        self.assertIn("dmalab-mark open $((0x08000000))", text)


class Symbolising(unittest.TestCase):
    def test_kernel_module_user_and_unknown_addresses(self):
        s = symbols()
        self.assertEqual(s.name(0xffffffff81002abc), "qi_submit_sync")
        self.assertEqual(s.name(0xffffffff81000000), "startup_64")
        self.assertEqual(s.name(0xffffffffc0201010), "dlx_copy_wait [dmalab_exercise]")
        self.assertEqual(s.name(0x401000), "[user]")
        # past _etext (not text any more), and far past a module's last function
        self.assertEqual(s.name(0xffffffff81e00010), "[kernel?]")
        self.assertEqual(s.name(0xffffffffc0201000 + prof.MODULE_REACH), "[kernel?]")
        self.assertEqual(s.name(0xffffffff80000000), "[kernel?]")

    def test_refuses_a_list_without_text_bounds_or_addresses(self):
        with self.assertRaisesRegex(prof.ProfileError, "_etext"):
            prof.parse_kallsyms(["ffffffff81000000 T _text"])
        with self.assertRaisesRegex(prof.ProfileError, "kptr_restrict"):
            prof.parse_kallsyms(["0000000000000000 T _text", "0000000000000000 T _etext"])


class PerSymbol(unittest.TestCase):
    def test_blocks_add_up_per_function_and_operation(self):
        per = prof.per_symbol(strict(), symbols(), COPY4K)
        self.assertEqual(per["qi_submit_sync"], 30000)
        self.assertEqual(per["ioat_tx_submit_unlock [ioatdma]"], 10000)
        total, each = prof.per_op(strict(), symbols(), COPY4K)
        self.assertEqual(total, 900)
        self.assertEqual(each["qi_submit_sync"], 300)
        self.assertEqual(prof.per_op(strict(), symbols(), 0x0bad0000), (0.0, {}))

    def test_windows_without_operations_count_per_window(self):
        p = prof.parse_profile(profile_text([(COPY4K, 0, 500), (COPY4K, 0, 700)],
                                            [(COPY4K, 0xffffffff81003000, 10, 1200)]))
        self.assertEqual(prof.per_op(p, symbols(), COPY4K)[0], 600)
        self.assertEqual(prof.window_totals(p), [("copy-4096", 2, 0, 1200, 600)])

    def test_only_in_and_the_difference_table(self):
        s = symbols()
        other = prof.per_op(strict(), s, COPY4K)[1]
        base = prof.per_op(baseline(), s, COPY4K)[1]
        self.assertEqual(prof.only_in(other, base), ["qi_submit_sync", "iommu_dma_unmap_page"])
        lines = prof.report([("none", baseline(), s), ("strict", strict(), s)], top=3)
        text = "\n".join(lines)
        self.assertIn("strict minus none, window copy-4096: 900 - 500 = +400 instructions "
                      "per op (1.80x)", text)
        self.assertRegex(text, r"\+300\s+300\s+0\s+qi_submit_sync \*")
        self.assertIn("strict, window copy-4096: 900 instructions per op", text)
        # the pacing windows are the same in both: no difference anywhere
        self.assertRegex(text, r"window pace-4096: 200 - 200 = \+0 ")


class BenchChecks(unittest.TestCase):
    """profile_bench.py's checks pass on a consistent run and fail on each
    kind of broken input."""

    def configs(self, base=None, other=None):
        s = symbols()
        return [("no-iommu", base or baseline(), s), ("vtd-strict", other or strict(), s)]

    def test_a_consistent_run_passes(self):
        _, failed = profile_bench.judge(self.configs(), [LOG, LOG], top=10)
        self.assertEqual(failed, [])

    def reasons(self, configs, logs=(LOG, LOG), top=10):
        _, failed = profile_bench.judge(configs, list(logs), top)
        return " | ".join(r for _, why in failed for r in why)

    def test_window_count_differs_from_the_guests(self):
        log = LOG[:-1] + ["# dmalab-profile windows=3 source=copycost"]
        self.assertIn("the plugin saw 2 windows, the guest opened 3", self.reasons(
            self.configs(), [log, LOG]))
        self.assertIn("no '# dmalab-profile windows=' line", self.reasons(
            self.configs(), [LOG[:-1], LOG]))

    def test_marker_trouble_and_empty_windows(self):
        p = prof.parse_profile(profile_text([(PACE4K, 100, 0), (COPY4K, 100, 50000)], [],
                                            stray=1))
        why = self.reasons(self.configs(base=p))
        self.assertIn("stray=1", why)
        self.assertIn("window(s) 1 ran no instructions", why)

    def test_operations_must_be_the_guests(self):
        log = ["# bench-copy size=4096 rate=1000 copies=99 slept=99"] + LOG[1:]
        self.assertIn("copy-4096: 100 operations recorded, the guest reports 99",
                      self.reasons(self.configs(), [log, LOG]))
        log = LOG + ["# bench-copy size=65536 copies=100"]
        self.assertIn("no copy-65536 window", self.reasons(self.configs(), [log, LOG]))

    def test_strict_must_cost_more_and_show_the_unmap_path(self):
        # the configurations swapped: "strict" is the baseline's profile
        why = self.reasons(self.configs(base=strict(), other=baseline()))
        self.assertIn("500 instructions per copy in copy-4096, not more than no-iommu's 900",
                      why)
        self.assertIn("is on the strict unmap path", why)
        # more instructions than the baseline, but the strict-only work elsewhere
        # (startup_64 stands for a function off the path) and the path below the top 1
        moved = prof.parse_profile(profile_text(
            [(PACE4K, 100, 20000), (COPY4K, 100, 90000)],
            [(COPY4K, 0xffffffff81003010, 3000, 30000),
             (COPY4K, 0xffffffff81000010, 3000, 40000),
             (COPY4K, 0xffffffff81001000, 1000, 20000)]))
        why = self.reasons(self.configs(other=moved), top=1)
        self.assertNotIn("not more than", why)
        self.assertIn("none of the top 1 symbols no-iommu never ran in copy-4096 (startup_64) "
                      "is on the strict unmap path", why)
        self.assertEqual(self.reasons(self.configs(other=moved), top=2), "")


class RunnerPart(unittest.TestCase):
    def test_files_beside_the_log_and_the_command_line(self):
        class Args:
            log = "/tmp/x/NAME.log"
        out = insn_profile.profile_out(Args())
        self.assertEqual(out, "/tmp/x/NAME.profile")
        self.assertEqual(insn_profile.kallsyms_path(out), "/tmp/x/NAME.kallsyms")
        self.assertEqual(prof.kallsyms_for(out), "/tmp/x/NAME.kallsyms")
        cmd = insn_profile.with_profiler(["qemu", "-append", "console=ttyS0", "-m", "1G"],
                                         "/p/lib.so,count=insn", out)
        self.assertEqual(cmd, ["qemu", "-append", "console=ttyS0 dmalab.profile=1", "-m", "1G",
                               "-serial", "file:/tmp/x/NAME.kallsyms",
                               "-plugin", "/p/lib.so,count=insn,out=/tmp/x/NAME.profile"])

    def test_summary_lines(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.profile")
            with open(path, "w") as f:
                f.write(profile_text([(COPY4K, 100, 90000), (COPY4K, 100, 10000)], []))
            lines = insn_profile.summary_lines(path)
            self.assertTrue(lines[0].startswith("windows=2 opens=2"))
            self.assertEqual(lines[1], "id 0x01001000: 2 window(s), 200 ops, "
                                       "100000 instructions, 500 per op")
            self.assertIn("no profile", insn_profile.summary_lines(path + ".missing")[0])


class KeptInResults(unittest.TestCase):
    """A study's results file keeps its profiles compact (studies/profiles.py), and
    `measure.py tables` prints the profiles' tables from it as the run printed them."""

    def profiles(self):
        return {"no-iommu": (baseline(), symbols()), "vtd-strict": (strict(), symbols())}

    def test_the_compact_form_prints_the_same_tables(self):
        import json
        from studies import iommu_flush, profiles as sp
        labels = ["no-iommu", "vtd-strict"]
        full = iommu_flush.profile_lines(self.profiles(), labels)
        kept = {label: sp.expand(json.loads(json.dumps(sp.compact(*p))))
                for label, p in self.profiles().items()}
        self.assertEqual(iommu_flush.profile_lines(kept, labels), full)
        self.assertTrue(any("qi_submit_sync" in line for line in full))

    def test_tables_prints_them_from_the_file(self):
        import contextlib
        import io
        import tempfile
        import measure
        from studies import profiles as sp
        with tempfile.TemporaryDirectory() as tmp:
            stem = os.path.join(tmp, "r")
            meta = {"study": "iommu-flush", "clock": "icount-0", "clock_text": "modelled",
                    "profiles": {label: sp.compact(*p)
                                 for label, p in self.profiles().items()}}
            measure.write_results(stem, meta, [], {"no-iommu": [[]], "vtd-strict": [[]]},
                                  {"no-iommu": [{}], "vtd-strict": [{}]})
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(measure.main(["tables", stem + ".json"]), 0)
        text = out.getvalue()
        self.assertIn("guest instructions per operation", text)
        # strict's 4 KiB copy costs 400 instructions more than no IOMMU's (900 - 500)
        self.assertRegex(text, r"vtd-strict minus no-iommu.*copy-4096")
        self.assertIn("qi_submit_sync", text)


if __name__ == "__main__":
    unittest.main()
