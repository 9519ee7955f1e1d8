"""The build pipeline: a map over independent logs, a small reduce, an atomic publish.

Each step is its own function: stop early when nothing changed, plan which logs to map
(new, changed, or with a changed note) from the state's identities, map them, select what the
site keeps by query (``selection``), map the logs that selection newly publishes, record it all
in the state, reduce, and publish. Only ``sitegen.publish``
touches the staging and output trees.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder import gcpause, guard, manifest, parallel, selection
from sitegen.builder.fresh import Fresh, FreshLogs, Pick
from sitegen.builder.idcollisions import published_collisions
from sitegen.builder.manifest import DAY_MS, Known, LogOutcome, State
from sitegen.builder.notes import NoteIndex, notes_dirs
from sitegen.builder.retention import parse_age
from sitegen.builder.selection import Selection
from sitegen.errors import PublishError, SitegenError, UsageError
from sitegen.eventlog.discover import (
    check_log_dir,
    discover_all,
    discover_keys,
    distinct_dirs,
    has_logs,
    key_prefixes,
    list_dirs,
)
from sitegen.eventlog.limits import MAX_LINE_BYTES, MAX_LOG_BYTES, LogLimits
from sitegen.eventlog.logfiles import LogFile, LogList
from sitegen.layout import DEFAULT_TITLE, MANIFEST_NAME
from sitegen.model import Classification, JobSummary, Problem, RunningJob
from sitegen.publish.buildlock import exclusive
from sitegen.publish.writer import Publication, SiteWriter
from sitegen.render import urls
from sitegen.render.templates import template_sources

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from sitegen.builder.mapstep import Progress
    from sitegen.diagnose.recurring import ContextKey
    from sitegen.publish.archive import ArchiveResult
    from sitegen.render.pages import PageRenderer


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on."""

    # Current + archive, several schedulers: one or more directories.
    log_dirs: tuple[Path, ...]
    output: Path
    strict: bool = False
    workers: int | None = None
    clean: bool = False
    pages_dir: Path | None = None
    templates_dir: Path | None = None
    robots: bool = False
    title: str = DEFAULT_TITLE
    # Where the site is served from (``/``, ``/history/``, ``https://…/``): the 404 page,
    # which hosts show at any missing address, links absolutely from it. None: relative.
    base_url: str | None = None
    # After publishing, also pack the site into this .tar.gz / .zip (outside output and logs).
    archive: Path | None = None
    # Retention of the site (logs are never touched): the newest N, those ended recently,
    # the newest that fit in this many bytes.
    max_jobs: int | None = None
    max_age: str | None = None
    max_site_size: int | None = None
    # Publish each job's original log, gzip-compressed, beside its pages.
    raw_logs: bool = True
    # Let log dirs without any log replace a site that has jobs (see builder/guard.py).
    allow_empty: bool = False
    # Read logs and notes linked to files outside the log dirs (see eventlog/filekind.py).
    follow_links: bool = False
    # Trust a log read as a completed job never to change in place: when the log dirs list
    # the same names as last time and no other log changed, nothing did (no stat of each).
    trust_finished_logs: bool = False
    # The most one log may hold once decompressed, and one of its lines (eventlog/limits.py).
    max_log_size: int = MAX_LOG_BYTES
    max_line_size: int = MAX_LINE_BYTES

    def __post_init__(self) -> None:
        """Normalise the log dirs to a tuple of paths (one path is accepted); check options."""
        dirs: object = self.log_dirs
        if isinstance(dirs, str | os.PathLike):
            object.__setattr__(self, "log_dirs", (Path(dirs),))
        else:
            # The same directory named twice (``logs``, ``./logs/``) is read once.
            dirs = distinct_dirs([Path(d) for d in self.log_dirs])[0]
            object.__setattr__(self, "log_dirs", tuple(dirs))
        if self.max_age is not None:
            parse_age(self.max_age)  # fail before any work
        if self.base_url is not None:
            try:
                object.__setattr__(self, "base_url", urls.base_url(self.base_url))
            except ValueError as exc:
                raise UsageError(str(exc)) from None


# Options that change how a build runs, or which jobs are listed, but not a byte of
# any job's own files: changing them does not force every job to be rebuilt.
RUN_OPTIONS = frozenset(
    {
        "log_dirs",
        "output",
        "strict",
        "workers",
        "clean",
        "archive",
        "max_jobs",
        "max_age",
        "max_site_size",
        "allow_empty",
        "trust_finished_logs",
    }
)


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

    @property
    def jobs(self) -> list[JobSummary]:
        """Return the published jobs, newest first, read from the site's state when asked."""
        # Not held: at 100,000 jobs that is most of a build's memory, and few callers ask.
        state = manifest.open_published(self.output)
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


def check_paths(options: BuildOptions) -> None:
    """Refuse option combinations that could lose logs or a published site."""
    out = options.output.resolve()
    for log_dir in options.log_dirs:
        check_log_dir(log_dir)
        logs = log_dir.resolve()
        if out == logs or out.is_relative_to(logs):
            message = "output dir must not be the event-log dir or inside it"
            raise UsageError(message, options.output)
        if logs.is_relative_to(out):
            # Publishing swaps the output away and deletes the old one: logs inside would go too.
            raise UsageError("event-log dir must not be inside the output dir", options.output)


def build_timestamp() -> float:
    """Return the build time, honouring SOURCE_DATE_EPOCH for reproducible sites."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return float(epoch) if epoch else time.time()


def select(state: State, options: BuildOptions, now: float) -> Selection:
    """Resolve duplicate ids, then keep what retention and the size limit allow (by query)."""
    cutoff = None
    if options.max_age:
        cutoff = (now - parse_age(options.max_age)) * 1000
    return selection.select(
        state, options.max_jobs, cutoff, options.max_site_size, options.raw_logs
    )


def figures(chosen: Selection, run: _Run) -> manifest.Chosen:
    """Return what the report needs of a selection, as the state keeps it for the next build."""
    return manifest.Chosen(
        _selection_options(run.options),
        chosen.losers,
        chosen.published,
        chosen.retention_dropped,
        chosen.size_dropped,
        run.identities,
        run.listing,
    )


def _selection_options(options: BuildOptions) -> list[int | None]:
    """Return the options the selection depends on besides the logs (age aside)."""
    return [options.max_jobs, options.max_site_size]


# Run contexts made (their baselines' summaries decoded) and spliced in at a time.
CONTEXT_CHUNK = 1000


class _LeanerSite(Exception):
    """Raised when the site should go without raw logs: more jobs would fit in its size."""


def build(
    options: BuildOptions,
    progress: Progress | None = None,
    on_wait: Callable[[], None] | None = None,
) -> BuildReport:
    """Build the site from every log in the event-log dirs and publish it.

    A full build swaps a complete new site (and its state) in atomically. When the
    published site's state matches (same sitegen, templates and options), only logs
    that changed are read again and the site is updated in place, one job directory
    and one listing file at a time, each step atomic and in an order that keeps every
    listed job complete; the state's transaction commits last. Builds into one output
    take turns; ``on_wait`` is called when this one has to wait for another.
    """
    check_paths(options)
    try:
        with exclusive(options.output, on_wait), gcpause.freezer() as freeze:
            # A build with no state to go on maps every log: fork its workers first.
            first = options.clean or not (options.output / MANIFEST_NAME).is_file()
            with parallel.early_pool(options.workers) if first else nullcontext() as pool:
                return _build(options, progress, freeze, pool)
    except OSError as exc:
        # A full or read-only disk, or permissions: say what and where, not a traceback.
        # The staging dir is gone by now; the published site is as it was, or (failing
        # half-way through an in-place update) consistent, and redone by the next build.
        where = exc.filename or options.output
        raise PublishError(f"the build stopped: {exc.strerror or exc}", where) from exc
    except sqlite3.Error as exc:
        # Writing the state failed the same ways (SQLITE_FULL is a full disk): say it alike.
        full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        reason = os.strerror(errno.ENOSPC) if full else str(exc)
        raise PublishError(f"the build stopped: {reason}", options.output) from exc


@dataclass
class _Run:
    """One build's inputs, and what it has found out so far."""

    options: BuildOptions
    # Each log dir's names as listed (discover.list_dirs); the logs are made from them.
    listings: list[list[str]]
    stamp: float
    notes: NoteIndex
    fingerprint: str
    started: float
    state: State | None = None
    # What the state knew of the logs this build maps, removes, or (un)publishes.
    known: dict[str, Known] = field(default_factory=dict)
    # The logs to map (index into ``logs``): new, changed, or a published job's note changed.
    todo: Sequence[int] = ()
    # The logs the state holds that are gone, and those only touched (same bytes, new time).
    gone: list[str] = field(default_factory=list)
    moved: list[tuple[str, int]] = field(default_factory=list)
    # Workers forked before the logs were listed (a build with no state), else None.
    pool: Executor | None = None

    @functools.cached_property
    def logs(self) -> LogList:
        """Return every log, stat-ed, in order (made when first needed: see _quick_no_op)."""
        options = self.options
        return discover_all(options.log_dirs, options.follow_links, self.listings)

    @property
    def stat_ed(self) -> bool:
        """Tell whether every log was stat-ed (``logs`` made): a trusted no-op does not."""
        return "logs" in vars(self)  # what functools.cached_property fills

    @functools.cached_property
    def listing(self) -> str:
        """Return the digest of the log dirs' listings (manifest.listing_digest), made once."""
        return manifest.listing_digest(self.options.log_dirs, self.listings)

    @functools.cached_property
    def identities(self) -> str:
        """Return the digest of every log's identity (manifest.identity_digest), made once."""
        return manifest.identity_digest(self.logs)


def _build(
    options: BuildOptions,
    progress: Progress | None,
    freeze: Callable[[], None],
    pool: Executor | None = None,
) -> BuildReport:
    """Build and publish the site; ``freeze`` hides what is alive from the collector.

    ``pool``: the map step's workers, when they were started before the logs were listed.
    """
    started = time.perf_counter()
    if options.archive is not None:
        from sitegen.publish.archive import check_archive_path  # tarfile, zipfile: when asked

        check_archive_path(options.archive, options.output, options.log_dirs)
    # Under --max-site-size raw logs go first when that lets more jobs fit: a site built so
    # stays so (its state says which), until --clean or other options build it afresh.
    lean = None
    if options.max_site_size is not None and options.raw_logs:
        lean = dataclasses.replace(options, raw_logs=False)
    run = _start(options, lean, started, freeze, pool)
    try:
        report = _run(run, progress, freeze)
    except _LeanerSite:
        assert lean is not None
        run = _start(dataclasses.replace(lean, clean=True), None, started, freeze, run.pool)
        report = _run(run, progress, freeze)
    except manifest.DAMAGE:
        if run.state is None:
            raise  # the state this build was writing: not damage, a real error
        # The published state is damaged where this build read it: build afresh (its
        # transaction rolled back; a full build swaps in a whole new site and state).
        afresh = dataclasses.replace(run.options, clean=True)
        run = _start(afresh, None, started, freeze, run.pool)
        report = _run(run, progress, freeze)
    report.raw_logs_dropped = lean is not None and not run.options.raw_logs
    report.archive = _archive(options, run.stamp)
    return report


def _start(
    options: BuildOptions,
    lean: BuildOptions | None,
    started: float,
    freeze: Callable[[], None],
    pool: Executor | None,
) -> _Run:
    """Gather the build's inputs and load the published state if it is of these options."""
    sources = template_sources(options.templates_dir)
    run = _Run(
        options,
        list_dirs(options.log_dirs),
        build_timestamp(),
        NoteIndex(notes_dirs(options.log_dirs), options.follow_links),
        manifest.fingerprint(options, sources, RUN_OPTIONS),
        started,
        pool=pool,
    )
    # Sweep what killed builds left (every build, a no-op too), refuse replacing by mistake.
    guard.before_build(options, has_logs(run.listings))
    # The state lives until the build ends: the collector need not scan what is loaded.
    with gcpause.paused():
        if not options.clean:
            run.state = manifest.load(options.output, run.fingerprint)
            if run.state is None and lean is not None:
                # Built without raw logs to fit --max-site-size: go on as that site was built.
                fingerprint = manifest.fingerprint(lean, sources, RUN_OPTIONS)
                run.state = manifest.load(options.output, fingerprint)
                if run.state is not None:
                    run.options, run.fingerprint = lean, fingerprint
        freeze()
    return run


def _run(run: _Run, progress: Progress | None, freeze: Callable[[], None]) -> BuildReport:
    """Finish the build: nothing to do, or map, reduce and publish what changed."""
    try:
        if run.state is not None:
            quick = _quick_no_op(run)
            if quick is not None:
                return quick
        _plan(run)
        report = _no_op(run) if run.state is not None else None
        return report if report is not None else _rebuild(run, progress)
    finally:
        if run.state is not None:
            run.state.close()


def _quick_no_op(run: _Run) -> BuildReport | None:
    """Finish a build whose logs, notes and selection options are as last built; else None.

    Compares identities and the notes alone, and reports from what the state kept of the last
    selection: at 100,000 logs, loading every log's row and selecting again cost seconds.
    """
    state = run.state
    assert state is not None
    stored = state.chosen()
    options = run.options
    # Retention by age moves on with the clock: the full check decides.
    if stored is None or options.max_age is not None:
        return None
    if stored.options != _selection_options(options):
        return None
    trusting = options.trust_finished_logs
    same_listing = trusting and stored.listing == run.listing
    if same_listing:
        # The same names as last time: only the logs not finished then can have changed.
        if not _unfinished_unchanged(run, state):
            return None
    # One digest of every log's identity, against the one the last selection was made from:
    # reading 100,000 rows back from the state to compare them cost more than the stat calls.
    elif stored.identities != run.identities:
        return None
    if _noted(state, run.notes):
        return None
    if trusting and not same_listing:
        # Listed anew (first trusted build, a README added): the next one need not stat.
        state.set_listing(stored, run.listing)
    return _report(run, state, stored, rebuilt=0, up_to_date=True)


def _unfinished_unchanged(run: _Run, state: State) -> bool:
    """Tell whether every log the state holds as not completed is as it was (by its stat)."""
    had = state.unfinished()
    if not had:
        return True
    logs = discover_keys(run.options.log_dirs, had.keys(), run.options.follow_links)
    return logs is not None and all((log.size, log.mtime_ns) == had[log.key] for log in logs)


def _unchanged(log: LogFile, known: Known | None) -> bool:
    """Tell whether the log is unchanged since the state recorded it."""
    if known is None or known.size != log.size:
        return False
    if known.mtime_ns == log.mtime_ns:
        return True
    # Touched (copied, restored) but maybe not changed: the content hash decides.
    return known.sha256 == manifest.log_digest(log.path)


def _noted(state: State, notes: NoteIndex) -> set[str]:
    """Return the keys of the published jobs whose operator note was added, edited or removed."""
    had = state.note_digests()
    if not had and not notes.paths:
        return set()  # no note now or then: none can have changed
    ids = had.keys() | state.published_ids(sorted(notes.paths))
    changed = [job_id for job_id in ids if notes.digest(job_id) != had.get(job_id, "")]
    return state.published_keys(changed) if changed else set()


def _plan(run: _Run) -> None:
    """Find the logs this build maps, the ones gone, and the ones only touched.

    Compares every log's identity with the state's (``manifest.changed_logs``), and reads
    the rows of the logs that differ alone: at 100,000 logs, a row apiece cost 1 s.
    """
    state = run.state
    if state is None:
        run.todo = range(len(run.logs))  # every log: not a list of 100,000 numbers
        return
    differ, gone = manifest.changed_logs(state.identities(), run.logs)
    todo: list[int] = []
    run.gone = sorted(gone)
    noted = _noted(state, run.notes)
    run.known = state.known(differ | noted | set(run.gone))
    for n, key in enumerate(run.logs.keys):
        if key not in differ and key not in noted:
            continue
        log = run.logs[n]
        known = run.known.get(key)
        if key in noted or known is None or not _unchanged(log, known):
            todo.append(n)
        else:
            run.moved.append((key, log.mtime_ns))
    run.todo = todo


def _no_op(run: _Run) -> BuildReport | None:
    """Finish a build that has nothing to publish; None when there is something."""
    state = run.state
    assert state is not None
    if run.todo or run.gone:
        return None
    chosen = select(state, run.options, run.stamp)
    # Unchanged logs, but retention by age may have moved on since the last build.
    if chosen.flips:
        return None
    # Only modification times moved (same bytes), or options that chose the same jobs:
    # record them (the next build can then tell nothing changed quickly), publish nothing.
    chose = figures(chosen, run)
    state.begin()
    state.touch(run.moved)
    state.set_chosen(chose)
    state.record_site_bytes(run.options.output)
    state.commit()
    return _report(run, state, chose, rebuilt=0, up_to_date=True)


def _rebuild(run: _Run, progress: Progress | None) -> BuildReport:
    """Map what changed, record it, reduce, and publish (the whole site, or in place)."""
    # There is work to do: only now load the renderers (Jinja, Markdown, SVG).
    from sitegen.builder import trend_hooks
    from sitegen.builder.mapstep import map_logs, root_parents
    from sitegen.builder.reduce import reduce

    options = run.options
    pages = _renderer(run)
    publication = Publication(options.output)
    staging = publication.open()
    state = run.state
    full = state is None
    try:
        if state is None:
            state = State.create(staging / MANIFEST_NAME, run.fingerprint)
        else:
            state.begin()
        if progress:
            progress.start(len(run.todo))
        publication.make_dirs(root_parents(pages))
        # Selection reads every row the state holds: the logs that are gone go first.
        state.forget(run.gone)
        state.touch(run.moved)
        fresh = FreshLogs(run.logs)
        again: dict[int, ContextKey | None] = {}  # logs to render again, with their context
        chosen: Selection | None = None
        mapped: set[int] = set()

        def on_site(n: int) -> bool:
            # A full build records every job it maps as published, and selection flips off
            # the few it leaves out: flipping 100,000 rows on took 20 s. In an incremental
            # build, a log it mapped is on the site when selection flipped it on; one it did
            # not map stays as it was unless flipped (a log rendered again below is published).
            if full:
                first = fresh[n].job_id is not None
                return first if chosen is None else chosen.flips.get(run.logs.keys[n], first)
            if chosen is None:
                return False  # none is until selected
            return chosen.flips.get(run.logs.keys[n], n not in mapped)

        def record(n: int, outcome: LogOutcome, parted: bool) -> None:
            # Into the state as it arrives: the build holds no log's summary, only its pick.
            log = run.logs[n]
            fresh[n] = Fresh(
                None if full else Pick.of(outcome),  # for _touched: a full build touches all
                outcome.summary.job_id if outcome.roots and outcome.summary else None,
                outcome.files,
                outcome.bytes,
                parted,
            )
            # A full build's state holds a log before this only when it is rendered again.
            state.put(log.key, log.size, log.mtime_ns, outcome, on_site(n), not full or n in again)

        map_logs(
            run.logs, run.todo, staging, pages, options.workers, record, progress, pool=run.pool
        )
        chosen = select(state, options, run.stamp)
        if chosen.leaner_fits_more:
            raise _LeanerSite
        chose = figures(chosen, run)
        state.set_chosen(chose)
        index = run.logs.position
        if not full:  # a full build maps every log: a set of all of them tells nothing
            mapped.update(fresh)
        # A reused log may be published now though it was not before (it lost a duplicate,
        # or retention left it out): its files are not on the site, so render them.
        late = {index(key) for key, now in chosen.flips.items() if now} - mapped
        # Recurring jobs: the names whose runs changed get their trend again, from the state's
        # columns; render again each job page whose run context changed.
        _flag_selection(run, state, fresh, chosen, index)
        changed = set() if full else _changed(run, fresh, chosen)
        names, days = (state.published_names(), set()) if full else _touched(run, fresh, changed)
        # Pages this build wrote get the new run context spliced in, a chunk at a time; pages
        # already published (and newly published ones, ``late``) are rendered again.
        writer = SiteWriter(staging, fresh=True)
        pending: dict[int, ContextKey | None] = {}  # written pages to splice, with their key
        again.update(dict.fromkeys(late))

        def splice() -> None:
            contexts = trend_hooks.full_contexts(state, _with_context(pending))
            unpatched = trend_hooks.patch_pages(
                pages, staging, state, run.logs, pending, fresh, contexts, options.workers, run.pool
            )
            trend_hooks.discard_renders(pages, staging, unpatched, fresh)
            again.update((n, pending[n]) for n in unpatched)
            pending.clear()

        for update in trend_hooks.update_trends(state, names, pages, writer):
            days |= update.days
            for key, context_key, stale in update.runs:
                n = index(key)
                if n in late:
                    again[n] = context_key
                elif stale:
                    (pending if n in fresh else again)[n] = context_key
            if len(pending) >= CONTEXT_CHUNK:
                splice()
        splice()
        if run.pool is not None:
            # The workers spliced the pages; idle through the reduce, they would count with
            # what this process holds then. The few logs rendered again rarely need a pool.
            run.pool.shutdown()
            run.pool = None
        contexts = trend_hooks.full_contexts(state, _with_context(again))
        redone = sorted(again)
        map_logs(run.logs, redone, staging, pages, options.workers, record, contexts=contexts)
        moves, unpublished = _moves(fresh, on_site, staging, pages)
        previous = set() if full else state.site_files()
        report = _report(run, state, chose, rebuilt=len(fresh))
        site_files = reduce(
            state,
            writer,
            pages,
            report.running,
            report.problems,
            run.stamp,
            days,
        )
        if full:
            publication.arrange(moves, unpublished)
            report.site_bytes = state.record_site_bytes(staging)
            state.commit()
            state.close()
            publication.publish()
        else:
            gone = sorted(_gone_roots(run, state, changed) | (previous - site_files))
            listing = writer.written_names()

            def finish() -> None:
                # The site is in place: measure it and record that in the build's transaction.
                report.site_bytes = state.record_site_bytes(options.output)
                state.commit()

            replaced = publication.update(moves, listing, gone, finish=finish)
    except BaseException:
        if full and state is not None:
            state.close()
        publication.discard()
        raise
    if full:
        replaced = writer.files_written, writer.bytes_written
    # Site-wide files count when they reached the site: in place, unchanged ones do not.
    report.files_written = sum(f.files for n, f in fresh.items() if on_site(n))
    report.files_written += replaced[0]
    report.bytes_written = sum(f.bytes for n, f in fresh.items() if on_site(n))
    report.bytes_written += replaced[1]
    report.seconds = time.perf_counter() - run.started
    return report


def _with_context(keys: dict[int, ContextKey | None]) -> dict[int, ContextKey]:
    """Return the keys that are not None (a run alone of its name has no context)."""
    return {n: key for n, key in keys.items() if key is not None}


def _renderer(run: _Run) -> PageRenderer:
    """Return the page renderer for this build, its per-job templates compiled."""
    from sitegen.render.pages import PageRenderer

    options = run.options
    pages = PageRenderer(
        options.templates_dir,
        title=options.title,
        robots=options.robots,
        base_url=options.base_url,
        pages_dir=options.pages_dir,
        notes_dirs=run.notes.dirs,
        raw_logs=options.raw_logs,
        cache_key=run.fingerprint,
        follow_links=options.follow_links,
        limits=LogLimits(options.max_log_size, options.max_line_size),
    )
    pages.warm()
    return pages


def _touched(run: _Run, fresh: FreshLogs, changed: set[str]) -> tuple[set[str], set[int]]:
    """Return the job names and the UTC days whose published jobs this build may have changed.

    Those of the jobs it mapped, and (as the state knew them) of the logs it mapped, removed,
    published or left out anew (``changed``, by key).
    """
    picks = [f.pick for f in fresh.values() if f.pick is not None]
    known = [k for key in changed if (k := run.known.get(key)) is not None and k.job_id]
    names = {p.job_name for p in picks} | {k.job_name or "" for k in known}
    names.discard("")
    days = {p.start_time // DAY_MS for p in picks} | {k.start_time // DAY_MS for k in known}
    return names, days


def _flag_selection(
    run: _Run, state: State, fresh: FreshLogs, chosen: Selection, index: Callable[[str], int]
) -> None:
    """Record which logs the site will hold, before the trends are queried.

    What the state knew of the logs flipped by selection alone (not mapped) is read first.
    """
    unread = [key for key in chosen.flips if key not in run.known and index(key) not in fresh]
    run.known.update(state.known(unread))
    state.set_published(chosen.flips.items())


def _changed(run: _Run, fresh: FreshLogs, chosen: Selection) -> set[str]:
    """Return the keys of the logs mapped, removed, or published or left out anew."""
    return {run.logs.keys[n] for n in fresh} | chosen.flips.keys() | set(run.gone)


def _moves(
    fresh: FreshLogs, on_site: Callable[[int], bool], staging: Path, pages: PageRenderer
) -> tuple[Iterator[tuple[Path, str]], list[str]]:
    """Return the mapped logs' job moves into the site (made as taken), and the roots not to.

    Those not to publish are jobs a worker wrote straight into the staging dir that are not
    published after all (a duplicate that lost, or outside the retention).
    """
    from sitegen.builder.mapstep import job_roots, part_dir

    unpublished = [
        root
        for n, done in fresh.items()
        if done.job_id is not None and not on_site(n) and not done.parted
        for root in job_roots(pages, done.job_id)
    ]

    def moves() -> Iterator[tuple[Path, str]]:
        # One at a time: a full build of 100,000 jobs moves 300,000 directories.
        for n, done in fresh.items():
            if done.job_id is not None and on_site(n):
                source = part_dir(staging, n) if done.parted else staging
                for root in job_roots(pages, done.job_id):
                    yield source / root, root

    return moves(), unpublished


def _gone_roots(run: _Run, state: State, changed: set[str]) -> set[str]:
    """Return the job directories the site held that no published log holds now.

    Only a log this build mapped, removed or (un)published can have let go of one; a
    directory is named by its job id, so only a published log of that id can hold it still.
    """
    old = {
        root: known.job_id
        for key in changed
        if (known := run.known.get(key)) is not None and known.published and known.job_id
        for root in known.roots
    }
    if not old:
        return set()
    return old.keys() - state.published_roots(sorted(set(old.values())))


def _archive(options: BuildOptions, stamp: float) -> ArchiveResult | None:
    """Pack the published site when asked (the published directory is what gets packed)."""
    if options.archive is None:
        return None
    from sitegen.publish.archive import write_archive

    try:
        return write_archive(options.output, options.archive, int(stamp))
    except SitegenError as exc:
        raise SitegenError(
            f"the site was published to {options.output}, but {exc.message}", exc.path
        ) from exc


def _in_log_order(run: _Run, keys: Collection[str]) -> list[str]:
    """Return the keys of the logs among ``keys`` in the order the logs are listed."""
    if not keys:
        return []
    if not run.stat_ed:  # a trusted no-op: keys sort as their logs are listed
        labels = {label: n for n, label in enumerate(key_prefixes(run.options.log_dirs))}
        # In one log dir a key is the file name; in several, its dir's label first.
        return sorted(keys, key=lambda key: (labels.get(key[: key.find("/") + 1], 0), key))
    there = []
    for key in keys:
        try:
            there.append((run.logs.position(key), key))
        except KeyError:  # a log the state holds that is gone
            continue
    return [key for _, key in sorted(there)]


def _report(
    run: _Run, state: State, chosen: manifest.Chosen, rebuilt: int, up_to_date: bool = False
) -> BuildReport:
    """Assemble the report from the state and the selection: problems, running jobs, counts."""
    flagged = {o.file: o for o in state.flagged()}
    problems: list[Problem] = []
    running: list[RunningJob] = []
    # In log order; only the logs with something to say are looked at.
    named = flagged.keys() | chosen.losers.keys()
    for key in _in_log_order(run, named):
        outcome = flagged.get(key)
        if outcome is not None:
            problems.extend(outcome.problems)
            if outcome.running is not None:
                running.append(outcome.running)
        loser = chosen.losers.get(key)
        if loser is not None:
            problems.append(loser)
    problems += published_collisions(state, changed=not up_to_date)
    counts = state.classifications()
    report = BuildReport(
        output=run.options.output,
        # A no-op that trusted finished logs did not stat them: the state holds every log.
        logs=len(run.logs) if run.stat_ed else sum(counts.values()),
        published=chosen.published,
        running=running,
        problems=problems,
        files_written=0,
        bytes_written=0,
        seconds=time.perf_counter() - run.started,
        rebuilt=rebuilt,
        up_to_date=up_to_date,
        classifications={str(k): counts.get(str(k), 0) for k in Classification},
        retention_dropped=chosen.retention_dropped,
        size_dropped=chosen.size_dropped,
    )
    if up_to_date:
        report.site_bytes = state.site_bytes_as_built(run.options.output)
    return report
