"""What a build did: the report the commands print and scripts read."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder.state.store import open_published
from sitegen.model import JobSummary, Problem, RunningJob

if TYPE_CHECKING:
    from sitegen.publish.archive import ArchiveResult


@dataclass
class PublishReport:
    """What a publish target did: a local directory's, which a bucket target's extends."""

    # The site paths an in-place update changed (job dirs, listing files, removed paths);
    # None after a full build, which swapped the whole site in.
    changed: list[str] | None = None

    def where(self) -> str | None:
        """Return where the site went when it is not the build's output (a bucket's URL)."""
        return None

    def counts(self) -> dict[str, int]:
        """Return what the target did beyond the local site, by the JSON keys it is printed as."""
        return {}


@dataclass
class BuildReport:
    """What a build did, for the CLI summary and for scripts."""

    output: Path
    logs: int
    published: int
    running: list[RunningJob]
    problems: list[Problem]
    files_written: int
    bytes_written: int
    seconds: float
    rebuilt: int = 0
    up_to_date: bool = False
    # Completed jobs left off the site by --max-jobs / --max-age, and by --max-site-size.
    retention_dropped: int = 0
    size_dropped: int = 0
    # Whether the raw logs were left out so that more jobs fit in --max-site-size.
    raw_logs_dropped: bool = False
    # Bytes of the published site (its jobs' files and the site-wide files).
    site_bytes: int = 0
    classifications: dict[str, int] = field(default_factory=dict)
    archive: ArchiveResult | None = None
    # What the publish target did to put the site in place (its own report; a bucket's
    # adds its sync): None for a build with nothing to do into a local directory.
    publish: PublishReport | None = None
    # Whether the log dirs' listings came from a watcher's file events (builder/plan/events.py)
    # rather than from listing the dirs.
    listed_from_events: bool = False
    # The logs whose store failed to hand them over (retries spent), with why: left out of
    # this build and of its state, read again by the next one.
    unread: dict[str, str] = field(default_factory=dict)
    # The wall seconds of each step of a build that mapped something (map, select,
    # run_contexts, reduce, publish), in order; empty for a build with nothing to do.
    phases: dict[str, float] = field(default_factory=dict)
    # This process's CPU seconds in each of those steps (its threads; a pool's or Dask's
    # workers not counted).
    phases_cpu: dict[str, float] = field(default_factory=dict)

    @property
    def jobs(self) -> list[JobSummary]:
        """Return the published jobs, newest first, read from the site's state when asked."""
        # Not held: at 100,000 jobs that is most of a build's memory, and few callers ask.
        state = open_published(self.output)
        if state is None:
            return []
        try:
            return list(state.newest())
        finally:
            state.close()

    @property
    def skipped(self) -> Counter[str]:
        """Count skipped logs by reason."""
        return Counter(str(p.kind) for p in self.problems if p.skipped)


class Phases:
    """The wall time of each step of a build, and this process's CPU in it, for the report.

    A model's figures, not a guess: the CPU (all this process's threads, Dask's client's
    included; not the workers') tells what the command itself spends on each step.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._since = time.perf_counter()
        self._cpu_since = time.process_time()

    def done(self, name: str) -> None:
        """Note that step ``name`` ended now (it began when the previous one ended)."""
        now, cpu = time.perf_counter(), time.process_time()
        self.seconds[name] = now - self._since
        self.cpu[name] = cpu - self._cpu_since
        self._since, self._cpu_since = now, cpu
