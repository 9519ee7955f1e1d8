"""The build pipeline: a map over independent logs, a small reduce, an atomic publish.

Takes the build lock, gathers the build's inputs and loads the published state; stops early
when nothing changed (``plan``); else maps, selects, reduces and publishes what changed
(``steps``: the steps a full and an incremental build share). Builds afresh when the state
turns out damaged, or when leaving raw logs out lets more jobs fit in ``--max-site-size``.
Only ``sitegen.publish`` touches the staging and output trees.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sitegen.builder import gcpause, guard
from sitegen.builder.compose import compose
from sitegen.builder.map.mapper import Mapper
from sitegen.builder.options import RUN_OPTIONS, BuildOptions, log_limits
from sitegen.builder.plan.events import Hint, heard_names
from sitegen.builder.plan.listing import Listed, keep_logs, logs_from_events
from sitegen.builder.plan.planner import (
    BuildRun,
    LeanerSite,
    build_timestamp,
    check_paths,
    no_op,
    plan,
    quick_no_op,
)
from sitegen.builder.report import BuildReport
from sitegen.builder.state import identity
from sitegen.builder.state.schema import DAMAGE
from sitegen.builder.state.store import load
from sitegen.builder.targets.local import Publishing, stopped
from sitegen.errors import SitegenError
from sitegen.eventlog.discover import (
    has_logs,
    list_dirs,
)
from sitegen.eventlog.notes import NoteIndex, notes_dirs
from sitegen.render.templates import template_sources

if TYPE_CHECKING:
    from sitegen.builder.map.context import MapContext
    from sitegen.builder.map.jobs import Progress
    from sitegen.publish.archive import ArchiveResult


def build(
    options: BuildOptions,
    progress: Progress | None = None,
    on_wait: Callable[[], None] | None = None,
    hint: Hint | None = None,
) -> BuildReport:
    """Build the site from every log in the event-log dirs and publish it.

    A full build swaps a complete new site (and its state) in atomically. When the
    published site's state matches (same sitegen, templates and options), only logs
    that changed are read again and the site is updated in place, one job directory
    and one listing file at a time, each step atomic and in an order that keeps every
    listed job complete; the state's transaction commits last. Builds into one output
    take turns; ``on_wait`` is called when this one has to wait for another. ``hint``: the
    paths a watcher's file events named since the last build, so that the log dirs need not
    be listed again, and the logs it keeps between builds (builder/plan/events.py).
    """
    parts = compose(options)
    check_paths(options)
    with parts.target.open(options, on_wait) as site:
        report = _build_here(site, parts.mapper, progress, hint)
        site.finish(report)
    return report


def _build_here(
    site: Publishing,
    mapper: Mapper,
    progress: Progress | None,
    hint: Hint | None = None,
) -> BuildReport:
    """Build into ``site``'s staging dirs, a local directory, and have it put the site in place."""
    with stopped(site.options.output), gcpause.freezer() as freeze, contextlib.closing(mapper):
        return _build(site, progress, freeze, mapper, hint)


def _build(
    site: Publishing,
    progress: Progress | None,
    freeze: Callable[[], None],
    mapper: Mapper,
    hint: Hint | None,
) -> BuildReport:
    """Build and publish the site; ``freeze`` hides what is alive from the collector."""
    options = site.options
    started = time.perf_counter()
    if options.archive is not None:
        from sitegen.publish.archive import check_archive_path  # tarfile, zipfile: when asked

        check_archive_path(options.archive, options.output, options.log_dirs)
    # Under --max-site-size raw logs go first when that lets more jobs fit: a site built so
    # stays so (its state says which), until --clean or other options build it afresh.
    lean = None
    if options.max_site_size is not None and options.raw_logs:
        lean = dataclasses.replace(options, raw_logs=False)
    run = _start(options, lean, started, freeze, mapper, hint)
    try:
        report = _run(run, site, progress, freeze)
    except LeanerSite:
        assert lean is not None
        run = _start(dataclasses.replace(lean, clean=True), None, started, freeze, mapper)
        report = _run(run, site, progress, freeze)
    except DAMAGE:
        if run.state is None:
            raise  # the state this build was writing: not damage, a real error
        # The published state is damaged where this build read it: build afresh (its
        # transaction rolled back; a full build swaps in a whole new site and state).
        afresh = dataclasses.replace(run.options, clean=True)
        run = _start(afresh, None, started, freeze, mapper)
        report = _run(run, site, progress, freeze)
    report.raw_logs_dropped = lean is not None and not run.options.raw_logs
    report.listed_from_events = run.listed_from_events
    if hint is not None and run.stat_ed and "identities" in vars(run):
        # The logs the state now holds, made by this build (a quick no-op changed none).
        keep_logs(hint.kept, run.logs, run.identities)
    report.archive = _archive(options, run.stamp)
    return report


def _start(
    options: BuildOptions,
    lean: BuildOptions | None,
    started: float,
    freeze: Callable[[], None],
    mapper: Mapper,
    hint: Hint | None = None,
) -> BuildRun:
    """Gather the build's inputs and load the published state if it is of these options."""
    sources = template_sources(options.templates_dir)
    run = BuildRun(
        options,
        build_timestamp(),
        NoteIndex(notes_dirs(options.log_dirs), options.follow_links),
        identity.fingerprint(options, sources, RUN_OPTIONS),
        started,
        mapper=mapper,
        stamped_ns=time.time_ns(),
        dir_stamps=identity.dir_stamps(options.log_dirs),
    )
    # Sweep what killed builds left (every build, a no-op too).
    guard.sweep(options)
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
        # A build that maps every log (no state of these options, or --clean) gets its
        # mapper ready before the listing, which holds a string per log.
        mapper.prepare(run.state is None)
        if not _listed_as_before(run):
            run.listed = _listed_from_events(run, hint)
            run.listed_from_events = run.listed is not None
            listed = run.listed
            run.listings = list_dirs(options.log_dirs) if listed is None else listed.listings
            # Refuse replacing a site by mistake (an unmounted volume, a wrong path).
            guard.refuse_mistakes(options, has_logs(run.listings))
        freeze()
    return run


def _listed_from_events(run: BuildRun, hint: Hint | None) -> Listed | None:
    """Return the logs as the last build's with the names a watcher heard; None: list them."""
    if hint is None or hint.paths is None or run.state is None or not run.trusting:
        return None
    options = run.options
    heard = heard_names(options.log_dirs, hint.paths)
    if heard is None:
        return None
    return logs_from_events(options.log_dirs, heard, run.state, options.follow_links, hint.kept)


def _listed_as_before(run: BuildRun) -> bool:
    """Tell whether the log dirs are as the last build listed them (same stamps, trusted).

    Then they need not be listed: a trusted no-op takes that listing's digest from the state.
    """
    if run.state is None or not run.trusting or run.dir_stamps is None:
        return False
    stored = run.state.chosen()
    if stored is None or stored.stamps != run.dir_stamps:
        return False
    run.listing = stored.listing
    return True


def _run(
    run: BuildRun, site: Publishing, progress: Progress | None, freeze: Callable[[], None]
) -> BuildReport:
    """Finish the build: nothing to do, or map, reduce and publish what changed."""
    try:
        if run.state is not None:
            quick = quick_no_op(run)
            if quick is not None:
                return quick
        plan(run)
        report = no_op(run) if run.state is not None else None
        if report is not None:
            return report
        # There is work to do: only now load the renderers (Jinja, Markdown, SVG).
        from sitegen.builder.modes import map_and_publish

        return map_and_publish(run, site, _map_context(run), progress)
    finally:
        if run.state is not None:
            run.state.close()


def _map_context(run: BuildRun) -> MapContext:
    """Return the map step's context for this build, its renderer's per-job templates compiled."""
    from sitegen.builder.map.context import MapContext
    from sitegen.render.pages import PageRenderer

    options = run.options
    pages = PageRenderer(
        options.templates_dir,
        title=options.title,
        robots=options.robots,
        base_url=options.base_url,
        pages_dir=options.pages_dir,
        cache_key=run.fingerprint,
        sql_engine=options.sql_engine,
        data=bool(options.data),
    )
    pages.warm()
    return MapContext(
        pages,
        limits=log_limits(options, run.stamp, run.renaming),
        raw_logs=options.raw_logs,
        data=bool(options.data),
        notes_dirs=tuple(run.notes.dirs),
        follow_links=options.follow_links,
    )


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
