"""What a build that trusts finished logs learns from the listings: the names in and out.

A log read as a completed job is not written again under its name (Ballista renames a log
into place when its job ends; a late TaskEnd a scheduler from before #2405 appended after
JobEnd would not be read anyway), so such a build takes the finished logs' sizes and times from
the state, stats only the names new to it and the logs not read as completed, and knows the
logs gone by the names no longer listed. At 100,000 logs a stat of each cost a build that
added one log 0.5 s, and comparing every identity with the state's 0.2 s more.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from sitegen.builder.plan.events import Heard, KeptLogs
from sitegen.builder.state.store import State
from sitegen.eventlog.discover import discover_keys, key_prefixes
from sitegen.eventlog.logfiles import LogList, split_name
from sitegen.eventlog.sources import LogSource

# Past this many names in and out, a stat of every log costs less than splicing each in.
SPLICE_LIMIT = 1000


class Columns(NamedTuple):
    """Every log the state holds: keys in order, their sizes and times."""

    keys: list[str]
    sizes: array[int]
    times: array[int]


class Listed(NamedTuple):
    """Every listed log (the finished ones as the state holds them), and what changed."""

    logs: LogList
    # The keys of the logs new to the state, or not completed and changed since (by stat).
    differ: set[str]
    # The keys the state holds that no dir lists now.
    gone: set[str]
    # Each log dir's names, as the listing (or the state's, spliced) holds them.
    listings: list[list[str]]


def trusted_logs(
    log_dirs: Sequence[LogSource],
    listings: Sequence[Sequence[str]],
    state: State,
    follow_links: bool = False,
) -> Listed | None:
    """Return the listed logs, numbers of finished ones from the state, and what changed.

    Only for dirs whose names are trusted (``BuildRun.trusting``). None when the names cannot
    be matched with the state's keys so (a name not ASCII, whose key may not be its name; many
    names in or out): the caller then stats every log.
    """
    labels = key_prefixes(log_dirs)
    pairs = list(zip(labels, listings, strict=True))
    if not all(label.isascii() and "".join(names).isascii() for label, names in pairs):
        return None
    # Sets, not a sorted listing: the state's keys are in order already (0.1 s less).
    listed = (
        {label + name for label, names in pairs for name in names}
        if labels != [""]
        else set(listings[0])
    )
    stored = state.identities()
    had = set(stored.keys)
    new = {key for key in listed - had if split_name(key)}  # a README is listed, not a log
    columns = Columns(stored.keys, _numbers(stored.sizes), _numbers(stored.times))
    return _diff(log_dirs, labels, columns, state, new, had - listed, follow_links)


def logs_from_events(
    log_dirs: Sequence[LogSource],
    heard: Heard,
    state: State,
    follow_links: bool = False,
    kept: KeptLogs | None = None,
) -> Listed | None:
    """Return the logs as ``trusted_logs`` does, from the names a watcher heard come and go.

    No listing: the last build's logs (``kept``, while the state's selection record says they
    are the state's; else the state's, read once) with each name heard looked up among them
    (they are in key order), not every key against every name. None as ``trusted_logs``.
    """
    labels = key_prefixes(log_dirs)
    names = [name for found in (*heard.there, *heard.gone) for name in found]
    if not all(label.isascii() for label in labels) or not "".join(names).isascii():
        return None
    columns = _kept_columns(state, kept)
    if columns is None:
        stored = state.identities()
        columns = Columns(stored.keys, _numbers(stored.sizes), _numbers(stored.times))
    keys = columns.keys
    new: set[str] = set()
    gone: set[str] = set()
    for label, there, went in zip(labels, heard.there, heard.gone, strict=True):
        new.update(k for k in (label + n for n in there) if split_name(k) and not _has(keys, k))
        gone.update(k for k in (label + n for n in went) if _has(keys, k))
    return _diff(log_dirs, labels, columns, state, new, gone, follow_links)


def keep_logs(kept: KeptLogs, logs: LogList, digest: str) -> None:
    """Keep a build's ``logs`` (``digest``: its ``identity_digest``) for the next one's diff."""
    keys, sizes, times = list(logs.keys), array("q", logs.sizes), array("q", logs.times)
    # Listed, not spliced: in the listing's order. (A sorted copy to compare with is made in
    # C in 3 ms at 100,000 keys in order; a pairwise look in Python cost 15 ms.)
    if keys != sorted(keys):
        order = sorted(range(len(keys)), key=keys.__getitem__)
        keys = [keys[n] for n in order]
        sizes = array("q", (sizes[n] for n in order))
        times = array("q", (times[n] for n in order))
    kept.keys, kept.sizes, kept.times, kept.digest = keys, sizes, times, digest


def _kept_columns(state: State, kept: KeptLogs | None) -> Columns | None:
    """Return the kept logs if they are the state's (one row read); None: read the state's."""
    if kept is None or not kept.digest:
        return None
    chosen = state.chosen()
    if chosen is None or chosen.identities != kept.digest:
        return None  # another build (a cron one) changed the state since
    return Columns(kept.keys, kept.sizes, kept.times)


def _has(keys: list[str], key: str) -> bool:
    """Tell whether the sorted ``keys`` hold ``key``."""
    n = bisect_left(keys, key)
    return n < len(keys) and keys[n] == key


def _diff(
    log_dirs: Sequence[LogSource],
    labels: list[str],
    stored: Columns,
    state: State,
    new: set[str],
    gone: set[str],
    follow_links: bool,
) -> Listed | None:
    """Splice ``new`` and ``gone`` into the state's logs; stat the new and the unfinished."""
    if len(new) + len(gone) > SPLICE_LIMIT:
        return None
    sizes, times = stored.sizes, stored.times
    logs = LogList()
    listings: list[list[str]] = []
    for log_dir, label in zip(log_dirs, labels, strict=True):
        lo, hi = _span(stored.keys, label)
        keys = stored.keys[lo:hi]
        dir_sizes, dir_times = sizes[lo:hi], times[lo:hi]
        _splice(keys, dir_sizes, dir_times, label, new, gone)
        names = [key[len(label) :] for key in keys] if label else keys
        logs.add_columns(log_dir, names, keys, dir_sizes, dir_times)
        listings.append(names)
    unfinished = state.unfinished()
    stat = new | (unfinished.keys() - gone)
    differ = set(new)
    if stat:
        found = discover_keys(log_dirs, stat, follow_links)
        if found is None:
            return None  # a name gone since it was listed: a stat of each says so
        for log in found:
            logs.replace(logs.position(log.key), log)
            if log.key in unfinished and (log.size, log.mtime_ns) != unfinished[log.key]:
                differ.add(log.key)
    return Listed(logs, differ, gone, listings)


def _numbers(column: str) -> array[int]:
    """Return a comma-separated column's numbers as an array (no list of ints kept)."""
    # Decoded as a JSON array in C: int() of each split piece cost 0.015 s a 100,000.
    return array("q", _decode_ints(f"[{column}]")) if column else array("q")


_decode_ints = msgspec.json.Decoder(list[int]).decode


def _span(keys: list[str], label: str) -> tuple[int, int]:
    """Return where the sorted ``keys`` that start with ``label`` (a dir's) begin and end."""
    if not label:
        return 0, len(keys)
    # A label ends with "/": the keys under it sort before those starting with label + "0".
    return bisect_left(keys, label), bisect_left(keys, f"{label[:-1]}0")


def _splice(
    keys: list[str],
    sizes: array[int],
    times: array[int],
    label: str,
    new: set[str],
    gone: set[str],
) -> None:
    """Take the ``gone`` keys out of a dir's sorted columns and put the ``new`` ones in."""
    for key in sorted((k for k in gone if k.startswith(label)), reverse=True):
        n = bisect_left(keys, key)
        if n < len(keys) and keys[n] == key:
            del keys[n], sizes[n], times[n]
    for key in sorted(k for k in new if k.startswith(label)):
        n = bisect_left(keys, key)
        keys.insert(n, key)
        sizes.insert(n, 0)  # stat-ed next
        times.insert(n, 0)
