"""Turn numbers, durations and timestamps into the short text the pages show."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime

NONE = "—"
_UNITS = ((1_000_000_000_000, "T"), (1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K"))
_COMPUTE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|µs|us|ms|s|m|min|h)?\s*$")
_TO_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "min": 6e4, "h": 3.6e6}


def number(value: int | None) -> str:
    """Return ``1,234,567``; a dash for a missing value."""
    return NONE if value is None else f"{value:,}"


def rows(value: int | None) -> str:
    """Return a row count the short way: ``950``, ``12K``, ``1.5M``."""
    if value is None:
        return NONE
    for scale, unit in _UNITS:
        if abs(value) >= scale:
            scaled = value / scale
            # One decimal while it carries information (1.5M), none once it is noise (150M).
            text = f"{scaled:.1f}" if abs(scaled) < 100 else f"{scaled:.0f}"
            return text.removesuffix(".0") + unit
    return str(value)


def duration(ms: float | None) -> str:
    """Return ``350 ms``, ``1.2 s``, ``3 min 5 s`` or ``2 h 7 min``."""
    # "not ms >= 0" is also true for NaN; infinity has no whole seconds to show.
    if ms is None or not ms >= 0 or math.isinf(ms):
        return NONE
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def compute_ms(text: str | None) -> float | None:
    """Parse Ballista's ``elapsed_compute`` (``"28ms"``, ``"1.5s"``) into milliseconds."""
    if not text:
        return None
    found = _COMPUTE.match(text)
    if found is None:
        return None
    ms = float(found.group(1)) * _TO_MS[found.group(2) or "ms"]
    # A 310-digit number parses to infinity: not a duration (compute_time shows the text).
    return ms if math.isfinite(ms) else None


def compute_time(text: str | None) -> str:
    """Return an ``elapsed_compute`` string as a duration, or as given if unparseable."""
    ms = compute_ms(text)
    if ms is None:
        return text or NONE
    return duration(ms)


def _utc(ms: int) -> datetime | None:
    """Return the UTC datetime of a millisecond timestamp; None for 0 or out of range."""
    if ms <= 0:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def timestamp(ms: int | None) -> str:
    """Return ``2026-01-01T00:00:00Z`` (UTC, second precision); a dash for 0."""
    moment = _utc(ms or 0)
    return NONE if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def timestamp_ms(ms: int | None) -> str:
    """Return ``2026-01-01T00:00:00.123Z`` (UTC, millisecond precision); a dash for 0."""
    moment = _utc(ms or 0)
    if moment is None:
        return NONE
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _second_of_day(second: int) -> str:
    """Return ``HH:MM:SS.`` for a Unix second (UTC)."""
    minutes, sec = divmod(second % 86_400, 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:{sec:02d}."


# Entries a Memo holds before it starts over. Six memos live in every worker: at 65,536
# entries each (about 150 bytes apiece) they grew a worker from 27 to 41 MB over a
# 100,000-job build; the texts that repeat (a job's seconds, common durations) refill fast.
MEMO_ENTRIES = 8_192


class Memo(dict[int, str]):
    """Texts by integer, each made on first use; hot loops index it like a dict."""

    def __init__(self, make: Callable[[int], str]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: int) -> str:
        """Make a text not seen yet (and forget them all now and then: stay small)."""
        if len(self) >= MEMO_ENTRIES:
            self.clear()
        text = self[key] = self.make(key)
        return text


# The task times of a job fall within a few seconds: format each second once and add the
# milliseconds from a table. The task table's clock (``00:05:12.345Z``) indexes these two
# directly (see ``jobpage.TaskTable.rows``).
SECONDS = Memo(_second_of_day)
MILLIS = tuple(f"{n:03d}Z" for n in range(1000))
# Task durations in whole milliseconds repeat across tables, timelines and jobs.
DURATIONS = Memo(duration)

# Below this many milliseconds ``ms / 1000`` as a float is within half a microsecond of the
# true instant, so the datetime that timestamp() makes has exactly ``ms % 1000`` millis.
_EXACT_MS = 1 << 42  # the year 2109
# "2026-01-01T": a day's date, for the many timestamps that fall on the same day.
_DAYS = Memo(lambda day: datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%dT"))


def timestamps(ms: int) -> tuple[str, str]:
    """Return ``(timestamp_ms(ms), timestamp(ms))`` without a datetime per call."""
    if 0 < ms < _EXACT_MS:
        second, milli = divmod(ms, 1000)
        # Not SECONDS[second]: jobs rarely share a second, and misses would churn that memo.
        prefix = _DAYS[second // 86_400] + _second_of_day(second)
        return prefix + MILLIS[milli], prefix[:-1] + "Z"
    return timestamp_ms(ms), timestamp(ms)


# A plan longer than this is cut on its page (a 200 MB plan on a page helps nobody); the
# /api responses always carry it whole.
MAX_PAGE_TEXT = 200_000


def page_text(text: str | None) -> str:
    """Return ``text`` as a page shows it: cut after MAX_PAGE_TEXT characters, saying so."""
    if text is None or len(text) <= MAX_PAGE_TEXT:
        return text or ""
    rest = len(text) - MAX_PAGE_TEXT
    return f"{text[:MAX_PAGE_TEXT]}\n… cut here: {rest:,} more characters (the API has it all)"


def percent(part: int, whole: int) -> str:
    """Return ``42%`` (a dash when there is no whole)."""
    return NONE if whole <= 0 else f"{100 * part // whole}%"


def filesize(size: int | None) -> str:
    """Return ``512 B``, ``12.3 KB``, ``4.5 MB`` or ``1.2 GB`` (powers of 1,000)."""
    if size is None:
        return NONE
    for scale, unit in ((1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def plural(n: int, word: str) -> str:
    """Return ``n word`` (thousands separated) with an ``s`` unless n is 1."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"
