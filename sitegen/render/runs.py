"""A recurring run compared with the previous successful run of its name, stage by stage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from sitegen.model import StageFigures
from sitegen.render.cells import duration_cell, num_cell, rows_cell, stage_rows_cell
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


def rows_change(now: int | None, before: int | None, comparable: bool) -> Markup:
    """Return the change of a row count, or "not comparable" across countings."""
    if not comparable and now is not None and before is not None:
        return Markup(f'<span class="muted" title="{NOT_COMPARABLE_TITLE}">{NOT_COMPARABLE}</span>')
    return Markup(esc(change(now, before)))


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
    if field in ROW_FIELDS and value == 0 and stage.tasks:
        return None
    return value


def compare(now: Sequence[StageFigures], before: Sequence[StageFigures]) -> list[StageChange]:
    """Pair stages by id: this run's in order, then any only the baseline had."""
    earlier = {f.stage_id: f for f in before}
    pairs = [StageChange(f.stage_id, f, earlier.pop(f.stage_id, None)) for f in now]
    pairs += [StageChange(f.stage_id, None, f) for f in before if f.stage_id in earlier]
    return pairs


# The comparison's columns: a figure of StageFigures and the cell that shows it.
ROWS = ("input_rows", "output_rows")
ROW_FIELDS = frozenset(ROWS)
COMPARED: tuple[tuple[str, Callable[[int | None], Markup]], ...] = (
    ("duration_ms", duration_cell),
    ("tasks", num_cell),
    ("input_rows", rows_cell),
    ("output_rows", rows_cell),
)


def _rows_cell(stage: StageFigures | None, field: str) -> Markup:
    """Return a compared stage's row-count cell (``not recorded`` for a 0 where tasks ran)."""
    if stage is None:
        return rows_cell(None)
    return stage_rows_cell(getattr(stage, field), stage.tasks)


def comparison_rows(rows: Sequence[StageChange], comparable: bool = True) -> Markup:
    """Return the comparison table's stage rows, as ``_runs.html`` printed them cell by cell.

    Built as one string: every recurring run's page has the section, and its template loop
    was most of rendering it. ``comparable``: whether the two runs count rows alike.
    """
    out = []
    for row in rows:
        cells = [f'<tr><th scope="row">{esc(row.stage_id)}</th>']
        for field, cell in COMPARED:
            a, b = row.figures(field)
            if field in ROW_FIELDS:
                shown = rows_change(a, b, comparable)
                now, before = _rows_cell(row.now, field), _rows_cell(row.before, field)
                cells.append(f'{now}{before}<td class="num">{shown}</td>')
                continue
            cells.append(f'{cell(a)}{cell(b)}<td class="num">{esc(change(a, b))}</td>')
        cells.append("</tr>\n")
        out.append("".join(cells))
    return Markup("".join(out))


# The side-by-side page's columns (``compare.html``): times, then failed attempts, then rows.
_TIMED = ("duration_ms", "task_median_ms", "task_max_ms")


def side_by_side_rows(rows: Sequence[StageChange], comparable: bool = True) -> Markup:
    """Return ``compare.html``'s stage rows, as its template loop printed them cell by cell.

    Built as one string, as ``comparison_rows``: every recurring run has the page.
    """
    out = []
    for row in rows:
        cells = [f'<tr><th scope="row">{esc(row.stage_id)}</th>\n']
        for field in _TIMED:
            a, b = row.figures(field)
            cells.append(
                f'{duration_cell(a)}{duration_cell(b)}<td class="num">{esc(change(a, b))}</td>'
            )
        a, b = row.figures("failed")
        cells.append(f"{num_cell(a)}{num_cell(b)}\n")
        for field in ROWS:
            a, b = row.figures(field)
            now, before = _rows_cell(row.now, field), _rows_cell(row.before, field)
            cells.append(f'{now}{before}<td class="num">{rows_change(a, b, comparable)}</td>')
        cells.append("</tr>\n")
        out.append("".join(cells))
    return Markup("".join(out))
