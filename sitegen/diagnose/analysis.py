"""One job analysed once, for every output: its summary, findings, root cause, stage figures.

The map step renders pages from what ``analyse`` returns, and ``sitegen check`` judges the
same result: what a page shows, the gate sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.diagnose.counting import counting
from sitegen.diagnose.diagnosis import Diagnosis, diagnose, facts_of
from sitegen.diagnose.failures import executor_errors, task_error_patterns
from sitegen.diagnose.figures import failed_attempts, job_rows, stage_figures
from sitegen.diagnose.statuses import EndedStatuses, ended_statuses
from sitegen.eventlog import dotgraph, payload
from sitegen.eventlog.dotgraph import JobGraph
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import ExecutorStats, JobSummary, is_failed, kept_config


@dataclass(frozen=True)
class JobAnalysis:
    """What is known of one completed job once its log is read: the renderers present it."""

    # The per-job record the reduce, the state and the gate keep (findings included).
    summary: JobSummary
    graph: JobGraph
    # The decoded stages payload in stage order, with each stage's TaskEnd records beside it,
    # then the stages a replan dropped (``dropped``), made of their TaskEnd records.
    stages: list[tuple[payload.Stage, list[TaskEnd]]]
    diagnosis: Diagnosis
    # What the stages and tasks that the payload and the DOT still call Running were, by how
    # the job ended (a failed job's failing stage: Failed); the pages show it, the API does not.
    statuses: EndedStatuses
    # The ids of the stages a replan dropped (diagnose.replanned): no payload row, plan or DOT.
    dropped: frozenset[int] = frozenset()


def analyse(read: LogRead, file: str, log_bytes: int = 0) -> JobAnalysis:
    """Analyse a completed log: its summary, stage figures, findings and critical path."""
    assert read.job_end is not None
    graph = dotgraph.parse(read.job_end.dot)
    stages = payload.stages(read.job_end.stages)
    facts = facts_of(read, stages, graph)
    found = diagnose(facts)
    summary = summarize(read, file)
    summary.log_bytes = log_bytes
    summary.stages = stage_figures(stages, failed_attempts(read.tasks))
    summary.input_rows, summary.output_rows = job_rows(summary.stages, facts.stage_edges)
    summary.counting = counting(stages, facts.stage_edges, summary.job_status)
    summary.findings = found.findings
    summary.root_cause = found.root_cause.error if found.root_cause else None
    summary.what_if = found.what_if
    summary.evidence = found.evidence
    statuses = ended_statuses(read.job_end.status, facts.stages)
    return JobAnalysis(summary, graph, facts.stages, found, statuses, facts.dropped)


def summarize(read: LogRead, file: str) -> JobSummary:
    """Return a completed log's counts: times, tasks, executors, failed attempts by error."""
    assert read.job_end is not None
    end = read.job_end
    idx = end.index
    failure = None
    if is_failed(end.status):
        failure = str(end.status["Failed"])
    executors: dict[str, ExecutorStats] = {}
    failed_tasks = 0
    config, config_dropped = kept_config(read.config)
    masked: dict[str, str] = {}  # each error text masked once, for both counts
    for task in read.tasks:
        stats = executors.get(task.executor_id)
        if stats is None:
            stats = executors[task.executor_id] = ExecutorStats()
        stats.tasks += 1
        busy = task.end_exec_time - task.start_exec_time
        if busy > 0:
            stats.busy_ms += busy
        if is_failed(task.status):
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
        config=config,
        config_dropped=config_dropped,
        task_errors=(
            task_error_patterns((t.status for t in read.tasks), idx.job_id, masked)
            if failed_tasks
            else []
        ),
        executor_errors=executor_errors(read.tasks, idx.job_id, masked) if failed_tasks else {},
    )
