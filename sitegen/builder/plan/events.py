"""The names a watcher's file events say came into the log dirs or went, without a listing.

``sitegen build --watch`` hears of every name that came or went in a log dir; listing a dir of
100,000 logs again to learn it costs a ``readdir`` of all of them, and rebuilding the listing
from the state a scan of every known log. An event is a log new or gone: each path the events
named is placed in its dir (``LogSource.log_named``) and looked up on the file system, and the
listing diff (builder/plan/listing.py, ``logs_from_events``) splices those names into the state's.
It does so only where the state's names are the listing's (names trusted, decided once a
build: ``BuildRun.trusting``). Any path no dir places (a log dir itself, a file deeper down or
outside every log dir, any path of a dir whose events name no log) means a listing, as does
the watcher when it may have missed events (a failed publish, a dir come back, every
``RELIST_SECONDS``).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from sitegen.eventlog.sources import LogSource

# However complete the events seem, the watcher lists the dirs at least this often: inotify
# drops events when its queue overflows, and a name missed would wait for the next listing.
RELIST_SECONDS = 300.0


@dataclass
class KeptLogs:
    """The logs a watcher's last build ended with, kept for the next build's listing diff.

    In key order, as the state holds them. They are the state's while its selection record
    has the digest of the logs it was made from that they came with (``digest``): one row
    read, not one a log. Empty (``digest`` ""): none kept, the state's are read.
    """

    keys: list[str] = field(default_factory=list)
    sizes: array[int] = field(default_factory=lambda: array("q"))
    times: array[int] = field(default_factory=lambda: array("q"))
    digest: str = ""


@dataclass
class Hint:
    """What a watcher hands each build: the paths its events named, and the logs it kept."""

    # Every path the events named since the last build; None: list the dirs (the events
    # may not tell all: the first build, a failed publish, a dir come back, RELIST_SECONDS).
    paths: frozenset[str] | None
    kept: KeptLogs = field(default_factory=KeptLogs)


class Heard(NamedTuple):
    """Each log dir's names the events found there now, and those they found gone."""

    there: list[set[str]]
    gone: list[set[str]]


def heard_names(log_dirs: Sequence[LogSource], paths: Iterable[str]) -> Heard | None:
    """Return the names ``paths`` (every path a watcher's events named) put in and take out.

    None: a path no dir places: list the dirs instead. Whether each log is there now is asked
    of the file system, not of the events: a burst that adds and removes a file names it
    twice, in no order.
    """
    heard = Heard([set() for _ in log_dirs], [set() for _ in log_dirs])
    for path in paths:
        for n, log_dir in enumerate(log_dirs):
            name = log_dir.log_named(path)
            if name is not None:
                (heard.there if os.path.lexists(path) else heard.gone)[n].add(name)
                break
        else:
            # A log dir itself came or went, a path deeper down one, or elsewhere (a notes
            # dir, the templates; or a path named another way than the dir was): list,
            # rather than miss a log.
            return None
    return heard
