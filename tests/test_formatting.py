from __future__ import annotations

import pytest

from sitegen import formatting as f


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "—"), (0, "0"), (950, "950"), (12_345, "12.3K"), (1_500_000, "1.5M"),
     (1_000_000, "1M"), (150_000_000, "150M"), (2_500_000_000, "2.5B")],
)  # fmt: skip
def test_rows(value: int | None, text: str) -> None:
    assert f.rows(value) == text


@pytest.mark.parametrize(
    ("ms", "text"),
    [(None, "—"), (-1, "—"), (0, "0 ms"), (350, "350 ms"), (1200, "1.2 s"), (59_940, "59.9 s"),
     (185_000, "3 min 5 s"), (7_620_000, "2 h 7 min")],
)  # fmt: skip
def test_duration(ms: int | None, text: str) -> None:
    assert f.duration(ms) == text


def test_numbers_and_times() -> None:
    assert f.number(1234567) == "1,234,567"
    assert f.number(None) == "—"
    assert f.timestamp(1_767_225_600_000) == "2026-01-01T00:00:00Z"
    assert f.timestamp_ms(1_767_225_600_123) == "2026-01-01T00:00:00.123Z"
    assert f.clock(1_767_254_495_127) == "08:01:35.127Z"
    assert f.timestamp(0) == f.clock(0) == f.timestamp_ms(None) == "—"
    assert f.timestamp(10**20) == "—"


@pytest.mark.parametrize(
    ("text", "shown"),
    [("28ms", "28 ms"), ("1.5s", "1.5 s"), ("900µs", "1 ms"), ("6531ms", "6.5 s"),
     (None, "—"), ("soon", "soon")],
)  # fmt: skip
def test_compute_time(text: str | None, shown: str) -> None:
    assert f.compute_time(text) == shown
