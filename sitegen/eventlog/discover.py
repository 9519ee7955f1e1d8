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

import msgspec

from sitegen.errors import UsageError
from sitegen.eventlog.filekind import skip_reason

# Newer schedulers write `<id>.eventlog.running` while a job runs (Ballista #2405).
# Operators and CI compress finished logs; those are streamed, never unpacked (reader.open_log).
SUFFIXES = (".eventlog", ".eventlog.running", ".eventlog.gz", ".eventlog.zst")
MAX_ID_BYTES = 200


class LogFile(msgspec.Struct, frozen=True, gc=False):
    """One candidate log: where it is and the job id its name suggests."""

    directory: Path
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

    @property
    def path(self) -> Path:
        """Return the log's path (made on demand: most logs of a build are never opened)."""
        return self.directory / self.name


def split_name(name: str) -> tuple[str, bool] | None:
    """Return (job id from the file name, running?) for a log file name, else None."""
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix.endswith(".running")
    return None


def check_log_dir(log_dir: Path) -> None:
    """Refuse an event-log dir that is missing, not a directory, or not readable."""
    if not log_dir.exists():
        raise UsageError("event-log dir does not exist", log_dir)
    if not log_dir.is_dir():
        raise UsageError("event-log dir is not a directory", log_dir)
    if not os.access(log_dir, os.R_OK | os.X_OK):
        raise UsageError("event-log dir is not readable", log_dir)


def list_dirs(log_dirs: Sequence[Path]) -> list[list[str]]:
    """Return the file names of each event-log dir as listed (not sorted)."""
    listings = []
    for log_dir in log_dirs:
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
    log_dirs: Sequence[Path],
    follow_links: bool = False,
    listings: Sequence[list[str]] | None = None,
) -> list[LogFile]:
    """List the logs of every dir in order; with several dirs, keys name the dir too.

    ``listings``: each dir's names as ``list_dirs`` gave them (default: listed now).
    """
    roots = [os.path.realpath(d) for d in log_dirs]
    if listings is None:
        listings = list_dirs(log_dirs)
    found = []
    for log_dir, label, names in zip(log_dirs, key_prefixes(log_dirs), listings, strict=True):
        found += discover(log_dir, roots, follow_links, names, label)
    return found


def discover_keys(
    log_dirs: Sequence[Path], keys: Collection[str], follow_links: bool = False
) -> list[LogFile] | None:
    """Stat the logs of ``keys`` alone, as a listing named them; None if a key names no log."""
    roots = [os.path.realpath(d) for d in log_dirs]
    found = []
    for log_dir, label in zip(log_dirs, key_prefixes(log_dirs), strict=True):
        candidates = []
        for name in sorted(key[len(label) :] for key in keys if key.startswith(label)):
            parsed = split_name(name)
            if parsed is None:
                return None
            candidates.append((name, *parsed))
        found += _stat_each(log_dir, -1, candidates, roots, follow_links, label)
    return found if len(found) == len(keys) else None


def key_prefixes(log_dirs: Sequence[Path]) -> list[str]:
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


def discover(
    log_dir: Path,
    roots: Sequence[str] | None = None,
    follow_links: bool = False,
    names: list[str] | None = None,
    label: str = "",
) -> list[LogFile]:
    """List every log in ``log_dir``, sorted by name so builds are deterministic.

    ``roots``: the real paths of every event-log dir, which links may lead into
    (default: ``log_dir`` alone). What is not read is listed with its ``skip`` reason.
    ``names``: the dir's names as listed; ``label``: the prefix of its logs' keys.
    """
    if roots is None:
        roots = [os.path.realpath(log_dir)]
    if names is None:
        names = list_dirs([log_dir])[0]
    names = sorted(names)
    # A comprehension for the plain logs (nearly all): a loop with calls cost 0.1 s a 100,000.
    candidates: list[Candidate] = [
        (name, name[:-9], False) for name in names if name.endswith(".eventlog") and len(name) > 9
    ]
    if len(candidates) < len(names):  # other suffixes, or other files (a README, say)
        others = [
            (name, *parsed)
            for name in names
            if not name.endswith(".eventlog") and (parsed := split_name(name))
        ]
        if others:
            candidates += others
            candidates.sort()  # by name, as listed (no two entries share one)
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
            child = _StatChild.start(fd, [c[0] for c in candidates[cut:]])
        found = _stat_each(log_dir, fd, candidates[:cut], roots, follow_links, label)
        numbers = child.numbers() if child is not None else None
        if numbers is None:
            found += _stat_each(log_dir, fd, candidates[cut:], roots, follow_links, label)
        else:
            found += _with_numbers(log_dir, candidates[cut:], numbers, roots, follow_links, label)
    finally:
        os.close(fd)
    if not "".join(names).isascii():  # one scan in C; only then a look at each name
        found = [_undecodable(log) if not log.name.isascii() else log for log in found]
    return found


def _undecodable(log: LogFile) -> LogFile:
    """Return the entry of a log whose file name is not UTF-8 as one that is not read."""
    try:
        log.name.encode("utf-8")
        return log
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
Candidate = tuple[str, str, bool]  # file name, job id from it, running?


def _may_fork(count: int) -> bool:
    """Tell whether to stat in two processes: many logs, on Linux, with this thread alone."""
    # A fork beside other threads (``serve``'s server) may copy a lock one of them holds.
    return count >= PARALLEL_STAT and sys.platform == "linux" and threading.active_count() == 1


def _stat_each(
    log_dir: Path,
    fd: int,
    candidates: Sequence[Candidate],
    roots: Sequence[str],
    follow: bool,
    label: str = "",
) -> list[LogFile]:
    """Return the entry of each candidate, one ``lstat`` each relative to the dir's ``fd``.

    ``fd`` -1: by path (a few logs, not worth opening the dir).
    """
    # Relative to an open descriptor of the dir (a link's target is stat-ed too): a directory
    # of 100,000 logs is listed on every build, also when nothing changed. Path or DirEntry
    # objects per file would cost more than the calls themselves.
    found = []
    lstat, regular, make = os.lstat, stat.S_ISREG, LogFile
    prefix = f"{os.fspath(log_dir)}/" if fd < 0 else ""
    dir_fd = None if fd < 0 else fd
    for name, name_id, running in candidates:
        key = f"{label}{name}" if label else name
        try:
            st = lstat(f"{prefix}{name}" if prefix else name, dir_fd=dir_fd)
        except OSError:
            # Listed all the same: reading it reports why it is unreadable.
            found.append(make(log_dir, name, name_id, running, 0, 0, key))
            continue
        if regular(st.st_mode):
            mtime_ns = st.st_mtime_ns
            if not MIN_NS <= mtime_ns <= MAX_NS:
                mtime_ns = _clamped(mtime_ns)
            found.append(make(log_dir, name, name_id, running, st.st_size, mtime_ns, key))
        else:
            entry = _irregular(log_dir, name, name_id, running, st.st_mode, key, roots, follow)
            found.append(entry)
    return found


def _with_numbers(
    log_dir: Path,
    candidates: Sequence[Candidate],
    numbers: Sequence[int],
    roots: Sequence[str],
    follow: bool,
    label: str = "",
) -> list[LogFile]:
    """Return the entry of each candidate from its ``(mode, size, mtime_ns)`` (mode -1: failed)."""
    found = []
    regular, make = stat.S_ISREG, LogFile
    triples = iter(numbers)
    for (name, name_id, running), mode, size, mtime_ns in zip(
        candidates, triples, triples, triples, strict=True
    ):
        key = f"{label}{name}" if label else name
        if mode < 0:
            found.append(make(log_dir, name, name_id, running, 0, 0, key))
        elif regular(mode):
            found.append(make(log_dir, name, name_id, running, size, mtime_ns, key))
        else:
            found.append(_irregular(log_dir, name, name_id, running, mode, key, roots, follow))
    return found


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
    name_id: str,
    running: bool,
    mode: int,
    key: str,
    roots: Sequence[str],
    follow_links: bool,
) -> LogFile:
    """Return the entry of a log that is a link or not a regular file (with why it is skipped)."""
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
