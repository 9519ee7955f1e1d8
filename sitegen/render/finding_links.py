"""Where each finding links to: the task's row, the stage, the executor's lane, the timeline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sitegen.finding import Finding, FindingKind
from sitegen.render import urls
from sitegen.render.links import Linker


@dataclass(frozen=True)
class ShownFinding:
    """A finding with the link that shows its evidence, and what that link leads to."""

    finding: Finding
    href: str
    target: str


@dataclass(frozen=True)
class Places:
    """What a job's findings can point at: stage pages by id, task rows by (stage, task)."""

    job_id: str
    segments: dict[int, str]
    rows: dict[tuple[int, int], int]


def task_anchor(task_id: int) -> str:
    """Return the fragment id of a task's row in its stage's task table."""
    return f"task-{task_id}"


def link_of(finding: Finding, places: Places, link: Linker) -> tuple[str, str]:
    """Return the href and a short name of the place that shows a finding's evidence."""
    job_id, sid = places.job_id, finding.stage_id
    segment = places.segments.get(sid) if sid is not None else None
    if finding.kind is FindingKind.SLOW_EXECUTOR and finding.executor_id is not None:
        return link.job(job_id, urls.lane_anchor(finding.executor_id)), "executor's lane"
    if segment is not None and sid is not None:
        if finding.task_id is not None and finding.kind in (
            FindingKind.STRAGGLER,
            FindingKind.DATA_SKEW,
        ):
            row = places.rows.get((sid, finding.task_id))
            if row is not None:
                page = row // urls.TASKS_PER_PAGE + 1
                href = link.stage_tasks(job_id, segment, page)
                return f"{href}#{task_anchor(finding.task_id)}", "task row"
        if finding.kind is FindingKind.FAILED_ATTEMPTS:
            return link.stage(job_id, segment) + "#failed", "failed attempts"
        return link.stage(job_id, segment), "stage"
    if finding.kind is FindingKind.IDLE:
        return link.job(job_id, "timeline"), "timeline"
    return link.job(job_id, "summary"), "summary"


def shown(findings: Iterable[Finding], places: Places, link: Linker) -> list[ShownFinding]:
    """Pair each finding with its link, from the page ``link`` is for."""
    return [ShownFinding(f, *link_of(f, places, link)) for f in findings]
