"""The log dirs' listings from a watcher's file events: the last build's, with what changed.

``sitegen build --watch`` hears of every name that came or went in a log dir; listing a dir of
100,000 logs again to learn it costs a ``readdir`` of all of them. Given the paths the events
named, a build takes the names the state holds, puts in those there now and takes out those
gone. It does so only where the state's names are the listing's: local dirs whose names are
trusted (``LogSource.trust_names``), watched by inotify or polling; a prefix in object storage
is listed (its listing carries the sizes and ETags the build compares). Any path it cannot
place (a log dir itself, a file deeper down or outside every log dir) means a listing, as does
the watcher when it may have missed events (a failed publish, a dir come back, every
``RELIST_SECONDS``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from sitegen.builder.state.store import State
from sitegen.eventlog.discover import key_prefixes
from sitegen.eventlog.sources import LogSource, names_trusted

# However complete the events seem, the watcher lists the dirs at least this often: inotify
# drops events when its queue overflows, and a name missed would wait for the next listing.
RELIST_SECONDS = 300.0


def hinted_listings(
    log_dirs: Sequence[LogSource], state: State | None, hint: Iterable[str]
) -> list[list[str]] | None:
    """Return each log dir's names: the state's, changed by ``hint``; None: list them instead.

    ``hint``: every path a watcher's events named since the last build. Whether each is in
    its dir now is asked of the file system, not of the events: a burst that adds and
    removes a file names it twice, in no order.
    """
    if state is None or not names_trusted(log_dirs) or any(d.polled for d in log_dirs):
        return None
    where: dict[str, int] = {}  # each dir's path (as given, and resolved) -> its position
    for n, log_dir in enumerate(log_dirs):
        local = log_dir.local
        if local is None:
            return None
        where[os.path.normpath(local)] = where[os.path.realpath(local)] = n
    changes: list[tuple[int, str, bool]] = []
    for path in hint:
        if os.path.normpath(path) in where:
            return None  # a log dir itself came or went: list it
        parent, name = os.path.split(os.path.normpath(path))
        at = where.get(parent)
        if at is None:
            # Deeper down a log dir, or elsewhere (a notes dir, the templates; or a path
            # named another way than the dir was): list, rather than miss a log.
            return None
        changes.append((at, name, os.path.lexists(path)))
    labels = key_prefixes(log_dirs)
    names: list[set[str]] = [set() for _ in log_dirs]
    for key in state.identities().keys:
        for n, label in enumerate(labels):
            if key.startswith(label):
                names[n].add(key[len(label) :])
                break
    for n, name, added in changes:
        if added:
            names[n].add(name)
        else:
            names[n].discard(name)
    return [sorted(found) for found in names]
