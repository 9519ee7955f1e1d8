"""What identifies the logs a build read and the options it ran with: digests and changes."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sitegen.builder.state.records import Identities
from sitegen.eventlog.sources import LogPath, LogSource, open_source
from sitegen.version import __version__

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from sitegen.eventlog.logfiles import LogList


def identity_digest(logs: LogList) -> str:
    """Return a digest of the logs' keys, sizes and modification times, in their order."""
    # From the columns, not a string per log: at 100,000 logs this is a no-op build's check.
    h = hashlib.sha256("\0".join(logs.keys).encode("utf-8", "surrogateescape"))
    h.update(b"\n" + logs.sizes.tobytes())
    h.update(b"\n" + logs.times.tobytes())  # within 64 bits: discover clamps them
    return h.hexdigest()


# A dir modified this recently may change again within the same tick of its clock, unseen
# by its modification time: its stamp is kept only once it is older than this.
SETTLED_NS = 2_000_000_000


def dir_stamps(log_dirs: Sequence[LogSource]) -> list[list[int]] | None:
    """Return each local log dir's device, inode and modification time (None: one is not).

    Taken before the dirs are listed: a change made meanwhile shows in the next build's.
    """
    stamps: list[list[int]] = []
    for log_dir in log_dirs:
        stamp = log_dir.stamp()  # None: gone, or an object store (its listing is its stamp)
        if stamp is None:
            return None
        stamps.append(stamp)
    return stamps


def settled(stamps: list[list[int]] | None, now_ns: int) -> list[list[int]] | None:
    """Return ``stamps`` if every dir was last modified SETTLED_NS before ``now_ns``."""
    if stamps is None or any(now_ns - mtime_ns < SETTLED_NS for _, _, mtime_ns in stamps):
        return None
    return stamps


def listing_digest(log_dirs: Sequence[LogSource], listings: Sequence[Sequence[str]]) -> str:
    """Return a digest of the log dirs' real paths and their names, as listed."""
    # The listing's own order: a directory that did not change lists alike (a reordered
    # listing only costs the stat of every log). 0.02 s for 100,000 names.
    h = hashlib.sha256()
    for log_dir, names in zip(log_dirs, listings, strict=True):
        h.update(log_dir.listing_id() + b"\0\0")  # a local dir's real path; a prefix's objects
        h.update("\0".join(names).encode("utf-8", "surrogateescape") + b"\0\0")
    return h.hexdigest()


def changed_logs(stored: Identities, logs: LogList) -> tuple[set[str], set[str]]:
    """Return the keys of the logs that are new or differ from ``stored``, and of those gone.

    Whole lists are compared in C where they line up (one log dir, listed in key order as the
    state's index holds them): building a tuple per log cost 0.4 s at 100,000 logs.
    """
    keys = logs.keys
    new: set[str] = set()
    gone: set[str] = set()
    if keys != stored.keys:
        now, had = set(keys), set(stored.keys)
        new, gone = now - had, had - now
    here, there = _positions(keys, new), _positions(stored.keys, gone)
    kept = _without(keys, here)
    if kept != _without(stored.keys, there):
        # Not in the same order (several dirs): tuple by tuple.
        then = set(zip(stored.keys, _ints(stored.sizes), _ints(stored.times), strict=True))
        tuples = set(zip(keys, logs.sizes, logs.times, strict=True))
        differ = {key for key, _, _ in tuples - then}
        return differ, {key for key, _, _ in then - tuples} - differ
    differ = set(new)
    for numbers, column in ((logs.sizes, stored.sizes), (logs.times, stored.times)):
        values = _without(list(numbers), here)
        then_text = ",".join(_without(column.split(","), there)) if there else column
        if ",".join(map(str, values)) != then_text:
            pairs = zip(kept, values, _ints(then_text), strict=True)
            differ.update(key for key, v, w in pairs if v != w)
    return differ, gone


def _positions(keys: list[str], some: set[str]) -> list[int]:
    """Return where the keys of ``some`` are in ``keys``, last first."""
    if len(some) <= 64:  # the usual few: a search in C each
        return sorted((keys.index(key) for key in some), reverse=True)
    return [n for n in range(len(keys) - 1, -1, -1) if keys[n] in some]


T = TypeVar("T")


def _without(items: list[T], positions: list[int]) -> list[T]:
    """Return ``items`` without those at ``positions`` (last first); itself when there are none."""
    if not positions:
        return items
    items = list(items)
    for n in positions:
        del items[n]
    return items


def _ints(column: str) -> list[int]:
    """Return a comma-separated column's numbers."""
    return list(map(int, column.split(","))) if column else []


def log_digest(path: LogPath, held: bytes | None = None) -> str:
    """Return a log's SHA-256, from its bytes if held; empty when it cannot be read."""
    if held is not None:
        return hashlib.sha256(held).hexdigest()
    try:
        with open_source(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()  # type: ignore[arg-type]
    except OSError:  # a dangling symlink, or a log removed since it was listed: the reader
        return ""  # says why, and a log that can be read again no longer matches ""


# A file this big is told by its size and modification time, not read: the query page's
# engine (--sql-engine) holds 18 MB of wasm, whose reading cost every build 50 ms.
BIG_FILE = 1 << 20


def _hash_tree(h: Any, root: Path) -> None:
    """Feed every file name and content below ``root`` into ``h``, in a stable order."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        stat = path.stat()
        if stat.st_size >= BIG_FILE:
            h.update(f"{stat.st_size}:{stat.st_mtime_ns}\0".encode())
            continue
        h.update(path.read_bytes() + b"\0")


def fingerprint(
    options: DataclassInstance, template_dirs: list[Path], ignore: frozenset[str]
) -> str:
    """Hash what every page depends on: sitegen version, templates, output-shaping options."""
    h = hashlib.sha256(__version__.encode())
    for directory in template_dirs:
        _hash_tree(h, directory)
    for f in fields(options):
        if f.name in ignore:
            continue
        value = getattr(options, f.name)
        h.update(f"{f.name}={value!r}\0".encode())
        if isinstance(value, Path) and value.is_dir():
            _hash_tree(h, value)
    return h.hexdigest()
