"""Stages a replan dropped: named by TaskEnd records, no longer by the stages payload or DOT.

Adaptive execution can replace stages while a job runs (Ballista issue #2192): the
JobEnd's ``stages`` and DOT describe the final plan only, while the attempts of a stage it
dropped stay in the log as TaskEnd records. Such a stage is shown from those records alone
(no plan, no operators, no payload figures) and marked with ``DROPPED``; the ``/api``
files keep the payload's bytes, which never name it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sitegen.eventlog.payload import Stage, TaskSummary, as_int
from sitegen.eventlog.schema import TaskEnd

# The one phrase every page, finding and doc marks such a stage with.
DROPPED = "dropped by a replan"
# What it means, where a page has room to say it.
DROPPED_NOTE = (
    "the job's final plan no longer has this stage; its attempts are the log's TaskEnd records"
)


def dropped_ids(stages: Iterable[Stage], tasks: Iterable[TaskEnd]) -> list[int]:
    """Return, in order, the stage ids TaskEnd records name and the payload does not."""
    # Ids compare as numbers: a payload's "03" names the TaskEnds' stage 3.
    named = {as_int(stage.stage_id) for stage in stages}
    return sorted({t.stage_id for t in tasks} - named)


def dropped_stage(stage_id: int, ends: list[TaskEnd]) -> Stage:
    """Return a dropped stage as the pages list it: a row per TaskEnd, in log order.

    Its figures (rows, compute time, percentiles) and plan are the payload's, which has none:
    they stay unknown rather than made up from the TaskEnd records.
    """
    return Stage(
        stage_id=str(stage_id),
        stage_status=DROPPED,
        tasks=[
            TaskSummary(
                id=end.task_id,
                status=end.status,
                start_exec_time=end.start_exec_time,
                end_exec_time=end.end_exec_time,
            )
            for end in ends
        ],
    )


def dropped_sentence(stage_id: int) -> str:
    """Return what a finding about a dropped stage adds: what its cost can and cannot count."""
    return (
        f" Stage {stage_id} was {DROPPED}: the final plan no longer has it, so no stage is known"
        " to have waited for it and its cost counts only the time its attempts held."
    )


def stages_named(stage_ids: list[int]) -> str:
    """Return ``stage 3``, ``stages 3 and 5`` or ``stages 2, 3 and 5``."""
    if len(stage_ids) == 1:
        return f"stage {stage_ids[0]}"
    *head, last = map(str, stage_ids)
    return f"stages {', '.join(head)} and {last}"
