"""Order statistics of task durations and row counts (one sort, then lookups)."""

from __future__ import annotations

from collections.abc import Sequence


def median(ordered: Sequence[float]) -> float:
    """Return the median of a sorted, non-empty sequence (the mean of the middle two if even)."""
    n = len(ordered)
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def quantile(ordered: Sequence[float], q: float) -> float:
    """Return the ``q`` quantile of a sorted, non-empty sequence by linear interpolation."""
    at = q * (len(ordered) - 1)
    low = int(at)
    if low + 1 >= len(ordered):
        return float(ordered[-1])
    return ordered[low] + (ordered[low + 1] - ordered[low]) * (at - low)


def times(ratio: float) -> str:
    """Return a ratio as a person reads it: ``30x``, ``2.4x``."""
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"
