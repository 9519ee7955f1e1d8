"""Cells, badges and times as markup, for templates: one filter call instead of a macro's work.

A Jinja macro call costs 5 to 10 µs, more than the markup it prints: a stage page lists up
to 1,000 failed attempts, and the jobs list has 50 rows a page. A table cell comes two ways:
``*_td`` as text, for code that builds a table's rows as one string (a Markup object per cell
cost more than the cell's text), and ``*_cell`` as Markup, the templates' filter.
"""

from __future__ import annotations

from markupsafe import Markup

from sitegen.eventlog.payload import Percentiles
from sitegen.model import Problem, ProblemSeverity
from sitegen.svg.text import status_class
from sitegen.text.formatting import NONE, duration, number, rows, timestamps
from sitegen.text.htmlsafe import esc

_EMPTY = f'<td class="num">{NONE}</td>'
_NO_PERCENTILES = Markup(f'<td class="num" colspan="5">{NONE}</td>')


def num_td(value: int | None) -> str:
    """Return an exact-number cell (``12,345``) that sorts by its value, as text."""
    if value is None:
        return _EMPTY
    if value.__class__ is not int:  # the payload readers coerce; anything else is escaped
        text = esc(str(value))
        return f'<td class="num" data-v="{text}">{esc(number(value))}</td>'
    return f'<td class="num" data-v="{value}">{value:,}</td>'


def num_cell(value: int | None) -> Markup:
    """Return an exact-number cell (``12,345``) that sorts by its value."""
    return Markup(num_td(value))


def badge_html(word: str, css: str) -> str:
    """Return ``word`` as a badge of class ``css`` (made by status_class: nothing to escape)."""
    return f'<span class="badge {css}">{esc(word)}</span>'


def status_badge(status: str) -> str:
    """Return a status word as a badge coloured by its class, for string-built markup."""
    return badge_html(status, status_class(status))


def badge(status: str) -> Markup:
    """Return a status word as a badge coloured by its class (the templates' filter)."""
    return Markup(status_badge(status))


def problem_badge(problem: Problem) -> Markup:
    """Return a problem's kind as a badge: red for an error, amber for a warning or a note."""
    css = "st-failed" if problem.severity is ProblemSeverity.ERROR else "st-warning"
    return Markup(badge_html(problem.kind, css))


def time_tag(ms: int | None) -> Markup:
    """Return a ``<time>`` (second shown, millisecond in ``datetime``), or a dash for none."""
    if not ms or ms <= 0:
        return Markup(NONE)
    exact, second = timestamps(ms)
    return Markup(f'<time datetime="{exact}">{second}</time>')


def rows_td(value: int | None) -> str:
    """Return a row-count cell: ``1.5M`` shown, the exact count on hover and for sorting (text)."""
    if value is None:
        return _EMPTY
    # An int (the payload readers coerce), so nothing here needs escaping.
    return f'<td class="num" data-v="{value}" title="{value:,}">{rows(value)}</td>'


def rows_cell(value: int | None) -> Markup:
    """Return a row-count cell: ``1.5M`` shown, the exact count on hover and for sorting."""
    return Markup(rows_td(value))


# A row count of 0 where tasks ran: Ballista writes 0 where a stage's metrics do not line up
# with its plan's shape, and a TaskEnd's 0 when the job's graph was already gone.
NOT_RECORDED = "not recorded"
_NOT_RECORDED = (
    f'<td class="num muted" data-v="" title="Ballista wrote 0: its metrics did not line up with '
    f'the plan">{NOT_RECORDED}</td>'
)


def unrecorded(value: int | None, ran: object) -> bool:
    """Tell whether a row count was not recorded: 0 where tasks ran."""
    return value == 0 and bool(ran)


def recorded(value: int | None, ran: object) -> int | None:
    """Return a row count, or None when it is 0 where tasks ran (not recorded)."""
    return None if unrecorded(value, ran) else value


def stage_rows_td(value: int | None, ran: object) -> str:
    """Return a stage's row-count cell as text: ``not recorded`` for a 0 where tasks ran."""
    return _NOT_RECORDED if unrecorded(value, ran) else rows_td(value)


def stage_rows_cell(value: int | None, ran: object) -> Markup:
    """Return a stage's row-count cell: ``not recorded`` for a 0 where tasks ran."""
    return Markup(stage_rows_td(value, ran))


def rows_text(value: int | None, ran: object) -> str:
    """Return an exact row count (``12,345``), or ``not recorded`` for a 0 where tasks ran."""
    return NOT_RECORDED if unrecorded(value, ran) else number(value)


def duration_td(ms: int | None) -> str:
    """Return a duration cell (``1.2 s``) that sorts by milliseconds, as text."""
    if ms is None:
        return _EMPTY
    return f'<td class="num" data-v="{ms}">{duration(ms)}</td>'


def duration_cell(ms: int | None) -> Markup:
    """Return a duration cell (``1.2 s``) that sorts by milliseconds."""
    return Markup(duration_td(ms))


def rows_cells(found: Percentiles | None) -> Markup:
    """Return five row-count cells (min … max), or one dash across them when absent."""
    if found is None:
        return _NO_PERCENTILES
    return Markup("".join(map(rows_td, found.values)))


def duration_cells(found: Percentiles | None) -> Markup:
    """Return five duration cells (min … max), or one dash across them when absent."""
    if found is None:
        return _NO_PERCENTILES
    return Markup("".join(map(duration_td, found.values)))
