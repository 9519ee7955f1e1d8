"""The map step: one log in, that job's files written into its own part directory.

Runs in worker processes. It imports the renderers, so the pipeline loads this module
only when there is work to do: a build with nothing to do starts fast.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import NamedTuple, Protocol, overload

import msgspec

from sitegen.builder.contexts.peek import let_go, taken
from sitegen.builder.map.context import MapContext
from sitegen.builder.map.pool import pool_map
from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.records import LogOutcome, LogRow
from sitegen.diagnose.analysis import JobAnalysis, analyse
from sitegen.diagnose.failures import failure_rows
from sitegen.diagnose.fleet import hour_of
from sitegen.diagnose.insights import ranked
from sitegen.diagnose.recurring import RunContext, failed, succeeded
from sitegen.errors import SitegenError
from sitegen.eventlog.classify import judge
from sitegen.eventlog.failure import failure_message
from sitegen.eventlog.limits import LogLimits
from sitegen.eventlog.logfiles import LogFile, LogList, scheduler_of
from sitegen.eventlog.notes import read_note
from sitegen.eventlog.rawlog import gzip_chunks, hold_log
from sitegen.eventlog.reader import LogRead, read_log, refused
from sitegen.eventlog.sources import SourceReadError
from sitegen.layout import API_JOBS_DIR, PARTS_DIR, api_job_dir
from sitegen.model import (
    Classification,
    JobSummary,
    Problem,
    ProblemKind,
    RunningJob,
    is_failed,
)
from sitegen.publish.writer import SiteWriter
from sitegen.render import api, urls
from sitegen.render.pages import PageRenderer
from sitegen.render.tableblob import encode_tables
from sitegen.render.tables import job_tables

# What a mapper hands on for each log: its place, its outcome, whether it went to its part dir.
OnResult = Callable[[int, LogOutcome, bool], None]


class Progress(Protocol):
    """Something that shows how far the map step is (a progress bar, or nothing)."""

    def start(self, total: int) -> None:
        """Announce how many logs will be read."""

    def advance(self) -> None:
        """Count one more log read."""


def state_row(summary: JobSummary) -> LogRow:
    """Return the columns the state keeps of a job beside its summary (it computes none)."""
    # Insights ranks by these columns (State.ranked), as it ranks summaries.
    figures = ranked(summary)
    return LogRow(
        failed=failed(summary),
        succeeded=succeeded(summary),
        findings=figures.findings,
        worst_rank=figures.worst_rank,
        cost_ms=figures.cost_ms,
        listed=api.list_entry(summary),
        failures=list(failure_rows(summary)),
        hour=hour_of(summary.start_time),
    )


def running_job(
    read: LogRead, log: LogFile, abandoned: str | None = None, ended: str | None = None
) -> RunningJob:
    """Describe a log without JobEnd from what it recorded so far.

    ``abandoned``: why its run is taken for abandoned; ``ended``: why its job is taken to
    have ended unrecorded.
    """
    start = read.job_start
    times = [t.end_exec_time for t in read.tasks]
    return RunningJob(
        file=log.key,
        job_id=start.job_id if start else log.name_id,
        job_name=start.job_name if start else "",
        queued_at=start.queued_at if start else 0,
        submitted_at=start.submitted_at if start else 0,
        # Stage records, where a log has them: no scheduler writes them (see RunningJob).
        stages_started=len(read.stage_starts),
        stages_ended=len(read.stage_ends),
        tasks=len(read.tasks),
        failed_tasks=sum(1 for t in read.tasks if is_failed(t.status)),
        last_event_time=max(times, default=start.submitted_at if start else 0),
        abandoned=abandoned,
        ended=ended,
        stages_with_tasks=len({t.stage_id for t in read.tasks}),
    )


def root_parents(pages: PageRenderer) -> set[str]:
    """Return the directories job roots live in (``api/job``, ``jobs``), made before the map."""
    return {str(API_JOBS_DIR), *pages.job_dirs_parents()}


def job_roots(pages: PageRenderer, job_id: str) -> list[str]:
    """Return the directories one job's files are in (its API directory and its pages')."""
    return [api_job_dir(job_id), *pages.job_dirs(job_id)]


def part_dir(staging: Path, n: int) -> Path:
    """Return the part directory of the ``n``-th log, for a job whose directories were taken."""
    return staging / PARTS_DIR / str(n)


def claim(staging: Path, roots: list[str], part: Path, claimed: list[Path]) -> Path:
    """Return where to write a job: the staging dir, or the log's part dir if taken.

    What it takes is added to ``claimed``, so a log whose map step fails leaves nothing.
    """
    # Writing in place when this log is first to claim the job's directories (nearly
    # always) saves making, moving and removing a part directory per job; the part dir is
    # only for a second log with the same job id, for the reduce to sort out.
    # Noted before they are made: a worker killed between a mkdir and the claim's line had
    # left an empty directory no one claimed, and the log mapped again found it taken.
    _append_claim(part, _MAKING + "\t".join(roots))
    made: list[Path] = []
    for root in roots:
        try:
            os.mkdir(staging / root)
        except FileExistsError:
            for directory in reversed(made):
                os.rmdir(directory)  # still empty: nothing was written yet
            _append_claim(part, _FORGOTTEN)  # the directories are another log's
            claimed.append(part)
            return part
        made.append(staging / root)
        claimed.append(staging / root)
    _mark_claim(part, roots)
    return staging


# Which staging directories each log claimed, one line a claim: "<part>\t<root>\t<root>…".
# One file that every worker appends to (a small O_APPEND write lands whole), not a file per
# log: creating a file per job was a measurable share of a full build's kernel time.
CLAIMS = ".claims"
# A line "<part>\t" (no roots): the claims of that log before it were undone.
_FORGOTTEN = ""
# A line "<part>\t?<root>\t<root>…": the directories that log is about to make (unclaimed).
_MAKING = "?"


def _claims_file(part: Path) -> str:
    """Return the claims file of the staging dir that ``part`` (a log's part dir) belongs to."""
    return f"{part.parent}/{CLAIMS}"


def _mark_claim(part: Path, roots: list[str]) -> None:
    """Note which staging directories log ``part`` claimed (outside the site, in PARTS_DIR).

    A worker killed mid-job leaves them half-written; ``forget_claim`` removes them before
    the log is mapped again.
    """
    _append_claim(part, "\t".join(roots))


def _append_claim(part: Path, roots: str) -> None:
    """Append one claims line of ``part``: its roots, or none to forget what it claimed."""
    line = f"{part.name}\t{roots}\n".encode()
    path = _claims_file(part)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        part.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _claims(part: Path) -> tuple[list[str], list[str]]:
    """Return the directories log ``part`` claimed, and those it was making when it stopped."""
    prefix = f"{part.name}\t"
    roots: list[str] = []
    making: list[str] = []
    try:
        with open(_claims_file(part), encoding="utf-8") as lines:
            for line in lines:
                if line.startswith(prefix):
                    rest = line[len(prefix) :].rstrip("\n")
                    if rest.startswith(_MAKING):
                        making = rest[len(_MAKING) :].split("\t")
                    elif rest == _FORGOTTEN:
                        roots, making = [], []
                    else:
                        roots, making = [*roots, *rest.split("\t")], []
    except FileNotFoundError:
        pass
    return roots, making


# In the parts dir: one empty directory per chunk of logs a Dask worker began mapping, so that
# a chunk run again (its worker died) first undoes what the dead attempt claimed.
ATTEMPTS = "attempts"


def first_attempt(staging: Path, chunk: str) -> bool:
    """Note that a chunk of logs is being mapped; tell whether it is the first time."""
    path = staging / PARTS_DIR / ATTEMPTS / chunk
    try:
        os.mkdir(path)
    except FileNotFoundError:
        os.makedirs(path.parent, exist_ok=True)
        return first_attempt(staging, chunk)
    except FileExistsError:
        return False
    return True


def forget_claim(task: Task) -> None:
    """Remove what a dead worker left of one log's job: its claimed dirs and its part dir."""
    _, staging, part, *_ = task
    roots, making = _claims(part)
    for root in roots:
        shutil.rmtree(staging / root, ignore_errors=True)
    for root in making:
        # Made (or not) by the dead worker, which writes nothing in them before it claims
        # them: empty, or another log's that is not empty and stays.
        with contextlib.suppress(OSError):
            os.rmdir(staging / root)
    # Undone: a later claim of the same directories by another log is not this log's.
    _append_claim(part, _FORGOTTEN)
    shutil.rmtree(part, ignore_errors=True)


def process_log(
    log: LogFile,
    staging: Path,
    part: Path,
    map_context: MapContext,
    context: RunContext | None = None,
) -> tuple[LogOutcome, bool]:
    """Map step: read one log and write that job's files; say whether they went to ``part``.

    ``context`` is what the reduce step knows of the other runs of the job's name. Whatever
    goes wrong with one log (``MemoryError`` and ``RecursionError`` too) is that log's
    problem: it is reported, and what was written of it is removed.
    """
    claimed: list[Path] = []
    try:
        return _process_log(log, staging, part, map_context, context, claimed)
    except Exception as exc:
        cause = _failure_of(exc)
        for directory in claimed:
            shutil.rmtree(directory, ignore_errors=True)
        return failed_outcome(log, failure_message(cause)), False


def _failure_of(exc: Exception) -> BaseException:
    """Return why one log failed (``exc``, or what it wraps); raise what stops the build."""
    if isinstance(exc, OSError | SitegenError):
        # The system (a full disk) or the operator (a broken template) stops the build;
        # a template that ran out of stack on this log's content does not.
        if not isinstance(exc.__cause__, MemoryError | RecursionError):
            raise exc
        return exc.__cause__
    return exc


def failed_outcome(log: LogFile, why: str, digest: bool = True) -> LogOutcome:
    """Return the outcome of a log whose map step failed: an unreadable log, saying why.

    ``digest``: take the log's SHA-256, which the build state keeps (``sitegen check`` does not).
    """
    problem = Problem(ProblemKind.UNREADABLE, log.key, why, None, log.name_id)
    return LogOutcome(
        file=log.key,
        classification=Classification.UNREADABLE,
        problems=[problem],
        sha256=log_digest(log.path) if digest and not log.skip else "",
    )


def died_outcome(log: LogFile, how: str, digest: bool = True) -> LogOutcome:
    """Return the outcome of a log whose worker process died (``how``) while reading it."""
    return failed_outcome(log, f"the process reading this log was {how}", digest)


def killed_outcome(task: Task, how: str) -> tuple[LogOutcome, bool]:
    """Return the outcome of a log whose worker process died (``how``) while mapping it."""
    forget_claim(task)
    return died_outcome(task[0], how), False


class Analysed(NamedTuple):
    """One log read, judged and analysed: the map step's first half, and all of ``check``."""

    # Its classification and problems, what it recorded so far if it has no JobEnd, and the
    # job's summary if it has a job to publish; no SHA-256 (the map step takes it).
    outcome: LogOutcome
    # What was read of it; None when reading, judging or analysing it failed.
    read: LogRead | None
    # The job's analysis; None when it has no job to publish (or it failed).
    analysis: JobAnalysis | None


def read_and_analyse(
    log: LogFile, limits: LogLimits, held: bytes | None = None, measured: bool = False
) -> Analysed:
    """Read one log, judge it and analyse its job, as the map step and ``sitegen check`` do.

    ``held``: the log's bytes, when the caller holds them (``eventlog.rawlog.hold``);
    ``measured``: read each TaskEnd's launch time and metrics too (``read_log``). Whatever
    goes wrong with one log (``MemoryError`` and ``RecursionError`` too) is that log's problem,
    an unreadable log; an ``OSError`` or a ``SitegenError`` of its own stops the caller. A log
    its store failed to hand over (``SourceReadError``) is unreadable this time only: its
    outcome says ``retry``.
    """
    try:
        return _read_and_analyse(log, limits, held, measured)
    except SourceReadError as exc:
        outcome = failed_outcome(log, str(exc), False)
        outcome.retry = True
        return Analysed(outcome, None, None)
    except Exception as exc:
        return Analysed(failed_outcome(log, failure_message(_failure_of(exc)), False), None, None)


def _read_and_analyse(
    log: LogFile, limits: LogLimits, held: bytes | None, measured: bool
) -> Analysed:
    """Do ``read_and_analyse``'s work."""
    read = refused(log.path, log.skip) if log.skip else read_log(log.path, held, limits, measured)
    verdict = judge(log, read, limits)
    outcome = LogOutcome(
        file=log.key,
        classification=verdict.classification or read.classification,
        problems=verdict.problems,
    )
    if read.job_end is None or verdict.job_id is None:
        if outcome.classification is Classification.INCOMPLETE:
            outcome.running = running_job(read, log)
        elif outcome.classification is Classification.ABANDONED:
            outcome.running = running_job(read, log, verdict.problems[0].message)
        elif outcome.classification is Classification.ENDED_UNRECORDED:
            outcome.running = running_job(read, log, ended=verdict.problems[0].message)
        return Analysed(outcome, read, None)
    analysis = analyse(read, outcome.file, log.size)
    start = read.job_start
    analysis.summary.scheduler = scheduler_of(start.scheduler_id if start else None, log)
    outcome.summary = analysis.summary
    return Analysed(outcome, read, analysis)


def _process_log(
    log: LogFile,
    staging: Path,
    part: Path,
    map_context: MapContext,
    context: RunContext | None,
    claimed: list[Path],
) -> tuple[LogOutcome, bool]:
    """Do ``process_log``'s work; what it makes in the staging dir is added to ``claimed``."""
    pages, limits = map_context.pages, map_context.limits
    # Read once: the bytes the peek read (and their digest), else the log's read now; hashed
    # once: the digest a peek in another process made (``LogFile.sha256``), else hashed now.
    peeked = None if log.skip else taken(log)
    digest = log.sha256
    if peeked is not None:
        kept, digest = peeked
    elif log.skip or log.size > limits.max_log_bytes:
        kept = None
    else:
        kept = hold_log(log.path, log.size, limits)
    held = None if kept is None else kept.plain
    # The SQL tables' TaskEnd extras are decoded with the rest (map_context.data).
    outcome, read, analysis = read_and_analyse(log, limits, held, map_context.data)
    if not log.skip and not outcome.retry:
        outcome.sha256 = digest or log_digest(log.path, None if kept is None else kept.stored)
    if read is None or read.job_end is None or analysis is None:
        return outcome, False
    summary = analysis.summary
    job_id = summary.job_id  # the verdict's: JobEnd's own
    roots = job_roots(pages, job_id)
    target = claim(staging, roots, part, claimed)
    writer = SiteWriter(target, fresh=True, existing=roots if target == staging else ())
    for rel, data, same_as in api.job_files(job_id, read.job_end):
        if same_as is None:
            writer.write(rel, data)
        else:
            writer.write_copy(rel, same_as, data)
    if map_context.raw_logs:
        raw = gzip_chunks(log.path, held, None if kept is None else kept.stored)
        summary.raw_log_bytes = writer.write_chunks(urls.raw_log(job_id), raw)
    if map_context.data:
        # The SQL tables' rows (data/): the state keeps them, the reduce writes the files.
        tables = job_tables(read, analysis, log.key, held=held, limits=limits)
        outcome.tables, outcome.task_rows = encode_tables(tables), tables.rows("tasks")
    held = kept = None  # the pages need only what was read from it
    note = read_note(map_context.notes_dirs, job_id, map_context.follow_links)
    outcome.note_sha256 = note.sha256 if note else ""
    found = note.as_problem(job_id) if note else None
    if found is not None:
        outcome.problems = [*outcome.problems, found]
        note = None
    outcome.context_sha256 = context.sha256 if context else ""
    pages.job_pages(writer, read, analysis, note, context)
    outcome.row = state_row(summary)
    outcome.roots = roots
    outcome.files = writer.files_written
    outcome.bytes = writer.bytes_written
    return outcome, target != staging


def _process_encoded(args: Task) -> bytes:
    """Map one log (``Task``: ``process_log``'s arguments); return its outcome as MessagePack."""
    return _OUTCOME_ENCODER.encode(process_log(*args))


def _killed_encoded(task: Task, how: str) -> bytes:
    """Return ``killed_outcome`` as MessagePack, as the map's other outcomes come."""
    return _OUTCOME_ENCODER.encode(killed_outcome(task, how))


# A log's outcome comes from a worker as MessagePack, as a Dask worker's does: unpickling an
# outcome (its summary's nested structs) cost this process 18 us a small job, and the worker 24
# to pickle it; decoding it costs 6 us, and encoding 2.
_OUTCOME_ENCODER = msgspec.msgpack.Encoder()
_OUTCOME_DECODER = msgspec.msgpack.Decoder(tuple[LogOutcome, bool])


# One log's arguments of the map step (process_log).
Task = tuple[LogFile, Path, Path, MapContext, RunContext | None]


class _Tasks(Sequence[Task]):
    """The map step's arguments per log, made when a chunk of them is submitted."""

    def __init__(
        self,
        logs: Sequence[LogFile],
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        contexts: Mapping[int, RunContext],
    ) -> None:
        self.logs = logs
        self.which = which
        self.staging = staging
        self.map_context = map_context
        self.contexts = contexts

    def __len__(self) -> int:
        """Return how many logs there are to map."""
        return len(self.which)

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> list[Task]: ...

    def __getitem__(self, index: int | slice) -> Task | list[Task]:
        """Return one log's arguments, or a list of them for a slice."""
        if isinstance(index, slice):
            return [self._task(n) for n in self.which[index]]
        return self._task(self.which[index])

    def _task(self, n: int) -> Task:
        """Return the arguments of log ``n``."""
        return task_of(n, self.logs[n], self.staging, self.map_context, self.contexts.get(n))


def task_of(
    n: int, log: LogFile, staging: Path, map_context: MapContext, context: RunContext | None
) -> Task:
    """Return the map step's arguments of the ``n``-th log (``process_log``'s)."""
    return (log, staging, part_dir(staging, n), map_context, context)


def map_here(
    logs: LogList,
    which: Sequence[int],
    staging: Path,
    map_context: MapContext,
    workers: int | None,
    on_result: OnResult,
    progress: Progress | None = None,
    contexts: Mapping[int, RunContext] | None = None,
    pool: Executor | None = None,
) -> None:
    """Run the map step over the logs at ``which`` on this machine, in forked workers when it pays.

    Hands each log's outcome to ``on_result`` as it arrives, with whether the log was
    written to its part directory (``part_dir``) rather than straight into the staging
    dir: the caller records it and keeps only what it needs, not every outcome.
    ``contexts`` holds the run context of the logs that have one, by index; ``pool`` is
    workers started earlier (else a pool is made when it pays).
    """
    # Each log's arguments are made as its chunk is submitted: a list of them for every log
    # lived as long as the build (6 MB of a full build at 100,000 logs).
    tasks = _Tasks(logs, which, staging, map_context, {} if contexts is None else contexts)
    sizes = [logs.sizes[n] for n in which]  # cut by bytes too: logs of 800 tasks weigh 30 small
    mapped = pool_map(_process_encoded, tasks, workers, pool, _killed_encoded, forget_claim, sizes)
    decode = _OUTCOME_DECODER.decode
    with mapped as outcomes:
        for n, data in zip(which, outcomes, strict=True):
            outcome, parted = decode(data)
            on_result(n, outcome, parted)
            if progress:
                progress.advance()
    let_go()
