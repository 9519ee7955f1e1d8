"""Insights across jobs: the jobs with the worst findings, executors flagged in several jobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from sitegen.finding import Finding, FindingSeverity, most_severe_first
from sitegen.model import JobSummary

# The Insights page lists at most this many jobs: the worst first.
TOP_JOBS = 50
# An executor flagged in at least this many jobs is a node to look at (one job is a fluke).
MIN_JOBS_PER_NODE = 2
# The page lists a flagged executor's newest jobs, at most this many (it counts them all).
JOBS_PER_NODE = 20
# It lists those jobs for this many executors, the ones flagged in the most jobs; every flagged
# executor has a row with its count. Hundreds of flagged nodes with 20 jobs each made a page
# nobody reads, and a new flagged job decoded 8,000 summaries at 100,000 jobs to redo it.
NODES_DETAILED = 20


def all_findings(job: JobSummary, extra: Mapping[str, Finding]) -> list[Finding]:
    """Return a job's own findings plus the reduce step's about it (a regression), worst first."""
    found = list(job.findings)
    more = extra.get(job.job_id)
    if more is not None:
        found.append(more)
    return most_severe_first(found)


def worst(findings: Iterable[Finding]) -> FindingSeverity | None:
    """Return the highest severity among ``findings``, None when there are none."""
    return max((f.severity for f in findings), key=lambda s: s.rank, default=None)


@dataclass(frozen=True)
class JobInsight:
    """One job and its findings, worst first."""

    job: JobSummary
    findings: list[Finding]


def worst_jobs(
    jobs: Iterable[JobSummary], extra: Mapping[str, Finding], limit: int = TOP_JOBS
) -> list[JobInsight]:
    """Return the jobs with the most severe findings: by worst severity, cost, count, newest."""
    by_id = {job.job_id: job for job in jobs}
    ids = worst_ids(map(ranked, by_id.values()), extra, limit)
    return [JobInsight(by_id[i], all_findings(by_id[i], extra)) for i in ids]


class Ranked(NamedTuple):
    """What ranking a job needs: its own findings' worst severity rank (-1: none), count, cost."""

    job_id: str
    worst_rank: int
    findings: int
    start_time: int
    # What its costliest own finding cost the job (impact_ms; a regression has none).
    cost_ms: int = 0


def ranked(job: JobSummary) -> Ranked:
    """Return what ranking a job needs, from its summary (the state keeps the same columns)."""
    worst_rank = max((f.severity.rank for f in job.findings), default=-1)
    cost = max((f.impact_ms or 0 for f in job.findings), default=0)
    return Ranked(job.job_id, worst_rank, len(job.findings), job.start_time, cost)


def worst_ids(
    jobs: Iterable[Ranked], extra: Mapping[str, Finding], limit: int = TOP_JOBS
) -> list[str]:
    """Return the ids ``worst_jobs`` lists, in its order, from the jobs' figures alone."""
    # From the state's columns: decoding a summary for each of 8,000 regressed jobs at
    # 100,000 jobs cost every build that changed a regression 0.3 s.
    found = []
    for job in jobs:
        more = extra.get(job.job_id)
        if more is not None:
            job = job._replace(
                worst_rank=max(job.worst_rank, more.severity.rank), findings=job.findings + 1
            )
        if job.findings:
            found.append(job)
    found.sort(key=lambda j: (j.start_time, j.job_id), reverse=True)
    found.sort(key=lambda j: (-j.worst_rank, -j.cost_ms, -j.findings))
    return [j.job_id for j in found[:limit]]


@dataclass(frozen=True)
class NodeInsight:
    """An executor flagged by findings in several jobs: how many, and the newest of them."""

    executor_id: str
    count: int
    # Newest first, at most JOBS_PER_NODE.
    jobs: list[JobInsight]


def about_executor(job: JobSummary, executor_id: str) -> JobInsight:
    """Return the job with its findings that name the executor, worst first."""
    return JobInsight(
        job, most_severe_first([f for f in job.findings if f.executor_id == executor_id])
    )


def flagged_executors(
    jobs: Iterable[JobSummary], min_jobs: int = MIN_JOBS_PER_NODE
) -> list[NodeInsight]:
    """Return executors that findings name in at least ``min_jobs`` jobs, most jobs first."""
    by_executor: dict[str, list[JobInsight]] = {}
    for job in jobs:
        about: dict[str, list[Finding]] = {}
        for finding in job.findings:
            if finding.executor_id is not None:
                about.setdefault(finding.executor_id, []).append(finding)
        for executor, findings in about.items():
            by_executor.setdefault(executor, []).append(
                JobInsight(job, most_severe_first(findings))
            )
    nodes = []
    for executor in sorted(by_executor):
        flagged = by_executor[executor]
        if len(flagged) >= min_jobs:
            flagged.sort(key=lambda i: (i.job.start_time, i.job.job_id), reverse=True)
            nodes.append(NodeInsight(executor, len(flagged), flagged[:JOBS_PER_NODE]))
    nodes.sort(key=lambda n: -n.count)
    return nodes
