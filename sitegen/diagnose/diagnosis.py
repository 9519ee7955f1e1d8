"""A job's diagnosis, computed once in the map step from data already in memory."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.critical_path import CriticalPath, critical_path, stage_windows
from sitegen.diagnose.executors import slow_executors
from sitegen.diagnose.failed_attempts import (
    Attempt,
    failed_attempts,
    failed_finding,
    root_cause,
)
from sitegen.diagnose.stage_findings import SlowTask, judge_stage, same_executor, stage_times
from sitegen.diagnose.timing import idle, queued
from sitegen.eventlog.dotgraph import JobGraph
from sitegen.eventlog.payload import Stage, as_int
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import Finding, FindingKind, most_severe_first
from sitegen.model import is_failed

_EXECUTOR = attrgetter("executor_id")


@dataclass(frozen=True)
class JobFacts:
    """What the detectors read: the job's times, its stages with their TaskEnd records, its DAG."""

    job_id: str
    failed: bool
    queued_at: int
    started_at: int
    completed_at: int
    tasks: list[TaskEnd]
    stages: list[tuple[Stage, list[TaskEnd]]]
    stage_edges: list[tuple[str, str]]


@dataclass
class Diagnosis:
    """The findings, most severe first, and what the pages mark with them."""

    findings: list[Finding] = field(default_factory=list)
    root_cause: Attempt | None = None
    critical_path: CriticalPath | None = None
    # Per stage id: the payload rows (positions in its task list) a finding is about.
    flagged_rows: dict[int, dict[int, FindingKind]] = field(default_factory=dict)
    # Where in its stage's task list each flagged task's row is, by (stage, task id).
    task_rows: dict[tuple[int, int], int] = field(default_factory=dict)
    # Straggler attempts as (stage, task, start), for the timeline.
    straggler_attempts: set[tuple[int, int, int]] = field(default_factory=set)

    def flag(self, stage_id: int | None, task: SlowTask, kind: FindingKind) -> None:
        """Mark a task's row as the evidence of a finding of ``kind``."""
        if stage_id is None or task.row is None:
            return
        self.flagged_rows.setdefault(stage_id, {})[task.row] = kind
        if task.task_id is not None:
            self.task_rows.setdefault((stage_id, task.task_id), task.row)

    def for_stage(self, stage_id: int | None) -> list[Finding]:
        """Return the findings about one stage."""
        return [f for f in self.findings if stage_id is not None and f.stage_id == stage_id]


def diagnose(facts: JobFacts) -> Diagnosis:
    """Run every detector over one job."""
    result = Diagnosis()
    found: list[Finding] = []
    timed = [stage_times(stage, ends) for stage, ends in facts.stages]
    executors = len(set(map(_EXECUTOR, facts.tasks)))
    slow_nodes = slow_executors(timed) if executors > 1 else {}
    found.extend(slow_nodes.values())
    failures: list[Attempt] = []
    for times_, (stage, ends) in zip(timed, facts.stages, strict=True):
        verdict = judge_stage(times_)
        found.extend(verdict.findings)
        sid = times_.stage_id
        for task in verdict.skewed:
            result.flag(sid, task, FindingKind.DATA_SKEW)
        # A slow node explains its slow tasks: say it once, not once per task.
        stragglers = []
        for task, finding in verdict.stragglers:
            if task.executor in slow_nodes:
                result.flag(sid, task, FindingKind.SLOW_EXECUTOR)
            else:
                stragglers.append((task, finding))
        one_node = same_executor(times_, verdict, executors)
        if one_node is not None:
            if one_node.executor_id not in slow_nodes:
                found.append(one_node)
            stragglers = []
            for task, _ in verdict.stragglers:
                result.flag(sid, task, FindingKind.SLOW_EXECUTOR)
        for task, finding in stragglers[: th.STRAGGLERS_PER_STAGE]:
            found.append(finding)
            result.flag(sid, task, FindingKind.STRAGGLER)
            if task.end is not None:
                result.straggler_attempts.add(
                    (task.end.stage_id, task.end.task_id, task.end.start_exec_time)
                )
        attempts = failed_attempts(stage.stage_id, ends, stage.task_list)
        failures.extend(attempts)
        tried = len(ends) or len(stage.task_list)
        stage_failed = failed_finding(attempts, tried, facts.failed)
        if stage_failed is not None:
            found.append(stage_failed)
    job_wide = (
        queued(facts.queued_at, facts.started_at, facts.completed_at),
        idle(facts.tasks, facts.started_at, facts.completed_at),
    )
    found.extend(f for f in job_wide if f is not None)
    result.findings = most_severe_first(found)
    if facts.failed:
        result.root_cause = root_cause(failures)
    windows = stage_windows([ends for _, ends in facts.stages])
    result.critical_path = critical_path(windows, facts.stage_edges)
    return result


def findings_json(job_id: str, findings: list[Finding]) -> bytes:
    """Return ``jobs/<job_id>/findings.json``."""
    return msgspec.json.encode({"job_id": job_id, "findings": findings})


def facts_of(read: LogRead, stages: list[Stage], graph: JobGraph) -> JobFacts:
    """Gather a completed log's facts from its decoded stages payload and DAG."""
    assert read.job_end is not None
    end = read.job_end
    by_stage: dict[int, list[TaskEnd]] = defaultdict(list)
    for task in read.tasks:
        by_stage[task.stage_id].append(task)
    pairs = []
    for stage in stages:
        sid = as_int(stage.stage_id)
        pairs.append((stage, by_stage.get(sid, []) if sid is not None else []))
    return JobFacts(
        job_id=end.index.job_id,
        failed=is_failed(end.status),
        queued_at=end.queued_at,
        started_at=end.started_at,
        completed_at=end.completed_at,
        tasks=read.tasks,
        stages=pairs,
        stage_edges=graph.stage_edges(),
    )
