"""The build pipeline: a map over independent logs, a small reduce, an atomic publish."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen import __version__
from sitegen.builder import gcpause, guard, manifest
from sitegen.builder.manifest import LogEntry, LogOutcome, Manifest
from sitegen.builder.notes import NoteIndex, notes_dirs
from sitegen.builder.retention import parse_age, retained
from sitegen.errors import PublishError, SitegenError, UsageError
from sitegen.eventlog.classify import Candidate, duplicates
from sitegen.eventlog.discover import LogFile, check_log_dir, discover_all
from sitegen.layout import DEFAULT_TITLE, MANIFEST_NAME, PARTS_DIR
from sitegen.model import Classification, JobSummary, Problem, RunningJob
from sitegen.publish.buildlock import exclusive
from sitegen.publish.writer import Publication, SiteWriter
from sitegen.render import urls
from sitegen.render.templates import template_sources

if TYPE_CHECKING:
    from sitegen.builder.mapstep import Progress
    from sitegen.publish.archive import ArchiveResult


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on."""

    # One directory, or several (current + archive, several schedulers).
    log_dirs: Path | tuple[Path, ...]
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
    # Retention of the site (logs are never touched): the newest N, those ended recently.
    max_jobs: int | None = None
    max_age: str | None = None
    # Publish each job's original log, gzip-compressed, beside its pages.
    raw_logs: bool = True
    # Let log dirs without any log replace a site that has jobs (see builder/guard.py).
    allow_empty: bool = False
    # Read logs and notes linked to files outside the log dirs (see eventlog/filekind.py).
    follow_links: bool = False

    def __post_init__(self) -> None:
        """Accept one directory where a tuple of them is meant."""
        if isinstance(self.log_dirs, Path):
            object.__setattr__(self, "log_dirs", (self.log_dirs,))
        if self.max_age is not None:
            parse_age(self.max_age)  # fail before any work
        if self.base_url is not None:
            try:
                object.__setattr__(self, "base_url", urls.base_url(self.base_url))
            except ValueError as exc:
                raise UsageError(str(exc)) from None

    @property
    def dirs(self) -> tuple[Path, ...]:
        """Return the event-log directories."""
        return self.log_dirs if isinstance(self.log_dirs, tuple) else (self.log_dirs,)


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
        "allow_empty",
    }
)


@dataclass
class BuildReport:
    """What a build did, for the CLI summary and for scripts."""

    output: Path
    logs: int
    jobs: list[JobSummary]
    running: list[RunningJob]
    problems: list[Problem]
    files_written: int
    bytes_written: int
    seconds: float
    rebuilt: int = 0
    up_to_date: bool = False
    # Completed jobs left off the site by --max-jobs / --max-age.
    retention_dropped: int = 0
    classifications: dict[str, int] = field(default_factory=dict)
    archive: ArchiveResult | None = None

    @property
    def published(self) -> int:
        """Return the number of jobs published."""
        return len(self.jobs)

    @property
    def skipped(self) -> Counter[str]:
        """Count skipped logs by reason."""
        return Counter(str(p.kind) for p in self.problems if p.skipped)


def check_paths(options: BuildOptions) -> None:
    """Refuse option combinations that could lose logs or a published site."""
    out = options.output.resolve()
    for log_dir in options.dirs:
        check_log_dir(log_dir)
        logs = log_dir.resolve()
        if out == logs or out.is_relative_to(logs):
            message = "output dir must not be the event-log dir or inside it"
            raise UsageError(message, options.output)
        if logs.is_relative_to(out):
            # Publishing swaps the output away and deletes the old one: logs inside would go too.
            raise UsageError("event-log dir must not be inside the output dir", options.output)


def resolve_duplicates(outcomes: list[LogOutcome]) -> dict[int, Problem]:
    """Keep the later-completed log per job id; return a problem for each other one."""
    return duplicates(
        [
            Candidate(o.summary.job_id, o.summary.completed_at, o.file) if o.summary else None
            for o in outcomes
        ]
    )


def build_timestamp() -> float:
    """Return the build time, honouring SOURCE_DATE_EPOCH for reproducible sites."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return float(epoch) if epoch else time.time()


def _unchanged(log: LogFile, entry: LogEntry | None) -> LogEntry | None:
    """Return the manifest entry when the log is unchanged since it was built."""
    if entry is None or entry.size != log.size:
        return None
    if entry.mtime_ns == log.mtime_ns:
        return entry
    # Touched (copied, restored) but maybe not changed: the content hash decides.
    if entry.outcome.sha256 == manifest.log_digest(log.path):
        return entry
    return None


def _note_changed(entry: LogEntry, notes: NoteIndex) -> bool:
    """Tell whether a published job's operator note was added, edited or removed."""
    summary = entry.outcome.summary
    if not entry.published or summary is None:
        return False  # no job page: a later build that publishes it renders it afresh
    return notes.digest(summary.job_id) != entry.outcome.note_sha256


@dataclass
class Selection:
    """Which logs end up on the site: duplicate losers out, then retention applied."""

    losers: dict[int, Problem]
    published: set[int]
    completed: int


def select(outcomes: list[LogOutcome], options: BuildOptions, now: float) -> Selection:
    """Resolve duplicate ids, then keep what retention allows."""
    losers = resolve_duplicates(outcomes)
    winners = {n: o.summary for n, o in enumerate(outcomes) if o.summary and n not in losers}
    max_age = parse_age(options.max_age) if options.max_age else None
    keep = retained(list(winners.values()), options.max_jobs, max_age, now)
    published = {n for n, summary in winners.items() if summary.job_id in keep}
    return Selection(losers, published, len(winners))


def build(
    options: BuildOptions,
    progress: Progress | None = None,
    on_wait: Callable[[], None] | None = None,
) -> BuildReport:
    """Build the site from every log in the event-log dirs and publish it.

    A full build swaps a complete new site in atomically. When the published site's
    manifest matches (same sitegen, templates and options), only logs that changed
    are read again and the site is updated in place, one job directory and one
    listing file at a time, each step atomic and in an order that keeps every
    listed job complete. Builds into one output take turns; ``on_wait`` is called
    when this one has to wait for another.
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


def _build(
    options: BuildOptions, progress: Progress | None, freeze: Callable[[], None]
) -> BuildReport:
    """Build and publish the site; ``freeze`` hides what is alive from the collector."""
    started = time.perf_counter()
    if options.archive is not None:
        from sitegen.publish.archive import (
            check_archive_path,  # tarfile and zipfile: only when asked
        )

        check_archive_path(options.archive, options.output, options.dirs)
    logs = discover_all(options.dirs, options.follow_links)
    guard.before_build(options, logs)
    stamp = build_timestamp()
    notes = NoteIndex(notes_dirs(options.dirs), options.follow_links)
    sources = template_sources(options.templates_dir)
    fingerprint = manifest.fingerprint(options, sources, RUN_OPTIONS)
    # The manifest lives until the build ends: the collector need not scan its lists and
    # dicts while they are made, nor at every full collection after (and forked workers
    # share its pages instead of copying them as the collector writes to them).
    with gcpause.paused():
        old = None if options.clean else manifest.load(options.output)
        freeze()
    if old is not None and old.fingerprint != fingerprint:
        old = None
    reused: dict[int, LogEntry] = {}
    for n, log in enumerate(logs):
        entry = _unchanged(log, old.logs.get(log.key) if old else None)
        if entry is not None and not _note_changed(entry, notes):
            reused[n] = entry
    if old is not None and len(reused) == len(logs) == len(old.logs):
        outcomes = [e.outcome for e in reused.values()]
        chosen = select(outcomes, options, stamp)
        # Unchanged logs, but retention by age may have moved on since the last build.
        if all(e.published == (n in chosen.published) for n, e in reused.items()):
            touched = list(zip(reused.values(), logs, strict=True))
            if any(e.mtime_ns != log.mtime_ns for e, log in touched):
                # Only modification times moved (same bytes): record them, publish nothing new.
                for e, log in touched:
                    e.mtime_ns = log.mtime_ns
                SiteWriter(options.output).write(MANIFEST_NAME, manifest.encode(old))
            report = _report(options, logs, outcomes, chosen, started, up_to_date=True)
            report.archive = _archive(options, stamp)
            return report

    # What the published site holds, taken before reused entries are updated below.
    old_roots = _roots(old.logs.values()) if old else set()
    # There is work to do: only now load the renderers (Jinja, Markdown, SVG).
    from sitegen.builder import trend_hooks
    from sitegen.builder.mapstep import map_logs, root_parents
    from sitegen.diagnose import recurring
    from sitegen.publish import hosting
    from sitegen.render import api, trend_pages
    from sitegen.render.pages import PageRenderer

    pages = PageRenderer(
        options.templates_dir,
        title=options.title,
        robots=options.robots,
        base_url=options.base_url,
        pages_dir=options.pages_dir,
        notes_dirs=notes.dirs,
        raw_logs=options.raw_logs,
        cache_key=fingerprint,
        follow_links=options.follow_links,
    )
    pages.warm()
    publication = Publication(options.output)
    staging = publication.open()
    try:
        todo = [(n, log) for n, log in enumerate(logs) if n not in reused]
        if progress:
            progress.start(len(todo))
        for parent in root_parents(pages):
            (staging / parent).mkdir(parents=True, exist_ok=True)
        fresh, in_parts = map_logs(todo, staging, pages, options.workers, progress)
        outcomes = [fresh[n] if n in fresh else reused[n].outcome for n in range(len(logs))]
        chosen = select(outcomes, options, stamp)
        # A reused log may be published now though it was not before (it lost a duplicate,
        # or retention left it out): its files are not on the site, so render them.
        late = {n for n, entry in reused.items() if n in chosen.published and not entry.published}
        # Recurring jobs: render again each job page whose run context changed (issue 13).
        found = recurring.trends(outcomes[n].summary for n in sorted(chosen.published))  # type: ignore[misc]
        contexts = trend_hooks.contexts_by_log(found, outcomes, chosen.published)
        outdated = trend_hooks.stale_contexts(outcomes, chosen.published, contexts) - late
        written = outdated & fresh.keys()
        # Pages this build wrote get the context spliced in; published ones are rendered again.
        unpatched = trend_hooks.patch_pages(pages, staging, written, outcomes, in_parts, contexts)
        trend_hooks.discard_renders(staging, unpatched, outcomes, in_parts)
        redo = (outdated - written) | unpatched
        trend_hooks.forget_unpublished(outcomes, chosen.published)
        late_results, late_parts = map_logs(
            [(n, logs[n]) for n in sorted(late | redo)],
            staging,
            pages,
            options.workers,
            contexts=contexts,
        )
        fresh.update(late_results)
        in_parts |= late_parts
        writer = SiteWriter(staging, fresh=True)
        moves: list[tuple[Path, str]] = []
        # Jobs a worker wrote straight into the staging dir that are not published after
        # all (a duplicate that lost, or outside the retention): they must not be.
        unpublished: list[str] = []
        entries: dict[str, LogEntry] = {}
        files = bytes_ = 0
        for n, log in enumerate(logs):
            outcome = outcomes[n] = fresh.get(n, outcomes[n])
            published = n in chosen.published and bool(outcome.roots)
            if n in fresh:
                source = staging / PARTS_DIR / str(n) if n in in_parts else staging
                if published:
                    moves.extend((source / root, root) for root in outcome.roots)
                elif source == staging:
                    unpublished.extend(outcome.roots)
            if published:
                files += outcome.files
                bytes_ += outcome.bytes
            entry = reused.get(n) or LogEntry(log.size, log.mtime_ns, outcome)
            entry.outcome, entry.mtime_ns, entry.published = outcome, log.mtime_ns, published
            entries[log.key] = entry
        report = _report(options, logs, outcomes, chosen, started, rebuilt=len(fresh))
        for rel, data in api.site_files(report.jobs, report.problems, stamp):
            writer.write(rel, data)
        pages.site_pages(
            writer, report.jobs, report.running, report.problems, trend_hooks.regressed(found)
        )
        trend_pages.write(pages, writer, report.jobs, found)
        for name, text in hosting.site_files().items():
            writer.write(name, text.encode())
        listing = writer.written_names()
        record = Manifest(manifest.FORMAT, __version__, fingerprint, entries, listing)
        if old is None:
            trash = staging / PARTS_DIR / "unpublished"
            trash.mkdir(parents=True, exist_ok=True)
            for n, root in enumerate(unpublished):
                os.rename(staging / root, trash / str(n))
            for source, root in moves:
                if source != staging / root:  # written in a part dir: move it into place
                    writer.adopt(root, source)
            shutil.rmtree(staging / PARTS_DIR, ignore_errors=True)
            writer.write(MANIFEST_NAME, manifest.encode(record))
            publication.publish()
        else:
            writer.write(MANIFEST_NAME, manifest.encode(record))
            gone = old_roots - _roots(entries.values())
            stale = set(old.site_files) - set(listing)
            publication.update(moves, listing, sorted(gone | stale))
    except BaseException:
        publication.discard()
        raise
    report.archive = _archive(options, stamp)
    report.files_written = files + writer.files_written
    report.bytes_written = bytes_ + writer.bytes_written
    report.seconds = time.perf_counter() - started
    return report


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


def _roots(entries: Iterable[LogEntry]) -> set[str]:
    """Return the job directories the given logs have published."""
    return {root for e in entries if e.published for root in e.outcome.roots}


def _report(
    options: BuildOptions,
    logs: list[LogFile],
    outcomes: list[LogOutcome],
    chosen: Selection,
    started: float,
    rebuilt: int = 0,
    up_to_date: bool = False,
) -> BuildReport:
    """Assemble the report (and the reduce's inputs) from every log's outcome."""
    problems = []
    classes = Counter(str(o.classification) for o in outcomes)
    for n, outcome in enumerate(outcomes):
        problems.extend(outcome.problems)
        if n in chosen.losers:
            problems.append(chosen.losers[n])
    jobs = [o.summary for n, o in enumerate(outcomes) if o.summary and n in chosen.published]
    return BuildReport(
        output=options.output,
        logs=len(logs),
        jobs=jobs,
        running=[o.running for o in outcomes if o.running is not None],
        problems=problems,
        files_written=0,
        bytes_written=0,
        seconds=time.perf_counter() - started,
        rebuilt=rebuilt,
        up_to_date=up_to_date,
        classifications={str(k): classes[str(k)] for k in Classification},
        retention_dropped=chosen.completed - len(jobs),
    )
