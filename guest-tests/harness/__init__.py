# SPDX-License-Identifier: GPL-2.0-or-later
"""runner.py's parts: qmp, qemu, ktap, judge, report, races (see runner.py)."""
