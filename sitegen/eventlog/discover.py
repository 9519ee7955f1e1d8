"""Find event logs in a directory and judge job ids as path segments."""

from __future__ import annotations

import os
import stat
import sys
import threading
import unicodedata
from array import array
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import msgspec

from sitegen.errors import UsageError
from sitegen.eventlog.filekind import skip_reason
from sitegen.eventlog.logfiles import LogFile, LogList, split_name
from sitegen.eventlog.storage import LogDir, RemoteDir
from sitegen.text.storage_url import is_url

MAX_ID_BYTES = 200

# One event-log dir or several, as scripts and tests give them (paths, or storage URLs).
OneLogDir = str | os.PathLike[str] | RemoteDir
LogDirs = OneLogDir | Sequence[OneLogDir]


def as_log_dir(given: OneLogDir, storage_options: dict[str, Any] | None = None) -> LogDir:
    """Return one log dir as a path, or as a prefix in object storage for a URL."""
    if isinstance(given, RemoteDir):
        if storage_options and not given.options:
            return RemoteDir(given.url, storage_options)
        return given
    if is_url(given):
        return RemoteDir(str(given), storage_options)
    return Path(given)


def as_log_dirs(
    given: LogDirs, storage_options: dict[str, Any] | None = None
) -> tuple[LogDir, ...]:
    """Return the log dirs as a tuple, each directory once: normalised here alone."""
    if isinstance(given, str | os.PathLike | RemoteDir):
        return (as_log_dir(given, storage_options),)
    # The same directory named twice (``logs``, ``./logs/``) is read once.
    return tuple(distinct_dirs([as_log_dir(d, storage_options) for d in given])[0])


def check_log_dir(log_dir: LogDir) -> None:
    """Refuse an event-log dir that is missing, not a directory, or not readable."""
    if isinstance(log_dir, RemoteDir):
        return  # listing it says (a prefix holds no "directory" to check first)
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


def distinct_dirs(
    log_dirs: Sequence[LogDir],
) -> tuple[list[LogDir], list[tuple[LogDir, LogDir]]]:
    """Return the dirs with each directory once, and each one left out with the one kept.

    ``logs`` and ``./logs/``, or a link to it, are one directory (same device and inode):
    read twice, every log would be a duplicate of itself.
    """
    kept: list[LogDir] = []
    dropped: list[tuple[LogDir, LogDir]] = []
    seen: dict[tuple[int, int] | str, LogDir] = {}
    for log_dir in log_dirs:
        if isinstance(log_dir, RemoteDir):
            first_url = seen.setdefault(log_dir.url, log_dir)
            if first_url is log_dir:
                kept.append(log_dir)
            else:
                dropped.append((log_dir, first_url))
            continue
        try:
            st = os.stat(log_dir)
        except OSError:
            kept.append(log_dir)  # missing or unreadable: reading it says why
            continue
        first = seen.setdefault((st.st_dev, st.st_ino), log_dir)
        if first is log_dir:
            kept.append(log_dir)
        else:
            dropped.append((log_dir, first))
    return kept, dropped


def list_dirs(log_dirs: Sequence[LogDir]) -> list[list[str]]:
    """Return the file names of each event-log dir as listed (not sorted)."""
    listings = []
    for log_dir in log_dirs:
        if isinstance(log_dir, RemoteDir):
            listings.append(log_dir.list())  # notes each object's size and identity time
            continue
        check_log_dir(log_dir)
        try:
            listings.append(os.listdir(log_dir))
        except OSError as exc:
            raise UsageError(f"cannot read event-log dir: {exc.strerror}", log_dir) from exc
    return listings


def has_logs(listings: Sequence[Sequence[str]]) -> bool:
    """Tell whether any listed name is a log's (a README alone is not)."""
    return any(split_name(name) for names in listings for name in names)


def discover_all(
    log_dirs: Sequence[LogDir],
    follow_links: bool = False,
    listings: Sequence[list[str]] | None = None,
) -> LogList:
    """List the logs of every dir in order; with several dirs, keys name the dir too.

    ``listings``: each dir's names as ``list_dirs`` gave them (default: listed now).
    """
    roots = real_roots(log_dirs)
    if listings is None:
        listings = list_dirs(log_dirs)
    labels = key_prefixes(log_dirs)
    if len(log_dirs) == 1:
        return discover(log_dirs[0], roots, follow_links, listings[0], labels[0])
    found = LogList()
    for log_dir, label, names in zip(log_dirs, labels, listings, strict=True):
        found.extend(discover(log_dir, roots, follow_links, names, label))
    return found


def real_roots(log_dirs: Sequence[LogDir]) -> list[str]:
    """Return the real paths of the local log dirs, which links may lead into."""
    return [os.path.realpath(d) for d in log_dirs if isinstance(d, Path)]


def discover_keys(
    log_dirs: Sequence[LogDir], keys: Collection[str], follow_links: bool = False
) -> LogList | None:
    """Stat the logs of ``keys`` alone, as a listing named them; None if a key names no log."""
    roots = real_roots(log_dirs)
    found = LogList()
    for log_dir, label in zip(log_dirs, key_prefixes(log_dirs), strict=True):
        names = sorted(key[len(label) :] for key in keys if key.startswith(label))
        if not all(map(split_name, names)):
            return None
        found.start_dir(log_dir)
        if isinstance(log_dir, RemoteDir):
            if not _remote_each(found, log_dir, names, label):
                return None
            continue
        _stat_each(found, log_dir, -1, names, roots, follow_links, label)
    return found if len(found) == len(keys) else None


def key_prefixes(log_dirs: Sequence[LogDir]) -> list[str]:
    """Return the prefix of each dir's keys: none for one dir, else its name and a slash."""
    if len(log_dirs) == 1:
        return [""]
    labels: list[str] = []
    for n, log_dir in enumerate(log_dirs):
        label = log_dir.resolve().name or f"dir{n + 1}"
        if f"{label}/" in labels:
            label = f"{label}#{n + 1}"
        labels.append(f"{label}/")
    return labels


def _remote_each(found: LogList, log_dir: RemoteDir, names: Sequence[str], label: str) -> bool:
    """Add each named object of a prefix to ``found``; False when one is gone."""
    for name in names:
        numbers = log_dir.stat(name)
        if numbers is None:
            return False
        found.add_plain(name, f"{label}{name}" if label else name, *numbers)
    return True


def discover(
    log_dir: LogDir,
    roots: Sequence[str] | None = None,
    follow_links: bool = False,
    names: list[str] | None = None,
    label: str = "",
) -> LogList:
    """List every log in ``log_dir``, sorted by name so builds are deterministic.

    ``roots``: the real paths of every event-log dir, which links may lead into
    (default: ``log_dir`` alone). What is not read is listed with its ``skip`` reason.
    ``names``: the dir's names as listed; ``label``: the prefix of its logs' keys.
    """
    if roots is None:
        roots = real_roots([log_dir])
    if names is None:
        names = list_dirs([log_dir])[0]
    candidates = log_names(names)
    found = LogList()
    found.start_dir(log_dir)
    if isinstance(log_dir, RemoteDir):
        _remote_each(found, log_dir, candidates, label)  # listed: no call per object
        return found
    try:
        fd = os.open(log_dir, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UsageError(f"cannot read event-log dir: {exc.strerror}", log_dir) from exc
    try:
        # Past PARALLEL_STAT logs a forked child stats the second half meanwhile: one lstat
        # costs 5-6 us on a VM (0.6 s for 100,000 logs, most of a no-op build's time).
        cut = len(candidates) // 2 if _may_fork(len(candidates)) else len(candidates)
        child = None
        if cut < len(candidates):
            child = _StatChild.start(fd, candidates[cut:])
        _stat_each(found, log_dir, fd, candidates[:cut], roots, follow_links, label)
        numbers = child.numbers() if child is not None else None
        if numbers is None:
            _stat_each(found, log_dir, fd, candidates[cut:], roots, follow_links, label)
        else:
            _with_numbers(found, log_dir, candidates[cut:], numbers, roots, follow_links, label)
    finally:
        os.close(fd)
    if not "".join(names).isascii():  # one scan in C; only then a look at each name
        for n, name in enumerate(found.names):
            if not name.isascii() and (odd := _undecodable(found[n])) is not None:
                found.replace(n, odd)
    return found


def log_names(names: Sequence[str]) -> list[str]:
    """Return the names of logs among a dir's ``names``, sorted (the order of its logs)."""
    names = sorted(names)
    # A comprehension for the plain logs (nearly all): a loop with calls cost 0.1 s a 100,000.
    candidates = [name for name in names if name.endswith(".eventlog") and len(name) > 9]
    if len(candidates) < len(names):  # other suffixes, or other files (a README, say)
        others = [n for n in names if not n.endswith(".eventlog") and split_name(n)]
        if others:
            candidates += others
            candidates.sort()  # by name, as listed
    return candidates


def _undecodable(log: LogFile) -> LogFile | None:
    """Return the entry of a log whose file name is not UTF-8 as one that is not read, else None."""
    try:
        log.name.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass

    # Its name can be neither stored nor shown: reports, pages and the state name it with
    # its undecodable bytes as \xNN escapes (file names are operators' text, not users').
    def shown(text: str) -> str:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")

    return msgspec.structs.replace(
        log,
        name_id=shown(log.name_id),
        key=shown(log.key),
        skip="its file name is not valid UTF-8: rename it to read it",
    )


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
    found: LogList,
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
    lstat, regular, add = os.lstat, stat.S_ISREG, found.add_plain
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
            found.add(_irregular(log_dir, name, st.st_mode, key, roots, follow))


def _with_numbers(
    found: LogList,
    log_dir: Path,
    names: Sequence[str],
    numbers: Sequence[int],
    roots: Sequence[str],
    follow: bool,
    label: str = "",
) -> None:
    """Add each named log to ``found`` from its ``(mode, size, mtime_ns)`` (mode -1: failed)."""
    regular, add = stat.S_ISREG, found.add_plain
    triples = iter(numbers)
    for name, mode, size, mtime_ns in zip(names, triples, triples, triples, strict=True):
        key = f"{label}{name}" if label else name
        if mode < 0:
            add(name, key, 0, 0)
        elif regular(mode):
            add(name, key, size, mtime_ns)
        else:
            found.add(_irregular(log_dir, name, mode, key, roots, follow))


class _StatChild:
    """A forked process that ``lstat``s names and sends back their numbers through a pipe."""

    def __init__(self, pid: int, pipe: int, count: int) -> None:
        self.pid, self.pipe, self.count = pid, pipe, count

    @classmethod
    def start(cls, fd: int, names: list[str]) -> _StatChild | None:
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
    key: str,
    roots: Sequence[str],
    follow_links: bool,
) -> LogFile:
    """Return the entry of a log that is a link or not a regular file (with why it is skipped)."""
    parsed = split_name(name)
    assert parsed is not None  # only log names are stat-ed
    name_id, running = parsed
    path = f"{os.fspath(log_dir)}/{name}"
    link = stat.S_ISLNK(mode)
    try:
        st = os.stat(path)  # a link's target; else the file again, for its numbers
    except OSError:
        return LogFile(log_dir, name, name_id, running, 0, 0, key)
    size, mtime_ns = st.st_size, _clamped(st.st_mtime_ns)
    skip = ""
    if link or not stat.S_ISREG(st.st_mode):
        skip = skip_reason(path, link, roots, follow_links) or ""
        if skip:
            size = mtime_ns = 0  # a FIFO's or device's numbers mean nothing
    return LogFile(log_dir, name, name_id, running, size, mtime_ns, key, skip)


def unsafe_id_reason(job_id: str) -> str | None:
    """Say why ``job_id`` cannot be one path segment on disk and in a URL, or None."""
    if job_id == "":
        return "job id is empty"
    if job_id in (".", ".."):
        return f"job id {job_id!r} is a relative path"
    if len(job_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        return f"job id is longer than {MAX_ID_BYTES} bytes"
    for ch in job_id:
        if ch in "/\\":
            return f"job id {job_id!r} contains a path separator"
        if ch == "\x00" or unicodedata.category(ch) in ("Cc", "Cs"):
            return f"job id {job_id!r} contains a control character"
    return None
