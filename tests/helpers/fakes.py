"""Fakes of a build's parts, each written against its interface alone (tests/test_seams.py).

``MemorySource`` is a ``LogSource`` whose logs are bytes in memory; ``RecordingMapper`` is a
``Mapper`` that maps in this process, one log after another, and records what it was asked;
``use_mapper`` makes the builds of a test take it where ``compose`` would choose theirs.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Generator, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import pytest

from sitegen.builder.map.jobs import part_dir, process_log

if TYPE_CHECKING:
    from sitegen.builder.map.context import MapContext
    from sitegen.builder.map.jobs import OnResult, Progress
    from sitegen.builder.map.mapper import Mapper, Uploads
    from sitegen.diagnose.recurring import RunContext
    from sitegen.eventlog.logfiles import LogList
    from sitegen.eventlog.sources import LogSink, LogSource

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class MemoryLog:
    """One log of a ``MemorySource`` (a ``LogObject``): its bytes, read from the source."""

    source: MemorySource
    name: str

    def __str__(self) -> str:
        return f"{self.source}{self.name}"

    @property
    def suffix(self) -> str:
        """Return the name's last suffix (``.gz``), as ``Path.suffix``."""
        stem, dot, ext = self.name.rpartition(".")
        return f".{ext}" if dot and stem else ""

    def size(self) -> int:
        """Return the log's size; FileNotFoundError when it is gone."""
        return len(self.read_bytes())

    def open(self) -> IO[bytes]:
        """Open the log as a stream of its bytes."""
        return io.BytesIO(self.read_bytes())

    def read_bytes(self) -> bytes:
        """Return the whole log, counting the read."""
        data = self.source.logs.get(self.name)
        if data is None:
            raise FileNotFoundError(2, "no such log", str(self))
        self.source.reads[self.name] = self.source.reads.get(self.name, 0) + 1
        return data[0]


class MemorySource:
    """A dir of event logs held in memory: name -> (bytes, modification time in ns).

    Polled (it raises no file events: ``event_dirs`` is empty), not local, and its listing carries each log's numbers,
    so no name is trusted: a log rewritten in place is seen. ``reads`` counts each log's reads.
    """

    trust_names = False
    local: Path | None = None

    def event_dirs(self) -> list[Path]:
        """Return none: it raises no file events, so a watcher lists it every poll."""
        return []

    def log_named(self, path: str) -> str | None:
        """Return None: no event names one of its logs."""
        return None

    def holds(self, path: Path) -> bool:
        """Return False: no path on this machine is in memory."""
        return False

    def within(self, path: Path) -> bool:
        """Return False: memory is inside no path on this machine."""
        return False

    def __init__(self, label: str, logs: Mapping[str, tuple[bytes, int]] | None = None) -> None:
        self.label = label
        self.logs: dict[str, tuple[bytes, int]] = dict(logs or {})
        self.reads: dict[str, int] = {}
        self.listed: list[str] = []  # the last listing's names

    def __str__(self) -> str:
        return f"memory://{self.label}/"

    def __repr__(self) -> str:
        return f"MemorySource({self.label!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemorySource):
            return NotImplemented
        return self.label == other.label

    def __hash__(self) -> int:
        return hash(self.label)

    def put(self, name: str, data: bytes, mtime_ns: int) -> None:
        """Add or replace a log."""
        self.logs[name] = (data, mtime_ns)

    @property
    def name(self) -> str:
        """Return the label: the dir's last segment."""
        return self.label

    def resolve(self) -> MemorySource:
        """Return itself: memory has no links."""
        return self

    def with_options(self, storage_options: dict[str, Any] | None) -> MemorySource:
        """Return itself: it takes no storage options."""
        return self

    def verified(self) -> MemorySource:
        """Return itself: it trusts no name already."""
        return self

    def place(self) -> Hashable:
        """Return the label: one label, one dir."""
        return ("memory", self.label)

    def check(self) -> None:
        """Accept: memory is always there."""

    def _numbers(self, name: str) -> tuple[int, int] | None:
        """Return a log's (size, time), or None when it is gone."""
        found = self.logs.get(name)
        return None if found is None else (len(found[0]), found[1])

    def add_listed(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> None:
        """Add each listed log of ``names`` to ``found``."""
        self.add_named(found, names, label, roots, follow_links)

    def add_named(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> bool:
        """Add each named log to ``found``; False when one is gone."""
        for name in names:
            numbers = self._numbers(name)
            if numbers is None:
                return False
            found.add_plain(name, f"{label}{name}", *numbers)
        return True

    def stamp(self) -> None:
        """Return None: its listing is its only stamp."""
        return None

    def listing_id(self) -> bytes:
        """Return the label and each listed log's numbers."""
        numbers = sorted((name, self._numbers(name)) for name in self.listed)
        return hashlib.sha256(repr((self.label, numbers)).encode()).digest()

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Return each log's numbers now."""
        return {name: (len(data), mtime) for name, (data, mtime) in self.logs.items()}

    def list(self) -> list[str]:
        """Return the logs' names, in no particular order (as a store lists them)."""
        self.listed = sorted(self.logs, reverse=True)
        return list(self.listed)

    def __truediv__(self, name: str) -> MemoryLog:
        return MemoryLog(self, name)


def memory_copy(logs: Path, label: str = "logs") -> MemorySource:
    """Return a ``MemorySource`` holding the files of ``logs``, with their modification times."""
    found = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in logs.iterdir() if p.is_file()}
    return MemorySource(label, found)


@dataclass
class RecordingMapper:
    """A ``Mapper`` that maps in this process, log by log, and records what it is asked."""

    prepared: list[bool] = field(default_factory=list)  # each ``prepare``'s maps_every_log
    mapped: list[list[str]] = field(default_factory=list)  # each ``map``'s log keys, in order
    each_calls: list[tuple[str, int]] = field(default_factory=list)  # (function, items)
    rests: int = 0
    closes: int = 0

    def prepare(self, maps_every_log: bool) -> None:
        """Record it: nothing to start."""
        self.prepared.append(maps_every_log)

    def map(
        self,
        logs: LogList,
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        on_result: OnResult,
        progress: Progress | None = None,
        contexts: Mapping[int, RunContext] | None = None,
        uploads: Uploads | None = None,
    ) -> None:
        """Map each log at ``which`` here, in order, handing its outcome on (no uploads)."""
        self.mapped.append([logs[n].key for n in which])
        for n in which:
            context = None if contexts is None else contexts.get(n)
            outcome, parted = process_log(
                logs[n], staging, part_dir(staging, n), map_context, context
            )
            on_result(n, outcome, parted)
            if progress is not None:
                progress.advance()

    def each(
        self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], alone_below: int = 0
    ) -> Generator[R]:
        """Yield ``fn(shared, item)`` for each item, here."""
        self.each_calls.append((getattr(fn, "__name__", repr(fn)), len(items)))
        for item in items:
            yield fn(shared, item)

    def rest(self) -> None:
        """Record it."""
        self.rests += 1

    def close(self) -> None:
        """Record it."""
        self.closes += 1


def use_mapper(monkeypatch: pytest.MonkeyPatch, mapper: Mapper) -> None:
    """Make every build of the test map with ``mapper``, its publish target chosen as usual."""
    from sitegen.builder import compose, pipeline

    def composed(options: Any) -> compose.Parts:
        return replace(compose.compose(options), mapper=mapper)

    monkeypatch.setattr(pipeline, "compose", composed)


if TYPE_CHECKING:

    def _fakes_fit() -> tuple[LogSource, Mapper]:
        """Let mypy check each fake against the interface it stands in for."""
        return MemorySource("x"), RecordingMapper()
