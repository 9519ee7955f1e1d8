"""The build pipeline: a map over independent logs, a small reduce, an atomic publish.

Each step is its own function: plan what the state lets us reuse, stop early when nothing
changed, map the changed logs, select what the site keeps, map the logs that selection
newly publishes, record it all in the state, reduce, and publish. Only ``sitegen.publish``
touches the staging and output trees.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from sitegen.builder import gcpause, guard, manifest
from sitegen.builder.manifest import DAY_MS, Known, LogOutcome, State
from sitegen.builder.notes import NoteIndex, notes_dirs
from sitegen.builder.retention import Ended, parse_age, retained
from sitegen.builder.sitesize import Sized, fits
from sitegen.errors import PublishError, SitegenError, UsageError
from sitegen.eventlog.classify import Claim, duplicates
from sitegen.eventlog.discover import LogFile, check_log_dir, discover_all
from sitegen.layout import DEFAULT_TITLE, MANIFEST_NAME
from sitegen.model import Classification, JobSummary, Problem, RunningJob
from sitegen.publish.buildlock import exclusive
from sitegen.publish.writer import Publication, SiteWriter
from sitegen.render import urls
from sitegen.render.templates import template_sources

if TYPE_CHECKING:
    from sitegen.builder.mapstep import Progress
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

    def __post_init__(self) -> None:
        """Normalise the log dirs to a tuple of paths (one path is accepted); check options."""
        dirs: object = self.log_dirs
        if isinstance(dirs, str | os.PathLike):
            object.__setattr__(self, "log_dirs", (Path(dirs),))
        else:
            object.__setattr__(self, "log_dirs", tuple(Path(d) for d in self.log_dirs))
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


class Selectable(Claim, Ended, Sized, Protocol):
    """A completed log as selection sees it: a fresh Pick, or a reused log's Known row."""


class Pick(NamedTuple):
    """What selection needs of one completed log, from its outcome or from the state."""

    # A tuple: a build makes one for every log (100,000 of them), most from the state.
    job_id: str
    job_name: str
    start_time: int
    end_time: int
    completed_at: int
    file: str
    bytes: int
    raw_bytes: int

    @classmethod
    def of(cls, outcome: LogOutcome) -> Pick | None:
        """Return the pick of a fresh outcome (None when it is not a completed job)."""
        s = outcome.summary
        if s is None:
            return None
        raw = s.raw_log_bytes or 0
        return cls(
            s.job_id,
            s.job_name,
            s.start_time,
            s.end_time,
            s.completed_at,
            s.file,
            outcome.bytes,
            raw,
        )


@dataclass
class Selection:
    """Which logs end up on the site: duplicate losers out, then retention applied."""

    losers: dict[int, Problem]
    published: set[int]
    completed: int
    # Left out by --max-jobs / --max-age, and then by --max-site-size.
    retention_dropped: int = 0
    size_dropped: int = 0
    # Whether leaving the raw logs out would let more jobs fit in --max-site-size.
    leaner_fits_more: bool = False


def select(picks: Sequence[Selectable | None], options: BuildOptions, now: float) -> Selection:
    """Resolve duplicate ids, then keep what retention and the size limit allow.

    A reused log's pick is its Known row itself: at 100,000 logs a tuple apiece cost 0.2 s.
    """
    losers = duplicates(picks)
    winners = {n: p for n, p in enumerate(picks) if p is not None and n not in losers}
    max_age = parse_age(options.max_age) if options.max_age else None
    keep = retained(list(winners.values()), options.max_jobs, max_age, now)
    kept = {n: p for n, p in winners.items() if p.job_id in keep}
    chosen = Selection(losers, set(kept), len(winners), len(winners) - len(kept))
    if options.max_site_size is not None:
        fitting = fits([p for p in kept.values()], options.max_site_size)
        chosen.published = {n for n, p in kept.items() if p.job_id in fitting}
        chosen.size_dropped = len(kept) - len(chosen.published)
        if options.raw_logs and chosen.size_dropped:
            lean = fits(list(kept.values()), options.max_site_size, raw_logs=False)
            chosen.leaner_fits_more = len(lean) > len(fitting)
    return chosen


def figures(chosen: Selection, logs: list[LogFile], options: BuildOptions) -> manifest.Chosen:
    """Return what the report needs of a selection, as the state keeps it for the next build."""
    return manifest.Chosen(
        _selection_options(options),
        {logs[n].key: problem for n, problem in chosen.losers.items()},
        len(chosen.published),
        chosen.retention_dropped,
        chosen.size_dropped,
        manifest.identity_digest(logs),
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
            return _build(options, progress, freeze)
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
    logs: list[LogFile]
    stamp: float
    notes: NoteIndex
    fingerprint: str
    started: float
    state: State | None = None
    known: dict[str, Known] = field(default_factory=dict)
    # Logs unchanged since the state recorded them (index into ``logs`` -> what it knows).
    reused: dict[int, Known] = field(default_factory=dict)


def _build(
    options: BuildOptions, progress: Progress | None, freeze: Callable[[], None]
) -> BuildReport:
    """Build and publish the site; ``freeze`` hides what is alive from the collector."""
    started = time.perf_counter()
    if options.archive is not None:
        from sitegen.publish.archive import check_archive_path  # tarfile, zipfile: when asked

        check_archive_path(options.archive, options.output, options.log_dirs)
    # Under --max-site-size raw logs go first when that lets more jobs fit: a site built so
    # stays so (its state says which), until --clean or other options build it afresh.
    lean = None
    if options.max_site_size is not None and options.raw_logs:
        lean = dataclasses.replace(options, raw_logs=False)
    run = _start(options, lean, started, freeze)
    try:
        report = _run(run, progress, freeze)
    except _LeanerSite:
        assert lean is not None
        run = _start(dataclasses.replace(lean, clean=True), None, started, freeze)
        report = _run(run, progress, freeze)
    except manifest.DAMAGE:
        if run.state is None:
            raise  # the state this build was writing: not damage, a real error
        # The published state is damaged where this build read it: build afresh (its
        # transaction rolled back; a full build swaps in a whole new site and state).
        run = _start(dataclasses.replace(run.options, clean=True), None, started, freeze)
        report = _run(run, progress, freeze)
    report.raw_logs_dropped = lean is not None and not run.options.raw_logs
    report.archive = _archive(options, run.stamp)
    return report


def _start(
    options: BuildOptions,
    lean: BuildOptions | None,
    started: float,
    freeze: Callable[[], None],
) -> _Run:
    """Gather the build's inputs and load the published state if it is of these options."""
    sources = template_sources(options.templates_dir)
    run = _Run(
        options,
        discover_all(options.log_dirs, options.follow_links),
        build_timestamp(),
        NoteIndex(notes_dirs(options.log_dirs), options.follow_links),
        manifest.fingerprint(options, sources, RUN_OPTIONS),
        started,
    )
    # Sweep what killed builds left (every build, a no-op too), refuse replacing by mistake.
    guard.before_build(options, run.logs)
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
            # What the state knows lives until the build ends: hide it from the collector.
            with gcpause.paused():
                run.known = run.state.known()
                freeze()
        _plan_reuse(run)
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
    # One digest of every log's identity, against the one the last selection was made from:
    # reading 100,000 rows back from the state to compare them cost more than the stat calls.
    if stored.identities != manifest.identity_digest(run.logs):
        return None
    had = state.note_digests()
    notes = run.notes
    if any(job_id not in notes.paths for job_id in had):
        return None  # a published job's note was removed
    for job_id in state.published_ids(sorted(notes.paths)):
        if notes.digest(job_id) != had.get(job_id, ""):
            return None
    return _report(run, state, stored, rebuilt=0, up_to_date=True)


def _unchanged(log: LogFile, known: Known | None) -> bool:
    """Tell whether the log is unchanged since the state recorded it."""
    if known is None or known.size != log.size:
        return False
    if known.mtime_ns == log.mtime_ns:
        return True
    # Touched (copied, restored) but maybe not changed: the content hash decides.
    return known.sha256 == manifest.log_digest(log.path)


def _note_changed(known: Known, notes: NoteIndex) -> bool:
    """Tell whether a published job's operator note was added, edited or removed."""
    if not known.published or known.job_id is None:
        return False  # no job page: a later build that publishes it renders it afresh
    return notes.digest(known.job_id) != known.note_sha256


def _plan_reuse(run: _Run) -> None:
    """Find the logs the state lets this build reuse as they are."""
    known_of = run.known.get
    notes = run.notes
    any_notes = bool(notes.paths)
    for n, log in enumerate(run.logs):
        known = known_of(log.key)
        if known is None:
            continue
        if (known.size != log.size or known.mtime_ns != log.mtime_ns) and not _unchanged(
            log, known
        ):
            continue
        # Without a note now or then, a job's note cannot have changed: no lookup per log.
        if (any_notes or known.note_sha256) and _note_changed(known, notes):
            continue
        run.reused[n] = known


def _no_op(run: _Run) -> BuildReport | None:
    """Finish a build that has nothing to publish; None when there is something."""
    assert run.state is not None
    if not len(run.reused) == len(run.logs) == len(run.known):
        return None
    picks = [_reused_pick(run.reused[n]) for n in range(len(run.logs))]
    chosen = select(picks, run.options, run.stamp)
    # Unchanged logs, but retention by age may have moved on since the last build.
    if any(k.published != (n in chosen.published) for n, k in run.reused.items()):
        return None
    moved = [
        (log.key, log.mtime_ns)
        for n, log in enumerate(run.logs)
        if log.mtime_ns != run.reused[n].mtime_ns
    ]
    # Only modification times moved (same bytes), or options that chose the same jobs:
    # record them (the next build can then tell nothing changed quickly), publish nothing.
    chose = figures(chosen, run.logs, run.options)
    run.state.begin()
    run.state.touch(moved)
    run.state.set_chosen(chose)
    run.state.commit()
    return _report(run, run.state, chose, rebuilt=0, up_to_date=True)


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
        todo = [(n, log) for n, log in enumerate(run.logs) if n not in run.reused]
        if progress:
            progress.start(len(todo))
        publication.make_dirs(root_parents(pages))
        fresh: dict[int, Fresh] = {}

        def record(n: int, outcome: LogOutcome, parted: bool) -> None:
            # Into the state as it arrives: the build holds no log's summary, only its pick.
            log = run.logs[n]
            state.put(log.key, log.size, log.mtime_ns, outcome, published=False)
            fresh[n] = Fresh(
                Pick.of(outcome),
                outcome.roots,
                outcome.files,
                outcome.bytes,
                parted,
                outcome.context_sha256,
            )

        map_logs(todo, staging, pages, options.workers, record, progress)
        picks = _picks(run, fresh)
        chosen = select(picks, options, run.stamp)
        if chosen.leaner_fits_more:
            raise _LeanerSite
        chose = figures(chosen, run.logs, options)
        state.set_chosen(chose)
        # A reused log may be published now though it was not before (it lost a duplicate,
        # or retention left it out): its files are not on the site, so render them.
        late = {
            n for n, known in run.reused.items() if n in chosen.published and not known.published
        }
        # Recurring jobs: the names whose runs changed get their trend again, from the state's
        # columns; render again each job page whose run context changed.
        changed = _flag_selection(run, state, fresh, chosen)
        names, days = (state.published_names(), set()) if full else _touched(run, fresh, changed)
        found = trend_hooks.update_trends(state, names)
        index = {log.key: n for n, log in enumerate(run.logs)}
        outdated = {index[key] for key in found.stale} - late
        keys = {index[key]: k for key, k in found.keys.items() if k is not None}
        written = sorted(outdated & fresh.keys())
        # Pages this build wrote get the context spliced in, a chunk at a time: a clean build
        # patches every recurring run, and their baselines' summaries at once would be most
        # of its memory. Pages already published are rendered again.
        unpatched: set[int] = set()
        for start in range(0, len(written), CONTEXT_CHUNK):
            chunk = written[start : start + CONTEXT_CHUNK]
            contexts = trend_hooks.full_contexts(state, {n: keys[n] for n in chunk if n in keys})
            unpatched |= trend_hooks.patch_pages(
                pages, staging, state, run.logs, chunk, fresh, contexts
            )
        trend_hooks.discard_renders(staging, unpatched, fresh)
        redo = (outdated - set(written)) | unpatched
        again = sorted(late | redo)
        contexts = trend_hooks.full_contexts(state, {n: keys[n] for n in again if n in keys})
        redone = [(n, run.logs[n]) for n in again]
        map_logs(redone, staging, pages, options.workers, record, contexts=contexts)
        moves, unpublished = _publish_flags(run, state, fresh, chosen, staging)
        writer = SiteWriter(staging, fresh=True)
        previous = set() if full else state.site_files()
        report = _report(run, state, chose, rebuilt=len(fresh))
        site_files = reduce(
            state,
            writer,
            pages,
            report.running,
            report.problems,
            run.stamp,
            found.trends,
            days | found.days,
        )
        if full:
            publication.arrange(moves, unpublished)
            report.site_bytes = state.site_bytes(staging)
            state.commit()
            state.close()
            publication.publish()
        else:
            gone = sorted(_gone_roots(run, changed, fresh, chosen) | (previous - site_files))
            listing = writer.written_names()
            replaced = publication.update(moves, listing, gone, finish=state.commit)
            report.site_bytes = state.site_bytes(options.output)
    except BaseException:
        if full and state is not None:
            state.close()
        publication.discard()
        raise
    if full:
        replaced = writer.files_written, writer.bytes_written
    # Site-wide files count when they reached the site: in place, unchanged ones do not.
    report.files_written = sum(f.files for n, f in fresh.items() if n in chosen.published)
    report.files_written += replaced[0]
    report.bytes_written = sum(f.bytes for n, f in fresh.items() if n in chosen.published)
    report.bytes_written += replaced[1]
    report.seconds = time.perf_counter() - run.started
    return report


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
    )
    pages.warm()
    return pages


class Fresh(NamedTuple):
    """What the build keeps of a log it mapped (its outcome went into the state)."""

    pick: Pick | None
    roots: list[str]
    files: int
    bytes: int
    # Written into its part directory: another log had claimed the job's directories.
    parted: bool
    # Of the run context its job page was rendered with ("" for none).
    context_sha256: str


def _picks(run: _Run, fresh: dict[int, Fresh]) -> list[Selectable | None]:
    """Return every log's pick: from this build's map when it ran, else from the state."""
    reused = run.reused
    return [
        _reused_pick(reused[n]) if n in reused else _fresh_pick(fresh, n)
        for n in range(len(run.logs))
    ]


def _fresh_pick(fresh: dict[int, Fresh], n: int) -> Pick | None:
    """Return the pick of a log this build mapped (None: not a completed job, or not mapped)."""
    done = fresh.get(n)
    return done.pick if done is not None else None


def _reused_pick(known: Known) -> Selectable | None:
    """Return a reused log's pick: its row, when it is a completed job (it has a job id)."""
    return cast("Selectable", known) if known.job_id is not None else None


def _touched(run: _Run, fresh: dict[int, Fresh], changed: set[str]) -> tuple[set[str], set[int]]:
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
    run: _Run, state: State, fresh: dict[int, Fresh], chosen: Selection
) -> set[str]:
    """Record which logs the site will hold, before the trends are queried; return their keys.

    The keys returned are of the logs mapped, removed, or published or left out anew.
    """
    keys = {log.key for log in run.logs}
    gone = [k for k in run.known if k not in keys]
    state.forget(gone)
    flags = [(run.logs[n].key, n in chosen.published) for n in fresh]
    flags.extend(
        (run.logs[n].key, n in chosen.published)
        for n, known in run.reused.items()
        if bool(known.published) != (n in chosen.published)
    )
    state.set_published(flags)
    return {key for key, _ in flags} | set(gone)


def _publish_flags(
    run: _Run, state: State, fresh: dict[int, Fresh], chosen: Selection, staging: Path
) -> tuple[list[tuple[Path, str]], list[str]]:
    """Record which mapped logs are on the site; return their job moves and unpublished roots.

    The flags of reused logs were set before the trends were queried (_flag_selection).
    """
    from sitegen.builder.mapstep import part_dir

    moves: list[tuple[Path, str]] = []
    # Jobs a worker wrote straight into the staging dir that are not published after all
    # (a duplicate that lost, or outside the retention): they must not be.
    unpublished: list[str] = []
    flags = []
    for n, done in fresh.items():
        source = part_dir(staging, n) if done.parted else staging
        if n in chosen.published and done.roots:
            flags.append((run.logs[n].key, True))
            moves.extend((source / root, root) for root in done.roots)
        elif source == staging:
            unpublished.extend(done.roots)
    state.set_published(flags)
    return moves, unpublished


def _gone_roots(
    run: _Run, changed: set[str], fresh: dict[int, Fresh], chosen: Selection
) -> set[str]:
    """Return the job directories the site held that no published log holds now.

    Only a log this build mapped, removed or (un)published can have let go of one; a
    directory is named by its job id, so only a published log of that id can hold it still.
    """
    old = {
        root: known.job_id
        for key in changed
        if (known := run.known.get(key)) is not None and known.published
        for root in known.roots
    }
    if not old:
        return set()
    ids = set(old.values())
    held: set[str] = set()
    for n in chosen.published:
        done = fresh.get(n)
        if done is not None:
            held.update(done.roots)
        elif run.reused[n].job_id in ids:
            held.update(run.reused[n].roots)
    return old.keys() - held


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


def _report(
    run: _Run, state: State, chosen: manifest.Chosen, rebuilt: int, up_to_date: bool = False
) -> BuildReport:
    """Assemble the report from the state and the selection: problems, running jobs, counts."""
    flagged = {o.file: o for o in state.flagged()}
    problems: list[Problem] = []
    running: list[RunningJob] = []
    # In log order; only the logs with something to say are looked at.
    named = flagged.keys() | chosen.losers.keys()
    order = {log.key: n for n, log in enumerate(run.logs)} if named else {}
    for key in sorted(named & order.keys(), key=order.__getitem__):
        outcome = flagged.get(key)
        if outcome is not None:
            problems.extend(outcome.problems)
            if outcome.running is not None:
                running.append(outcome.running)
        loser = chosen.losers.get(key)
        if loser is not None:
            problems.append(loser)
    counts = state.classifications()
    report = BuildReport(
        output=run.options.output,
        logs=len(run.logs),
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
        report.site_bytes = state.site_bytes(run.options.output)
    return report
