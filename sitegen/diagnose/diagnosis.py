"""A job's diagnosis, computed once in the map step from data already in memory."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.critical_path import CriticalPath, critical_path, stage_windows
from sitegen.diagnose.executors import comparisons, slow_executors
from sitegen.diagnose.failed_attempts import (
    Attempt,
    failed_attempts,
    failed_finding,
    root_cause,
)
from sitegen.diagnose.fleet import evidence
from sitegen.diagnose.replanned import dropped_ids, dropped_sentence, dropped_stage
from sitegen.diagnose.replay import Change, TaskRun, prepare, what_if
from sitegen.diagnose.stage_findings import (
    SlowTask,
    StageTimes,
    job_mad_sigma,
    job_sigma,
    judge_stage,
    stage_times,
)
from sitegen.diagnose.timing import idle, queued
from sitegen.eventlog.dotgraph import JobGraph
from sitegen.eventlog.payload import Stage, as_int, task_statuses
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import Finding, FindingKind, FindingSeverity, WhatIf, most_severe_first
from sitegen.model import ExecutorEvidence, is_failed
from sitegen.text.formatting import duration

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
    # The payload's stages in stage order, then the stages a replan dropped (replanned.py).
    stages: list[tuple[Stage, list[TaskEnd]]]
    stage_edges: list[tuple[str, str]]
    # The ids of the stages a replan dropped: TaskEnd records name them, the payload does not.
    dropped: frozenset[int] = frozenset()


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
    # The job's run time on half, twice and unlimited executors (None: no task ran).
    what_if: WhatIf | None = None
    # Per executor: its speed against its peers and its own failures, for the fleet verdict.
    evidence: dict[str, ExecutorEvidence] = field(default_factory=dict)

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


class _Attempts:
    """The job's attempts as the replay takes them, and where each TaskEnd or payload row is."""

    def __init__(
        self,
        tasks: list[TaskEnd],
        stages: list[tuple[Stage, list[TaskEnd]]],
        timed: list[StageTimes],
        dropped: frozenset[int] = frozenset(),
    ) -> None:
        # tuple.__new__ itself: TaskRun(...) is a Python-level __new__ call per attempt; and
        # comprehensions, not a loop of appends (800,000 attempts at most).
        new = tuple.__new__
        self.runs: list[TaskRun] = [
            new(
                TaskRun,
                (
                    end.stage_id,
                    end.task_id,
                    end.executor_id,
                    end.start_exec_time,
                    end.end_exec_time,
                    end.status == "Successful" or not is_failed(end.status),
                ),
            )
            for end in tasks
        ]
        self.of_end: dict[int, int] = {id(end): n for n, end in enumerate(tasks)}
        self.of_row: dict[tuple[int, int], int] = {}
        # The payload's rows stand in for a stage's attempts where the detectors took them
        # (``timed``: no successful TaskEnd that ran), so that what they find is replayed.
        for (stage, ends), times_ in zip(stages, timed, strict=True):
            sid = times_.stage_id
            # A dropped stage's rows are its TaskEnd records, each already a run.
            if sid is None or times_.ends is not None or sid in dropped:
                continue
            rows = stage.task_list
            for n, (row, state) in enumerate(
                zip(rows, task_statuses([r.status for r in rows]), strict=True)
            ):
                start, stop = row.start_exec_time, row.end_exec_time
                if start is None or stop is None or start <= 0:
                    continue
                if ends and state.failed:
                    continue  # its failed attempts are the TaskEnd records
                self.of_row[(sid, n)] = len(self.runs)
                self.runs.append(
                    TaskRun(sid, row.id, "", start, max(start, stop), not state.failed)
                )

    def index(self, stage_id: int | None, task: SlowTask) -> int | None:
        """Return the replay's index of a slow task's attempt, None if it has none."""
        if task.end is not None:
            return self.of_end.get(id(task.end))
        if stage_id is not None and task.row is not None:
            return self.of_row.get((stage_id, task.row))
        return None

    def failed(self, stage: Stage, ends: list[TaskEnd]) -> frozenset[int]:
        """Return the replay's indices of a stage's failed attempts."""
        if ends:
            return frozenset(
                self.of_end[id(e)]
                for e in ends
                if e.status != "Successful" and is_failed(e.status) and id(e) in self.of_end
            )
        sid = as_int(stage.stage_id)
        rows = stage.task_list
        return frozenset(
            self.of_row[(sid, n)]
            for n, state in enumerate(task_statuses([r.status for r in rows]))
            if sid is not None and state.failed and (sid, n) in self.of_row
        )


def costed(finding: Finding, impact: int | None, run_ms: int, of: str = "run") -> Finding:
    """Return ``finding`` with its cost: in ``impact_ms``, in words, and in its severity."""
    if impact is None:
        return finding
    if impact > 0:
        words = f" This cost about {duration(impact)} of the job's {duration(run_ms)} {of}."
    else:
        words = " This cost the job no time: other work took as long."
    return msgspec.structs.replace(
        finding,
        severity=th.weighed(finding.severity, impact, run_ms),
        message=finding.message + words,
        impact_ms=impact,
    )


# Why a costly skewed task whose rows are not far out against its stage's rows is only info.
_ROWS_SPREAD = " Its stage's input rows spread widely: a task with this many may be chance."


def far_out_only(finding: Finding, far_out: bool, why: str) -> Finding:
    """Return a costed finding about one task, info at most unless that task is far out.

    A warning needs both: a cost (th.weighed) and a task far out against its own stage's
    spread (for data skew, of rows: th.rows_far_out_z). ``why`` is added to the message when
    that lowers the grade.
    """
    if far_out or finding.severity is FindingSeverity.INFO:
        return finding
    return msgspec.structs.replace(
        finding, severity=FindingSeverity.INFO, message=finding.message + why
    )


def diagnose(facts: JobFacts) -> Diagnosis:
    """Run every detector over one job, and cost each finding by replaying the job without it."""
    result = Diagnosis()
    found: list[Finding] = []
    stages = _judged_once(facts.stages)
    timed = [stage_times(stage, ends) for stage, ends in stages]
    attempts = _Attempts(facts.tasks, stages, timed, facts.dropped)
    replay = prepare(
        attempts.runs,
        _int_edges(facts.stage_edges),
        facts.started_at,
        facts.completed_at,
        th.IDLE_MIN_GAP_MS,
    )
    run_ms = replay.run_ms
    cost = replay.without

    executors = len(set(map(_EXECUTOR, facts.tasks)))
    # The slow-executor rule's yardstick: only where there are executors to compare.
    prior, mad_prior = job_sigma(timed), job_mad_sigma(timed) if executors > 1 else None
    judged = sum(len(t.ordered) >= th.STAGE_MIN_TASKS for t in timed)
    for times_ in timed:
        times_.prior, times_.mad_prior, times_.judged = prior, mad_prior, judged
    seen = comparisons(timed) if executors > 1 else {}
    slow_nodes = slow_executors(timed, seen) if executors > 1 else {}
    result.evidence = evidence(seen, stages) if executors > 1 else {}
    for slow in slow_nodes.values():
        at_speed = {
            attempts.of_end[id(end)]: slow.at_peer_speed[id(end)]
            for end in slow.ends
            if id(end) in attempts.of_end
        }
        found.append(costed(slow.finding, cost(Change(durations=at_speed)), run_ms))
    failures: list[Attempt] = []
    for times_, (stage, ends) in zip(timed, stages, strict=True):
        verdict = judge_stage(times_)
        sid = times_.stage_id
        median_ms = round(times_.median)
        if verdict.findings:  # data skew: every skewed task at the stage's median
            skewed = [attempts.index(sid, t) for t in verdict.skewed]
            change = Change(durations={k: median_ms for k in skewed if k is not None})
            impact = cost(change) if change.durations else None
            found.extend(
                far_out_only(costed(f, impact, run_ms), verdict.skew_far_out, _ROWS_SPREAD)
                for f in verdict.findings
            )
        for task in verdict.skewed:
            result.flag(sid, task, FindingKind.DATA_SKEW)
        # A slow node explains its slow tasks: say it once, not once per task.
        stragglers = []
        for task, finding in verdict.stragglers:
            node = task.executor or ""
            if (node, None) in slow_nodes or (node, sid) in slow_nodes:
                result.flag(sid, task, FindingKind.SLOW_EXECUTOR)
            else:
                stragglers.append((task, finding))
        for task, finding in stragglers[: th.STRAGGLERS_PER_STAGE]:
            at = attempts.index(sid, task)
            impact = cost(Change(durations={at: median_ms})) if at is not None else None
            found.append(costed(finding, impact, run_ms))
            result.flag(sid, task, FindingKind.STRAGGLER)
            if task.end is not None:
                result.straggler_attempts.add(
                    (task.end.stage_id, task.end.task_id, task.end.start_exec_time)
                )
        failed = failed_attempts(stage.stage_id, ends, stage.task_list)
        failures.extend(failed)
        stage_failed = failed_finding(failed, facts.failed)
        if stage_failed is not None:
            impact = None if facts.failed else cost(Change(dropped=attempts.failed(stage, ends)))
            found.append(costed(stage_failed, impact, run_ms))
    waited = queued(facts.queued_at, facts.started_at, facts.completed_at)
    if waited is not None:
        total = facts.completed_at - facts.queued_at
        wait = facts.started_at - facts.queued_at
        found.append(costed(waited, wait, total, of="time from submission"))
    # Idle as replayed: the payload's rows count as running where they stand in.
    runs = attempts.runs
    stood = idle(
        [r.start for r in runs], [r.end for r in runs], facts.started_at, facts.completed_at
    )
    if stood is not None:
        found.append(costed(stood, cost(Change(no_idle=True)), run_ms))
    result.findings = most_severe_first([_on_dropped(f, facts.dropped) for f in found])
    if facts.failed:
        result.root_cause = root_cause(failures)
    # The walk follows the final plan's DAG, which has no edge to or from a dropped stage.
    windows = stage_windows([ends for stage, ends in stages if not _is_dropped(stage, facts)])
    result.critical_path = critical_path(windows, facts.stage_edges)
    result.what_if = what_if(replay)
    return result


def _is_dropped(stage: Stage, facts: JobFacts) -> bool:
    """Tell whether a stage of the facts is one a replan dropped."""
    return bool(facts.dropped) and as_int(stage.stage_id) in facts.dropped


def _on_dropped(finding: Finding, dropped: frozenset[int]) -> Finding:
    """Return a finding about a dropped stage saying so (others as they are)."""
    if finding.stage_id is None or finding.stage_id not in dropped:
        return finding
    message = finding.message + dropped_sentence(finding.stage_id)
    return msgspec.structs.replace(finding, message=message)


def _int_edges(edges: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """Return the DAG's stage edges with numeric ids (others cannot match an attempt)."""
    found = []
    for a, b in edges:
        x, y = as_int(a), as_int(b)
        if x is not None and y is not None:
            found.append((x, y))
    return found


def findings_json(
    job_id: str,
    findings: list[Finding],
    what: WhatIf | None = None,
    regression: Finding | None = None,
    counting: str | None = None,
    failed_attempts: Mapping[str, int] | None = None,
) -> bytes:
    """Return ``jobs/<job_id>/findings.json``: every finding its page shows, and the what-if.

    ``regression`` is the run's regression (from the other runs of its name), listed with
    the job's own findings, most severe first. ``counting``: how its log counts rows
    (diagnose.counting), and ``failed_attempts`` each stage's failed attempts (of the stages
    with any), for the compare page that pairs any two runs in the browser (the ``/api``
    stages list each task's last attempt only).
    """
    listed = most_severe_first([*findings, regression]) if regression else findings
    data: dict[str, object] = {"job_id": job_id, "findings": listed}
    if what is not None:
        data["what_if"] = what.as_json()
    if counting is not None:
        data["counting"] = counting
    if failed_attempts is not None:
        data["failed_attempts"] = dict(failed_attempts)
    return msgspec.json.encode(data)


def facts_of(read: LogRead, stages: list[Stage], graph: JobGraph) -> JobFacts:
    """Gather a completed log's facts from its decoded stages payload and DAG.

    A stage the TaskEnd records name and the payload does not (a replan dropped it) is
    listed after the payload's, with a row per attempt (``replanned.dropped_stage``).
    """
    assert read.job_end is not None
    end = read.job_end
    tasks = _distinct(read.tasks)
    by_stage: dict[int, list[TaskEnd]] = defaultdict(list)
    for task in tasks:
        by_stage[task.stage_id].append(task)
    pairs = []
    for stage in stages:
        sid = as_int(stage.stage_id)
        pairs.append((stage, by_stage.get(sid, []) if sid is not None else []))
    # After the payload's, so that its stages keep their pages' names (urls.stage_segments).
    dropped = dropped_ids(stages, tasks)
    pairs.extend((dropped_stage(sid, by_stage[sid]), by_stage[sid]) for sid in dropped)
    return JobFacts(
        job_id=end.index.job_id,
        failed=is_failed(end.status),
        queued_at=end.queued_at,
        started_at=end.started_at,
        completed_at=end.completed_at,
        tasks=tasks,
        stages=pairs,
        stage_edges=graph.stage_edges(),
        dropped=frozenset(dropped),
    )


def _judged_once(
    stages: list[tuple[Stage, list[TaskEnd]]],
) -> list[tuple[Stage, list[TaskEnd]]]:
    """Return the stages with one listed twice ("1" and "01" too) kept once, as first listed."""
    # Its attempts are the same TaskEnd records: judged twice, each finding was made twice.
    # (The pages keep every listed stage: a page each, as the payload has them.)
    kept, judged = [], set()
    for stage, ends in stages:
        sid = as_int(stage.stage_id)
        key = stage.stage_id if sid is None else sid
        if key not in judged:
            judged.add(key)
            kept.append((stage, ends))
    return kept


def _distinct(tasks: list[TaskEnd]) -> list[TaskEnd]:
    """Return the TaskEnd records with a record written twice (same attempt) kept once."""
    # A copy is not a retry: counted twice, it made two stragglers of one and ran it twice.
    # Attempts that never started have no times to tell them apart: each is kept.
    seen = {
        (t.stage_id, t.task_id, t.executor_id, t.start_exec_time, t.end_exec_time) for t in tasks
    }
    if len(seen) == len(tasks):
        return tasks
    kept, copies = [], set()
    for t in tasks:
        if t.start_exec_time > 0:
            attempt = (t.stage_id, t.task_id, t.executor_id, t.start_exec_time, t.end_exec_time)
            copy = (attempt, msgspec.json.encode(t.status))
            if copy in copies:
                continue
            copies.add(copy)
        kept.append(t)
    return kept
