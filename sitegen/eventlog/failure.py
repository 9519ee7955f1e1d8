"""Say in one line why sitegen could not read, analyse or render a log (never a traceback)."""

from __future__ import annotations

# The most of an exception's own text a problem row repeats.
MAX_DETAIL = 200


def failure_message(exc: BaseException) -> str:
    """Return the problem message of a log whose reading, analysis or rendering raised ``exc``."""
    if isinstance(exc, MemoryError):
        return "sitegen ran out of memory reading, analysing or rendering this log (MemoryError)"
    if isinstance(exc, RecursionError):
        return "a record of this log is nested too deeply to analyse or render (RecursionError)"
    detail = str(exc)
    if len(detail) > MAX_DETAIL:
        detail = detail[:MAX_DETAIL] + "…"
    said = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return f"sitegen failed on this log ({said}); the other logs are not affected"
