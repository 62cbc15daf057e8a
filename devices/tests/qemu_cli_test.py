#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The dmalab-ioat QEMU device seen from QEMU's command line and QMP, without a guest:
bad property values give clear errors, and the device's counters and registers are
reachable; every device's counters in one query, each documented, none in -device help.
Usage: qemu_cli_test.py QEMU_BINARY"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

QEMU = None
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
# What QEMU's PCIDevice and X86IOMMUState classes give the devices, as they describe it
QEMU_BASE_PROPERTIES = ("acpi-index", "addr", "busnr", "failover_pair_id", "multifunction",
                        "rombar", "romfile", "romsize", "intremap", "device-iotlb", "pt")
# Each device, what it needs beside it, and the page whose counter table documents it
DEVICES = (("dmalab-ioat", ("dmalab-ioat,id=d",), "ioat.rst"),
           ("dmalab-vtd", ("dmalab-vtd,id=d,intremap=on",), "vtd.rst"),
           ("dmalab-dsa", ("dmalab-dsa,id=d",), "dsa.rst"))
BASE = ["-M", "q35", "-accel", "tcg", "-nographic", "-nodefaults", "-S",
        "-L", "/usr/share/seabios", "-L", "/usr/share/qemu"]


def qemu(*args, stdin=None, timeout=60):
    return subprocess.run([QEMU] + BASE + list(args), input=stdin, capture_output=True,
                          text=True, timeout=timeout)


class QemuDidNotRun(AssertionError):
    pass


def qmp_session(device, *commands):
    """Runs QMP commands against a stopped machine; returns their replies.
    Raises QemuDidNotRun (a test failure) unless QEMU started, answered
    every command and quit when told (exit status 0): a QEMU that refused
    its command line printed no warning, but proves nothing."""
    lines = [{"execute": "qmp_capabilities"}] + list(commands) + [{"execute": "quit"}]
    res = qemu("-device", device, "-qmp", "stdio", "-display", "none",
               stdin="".join(json.dumps(c) + "\n" for c in lines))
    replies = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    greeting = [r for r in replies if "QMP" in r]
    replies = [r for r in replies if "return" in r or "error" in r]
    if res.returncode != 0 or not greeting or len(replies) != len(lines) or \
            replies[0] != {"return": {}} or replies[-1] != {"return": {}}:
        raise QemuDidNotRun(
            "QEMU did not run the QMP session (exit status %d, %d of %d replies): %s" % (
                res.returncode, len(replies), len(lines),
                res.stderr.strip() or res.stdout.strip() or "no output"))
    return replies[1:1 + len(commands)], res


class PropertyErrors(unittest.TestCase):
    def assertRefused(self, device, words):
        res = qemu("-device", device)
        self.assertEqual(res.returncode, 1, res.stderr)
        self.assertIn(words, res.stderr)

    def test_channels_out_of_range(self):
        self.assertRefused("dmalab-ioat,channels=0", "channels must be between 1 and 16")
        self.assertRefused("dmalab-ioat,channels=17", "channels must be between 1 and 16")

    def test_xfercap_out_of_range(self):
        self.assertRefused("dmalab-ioat,xfercap=0", "xfercap must be 1..31")
        self.assertRefused("dmalab-ioat,xfercap=32", "xfercap must be 1..31")

    def test_zero_step_budget(self):
        self.assertRefused("dmalab-ioat,step-bytes=0", "the step budget must be non-zero")

    def test_delays_that_could_overflow_virtual_time(self):
        self.assertRefused("dmalab-ioat,latency-ns=%d" % (1 << 51), "2^50")
        self.assertRefused("dmalab-ioat,jitter-ns=%d" % (1 << 51), "2^50")
        self.assertRefused("dmalab-ioat,step-gap-ns=%d" % (1 << 51), "2^50")

    def test_vtd_realize_that_fails_after_the_model_exists(self):
        # The fault plan is read after the unit's model, timers and bottom half
        # exist: a plan that cannot be read or parsed must give them back and
        # fail with the reason, not crash on the way out.
        self.assertRefused("dmalab-vtd,fault-plan=/nonexistent/plan.json",
                           "dmalab-vtd: cannot read the fault plan /nonexistent/plan.json")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"rules": [{"kind": "no-such-kind"}]}')
            f.flush()
            self.assertRefused("dmalab-vtd,fault-plan=" + f.name,
                               "dmalab-vtd: fault plan " + f.name)

    def test_vtd_bad_configuration(self):
        self.assertRefused("dmalab-vtd,aw-bits=40", "aw-bits must be 39 or 48")
        self.assertRefused("dmalab-vtd,replacement=mru",
                           "Parameter 'replacement' does not accept value 'mru'")
        self.assertRefused("dmalab-vtd,intremap=on,qi=off",
                           "interrupt remapping needs queued invalidation")
        self.assertRefused("dmalab-vtd,intremap=on,iec-entries=6",
                           "iec-entries must be a multiple of 4")
        self.assertRefused("dmalab-vtd,mode=scalable,qi=off",
                           "scalable mode needs queued invalidation (qi=on)")
        for prop in ("pde-cache=6", "pdpe-cache=8192", "pml4e-cache=2"):
            self.assertRefused("dmalab-vtd," + prop,
                               "pde-cache, pdpe-cache and pml4e-cache must be multiples of 4")
        self.assertRefused("dmalab-vtd,mode=scalable,aw-bits=39",
                           "first-stage tables need aw-bits=48 (or first-stage=off)")
        self.assertRefused("dmalab-vtd,mode=pasid",
                           "Parameter 'mode' does not accept value 'pasid'")

    def test_conventional_pci_bus_is_refused_naming_q35(self):
        res = subprocess.run([QEMU, "-M", "pc", "-accel", "tcg", "-nographic", "-nodefaults",
                              "-S", "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
                              "-device", "dmalab-ioat"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 1, res.stderr)
        self.assertIn("PCI Express", res.stderr)
        self.assertIn("-M q35", res.stderr)


class Warnings(unittest.TestCase):
    def test_delay_beyond_linux_timeout_warns(self):
        replies, res = qmp_session("dmalab-ioat,latency-ns=300000000")
        self.assertIn("completion timeout", res.stderr)
        self.assertIn("300 ms", res.stderr)

    def test_default_timing_does_not_warn(self):
        replies, res = qmp_session("dmalab-ioat")
        self.assertNotIn("warning", res.stderr)


def qom_get(path, prop):
    return {"execute": "qom-get", "arguments": {"path": path, "property": prop}}


def qom_set(path, prop, value):
    return {"execute": "qom-set", "arguments": {"path": path, "property": prop, "value": value}}


class Qmp(unittest.TestCase):
    def assertEnumFixedAtRealize(self, device, prop, value, other):
        """`prop` reads `value` on the running unit `device` (id u), and setting it to
        `other` is refused and changes nothing."""
        path = "/machine/peripheral/u"
        replies, res = qmp_session(device, qom_get(path, prop), qom_set(path, prop, other),
                                   qom_get(path, prop))
        self.assertEqual(replies[0].get("return"), value, res.stderr)
        self.assertIn("fixed once the unit runs", replies[1]["error"]["desc"])
        self.assertEqual(replies[2].get("return"), value)

    def test_vtd_replacement_is_an_enum_fixed_at_realize(self):
        self.assertEnumFixedAtRealize("dmalab-vtd,id=u,replacement=random", "replacement",
                                      "random", "fifo")

    def test_vtd_mode_is_an_enum_fixed_at_realize(self):
        self.assertEnumFixedAtRealize(
            "dmalab-vtd,id=u,mode=scalable,first-stage=off,aw-bits=39", "mode", "scalable",
            "legacy")

    def test_timing_is_settable_at_run_time_and_bounded(self):
        path = "/machine/peripheral/ioat0"
        replies, res = qmp_session(
            "dmalab-ioat,id=ioat0",
            qom_set(path, "latency-ns", 5000),
            qom_get(path, "latency-ns"),
            qom_set(path, "latency-ns", 1 << 51),
            qom_get(path, "latency-ns"))
        self.assertEqual(replies[1].get("return"), 5000, res.stderr)
        self.assertIn("2^50", replies[2]["error"]["desc"])
        self.assertEqual(replies[3].get("return"), 5000)

    def test_vtd_interrupt_remapping_counters_and_cost(self):
        path = "/machine/peripheral/u"
        replies, res = qmp_session(
            "dmalab-vtd,id=u,intremap=on",
            qom_get(path, "counters"),
            qom_set(path, "iec-inv-ns", 700),
            qom_get(path, "iec-inv-ns"),
            qom_get(path, "iec-entries"))
        names = list(replies[0].get("return", {}))
        for n in ("interrupts", "ir-remapped", "ir-faults", "iec-hits", "iec-inv-global",
                  "iec-inv-index"):
            self.assertIn(n, names, res.stderr)
        self.assertEqual(replies[2].get("return"), 700)
        self.assertEqual(replies[3].get("return"), 256)

    def test_counters_start_at_zero(self):
        replies, res = qmp_session("dmalab-ioat,id=ioat0",
                                   qom_get("/machine/peripheral/ioat0", "counters"))
        counters = replies[0].get("return", {})
        self.assertEqual([counters.get(p) for p in ("descriptors", "bytes", "errors",
                                                    "interrupts")], [0, 0, 0, 0], res.stderr)
        self.assertEqual(set(counters.values()), {0})

    def test_pci_identity_and_properties(self):
        replies, res = qmp_session(
            "dmalab-ioat,id=ioat0,device-id=0x0c50,channels=2",
            {"execute": "qom-get",
             "arguments": {"path": "/machine/peripheral/ioat0", "property": "channels"}},
            {"execute": "query-pci"})
        self.assertEqual(replies[0].get("return"), 2, res.stderr)
        devices = [d for bus in replies[1]["return"] for d in bus["devices"]]
        ioat = [d for d in devices if d["id"]["vendor"] == 0x8086 and d["id"]["device"] == 0x0c50]
        self.assertEqual(len(ioat), 1, devices)
        bar0 = ioat[0]["regions"][0]
        self.assertEqual(bar0["size"], 0x4000)
        self.assertEqual(bar0["mem_type_64"], True)



def documented_counters(page):
    """The names of the page's counter table: the simple table whose header reads
    "name  unit  what it counts"."""
    with open(os.path.join(DOCS, page)) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines)
                 if re.match(r"name +unit +what it counts$", l))
    names = []
    for line in lines[start + 2:]:
        if line.startswith("="):
            break
        m = re.match(r"``([a-z0-9-]+)`` ", line)
        if m:
            names.append(m.group(1))
    return names


class Counters(unittest.TestCase):
    """Each device's counters: all in one query, each documented, none a setting."""

    def counters(self, device):
        replies, res = qmp_session(device, qom_get("/machine/peripheral/d", "counters"))
        self.assertIn("return", replies[0], res.stderr)
        return replies[0]["return"]

    def test_one_query_gives_every_documented_counter(self):
        for kind, args, page in DEVICES:
            with self.subTest(kind):
                counters = self.counters(*args)
                self.assertEqual(sorted(counters), sorted(documented_counters(page)))
                self.assertTrue(all(isinstance(v, int) for v in counters.values()))

    def test_help_lists_settings_only(self):
        for kind, _, page in DEVICES:
            with self.subTest(kind):
                out = qemu("-device", kind + ",help")
                listed = re.findall(r"^  ([a-z0-9_-]+)=", out.stdout, re.M)
                self.assertTrue(listed, out.stderr)
                for name in documented_counters(page) + [
                        "counters", "counter-names", "fault-log", "faults-injected",
                        "ir-remapped-requesters"]:
                    self.assertNotIn(name, listed)
                # what dmalab adds says what it does; QEMU's own, which its PCI and
                # x86-iommu base classes add ("on/off", or no text), are QEMU's to describe
                # (QEMU prints no " - " for a property with neither text nor default)
                checked = 0
                for line in out.stdout.splitlines()[1:]:
                    m = re.fullmatch(r"  ([a-z0-9_-]+)=<[^>]+>(?: +- (.*))?", line)
                    self.assertTrue(m, line)
                    if m.group(1) not in QEMU_BASE_PROPERTIES and \
                            not m.group(1).startswith("x-"):
                        self.assertNotRegex(m.group(2) or "", r"^(on/off)?( \(default|$)",
                                            line)
                        checked += 1
                self.assertGreater(checked, 5)


if __name__ == "__main__":
    QEMU = sys.argv.pop(1)
    unittest.main()
