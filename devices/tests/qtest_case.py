# SPDX-License-Identifier: GPL-2.0-or-later
"""What the device qtests share: the QEMU binary named on their command line, starting QEMU
while a rebuild may be replacing it, a TestCase that checks every QEMU a test started
exited cleanly, migration through a file, and the tests' main()."""

import os
import sys
import time
import unittest

import libqtest

QEMU = None  # the binary under test: main() sets it from the command line


def wait_binary(timeout=600):
    """The binary may be replaced under us by a rebuild: wait until it is back."""
    deadline = time.monotonic() + timeout
    while not os.access(QEMU, os.X_OK):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{QEMU} missing for {timeout} s")
        time.sleep(1)


def launch(make, attempts=30):
    """make() starts QEMU; retried while the binary is missing or being rewritten."""
    for attempt in range(attempts):
        wait_binary()
        try:
            return make()
        except OSError:     # ENOENT, ETXTBSY, EACCES from exec: a rebuild under way
            if attempt == attempts - 1:
                raise
            time.sleep(1)


class MachineCase(unittest.TestCase):
    """Starts QEMUs for a test (track()) and checks at the end that each exited with status
    0 and that its stderr holds none of FORBIDDEN; with STDERR_ALLOWED_ONLY, nothing at all
    but lines the test allowed."""
    FORBIDDEN = ("assert", "abort")
    STDERR_ALLOWED_ONLY = False

    def setUp(self):
        self.machines = []

    def tearDown(self):
        for qt, _ in self.machines:   # all closed first, even if one check fails
            qt.close()
        for qt, allowed in self.machines:
            self.check_exit(qt, allowed)

    def track(self, qt, allowed=()):
        self.machines.append((qt, allowed))
        return qt

    def check_exit(self, qt, allowed=()):
        code = qt.close()
        err = qt.stderr
        self.assertEqual(code, 0, f"QEMU exit status; stderr: {err!r}")
        for word in self.FORBIDDEN:
            self.assertNotIn(word, err.lower(), err)
        if self.STDERR_ALLOWED_ONLY:
            for line in err.splitlines():
                self.assertTrue(any(a in line for a in allowed), f"unexpected stderr: {line!r}")

    def wait_migration(self, qt, timeout=30):
        """Waits until qt's migration (either side) completed; returns query-migrate's
        answer."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = qt.qmp("query-migrate")
            status = info.get("status")
            if status == "completed":
                return info
            self.assertNotIn(status, ("failed", "cancelled"), info)
            time.sleep(0.02)
        self.fail(f"migration not completed: {info}")


def main():
    """Runs the calling script's tests against the QEMU binary its command line names."""
    global QEMU
    QEMU, argv = libqtest.qemu_from_argv(sys.argv)
    unittest.main(module="__main__", argv=argv)
