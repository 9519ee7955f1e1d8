"""A recurring run compared with the previous successful run of its name, stage by stage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from sitegen.diagnose.recurring import RunContext
from sitegen.model import JobSummary, StageFigures
from sitegen.render.cells import duration_td, num_td, recorded, stage_rows_td
from sitegen.text.formatting import NONE
from sitegen.text.htmlsafe import esc


def change(now: int | None, before: int | None) -> str:
    """Return the relative change from ``before`` to ``now``: ``+35%``, ``-10%``, ``±0%``."""
    if now is None or before is None:
        return NONE
    if before == 0:
        return "±0%" if now == 0 else "new"
    percent = round((now - before) * 100 / before)
    if percent == 0:
        return "±0%"
    return f"+{percent}%" if percent > 0 else f"\u2212{-percent}%"


# The change of rows counted two ways (Ballista #2435 changed what a stage's rows mean).
NOT_COMPARABLE = "not comparable"
NOT_COMPARABLE_TITLE = "The two runs' logs count rows differently (Ballista #2435)"


@dataclass(frozen=True)
class StageChange:
    """One stage in this run and in the baseline (either may lack it)."""

    stage_id: str
    now: StageFigures | None
    before: StageFigures | None

    def figures(self, field: str) -> tuple[int | None, int | None]:
        """Return one figure (``duration_ms``, ``tasks``, ``input_rows``…) now and before.

        A row count of 0 where tasks ran was not recorded: None.
        """
        now = _figure(self.now, field)
        before = _figure(self.before, field)
        return now, before

    def delta(self, field: str) -> str:
        """Return the change of one figure (for templates that print the rows themselves)."""
        return change(*self.figures(field))


def _figure(stage: StageFigures | None, field: str) -> int | None:
    """Return a stage's figure, None when it lacks the stage or did not record its rows."""
    if stage is None:
        return None
    value: int = getattr(stage, field)
    return recorded(value, stage.tasks) if field in ROW_FIELDS else value


def compare(now: Sequence[StageFigures], before: Sequence[StageFigures]) -> list[StageChange]:
    """Pair stages by id: this run's in order, then any only the baseline had."""
    earlier = {f.stage_id: f for f in before}
    pairs = [StageChange(f.stage_id, f, earlier.pop(f.stage_id, None)) for f in now]
    pairs += [StageChange(f.stage_id, None, f) for f in before if f.stage_id in earlier]
    return pairs


# The comparison's columns (``_runs.html``): duration, tasks, then rows.
ROWS = ("input_rows", "output_rows")
ROW_FIELDS = frozenset(ROWS)


def _rows_change(now: int | None, before: int | None, comparable: bool) -> str:
    """Return the change of a row count as text, or "not comparable" across countings."""
    if not comparable and now is not None and before is not None:
        return f'<span class="muted" title="{NOT_COMPARABLE_TITLE}">{NOT_COMPARABLE}</span>'
    return change(now, before)  # digits, signs, "new" or a dash: nothing to escape


def rows_change(now: int | None, before: int | None, comparable: bool) -> Markup:
    """Return the change of a row count, or "not comparable" across countings."""
    return Markup(_rows_change(now, before, comparable))


def _compared(cell: Callable[[int | None], str], now: int | None, before: int | None) -> str:
    """Return a figure now and before as ``cell`` prints each, and its change."""
    return f'{cell(now)}{cell(before)}<td class="num">{change(now, before)}</td>'


def _rows_compared(
    now: int | None, ran: int | None, before: int | None, tried: int | None, comparable: bool
) -> str:
    """Return a row count now and before (``ran``, ``tried``: their tasks) and its change."""
    shown = _rows_change(recorded(now, ran), recorded(before, tried), comparable)
    return f'{stage_rows_td(now, ran)}{stage_rows_td(before, tried)}<td class="num">{shown}</td>'


def _rows_columns(row: StageChange, comparable: bool) -> str:
    """Return a compared stage's input and output rows: now, before and the change, each."""
    now, before = row.now, row.before
    ran = None if now is None else now.tasks
    tried = None if before is None else before.tasks
    return "".join(
        _rows_compared(
            None if now is None else getattr(now, field),
            ran,
            None if before is None else getattr(before, field),
            tried,
            comparable,
        )
        for field in ROWS
    )


def comparison_rows(rows: Sequence[StageChange], comparable: bool = True) -> Markup:
    """Return the comparison table's stage rows, as ``_runs.html`` printed them cell by cell.

    Built as one string, from the cells as text: every recurring run's page has the section,
    and its template loop was most of rendering it. ``comparable``: whether the two runs
    count rows alike.
    """
    out = []
    for row in rows:
        now, before = row.now, row.before
        took = _compared(
            duration_td,
            None if now is None else now.duration_ms,
            None if before is None else before.duration_ms,
        )
        tasks = _compared(
            num_td, None if now is None else now.tasks, None if before is None else before.tasks
        )
        out.append(
            f'<tr><th scope="row">{esc(row.stage_id)}</th>{took}{tasks}'
            f"{_rows_columns(row, comparable)}</tr>\n"
        )
    return Markup("".join(out))


def job_row(summary: JobSummary, context: RunContext, comparable: bool = True) -> Markup:
    """Return the comparison table's first row: the whole job now and in the baseline.

    Built as one string from the cells as text, as ``comparison_rows``: printed cell by cell
    it took a score of calls on every recurring run's page.
    """
    took = summary.ended_at - summary.start_time
    now = took if took >= 0 else None
    before = context.baseline_ms
    tasks, tried = summary.tasks, context.baseline_tasks
    cells = [_compared(duration_td, now, before), _compared(num_td, tasks, tried)]
    cells.append(
        _rows_compared(summary.input_rows, tasks, context.baseline_input_rows, tried, comparable)
    )
    cells.append(
        _rows_compared(summary.output_rows, tasks, context.baseline_output_rows, tried, comparable)
    )
    return Markup(f'<tr class="total"><th scope="row">Job</th>{"".join(cells)}</tr>\n')


# The side-by-side page's columns (``compare.html``): times, then failed attempts, then rows.
_TIMED = ("duration_ms", "task_median_ms", "task_max_ms")


def side_by_side_rows(rows: Sequence[StageChange], comparable: bool = True) -> Markup:
    """Return ``compare.html``'s stage rows, as its template loop printed them cell by cell.

    Built as one string, as ``comparison_rows``: every recurring run has the page.
    """
    out = []
    for row in rows:
        now, before = row.now, row.before
        cells = [f'<tr><th scope="row">{esc(row.stage_id)}</th>\n']
        for field in _TIMED:
            a = None if now is None else getattr(now, field)
            b = None if before is None else getattr(before, field)
            cells.append(f'{duration_td(a)}{duration_td(b)}<td class="num">{change(a, b)}</td>')
        a = None if now is None else now.failed
        b = None if before is None else before.failed
        cells.append(f"{num_td(a)}{num_td(b)}\n{_rows_columns(row, comparable)}</tr>\n")
        out.append("".join(cells))
    return Markup("".join(out))
