"""A log file as a build sees it, and every log of a build held in columns."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import msgspec

from sitegen.eventlog.sources import LogPath, LogSource

# Newer schedulers write `<id>.eventlog.running` while a job runs (Ballista #2405).
# Operators and CI compress finished logs; those are streamed, never unpacked (reader.open_log).
SUFFIXES = (".eventlog", ".eventlog.running", ".eventlog.gz", ".eventlog.zst")


class LogFile(msgspec.Struct, frozen=True, gc=False):
    """One candidate log: where it is and the job id its name suggests."""

    directory: LogSource
    name: str
    name_id: str
    running: bool
    size: int
    mtime_ns: int
    # How reports and the manifest name the log: the file name, prefixed with its
    # directory's name when several event-log dirs are read.
    key: str = ""
    # Why the log is not read at all (a FIFO, a link out of the log dirs: see filekind).
    skip: str = ""
    # Its SHA-256 (hex) where a peek of this build hashed it already ("": not known).
    sha256: str = ""

    @property
    def path(self) -> LogPath:
        """Return the log's path (made on demand: most logs of a build are never opened)."""
        return self.directory / self.name


RUNNING = ".eventlog.running"
# A SHA-256's bytes, and the digest of a log not hashed (``LogList.note_digest``).
_DIGEST = 32
_NO_DIGEST = bytes(_DIGEST)


def label_of(key: str) -> str:
    """Return the key prefix of a log's dir: ``""`` for one dir, else its label and a slash."""
    # A file name holds no slash; a dir's label (discover.key_prefixes) ends with one.
    return key[: key.rfind("/") + 1]


def scheduler_of(scheduler_id: str | None, log: LogFile) -> str:
    """Return the scheduler a log's job ran on: its ``scheduler_id``, else the dir it came from.

    Ballista writes ``scheduler_id`` on JobStart only from PR #2462 on; before it, a site
    built from several log dirs (one per scheduler) tells them apart by the dir's label,
    the prefix of the log's key, which names the dir as the build's keys do.
    """
    if scheduler_id is not None:
        return scheduler_id
    label = label_of(log.key)
    return label[:-1] if label else log.directory.name


def split_name(name: str) -> tuple[str, bool] | None:
    """Return (job id from the file name, running?) for a log file name, else None."""
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix.endswith(".running")
    return None


class LogList(Sequence[LogFile]):
    """Every log of a build in order, in columns; a ``LogFile`` is made when one is asked for.

    A list of ``LogFile`` cost 275 bytes a log (27 MB at 100,000 logs, held through the whole
    build); here a log is its key and name (one string in one dir), and 16 bytes of numbers.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.names: list[str] = []  # the same strings as ``keys`` while no dir has a label
        self.sizes = array("q")
        self.times = array("q")  # modification times, in nanoseconds
        self._dirs: list[LogSource] = []
        self._starts: list[int] = []  # each dir's first position
        self._odd: dict[int, LogFile] = {}  # skipped, or named otherwise than by their file
        # Positions by key when some dir's keys are out of order ({}: none is), and each dir's
        # span of positions: made at the first search, after the logs are all added.
        self._where: dict[str, int] | None = None
        self._spans: list[tuple[int, int]] = []
        # Each log's SHA-256 once a peek hashed it, 32 bytes a log (zeros: not known), made
        # at the first: the map step, in whichever process, need not hash the log again.
        self._digests: bytearray | None = None

    @classmethod
    def of(cls, logs: Iterable[LogFile]) -> LogList:
        """Return the logs in columns, in the order given."""
        found = cls()
        for log in logs:
            found.add(log)
        return found

    def start_dir(self, directory: LogSource) -> None:
        """Begin the logs of ``directory`` (each dir's logs follow one another)."""
        self._dirs.append(directory)
        self._starts.append(len(self.keys))

    def add_plain(self, name: str, key: str, size: int, mtime_ns: int) -> None:
        """Append a log of the current dir whose id and state its name tells (split_name)."""
        self.keys.append(key)
        self.names.append(name)
        self.sizes.append(size)
        self.times.append(mtime_ns)
        self._where = None

    def add_skipped(self, name: str, key: str, size: int, mtime_ns: int, skip: str) -> None:
        """Append a log of the current dir that is not read, with why (``skip``; may be empty)."""
        parsed = split_name(name)
        assert parsed is not None  # only log names are listed
        self.add(LogFile(self._dirs[-1], name, *parsed, size, mtime_ns, key, skip))

    def add_columns(
        self,
        directory: LogSource,
        names: list[str],
        keys: list[str],
        sizes: array[int],
        times: array[int],
    ) -> None:
        """Append a dir's plain logs whole, from their columns (``keys`` may be ``names``)."""
        self.start_dir(directory)
        self.keys += keys
        self.names += names
        self.sizes += sizes
        self.times += times
        self._where = None

    def add(self, log: LogFile) -> None:
        """Append any log (of the current dir, or a dir of its own)."""
        if not self._dirs or self._dirs[-1] != log.directory:
            self.start_dir(log.directory)
        if log.skip or split_name(log.name) != (log.name_id, log.running) or not log.key:
            self._odd[len(self.keys)] = log
        self.add_plain(log.name, log.key, log.size, log.mtime_ns)

    def replace(self, n: int, log: LogFile) -> None:
        """Put ``log`` at position ``n`` (its key may differ: an undecodable name's)."""
        self._odd[n] = log
        self.keys[n] = log.key
        self.sizes[n] = log.size
        self.times[n] = log.mtime_ns
        self._where = None
        self.note_digest(n, "")

    def note_digest(self, n: int, sha256: str) -> None:
        """Note the ``n``-th log's SHA-256 as a peek found it ("": forget it)."""
        found = self._digests
        if found is None:
            if not sha256:
                return
            found = self._digests = bytearray()
        at = n * _DIGEST
        if len(found) < at + _DIGEST:  # logs were added since it was made
            found += bytes(_DIGEST * len(self.keys) - len(found))
        found[at : at + _DIGEST] = bytes.fromhex(sha256) if sha256 else _NO_DIGEST

    def _digest(self, n: int) -> str:
        """Return the ``n``-th log's SHA-256 if a peek noted it, else ""."""
        found = self._digests
        if found is None or len(found) < (n + 1) * _DIGEST:
            return ""
        digest = found[n * _DIGEST : (n + 1) * _DIGEST]
        return "" if digest == _NO_DIGEST else digest.hex()

    def extend(self, other: LogList) -> None:
        """Append the logs of ``other``."""
        offset = len(self.keys)
        self._dirs += other._dirs
        self._starts += [start + offset for start in other._starts]
        self.keys += other.keys
        self.names += other.names
        self.sizes += other.sizes
        self.times += other.times
        self._odd.update((n + offset, log) for n, log in other._odd.items())
        self._where = None
        if other._digests is not None:
            for n in range(len(other.keys)):
                self.note_digest(offset + n, other._digest(n))

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, n: int) -> LogFile: ...

    @overload
    def __getitem__(self, n: slice) -> list[LogFile]: ...

    def __getitem__(self, n: int | slice) -> LogFile | list[LogFile]:
        if isinstance(n, slice):
            return [self[i] for i in range(*n.indices(len(self)))]
        if n < 0:
            n += len(self.keys)
        if not 0 <= n < len(self.keys):
            raise IndexError(n)
        odd = self._odd.get(n)
        digest = self._digest(n)
        if odd is not None:
            return msgspec.structs.replace(odd, sha256=digest) if digest else odd
        name = self.names[n]
        parsed = split_name(name)
        assert parsed is not None  # only log names are listed
        directory = self._dirs[bisect_left(self._starts, n + 1) - 1]
        key = self.keys[n]
        return LogFile(directory, name, *parsed, self.sizes[n], self.times[n], key, "", digest)

    def __iter__(self) -> Iterator[LogFile]:
        return (self[n] for n in range(len(self.keys)))

    def name_id(self, n: int) -> str:
        """Return the job id the ``n``-th log's name gives, without making its ``LogFile``."""
        odd = self._odd.get(n)
        if odd is not None:
            return odd.name_id
        parsed = split_name(self.names[n])
        assert parsed is not None  # only log names are listed
        return parsed[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def running_dirs(self) -> set[str]:
        """Return the key prefixes (``label_of``) of the dirs that list a ``.running`` log.

        Only a scheduler that names logs the Ballista #2405 way writes such a name.
        """
        found: set[str] = set()
        ends = [*self._starts[1:], len(self.keys)]
        for start, end in zip(self._starts, ends, strict=True):
            if start == end:
                continue
            # One join and one search in C: a test of each name cost 5 ms a 100,000.
            names = "\0".join(self.names[start:end]) + "\0"
            if f"{RUNNING}\0" in names:
                found.add(label_of(self.keys[start]))
        return found

    def position(self, key: str) -> int:
        """Return where the log of ``key`` is; KeyError when no log has it."""
        if self._where is None:
            ends = [*self._starts[1:], len(self.keys)] if self._starts else []
            self._spans = list(zip(self._starts, ends, strict=True))
            # Each dir's keys sorted (as discover lists them): searched in place, no dict.
            ordered = all(self.keys[s:e] == sorted(self.keys[s:e]) for s, e in self._spans)
            self._where = {} if ordered else {k: n for n, k in enumerate(self.keys)}
        if self._where:
            return self._where[key]
        for start, end in self._spans:
            n = bisect_left(self.keys, key, start, end)
            if n < end and self.keys[n] == key:
                return n
        raise KeyError(key)


class LogsAt(Sequence[LogFile]):
    """The logs of a ``LogList`` at some positions, each ``LogFile`` made when asked for."""

    def __init__(self, logs: LogList, which: Sequence[int]) -> None:
        self.logs = logs
        self.which = which

    def __len__(self) -> int:
        return len(self.which)

    @overload
    def __getitem__(self, n: int) -> LogFile: ...

    @overload
    def __getitem__(self, n: slice) -> list[LogFile]: ...

    def __getitem__(self, n: int | slice) -> LogFile | list[LogFile]:
        if isinstance(n, slice):
            return [self.logs[i] for i in self.which[n]]
        return self.logs[self.which[n]]
