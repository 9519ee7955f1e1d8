"""Find event logs in their dirs (any ``sources.LogSource``) and judge job ids as path segments."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Collection, Hashable, Sequence
from typing import Any

import msgspec

from sitegen.eventlog.localdir import LocalDir
from sitegen.eventlog.logfiles import LogFile, LogList, split_name
from sitegen.eventlog.sources import LogSource
from sitegen.eventlog.storage import RemoteDir
from sitegen.text.storage_url import is_url

MAX_ID_BYTES = 200

# One event-log dir or several, as scripts and tests give them (paths, or storage URLs).
OneLogDir = str | os.PathLike[str] | LogSource
LogDirs = OneLogDir | Sequence[OneLogDir]


def log_source(
    given: OneLogDir, storage_options: dict[str, Any] | None = None, trusted: bool = True
) -> LogSource:
    """Return where logs come from: a local dir for a path, a prefix in object storage for a URL.

    A source given already is kept (with ``storage_options`` where it has none): this is the
    one place that makes a source of either kind. ``trusted`` False (``--verify-logs``): a
    source whose finished logs' names are not trusted (``LogSource.verified``).
    """
    if isinstance(given, str | os.PathLike):
        source: LogSource = (
            RemoteDir(str(given), storage_options) if is_url(given) else LocalDir(given)
        )
    else:
        source = given.with_options(storage_options)
    return source if trusted else source.verified()


# The name the command line uses.
as_log_dir = log_source


def as_log_dirs(
    given: LogDirs, storage_options: dict[str, Any] | None = None, trusted: bool = True
) -> tuple[LogSource, ...]:
    """Return the log dirs as a tuple of sources, each directory once (paths: normalised here)."""
    if isinstance(given, str | os.PathLike) or not isinstance(given, Sequence):
        return (log_source(given, storage_options, trusted),)
    sources = [log_source(d, storage_options, trusted) for d in given]
    if all(not isinstance(d, str | os.PathLike) for d in given):
        # Sources already: made by this function or the command line's, each dir once (a
        # build's options are made again for each retry: no dir is stat-ed again for it).
        return tuple(sources)
    # The same directory named twice (``logs``, ``./logs/``) is read once.
    return tuple(distinct_dirs(sources)[0])


def check_log_dir(log_dir: LogSource) -> None:
    """Refuse an event-log dir that is missing, not a directory, or not readable."""
    log_dir.check()


def distinct_dirs(
    log_dirs: Sequence[LogSource],
) -> tuple[list[LogSource], list[tuple[LogSource, LogSource]]]:
    """Return the dirs with each directory once, and each one left out with the one kept.

    ``logs`` and ``./logs/``, or a link to it, are one directory (same device and inode):
    read twice, every log would be a duplicate of itself.
    """
    kept: list[LogSource] = []
    dropped: list[tuple[LogSource, LogSource]] = []
    seen: dict[Hashable, LogSource] = {}
    for log_dir in log_dirs:
        place = log_dir.place()
        if place is None:
            kept.append(log_dir)  # missing or unreadable: reading it says why
            continue
        first = seen.setdefault(place, log_dir)
        if first is log_dir:
            kept.append(log_dir)
        else:
            dropped.append((log_dir, first))
    return kept, dropped


def list_dirs(log_dirs: Sequence[LogSource]) -> list[list[str]]:
    """Return the file names of each event-log dir as listed (not sorted)."""
    # A prefix in object storage notes each object's size and identity time as it lists.
    return [log_dir.list() for log_dir in log_dirs]


def has_logs(listings: Sequence[Sequence[str]]) -> bool:
    """Tell whether any listed name is a log's (a README alone is not)."""
    return any(split_name(name) for names in listings for name in names)


def discover_all(
    log_dirs: Sequence[LogSource],
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


def real_roots(log_dirs: Sequence[LogSource]) -> list[str]:
    """Return the real paths of the local log dirs, which links may lead into."""
    return [os.path.realpath(d.local) for d in log_dirs if d.local is not None]


def discover_keys(
    log_dirs: Sequence[LogSource], keys: Collection[str], follow_links: bool = False
) -> LogList | None:
    """Stat the logs of ``keys`` alone, as a listing named them; None if a key names no log."""
    roots = real_roots(log_dirs)
    found = LogList()
    for log_dir, label in zip(log_dirs, key_prefixes(log_dirs), strict=True):
        names = sorted(key[len(label) :] for key in keys if key.startswith(label))
        if not all(map(split_name, names)):
            return None
        found.start_dir(log_dir)
        if not log_dir.add_named(found, names, label, roots, follow_links):
            return None
    return found if len(found) == len(keys) else None


def key_prefixes(log_dirs: Sequence[LogSource]) -> list[str]:
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
    log_dir: OneLogDir,
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
    source = log_source(log_dir)
    if roots is None:
        roots = real_roots([source])
    if names is None:
        names = source.list()
    candidates = log_names(names)
    found = LogList()
    found.start_dir(source)
    source.add_listed(found, candidates, label, roots, follow_links)
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
