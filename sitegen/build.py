"""The build pipeline: a map over independent logs, a small reduce, an atomic publish."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import msgspec

from sitegen import __version__, api, hosting
from sitegen.errors import UsageError
from sitegen.eventlog.discover import LogFile, discover, unsafe_id_reason
from sitegen.eventlog.reader import LogRead, read_log
from sitegen.layout import MANIFEST_NAME, endpoint_dir
from sitegen.model import (
    Classification,
    ExecutorStats,
    JobSummary,
    Problem,
    ProblemKind,
    RunningJob,
)
from sitegen.pages import SITE_TITLE, PageRenderer
from sitegen.writer import Publication, SiteWriter

PARTS_DIR = ".parts"
NOTES_DIR = "notes"  # <log dir>/notes/<job_id>.md adds an operator note to a job page


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on."""

    log_dir: Path
    output: Path
    strict: bool = False
    workers: int | None = None
    pages_dir: Path | None = None
    templates_dir: Path | None = None
    robots: bool = False
    title: str = SITE_TITLE


@dataclass
class LogOutcome:
    """What the map step returns for one log: small, picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem] = field(default_factory=list)
    summary: JobSummary | None = None
    running: RunningJob | None = None
    roots: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0


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
    log_dir = options.log_dir
    if not log_dir.exists():
        raise UsageError("event-log dir does not exist", log_dir)
    if not log_dir.is_dir():
        raise UsageError("event-log dir is not a directory", log_dir)
    if not os.access(log_dir, os.R_OK | os.X_OK):
        raise UsageError("event-log dir is not readable", log_dir)
    logs = log_dir.resolve()
    out = options.output.resolve()
    if out == logs or out.is_relative_to(logs):
        raise UsageError("output dir must not be the event-log dir or inside it", options.output)
    if logs.is_relative_to(out):
        # Publishing swaps the output away and deletes the old one: logs inside it would go too.
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
        stats.busy_ms += max(0, task.end_exec_time - task.start_exec_time)
        if isinstance(task.status, dict) and "Failed" in task.status:
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
        file=log.path.name,
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


_PROBLEM_OF = {
    Classification.INCOMPLETE: ProblemKind.INCOMPLETE,
    Classification.NEWER_VERSION: ProblemKind.NEWER_VERSION,
    Classification.MALFORMED: ProblemKind.MALFORMED,
    Classification.UNREADABLE: ProblemKind.UNREADABLE,
    Classification.NOT_A_LOG: ProblemKind.NOT_A_LOG,
}


def process_log(log: LogFile, part: Path, pages: PageRenderer) -> LogOutcome:
    """Map step: read one log and write that job's files into its own part directory."""
    read = read_log(log.path)
    name = log.path.name
    outcome = LogOutcome(file=name, classification=read.classification)
    if read.job_end is None:
        message = read.message
        if read.classification is Classification.INCOMPLETE and log.running:
            message = "still running (.eventlog.running): no JobEnd record yet"
        outcome.problems.append(
            Problem(_PROBLEM_OF[read.classification], name, message, read.line, log.name_id)
        )
        if read.classification is Classification.INCOMPLETE:
            outcome.running = running_job(read, log)
        return outcome
    job_id = read.job_end.index.job_id
    reason = unsafe_id_reason(job_id)
    if reason is not None:
        outcome.problems.append(Problem(ProblemKind.UNSAFE_ID, name, reason, read.line))
        return outcome
    if job_id != log.name_id:
        outcome.problems.append(
            Problem(
                ProblemKind.ID_MISMATCH,
                name,
                f"file name says {log.name_id!r} but JobEnd.index says {job_id!r}; "
                "published under the JobEnd id",
                read.line,
                job_id,
            )
        )
    summary = summarize(read, name)
    writer = SiteWriter(part)
    for rel, data in api.job_files(job_id, read.job_end):
        writer.write(rel, data)
    pages.job_pages(writer, read, summary)
    outcome.summary = summary
    outcome.roots = [str(endpoint_dir("job/{job_id}", job_id=job_id)), *pages.job_roots(job_id)]
    outcome.files = writer.files_written
    outcome.bytes = writer.bytes_written
    return outcome


def _process_star(args: tuple[LogFile, Path, PageRenderer]) -> LogOutcome:
    """Unpack arguments for ``ProcessPoolExecutor.map``."""
    return process_log(*args)


def map_logs(
    logs: list[LogFile], staging: Path, pages: PageRenderer, workers: int | None
) -> list[LogOutcome]:
    """Run the map step over every log, in parallel when it pays."""
    tasks = [(log, staging / PARTS_DIR / str(n), pages) for n, log in enumerate(logs)]
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(tasks) < 8:
        return [process_log(*t) for t in tasks]
    # fork: workers inherit the loaded templates and modules instead of re-importing them.
    with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
        return list(pool.map(_process_star, tasks, chunksize=max(1, len(tasks) // (workers * 8))))


def resolve_duplicates(outcomes: list[LogOutcome]) -> None:
    """Keep the later-completed log per job id; report and unpublish the others."""
    by_id: dict[str, list[LogOutcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.summary is not None:
            by_id[outcome.summary.job_id].append(outcome)
    for job_id, group in by_id.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda o: (-o.summary.completed_at if o.summary else 0, o.file))
        winner = group[0]
        for loser in group[1:]:
            loser.problems.append(
                Problem(
                    ProblemKind.DUPLICATE_ID,
                    loser.file,
                    f"job id {job_id!r} is also in {winner.file}, which completed later; "
                    "this log was not published",
                    job_id=job_id,
                )
            )
            loser.summary = None
            loser.roots = []


def build_timestamp() -> float:
    """Return the build time, honouring SOURCE_DATE_EPOCH for reproducible sites."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return float(epoch) if epoch else time.time()


def build(options: BuildOptions) -> BuildReport:
    """Build the site from every log in ``options.log_dir`` and publish it atomically."""
    started = time.perf_counter()
    check_paths(options)
    logs = discover(options.log_dir)
    publication = Publication(options.output)
    staging = publication.open()
    try:
        pages = PageRenderer(
            options.templates_dir,
            title=options.title,
            robots=options.robots,
            pages_dir=options.pages_dir,
            notes_dir=options.log_dir / NOTES_DIR,
        )
        outcomes = map_logs(logs, staging, pages, options.workers)
        resolve_duplicates(outcomes)
        writer = SiteWriter(staging)
        files = bytes_ = 0
        for n, outcome in enumerate(outcomes):
            part = staging / PARTS_DIR / str(n)
            for root in outcome.roots:
                writer.adopt(root, part / root)
            if outcome.roots:
                files += outcome.files
                bytes_ += outcome.bytes
        shutil.rmtree(staging / PARTS_DIR, ignore_errors=True)
        jobs = [o.summary for o in outcomes if o.summary is not None]
        running = [o.running for o in outcomes if o.running is not None]
        problems = [p for o in outcomes for p in o.problems]
        for rel, data in api.site_files(jobs, problems, build_timestamp()):
            writer.write(rel, data)
        pages.site_pages(writer, jobs, running, problems)
        for name, text in hosting.site_files().items():
            writer.write(name, text.encode())
        manifest = {
            "sitegen": __version__,
            "logs": {o.file: {"classification": str(o.classification)} for o in outcomes},
        }
        writer.write(MANIFEST_NAME, msgspec.json.encode(manifest))
        publication.publish()
    except BaseException:
        publication.discard()
        raise
    return BuildReport(
        output=options.output,
        logs=len(logs),
        jobs=jobs,
        running=running,
        problems=problems,
        files_written=files + writer.files_written,
        bytes_written=bytes_ + writer.bytes_written,
        seconds=time.perf_counter() - started,
    )
