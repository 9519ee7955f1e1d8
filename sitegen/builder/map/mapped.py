"""What a build keeps of each log it mapped, in columns by the log's position.

A full build maps every log and keeps this of each until it publishes: as a dict of
tuples it was about 270 bytes a log (27 MB of the main process at 100,000 logs); in
columns it is 22 bytes, and the job id only where the log's file name gives another.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from sitegen.builder.state.records import LogOutcome
    from sitegen.eventlog.logfiles import LogList

# Each position's flags: an entry is held; it was written into its part directory; its
# job id is the one its log's file name gives (not kept a second time).
_HELD, _PARTED, _NAMED = 1, 2, 4
_ANY_ENTRY = bytes([0] + [_HELD] * 255)  # every nonzero flag byte, as _HELD


class Pick(NamedTuple):
    """What a build keeps of a completed log it mapped: where its name's and day's pages are."""

    job_id: str
    job_name: str
    start_time: int

    @classmethod
    def of(cls, outcome: LogOutcome) -> Pick | None:
        """Return the pick of a fresh outcome (None when it is not a completed job)."""
        s = outcome.summary
        return None if s is None else cls(s.job_id, s.job_name, s.start_time)


class Fresh(NamedTuple):
    """What the build keeps of a log it mapped (its outcome went into the state)."""

    # The job's id, name and start (an incremental build's; a full build touches every name).
    pick: Pick | None
    # The job whose directories the log's files are in (None: it wrote none). Its
    # directories are made from it when moved (jobs.job_roots), not kept as a list.
    job_id: str | None
    files: int
    bytes: int
    # Written into its part directory: another log had claimed the job's directories.
    parted: bool


class FreshLogs(MutableMapping[int, Fresh]):
    """The ``Fresh`` entries of the logs a build mapped, by position; iterated in order."""

    def __init__(self, logs: LogList) -> None:
        count = len(logs)
        self._logs = logs
        self._flags = bytearray(count)
        self._files = array("i", [0]) * count
        self._bytes = array("q", [0]) * count
        self._job_ids: list[str | None] = [None] * count  # those not their log's name id
        self._picks: dict[int, Pick] = {}  # the few an incremental build maps
        self._len = 0

    def __getitem__(self, n: int) -> Fresh:
        if n not in self:
            raise KeyError(n)
        flags = self._flags[n]
        job_id = self._logs.name_id(n) if flags & _NAMED else self._job_ids[n]
        parted = bool(flags & _PARTED)
        return Fresh(self._picks.get(n), job_id, self._files[n], self._bytes[n], parted)

    def has_job(self, n: int) -> bool:
        """Tell whether the ``n``-th log's entry names a job, without making its ``Fresh``."""
        if n not in self:
            raise KeyError(n)
        return bool(self._flags[n] & _NAMED) or self._job_ids[n] is not None

    def __setitem__(self, n: int, entry: Fresh) -> None:
        if n not in self:
            self._len += 1
        named = entry.job_id is not None and entry.job_id == self._logs.name_id(n)
        self._flags[n] = _HELD | (_PARTED if entry.parted else 0) | (_NAMED if named else 0)
        self._job_ids[n] = None if named else entry.job_id
        self._files[n] = entry.files
        self._bytes[n] = entry.bytes
        if entry.pick is not None:
            self._picks[n] = entry.pick
        else:
            self._picks.pop(n, None)

    def __delitem__(self, n: int) -> None:
        if n not in self:
            raise KeyError(n)
        self._flags[n] = 0
        self._job_ids[n] = None
        self._picks.pop(n, None)
        self._len -= 1

    def __contains__(self, n: object) -> bool:
        return isinstance(n, int) and 0 <= n < len(self._flags) and self._flags[n] != 0

    def __iter__(self) -> Iterator[int]:
        # find() in C, not a test of every position: an incremental build maps a few logs.
        held = self._flags.translate(_ANY_ENTRY)
        n = held.find(_HELD)
        while n >= 0:
            yield n
            n = held.find(_HELD, n + 1)

    def __len__(self) -> int:
        return self._len
