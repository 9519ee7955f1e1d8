"""The build pipeline: a map over independent logs, a small reduce, an atomic publish."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Protocol

from sitegen import __version__, api, hosting, manifest, urls
from sitegen.archive import ArchiveResult, check_archive_path, write_archive
from sitegen.classify import Candidate, duplicates, judge
from sitegen.errors import SitegenError, UsageError
from sitegen.eventlog.discover import LogFile, check_log_dir, discover_all
from sitegen.eventlog.rawlog import gzip_chunks
from sitegen.eventlog.reader import LogRead, read_log
from sitegen.layout import MANIFEST_NAME, job_root
from sitegen.manifest import LogEntry, LogOutcome, Manifest
from sitegen.model import (
    Classification,
    ExecutorStats,
    JobSummary,
    Problem,
    RunningJob,
)
from sitegen.pages import SITE_TITLE, PageRenderer
from sitegen.retention import parse_age, retained
from sitegen.writer import Publication, SiteWriter

PARTS_DIR = ".parts"
NOTES_DIR = "notes"  # <log dir>/notes/<job_id>.md adds an operator note to a job page


class Progress(Protocol):
    """Something that shows how far the map step is (a progress bar, or nothing)."""

    def start(self, total: int) -> None:
        """Announce how many logs will be read."""

    def advance(self) -> None:
        """Count one more log read."""


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
    title: str = SITE_TITLE
    # After publishing, also pack the site into this .tar.gz / .zip (outside output and logs).
    archive: Path | None = None
    # Retention of the site (logs are never touched): the newest N, those ended recently.
    max_jobs: int | None = None
    max_age: str | None = None
    # Publish each job's original log, gzip-compressed, beside its pages.
    raw_logs: bool = True

    def __post_init__(self) -> None:
        """Accept one directory where a tuple of them is meant."""
        if isinstance(self.log_dirs, Path):
            object.__setattr__(self, "log_dirs", (self.log_dirs,))
        if self.max_age is not None:
            parse_age(self.max_age)  # fail before any work

    @property
    def dirs(self) -> tuple[Path, ...]:
        """Return the event-log directories."""
        return self.log_dirs if isinstance(self.log_dirs, tuple) else (self.log_dirs,)


# Options that change how a build runs, or which jobs are listed, but not a byte of
# any job's own files: changing them does not force every job to be rebuilt.
RUN_OPTIONS = frozenset(
    {"log_dirs", "output", "strict", "workers", "clean", "archive", "max_jobs", "max_age"}
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


def summarize(read: LogRead, file: str) -> JobSummary:
    """Derive the small per-job record the reduce keeps from a completed log."""
    assert read.job_end is not None
    end = read.job_end
    idx = end.index
    failure = None
    if isinstance(end.status, dict) and "Failed" in end.status:
        failure = str(end.status["Failed"])
    executors: dict[str, ExecutorStats] = {}
    failed_tasks = 0
    for task in read.tasks:
        stats = executors.get(task.executor_id)
        if stats is None:
            stats = executors[task.executor_id] = ExecutorStats()
        stats.tasks += 1
        busy = task.end_exec_time - task.start_exec_time
        if busy > 0:
            stats.busy_ms += busy
        if task.status.__class__ is dict and "Failed" in task.status:
            stats.failed += 1
            failed_tasks += 1
    return JobSummary(
        job_id=idx.job_id,
        job_name=idx.job_name,
        status=idx.status,
        job_status=idx.job_status,
        start_time=idx.start_time,
        end_time=idx.end_time,
        num_stages=idx.num_stages,
        completed_stages=idx.completed_stages,
        percent_complete=idx.percent_complete,
        queued_at=end.queued_at,
        started_at=end.started_at,
        completed_at=end.completed_at,
        file=file,
        failure=failure,
        tasks=len(read.tasks),
        failed_tasks=failed_tasks,
        executors=executors,
    )


def running_job(read: LogRead, log: LogFile) -> RunningJob:
    """Describe a log without JobEnd from what it recorded so far."""
    start = read.job_start
    times = [t.end_exec_time for t in read.tasks]
    return RunningJob(
        file=log.key,
        job_id=start.job_id if start else log.name_id,
        job_name=start.job_name if start else "",
        queued_at=start.queued_at if start else 0,
        submitted_at=start.submitted_at if start else 0,
        stages_started=len(read.stage_starts),
        stages_ended=len(read.stage_ends),
        tasks=len(read.tasks),
        failed_tasks=sum(1 for t in read.tasks if isinstance(t.status, dict)),
        last_event_time=max(times, default=start.submitted_at if start else 0),
    )


def process_log(log: LogFile, part: Path, pages: PageRenderer) -> LogOutcome:
    """Map step: read one log and write that job's files into its own part directory."""
    read = read_log(log.path)
    verdict = judge(log, read)
    outcome = LogOutcome(
        file=log.key,
        classification=read.classification,
        problems=verdict.problems,
        sha256=manifest.file_digest(log.path),
    )
    if read.job_end is None or verdict.job_id is None:
        if read.classification is Classification.INCOMPLETE:
            outcome.running = running_job(read, log)
        return outcome
    job_id = verdict.job_id
    summary = summarize(read, outcome.file)
    summary.log_bytes = log.size
    writer = SiteWriter(part, fresh=True)
    for rel, data in api.job_files(job_id, read.job_end):
        writer.write(rel, data)
    if pages.raw_logs:
        summary.raw_log_bytes = writer.write_chunks(urls.raw_log(job_id), gzip_chunks(log.path))
    pages.job_pages(writer, read, summary)
    outcome.summary = summary
    outcome.roots = [job_root(job_id), *pages.job_roots(job_id)]
    outcome.files = writer.files_written
    outcome.bytes = writer.bytes_written
    return outcome


def _process_star(args: tuple[LogFile, Path, PageRenderer]) -> LogOutcome:
    """Unpack arguments for ``ProcessPoolExecutor.map``."""
    return process_log(*args)


def map_logs(
    logs: list[tuple[int, LogFile]],
    staging: Path,
    pages: PageRenderer,
    workers: int | None,
    progress: Progress | None = None,
) -> dict[int, LogOutcome]:
    """Run the map step over ``(index, log)`` pairs, in parallel when it pays."""
    tasks = [(log, staging / PARTS_DIR / str(n), pages) for n, log in logs]
    workers = workers or os.cpu_count() or 1
    results: dict[int, LogOutcome] = {}
    if workers == 1 or len(tasks) < 8:
        outcomes: Iterator[LogOutcome] = (process_log(*t) for t in tasks)
        pool = None
    else:
        # fork: workers inherit the loaded templates and modules instead of re-importing them.
        pool = ProcessPoolExecutor(workers, mp_context=get_context("fork"))
        chunk = max(1, min(16, len(tasks) // (workers * 8)))
        outcomes = pool.map(_process_star, tasks, chunksize=chunk)
    try:
        for (n, _), outcome in zip(logs, outcomes, strict=True):
            results[n] = outcome
            if progress:
                progress.advance()
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return results


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
    if entry.sha256 == manifest.file_digest(log.path):
        return entry
    return None


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


def build(options: BuildOptions, progress: Progress | None = None) -> BuildReport:
    """Build the site from every log in the event-log dirs and publish it.

    A full build swaps a complete new site in atomically. When the published site's
    manifest matches (same sitegen, templates and options), only logs that changed
    are read again and the site is updated in place, one job directory and one
    listing file at a time, each step atomic and in an order that keeps every
    listed job complete.
    """
    started = time.perf_counter()
    check_paths(options)
    if options.archive is not None:
        check_archive_path(options.archive, options.output, options.dirs)
    logs = discover_all(options.dirs)
    stamp = build_timestamp()
    pages = PageRenderer(
        options.templates_dir,
        title=options.title,
        robots=options.robots,
        pages_dir=options.pages_dir,
        notes_dirs=[d / NOTES_DIR for d in options.dirs],
        raw_logs=options.raw_logs,
    )
    fingerprint = manifest.fingerprint(options, pages.template_dirs(), RUN_OPTIONS)
    old = None if options.clean else manifest.load(options.output)
    if old is not None and old.fingerprint != fingerprint:
        old = None
    # What the published site holds, taken before reused entries are updated below.
    old_roots = _roots(old.logs.values()) if old else set()
    reused: dict[int, LogEntry] = {}
    for n, log in enumerate(logs):
        entry = _unchanged(log, old.logs.get(log.key) if old else None)
        if entry is not None:
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

    publication = Publication(options.output)
    staging = publication.open()
    try:
        todo = [(n, log) for n, log in enumerate(logs) if n not in reused]
        if progress:
            progress.start(len(todo))
        fresh = map_logs(todo, staging, pages, options.workers, progress)
        outcomes = [fresh[n] if n in fresh else reused[n].outcome for n in range(len(logs))]
        chosen = select(outcomes, options, stamp)
        # A reused log may be published now though it was not before (it lost a duplicate,
        # or retention left it out): its files are not on the site, so render them.
        late = [
            (n, logs[n])
            for n, entry in reused.items()
            if n in chosen.published and not entry.published
        ]
        fresh.update(map_logs(late, staging, pages, options.workers))
        writer = SiteWriter(staging, fresh=True)
        moves: list[tuple[Path, str]] = []
        entries: dict[str, LogEntry] = {}
        files = bytes_ = 0
        for n, log in enumerate(logs):
            outcome = outcomes[n] = fresh.get(n, outcomes[n])
            published = n in chosen.published and bool(outcome.roots)
            if published and n in fresh:
                moves.extend((staging / PARTS_DIR / str(n) / root, root) for root in outcome.roots)
            if published:
                files += outcome.files
                bytes_ += outcome.bytes
            entry = reused.get(n) or LogEntry(log.size, log.mtime_ns, outcome.sha256, outcome)
            entry.outcome, entry.mtime_ns, entry.published = outcome, log.mtime_ns, published
            entries[log.key] = entry
        report = _report(options, logs, outcomes, chosen, started, rebuilt=len(fresh))
        for rel, data in api.site_files(report.jobs, report.problems, stamp):
            writer.write(rel, data)
        pages.site_pages(writer, report.jobs, report.running, report.problems)
        for name, text in hosting.site_files().items():
            writer.write(name, text.encode())
        listing = writer.written_names()
        record = Manifest(__version__, fingerprint, entries, listing)
        if old is None:
            for source, root in moves:
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
