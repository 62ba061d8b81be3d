"""Unique, time-ordered 64-bit IDs: the ring of Baidu UidGenerator's CachedUidGenerator, in Rust.

    import ringflake
    with ringflake.Generator(database="ringflake.db") as gen:
        i = gen.next_id()            # an int
        batch = gen.next_ids(1000)   # a list of ints, strictly increasing
        p = ringflake.parse(i)       # timestamp (datetime, UTC), worker_id, sequence

An ID is [sign 1][time][worker id][sequence]; the worker id comes from a WORKER_NODE table (a
SQLite file, MariaDB/MySQL or PostgreSQL, shared with ringflake services and Java UidGenerator
nodes) or is given. After os.fork(), a child takes a worker id of its own from the table (or
raises ForkError for a fixed worker_id): it never hands out its parent's IDs.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, NamedTuple, Optional, Tuple, Union

from . import _ringflake
from ._ringflake import (
    ClosedError,
    Error,
    ForkError,
    InvalidArgument,
    WorkerIdError,
)

__all__ = [
    "ClosedError",
    "Error",
    "ForkError",
    "Generator",
    "InvalidArgument",
    "Layout",
    "ParsedId",
    "PRESET_NAMES",
    "Stats",
    "WorkerIdError",
    "layout",
    "parse",
    "parse_uid",
]

PRESET_NAMES: Tuple[str, ...] = tuple(_ringflake.PRESET_NAMES)
"""The layouts ``preset=`` names: default, twitter, leaf, discord, instagram, sonyflake, ..."""

_UTC = _dt.timezone.utc
_UNIX = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


class Layout(NamedTuple):
    """How an ID's 63 bits are split: ``[time][worker id][sequence]`` from an epoch."""

    time_bits: int
    worker_bits: int
    seq_bits: int
    epoch: _dt.datetime
    """Where time 0 is (UTC)."""
    tick: str
    """The time unit: ``"s"``, ``"10ms"`` or ``"ms"``."""
    sequence_above_worker: bool
    """Sonyflake's order (sequence above the worker id) rather than UidGenerator's."""
    preset: Optional[str]
    """The preset's name, if the layout is one."""
    max_worker_id: int
    last_valid: _dt.datetime
    """The last second the time bits can hold (UTC)."""

    @classmethod
    def _of(cls, t: Tuple[Any, ...]) -> "Layout":
        tick = {1000: "s", 10: "10ms", 1: "ms"}[t[4]]
        return cls(
            t[0],
            t[1],
            t[2],
            _UNIX + _dt.timedelta(milliseconds=t[3]),
            tick,
            t[5],
            t[6],
            t[7],
            _UNIX + _dt.timedelta(seconds=t[8]),
        )

    def _native(self) -> Tuple[int, int, int, int, int, bool]:
        millis = (self.epoch - _UNIX) // _dt.timedelta(milliseconds=1)
        tick = {"s": 1000, "10ms": 10, "ms": 1}[self.tick]
        return (self.time_bits, self.worker_bits, self.seq_bits, millis, tick,
                self.sequence_above_worker)


class ParsedId(NamedTuple):
    """An ID taken apart: when it was made, by which worker, its sequence."""

    id: int
    timestamp: _dt.datetime
    """The ID's time (UTC), to its layout's tick."""
    worker_id: int
    sequence: int


class Stats(NamedTuple):
    """A generator's counters and health, the fields ``ringflake serve``'s /healthz and /metrics
    report."""

    health: str
    """``serving``, ``idle``, ``held at the lead cap``, ``lease at risk`` or ``unavailable``."""
    worker_id: int
    capacity: int
    available: int
    issued: int
    discarded: int
    expired: int
    paddings: int
    take_waits: int
    lead_seconds: int
    lag_seconds: int
    remaining_seconds: int
    heals: int
    filler_up: bool
    lease_until: Optional[int]
    lease_lost: bool
    clock_second: int
    max_lag_seconds: int
    max_lead_seconds: Optional[int]
    state_file_failing: bool


_Epoch = Union[int, str, None]


def layout(
    *,
    preset: Optional[str] = None,
    bits: Optional[Tuple[int, int, int]] = None,
    epoch: _Epoch = None,
    tick: Optional[str] = None,
) -> Layout:
    """The layout these keywords describe (as ``Generator`` takes them); with none, ringflake's
    default: 31 time bits, 10 worker bits, 22 sequence bits, seconds from 2025-01-01 UTC."""
    return Layout._of(_ringflake._layout(preset=preset, bits=bits, epoch=epoch, tick=tick))


_DEFAULT_LAYOUT = layout()


def _parsed(t: Tuple[int, int, int, int]) -> ParsedId:
    return ParsedId(t[0], _UNIX + _dt.timedelta(milliseconds=t[1]), t[2], t[3])


def parse(id: int, layout: Optional[Layout] = None) -> ParsedId:
    """Takes ``id`` apart under ``layout`` (ringflake's default layout when None).

    Raises InvalidArgument for an ID the layout cannot have made (negative, or a field past its
    range)."""
    return _parsed(_ringflake._parse((layout or _DEFAULT_LAYOUT)._native(), id))


def parse_uid(id: int, layout: Optional[Layout] = None, tz: Optional[str] = None) -> str:
    """UidGenerator's ``parseUID`` JSON string, for IDs shared with Java nodes:
    ``{"UID":"...","timestamp":"yyyy-MM-dd HH:mm:ss","workerId":"...","sequence":"..."}``, the
    timestamp in ``tz`` (an IANA name), or in the process's local time zone as Java's is."""
    return _ringflake._parse_uid((layout or _DEFAULT_LAYOUT)._native(), id, tz)


class Generator(_ringflake.Generator):
    __doc__ = _ringflake.Generator.__doc__

    def __enter__(self) -> "Generator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def layout(self) -> Layout:
        """The layout this generator makes IDs with."""
        return Layout._of(self._layout())

    def parse(self, id: int) -> ParsedId:
        """Takes ``id`` apart under this generator's layout."""
        return _parsed(_ringflake._parse(self._layout()[:6], id))

    def parse_uid(self, id: int, tz: Optional[str] = None) -> str:
        """UidGenerator's ``parseUID`` JSON string for ``id`` under this generator's layout."""
        return _ringflake._parse_uid(self._layout()[:6], id, tz)

    def stats(self) -> Stats:
        """The generator's counters and health now."""
        return Stats(**self._stats())

