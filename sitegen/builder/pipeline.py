"""The build, top to bottom: a map over independent logs, a small reduce, one publish.

Open the target (it takes the build lock), gather the inputs, plan what changed (stop there
when nothing did), then map, select, foresee the run contexts, reduce and have the target
publish: a whole new site (a full build) or the published one updated in place. Two retries:
afresh when the published state turns out damaged, and without raw logs when that lets more
jobs fit in ``--max-site-size``. Each step is a module of its own: ``plan/``, ``map/``,
``select/``, ``contexts/``, ``reduce/``, ``targets/``; ``modes`` is where a full build and an
incremental one differ.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sitegen.builder import gcpause
from sitegen.builder.compose import compose
from sitegen.builder.map.context import for_build
from sitegen.builder.map.mapper import Mapper
from sitegen.builder.options import BuildOptions, log_limits
from sitegen.builder.plan.events import Hint
from sitegen.builder.plan.inputs import inputs
from sitegen.builder.plan.listing import keep_logs
from sitegen.builder.plan.planner import (
    BuildRun,
    LeanerSite,
    check_paths,
    make_report,
    no_op,
    quick_no_op,
)
from sitegen.builder.plan.planner import plan as plan_changes
from sitegen.builder.report import BuildReport, Phases
from sitegen.builder.state.schema import DAMAGE
from sitegen.builder.state.store import State
from sitegen.builder.targets.local import Publishing, stopped
from sitegen.errors import SitegenError
from sitegen.layout import STATE_NAME

if TYPE_CHECKING:
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
        with stopped(options.output), gcpause.freezer() as freeze, contextlib.closing(parts.mapper):
            report = _build(site, parts.mapper, progress, freeze, hint)
        site.finish(report)
    return report


def _build(
    site: Publishing,
    mapper: Mapper,
    progress: Progress | None,
    freeze: Callable[[], None],
    hint: Hint | None,
) -> BuildReport:
    """Gather the inputs and run the steps; again afresh, or leaner, when they ask it."""
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
    run = inputs(options, lean, started, freeze, mapper, hint)
    try:
        report = _steps(run, site, progress)
    except LeanerSite:
        assert lean is not None
        run = inputs(dataclasses.replace(lean, clean=True), None, started, freeze, mapper)
        report = _steps(run, site, progress)
    except DAMAGE:
        if run.state is None:
            raise  # the state this build was writing: not damage, a real error
        # The published state is damaged where this build read it: build afresh (its
        # transaction rolled back; a full build swaps in a whole new site and state).
        run = inputs(dataclasses.replace(run.options, clean=True), None, started, freeze, mapper)
        report = _steps(run, site, progress)
    report.raw_logs_dropped = lean is not None and not run.options.raw_logs
    report.listed_from_events = run.listed_from_events
    if hint is not None and run.stat_ed and "identities" in vars(run):
        # The logs the state now holds, made by this build (a quick no-op changed none).
        keep_logs(hint.kept, run.logs, run.identities)
    report.archive = _archive(options, run.stamp)
    return report


def _steps(run: BuildRun, site: Publishing, progress: Progress | None) -> BuildReport:
    """Plan; then map, select, foresee run contexts, reduce and publish what changed."""
    try:
        if run.state is not None and (quick := quick_no_op(run)) is not None:
            return quick
        plan_changes(run)
        if run.state is not None and (unchanged := no_op(run)) is not None:
            return unchanged
        # There is work to do: only now load the renderers (Jinja, Markdown, SVG).
        from sitegen.builder.modes import FullBuild, PublishedBefore, UpdateBuild
        from sitegen.builder.reduce.site import DataChange, reduce

        limits = log_limits(run.options, run.stamp, run.renaming)
        map_context = for_build(run.options, limits, tuple(run.notes.dirs), run.fingerprint)
        staging = site.stage()
        created: State | None = None
        try:
            if run.state is None:
                state = created = State.create(staging / STATE_NAME, run.fingerprint)
            else:
                state = run.state
                state.begin()
            mode = UpdateBuild if created is None else FullBuild
            steps = mode(run, map_context, site, staging, state)
            phases = Phases()
            steps.map_changed(progress)
            phases.done("map")
            chose, late = steps.select()
            changed = steps.changed()
            names, moments = steps.touched(changed)
            phases.done("select")
            moments |= steps.retrend(names, late)
            steps.render_again()
            phases.done("run_contexts")
            before = PublishedBefore(steps, changed)
            report = make_report(run, state, chose, rebuilt=len(steps.results))
            # The SQL tables change with the logs mapped (those rendered again too), removed,
            # published or left out anew: known only now.
            data = DataChange(steps.data_changed()) if map_context.data else None
            site_files = reduce(
                state,
                steps.writer,
                map_context.pages,
                report.running,
                report.problems,
                run.stamp,
                moments,
                data,
            )
            phases.done("reduce")
            steps.put_in_place(report, site_files, before)
            phases.done("publish")
            report.phases, report.phases_cpu = phases.seconds, phases.cpu
        except BaseException:
            if created is not None:
                created.close()
            site.discard()
            raise
        report.seconds = time.perf_counter() - run.started
        return report
    finally:
        if run.state is not None:
            run.state.close()


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
