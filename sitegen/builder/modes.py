"""A build that maps what changed: a full build and an incremental one, and what they share.

Both foresee the run contexts of the logs the plan picked and map them, select what the site
keeps, render again the pages whose context is not the one foreseen and those selection newly
publishes, and reduce.
They differ only where they must, each an implementation of ``BuildSteps`` chosen once
(``pipeline._steps``): a ``FullBuild`` writes a new state and has the publish target swap a
whole new site in; an ``UpdateBuild`` updates the published state, and has the target update
the site in place (``builder.targets.local``: the target owns the staging dir and the swap).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder.contexts import foresight
from sitegen.builder.contexts.foresight import forecast
from sitegen.builder.contexts.peek import Peeked, keep_here, peek
from sitegen.builder.map.context import MapContext
from sitegen.builder.map.jobs import job_roots, part_dir, root_parents
from sitegen.builder.map.mapped import MapResult, MapResults, Pick
from sitegen.builder.plan.planner import BuildRun, LeanerSite, figures
from sitegen.builder.report import BuildReport
from sitegen.builder.select.selection import Selection, choose
from sitegen.builder.state.peeked_runs import PeekRow
from sitegen.builder.state.records import Chosen, LogOutcome
from sitegen.builder.state.schema import run_source, source_digest
from sitegen.builder.state.store import State
from sitegen.builder.state.writes import Put
from sitegen.diagnose.recurring import Run
from sitegen.eventlog.logfiles import LogsAt
from sitegen.publish.writer import SiteWriter

if TYPE_CHECKING:
    from sitegen.builder.map.jobs import Progress
    from sitegen.builder.targets.local import Publishing
    from sitegen.diagnose.recurring import ContextKey, RunContext

# Below this many logs to peek at, forking workers (none were started for the build) costs
# more than peeking in this process, at about 0.1 ms a small log.
PEEK_ALONE_BELOW = 1000
# Mapped logs put into the state at a time.
PUT_CHUNK = 500


class BuildSteps(ABC):
    """One build's map, selection, run contexts, reduce and publish, and what it mapped.

    The steps both kinds of build share; ``FullBuild`` and ``UpdateBuild`` are the rest.
    """

    def __init__(
        self,
        run: BuildRun,
        map_context: MapContext,
        site: Publishing,
        staging: Path,
        state: State,
    ) -> None:
        self.run = run
        self.map_context = map_context
        self.pages = map_context.pages
        self.site = site
        self.staging = staging
        self.state = state
        self.results = MapResults(run.logs)
        self.chosen: Selection | None = None
        self.mapped: set[int] = set()
        # Logs to render again, with their run context.
        self.again: dict[int, ContextKey | None] = {}
        # Each log's forecast (``foresight.forecast``) until its map is checked against it,
        # by log index (8 bytes a log; 0: none), and the runs (id: name) whose peek the map
        # step told otherwise.
        self.forecasts = array("q", bytes(8 * len(run.logs)))
        self.misread: dict[str, str] = {}
        self.writer = SiteWriter(self.staging, fresh=True)
        # Mapped logs not yet put into the state (put a chunk at a time).
        self.puts: list[Put] = []

    @abstractmethod
    def on_site(self, n: int) -> bool:
        """Tell whether the ``n``-th log's job is on the site this build publishes."""

    @abstractmethod
    def pick(self, outcome: LogOutcome) -> Pick | None:
        """Return what ``touched`` needs of a mapped log (None: it touches every name)."""

    @abstractmethod
    def known_before(self, n: int) -> bool:
        """Tell whether the state may hold the ``n``-th log already (then it is replaced)."""

    def record(self, n: int, outcome: LogOutcome, parted: bool) -> None:
        """Put one mapped log into the state as it arrives (the build keeps only its pick)."""
        log = self.run.logs[n]
        if outcome.retry:
            # Its store erred: not damage. Left out of the state (a log it knew keeps its
            # row and its pages), so the next build finds it new or changed and reads it.
            self.run.unread[log.key] = outcome.problems[0].message
            if self.forecasts[n]:
                self.check_forecast(n, outcome)  # its peeked run's pages are redone
                self.forecasts[n] = 0
            return
        self.results[n] = MapResult(
            self.pick(outcome),
            outcome.summary.job_id if outcome.roots and outcome.summary else None,
            outcome.files,
            outcome.bytes,
            parted,
        )
        if self.forecasts[n]:
            self.check_forecast(n, outcome)
            self.forecasts[n] = 0
        known = self.known_before(n)
        self.puts.append(Put(log.key, log.size, log.mtime_ns, outcome, self.on_site(n), known))
        if len(self.puts) >= PUT_CHUNK:
            self.flush()

    def check_forecast(self, n: int, outcome: LogOutcome) -> None:
        """Note a run whose peek the map step told otherwise: pages compared with it are redone."""
        summary = outcome.summary
        source = run_source(outcome.sha256, outcome.file)
        if summary is None or self.forecasts[n] != forecast(Run.of(summary, source), summary):
            told = self.state.peeked_run(n)
            assert told is not None
            job_id, name = told
            self.misread[job_id] = name
            if summary is not None:
                self.misread[summary.job_id] = summary.job_name

    def flush(self) -> None:
        """Put the logs recorded since the last flush into the state."""
        self.state.put_many(self.puts)
        self.puts.clear()

    def map_logs(
        self,
        which: Sequence[int],
        progress: Progress | None = None,
        contexts: Mapping[int, RunContext] | None = None,
    ) -> None:
        """Map the logs at ``which`` (wherever the mapper runs) and record each in the state."""
        run, step, on_result = self.run, self.map_context, self.record
        uploads = self.site.uploads  # what the target lets workers put up (None: nothing)
        run.mapper.map(run.logs, which, self.staging, step, on_result, progress, contexts, uploads)
        self.flush()

    def map_changed(self, progress: Progress | None) -> None:
        """Map the logs the plan picked, after forgetting those gone (selection reads all)."""
        run = self.run
        if progress:
            progress.start(len(run.todo))
        self.site.make_dirs(root_parents(self.pages))
        self.state.forget(run.gone)
        self.state.set_renamed(run.renamed, run.gone)
        self.state.touch(run.moved)
        contexts, order = self.foresee(run.todo)
        self.map_logs(order, progress=progress, contexts=contexts)

    def foresee(self, which: Sequence[int]) -> tuple[foresight.Foreseen, list[int]]:
        """Peek at the logs at ``which``: their pages' run contexts, and the order to map them.

        The peeked runs wait in the state (``State.put_peeks``); the contexts are made a name
        at a time as the map asks, so the logs are mapped a name's runs together.
        """
        run = self.run
        logs = LogsAt(run.logs, which)
        keep_here()  # peeked here, the logs' bytes are passed on to the map step
        with contextlib.closing(
            run.mapper.each(peek, self.map_context.limits, logs, PEEK_ALONE_BELOW)
        ) as peeks:
            self.state.put_peeks(self._peek_rows(which, peeks))
        named = self.state.peeked_in_name_order()
        listed = bytearray(len(run.logs))
        for n in named:
            listed[n] = 1
        unpeeked = {run.logs.keys[n] for n in which if not self.forecasts[n]}
        order = named + [n for n in which if not listed[n]]
        return foresight.Foreseen(self.state, unpeeked), order

    def _peek_rows(self, which: Sequence[int], peeks: Iterable[Peeked | None]) -> Iterator[PeekRow]:
        """Yield the state's row of each log that could be peeked at, noting its forecast."""
        logs = self.run.logs
        keys = logs.keys
        for n, found in zip(which, peeks, strict=True):
            if found:
                told, summary = found
                self.forecasts[n] = forecast(told, summary)
                # The map step takes its digest, wherever it runs: hashed once a build.
                logs.note_digest(n, source_digest(told.source, keys[n]))
                yield n, keys[n], told, summary

    def select(self) -> tuple[Chosen, set[int]]:
        """Select what the site keeps, record it; return it and the logs to render late."""
        run, state = self.run, self.state
        chosen = self.chosen = choose(state, run.options, run.stamp)
        if chosen.leaner_fits_more:
            raise LeanerSite
        chose = figures(chosen, run)
        state.set_chosen(chose)
        self.note_mapped()
        # A reused log may be published now though it was not before (it lost a duplicate,
        # or retention left it out): its files are not on the site, so render them.
        index = run.logs.position
        late = {index(key) for key, now in chosen.flips.items() if now} - self.mapped
        # What the state knew of the logs flipped by selection alone is read first.
        unread = [k for k in chosen.flips if k not in run.known and index(k) not in self.results]
        run.known.update(state.known(unread))
        state.set_published(chosen.flips.items())
        return chose, late

    def note_mapped(self) -> None:  # noqa: B027 (a full build has nothing to note)
        """Remember which logs the map step read (for ``on_site``), once selection is made."""

    @abstractmethod
    def changed(self) -> set[str]:
        """Return the keys of the logs mapped, removed, or published or left out anew."""

    @abstractmethod
    def touched(self, changed: set[str]) -> tuple[list[str] | set[str], set[int]]:
        """Return the job names and the start times of the jobs whose listing may change."""

    @abstractmethod
    def data_changed(self) -> set[str] | None:
        """Return the keys whose SQL tables' rows may have changed (None: every log's)."""

    @abstractmethod
    def site_files_before(self) -> set[str]:
        """Return the site-wide files the published site held before this build."""

    def put_in_place(
        self, report: BuildReport, site_files: set[str], before: PublishedBefore
    ) -> None:
        """Have the target put the site in place; count the files."""
        replaced = self._swap_or_update(report, site_files, before)
        # Site-wide files count when they reached the site: in place, unchanged ones do not.
        on_site = [f for n, f in self.results.items() if self.on_site(n)]
        report.files_written = sum(f.files for f in on_site) + replaced[0]
        report.bytes_written = sum(f.bytes for f in on_site) + replaced[1]

    @abstractmethod
    def _swap_or_update(
        self, report: BuildReport, site_files: set[str], before: PublishedBefore
    ) -> tuple[int, int]:
        """Have the target swap or update the site; return the site-wide files and bytes."""

    def retrend(self, names: list[str] | set[str], late: set[int]) -> set[int]:
        """Recompute the trends of ``names``; note the pages to render again for them.

        A page is rendered again when its context is not the one it was rendered with (a
        run removed, left out, published anew or come in out of order), when this build
        rendered it comparing with a run whose peek the map step told otherwise
        (``misread``: the key names the baseline, not its figures), and when selection newly
        publishes it (``late``). Returns the start times of the runs whose regression
        findings changed.
        """
        index = self.run.logs.position
        self.again.update(dict.fromkeys(late))
        moments: set[int] = set()
        names = {*names, *filter(None, self.misread.values())}
        for update in foresight.update_trends(self.state, names, self.pages, self.writer):
            moments |= update.moments
            for key, context_key, stale in update.runs:
                n = index(key)
                misread = n in self.results and context_key and context_key.baseline in self.misread
                if n in late or stale or misread:
                    self.again[n] = context_key
        return moments

    def render_again(self) -> None:
        """Map again the logs whose pages a new context or publication needs rendered."""
        # Idle through the reduce, the workers would count with what this process holds then.
        # The few logs rendered again rarely need a pool.
        self.run.mapper.rest()
        written = [n for n in self.again if n in self.results]
        foresight.discard_renders(self.pages, self.staging, written, self.results)
        contexts = foresight.full_contexts(self.state, _with_context(self.again))
        self.map_logs(sorted(self.again), contexts=contexts)

    def moves(self) -> tuple[Iterator[tuple[Path, str]], list[str]]:
        """Return the mapped jobs' moves into the site (made as taken), and the roots not to.

        Those not to publish are jobs a worker wrote straight into the staging dir that are not
        published after all (a duplicate that lost, or outside the retention).
        """
        results, pages = self.results, self.pages
        unpublished = [
            root
            for n, done in results.items()
            if done.job_id is not None and not self.on_site(n) and not done.parted
            for root in job_roots(pages, done.job_id)
        ]

        def moves() -> Iterator[tuple[Path, str]]:
            # One at a time: an update of 100,000 logs moves 300,000 directories.
            for n, done in results.items():
                if done.job_id is not None and self.moves_job(done) and self.on_site(n):
                    source = part_dir(self.staging, n) if done.parted else self.staging
                    for root in job_roots(pages, done.job_id):
                        yield source / root, root

        return moves(), unpublished

    def moves_job(self, done: MapResult) -> bool:
        """Tell whether a mapped job's directories move when the site is put in place."""
        return True


class FullBuild(BuildSteps):
    """A build with no state to go on: a new state, and a whole new site swapped in."""

    def on_site(self, n: int) -> bool:
        """Tell whether the ``n``-th log's job is on the site this build publishes."""
        # A full build records every job it maps as published, and selection flips off the
        # few it leaves out: flipping 100,000 rows on took 20 s.
        first = self.results.has_job(n)
        if self.chosen is None:
            return first
        return self.chosen.flips.get(self.run.logs.keys[n], first)

    def pick(self, outcome: LogOutcome) -> None:
        """Return nothing: a full build touches every name."""
        return None

    def known_before(self, n: int) -> bool:
        """Tell whether the new state holds the log already: only when it is rendered again."""
        return n in self.again

    def changed(self) -> set[str]:
        """Return nothing: every log changed, so the names and days are all of them."""
        return set()

    def touched(self, changed: set[str]) -> tuple[list[str], set[int]]:
        """Return every published name (no start times: every listing is written)."""
        return self.state.published_names(), set()

    def data_changed(self) -> None:
        """Return None: every log's rows are new."""
        return None

    def site_files_before(self) -> set[str]:
        """Return nothing: the site is swapped in whole."""
        return set()

    def moves_job(self, done: MapResult) -> bool:
        """Tell whether a mapped job moves: only from a part dir (the others are in place)."""
        # The staging dir becomes the site: a path and a test per directory of every job
        # was most of publishing a full build.
        return done.parted

    def _swap_or_update(
        self, report: BuildReport, site_files: set[str], before: PublishedBefore
    ) -> tuple[int, int]:
        """Swap the whole new site in, its state committed first."""
        state = self.state
        moves, unpublished = self.moves()

        def commit() -> None:
            # The site is arranged in the staging dir: measure it, record that, commit.
            report.site_bytes = state.record_site_bytes(self.staging)
            state.commit()
            state.close()

        self.site.replace(moves, unpublished, commit)
        return self.writer.files_written, self.writer.bytes_written


class UpdateBuild(BuildSteps):
    """A build of what changed since the published state: the site updated in place."""

    def on_site(self, n: int) -> bool:
        """Tell whether the ``n``-th log's job is on the site this build publishes."""
        # A log it mapped is on the site when selection flipped it on; one it did not map
        # stays as it was unless flipped (a log rendered again is published).
        if self.chosen is None:
            return False  # none is until selected
        return self.chosen.flips.get(self.run.logs.keys[n], n not in self.mapped)

    def pick(self, outcome: LogOutcome) -> Pick | None:
        """Return the log's name and start time, for ``touched`` (None: not a completed job)."""
        return Pick.of(outcome)

    def known_before(self, n: int) -> bool:
        """Tell whether the state may hold the log already: it may."""
        return True

    def note_mapped(self) -> None:
        """Remember which logs the map step read (a full build maps all: a set tells nothing)."""
        self.mapped.update(self.results)

    def changed(self) -> set[str]:
        """Return the keys of the logs mapped, removed, or published or left out anew."""
        assert self.chosen is not None
        run = self.run
        return {run.logs.keys[n] for n in self.results} | self.chosen.flips.keys() | set(run.gone)

    def touched(self, changed: set[str]) -> tuple[set[str], set[int]]:
        """Return the job names and the start times of the jobs whose listing may change.

        Those of the jobs it mapped, and (as the state knew them) of the logs it mapped,
        removed, published or left out anew (``changed``, by key).
        """
        picks = [f.pick for f in self.results.values() if f.pick is not None]
        known = [k for key in changed if (k := self.run.known.get(key)) is not None and k.job_id]
        names = {p.job_name for p in picks} | {k.job_name or "" for k in known}
        names.discard("")
        moments = {p.start_time for p in picks} | {k.start_time for k in known}
        return names, moments

    def data_changed(self) -> set[str]:
        """Return the keys of the logs mapped (rendered again too), removed, or (un)published."""
        return self.changed()

    def site_files_before(self) -> set[str]:
        """Return the site-wide files the published site holds, as its state records them."""
        return self.state.site_files()

    def _swap_or_update(
        self, report: BuildReport, site_files: set[str], before: PublishedBefore
    ) -> tuple[int, int]:
        """Update the published site in place, job directory by job directory."""
        state = self.state
        moves, _ = self.moves()
        dropped = before.site_files - site_files
        gone = sorted(before.gone_roots(self) | dropped)
        output = self.run.options.output
        written = self.writer.written_names()

        def finish() -> None:
            # The site is in place: measure what it wrote, record that in the transaction.
            report.site_bytes = state.record_site_bytes(output, written)
            state.commit()

        return self.site.update(moves, written, gone, finish)


class PublishedBefore:
    """What the published site held before an incremental build changed it."""

    def __init__(self, rebuild: BuildSteps, changed: set[str]) -> None:
        self.changed = changed
        self.site_files = rebuild.site_files_before()

    def gone_roots(self, rebuild: BuildSteps) -> set[str]:
        """Return the job directories the site held that no published log holds now.

        Only a log this build mapped, removed or (un)published can have let go of one; a
        directory is named by its job id, so only a published log of that id can hold it still.
        """
        known = rebuild.run.known
        old = {
            root: k.job_id
            for key in self.changed
            if (k := known.get(key)) is not None and k.published and k.job_id
            for root in k.roots
        }
        if not old:
            return set()
        return old.keys() - rebuild.state.published_roots(sorted(set(old.values())))


def _with_context(keys: dict[int, ContextKey | None]) -> dict[int, ContextKey]:
    """Return the keys that are not None (a run alone of its name has no context)."""
    return {n: key for n, key in keys.items() if key is not None}
