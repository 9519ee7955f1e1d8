"""Where logs come from: one interface, whatever holds them.

A ``LogSource`` is a directory of event logs: a local one (``localdir``) or a prefix in object
storage (``storage``); ``discover.log_source`` makes the right one from a path or a URL.
Everything a build, a check or the watcher asks of the place its logs are in is a method
here, so a new kind of place is one new class, not a branch in each module that reads logs.
One log of a local dir is a ``Path``, one log elsewhere a ``LogObject``; the functions at the
bottom read either.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from sitegen.eventlog.filekind import open_regular, open_regular_sized, read_regular


class SourceReadError(OSError):
    """A log of a remote source could not be fetched (the store erred, retries spent).

    Not the log's fault: a build leaves such a log out, names it, and reads it again next
    time, never recording it as unreadable (``builder.map.jobs.read_and_analyse``).
    """


class LogSink(Protocol):
    """What a source adds its logs to (``logfiles.LogList``), after ``start_dir``."""

    def add_plain(self, name: str, key: str, size: int, mtime_ns: int) -> None:
        """Add a log whose id and state its name tells."""

    def add_skipped(self, name: str, key: str, size: int, mtime_ns: int, skip: str) -> None:
        """Add a log that is not read, with why (``skip``; empty: it is read after all)."""


class LogObject(Protocol):
    """One log of a source that is not a local directory (an object of a prefix in storage)."""

    @property
    def name(self) -> str:
        """Return the log's file name."""

    @property
    def suffix(self) -> str:
        """Return the name's last suffix (``.gz``), as ``Path.suffix``."""

    def size(self) -> int:
        """Return the log's size in bytes; FileNotFoundError when it is gone."""

    def open(self) -> IO[bytes]:
        """Open the log for streaming its bytes (a failed fetch raises ``SourceReadError``)."""

    def read_bytes(self) -> bytes:
        """Return the whole log (a failed fetch raises ``SourceReadError``)."""


# One log's path: a file of a local dir, or a log of another source.
LogPath = Path | LogObject


class LogSource(Protocol):
    """A directory of event logs: listed, its logs stat-ed and opened, watched or polled.

    ``str()`` of a source is how messages name it (never a credential); sources are equal
    when they name one place, and are sent to worker processes (pickled) without their
    listing.
    """

    @property
    def name(self) -> str:
        """Return the dir's last segment (of ``resolve()``: the label of its logs' keys)."""

    @property
    def local(self) -> Path | None:
        """Return the directory on this machine; None: not a local directory.

        Read within ``eventlog`` alone (links, notes): the build asks what a dir does.
        """

    @property
    def trust_names(self) -> bool:
        """Tell whether a build may take a finished log's numbers from the state by its name.

        False where the listing carries each log's numbers already (an object store's sizes
        and ETags): comparing them costs nothing more and sees a log rewritten in place.
        """

    def event_dirs(self) -> list[Path]:
        """Return the directories whose file events tell of this dir's logs.

        Empty: it raises none, and a watcher lists it (``snapshot``) every poll instead.
        """

    def log_named(self, path: str) -> str | None:
        """Return the name of this dir's log that a file event's ``path`` names.

        None: ``path`` is no log of this dir (the dir itself, a file deeper down, elsewhere),
        or this dir's events name no log by its path (it is listed instead).
        """

    def holds(self, path: Path) -> bool:
        """Tell whether ``path`` is this dir or inside it: writing there could touch its logs."""

    def within(self, path: Path) -> bool:
        """Tell whether this dir is inside ``path``: replacing ``path`` would take its logs."""

    def resolve(self) -> LogSource:
        """Return the same dir named without links (itself where there are none)."""

    def with_options(self, storage_options: dict[str, Any] | None) -> LogSource:
        """Return this source with ``storage_options`` where it has none (if it takes any)."""

    def verified(self) -> LogSource:
        """Return this source with no name trusted: every build compares every log's numbers."""

    def place(self) -> Hashable | None:
        """Return what tells one dir from another however it is named; None: unknown yet."""

    def check(self) -> None:
        """Refuse (UsageError) a dir that is missing, not a directory, or not readable."""

    def add_listed(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> None:
        """Add every log of ``names`` (sorted log names of the last listing) to ``found``.

        ``label`` prefixes each key; ``roots`` are the real paths of the local log dirs,
        which links may lead into unless ``follow_links`` (see ``filekind``).
        """

    def add_named(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> bool:
        """Add the logs of a few ``names`` to ``found``, each stat-ed; False if one is gone."""

    def stamp(self) -> list[int] | None:
        """Return the dir's device, inode and modification time; None: it has none."""

    def listing_id(self) -> bytes:
        """Return what identifies the dir and its last listing beside the names listed."""

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """List the dir afresh (not the build's listing): each name's size and time."""

    def list(self) -> list[str]:
        """Return the dir's file names as listed (not sorted); UsageError when it cannot."""

    def __truediv__(self, name: str) -> LogPath:
        """Return the path of the log called ``name`` in this dir."""


def names_trusted(log_dirs: Sequence[LogSource]) -> bool:
    """Tell whether a build may learn what changed from the names listed alone (all trusted)."""
    return all(log_dir.trust_names for log_dir in log_dirs)


def as_log_path(given: str | os.PathLike[str] | LogObject) -> LogPath:
    """Return a log's path: a local file's as a ``Path``, another source's log as it is."""
    return Path(given) if isinstance(given, str | os.PathLike) else given


def open_source(path: str | os.PathLike[str] | LogObject) -> IO[bytes]:
    """Open a log for reading: a local regular file (filekind's rule), or streamed."""
    if isinstance(path, str | os.PathLike):
        return open_regular(path)
    return path.open()


def open_sized(path: str | os.PathLike[str] | LogObject) -> tuple[IO[bytes], int]:
    """Open a log for reading and return its size: a local file only if it is regular."""
    if isinstance(path, str | os.PathLike):
        return open_regular_sized(path)  # refused before its size is looked at
    size = path.size()
    return path.open(), size


def source_size(path: str | os.PathLike[str] | LogObject) -> int:
    """Return a log's size in bytes, local or not."""
    if isinstance(path, str | os.PathLike):
        return os.stat(path).st_size
    return path.size()


def read_source(path: str | os.PathLike[str] | LogObject) -> bytes:
    """Return a log's bytes: a local regular file's (filekind's rule), or in one request."""
    if isinstance(path, str | os.PathLike):
        return read_regular(path)
    return path.read_bytes()
