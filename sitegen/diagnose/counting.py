"""Which way a log counts its stages' rows: Ballista #2435's, the counting before it, or unknown.

Ballista PR #2435 (September 2026) changed what a stage's ``input_rows`` and ``output_rows``
mean, and a log records no Ballista version (the spec, section 1). Since #2435 a stage's input
is what its leaf operators produced (scans, shuffle readers) and its output what its root
wrote (the shuffle writer); before it, each summed its metric over every operator reporting
it: output rows several to hundreds of times the rows that flowed, input rows only the few
operators reporting an input (the shuffle writer, a join's probe side).

So a log tells its counting by its own figures, two tests:

- a stage edge: under #2435 a stage reads all its parent stages wrote, so its input rows
  equal the sum of its parents' output rows (more when it also scans a table, never less);
  before, the parents' output counted each row several times, and the stage's input (its
  writer's input) is smaller. Equal: #2435; smaller: before; larger: no evidence.
- the rows a completed job produced (its ``job_status``: "Produced 4 partitions containing
  1000 rows"): under #2435 its final stage (the one no stage reads) wrote exactly those;
  before, its output counted them once per operator. Equal: #2435; more: before.

Only stages that ended ``Successful`` with tasks and non-zero rows are compared (0 is "not
recorded": metrics that do not line up with the plan's shape). Evidence both ways (a retried
stage counted twice, a plan the rules do not fit) is unknown, as is no evidence at all.

What it gets wrong: a stage that only reads and writes (a shuffle reader into the writer, one
operator reporting its output) satisfies both tests under both countings, so a pre-#2435 job
made only of such stages is taken for #2435, and so is one whose stages' only operator
reporting an output is the writer. A job of one stage has no edge to test: a failed or
cancelled one (no "Produced … rows") is unknown, as is a job whose DOT has no stage edges
but several stages. The rows a job produced are taken to be its final stage writer's, as
Ballista's job status counts them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sitegen.eventlog.payload import Stage

# A log's counting, as ``JobSummary.counting`` and ``Run.counting`` keep it.
PR_2435 = "2435"
BEFORE = "before"
UNKNOWN = "unknown"

_PRODUCED = re.compile(r"^Completed\. Produced \d+ partitions? containing (\d+) rows?\b")
_DONE = "Successful"


def produced_rows(job_status: str) -> int | None:
    """Return the rows a completed job's ``job_status`` says it produced (None: not said)."""
    found = _PRODUCED.match(job_status)
    return int(found.group(1)) if found else None


def _recorded(stage: Stage | None) -> bool:
    """Tell whether a stage ended with tasks and both its row counts recorded (non-zero)."""
    return (
        stage is not None
        and stage.stage_status == _DONE
        and bool(stage.task_list)
        and bool(stage.input_rows)
        and bool(stage.output_rows)
    )


def counting(stages: Sequence[Stage], edges: Sequence[tuple[str, str]], job_status: str) -> str:
    """Return how a job's log counts rows: ``PR_2435``, ``BEFORE`` or ``UNKNOWN``."""
    by_id = {s.stage_id: s for s in stages}
    parents: dict[str, list[str]] = {}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
    now = before = False
    for child, of in parents.items():
        stage = by_id.get(child)
        read = [by_id.get(p) for p in of]
        if stage is None or not _recorded(stage) or not all(_recorded(p) for p in read):
            continue
        wrote = sum(p.output_rows or 0 for p in read if p is not None)
        now |= stage.input_rows == wrote
        before |= (stage.input_rows or 0) < wrote
    produced = produced_rows(job_status)
    # The stage whose writer wrote the result: the one no stage reads (a DAG of several such
    # stages, or none, is not a plan's shape: no evidence).
    finals = [s for s in stages if s.stage_id not in {p for p, _ in edges}]
    if produced and len(finals) == 1 and _recorded(finals[0]):
        out = finals[0].output_rows or 0
        now |= out == produced
        before |= out > produced
    if now == before:
        return UNKNOWN
    return PR_2435 if now else BEFORE


def shared(a: str, b: str) -> bool:
    """Tell whether two runs' rows count alike (an unknown counting is only like another)."""
    return a == b
