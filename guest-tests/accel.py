# SPDX-License-Identifier: GPL-2.0-or-later
"""Which accelerator a guest boots with: KVM where the host can use it, TCG
otherwise, and TCG always for what needs it (TCG plugins such as the race
detector, -icount).  The choice comes with the reason, for the runner to say.

  DMALAB_ACCEL=kvm|tcg|auto (or the runner's --accel) forces one; auto is the
  default.
"""

import errno
import fcntl
import os

KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01
KVM_API_VERSION = 12

CHOICES = ("auto", "kvm", "tcg")


class AccelError(Exception):
    """The accelerator asked for cannot be used."""


def kvm_usable(dev="/dev/kvm", cpuinfo="/proc/cpuinfo"):
    """(True, why) when KVM can run a guest here, else (False, why).

    /dev/kvm must open read-write, speak API version 12 and create a VM, and
    the CPU must offer hardware virtualisation (vmx or svm): some sandboxes
    have a /dev/kvm that creates VMs but cannot run one.
    DMALAB_KVM_PROBE=skip answers True without looking (for testing the
    runner's fall-back when QEMU then fails to start with KVM)."""
    if os.environ.get("DMALAB_KVM_PROBE") == "skip":
        return True, "probe skipped (DMALAB_KVM_PROBE=skip)"
    try:
        fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return False, "%s: %s" % (dev, os.strerror(e.errno))
    try:
        try:
            version = fcntl.ioctl(fd, KVM_GET_API_VERSION)
        except OSError as e:
            return False, "%s: KVM_GET_API_VERSION: %s" % (
                dev, os.strerror(e.errno))
        if version != KVM_API_VERSION:
            return False, "%s speaks KVM API %d, not %d" % (
                dev, version, KVM_API_VERSION)
        try:
            os.close(fcntl.ioctl(fd, KVM_CREATE_VM, 0))
        except OSError as e:
            return False, "%s: KVM_CREATE_VM: %s" % (
                dev, os.strerror(e.errno or errno.EIO))
    finally:
        os.close(fd)
    try:
        with open(cpuinfo) as f:
            flags = set()
            for line in f:
                if line.startswith("flags"):
                    flags.update(line.split(":", 1)[1].split())
    except OSError as e:
        return False, "%s: %s" % (cpuinfo, os.strerror(e.errno))
    if not flags & {"vmx", "svm"}:
        return False, "%s opens, but the CPU offers no vmx or svm" % dev
    return True, "%s is usable" % dev


def tcg_reason(qemu_args, plugin=False):
    """Why a command line needs TCG, or None."""
    if plugin or "-plugin" in qemu_args:
        return "TCG plugins (the race detector, the instruction profiler) need TCG"
    if "-icount" in qemu_args:
        return "-icount needs TCG"
    return None


def choose(requested, needs_tcg=None, probe=kvm_usable):
    """(accel, why) for `requested` (auto, kvm or tcg; None reads
    DMALAB_ACCEL).  needs_tcg: the reason the run needs TCG, or None.
    Raises AccelError when the request cannot be met."""
    if requested is None:
        requested = os.environ.get("DMALAB_ACCEL") or "auto"
    if requested not in CHOICES:
        raise AccelError("accelerator %r: choose one of %s" %
                         (requested, ", ".join(CHOICES)))
    if needs_tcg:
        if requested == "kvm":
            raise AccelError("KVM was asked for, but %s" % needs_tcg)
        return "tcg", needs_tcg
    if requested == "tcg":
        return "tcg", "asked for"
    ok, why = probe()
    if requested == "kvm":
        if not ok:
            raise AccelError("KVM was asked for, but %s" % why)
        return "kvm", "asked for; " + why
    if ok:
        return "kvm", why
    return "tcg", "KVM not usable: " + why
