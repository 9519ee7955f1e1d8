"""A recurring run compared with the previous successful run of its name, stage by stage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from sitegen.model import StageFigures
from sitegen.render.cells import duration_cell, num_cell, rows_cell
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


@dataclass(frozen=True)
class StageChange:
    """One stage in this run and in the baseline (either may lack it)."""

    stage_id: str
    now: StageFigures | None
    before: StageFigures | None

    def figures(self, field: str) -> tuple[int | None, int | None]:
        """Return one figure (``duration_ms``, ``tasks``, ``input_rows``…) now and before."""
        now = getattr(self.now, field) if self.now else None
        before = getattr(self.before, field) if self.before else None
        return now, before

    def delta(self, field: str) -> str:
        """Return the change of one figure (for templates that print the rows themselves)."""
        return change(*self.figures(field))


def compare(now: Sequence[StageFigures], before: Sequence[StageFigures]) -> list[StageChange]:
    """Pair stages by id: this run's in order, then any only the baseline had."""
    earlier = {f.stage_id: f for f in before}
    pairs = [StageChange(f.stage_id, f, earlier.pop(f.stage_id, None)) for f in now]
    pairs += [StageChange(f.stage_id, None, f) for f in before if f.stage_id in earlier]
    return pairs


# The comparison's columns: a figure of StageFigures and the cell that shows it.
COMPARED: tuple[tuple[str, Callable[[int | None], Markup]], ...] = (
    ("duration_ms", duration_cell),
    ("tasks", num_cell),
    ("input_rows", rows_cell),
    ("output_rows", rows_cell),
)


def comparison_rows(rows: Sequence[StageChange]) -> Markup:
    """Return the comparison table's stage rows, as ``_runs.html`` printed them cell by cell.

    Built as one string: every recurring run's page has the section, and its template loop
    was most of rendering it.
    """
    out = []
    for row in rows:
        cells = [f'<tr><th scope="row">{esc(row.stage_id)}</th>']
        for field, cell in COMPARED:
            a, b = row.figures(field)
            cells.append(f'{cell(a)}{cell(b)}<td class="num">{esc(change(a, b))}</td>')
        cells.append("</tr>\n")
        out.append("".join(cells))
    return Markup("".join(out))
