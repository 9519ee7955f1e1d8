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
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder import gcpause, guard, parallel
from sitegen.builder.fresh import Fresh, FreshLogs, Pick
from sitegen.builder.options import RUN_OPTIONS, BuildOptions, BuildReport
from sitegen.builder.plan import (
    Run,
    build_timestamp,
    check_paths,
    figures,
    make_report,
    no_op,
    plan,
    quick_no_op,
    select,
)
from sitegen.builder.selection import Selection
from sitegen.builder.state import identity
from sitegen.builder.state.records import LogOutcome
from sitegen.builder.state.schema import DAMAGE, DAY_MS
from sitegen.builder.state.store import State, load
from sitegen.errors import PublishError, SitegenError
from sitegen.eventlog.discover import (
    has_logs,
    list_dirs,
)
from sitegen.eventlog.notes import NoteIndex, notes_dirs
from sitegen.layout import MANIFEST_NAME
from sitegen.publish.buildlock import exclusive
from sitegen.publish.writer import Publication, SiteWriter
from sitegen.render.templates import template_sources

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from sitegen.builder.mapstep import Progress
    from sitegen.diagnose.recurring import ContextKey
    from sitegen.publish.archive import ArchiveResult
    from sitegen.render.pages import PageRenderer


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
    except DAMAGE:
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
) -> Run:
    """Gather the build's inputs and load the published state if it is of these options."""
    sources = template_sources(options.templates_dir)
    run = Run(
        options,
        list_dirs(options.log_dirs),
        build_timestamp(),
        NoteIndex(notes_dirs(options.log_dirs), options.follow_links),
        identity.fingerprint(options, sources, RUN_OPTIONS),
        started,
        pool=pool,
    )
    # Sweep what killed builds left (every build, a no-op too), refuse replacing by mistake.
    guard.before_build(options, has_logs(run.listings))
    # The state lives until the build ends: the collector need not scan what is loaded.
    with gcpause.paused():
        if not options.clean:
            run.state = load(options.output, run.fingerprint)
            if run.state is None and lean is not None:
                # Built without raw logs to fit --max-site-size: go on as that site was built.
                fingerprint = identity.fingerprint(lean, sources, RUN_OPTIONS)
                run.state = load(options.output, fingerprint)
                if run.state is not None:
                    run.options, run.fingerprint = lean, fingerprint
        freeze()
    return run


def _run(run: Run, progress: Progress | None, freeze: Callable[[], None]) -> BuildReport:
    """Finish the build: nothing to do, or map, reduce and publish what changed."""
    try:
        if run.state is not None:
            quick = quick_no_op(run)
            if quick is not None:
                return quick
        plan(run)
        report = no_op(run) if run.state is not None else None
        return report if report is not None else _rebuild(run, progress)
    finally:
        if run.state is not None:
            run.state.close()


def _rebuild(run: Run, progress: Progress | None) -> BuildReport:
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
        report = make_report(run, state, chose, rebuilt=len(fresh))
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


def _renderer(run: Run) -> PageRenderer:
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
    )
    pages.warm()
    return pages


def _touched(run: Run, fresh: FreshLogs, changed: set[str]) -> tuple[set[str], set[int]]:
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
    run: Run, state: State, fresh: FreshLogs, chosen: Selection, index: Callable[[str], int]
) -> None:
    """Record which logs the site will hold, before the trends are queried.

    What the state knew of the logs flipped by selection alone (not mapped) is read first.
    """
    unread = [key for key in chosen.flips if key not in run.known and index(key) not in fresh]
    run.known.update(state.known(unread))
    state.set_published(chosen.flips.items())


def _changed(run: Run, fresh: FreshLogs, chosen: Selection) -> set[str]:
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


def _gone_roots(run: Run, state: State, changed: set[str]) -> set[str]:
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
