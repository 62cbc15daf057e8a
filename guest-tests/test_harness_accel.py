#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the harness's clock (--clock, the replay command) and accelerator choice
(accel.py, KVM's fallback to TCG), with fake_qemu.py standing in for QEMU."""

import io
import os
import re
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

from test_harness import FAKE_QEMU  # noqa: E402
from test_runner import GOOD  # noqa: E402


class AccelEnvironment(unittest.TestCase):
    """A test that sets DMALAB_ACCEL or DMALAB_KVM_PROBE gets them back as they were."""

    def setUp(self):
        self.saved = {k: os.environ.pop(k, None)
                      for k in ("DMALAB_ACCEL", "DMALAB_KVM_PROBE")}

    def tearDown(self):
        for k, v in self.saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


class ClockTests(AccelEnvironment):
    """--clock: the modelled clock (TCG, -icount, a seed) or the host's, and what a run
    keeps and prints for its replay."""

    def parsed(self, *extra):
        ap = runner.make_parser()
        args = ap.parse_args(["--qemu", "q", "--kernel", "k", "--initrd", "i"] + list(extra))
        with unittest.mock.patch("sys.stdout", io.StringIO()) as out:
            runner.check_args(ap, args)
        args.said = out.getvalue()
        return args

    def test_clock_args(self):
        clock_args = runner.clock_args
        self.assertEqual(clock_args(None, ["-m", "1G"]), ["-m", "1G"])
        modelled = clock_args("modelled", ["-m", "1G"], 7)
        self.assertEqual(modelled[modelled.index("-icount") + 1], "shift=3,sleep=off")
        self.assertEqual(modelled[modelled.index("-seed") + 1], "7")
        self.assertIn("clock=vm", modelled[modelled.index("-rtc") + 1])
        self.assertEqual(clock_args("modelled", [])[-1], "1", "seed 1 unless given")
        own = ["-icount", "shift=5,sleep=off", "-seed", "1"]
        self.assertEqual(clock_args("modelled", own), own, "an -icount of its own stays")
        self.assertEqual(clock_args("host", own + ["-m", "1G", "-rtc", "clock=vm"]),
                         ["-m", "1G"])

    def test_modelled_clock_boots_tcg_and_kvm_by_name_turns_it_to_host(self):
        os.environ["DMALAB_KVM_PROBE"] = "skip"   # KVM usable
        args = self.parsed("--clock", "modelled")
        self.assertEqual((args.accel_used, args.clock), ("tcg", "modelled"))
        self.assertIn("icount", args.accel_why)
        cmd = runner.build_cmdline(args, seed=4)
        self.assertEqual(cmd[cmd.index("-seed") + 1], "4")
        self.assertEqual(runner.clock_text(cmd), "modelled (-icount shift=3,sleep=off, -seed 4)")
        args = self.parsed("--clock", "modelled", "--accel", "kvm")
        self.assertEqual((args.accel_used, args.clock), ("kvm", "host"))
        self.assertIn("clock host: KVM was asked for", args.said)
        cmd = runner.build_cmdline(args)
        self.assertNotIn("-icount", cmd)
        self.assertTrue(runner.clock_text(cmd).startswith("host"))
        args = self.parsed("--clock", "host", "--qemu-arg=-icount", "--qemu-arg=shift=5")
        self.assertEqual(args.accel_used, "kvm", "host takes an entry's -icount out")

    def test_artifacts_and_replay_command(self):
        boot = runner.Boot()
        boot.device_stats = [{"path": "/p/d0", "type": "dmalab-ioat", "errors": 2,
                              "fault-log": "rule=0 kind=fail\n"},
                             {"path": "/p/v", "type": "dmalab-vtd", "fault-log": ""}]
        boot.boot_stats = {1: boot.device_stats}
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "raid-ops.log")
            files = runner.keep_artifacts(log, [("boot 1", 5, boot)])
            self.assertEqual(files, [os.path.join(d, "raid-ops.counters.json"),
                                     os.path.join(d, "raid-ops.faults")])
            import json
            with open(files[0]) as f:
                kept = json.load(f)
            self.assertEqual(kept["boot 1"]["seed"], 5)
            self.assertEqual(kept["boot 1"]["devices"][0]["errors"], 2)
            with open(files[1]) as f:
                self.assertEqual(f.read(), "== boot 1 dmalab-ioat /p/d0 ==\nrule=0 kind=fail\n")
            boot.device_stats = [boot.device_stats[1]]
            self.assertEqual(runner.keep_artifacts(log, [("boot 1", None, boot)]),
                             [os.path.join(d, "raid-ops.counters.json")], "no plan, no .faults")
        args = self.parsed("--clock", "modelled", "--name", "raid-ops-6.12")
        self.assertEqual(runner.replay_command(args, None), "./dmalab replay raid-ops-6.12 "
                         "--clock modelled")
        args = self.parsed("--clock", "host", "--name", "raid-ops")
        self.assertEqual(runner.replay_command(args, 9), "./dmalab replay raid-ops --seed 9 "
                         "--clock host  (host clock: the same command and seed, not the "
                         "same interleaving)")


class AccelTests(AccelEnvironment):
    """guest-tests/accel.py: KVM where usable, TCG otherwise or when needed."""

    def setUp(self):
        super().setUp()
        import accel
        self.accel = accel

    def test_choices(self):
        choose = self.accel.choose
        yes, no = (lambda: (True, "fine")), (lambda: (False, "no vmx"))
        self.assertEqual(choose("auto", probe=yes), ("kvm", "fine"))
        self.assertEqual(choose("auto", probe=no),
                         ("tcg", "KVM not usable: no vmx"))
        self.assertEqual(choose("tcg", probe=yes)[0], "tcg")
        self.assertEqual(choose("kvm", probe=yes)[0], "kvm")
        with self.assertRaisesRegex(self.accel.AccelError, "no vmx"):
            choose("kvm", probe=no)
        # What needs TCG gets it, and a forced KVM is refused with the reason.
        why = self.accel.tcg_reason(["-icount", "shift=5"])
        self.assertEqual(choose("auto", why, probe=yes), ("tcg", why))
        with self.assertRaisesRegex(self.accel.AccelError, "icount"):
            choose("kvm", why, probe=yes)
        self.assertIn("plugin", self.accel.tcg_reason([], plugin=True))
        self.assertIsNone(self.accel.tcg_reason(["-m", "1G"]))
        with self.assertRaises(self.accel.AccelError):
            choose("hvf", probe=yes)

    def test_environment_forces_a_choice(self):
        os.environ["DMALAB_ACCEL"] = "tcg"
        self.assertEqual(self.accel.choose(None, probe=lambda: (True, ""))[0],
                         "tcg")

    def test_probe(self):
        ok, why = self.accel.kvm_usable(dev="/nonexistent/kvm")
        self.assertFalse(ok)
        self.assertIn("/nonexistent/kvm", why)
        ok, why = self.accel.kvm_usable(dev="/dev/null")  # not a KVM device
        self.assertFalse(ok)
        self.assertIn("KVM_GET_API_VERSION", why)
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("flags\t\t: fpu sse2 hypervisor\n")
            f.flush()
            ok, why = self.accel.kvm_usable(cpuinfo=f.name)
        self.assertFalse(ok)  # whatever /dev/kvm says, no vmx/svm is a no

    def test_runner_passes_the_choice_and_falls_back(self):
        def parsed(*extra):
            ap = runner.make_parser()
            args = ap.parse_args(["--qemu", "q", "--kernel", "k",
                                  "--initrd", "i"] + list(extra))
            runner.check_args(ap, args)
            return args
        cmd = runner.build_cmdline(parsed("--accel", "tcg"))
        self.assertEqual(cmd[cmd.index("-accel") + 1], "tcg")
        args = parsed("--qemu-arg=-icount", "--qemu-arg=shift=5")
        self.assertEqual(args.accel_used, "tcg")
        self.assertIn("icount", args.accel_why)
        os.environ["DMALAB_KVM_PROBE"] = "skip"
        args = parsed()
        self.assertEqual(args.accel_used, "kvm")
        cmd = runner.build_cmdline(args)
        self.assertEqual(cmd[cmd.index("-accel") + 1], "kvm")
        boot = runner.Boot()
        boot.rc = 134  # QEMU aborted before the kernel's banner
        self.assertTrue(runner.kvm_failed_to_start(args, boot))
        boot.started = 1  # the guest ran: a failure of its own, not KVM's
        self.assertFalse(runner.kvm_failed_to_start(args, boot))
        forced = parsed("--accel", "kvm")
        boot.started = 0
        self.assertFalse(runner.kvm_failed_to_start(forced, boot))


    def test_run_once_boots_again_under_tcg_when_kvm_cannot_start(self):
        # auto took KVM as usable (the probe skipped); the scripted QEMU cannot start
        # under -accel kvm and boots under anything else: run_once must say so, boot
        # the same guest under TCG, and judge that second boot alone
        os.environ["DMALAB_KVM_PROBE"] = "skip"
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(GOOD.split("DMALAB: done")[0])   # the scripted QEMU powers off itself
        self.addCleanup(os.unlink, f.name)
        ap = runner.make_parser()
        args = ap.parse_args(["--qemu", FAKE_QEMU, "--kernel", "k", "--initrd", "i",
                              "--min-ops", "1000", "--timeout", "30"] + [
            "--qemu-arg=" + a for a in ("--no-kvm", "--boot-text", f.name,
                                        "--descriptors", "1210", "--bytes", "5000")])
        runner.check_args(ap, args)
        self.assertEqual(args.accel_used, "kvm")
        out = io.StringIO()
        with unittest.mock.patch("sys.stdout", out):
            boot, results, run_reasons = runner.run_once(args)
        chosen = re.findall(r"^runner: accelerator (\w+) \((.*)\)$", out.getvalue(), re.M)
        self.assertEqual([a for a, _ in chosen], ["kvm", "tcg"], out.getvalue())
        self.assertRegex(chosen[1][1], r"^KVM failed to start the guest \(qemu exit status "
                         r"1: .*failed to initialize kvm")
        self.assertEqual(boot.cmd[boot.cmd.index("-accel") + 1], "tcg")
        self.assertEqual(boot.accel[0], "tcg")
        self.assertEqual((boot.rc, boot.started), (0, 1))
        self.assertEqual((run_reasons, [r for _, _, r in results]), ([], [[]]))
        self.assertEqual(results[0][1].summary["ops"], 1200)
        # forced KVM is not auto's choice: the failure stands, nothing boots again
        args = ap.parse_args(["--qemu", FAKE_QEMU, "--kernel", "k", "--initrd", "i",
                              "--accel", "kvm", "--qemu-arg=--no-kvm",
                              "--qemu-arg=--boot-text", "--qemu-arg=" + f.name])
        runner.check_args(ap, args)
        with unittest.mock.patch("sys.stdout", io.StringIO()):
            boot, _, _ = runner.run_once(args)
        self.assertEqual((boot.accel[0], boot.rc, boot.started), ("kvm", 1, 0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
