# SPDX-License-Identifier: GPL-2.0-or-later
"""What a run must show, as data: one dataclass per kind of expectation, built from a
scenario's registry entry (its "expect" and "allow" fields, Expectations.from_entry)
or from runner.py's options (runner.expectations); the judge (judge.py) reads them."""

import dataclasses
import re
from dataclasses import dataclass
from typing import Optional


class ExpectationError(ValueError):
    """An expectation that cannot be judged (a bad value, pattern or field)."""


# dmalab-vtd's counters are named by the device itself (its "counter-names"
# property, docs/vtd.rst), never copied here.
# NAME OP VALUE, where VALUE is a number or ops[*N|/N] (the copies the guest verified).
# NAME@BB:DD.F is a counter the device keeps per requester, that requester's count
# (dmalab-vtd's ir-remapped: ir-remapped@00:01.0).
VTD_EXPECT_RE = re.compile(
    r"^([a-z][a-z0-9-]*(?:@[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])?)\s*(>=|<=|==|>|<)\s*"
    r"(\d+|ops(?:\s*([*/])\s*(\d+))?)$")
# The counters a device keeps per requester, and the QOM property that holds them.
PER_REQUESTER = {"ir-remapped": "ir-remapped-requesters"}

COMPARE = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
           "==": lambda a, b: a == b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}


def patterns(what, texts):
    """texts as a tuple of regular expressions, each checked to compile."""
    for rx in texts:
        try:
            re.compile(rx)
        except re.error as e:
            raise ExpectationError("%s %r: %s" % (what, rx, e)) from None
    return tuple(texts)


@dataclass(frozen=True)
class DeviceErrors:
    """The channel errors dmalab-ioat must count: exactly count, or at least."""
    count: int = 0
    at_least: bool = False

    @classmethod
    def parse(cls, text):
        """"N" (exactly) or "N+" (at least)."""
        m = re.match(r"^\s*(\d+)\s*(\+?)\s*$", text or "")
        if not m:
            raise ExpectationError("expected N or N+, got %r" % text)
        return cls(int(m.group(1)), bool(m.group(2)))

    def __str__(self):
        return "%d%s" % (self.count, "+" if self.at_least else "")


@dataclass(frozen=True)
class VtdCondition:
    """A condition on a dmalab-vtd counter, summed over the units: counter op
    value, value a number or scaled from the copies the guest verified."""
    counter: str
    op: str
    value: int = 0
    per_ops: Optional[str] = None   # None: value as is; "=": ops; "*", "/": ops by value
    text: str = ""

    @classmethod
    def parse(cls, text):
        m = VTD_EXPECT_RE.match(text)
        if not m:
            raise ExpectationError("--expect-vtd %r: want NAME OP VALUE" % text)
        name, op, value, scale_op, scale = m.groups()
        if not value.startswith("ops"):
            return cls(name, op, int(value), None, text)
        return cls(name, op, int(scale or 1), scale_op or "=", text)

    def want(self, ops):
        """The value the counter is compared with, when the guest verified ops copies."""
        if self.per_ops is None:
            return self.value
        return {"=": ops, "*": ops * self.value, "/": ops // self.value}[self.per_ops]

    def holds(self, have, ops):
        return COMPARE[self.op](have, self.want(ops))


@dataclass(frozen=True)
class Binding:
    """ioatdma and the device: bound with this vendor:device id ('' for any) and this
    many DMA channels (None for any), or refusing it (unbound: no channel at all)."""
    unbound: bool = False
    device_id: str = "0x8086:0x2021"
    channels: Optional[int] = 4


@dataclass(frozen=True)
class KtapResults:
    """The exerciser's KTAP results (scenario memcpy): every result ok, a skipped one
    only where its name fully matches an allow_skip pattern, at least min_ops copies
    verified."""
    min_ops: int = 0
    allow_skip: tuple = ()

    def __post_init__(self):
        patterns("a skip allowed for", self.allow_skip)


@dataclass(frozen=True)
class DeviceCounters:
    """dmalab-ioat's counters (at least so many descriptors and bytes, its channel
    errors) and conditions on dmalab-vtd's, dmalab-ioat's and dmalab-dsa's, read over
    QMP."""
    min_descriptors: int = 0
    min_bytes: int = 0
    errors: DeviceErrors = DeviceErrors()
    vtd: tuple = ()                 # VtdCondition
    ioat: tuple = ()                # VtdCondition on dmalab-ioat's counters
    dsa: tuple = ()                 # VtdCondition on dmalab-dsa's counters

    def named(self):
        """The expectations that name a counter explicitly, as the runner's options."""
        out = ["--expect-vtd %s" % c.text for c in self.vtd]
        out += ["--expect-ioat %s" % c.text for c in self.ioat]
        out += ["--expect-dsa %s" % c.text for c in self.dsa]
        if self.min_descriptors:
            out.append("--min-device-descriptors %d" % self.min_descriptors)
        if self.min_bytes:
            out.append("--min-device-bytes %d" % self.min_bytes)
        if self.errors != DeviceErrors():
            out.append("--expect-device-errors %s" % self.errors)
        return out


@dataclass(frozen=True)
class LogLines:
    """The serial log: a line matching each of lines, each of irqs a named interrupt
    that fired; a kernel problem or ioatdma error on a line matching allow is expected."""
    lines: tuple = ()
    allow: tuple = ()
    irqs: tuple = ()

    def __post_init__(self):
        patterns("an allowed line", self.allow)
        for rx in patterns("an expected line", self.lines):
            if re.match(r"(ok|not ok) \d", rx):
                # re.search would find it inside "not ok N ..." too
                raise ExpectationError("--expect-line %r: a KTAP result line must "
                                       "be anchored ('^%s')" % (rx, rx))


@dataclass(frozen=True)
class RaceReports:
    """The race detector's reports: one matching each pattern, count of them in all
    (None for any)."""
    patterns: tuple = ()
    count: Optional[int] = None

    def __post_init__(self):
        patterns("an expected race", self.patterns)


@dataclass(frozen=True)
class Liveness:
    """QEMU's main loop kept answering: no QMP round trip longer than max_round_trip
    seconds (None: not probed)."""
    max_round_trip: Optional[float] = None


@dataclass(frozen=True)
class Expectations:
    """Everything a run is judged against, by kind."""
    binding: Binding = Binding()
    ktap: KtapResults = KtapResults()
    counters: DeviceCounters = DeviceCounters()
    log: LogLines = LogLines()
    races: RaceReports = RaceReports()
    liveness: Liveness = Liveness()

    @classmethod
    def from_entry(cls, entry):
        """A registry entry's expectations: its "expect" fields and its "allow"."""
        e = dict(entry.get("expect", {}))
        for key, kind in REGISTRY_TYPES.items():
            if key in e and not kind(e[key]):
                raise ExpectationError("expect.%s: %r is not %s" % (
                    key, e[key], REGISTRY_WORDS[kind]))
        unknown = set(e) - set(REGISTRY_TYPES)
        if unknown:
            raise ExpectationError("unknown expect.%s" % ", expect.".join(sorted(unknown)))
        channels = e.get("channels", Binding.channels)
        base = cls()
        return cls(
            binding=dataclasses.replace(base.binding, channels=None
                                        if channels is not None and channels < 0
                                        else channels),
            ktap=KtapResults(min_ops=e.get("min_ops", 0),
                             allow_skip=tuple(e.get("allow_skip", ()))),
            counters=DeviceCounters(
                min_descriptors=e.get("min_device_descriptors", 0),
                min_bytes=e.get("min_device_bytes", 0),
                errors=DeviceErrors.parse(str(e.get("device_errors", 0))),
                vtd=tuple(VtdCondition.parse(t) for t in e.get("vtd", ())),
                ioat=tuple(VtdCondition.parse(t) for t in e.get("ioat", ())),
                dsa=tuple(VtdCondition.parse(t) for t in e.get("dsa", ()))),
            log=LogLines(lines=tuple(e.get("lines", ())),
                         allow=tuple(entry.get("allow", ())),
                         irqs=tuple(e.get("irq", ()))),
            races=RaceReports(patterns=tuple(e.get("races", ())),
                              count=e.get("race_count")))


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _strings(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _errors(v):
    return _int(v) or isinstance(v, str)


# The registry's expect fields and what each must hold.
REGISTRY_TYPES = {"channels": _int, "min_ops": _int, "min_device_descriptors": _int,
                  "min_device_bytes": _int, "device_errors": _errors, "irq": _strings,
                  "lines": _strings, "vtd": _strings, "ioat": _strings, "dsa": _strings,
                  "races": _strings,
                  "race_count": _int, "allow_skip": _strings}
REGISTRY_WORDS = {_int: "a whole number", _strings: "a list of strings",
                  _errors: 'N or "N+"'}
