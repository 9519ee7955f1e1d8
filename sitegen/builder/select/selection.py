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

from sitegen.builder.options import BuildOptions
from sitegen.builder.select.retention import parse_age
from sitegen.builder.select.sitesize import LISTING_BYTES_PER_JOB, SITE_RESERVE_BYTES
from sitegen.builder.state.store import State
from sitegen.eventlog.classify import duplicate_problem
from sitegen.model import Problem


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


def choose(state: State, options: BuildOptions, now: float) -> Selection:
    """Resolve duplicate ids, then keep what retention and the size limit allow (by query)."""
    cutoff = None
    if options.max_age:
        cutoff = (now - parse_age(options.max_age)) * 1000
    return choose_by(state, options.max_jobs, cutoff, options.max_site_size, options.raw_logs)


def choose_by(
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
    # Losers are excluded by key, and only when there are any: the check reads the row of
    # every log it passes (0.3 s to find the 100,000th newest), where the rest is in indexes.
    unique = " AND key NOT IN temp.loser" if losers else ""
    (completed,) = db.execute("SELECT count(*) FROM log WHERE job_id IS NOT NULL").fetchone()
    winners = completed - len(losers)
    # What a winner must meet to be published, the losers aside.
    kept = _Kept("job_id IS NOT NULL", [])
    if max_age_cutoff_ms is not None:
        # When the job ended: a cancelled job's cancel time (model.ended_at), not its 0.
        kept.narrow("end_time >= ?", max_age_cutoff_ms)
    if max_jobs is not None:
        _newest(state, kept, unique, max_jobs)
    query = f"SELECT count(*) FROM log WHERE {kept.where}{unique}"
    (count,) = db.execute(query, kept.args).fetchone()
    chosen = Selection(losers, {}, count, winners - count)
    if max_site_size is not None:
        _fitting(state, chosen, kept, unique, max_site_size, raw_logs)
    chosen.flips = _flips(state, kept, unique)
    return chosen


class _Kept:
    """The condition, in SQL, that a winner meets to be published; narrowed step by step."""

    def __init__(self, where: str, args: list[object]) -> None:
        self.where = where
        self.args = args

    def narrow(self, condition: str, *args: object) -> None:
        """Add a condition (with its arguments)."""
        self.where = f"{self.where} AND {condition}"
        self.args = [*self.args, *args]

    def up_to(self, last: tuple[int, str] | None) -> None:
        """Keep the rows up to ``last`` in the newest-first order (None: not one)."""
        if last is None:
            self.where, self.args = "0", []
            return
        start, job_id = last
        self.narrow("(start_time > ? OR (start_time = ? AND job_id <= ?))", start, start, job_id)


def _flips(state: State, kept: _Kept, unique: str) -> dict[str, bool]:
    """Return the logs whose published flag is not what ``kept`` says, with the new flag."""
    # Two searches of the (published, newest) index: the unpublished that are kept now (few),
    # and the published that are not (a range of the index, or the losers by key).
    db = state.db
    on = db.execute(
        f"SELECT key FROM log INDEXED BY log_newest WHERE published = 0 AND {kept.where}{unique}",
        kept.args,
    )
    flips = {key: True for (key,) in on}
    off = db.execute(
        f"SELECT key FROM log INDEXED BY log_newest WHERE published = 1 AND NOT ({kept.where})",
        kept.args,
    )
    flips.update((key, False) for (key,) in off)
    if unique:
        rows = db.execute("SELECT key FROM log WHERE published = 1 AND key IN temp.loser")
        flips.update((key, False) for (key,) in rows)
    return flips


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
        losers[key] = duplicate_problem(job_id, key, winner[2], winner[1] > completed_at)
    return losers


def _newest(state: State, kept: _Kept, unique: str, max_jobs: int) -> None:
    """Narrow ``kept`` to its newest ``max_jobs`` rows: those up to the last one's place."""
    if max_jobs <= 0:
        kept.up_to(None)
        return
    last = state.db.execute(
        f"SELECT start_time, job_id FROM log INDEXED BY log_order WHERE {kept.where}{unique} "
        f"{_ORDER} LIMIT 1 OFFSET ?",
        [*kept.args, max_jobs - 1],
    ).fetchone()
    if last is not None:  # else fewer than max_jobs: all of them
        kept.up_to(last)


def _fitting(
    state: State, chosen: Selection, kept: _Kept, unique: str, limit: int, raw_logs: bool
) -> None:
    """Narrow ``kept`` to its newest jobs whose files fit in ``limit`` bytes; count the rest."""
    # A job's rows of the SQL tables (data/) count as their blob's bytes: zstd, as the Parquet
    # files are (which add a footer a file: within the reserve).
    rows = state.db.execute(
        "SELECT start_time, job_id, bytes + coalesce(length(rows), 0), raw_bytes "
        f"FROM log LEFT JOIN data_row USING (key) WHERE {kept.where}{unique} {_ORDER}",
        kept.args,
    ).fetchall()
    fit, last = _fit(rows, limit, raw_logs=True)
    chosen.size_dropped = len(rows) - fit
    chosen.published = fit
    if raw_logs and chosen.size_dropped:
        chosen.leaner_fits_more = _fit(rows, limit, raw_logs=False)[0] > fit
    if fit < len(rows):
        kept.up_to(last)


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
