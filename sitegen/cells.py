"""Numeric table cells as markup, for templates: one filter call instead of a macro's work."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.formatting import NONE, duration, rows
from sitegen.payload import Percentiles

_EMPTY = Markup(f'<td class="num">{NONE}</td>')
_NO_PERCENTILES = Markup(f'<td class="num" colspan="5">{NONE}</td>')


def rows_cell(value: int | None) -> Markup:
    """Return a row-count cell: ``1.5M`` shown, the exact count on hover and for sorting."""
    if value is None:
        return _EMPTY
    # An int (the payload readers coerce), so nothing here needs escaping.
    return Markup(f'<td class="num" data-v="{value}" title="{value:,}">{rows(value)}</td>')


def duration_cell(ms: int | None) -> Markup:
    """Return a duration cell (``1.2 s``) that sorts by milliseconds."""
    if ms is None:
        return _EMPTY
    return Markup(f'<td class="num" data-v="{ms}">{duration(ms)}</td>')


def rows_cells(found: Percentiles | None) -> Markup:
    """Return five row-count cells (min … max), or one dash across them when absent."""
    if found is None:
        return _NO_PERCENTILES
    return Markup("".join(map(rows_cell, found.values)))


def duration_cells(found: Percentiles | None) -> Markup:
    """Return five duration cells (min … max), or one dash across them when absent."""
    if found is None:
        return _NO_PERCENTILES
    return Markup("".join(map(duration_cell, found.values)))
