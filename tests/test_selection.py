"""Selection by query (builder/select/selection.py) against a plain Python statement of the rules."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.select.selection import Selection, choose_by
from sitegen.builder.select.sitesize import LISTING_BYTES_PER_JOB, SITE_RESERVE_BYTES
from sitegen.builder.state.store import State
from sitegen.eventlog.classify import duplicates
from sitegen.model import newest_first


@dataclass(frozen=True)
class Row:
    key: str
    job_id: str | None  # None: not a completed job
    start_time: int = 0
    end_time: int = 0
    completed_at: int = 0
    bytes: int = 0
    raw_bytes: int = 0
    published: bool = False

    @property
    def file(self) -> str:
        return self.key


@pytest.fixture
def state(tmp_path: Path) -> Iterator[State]:
    made = State.create(tmp_path / "state.sqlite", "test")
    yield made
    made.close()


def _insert(state: State, rows: list[Row]) -> None:
    state.db.execute("DELETE FROM log")
    state.db.executemany(
        "INSERT INTO log (key, size, mtime_ns, sha256, note_sha256, context_sha256, published, "
        "classification, flagged, job_id, job_name, start_time, day, end_time, completed_at, "
        "status, failed, succeeded, findings, worst_rank, tasks, failed_tasks, roots, files, "
        "bytes, raw_bytes) VALUES (?, 1, 1, '', '', '', ?, 'completed', 0, ?, 'q', ?, 0, ?, ?, "
        "'', 0, 0, 0, -1, 0, 0, '', 1, ?, ?)",
        [(r.key, int(r.published), r.job_id, *_times(r), r.bytes, r.raw_bytes) for r in rows],
    )


def _times(row: Row) -> tuple[int, int, int]:
    return row.start_time, row.end_time, row.completed_at


def reference(
    rows: list[Row],
    max_jobs: int | None,
    cutoff_ms: float | None,
    max_site_size: int | None,
    raw_logs: bool,
) -> tuple[dict[str, str], set[str], int, int, bool]:
    """The rules as a loop: losers (key -> message), published keys, dropped counts, leaner."""
    claims = [r if r.job_id is not None else None for r in rows]
    losers = duplicates(claims)  # type: ignore[arg-type]
    winners = [r for n, r in enumerate(rows) if r.job_id is not None and n not in losers]
    kept = newest_first(winners)  # type: ignore[type-var]
    if cutoff_ms is not None:
        kept = [r for r in kept if r.end_time >= cutoff_ms]
    if max_jobs is not None:
        kept = kept[: max(max_jobs, 0)]
    published = kept
    leaner = False
    if max_site_size is not None:
        published = _fits(kept, max_site_size, True)
        if raw_logs and len(published) < len(kept):
            leaner = len(_fits(kept, max_site_size, False)) > len(published)
    return (
        {rows[n].key: p.message for n, p in losers.items()},
        {r.key for r in published},
        len(winners) - len(kept),
        len(kept) - len(published),
        leaner,
    )


def _fits(ordered: list[Row], limit: int, raw_logs: bool) -> list[Row]:
    budget = limit - SITE_RESERVE_BYTES
    fitting = []
    for row in ordered:
        cost = row.bytes - (0 if raw_logs else row.raw_bytes) + LISTING_BYTES_PER_JOB
        if cost > budget:
            break  # the newest that fit, not a sample of smaller older ones
        budget -= cost
        fitting.append(row)
    return fitting


def _check(state: State, rows: list[Row], *limits: int | float | bool | None) -> Selection:
    _insert(state, rows)
    max_jobs, cutoff, size, raw = limits
    chosen = choose_by(state, max_jobs, cutoff, size, bool(raw))  # type: ignore[arg-type]
    losers, published, retention_dropped, size_dropped, leaner = reference(
        rows,
        max_jobs,  # type: ignore[arg-type]
        cutoff,
        size,  # type: ignore[arg-type]
        bool(raw),
    )
    assert {k: p.message for k, p in chosen.losers.items()} == losers
    assert all(p.file == k and p.job_id for k, p in chosen.losers.items())
    flips = {r.key: r.key in published for r in rows if (r.key in published) != r.published}
    assert chosen.flips == flips
    assert chosen.published == len(published)
    assert (chosen.retention_dropped, chosen.size_dropped) == (retention_dropped, size_dropped)
    assert chosen.leaner_fits_more == leaner
    return chosen


def test_the_newest_that_fit_and_a_stop_at_the_first_that_does_not(state: State) -> None:
    rows = [Row(f"j{n}.eventlog", f"j{n}", n, n, n, 100_000, 60_000) for n in range(10)]
    cost = 100_000 + LISTING_BYTES_PER_JOB
    limit = SITE_RESERVE_BYTES + 3 * cost + 10
    chosen = _check(state, rows, None, None, limit, True)
    assert set(chosen.flips) == {"j9.eventlog", "j8.eventlog", "j7.eventlog"}
    # Without their raw logs more fit: the planted case for "raw logs go first".
    assert chosen.leaner_fits_more
    # An older small job does not sneak in after a newer one that did not fit.
    big = Row("big.eventlog", "big-newest", 99, 99, 99, 10**9)
    assert _check(state, [*rows, big], None, None, limit, True).flips == {}


def test_duplicates_lose_to_the_later_completed_log_then_the_first_name(state: State) -> None:
    rows = [
        Row("a.eventlog", "same", 1, 1, 5, published=True),
        Row("b.eventlog", "same", 2, 2, 9),
        Row("c.eventlog", "tie", 3, 3, 7),
        Row("d.eventlog", "tie", 4, 4, 7),
        Row("e.eventlog", None),
    ]
    chosen = _check(state, rows, None, None, None, True)
    assert set(chosen.losers) == {"a.eventlog", "d.eventlog"}
    assert "completed later" in chosen.losers["a.eventlog"].message
    assert "comes first by name" in chosen.losers["d.eventlog"].message
    assert chosen.flips == {"a.eventlog": False, "b.eventlog": True, "c.eventlog": True}


def test_max_jobs_keeps_the_newest_with_ties_by_id(state: State) -> None:
    rows = [Row(f"{c}.eventlog", c, 10, 10, 10, published=True) for c in "dcba"]
    rows += [Row("old.eventlog", "old", 1, 1, 1, published=True)]
    chosen = _check(state, rows, 2, None, None, True)
    assert chosen.flips == {f"{c}.eventlog": False for c in "cd"} | {"old.eventlog": False}
    assert _check(state, rows, 0, None, None, True).published == 0


ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", None])
times = st.integers(0, 6)


@pytest.mark.slow  # 200 fresh SQLite states: about 15 s
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(ids, times, times, times, st.integers(0, 5_000), st.integers(0, 3_000)),
        max_size=14,
    ),
    st.lists(st.booleans(), min_size=14, max_size=14),
    st.one_of(st.none(), st.integers(0, 8)),
    st.one_of(st.none(), st.integers(0, 6)),
    st.one_of(st.none(), st.integers(SITE_RESERVE_BYTES, SITE_RESERVE_BYTES + 20_000)),
    st.booleans(),
)
def test_the_query_selects_as_the_rules_say(
    tmp_path_factory: pytest.TempPathFactory,
    specs: list[tuple[str | None, int, int, int, int, int]],
    flags: list[bool],
    max_jobs: int | None,
    cutoff: int | None,
    size: int | None,
    raw: bool,
) -> None:
    rows = [
        Row(f"log{n}.eventlog", job_id, start, end, done, files + raw_bytes, raw_bytes, flag)
        for n, ((job_id, start, end, done, files, raw_bytes), flag) in enumerate(
            zip(specs, flags, strict=False)
        )
    ]
    made = State.create(tmp_path_factory.mktemp("sel") / "state.sqlite", "test")
    try:
        chosen = _check(made, rows, max_jobs, cutoff, size, raw)
    finally:
        made.close()
    # Healthy: no limit and no shared id leaves nothing out and names no loser.
    if max_jobs is None and cutoff is None and size is None:
        completed = [r for r in rows if r.job_id is not None]
        if len({r.job_id for r in completed}) == len(completed):
            assert not chosen.losers and chosen.published == len(completed)


@pytest.mark.slow  # 60 fresh SQLite states, up to 30 steps each
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["put", "forget", "flip"]),
            st.integers(0, 5),  # which log
            st.sampled_from(["x1", "x2", "x3"]),
            st.integers(0, 50),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_totals_follow_every_row_that_comes_goes_or_flips(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, str, int, bool]]
) -> None:
    # The executors page's, the front page's (jobs by status, tasks) and Insights' flagged
    # executors: each against the sum over the rows as they end up.
    made = State.create(tmp_path_factory.mktemp("ex") / "state.sqlite", "test")
    try:
        for action, log, executor, tasks, published in steps:
            key = f"log{log}"
            if action == "put":
                made.forget([key])  # as a build records a log again
                made.db.execute(
                    "INSERT INTO log (key, size, mtime_ns, sha256, note_sha256, context_sha256, "
                    "published, classification, flagged, start_time, day, end_time, "
                    "completed_at, status, failed, succeeded, findings, worst_rank, tasks, "
                    "failed_tasks, roots, files, bytes, raw_bytes) VALUES "
                    "(?, 0, 0, '', '', '', ?, 'completed', 0, 0, 0, 0, 0, ?, 0, 0, 0, -1, ?, ?, "
                    "'', 0, 0, 0)",
                    (key, int(published), executor.upper(), tasks, tasks // 4),
                )
                # As a build records them: the totals of executor rows are added with them.
                row = (key, executor, key, 0, int(published), tasks, tasks // 3, tasks * 7)
                made.put_executors([row + (0,) * 6])
                made.db.execute(
                    "INSERT INTO flag VALUES (?, ?, 0, ?, ?)", (key, key, executor, int(published))
                )
            elif action == "forget":
                made.forget([key])
            else:
                made.set_published([(key, published)])
        summed = made.db.execute(
            "SELECT executor_id, sum(tasks), sum(failed), sum(busy_ms), count(*) FROM executor "
            "WHERE published GROUP BY executor_id ORDER BY executor_id"
        ).fetchall()
        assert made.executors() == summed
        by_status = made.db.execute(
            "SELECT status, count(*) FROM log WHERE published GROUP BY status ORDER BY status"
        ).fetchall()
        tasks_failed = made.db.execute(
            "SELECT coalesce(sum(tasks), 0), coalesce(sum(failed_tasks), 0) FROM log "
            "WHERE published"
        ).fetchone()
        assert made.totals() == (dict(by_status), *tasks_failed)
        flagged = made.db.execute(
            "SELECT executor_id, count(*) FROM flag WHERE published GROUP BY executor_id "
            "ORDER BY count(*) DESC, executor_id"
        ).fetchall()
        assert made.flagged_executors(1) == flagged
        assert made.flagged_executors(2) == [f for f in flagged if f[1] >= 2]
    finally:
        made.close()
