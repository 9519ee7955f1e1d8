"""A build's inputs: options, stamps, notes, the published state and the log dirs' listings."""

from __future__ import annotations

import time
from collections.abc import Callable

from sitegen.builder import gcpause, guard
from sitegen.builder.map.mapper import Mapper
from sitegen.builder.options import RUN_OPTIONS, BuildOptions
from sitegen.builder.plan.events import Hint, heard_names
from sitegen.builder.plan.listing import Listed, logs_from_events
from sitegen.builder.plan.planner import BuildRun, build_timestamp
from sitegen.builder.state import identity
from sitegen.builder.state.store import load
from sitegen.eventlog.discover import has_logs, list_dirs
from sitegen.eventlog.notes import NoteIndex, notes_dirs
from sitegen.render.templates import template_sources


def inputs(
    options: BuildOptions,
    lean: BuildOptions | None,
    started: float,
    freeze: Callable[[], None],
    mapper: Mapper,
    hint: Hint | None = None,
) -> BuildRun:
    """Gather the build's inputs: its options, stamps, notes and listings, and the published state.

    The state is loaded when it is of these options (or, built lean to fit --max-site-size, of
    ``lean``); the log dirs are listed unless they are as the last build listed them, or a
    watcher's events say what changed.
    """
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
