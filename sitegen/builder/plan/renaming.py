"""Which log dirs name logs the Ballista #2405 way, where a ``.eventlog`` without JobEnd ended.

Since #2405 a scheduler writes ``<id>.eventlog.running`` while its job runs and renames it to
``<id>.eventlog`` when the job ends, with or without a JobEnd; one from before #2405 writes
``<id>.eventlog`` from the start, so there such a log may be a job still running. A dir names
logs the #2405 way when its listing holds a ``.running`` log now, or when it holds a finished
log that a build of this site saw as ``.running`` before: the state's ``renamed`` table notes a
log's key when a build finds its ``.running`` name gone and a finished name of the same id new,
and forgets it when that log goes. Elsewhere the log's age decides (eventlog.classify).

A log's verdict follows the naming as it is now: a dir that no longer shows it (its ``.running``
logs gone unrenamed, its renamed logs removed) has its logs judged by age again, as a build
of those logs afresh judges them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from sitegen.builder.state.store import State
from sitegen.eventlog.compression import compression_of
from sitegen.eventlog.limits import LogLimits
from sitegen.eventlog.logfiles import RUNNING, LogList, label_of
from sitegen.model import Classification

# The names a log is renamed to (or compressed under) once its job ended.
_FINISHED = (".eventlog", ".eventlog.gz", ".eventlog.zst")


def renames(gone: Iterable[str], new: Collection[str]) -> list[str]:
    """Return the keys, among ``new``, of finished logs whose ``.running`` key is ``gone``."""
    found = []
    for key in gone:
        if key.endswith(RUNNING):
            stem = key[: -len(RUNNING)]
            found += [stem + end for end in _FINISHED if stem + end in new]
    return sorted(found)


def renaming_dirs(
    logs: LogList,
    labels: Sequence[str],
    state: State | None = None,
    renamed: Iterable[str] = (),
    gone: Collection[str] = (),
) -> frozenset[str]:
    """Return the key prefixes of the dirs that name logs the #2405 way (see the module).

    ``labels``: every dir's key prefix; ``renamed``: the keys this build found renamed from
    ``.running``; ``gone``: the keys gone since the last build (forgotten from the state).
    """
    found = logs.running_dirs()
    found.update(label_of(key) for key in renamed)
    if state is not None:
        left = set(gone)
        found.update(
            label for label in labels if label not in found and state.renamed_in(label, left)
        )
    return frozenset(found)


def rejudged(state: State, renaming: frozenset[str], limits: LogLimits) -> set[str]:
    """Return the keys of logs without JobEnd whose dir's naming now says otherwise.

    A log read as running in a dir that shows the #2405 naming now ended unrecorded; one that
    ended unrecorded by its dir's naming alone, in a dir that no longer shows it, may be
    running (its age and compression aside).
    """
    found = set()
    if renaming:
        running = state.running_logs()
        found = {k for k in running if not k.endswith(RUNNING) and label_of(k) in renaming}
    for key, mtime_ns in state.running_logs(Classification.ENDED_UNRECORDED).items():
        if (
            label_of(key) not in renaming
            and limits.stale(mtime_ns) is None
            and compression_of(Path(key)) is None
        ):
            found.add(key)
    return found
