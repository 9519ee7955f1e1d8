"""What was built from what: the SQLite state in the output that makes builds incremental.

One file, ``.sitegen-state.sqlite``, in the published directory: a full build writes a new
one into the staging directory, so the atomic swap replaces site and state together; an
incremental build updates rows in one transaction, committed after the site's files are in
place, so a killed build rolls back and the next one redoes it. Per log it keeps its
identity (size, mtime), its SHA-256 and what the map step made of it; per job the columns
the reduce queries and the whole ``JobSummary`` as one encoded blob (in a table of its own,
so that queries over every log read small rows), so fields added to it travel along without
a schema change; per job name the figures of its trend. A state that is missing, of another
layout or damaged (SQLite or the decoder says so when it is read) is ignored: that costs a
full build, never a wrong site.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import msgspec

from sitegen import __version__
from sitegen.eventlog.filekind import open_regular
from sitegen.layout import LEGACY_MANIFEST_NAME, MANIFEST_NAME
from sitegen.model import Classification, ExecutorStats, JobSummary, Problem, RunningJob

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from sitegen.diagnose.failures import FailureRow
    from sitegen.diagnose.insights import Ranked
    from sitegen.diagnose.recurring import Run
    from sitegen.eventlog.logfiles import LogList


class LogOutcome(msgspec.Struct, gc=False, omit_defaults=True):
    """What the map step returns for one log: small, picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem] = msgspec.field(default_factory=list)
    summary: JobSummary | None = None
    running: RunningJob | None = None
    roots: list[str] = msgspec.field(default_factory=list)
    files: int = 0
    bytes: int = 0
    # SHA-256 of the log, taken by the worker that read it (hashing is parallel too).
    sha256: str = ""
    # SHA-256 of the operator note the job page was rendered with ("" for none).
    note_sha256: str = ""
    # SHA-256 of the run context (other runs of its name) the job page was rendered with.
    context_sha256: str = ""


class Chosen(msgspec.Struct, array_like=True, gc=False):
    """What a build's selection decided, kept so that a build with nothing to do reports it."""

    # The options it depends on besides the logs (see pipeline._selection_options).
    options: list[int | None]
    # Logs that lost their job id to another log, by key, and why.
    losers: dict[str, Problem]
    published: int
    retention_dropped: int
    size_dropped: int
    # Digest of the logs it was made from (identity_digest): equal now, nothing changed.
    identities: str = ""
    # Digest of the log dirs' listings it was made from (listing_digest), for a build that
    # trusts finished logs: equal now, and no unfinished log changed, nothing changed.
    listing: str = ""


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    """Split ``items`` into lists SQLite takes as bound parameters (at most 500)."""
    for start in range(0, len(items), 500):
        yield items[start : start + 500]


def _marks(chunk: Sequence[str]) -> str:
    """Return the ``?`` placeholders of a chunk's ``IN (…)`` list."""
    return ",".join("?" * len(chunk))


def identity_digest(logs: LogList) -> str:
    """Return a digest of the logs' keys, sizes and modification times, in their order."""
    # From the columns, not a string per log: at 100,000 logs this is a no-op build's check.
    h = hashlib.sha256("\0".join(logs.keys).encode("utf-8", "surrogateescape"))
    h.update(b"\n" + logs.sizes.tobytes())
    h.update(b"\n" + logs.times.tobytes())  # within 64 bits: discover clamps them
    return h.hexdigest()


def listing_digest(log_dirs: Sequence[Path], listings: Sequence[Sequence[str]]) -> str:
    """Return a digest of the log dirs' real paths and their names, as listed."""
    # The listing's own order: a directory that did not change lists alike (a reordered
    # listing only costs the stat of every log). 0.02 s for 100,000 names.
    h = hashlib.sha256()
    for log_dir, names in zip(log_dirs, listings, strict=True):
        h.update(os.fsencode(os.path.realpath(log_dir)) + b"\0\0")
        h.update("\0".join(names).encode("utf-8", "surrogateescape") + b"\0\0")
    return h.hexdigest()


_decode_chosen = msgspec.json.Decoder(Chosen).decode


class Identities(NamedTuple):
    """Every log the state holds: keys in order, sizes and times as comma-separated text."""

    keys: list[str]
    sizes: str
    times: str


def changed_logs(stored: Identities, logs: LogList) -> tuple[set[str], set[str]]:
    """Return the keys of the logs that are new or differ from ``stored``, and of those gone.

    Whole lists are compared in C where they line up (one log dir, listed in key order as the
    state's index holds them): building a tuple per log cost 0.4 s at 100,000 logs.
    """
    keys = logs.keys
    new: set[str] = set()
    gone: set[str] = set()
    if keys != stored.keys:
        now, had = set(keys), set(stored.keys)
        new, gone = now - had, had - now
    here, there = _positions(keys, new), _positions(stored.keys, gone)
    kept = _without(keys, here)
    if kept != _without(stored.keys, there):
        # Not in the same order (several dirs): tuple by tuple.
        then = set(zip(stored.keys, _ints(stored.sizes), _ints(stored.times), strict=True))
        tuples = set(zip(keys, logs.sizes, logs.times, strict=True))
        differ = {key for key, _, _ in tuples - then}
        return differ, {key for key, _, _ in then - tuples} - differ
    differ = set(new)
    for numbers, column in ((logs.sizes, stored.sizes), (logs.times, stored.times)):
        values = _without(list(numbers), here)
        then_text = ",".join(_without(column.split(","), there)) if there else column
        if ",".join(map(str, values)) != then_text:
            pairs = zip(kept, values, _ints(then_text), strict=True)
            differ.update(key for key, v, w in pairs if v != w)
    return differ, gone


def _positions(keys: list[str], some: set[str]) -> list[int]:
    """Return where the keys of ``some`` are in ``keys``, last first."""
    if len(some) <= 64:  # the usual few: a search in C each
        return sorted((keys.index(key) for key in some), reverse=True)
    return [n for n in range(len(keys) - 1, -1, -1) if keys[n] in some]


T = TypeVar("T")


def _without(items: list[T], positions: list[int]) -> list[T]:
    """Return ``items`` without those at ``positions`` (last first); itself when there are none."""
    if not positions:
        return items
    items = list(items)
    for n in positions:
        del items[n]
    return items


def _ints(column: str) -> list[int]:
    """Return a comma-separated column's numbers."""
    return list(map(int, column.split(","))) if column else []


class Known(NamedTuple):
    """One log as last built, from the state's columns alone (no blob decoded)."""

    # A tuple straight from the row: at 100,000 logs building objects field by field
    # cost most of a no-op build.
    key: str
    size: int
    mtime_ns: int
    sha256: str
    note_sha256: str
    context_sha256: str
    published: int
    classification: str
    job_id: str | None
    job_name: str | None
    start_time: int
    end_time: int
    completed_at: int
    roots_text: str
    files: int
    bytes: int
    raw_bytes: int

    @property
    def roots(self) -> list[str]:
        """Return the job directories this log published (or would publish)."""
        return self.roots_text.split("\n") if self.roots_text else []


# What reading a damaged state raises: SQLite's errors, and a blob that does not decode.
DAMAGE = (sqlite3.DatabaseError, msgspec.DecodeError)

# The jobs list's widest span (sitegen.render.listing.SPANS): a UTC day.
DAY_MS = 86_400_000
# The state's own layout: a state of another layout (or none) means a full build.
FORMAT = 8
# Summaries and outcomes are blobs in MessagePack: compact, and decoded only when needed.
_encode = msgspec.msgpack.Encoder().encode
_decode_outcome = msgspec.msgpack.Decoder(LogOutcome).decode
# Public: a worker is handed a summary as the state stores it (trend_hooks.patch_page).
decode_summary = msgspec.msgpack.Decoder(JobSummary).decode
_json = msgspec.json.Encoder().encode

_SCHEMA = """
CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE log(
    key TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    note_sha256 TEXT NOT NULL,
    context_sha256 TEXT NOT NULL,
    published INTEGER NOT NULL,
    classification TEXT NOT NULL,
    flagged INTEGER NOT NULL,
    job_id TEXT,
    job_name TEXT,
    start_time INTEGER NOT NULL,
    -- The UTC day its start falls in (start_time // DAY_MS): the jobs list's widest span.
    day INTEGER NOT NULL,
    end_time INTEGER NOT NULL,
    completed_at INTEGER NOT NULL,
    status TEXT,
    -- As the trend of its name counts the run (diagnose/recurring.py).
    failed INTEGER NOT NULL,
    succeeded INTEGER NOT NULL,
    -- Its own findings: how many, and the rank of the worst (-1: none), for Insights.
    findings INTEGER NOT NULL,
    worst_rank INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    failed_tasks INTEGER NOT NULL,
    roots TEXT NOT NULL,
    files INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    raw_bytes INTEGER NOT NULL,
    listed BLOB
);
CREATE INDEX log_newest ON log(published, start_time DESC, job_id);
CREATE INDEX log_job ON log(job_id) WHERE published;
CREATE INDEX log_day ON log(day, start_time DESC, job_id) WHERE published;
-- Cover the counts every build reports: jobs by status, task attempts, bytes, classifications.
CREATE INDEX log_totals ON log(published, status, tasks, failed_tasks, bytes);
CREATE INDEX log_class ON log(classification);
CREATE INDEX log_noted ON log(job_id, note_sha256) WHERE published AND note_sha256 <> '';
CREATE INDEX log_identity ON log(key, size, mtime_ns);
-- Selection by query (builder/selection.py): the logs that claim each job id, latest
-- completion first; every completed log in the API's order, newest first.
CREATE INDEX log_claim ON log(job_id, completed_at DESC, key) WHERE job_id IS NOT NULL;
CREATE INDEX log_order ON log(start_time DESC, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX log_flagged ON log(key) WHERE flagged;
CREATE INDEX log_name ON log(job_name, start_time, job_id) WHERE published AND job_name <> '';
CREATE INDEX log_worst ON log(worst_rank DESC, findings DESC, start_time DESC, job_id DESC)
    WHERE published AND findings > 0;
CREATE TABLE blob(key TEXT PRIMARY KEY, summary BLOB, outcome BLOB NOT NULL);
CREATE TABLE name_trend(name TEXT PRIMARY KEY, runs INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE executor(
    key TEXT NOT NULL,
    executor_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    published INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    busy_ms INTEGER NOT NULL
);
CREATE INDEX executor_key ON executor(key);
CREATE INDEX executor_newest ON executor(executor_id, published, start_time DESC, job_id);
-- The executors page's totals over the published jobs, kept by triggers as rows come, go
-- and flip: summing 300,000 rows at 100,000 jobs cost every build 0.3 s.
CREATE TABLE executor_total(
    executor_id TEXT PRIMARY KEY,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    busy_ms INTEGER NOT NULL,
    jobs INTEGER NOT NULL
);
CREATE TRIGGER executor_in AFTER INSERT ON executor WHEN NEW.published BEGIN
    INSERT INTO executor_total VALUES (NEW.executor_id, NEW.tasks, NEW.failed, NEW.busy_ms, 1)
    ON CONFLICT (executor_id) DO UPDATE SET tasks = tasks + excluded.tasks,
        failed = failed + excluded.failed, busy_ms = busy_ms + excluded.busy_ms, jobs = jobs + 1;
END;
CREATE TRIGGER executor_out AFTER DELETE ON executor WHEN OLD.published BEGIN
    UPDATE executor_total SET tasks = tasks - OLD.tasks, failed = failed - OLD.failed,
        busy_ms = busy_ms - OLD.busy_ms, jobs = jobs - 1
    WHERE executor_id = OLD.executor_id;
END;
CREATE TRIGGER executor_flip AFTER UPDATE OF published ON executor
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO executor_total VALUES (NEW.executor_id, 0, 0, 0, 0) ON CONFLICT DO NOTHING;
    UPDATE executor_total SET
        tasks = tasks + iif(NEW.published, NEW.tasks, -NEW.tasks),
        failed = failed + iif(NEW.published, NEW.failed, -NEW.failed),
        busy_ms = busy_ms + iif(NEW.published, NEW.busy_ms, -NEW.busy_ms),
        jobs = jobs + iif(NEW.published, 1, -1)
    WHERE executor_id = NEW.executor_id;
END;
-- What the Failures page adds up: each job's failure and failed attempts' error patterns.
CREATE TABLE failure(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    job_id TEXT NOT NULL,
    job_name TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    pattern TEXT NOT NULL,
    example TEXT NOT NULL,
    failed_job INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    published INTEGER NOT NULL
);
CREATE INDEX failure_key ON failure(key);
-- The executors that findings name, per job: the Insights page's flagged nodes.
CREATE TABLE flag(
    key TEXT NOT NULL,
    job_id TEXT NOT NULL,
    start_time INTEGER NOT NULL,
    executor_id TEXT NOT NULL,
    published INTEGER NOT NULL
);
CREATE INDEX flag_key ON flag(key);
CREATE INDEX flag_executor ON flag(published, executor_id, start_time DESC, job_id DESC);
CREATE TABLE site_file(path TEXT PRIMARY KEY);
-- Per UTC day with published jobs: its listing pages and find-index parts (listing.DayListing).
-- ``api``: the day's elements of ``/api/jobs``, newest first, joined: the array is the days'.
CREATE TABLE list_day(day INTEGER PRIMARY KEY, data BLOB NOT NULL, api BLOB NOT NULL);
CREATE TABLE list_page(name TEXT PRIMARY KEY, signature TEXT NOT NULL);
"""
_KNOWN = (
    "key, size, mtime_ns, sha256, note_sha256, context_sha256, published, classification, job_id, "
    "job_name, start_time, end_time, completed_at, roots, files, bytes, raw_bytes"
)
_RUN = "job_id, job_name, start_time, end_time, status, failed, succeeded, sha256 || key"


class State:
    """An open state database; every change is one transaction, committed by ``commit``."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection
        self.fingerprint = ""
        self.closed = False

    @classmethod
    def create(cls, path: Path, fingerprint: str) -> State:
        """Create an empty state at ``path`` (in a staging directory) for this build."""
        db = sqlite3.connect(path, isolation_level=None)
        db.executescript(_SCHEMA)  # before BEGIN: executescript commits what is pending
        db.execute("BEGIN")
        state = cls(path, db)
        state._meta({"format": str(FORMAT), "sitegen": __version__, "fingerprint": fingerprint})
        return state

    def _meta(self, values: dict[str, str]) -> None:
        """Record the state's layout, sitegen version and fingerprint."""
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def begin(self) -> None:
        """Start the build's one write transaction (others wait: builds take turns anyway)."""
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the build's changes: the site and its state now agree."""
        if self.db.in_transaction:
            self.db.execute("COMMIT")

    def close(self) -> None:
        """Close the database (again is fine); an uncommitted transaction rolls back."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        finally:
            self.db.close()

    # --- logs -------------------------------------------------------------------------

    def known(self, keys: Iterable[str]) -> dict[str, Known]:
        """Return the identity and listing columns of the logs of ``keys`` it holds."""
        make = Known._make
        return {
            row[0]: make(row)
            for chunk in _chunks(sorted(keys))
            for row in self.db.execute(
                f"SELECT {_KNOWN} FROM log WHERE key IN ({_marks(chunk)})", chunk
            )
        }

    def identities(self) -> Identities:
        """Return every log's key, size and modification time, in key order."""
        # Three strings made in SQLite (its index holds them in key order): a row apiece cost
        # 0.2-0.4 s at 100,000 logs. One scan makes all three, so they line up.
        keys, sizes, times = self.db.execute(
            "SELECT group_concat(key, char(0)), group_concat(size), group_concat(mtime_ns) "
            "FROM (SELECT key, size, mtime_ns FROM log INDEXED BY log_identity ORDER BY key)"
        ).fetchone()
        if keys is None:
            return Identities([], "", "")
        return Identities(keys.split("\0"), sizes, times)  # no key holds a NUL

    def unfinished(self) -> dict[str, tuple[int, int]]:
        """Return the size and modification time of every log not read as a completed job."""
        # By the classification index: the few logs still running, damaged, or unreadable.
        others = [str(c) for c in Classification if c is not Classification.COMPLETED]
        rows = self.db.execute(
            "SELECT key, size, mtime_ns FROM log INDEXED BY log_class "
            f"WHERE classification IN ({_marks(others)})",
            others,
        )
        return {key: (size, mtime_ns) for key, size, mtime_ns in rows}

    def note_digests(self) -> dict[str, str]:
        """Return the digest of the note each published job was rendered with, if it had one."""
        rows = self.db.execute(
            "SELECT job_id, note_sha256 FROM log INDEXED BY log_noted "
            "WHERE published AND note_sha256 <> ''"
        )
        return dict(rows.fetchall())

    def published_ids(self, job_ids: Sequence[str]) -> set[str]:
        """Return which of ``job_ids`` are published."""
        return {job_id for job_id, _, _ in self._published(job_ids)}

    def published_keys(self, job_ids: Sequence[str]) -> set[str]:
        """Return the keys of the published logs of ``job_ids``."""
        return {key for _, key, _ in self._published(job_ids)}

    def published_roots(self, job_ids: Sequence[str]) -> set[str]:
        """Return the job directories the published logs of ``job_ids`` hold."""
        rows = self._published(job_ids)
        return {root for *_, roots in rows if roots for root in roots.split("\n")}

    def _published(self, job_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]:
        """Yield (job id, key, roots) of the published logs of ``job_ids``."""
        for chunk in _chunks(sorted(job_ids)):
            yield from self.db.execute(
                "SELECT job_id, key, roots FROM log INDEXED BY log_job "
                f"WHERE published AND job_id IN ({_marks(chunk)})",
                chunk,
            )

    def chosen(self) -> Chosen | None:
        """Return what the last build's selection decided (None when not recorded)."""
        row = self.db.execute("SELECT value FROM meta WHERE name = 'chosen'").fetchone()
        return _decode_chosen(row[0]) if row else None

    def set_chosen(self, chosen: Chosen) -> None:
        """Record what this build's selection decided (the site's size is measured anew)."""
        self._meta({"chosen": _json(chosen).decode()})
        self.db.execute("DELETE FROM meta WHERE name = 'site_bytes'")

    def set_listing(self, chosen: Chosen, listing: str) -> None:
        """Record the listing the last selection also holds for (its site is as built)."""
        self.begin()
        self._meta({"chosen": _json(msgspec.structs.replace(chosen, listing=listing)).decode()})
        self.commit()

    def site_bytes_as_built(self, root: Path) -> int:
        """Return the site's bytes as the last build measured them, or measure them now."""
        # A no-op build reports the size: stat-ing 7,000 site-wide files cost it 0.04 s.
        row = self.db.execute("SELECT value FROM meta WHERE name = 'site_bytes'").fetchone()
        return int(row[0]) if row is not None else self.site_bytes(root)

    def record_site_bytes(self, root: Path) -> int:
        """Measure the site's bytes and record them with its selection (set_chosen clears it).

        Called in the build's transaction: a write of its own costs a commit (fsyncs).
        """
        size = self.site_bytes(root)
        self._meta({"site_bytes": str(size)})
        return size

    def set_context(self, key: str, outcome: LogOutcome) -> None:
        """Record a log's job page spliced with a new run context: its digest and bytes."""
        # Two columns and the outcome blob: recording the whole log again (summary, executors,
        # failures) cost a full build 0.7 ms a recurring run, in the one main process.
        self.db.execute(
            "UPDATE log SET context_sha256 = ?, bytes = ? WHERE key = ?",
            (outcome.context_sha256, outcome.bytes, key),
        )
        blob = _encode(msgspec.structs.replace(outcome, summary=None))
        self.db.execute("UPDATE blob SET outcome = ? WHERE key = ?", (blob, key))

    def put(
        self,
        key: str,
        size: int,
        mtime_ns: int,
        outcome: LogOutcome,
        published: bool,
        known: bool = True,
    ) -> None:
        """Record one log as built now (replacing what was known of it, if ``known``)."""
        if known:
            self.forget([key])
        # Only a build that renders records logs: a no-op build imports none of these.
        from sitegen.diagnose.failures import failure_rows
        from sitegen.diagnose.insights import ranked
        from sitegen.diagnose.recurring import failed, succeeded
        from sitegen.render.api import list_entry

        summary = outcome.summary
        blob = _encode(msgspec.structs.replace(outcome, summary=None))
        executors: dict[str, ExecutorStats] = summary.executors if summary else {}
        findings = summary.findings if summary else []
        # Insights ranks by these columns (State.ranked), as it ranks summaries.
        figures = ranked(summary) if summary else None
        self.db.execute(
            "INSERT INTO log VALUES (" + ",".join("?" * 27) + ")",
            (
                key,
                size,
                mtime_ns,
                outcome.sha256,
                outcome.note_sha256,
                outcome.context_sha256,
                int(published),
                str(outcome.classification),
                int(bool(outcome.problems) or outcome.running is not None),
                summary.job_id if summary else None,
                summary.job_name if summary else None,
                summary.start_time if summary else 0,
                summary.start_time // DAY_MS if summary else 0,
                summary.end_time if summary else 0,
                summary.completed_at if summary else 0,
                summary.status if summary else None,
                int(summary is not None and failed(summary)),
                int(summary is not None and succeeded(summary)),
                figures.findings if figures else 0,
                figures.worst_rank if figures else -1,
                summary.tasks if summary else 0,
                summary.failed_tasks if summary else 0,
                "\n".join(outcome.roots),
                outcome.files,
                outcome.bytes,
                (summary.raw_log_bytes or 0) if summary else 0,
                list_entry(summary) if summary else None,
            ),
        )
        self.db.execute(
            "INSERT INTO blob VALUES (?,?,?)", (key, _encode(summary) if summary else None, blob)
        )
        if summary is None:
            return
        failure = [(key, *row, int(published)) for row in failure_rows(summary)]
        if failure:
            self.db.executemany(
                "INSERT INTO failure (key, job_id, job_name, start_time, pattern, example, "
                "failed_job, tasks, published) VALUES (?,?,?,?,?,?,?,?,?)",
                failure,
            )
            self._failures_changed()
        named = {f.executor_id for f in findings if f.executor_id is not None}
        self.db.executemany(
            "INSERT INTO flag VALUES (?,?,?,?,?)",
            [(key, summary.job_id, summary.start_time, e, int(published)) for e in sorted(named)],
        )
        if summary is not None and executors:
            job_id, start = summary.job_id, summary.start_time
            self.db.executemany(
                "INSERT INTO executor VALUES (?,?,?,?,?,?,?,?)",
                [
                    (key, e, job_id, start, int(published), s.tasks, s.failed, s.busy_ms)
                    for e, s in executors.items()
                ],
            )

    def forget(self, keys: Iterable[str]) -> None:
        """Remove logs that are gone (or about to be recorded afresh)."""
        rows = [(k,) for k in keys]
        self.db.executemany("DELETE FROM log WHERE key = ?", rows)
        for table in ("blob", "executor", "failure", "flag"):
            cursor = self.db.executemany(f"DELETE FROM {table} WHERE key = ?", rows)
            if table == "failure" and cursor.rowcount > 0:
                self._failures_changed()

    def set_published(self, changes: Iterable[tuple[str, bool]]) -> None:
        """Record which reused logs are on the site now."""
        rows = [(int(p), k) for k, p in changes]
        for table in ("log", "executor", "failure", "flag"):
            cursor = self.db.executemany(f"UPDATE {table} SET published = ? WHERE key = ?", rows)
            if table == "failure" and cursor.rowcount > 0:
                self._failures_changed()

    def touch(self, times: Iterable[tuple[str, int]]) -> None:
        """Record new modification times of logs whose bytes did not change."""
        self.db.executemany("UPDATE log SET mtime_ns = ? WHERE key = ?", [(t, k) for k, t in times])

    def outcome(self, key: str) -> LogOutcome:
        """Return one log's whole outcome, summary included."""
        outcome, summary = self.page_inputs(key)
        if summary is not None:
            outcome.summary = decode_summary(summary)
        return outcome

    def page_inputs(self, key: str) -> tuple[LogOutcome, bytes | None]:
        """Return one log's outcome (no summary) and its summary as stored, still encoded."""
        blob, summary = self.db.execute(
            "SELECT outcome, summary FROM blob WHERE key = ?", (key,)
        ).fetchone()
        return _decode_outcome(blob), summary

    def flagged(self) -> Iterator[LogOutcome]:
        """Yield the outcomes with problems or a running job, in log order."""
        query = "SELECT outcome FROM log JOIN blob USING (key) WHERE flagged ORDER BY key"
        for (blob,) in self.db.execute(query):
            yield _decode_outcome(blob)

    def classifications(self) -> dict[str, int]:
        """Count the logs by classification."""
        rows = self.db.execute("SELECT classification, count(*) FROM log GROUP BY classification")
        return dict(rows.fetchall())

    # --- published jobs ---------------------------------------------------------------

    def newest(self, limit: int | None = None) -> Iterator[JobSummary]:
        """Yield the published jobs newest first (start time, then id), decoding each."""
        query = (
            # published = 1, not published: only an equality lets the index give the order.
            "SELECT summary FROM log INDEXED BY log_newest JOIN blob USING (key) "
            "WHERE published = 1 ORDER BY start_time DESC, job_id"
        )
        rows = self.db.execute(query + (f" LIMIT {int(limit)}" if limit is not None else ""))
        for (blob,) in rows:
            yield decode_summary(blob)

    def summaries(self, job_ids: Sequence[str]) -> dict[str, JobSummary]:
        """Return the published summaries of the given jobs."""
        found: dict[str, JobSummary] = {}
        for chunk in _chunks(job_ids):
            rows = self.db.execute(
                f"SELECT job_id, summary FROM log JOIN blob USING (key) "
                f"WHERE published AND job_id IN ({_marks(chunk)})",
                chunk,
            )
            found.update((job_id, decode_summary(blob)) for job_id, blob in rows)
        return found

    def jobs_json(self) -> Iterator[bytes]:
        """Yield ``/api/jobs`` in pieces: the stored elements, newest first, as one array."""
        query = "SELECT listed FROM log WHERE published ORDER BY start_time DESC, job_id"
        return _json_array(self.db.execute(query))

    def totals(self) -> tuple[dict[str, int], int, int]:
        """Return published jobs by status, and their task attempts and failed ones."""
        by_status = dict(
            self.db.execute(
                "SELECT status, count(*) FROM log INDEXED BY log_totals WHERE published "
                "GROUP BY status"
            ).fetchall()
        )
        tasks, failed = self.db.execute(
            "SELECT coalesce(sum(tasks), 0), coalesce(sum(failed_tasks), 0) FROM log "
            "WHERE published"
        ).fetchone()
        return by_status, tasks, failed

    def executors(self) -> list[tuple[str, int, int, int, int]]:
        """Return per executor ``(id, tasks, failed, busy_ms, jobs)`` over the published jobs."""
        rows = self.db.execute(
            "SELECT executor_id, tasks, failed, busy_ms, jobs FROM executor_total "
            "WHERE jobs > 0 ORDER BY executor_id"
        )
        return rows.fetchall()

    def executor_jobs(self, executor_id: str, keep: int) -> list[tuple[str, int, int, int]]:
        """Return an executor's newest ``keep`` jobs: ``(job_id, tasks, failed, busy_ms)``."""
        rows = self.db.execute(
            # The planner would take the totals' index and sort every job of the executor.
            "SELECT job_id, tasks, failed, busy_ms FROM executor INDEXED BY executor_newest "
            "WHERE executor_id = ? AND published = 1 ORDER BY start_time DESC, job_id LIMIT ?",
            (executor_id, keep),
        )
        return rows.fetchall()

    # --- trends across jobs ------------------------------------------------------------

    def published_names(self) -> list[str]:
        """Return the names of the published jobs (the empty name aside), sorted."""
        rows = self.db.execute(
            "SELECT DISTINCT job_name FROM log WHERE published AND job_name <> '' ORDER BY job_name"
        )
        return [name for (name,) in rows]

    def runs(self, name: str) -> list[tuple[Run, str, str]]:
        """Return the published runs of a name, oldest first, with their log key and context."""
        from sitegen.diagnose.recurring import Run

        rows = self.db.execute(
            f"SELECT {_RUN}, key, context_sha256 FROM log "
            # job_name <> '' as the index's condition says: else SQLite cannot use it.
            "WHERE published AND job_name <> '' AND job_name = ? ORDER BY start_time, job_id",
            (name,),
        )
        return [
            (Run(j, n, s, e, st or "", bool(f), bool(ok), src), key, context)
            for j, n, s, e, st, f, ok, src, key, context in rows
        ]

    def name_trends(self, names: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """Yield job names' stored trend figures (default: all), most runs first, then by name."""
        if names is None:
            yield from self.db.execute("SELECT name, data FROM name_trend ORDER BY runs DESC, name")
            return
        for name in sorted(set(names)):
            yield from self.db.execute("SELECT name, data FROM name_trend WHERE name = ?", (name,))

    def set_name_trend(self, name: str, runs: int, data: bytes | None) -> None:
        """Record a job name's trend figures (None: the name has no published run now)."""
        self.db.execute("DELETE FROM name_trend WHERE name = ?", (name,))
        if data is not None:
            self.db.execute("INSERT INTO name_trend VALUES (?, ?, ?)", (name, runs, data))

    def _failures_changed(self) -> None:
        """Count one more change of the failure rows (in the build's transaction)."""
        self.db.execute(
            "INSERT INTO meta VALUES ('failure_version', '1') ON CONFLICT (name) "
            "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    def failure_version(self) -> int:
        """Return what changes whenever a published job's failure rows come or go."""
        # A counter the writers of the failure rows move (put, forget, set_published): summing
        # the 160,000 rows of 100,000 jobs instead took every incremental build 0.3 s.
        row = self.db.execute("SELECT value FROM meta WHERE name = 'failure_version'").fetchone()
        return int(row[0]) if row is not None else 0

    def failure_rows(self) -> Iterator[FailureRow]:
        """Yield the published jobs' failure rows, oldest job first, each job's in order."""
        from sitegen.diagnose.failures import FailureRow

        rows = self.db.execute(
            "SELECT job_id, job_name, start_time, pattern, example, failed_job, tasks FROM failure "
            "WHERE published ORDER BY start_time, job_id, id"
        )
        make = FailureRow._make
        for row in rows:
            yield make(row)

    def worst(self, limit: int) -> list[tuple[str, str]]:
        """Return ``(job_id, digest)`` of the published jobs with the worst own findings."""
        rows = self.db.execute(
            "SELECT job_id, sha256 || key FROM log WHERE published AND findings > 0 "
            "ORDER BY worst_rank DESC, findings DESC, start_time DESC, job_id DESC LIMIT ?",
            (limit,),
        )
        return rows.fetchall()

    def ranked(self, job_ids: Sequence[str]) -> dict[str, tuple[Ranked, str]]:
        """Return the figures Insights ranks the published jobs of ``job_ids`` by, and digests."""
        from sitegen.diagnose.insights import Ranked

        found = {}
        for chunk in _chunks(sorted(job_ids)):
            rows = self.db.execute(
                "SELECT job_id, worst_rank, findings, start_time, sha256 || key "
                f"FROM log INDEXED BY log_job WHERE published AND job_id IN ({_marks(chunk)})",
                chunk,
            )
            for job_id, rank, count, start, digest in rows:
                found[job_id] = (Ranked(job_id, rank, count, start), digest)
        return found

    def flagged_executors(self, min_jobs: int) -> list[tuple[str, int]]:
        """Return executors that findings name in at least ``min_jobs`` published jobs."""
        rows = self.db.execute(
            "SELECT executor_id, count(*) FROM flag WHERE published GROUP BY executor_id "
            "HAVING count(*) >= ? ORDER BY count(*) DESC, executor_id",
            (min_jobs,),
        )
        return rows.fetchall()

    def flagged_jobs(self, executor_id: str, limit: int) -> list[tuple[str, str]]:
        """Return ``(job_id, digest)`` of an executor's newest flagged published jobs."""
        rows = self.db.execute(
            "SELECT flag.job_id, log.sha256 || log.key FROM flag JOIN log USING (key) "
            "WHERE flag.published = 1 AND executor_id = ? "
            "ORDER BY flag.start_time DESC, flag.job_id DESC LIMIT ?",
            (executor_id, limit),
        )
        return rows.fetchall()

    # --- what the site holds ------------------------------------------------------------

    def site_bytes(self, root: Path) -> int:
        """Return the bytes of the site at ``root``: its published jobs' and site-wide files."""
        (jobs,) = self.db.execute(
            "SELECT coalesce(sum(bytes), 0) FROM log WHERE published"
        ).fetchone()
        site = 0
        for path in self.site_files():
            try:
                site += os.stat(f"{root}/{path}").st_size
            except OSError:  # listed but gone: a site being updated; count what is there
                continue
        return int(jobs) + site

    def site_files(self) -> set[str]:
        """Return the site-wide files (not job directories) the site holds."""
        return {path for (path,) in self.db.execute("SELECT path FROM site_file")}

    def set_site_files(self, paths: set[str]) -> None:
        """Record the site-wide files the site holds now (the rows that changed)."""
        had = self.site_files()
        self.db.executemany("DELETE FROM site_file WHERE path = ?", [(p,) for p in had - paths])
        self.db.executemany("INSERT INTO site_file VALUES (?)", [(p,) for p in paths - had])

    def published_count(self) -> int:
        """Return how many jobs are published."""
        (count,) = self.db.execute("SELECT count(*) FROM log WHERE published").fetchone()
        return int(count)

    def published_days(self) -> list[int]:
        """Return the days with published jobs, newest first."""
        rows = self.db.execute("SELECT DISTINCT day FROM log WHERE published ORDER BY day DESC")
        return [day for (day,) in rows]

    def listed_day(self, day: int) -> list[tuple[str, int, str]]:
        """Return ``(job_id, start_time, digest)`` of the day's published jobs, newest first."""
        rows = self.db.execute(
            "SELECT job_id, start_time, sha256 || key FROM log WHERE published AND day = ? "
            "ORDER BY start_time DESC, job_id",
            (day,),
        )
        return rows.fetchall()

    def nth_newest(self, offset: int) -> tuple[str, int] | None:
        """Return the id and day of the published job ``offset`` places from the newest."""
        row = self.db.execute(
            "SELECT job_id, day FROM log INDEXED BY log_newest WHERE published = 1 "
            "ORDER BY start_time DESC, job_id LIMIT 1 OFFSET ?",
            (offset,),
        ).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def list_days(self) -> dict[int, bytes]:
        """Return each listed day's stored pages and parts."""
        return dict(self.db.execute("SELECT day, data FROM list_day").fetchall())

    def set_list_day(self, day: int, data: bytes | None, jobs_changed: bool = True) -> None:
        """Record a day's pages and parts (None: the day lists no job now).

        ``jobs_changed`` False: the same jobs as recorded, so its ``/api/jobs`` elements stay.
        """
        if data is not None and not jobs_changed:
            self.db.execute("UPDATE list_day SET data = ? WHERE day = ?", (data, day))
            return
        self.db.execute("DELETE FROM list_day WHERE day = ?", (day,))
        if data is not None:
            rows = self.db.execute(
                "SELECT listed FROM log WHERE published AND day = ? "
                "ORDER BY start_time DESC, job_id",
                (day,),
            )
            api = b",".join(blob for (blob,) in rows)
            self.db.execute("INSERT INTO list_day VALUES (?, ?, ?)", (day, data, api))

    def jobs_json_by_day(self) -> Iterator[bytes]:
        """Yield ``/api/jobs`` from the days' stored elements (the site has an archive)."""
        return _json_array(self.db.execute("SELECT api FROM list_day ORDER BY day DESC"))

    def list_pages(self) -> dict[str, str]:
        """Return each listing page's name and the signature of what it was rendered from."""
        return dict(self.db.execute("SELECT name, signature FROM list_page").fetchall())

    def set_list_pages(self, pages: dict[str, str], before: Mapping[str, str]) -> None:
        """Record the listing pages and their signatures (``before``: as recorded till now)."""
        gone = [(name,) for name in before.keys() - pages.keys()]
        self.db.executemany("DELETE FROM list_page WHERE name = ?", gone)
        changed = [(n, s) for n, s in pages.items() if before.get(n) != s]
        self.db.executemany("INSERT OR REPLACE INTO list_page VALUES (?, ?)", changed)


def _json_array(rows: Iterable[tuple[bytes]]) -> Iterator[bytes]:
    """Yield a JSON array of the rows' encoded elements, a row at a time."""
    # Streamed to the file, never joined: at 100,000 jobs the array is 27 MB, and the list of
    # its pieces and the joined copy were the largest allocation of a full build's reduce.
    yield b"["
    for n, (element,) in enumerate(rows):
        yield b"," + element if n else element
    yield b"]"


def open_published(output: Path) -> State | None:
    """Open the published site's state read-only, or None when there is no usable one."""
    return _open(output / MANIFEST_NAME, readonly=True)


class _BuiltLog(msgspec.Struct):
    """Of a legacy JSON manifest's log entry, only whether it published a job."""

    published: bool = False


class _BuiltSite(msgspec.Struct):
    """Of a legacy JSON manifest, only which logs the site was built from."""

    logs: dict[str, _BuiltLog] = msgspec.field(default_factory=dict)


def built_from(output: Path) -> dict[str, bool] | None:
    """Return the logs the site at ``output`` was built from (key: published?); None: no site.

    For guards that compare a build's inputs with the site it would replace: one read of a
    read-only connection, no blob decoded. A site of an older sitegen (a JSON manifest) is
    read loosely: it still names its logs.
    """
    state = _open(output / MANIFEST_NAME, readonly=True, any_version=True)
    if state is not None:
        try:
            rows = state.db.execute("SELECT key, published FROM log").fetchall()
        except DAMAGE:
            return None
        finally:
            state.close()
        return {key: bool(published) for key, published in rows}
    try:
        data = (output / LEGACY_MANIFEST_NAME).read_bytes()
        site = msgspec.json.decode(data, type=_BuiltSite)
    except (OSError, msgspec.DecodeError):
        return None
    return {key: entry.published for key, entry in site.logs.items()}


def log_digest(path: Path, held: bytes | None = None) -> str:
    """Return a log's SHA-256, from its bytes if held; empty when it cannot be read."""
    if held is not None:
        return hashlib.sha256(held).hexdigest()
    try:
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:  # a dangling symlink, or a log removed since it was listed: the reader
        return ""  # says why, and a log that can be read again no longer matches ""


def _hash_tree(h: Any, root: Path) -> None:
    """Feed every file name and content below ``root`` into ``h``, in a stable order."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")


def fingerprint(
    options: DataclassInstance, template_dirs: list[Path], ignore: frozenset[str]
) -> str:
    """Hash what every page depends on: sitegen version, templates, output-shaping options."""
    h = hashlib.sha256(__version__.encode())
    for directory in template_dirs:
        _hash_tree(h, directory)
    for f in fields(options):
        if f.name in ignore:
            continue
        value = getattr(options, f.name)
        h.update(f"{f.name}={value!r}\0".encode())
        if isinstance(value, Path) and value.is_dir():
            _hash_tree(h, value)
    return h.hexdigest()


def _open(path: Path, readonly: bool = False, any_version: bool = False) -> State | None:
    """Open a state file if it is one of this layout and undamaged; else None.

    ``any_version`` accepts a state of another layout or sitegen version too.
    """
    if not path.is_file():
        return None
    try:
        uri = path.resolve().as_uri() + ("?mode=ro" if readonly else "?mode=rw")
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        # Damage to the file's header or schema fails here; damage further in fails the query
        # that reads it, and the pipeline then builds afresh (DAMAGE). Checking every page
        # up front (quick_check) would read the whole file on every build: 0.7 s at 100,000.
        meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
        ours = meta.get("format") == str(FORMAT) and meta.get("sitegen") == __version__
        if not (ours or any_version):
            db.close()
            return None
    except sqlite3.Error:
        db.close()
        return None
    state = State(path, db)
    state.fingerprint = meta.get("fingerprint", "")
    return state


def load(output: Path, fingerprint: str) -> State | None:
    """Return the published site's state if it was built with ``fingerprint``, else None."""
    state = _open(output / MANIFEST_NAME)
    if state is None:
        return None
    if state.fingerprint != fingerprint:
        state.close()
        return None
    return state
