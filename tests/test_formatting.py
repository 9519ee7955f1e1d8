from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sitegen.text import formatting as f


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
    assert f.timestamp(0) == f.timestamp_ms(None) == "—"
    assert f.timestamp(10**20) == "—"


@pytest.mark.parametrize(
    ("text", "shown"),
    [("28ms", "28 ms"), ("1.5s", "1.5 s"), ("900µs", "1 ms"), ("6531ms", "6.5 s"),
     (None, "—"), ("soon", "soon")],
)  # fmt: skip
def test_compute_time(text: str | None, shown: str) -> None:
    assert f.compute_time(text) == shown


def _rows_by_float(value: int) -> str:
    """The plain definition of ``rows``, spelled out independently of the code under test."""
    for scale, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if abs(value) >= scale:
            scaled = value / scale
            text = f"{scaled:.1f}" if abs(scaled) < 100 else f"{scaled:.0f}"
            return text.removesuffix(".0") + unit
    return str(value)


@given(st.integers(min_value=-(10**15), max_value=10**15) | st.integers(0, 2 * 10**6))
def test_rows_matches_the_plain_definition(value: int) -> None:
    assert f.rows(value) == _rows_by_float(value)


def test_rows_ties_round_like_the_float() -> None:
    # x.x5 exactly: the binary value of the quotient decides how it rounds.
    for value in [*range(1_050, 100_000, 100), *range(1_050_000, 100_000_000, 100_000)]:
        assert f.rows(value) == _rows_by_float(value)
    for value in (99_950, 999_500, 999_499, 99_950_000, 999_500_000, 999_999_999, 10**9):
        assert f.rows(value) == _rows_by_float(value)


_EDGES = [10**k + d for k in range(3, 10) for d in (-501, -500, -51, -50, -1, 0, 1, 49, 50, 500)]


@pytest.mark.parametrize("n", [*_EDGES, -1_234, 1_000, 999_999])
def test_rows_at_unit_and_rounding_edges(n: int) -> None:
    assert f.rows(n) == _rows_by_float(n)


@given(st.integers(min_value=-10, max_value=1 << 44))
@example(1767262907015)
@example((1 << 42) - 1)
@example(1 << 42)
def test_timestamps_are_timestamp_ms_and_timestamp(ms: int) -> None:
    assert f.timestamps(ms) == (f.timestamp_ms(ms), f.timestamp(ms))


def test_a_memo_stays_small_and_answers_what_its_function_would() -> None:
    made: list[int] = []

    def make(n: int) -> str:
        made.append(n)
        return f.duration(n)

    memo = f.Memo(make)
    keys = range(3 * f.MEMO_ENTRIES)
    assert [memo[n] for n in keys] == [f.duration(n) for n in keys]
    assert len(memo) <= f.MEMO_ENTRIES  # started over rather than grown
    assert memo[len(keys) - 1] == f.duration(len(keys) - 1)
    assert made.count(len(keys) - 1) == 1  # a text still held is not made again
