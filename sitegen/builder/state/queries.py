"""What the reduce asks the state: published jobs, totals, trends, failures, listings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from sitegen.builder.state.base import Base
from sitegen.builder.state.schema import (
    EVIDENCE_SCALE,
    RUN_COLUMNS,
    chunks,
    decode_summary,
    json_array,
    marks,
    within,
)
from sitegen.model import JobSummary

# Rows as SQLite gives them; the reduce makes its records of them (recurring.Run and so on).
RunRow = tuple[str, str, int, int, str, bool, bool, str, int | None, str]
FailureColumns = tuple[str, str, int, str, str, int, int]
RankColumns = tuple[str, int, int, int, int]


# The published jobs started in a span of the jobs list (within one UTC day: ``within``).
_SPAN = "FROM log INDEXED BY log_day WHERE published AND day = ? AND start_time BETWEEN ? AND ?"
_NEWEST_FIRST = "ORDER BY start_time DESC, job_id"
_SCHEDULER_SPAN = (
    "FROM log INDEXED BY log_scheduler WHERE published AND scheduler = ? "
    "AND start_time BETWEEN ? AND ?"
)


class ReduceQueries(Base):
    """The reduce's reads, by query: no step holds every job."""

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
        for chunk in chunks(job_ids):
            rows = self.db.execute(
                f"SELECT job_id, summary FROM log JOIN blob USING (key) "
                f"WHERE published AND job_id IN ({marks(chunk)})",
                chunk,
            )
            found.update((job_id, decode_summary(blob)) for job_id, blob in rows)
        return found

    def jobs_json(self) -> Iterator[bytes]:
        """Yield ``/api/jobs`` in pieces: the stored elements, newest first, as one array."""
        query = "SELECT listed FROM log WHERE published ORDER BY start_time DESC, job_id"
        return json_array(self.db.execute(query))

    def totals(self) -> tuple[dict[str, int], int, int]:
        """Return published jobs by status, and their task attempts and failed ones."""
        rows = self.db.execute(
            "SELECT status, jobs, tasks, failed FROM status_total WHERE jobs > 0 ORDER BY status"
        ).fetchall()
        by_status = {status: jobs for status, jobs, _, _ in rows}
        return by_status, sum(r[2] for r in rows), sum(r[3] for r in rows)

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

    def executor_errors(self, keep: int) -> dict[str, list[tuple[str, str, int, int]]]:
        """Return each executor's ``keep`` most frequent errors of its failed attempts.

        ``(pattern, example, attempts, jobs)`` (``failures.ExecutorError``).

        Over the published jobs, from the totals the triggers keep (a row per executor and
        masked text: masking folds ids and numbers, so they are few).
        """
        found: dict[str, list[tuple[str, str, int, int]]] = {}
        rows = self.db.execute(
            "SELECT executor_id, pattern, example, attempts, jobs FROM executor_error_total "
            "WHERE jobs > 0 ORDER BY executor_id, attempts DESC, pattern"
        )
        for executor_id, pattern, example, attempts, jobs in rows:
            kept = found.setdefault(executor_id, [])
            if len(kept) < keep:
                kept.append((pattern, example, attempts, jobs))
        return found

    def executor_cells(
        self,
    ) -> dict[str, list[tuple[int, int, int, int, int, float, float, int, int, int]]]:
        """Return each executor's evidence over the published jobs by hour, in time order.

        A row per hour: the fields of ``fleet.Cell``, its sums in their own units.
        """
        cells: dict[str, list[tuple[int, int, int, int, int, float, float, int, int, int]]] = {}
        rows = self.db.execute(
            "SELECT executor_id, hour, jobs, tasks, failed, compared, z_sum, log_sum, excess_ms, "
            "own_failed, failing_jobs FROM executor_hour WHERE jobs > 0 ORDER BY executor_id, hour"
        )
        scale = EVIDENCE_SCALE
        for executor_id, hour, jobs, tasks, failed, compared, z, log, excess, own, bad in rows:
            cells.setdefault(executor_id, []).append(
                (hour, jobs, tasks, failed, compared, z / scale, log / scale, excess, own, bad)
            )
        return cells

    def executor_seen(self, executor_id: str) -> tuple[int, int]:
        """Return the start times of an executor's first and newest published jobs."""
        # Each an end of the index: a min and max together would read every row of it.
        ends = [
            self.db.execute(
                "SELECT start_time FROM executor INDEXED BY executor_newest WHERE executor_id = ? "
                f"AND published = 1 ORDER BY start_time {order} LIMIT 1",
                (executor_id,),
            ).fetchone()
            for order in ("ASC", "DESC")
        ]
        return (ends[0][0], ends[1][0]) if ends[0] and ends[1] else (0, 0)

    def published_ids_text(self) -> str:
        """Return the ids of every published job, one a line (safe ids hold no line break)."""
        # One string from the covering index: a row apiece read every log's row, 0.5 s at
        # 100,000 jobs for a build that changed one.
        (text,) = self.db.execute(
            "SELECT group_concat(job_id, char(10)) FROM log INDEXED BY log_job WHERE published"
        ).fetchone()
        return text or ""

    def published_id_keys(self, job_ids: Sequence[str]) -> list[tuple[str, str]]:
        """Return ``(job_id, key)`` of the published jobs of ``job_ids``."""
        return [
            row
            for chunk in chunks(sorted(job_ids))
            for row in self.db.execute(
                "SELECT job_id, key FROM log INDEXED BY log_job "
                f"WHERE published AND job_id IN ({marks(chunk)})",
                chunk,
            )
        ]

    def published_names(self) -> list[str]:
        """Return the names of the published jobs (the empty name aside), sorted."""
        rows = self.db.execute(
            "SELECT DISTINCT job_name FROM log WHERE published AND job_name <> '' ORDER BY job_name"
        )
        return [name for (name,) in rows]

    def runs(self, name: str, unpeeked: bool = False) -> list[tuple[RunRow, str, str]]:
        """Return the published runs of a name, oldest first, with their log key and context.

        A run's columns are those of ``diagnose.recurring.Run``. ``unpeeked``: only those of
        logs not peeked at for this build's map (``Peeks``), which replaces them.
        """
        rows = self.db.execute(
            f"SELECT {RUN_COLUMNS}, key, context_sha256 FROM log "
            # job_name <> '' as the index's condition says: else SQLite cannot use it.
            "WHERE published AND job_name <> '' AND job_name = ? "
            + ("AND key NOT IN (SELECT key FROM temp.peek) " if unpeeked else "")
            + "ORDER BY start_time, job_id",
            (name,),
        )
        return [
            ((j, n, s, e, st or "", bool(f), bool(ok), src, rows_in, how), key, context)
            for j, n, s, e, st, f, ok, src, rows_in, how, key, context in rows
        ]

    def name_trends(self, names: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """Yield job names' stored trend figures (default: all), most runs first, then by name."""
        if names is None:
            yield from self.db.execute("SELECT name, data FROM name_trend ORDER BY runs DESC, name")
            return
        for name in sorted(set(names)):
            yield from self.db.execute("SELECT name, data FROM name_trend WHERE name = ?", (name,))

    def failure_version(self) -> int:
        """Return what changes whenever a published job's failure rows come or go."""
        # A counter the writers of the failure rows move (put, forget, set_published): summing
        # the 160,000 rows of 100,000 jobs instead took every incremental build 0.3 s.
        row = self.db.execute("SELECT value FROM meta WHERE name = 'failure_version'").fetchone()
        return int(row[0]) if row is not None else 0

    def failure_rows(self) -> Iterator[FailureColumns]:
        """Yield the published jobs' failure rows, oldest job first, each job's in order."""
        yield from self.db.execute(
            "SELECT job_id, job_name, start_time, pattern, example, failed_job, tasks FROM failure "
            "WHERE published ORDER BY start_time, job_id, id"
        )

    def worst(self, limit: int) -> list[tuple[str, str]]:
        """Return ``(job_id, digest)`` of the published jobs with the worst own findings."""
        rows = self.db.execute(
            "SELECT job_id, sha256 || key FROM log WHERE published AND findings > 0 "
            "ORDER BY worst_rank DESC, cost_ms DESC, findings DESC, start_time DESC, job_id DESC "
            "LIMIT ?",
            (limit,),
        )
        return rows.fetchall()

    def ranked(self, job_ids: Sequence[str]) -> dict[str, tuple[RankColumns, str]]:
        """Return the figures Insights ranks the published jobs of ``job_ids`` by, and digests.

        The figures are ``insights.Ranked``: ``(job_id, worst_rank, findings, start_time, cost)``.
        """
        found = {}
        for chunk in chunks(sorted(job_ids)):
            rows = self.db.execute(
                "SELECT job_id, worst_rank, findings, start_time, cost_ms, sha256 || key "
                f"FROM log INDEXED BY log_job WHERE published AND job_id IN ({marks(chunk)})",
                chunk,
            )
            for job_id, rank, count, start, cost, digest in rows:
                found[job_id] = ((job_id, rank, count, start, cost), digest)
        return found

    def flagged_executors(self, min_jobs: int) -> list[tuple[str, int]]:
        """Return executors that findings name in at least ``min_jobs`` published jobs."""
        rows = self.db.execute(
            "SELECT executor_id, jobs FROM flag_total WHERE jobs >= max(?, 1) "
            "ORDER BY jobs DESC, executor_id",
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

    def published_days(self) -> list[int]:
        """Return the days with published jobs, newest first."""
        rows = self.db.execute("SELECT DISTINCT day FROM log WHERE published ORDER BY day DESC")
        return [day for (day,) in rows]

    def schedulers(self) -> list[tuple[str, int, int, int]]:
        """Return per scheduler ``(name, jobs, failed, version)`` of the published jobs, by name.

        ``version`` changes whenever one of its published jobs comes, goes or changes.
        """
        rows = self.db.execute(
            "SELECT scheduler, jobs, failed, version FROM scheduler_total WHERE jobs > 0 "
            "ORDER BY scheduler"
        )
        return rows.fetchall()

    def scheduler_span(self, scheduler: str) -> tuple[int, int]:
        """Return when a scheduler's first published job started and its last one ended."""
        # Two lookups in two indexes: one min() or max() each lets SQLite seek, not scan.
        (first, last) = self.db.execute(
            "SELECT (SELECT min(start_time) FROM log INDEXED BY log_scheduler "
            "WHERE published AND scheduler = ?1), (SELECT max(end_time) FROM log "
            "INDEXED BY log_scheduler_end WHERE published AND scheduler = ?1)",
            (scheduler,),
        ).fetchone()
        return int(first or 0), int(last or 0)

    def schedulers_of(self, job_ids: Sequence[str]) -> dict[str, str]:
        """Return the scheduler of each of these published jobs."""
        found: dict[str, str] = {}
        for chunk in chunks(job_ids):
            rows = self.db.execute(
                f"SELECT job_id, scheduler FROM log INDEXED BY log_job "
                f"WHERE published AND job_id IN ({marks(chunk)})",
                chunk,
            )
            found.update(rows.fetchall())
        return found

    def scheduler_listed(self, scheduler: str, begin: int, end: int) -> list[tuple[str, int, str]]:
        """Return ``(job_id, start_time, digest)`` of a scheduler's jobs started in a span.

        Newest first; the span lies within one UTC day (listing.SPANS).
        """
        _, first, last = within(begin, end)
        rows = self.db.execute(
            f"SELECT job_id, start_time, sha256 || key {_SCHEDULER_SPAN} {_NEWEST_FIRST}",
            (scheduler, first, last),
        )
        return rows.fetchall()

    def scheduler_count(self, scheduler: str, begin: int, end: int) -> int:
        """Return how many of a scheduler's published jobs started in a span."""
        _, first, last = within(begin, end)
        query = f"SELECT count(*) {_SCHEDULER_SPAN}"
        (count,) = self.db.execute(query, (scheduler, first, last)).fetchone()
        return int(count)

    def scheduler_newest(self, scheduler: str, limit: int) -> list[tuple[str, int, str]]:
        """Return ``(job_id, start_time, digest)`` of a scheduler's ``limit`` newest jobs."""
        rows = self.db.execute(
            "SELECT job_id, start_time, sha256 || key FROM log INDEXED BY log_scheduler "
            f"WHERE published AND scheduler = ? {_NEWEST_FIRST} LIMIT ?",
            (scheduler, limit),
        )
        return rows.fetchall()

    def scheduler_published_days(self, scheduler: str) -> list[int]:
        """Return the days with a scheduler's published jobs, newest first."""
        rows = self.db.execute(
            "SELECT DISTINCT day FROM log INDEXED BY log_scheduler "
            "WHERE published AND scheduler = ? ORDER BY day DESC",
            (scheduler,),
        )
        return [day for (day,) in rows]

    def scheduler_days(self, scheduler: str) -> dict[int, bytes]:
        """Return each of a scheduler's listed days, its stored pages."""
        rows = self.db.execute(
            "SELECT day, data FROM scheduler_day WHERE scheduler = ?", (scheduler,)
        )
        return dict(rows.fetchall())

    def listed_span(self, begin: int, end: int) -> list[tuple[str, int, str]]:
        """Return ``(job_id, start_time, digest)`` of the published jobs started in a span.

        Newest first; the span lies within one UTC day (listing.SPANS).
        """
        rows = self.db.execute(
            f"SELECT job_id, start_time, sha256 || key {_SPAN} {_NEWEST_FIRST}", within(begin, end)
        )
        return rows.fetchall()

    def listed_api(self, begin: int, end: int) -> list[bytes]:
        """Return the ``/api/jobs`` elements of the jobs of a span, in listed_span's order."""
        rows = self.db.execute(f"SELECT listed {_SPAN} {_NEWEST_FIRST}", within(begin, end))
        return [blob for (blob,) in rows]

    def count_span(self, begin: int, end: int) -> int:
        """Return how many published jobs started in a span (within one UTC day)."""
        (count,) = self.db.execute(f"SELECT count(*) {_SPAN}", within(begin, end)).fetchone()
        return int(count)

    def nth_newest(self, offset: int) -> tuple[str, int] | None:
        """Return the id and start time of the published job ``offset`` places from the newest."""
        row = self.db.execute(
            "SELECT job_id, start_time FROM log INDEXED BY log_newest WHERE published = 1 "
            "ORDER BY start_time DESC, job_id LIMIT 1 OFFSET ?",
            (offset,),
        ).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def list_days(self) -> dict[int, bytes]:
        """Return each listed day's stored pages and parts."""
        return dict(self.db.execute("SELECT day, data FROM list_day").fetchall())

    def jobs_json_by_part(self) -> Iterator[bytes]:
        """Yield ``/api/jobs`` from the find parts' stored elements (the site has an archive)."""
        return json_array(self.db.execute("SELECT api FROM list_part ORDER BY newest DESC, seq"))

    def list_pages(self) -> dict[str, str]:
        """Return each listing page's name and the signature of what it was rendered from."""
        return dict(self.db.execute("SELECT name, signature FROM list_page").fetchall())
