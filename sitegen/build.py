"""The build pipeline: a map over independent logs, a small reduce, an atomic publish."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import msgspec

from sitegen import __version__, api, hosting
from sitegen.archive import ArchiveResult, check_archive_path, write_archive
from sitegen.classify import Candidate, duplicates, judge
from sitegen.errors import SitegenError, UsageError
from sitegen.eventlog.discover import LogFile, check_log_dir, discover
from sitegen.eventlog.reader import LogRead, read_log
from sitegen.layout import MANIFEST_NAME, endpoint_dir
from sitegen.model import (
    Classification,
    ExecutorStats,
    JobSummary,
    Problem,
    RunningJob,
)
from sitegen.pages import PageRenderer
from sitegen.writer import Publication, SiteWriter

PARTS_DIR = ".parts"


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on."""

    log_dir: Path
    output: Path
    strict: bool = False
    workers: int | None = None
    # After publishing, also pack the site into this .tar.gz / .zip (outside output and logs).
    archive: Path | None = None


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
    log_dir = options.log_dir
    check_log_dir(log_dir)
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


def process_log(log: LogFile, part: Path, pages: PageRenderer) -> LogOutcome:
    """Map step: read one log and write that job's files into its own part directory."""
    read = read_log(log.path)
    verdict = judge(log, read)
    outcome = LogOutcome(
        file=log.path.name, classification=read.classification, problems=verdict.problems
    )
    if read.job_end is None or verdict.job_id is None:
        if read.classification is Classification.INCOMPLETE:
            outcome.running = running_job(read, log)
        return outcome
    job_id = verdict.job_id
    summary = summarize(read, outcome.file)
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
    candidates = [
        Candidate(o.summary.job_id, o.summary.completed_at, o.file) if o.summary else None
        for o in outcomes
    ]
    for index, problem in duplicates(candidates).items():
        loser = outcomes[index]
        loser.problems.append(problem)
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
    if options.archive is not None:
        check_archive_path(options.archive, options.output, [options.log_dir])
    logs = discover(options.log_dir)
    stamp = build_timestamp()
    publication = Publication(options.output)
    staging = publication.open()
    try:
        pages = PageRenderer()
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
        classes = Counter(str(o.classification) for o in outcomes)
        for rel, data in api.site_files(jobs, problems, stamp):
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
    archive = None
    if options.archive is not None:
        # The published directory is what gets packed, so the archive equals it.
        try:
            archive = write_archive(options.output, options.archive, int(stamp))
        except SitegenError as exc:
            raise SitegenError(
                f"the site was published to {options.output}, but {exc.message}", exc.path
            ) from exc
    return BuildReport(
        output=options.output,
        logs=len(logs),
        jobs=jobs,
        running=running,
        problems=problems,
        files_written=files + writer.files_written,
        bytes_written=bytes_ + writer.bytes_written,
        seconds=time.perf_counter() - started,
        classifications={str(k): classes[str(k)] for k in Classification},
        archive=archive,
    )
