# SPDX-License-Identifier: GPL-2.0-or-later
"""image.py's parts: util, debs, kmods, cpio, kernel (see image.py)."""
