"""A directory of event logs on this machine: the ``LogSource`` of a path.

It is listed with ``os.listdir`` and each log stat-ed relative to an open descriptor of the
directory (past ``PARALLEL_STAT`` logs half of them in a forked child); it raises file events
(a watcher watches it with inotify, or polls it on NFS), and has a device, inode and
modification time that tell a later build whether it changed at all.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sitegen.errors import UsageError
from sitegen.eventlog.filekind import skip_reason
from sitegen.eventlog.logfiles import split_name
from sitegen.eventlog.sources import LogSink


class LocalDir:
    """A local directory of event logs (see ``sources.LogSource``)."""

    __slots__ = ("path", "trust_names")

    def __init__(self, path: str | os.PathLike[str], trust_names: bool = True) -> None:
        self.path = Path(path)
        # Ballista renames a log into place when its job ends: a name listed again is that
        # log. ``--verify-logs`` makes a dir that stats every log instead (``verified``).
        self.trust_names = trust_names

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"LocalDir({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalDir):
            return NotImplemented
        return self.path == other.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __reduce__(self) -> tuple[type[LocalDir], tuple[str, bool]]:
        # Sent to workers with each log: as its path's text (a Path pickles as its parts).
        return LocalDir, (str(self.path), self.trust_names)

    @property
    def name(self) -> str:
        """Return the directory's last segment."""
        return self.path.name

    @property
    def local(self) -> Path:
        """Return the directory."""
        return self.path

    def event_dirs(self) -> list[Path]:
        """Return the directory: inotify sees its changes (the watcher polls it with --poll)."""
        return [self.path]

    def log_named(self, path: str) -> str | None:
        """Return the file name of ``path`` if its parent is this directory (as given, or real)."""
        parent, name = os.path.split(os.path.normpath(path))
        if not name or parent not in (os.path.normpath(self.path), os.path.realpath(self.path)):
            return None
        return name

    def holds(self, path: Path) -> bool:
        """Tell whether ``path`` (links resolved) is this directory or inside it."""
        return path.resolve().is_relative_to(self.path.resolve())

    def within(self, path: Path) -> bool:
        """Tell whether this directory (links resolved) is inside ``path``."""
        return self.path.resolve().is_relative_to(path.resolve())

    def resolve(self) -> LocalDir:
        """Return the directory with links resolved."""
        return LocalDir(self.path.resolve(), self.trust_names)

    def verified(self) -> LocalDir:
        """Return this directory, its finished logs stat-ed on every build (not trusted)."""
        return LocalDir(self.path, trust_names=False)

    def with_options(self, storage_options: dict[str, Any] | None) -> LocalDir:
        """Return itself: a local directory takes no storage options."""
        return self

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def place(self) -> tuple[int, int] | None:
        """Return the directory's device and inode (links, ``./logs/``: one place); None: gone."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None  # missing or unreadable: reading it says why
        return st.st_dev, st.st_ino

    def check(self) -> None:
        """Refuse an event-log dir that is missing, not a directory, or not readable."""
        log_dir = self.path
        try:
            st = os.stat(log_dir)
        except FileNotFoundError:
            raise UsageError("event-log dir does not exist", log_dir) from None
        except OSError as exc:  # a parent that cannot be searched, a loop of links
            raise UsageError(f"event-log dir cannot be read: {exc.strerror}", log_dir) from None
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError("event-log dir is not a directory", log_dir)
        if not os.access(log_dir, os.R_OK | os.X_OK):
            raise UsageError("event-log dir is not readable", log_dir)

    def add_listed(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> None:
        """Add each named log to ``found``, one ``lstat`` each relative to the open dir."""
        log_dir = self.path
        try:
            fd = os.open(log_dir, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise UsageError(f"cannot read event-log dir: {exc.strerror}", log_dir) from exc
        try:
            # Past PARALLEL_STAT logs a forked child stats the second half meanwhile: one lstat
            # costs 5-6 us on a VM (0.6 s for 100,000 logs, most of a no-op build's time).
            cut = len(names) // 2 if _may_fork(len(names)) else len(names)
            child = None
            if cut < len(names):
                child = _StatChild.start(fd, names[cut:])
            _stat_each(found, log_dir, fd, names[:cut], roots, follow_links, label)
            numbers = child.numbers() if child is not None else None
            if numbers is None:
                _stat_each(found, log_dir, fd, names[cut:], roots, follow_links, label)
            else:
                _with_numbers(found, log_dir, names[cut:], numbers, roots, follow_links, label)
        finally:
            os.close(fd)

    def add_named(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> bool:
        """Add each named log to ``found``, stat-ed by path (a log gone is listed unreadable)."""
        _stat_each(found, self.path, -1, names, roots, follow_links, label)
        return True

    def stamp(self) -> list[int] | None:
        """Return the directory's device, inode and modification time; None: it is gone."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return [st.st_dev, st.st_ino, st.st_mtime_ns]

    def listing_id(self) -> bytes:
        """Return the directory's real path (a listing says what it holds by names alone)."""
        return os.fsencode(os.path.realpath(self.path))

    def list(self) -> list[str]:
        """Return the directory's file names as listed (not sorted)."""
        self.check()
        try:
            return os.listdir(self.path)
        except OSError as exc:
            raise UsageError(f"cannot read event-log dir: {exc.strerror}", self.path) from exc

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Return each entry's size and modification time, as listed now."""
        found: dict[str, tuple[int, int]] = {}
        try:
            with os.scandir(self.path) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found[entry.name] = (st.st_size, _clamped(st.st_mtime_ns))
        except OSError as exc:
            raise UsageError(f"cannot read event-log dir: {exc.strerror}", self.path) from exc
        return found


# What 64 bits of nanoseconds hold (the years 1677 to 2262), as the state stores times.
MIN_NS, MAX_NS = -(2**63), 2**63 - 1


def _clamped(mtime_ns: int) -> int:
    """Return a modification time within 64 bits (a touch to the year 2300 is possible)."""
    # Past 2262 a log's time no longer tells it changed; its size still does.
    return min(max(mtime_ns, MIN_NS), MAX_NS)


# Candidates from which a forked child stats half of them (Linux, no other thread running).
PARALLEL_STAT = 20_000


def _may_fork(count: int) -> bool:
    """Tell whether to stat in two processes: many logs, on Linux, with this thread alone."""
    # A fork beside other threads (``serve``'s server) may copy a lock one of them holds.
    return count >= PARALLEL_STAT and sys.platform == "linux" and threading.active_count() == 1


def _stat_each(
    found: LogSink,
    log_dir: Path,
    fd: int,
    names: Sequence[str],
    roots: Sequence[str],
    follow: bool,
    label: str = "",
) -> None:
    """Add each named log to ``found``, one ``lstat`` each relative to the dir's ``fd``.

    ``fd`` -1: by path (a few logs, not worth opening the dir).
    """
    # Relative to an open descriptor of the dir (a link's target is stat-ed too): a directory
    # of 100,000 logs is listed on every build, also when nothing changed. Path or DirEntry
    # objects per file would cost more than the calls themselves.
    lstat, regular, add, other = os.lstat, stat.S_ISREG, found.add_plain, found.add_skipped
    prefix = f"{os.fspath(log_dir)}/" if fd < 0 else ""
    dir_fd = None if fd < 0 else fd
    for name in names:
        key = f"{label}{name}" if label else name
        try:
            st = lstat(f"{prefix}{name}" if prefix else name, dir_fd=dir_fd)
        except OSError:
            add(name, key, 0, 0)  # listed all the same: reading it reports why it is unreadable
            continue
        if regular(st.st_mode):
            mtime_ns = st.st_mtime_ns
            if not MIN_NS <= mtime_ns <= MAX_NS:
                mtime_ns = _clamped(mtime_ns)
            add(name, key, st.st_size, mtime_ns)
        else:
            other(name, key, *_irregular(log_dir, name, st.st_mode, roots, follow))


def _with_numbers(
    found: LogSink,
    log_dir: Path,
    names: Sequence[str],
    numbers: Sequence[int],
    roots: Sequence[str],
    follow: bool,
    label: str = "",
) -> None:
    """Add each named log to ``found`` from its ``(mode, size, mtime_ns)`` (mode -1: failed)."""
    regular, add, other = stat.S_ISREG, found.add_plain, found.add_skipped
    triples = iter(numbers)
    for name, mode, size, mtime_ns in zip(names, triples, triples, triples, strict=True):
        key = f"{label}{name}" if label else name
        if mode < 0:
            add(name, key, 0, 0)
        elif regular(mode):
            add(name, key, size, mtime_ns)
        else:
            other(name, key, *_irregular(log_dir, name, mode, roots, follow))


class _StatChild:
    """A forked process that ``lstat``s names and sends back their numbers through a pipe."""

    def __init__(self, pid: int, pipe: int, count: int) -> None:
        self.pid, self.pipe, self.count = pid, pipe, count

    @classmethod
    def start(cls, fd: int, names: Sequence[str]) -> _StatChild | None:
        """Fork a child statting ``names`` relative to ``fd``; None if it cannot be forked."""
        try:
            read, write = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return None
        if pid == 0:  # the child: never returns, never runs the parent's cleanup
            code = 1
            try:
                os.close(read)
                data = memoryview(_lstat_numbers(fd, names).tobytes())
                while data:
                    data = data[os.write(write, data) :]
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        return cls(pid, read, len(names))

    def numbers(self) -> array[int] | None:
        """Return the child's numbers (3 a name), or None when it failed (stat them here)."""
        chunks = []
        try:
            while chunk := os.read(self.pipe, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.pipe)
            _, status = os.waitpid(self.pid, 0)
        numbers = array("q")
        numbers.frombytes(b"".join(chunks))
        if os.waitstatus_to_exitcode(status) != 0 or len(numbers) != 3 * self.count:
            return None
        return numbers


def _lstat_numbers(fd: int, names: Sequence[str]) -> array[int]:
    """Return ``(mode, size, mtime_ns)`` of each name relative to ``fd``, flat (mode -1: failed)."""
    numbers = array("q")
    lstat, extend = os.lstat, numbers.extend
    for name in names:
        try:
            st = lstat(name, dir_fd=fd)
        except OSError:
            extend((-1, 0, 0))
            continue
        extend((st.st_mode, st.st_size, _clamped(st.st_mtime_ns)))
    return numbers


def _irregular(
    log_dir: Path,
    name: str,
    mode: int,
    roots: Sequence[str],
    follow_links: bool,
) -> tuple[int, int, str]:
    """Return the size, time and why it is skipped of a log that is a link or not a regular file."""
    assert split_name(name) is not None  # only log names are stat-ed
    path = f"{os.fspath(log_dir)}/{name}"
    link = stat.S_ISLNK(mode)
    try:
        st = os.stat(path)  # a link's target; else the file again, for its numbers
    except OSError:
        return 0, 0, ""
    size, mtime_ns = st.st_size, _clamped(st.st_mtime_ns)
    skip = ""
    if link or not stat.S_ISREG(st.st_mode):
        skip = skip_reason(path, link, roots, follow_links) or ""
        if skip:
            size = mtime_ns = 0  # a FIFO's or device's numbers mean nothing
    return size, mtime_ns, skip
