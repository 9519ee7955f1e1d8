"""The state's tables, indexes and triggers, and how its blobs are encoded."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from sitegen.builder.state.records import Chosen, LogOutcome
from sitegen.model import JobSummary

# What reading a damaged state raises: SQLite's errors, and a blob that does not decode.
DAMAGE = (sqlite3.DatabaseError, msgspec.DecodeError)

# The jobs list's widest span (sitegen.render.listing.SPANS): a UTC day.
DAY_MS = 86_400_000
# What an INTEGER holds: a span of the jobs list may reach past it, a start time may not.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def within(begin: int, end: int) -> tuple[int, int, int]:
    """Return a span ``[begin, end)`` as SQL takes it: its day, first and last millisecond."""
    return begin // DAY_MS, max(begin, INT64_MIN), min(end - 1, INT64_MAX)


# The state's own layout: a state of another layout (or none) means a full build.
# 12: end_time is when a job ended (a cancelled job's completed_at, its index saying 0), a
# finished log without JobEnd ended unrecorded, and the logs renamed from .running are kept.
# 13: each job's rows of the SQL tables, and the data files they are in (builder/datafiles).
# 14: each log's rows counting (diagnose/counting), Invalid jobs as failed runs, stages a
# replan dropped, and stragglers judged anew: every job of an older site is read again.
# 15: each job's evidence of its executors' speed, pooled by hour (the fleet verdict), and
# each job's scheduler with their totals.
# 16: each summary's config and its stages' task median, slowest task and failed tasks, for
# the compare pages.
# 17: each job's failed attempts by executor and error pattern (the Executors page), its
# stages' failed attempts (not tasks) for the compare pages, and each scheduler's list by day.
# 18: the executor rows a build records are added to executor_total and executor_hour by
# one upsert per executor (and hour) a chunk of logs (Writes.put_executors), not a trigger a row.
FORMAT = 18

# The executor rows' sums of evidence are kept in millionths, as integers.
EVIDENCE_SCALE = 1_000_000

# Summaries and outcomes are blobs in MessagePack: compact, and decoded only when needed.
encode = msgspec.msgpack.Encoder().encode

decode_outcome = msgspec.msgpack.Decoder(LogOutcome).decode

# Public: a worker is handed a summary as the state stores it (contexts/foresight.py).
decode_summary = msgspec.msgpack.Decoder(JobSummary).decode

encode_json = msgspec.json.Encoder().encode

decode_chosen = msgspec.json.Decoder(Chosen).decode


SCHEMA = """
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
    -- When the job ended: its index's end_time, or completed_at when that is 0 (a
    -- cancelled job: model.ended_at). Retention and trends go by it; /api/jobs keeps the 0.
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
    listed BLOB,
    -- The rows the job read (its scan stages): a regression on more data says so.
    input_rows INTEGER,
    -- What its costliest own finding cost it (ms): Insights ranks by it after severity.
    cost_ms INTEGER NOT NULL DEFAULT 0,
    -- How its log counts rows (diagnose/counting.py): a regression's rows excuse and the
    -- runs' comparison hold only within one counting.
    counting TEXT NOT NULL DEFAULT 'unknown',
    -- Which scheduler ran it (JobSummary.scheduler): the jobs list's filter and fleet.json.
    scheduler TEXT NOT NULL DEFAULT ''
);
CREATE INDEX log_newest ON log(published, start_time DESC, job_id);
CREATE INDEX log_job ON log(job_id) WHERE published;
CREATE INDEX log_day ON log(day, start_time DESC, job_id) WHERE published;
-- Cover the published jobs' bytes every build reports (jobs by status and task attempts are
-- rows of their own, status_total below).
CREATE INDEX log_bytes ON log(published, bytes);
CREATE INDEX log_class ON log(classification);
CREATE INDEX log_noted ON log(job_id, note_sha256) WHERE published AND note_sha256 <> '';
CREATE INDEX log_identity ON log(key, size, mtime_ns);
-- Selection by query (builder/select/selection.py): the logs that claim each job id, latest
-- completion first; every completed log in the API's order, newest first.
CREATE INDEX log_claim ON log(job_id, completed_at DESC, key) WHERE job_id IS NOT NULL;
CREATE INDEX log_order ON log(start_time DESC, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX log_flagged ON log(key) WHERE flagged;
CREATE INDEX log_scheduler ON log(scheduler, start_time DESC, job_id) WHERE published;
-- A scheduler's last end is a lookup, not a scan of its jobs (fleet.json's time range).
CREATE INDEX log_scheduler_end ON log(scheduler, end_time) WHERE published;
CREATE INDEX log_name ON log(job_name, start_time, job_id) WHERE published AND job_name <> '';
CREATE INDEX log_worst ON log(
    worst_rank DESC, cost_ms DESC, findings DESC, start_time DESC, job_id DESC
)
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
    busy_ms INTEGER NOT NULL,
    -- Its evidence for the fleet verdict (model.ExecutorEvidence, diagnose/fleet.py), and
    -- the hour its job started in (ms), which executor_hour pools it by.
    hour INTEGER NOT NULL DEFAULT 0,
    compared INTEGER NOT NULL DEFAULT 0,
    -- In millionths (EVIDENCE_SCALE): integer sums are exact whatever the order of changes.
    z_sum INTEGER NOT NULL DEFAULT 0,
    log_sum INTEGER NOT NULL DEFAULT 0,
    excess_ms INTEGER NOT NULL DEFAULT 0,
    own_failed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX executor_key ON executor(key);
CREATE INDEX executor_newest ON executor(executor_id, published, start_time DESC, job_id);
-- The executors page's totals over the published jobs, kept as rows come (Writes.put_executors:
-- one upsert per executor a chunk of logs; a trigger a row cost a full build of 2,000 small
-- jobs 30 ms), go and flip (triggers): summing 300,000 rows at 100,000 jobs cost every
-- build 0.3 s.
CREATE TABLE executor_total(
    executor_id TEXT PRIMARY KEY,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    busy_ms INTEGER NOT NULL,
    jobs INTEGER NOT NULL
);
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
-- Each executor's evidence over the published jobs by the hour they started in, kept as
-- rows come (Writes.put_executors, as executor_total), go and flip (triggers): the fleet verdict
-- is judged from these sums alone.
CREATE TABLE executor_hour(
    executor_id TEXT NOT NULL,
    hour INTEGER NOT NULL,
    jobs INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    compared INTEGER NOT NULL,
    z_sum INTEGER NOT NULL,
    log_sum INTEGER NOT NULL,
    excess_ms INTEGER NOT NULL,
    own_failed INTEGER NOT NULL,
    failing_jobs INTEGER NOT NULL,
    PRIMARY KEY (executor_id, hour)
);
CREATE TRIGGER executor_hour_out AFTER DELETE ON executor WHEN OLD.published BEGIN
    UPDATE executor_hour SET jobs = jobs - 1, tasks = tasks - OLD.tasks,
        failed = failed - OLD.failed, compared = compared - OLD.compared,
        z_sum = z_sum - OLD.z_sum, log_sum = log_sum - OLD.log_sum,
        excess_ms = excess_ms - OLD.excess_ms, own_failed = own_failed - OLD.own_failed,
        failing_jobs = failing_jobs - (OLD.own_failed > 0)
    WHERE executor_id = OLD.executor_id AND hour = OLD.hour;
    DELETE FROM executor_hour WHERE executor_id = OLD.executor_id AND hour = OLD.hour
        AND jobs = 0;
END;
CREATE TRIGGER executor_hour_flip AFTER UPDATE OF published ON executor
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO executor_hour VALUES (NEW.executor_id, NEW.hour, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        ON CONFLICT DO NOTHING;
    UPDATE executor_hour SET
        jobs = jobs + iif(NEW.published, 1, -1),
        tasks = tasks + iif(NEW.published, NEW.tasks, -NEW.tasks),
        failed = failed + iif(NEW.published, NEW.failed, -NEW.failed),
        compared = compared + iif(NEW.published, NEW.compared, -NEW.compared),
        z_sum = z_sum + iif(NEW.published, NEW.z_sum, -NEW.z_sum),
        log_sum = log_sum + iif(NEW.published, NEW.log_sum, -NEW.log_sum),
        excess_ms = excess_ms + iif(NEW.published, NEW.excess_ms, -NEW.excess_ms),
        own_failed = own_failed + iif(NEW.published, NEW.own_failed, -NEW.own_failed),
        failing_jobs = failing_jobs + iif(NEW.published, 1, -1) * (NEW.own_failed > 0)
    WHERE executor_id = NEW.executor_id AND hour = NEW.hour;
    DELETE FROM executor_hour WHERE executor_id = NEW.executor_id AND hour = NEW.hour
        AND jobs = 0;
END;
-- The published jobs by status, with their task attempts and failed ones (the front page's
-- counts and /api/jobs' totals), kept by triggers as rows come, go and flip: counting them
-- cost every build 0.03 s at 100,000 jobs.
CREATE TABLE status_total(
    status TEXT PRIMARY KEY,
    jobs INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    failed INTEGER NOT NULL
);
CREATE TRIGGER status_in AFTER INSERT ON log WHEN NEW.published BEGIN
    INSERT INTO status_total VALUES (NEW.status, 1, NEW.tasks, NEW.failed_tasks)
    ON CONFLICT (status) DO UPDATE SET jobs = jobs + 1, tasks = tasks + excluded.tasks,
        failed = failed + excluded.failed;
END;
CREATE TRIGGER status_out AFTER DELETE ON log WHEN OLD.published BEGIN
    UPDATE status_total SET jobs = jobs - 1, tasks = tasks - OLD.tasks,
        failed = failed - OLD.failed_tasks
    WHERE status = OLD.status;
END;
CREATE TRIGGER status_flip AFTER UPDATE OF published ON log
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO status_total VALUES (NEW.status, 0, 0, 0) ON CONFLICT DO NOTHING;
    UPDATE status_total SET
        jobs = jobs + iif(NEW.published, 1, -1),
        tasks = tasks + iif(NEW.published, NEW.tasks, -NEW.tasks),
        failed = failed + iif(NEW.published, NEW.failed_tasks, -NEW.failed_tasks)
    WHERE status = NEW.status;
END;
-- The published jobs by scheduler (fleet.json, the jobs list's filter), kept by triggers as
-- rows come, go and flip; ``version`` counts the changes, so that a build rewrites only the
-- pages of the schedulers whose jobs changed (builder/reduce/schedulers.py).
CREATE TABLE scheduler_total(
    scheduler TEXT PRIMARY KEY,
    jobs INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    version INTEGER NOT NULL
);
CREATE TRIGGER scheduler_in AFTER INSERT ON log WHEN NEW.published BEGIN
    INSERT INTO scheduler_total VALUES (NEW.scheduler, 1, NEW.failed, 1)
    ON CONFLICT (scheduler) DO UPDATE SET jobs = jobs + 1, failed = failed + excluded.failed,
        version = version + 1;
END;
CREATE TRIGGER scheduler_out AFTER DELETE ON log WHEN OLD.published BEGIN
    UPDATE scheduler_total SET jobs = jobs - 1, failed = failed - OLD.failed,
        version = version + 1
    WHERE scheduler = OLD.scheduler;
END;
CREATE TRIGGER scheduler_flip AFTER UPDATE OF published ON log
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO scheduler_total VALUES (NEW.scheduler, 0, 0, 0) ON CONFLICT DO NOTHING;
    UPDATE scheduler_total SET
        jobs = jobs + iif(NEW.published, 1, -1),
        failed = failed + iif(NEW.published, NEW.failed, -NEW.failed),
        version = version + 1
    WHERE scheduler = NEW.scheduler;
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
-- The executors findings name, by how many published jobs name them (Insights), likewise.
CREATE TABLE flag_total(executor_id TEXT PRIMARY KEY, jobs INTEGER NOT NULL);
CREATE TRIGGER flag_in AFTER INSERT ON flag WHEN NEW.published BEGIN
    INSERT INTO flag_total VALUES (NEW.executor_id, 1)
    ON CONFLICT (executor_id) DO UPDATE SET jobs = jobs + 1;
END;
CREATE TRIGGER flag_out AFTER DELETE ON flag WHEN OLD.published BEGIN
    UPDATE flag_total SET jobs = jobs - 1 WHERE executor_id = OLD.executor_id;
END;
CREATE TRIGGER flag_flip AFTER UPDATE OF published ON flag
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO flag_total VALUES (NEW.executor_id, 0) ON CONFLICT DO NOTHING;
    UPDATE flag_total SET jobs = jobs + iif(NEW.published, 1, -1)
    WHERE executor_id = NEW.executor_id;
END;
-- Each job's failed attempts by executor and masked error text (its few most frequent:
-- failures.EXECUTOR_PATTERNS), and their totals over the published jobs, kept by triggers:
-- the Executors page and fleet.json say what each executor's attempts failed with.
CREATE TABLE executor_error(
    key TEXT NOT NULL,
    executor_id TEXT NOT NULL,
    pattern TEXT NOT NULL,
    example TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    published INTEGER NOT NULL
);
CREATE INDEX executor_error_key ON executor_error(key);
CREATE TABLE executor_error_total(
    executor_id TEXT NOT NULL,
    pattern TEXT NOT NULL,
    example TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    jobs INTEGER NOT NULL,
    PRIMARY KEY (executor_id, pattern)
);
CREATE TRIGGER executor_error_in AFTER INSERT ON executor_error WHEN NEW.published BEGIN
    INSERT INTO executor_error_total VALUES (NEW.executor_id, NEW.pattern, NEW.example,
        NEW.attempts, 1)
    ON CONFLICT (executor_id, pattern) DO UPDATE SET attempts = attempts + excluded.attempts,
        jobs = jobs + 1;
END;
CREATE TRIGGER executor_error_out AFTER DELETE ON executor_error WHEN OLD.published BEGIN
    UPDATE executor_error_total SET attempts = attempts - OLD.attempts, jobs = jobs - 1
    WHERE executor_id = OLD.executor_id AND pattern = OLD.pattern;
    DELETE FROM executor_error_total
    WHERE executor_id = OLD.executor_id AND pattern = OLD.pattern AND jobs = 0;
END;
CREATE TRIGGER executor_error_flip AFTER UPDATE OF published ON executor_error
WHEN NEW.published <> OLD.published BEGIN
    INSERT INTO executor_error_total VALUES (NEW.executor_id, NEW.pattern, NEW.example, 0, 0)
        ON CONFLICT DO NOTHING;
    UPDATE executor_error_total SET
        attempts = attempts + iif(NEW.published, NEW.attempts, -NEW.attempts),
        jobs = jobs + iif(NEW.published, 1, -1)
    WHERE executor_id = NEW.executor_id AND pattern = NEW.pattern;
    DELETE FROM executor_error_total
    WHERE executor_id = NEW.executor_id AND pattern = NEW.pattern AND jobs = 0;
END;
CREATE TABLE site_file(path TEXT PRIMARY KEY);
-- The finished logs a build saw as <id>.eventlog.running before (Ballista #2405 renames a
-- log when its job ends): their dir names logs so (builder/plan/renaming.py). Gone with the log.
CREATE TABLE renamed(key TEXT PRIMARY KEY);
-- Per UTC day with published jobs: its listing pages and find-index parts (listing.DayListing).
CREATE TABLE list_day(day INTEGER PRIMARY KEY, data BLOB NOT NULL);
-- The same per scheduler, for its filter of the jobs list (reduce/schedulers.py).
CREATE TABLE scheduler_day(
    scheduler TEXT NOT NULL,
    day INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (scheduler, day)
);
-- Per find-index part: its jobs' elements of ``/api/jobs``, newest first, joined; the array
-- is the parts', by their newest job's start (``seq``: the numbered parts of one second, in
-- order). A new job joins its part's elements again, not its day's.
CREATE TABLE list_part(
    name TEXT PRIMARY KEY, newest INTEGER NOT NULL, seq INTEGER NOT NULL, api BLOB NOT NULL
);
CREATE INDEX list_part_order ON list_part(newest DESC, seq);
CREATE TABLE list_page(name TEXT PRIMARY KEY, signature TEXT NOT NULL);
-- Each mapped job's rows of the SQL tables (render.tables' blob; NULL: the log has no job
-- now), and the segment of data files they are in (NULL: in none). ``stale``: mapped since
-- its segment's files were written. A segment's files are rewritten when a job of it comes,
-- goes or changes: cost follows the change (builder/reduce/datafiles.py).
CREATE TABLE data_row(
    key TEXT PRIMARY KEY,
    rows BLOB,
    task_rows INTEGER NOT NULL,
    segment INTEGER,
    stale INTEGER NOT NULL
);
CREATE INDEX data_segment ON data_row(segment) WHERE segment IS NOT NULL;
-- Every data file of the site: its table, segment, rows and bytes (for data/manifest.json).
CREATE TABLE data_file(
    path TEXT PRIMARY KEY,
    tbl TEXT NOT NULL,
    segment INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);
"""

KNOWN_COLUMNS = (
    "key, size, mtime_ns, sha256, note_sha256, context_sha256, published, classification, job_id, "
    "job_name, start_time, end_time, completed_at, roots, files, bytes, raw_bytes"
)

# In the order of diagnose.recurring.Run's fields.
RUN_COLUMNS = (
    "job_id, job_name, start_time, end_time, status, failed, succeeded, sha256 || key, input_rows, "
    "counting"
)


def run_source(sha256: str, key: str) -> str:
    """Return a run's ``source`` as ``RUN_COLUMNS`` makes it: its log's digest, then its key."""
    return sha256 + key


def source_digest(source: str, key: str) -> str:
    """Return the log digest of a run's ``source`` (``run_source``'s; "": none was made)."""
    return source.removesuffix(key)


def chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    """Split ``items`` into lists SQLite takes as bound parameters (at most 500)."""
    for start in range(0, len(items), 500):
        yield items[start : start + 500]


def marks(chunk: Sequence[str]) -> str:
    """Return the ``?`` placeholders of a chunk's ``IN (…)`` list."""
    return ",".join("?" * len(chunk))


def json_array(rows: Iterable[tuple[bytes]]) -> Iterator[bytes]:
    """Yield a JSON array of the rows' encoded elements, a row at a time."""
    # Streamed to the file, never joined: at 100,000 jobs the array is 27 MB, and the list of
    # its pieces and the joined copy were the largest allocation of a full build's reduce.
    yield b"["
    for n, (element,) in enumerate(rows):
        yield b"," + element if n else element
    yield b"]"
