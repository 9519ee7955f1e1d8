"""What a stage's or a task's status word amounts to once its job has ended.

The scheduler writes a failed job's JobEnd before it marks the failing stage failed, and a
cancelled job's before it applies the cancel: in the stages payload and in the DOT, the
stage the job ended in still says ``Running``, listing the tasks it was running (which have
no TaskEnd: only ended attempts are recorded). The ``/api`` files relay the payload's word;
the pages, the DAG and the trace show what it amounts to, with a note saying what the
payload says. A job that succeeded keeps every word as the payload has it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sitegen.eventlog.payload import Stage, TaskStatus, as_int, task_statuses
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import is_failed

RUNNING = "Running"
FAILED = "Failed"
CANCELLED = "Cancelled"
# A stage or task that was running when its job ended, and never finished.
CUT_SHORT = "Cut short"

SAYS_RUNNING = "the scheduler's payload says Running"


@dataclass(frozen=True)
class Shown:
    """A status word as the pages show it, and why it is not the payload's ("": it is)."""

    word: str
    note: str = ""


def _key(stage_id: str) -> int | str:
    """Return the key a stage id is looked up by: ``3`` and ``03`` are one stage."""
    number = as_int(stage_id)
    return stage_id if number is None else number


@dataclass(frozen=True)
class EndedStatuses:
    """The words the pages show for one job's stages and tasks the payload calls Running."""

    # By stage id (``_key``): what a stage the payload calls Running was.
    stages: dict[int | str, Shown] = field(default_factory=dict)
    # What a task the payload calls Running was (None: the job succeeded; say Running).
    task: Shown | None = None

    def stage(self, stage_id: str, word: str) -> Shown:
        """Return how to show a stage (from the payload or the DOT) that says ``word``."""
        if word == RUNNING:
            shown = self.stages.get(_key(stage_id))
            if shown is not None:
                return shown
        return Shown(word)

    def task_state(self, state: TaskStatus) -> TaskStatus:
        """Return how to show a task whose payload status is ``state``."""
        if self.task is not None and state.word == RUNNING:
            return TaskStatus(self.task.word)
        return state


NO_CHANGE = EndedStatuses()


def ended_statuses(
    job_status: Any, stages: Sequence[tuple[Stage, Sequence[TaskEnd]]]
) -> EndedStatuses:
    """Say what each stage and task still called Running was, from how the job ended.

    In a failed job, a Running stage with a failed attempt (a failed TaskEnd, or a failed
    task in the payload) is the stage the job failed in: Failed. So is the only Running
    stage when none shows a failure and no stage says Failed (the failed attempt's TaskEnd
    dropped under back-pressure). Any other Running stage was cut short. In a cancelled job
    every Running stage was cancelled. A Running task of either was cut short.
    """
    failed = is_failed(job_status)
    cancelled = job_status == CANCELLED
    if not (failed or cancelled):
        return NO_CHANGE
    running = [(stage, ends) for stage, ends in stages if stage.stage_status == RUNNING]
    how = "the job failed" if failed else "the job was cancelled"
    task = Shown(CUT_SHORT, f"running when {how}; {SAYS_RUNNING}")
    shown: dict[int | str, Shown] = {}
    if cancelled:
        for stage, _ in running:
            shown[_key(stage.stage_id)] = Shown(CANCELLED, f"cut short when {how}; {SAYS_RUNNING}")
        return EndedStatuses(shown, task)
    failing = {_key(stage.stage_id) for stage, ends in running if _has_failure(stage, ends)}
    marked = any(stage.stage_status == FAILED for stage, _ in stages)
    if not failing and not marked and len(running) == 1:
        failing = {_key(running[0][0].stage_id)}
    for stage, _ in running:
        key = _key(stage.stage_id)
        if key in failing:
            shown[key] = Shown(FAILED, f"cut short when {how}; {SAYS_RUNNING}")
        else:
            shown.setdefault(key, Shown(CUT_SHORT, f"still running when {how}; {SAYS_RUNNING}"))
    return EndedStatuses(shown, task)


def _has_failure(stage: Stage, ends: Sequence[TaskEnd]) -> bool:
    """Tell whether a stage has a failed attempt: a failed TaskEnd, or a failed payload task."""
    if any(end.status != "Successful" and is_failed(end.status) for end in ends):
        return True
    return any(state.failed for state in task_statuses([t.status for t in stage.task_list]))
