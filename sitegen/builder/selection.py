"""Which logs the site publishes, decided by query over the state's rows of every log.

Duplicate job ids first (the later-completed log wins), then retention (``--max-age``, the
newest ``--max-jobs``), then ``--max-site-size`` (the newest jobs whose files fit). What comes
back is what changes: the logs whose published flag flips, and the counts. A build that
changed one log of 100,000 thus makes no Python object per log; selecting from every log's
row in Python cost 1.5 s at that size.

The order is the API's (newest start first, ties by job id), as ``model.newest_first``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.builder.manifest import State
from sitegen.builder.sitesize import LISTING_BYTES_PER_JOB, SITE_RESERVE_BYTES
from sitegen.model import Problem, ProblemKind


@dataclass
class Selection:
    """What selection decided: the losers, the flags that change, and the counts."""

    # Logs that lost their job id to another log, by key, and why.
    losers: dict[str, Problem]
    # Key -> published now, for every log whose published flag is not that already.
    flips: dict[str, bool]
    published: int
    # Left out by --max-jobs / --max-age, and then by --max-site-size.
    retention_dropped: int = 0
    size_dropped: int = 0
    # Whether leaving the raw logs out would let more jobs fit in --max-site-size.
    leaner_fits_more: bool = False


# The newest first, as the API orders jobs; the index log_order gives it.
_ORDER = "ORDER BY start_time DESC, job_id"


def select(
    state: State,
    max_jobs: int | None,
    max_age_cutoff_ms: float | None,
    max_site_size: int | None,
    raw_logs: bool,
) -> Selection:
    """Select from every log the state holds; ``max_age_cutoff_ms``: the oldest end kept."""
    db = state.db
    losers = _losers(state)
    db.execute("CREATE TEMP TABLE IF NOT EXISTS loser(key TEXT PRIMARY KEY)")
    db.execute("DELETE FROM temp.loser")
    db.executemany("INSERT INTO temp.loser VALUES (?)", [(key,) for key in losers])
    (completed,) = db.execute("SELECT count(*) FROM log WHERE job_id IS NOT NULL").fetchone()
    winners = completed - len(losers)
    kept = "job_id IS NOT NULL AND key NOT IN temp.loser"
    args: list[object] = []
    if max_age_cutoff_ms is not None:
        kept += " AND end_time >= ?"
        args.append(max_age_cutoff_ms)
    if max_jobs is not None:
        kept, args = _newest(state, kept, args, max_jobs)
    (kept_count,) = db.execute(f"SELECT count(*) FROM log WHERE {kept}", args).fetchone()
    chosen = Selection(losers, {}, kept_count, winners - kept_count)
    published, published_args = kept, args
    if max_site_size is not None:
        published, published_args = _fitting(state, chosen, kept, args, max_site_size, raw_logs)
    rows = db.execute(
        f"SELECT key, published FROM log WHERE ({published}) <> published", published_args
    )
    chosen.flips = {key: not was for key, was in rows}
    return chosen


def _losers(state: State) -> dict[str, Problem]:
    """Return, by key, the logs whose job id a later-completed log (or an earlier name) has."""
    rows = state.db.execute(
        "SELECT job_id, completed_at, key FROM log INDEXED BY log_claim WHERE job_id IN ("
        "  SELECT job_id FROM log INDEXED BY log_claim WHERE job_id IS NOT NULL"
        "  GROUP BY job_id HAVING count(*) > 1"
        ") ORDER BY job_id, completed_at DESC, key"
    )
    losers: dict[str, Problem] = {}
    winner: tuple[str, int, str] | None = None
    for job_id, completed_at, key in rows:
        if winner is None or winner[0] != job_id:
            winner = (job_id, completed_at, key)  # latest completion; among equals, first name
            continue
        if winner[1] > completed_at:
            why = "completed later"
        else:
            why = "completed at the same time and comes first by name"
        losers[key] = Problem(
            ProblemKind.DUPLICATE_ID,
            key,
            f"job id {job_id!r} is also in {winner[2]}, which {why}; this log was not published",
            job_id=job_id,
        )
    return losers


def _newest(state: State, kept: str, args: list[object], max_jobs: int) -> tuple[str, list[object]]:
    """Narrow ``kept`` to its newest ``max_jobs`` rows: those up to the last one's place."""
    if max_jobs <= 0:
        return "0", []
    last = state.db.execute(
        f"SELECT start_time, job_id FROM log INDEXED BY log_order WHERE {kept} {_ORDER} "
        "LIMIT 1 OFFSET ?",
        [*args, max_jobs - 1],
    ).fetchone()
    if last is None:
        return kept, args  # fewer than max_jobs: all of them
    start, job_id = last
    where = f"{kept} AND (start_time > ? OR (start_time = ? AND job_id <= ?))"
    return where, [*args, start, start, job_id]


def _fitting(
    state: State,
    chosen: Selection,
    kept: str,
    args: list[object],
    limit: int,
    raw_logs: bool,
) -> tuple[str, list[object]]:
    """Narrow ``kept`` to its newest jobs whose files fit in ``limit`` bytes; count the rest."""
    rows = state.db.execute(
        f"SELECT start_time, job_id, bytes, raw_bytes FROM log WHERE {kept} {_ORDER}",
        args,
    ).fetchall()
    fit, last = _fit(rows, limit, raw_logs=True)
    chosen.size_dropped = len(rows) - fit
    chosen.published = fit
    if raw_logs and chosen.size_dropped:
        chosen.leaner_fits_more = _fit(rows, limit, raw_logs=False)[0] > fit
    if last is None:
        return "0", []  # not even the newest fits
    start, job_id = last
    where = f"{kept} AND (start_time > ? OR (start_time = ? AND job_id <= ?))"
    return where, [*args, start, start, job_id]


def _fit(
    rows: list[tuple[int, str, int, int]], limit: int, raw_logs: bool
) -> tuple[int, tuple[int, str] | None]:
    """Return how many of the newest rows fit in ``limit`` bytes, and the last that does."""
    budget = limit - SITE_RESERVE_BYTES
    last = None
    for n, (start, job_id, files, raw) in enumerate(rows):
        budget -= files - (0 if raw_logs else raw) + LISTING_BYTES_PER_JOB
        if budget < 0:
            return n, last  # the newest that fit, not a sample of smaller older ones
        last = (start, job_id)
    return len(rows), last
