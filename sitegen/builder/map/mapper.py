"""Where the map step runs: one interface, this machine's worker processes or a Dask cluster.

A build asks its mapper to get ready (``prepare``: the local pool forks its workers before the
logs are listed when the build maps every log), to map the logs it picked into the staging
directory (``map``: each log's outcome handed on in order), to rest through the reduce, and to
close. ``builder.compose`` picks one from the options; nothing else asks which it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from sitegen.builder.map.pool import EarlyWorkers, pool_map

if TYPE_CHECKING:
    from sitegen.builder.map.context import MapContext
    from sitegen.builder.map.jobs import OnResult, Progress
    from sitegen.diagnose.recurring import RunContext
    from sitegen.eventlog.logfiles import LogList
    from sitegen.publish.bucket import Uploader

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


class Uploads(Protocol):
    """What a publish target lets the map step's workers do: put new jobs where the site goes.

    A bucket target's (``builder.targets.bucket.BucketUploads``): the uploader goes to the workers
    once a map; what they put up, and the jobs of workers that died, come back to it.
    """

    def uploader(self) -> Uploader:
        """Return what the workers upload with (made when first asked: it may read a lot)."""

    def note(self, uploaded: Mapping[str, str]) -> None:
        """Note the objects a worker put at their keys (key: SHA-256)."""

    def suspect(self, roots: Iterable[str]) -> None:
        """Note job directories a worker may have put objects in before it died."""


class Mapper(Protocol):
    """Runs the map step over logs and hands each outcome on, in order."""

    def prepare(self, maps_every_log: bool) -> None:
        """Get ready before the logs are listed (``maps_every_log``: no state to go on)."""

    def map(
        self,
        logs: LogList,
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        on_result: OnResult,
        progress: Progress | None = None,
        contexts: Mapping[int, RunContext] | None = None,
        uploads: Uploads | None = None,
    ) -> None:
        """Map the logs at ``which`` into ``staging``; hand each outcome to ``on_result``.

        ``uploads``: what the publish target lets workers put straight where the site goes;
        a mapper whose workers cannot reach the staging dir, or this machine's, leaves it.
        """

    def each(
        self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], alone_below: int = 0
    ) -> Generator[R]:
        """Yield ``fn(shared, item)`` for each item in order, run where the map step runs.

        ``fn`` reads logs, as the map step does (the peeks before it), and writes nothing.
        Fewer than ``alone_below`` items run in this process when no workers were started for
        the build.
        """

    def rest(self) -> None:
        """Stop what holds memory while the reduce runs (a later map starts it again)."""

    def close(self) -> None:
        """Release the workers."""


class LocalMapper:
    """The map step in this machine's processes: in this one when few, else forked workers."""

    def __init__(self, workers: int | None) -> None:
        self.workers = workers
        self.early = EarlyWorkers(workers)

    def prepare(self, maps_every_log: bool) -> None:
        """Fork the workers now when the build maps every log (before the listing)."""
        if maps_every_log:
            # A forked worker starts with all its parent holds: forked before the listing (a
            # string per log), each stays small. What the map step runs is imported first: each
            # worker imported these 98 modules for itself, 0.2 s of CPU a worker.
            import sitegen.builder.map.jobs  # noqa: F401

            self.early.fork()

    def map(
        self,
        logs: LogList,
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        on_result: OnResult,
        progress: Progress | None = None,
        contexts: Mapping[int, RunContext] | None = None,
        uploads: Uploads | None = None,
    ) -> None:
        """Map the logs at ``which`` in parallel when it pays (``jobs.map_here``).

        ``uploads`` is left: this machine's workers write the staging dir, which the target
        publishes.
        """
        from sitegen.builder.map.jobs import map_here

        workers, pool = self.workers, self.early.pool
        map_here(logs, which, staging, map_context, workers, on_result, progress, contexts, pool)

    def each(
        self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], alone_below: int = 0
    ) -> Generator[R]:
        """Yield ``fn(shared, item)`` over the items, in the workers forked early if any."""
        pool = self.early.pool
        workers = 1 if pool is None and len(items) < alone_below else self.workers
        with pool_map(functools.partial(fn, shared), items, workers, pool) as results:
            yield from results

    def rest(self) -> None:
        """Stop the workers: idle through the reduce, they would count with what it holds."""
        self.early.close()

    def close(self) -> None:
        """Stop the workers."""
        self.early.close()
