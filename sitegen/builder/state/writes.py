"""How a build records what it did: logs as mapped, selection, trends, listings, site files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from sitegen.builder.state.base import Base, file_size
from sitegen.builder.state.records import Chosen, LogOutcome
from sitegen.builder.state.schema import DAY_MS, EVIDENCE_SCALE, encode, encode_json, within
from sitegen.model import ExecutorEvidence


def _evidence_columns(e: ExecutorEvidence) -> tuple[int, int, int, int, int]:
    """Return an executor's evidence as the state's columns: the sums in millionths."""
    # Integers add and subtract exactly: the state's hourly sums after any order of jobs
    # coming and going are those a full build makes, and so is fleet.json.
    return (e.compared, round(e.z_sum * EVIDENCE_SCALE), round(e.log_sum * EVIDENCE_SCALE),
            e.excess_ms, e.own_failed)  # fmt: skip


class Put(NamedTuple):
    """One log to record as built now (``known``: replace what the state held of it)."""

    key: str
    size: int
    mtime_ns: int
    outcome: LogOutcome
    published: bool
    known: bool = True


def _log_row(put: Put) -> tuple[object, ...]:
    """Return a log's row of the ``log`` table."""
    outcome = put.outcome
    summary, row = outcome.summary, outcome.row
    return (
        put.key,
        put.size,
        put.mtime_ns,
        outcome.sha256,
        outcome.note_sha256,
        outcome.context_sha256,
        int(put.published),
        str(outcome.classification),
        int(bool(outcome.problems) or outcome.running is not None),
        summary.job_id if summary else None,
        summary.job_name if summary else None,
        summary.start_time if summary else 0,
        summary.start_time // DAY_MS if summary else 0,
        # When it ended (a cancelled job's index says 0): retention and trends go by it.
        summary.ended_at if summary else 0,
        summary.completed_at if summary else 0,
        summary.status if summary else None,
        int(row is not None and row.failed),
        int(row is not None and row.succeeded),
        row.findings if row else 0,
        row.worst_rank if row else -1,
        summary.tasks if summary else 0,
        summary.failed_tasks if summary else 0,
        "\n".join(outcome.roots),
        outcome.files,
        outcome.bytes,
        (summary.raw_log_bytes or 0) if summary else 0,
        row.listed if row else None,
        summary.input_rows if summary else None,
        row.cost_ms if row else 0,
        summary.counting if summary else "unknown",
        summary.scheduler if summary else "",
    )


# The sizes of the site-wide files, as record_site_bytes keeps them.
decode_sizes = msgspec.json.Decoder(dict[str, int]).decode


class Writes(Base):
    """The build's writes, all in its one transaction."""

    def set_meta(self, name: str, value: str) -> None:
        """Record one meta row (in the build's transaction)."""
        self._meta({name: value})

    def set_chosen(self, chosen: Chosen) -> None:
        """Record what this build's selection decided (the site's size is measured anew)."""
        self._meta({"chosen": encode_json(chosen).decode()})
        self.db.execute("DELETE FROM meta WHERE name = 'site_bytes'")

    def amend_chosen(self, chosen: Chosen) -> None:
        """Record more of what the last selection holds for (its site is as built)."""
        self.begin()
        self._meta({"chosen": encode_json(chosen).decode()})
        self.commit()

    def record_site_bytes(self, root: Path, written: Iterable[str] | None = None) -> int:
        """Measure the site's bytes and record them with its selection (set_chosen clears it).

        ``written``: the site-wide files this build wrote: only those (and any the state has
        no size of) are measured again, the others' sizes are as recorded (a stat of each of
        6,500 cost 0.09 s at 100,000 jobs). Sizes are kept per file, not as a total moved by
        what changed: a build stopped half-way through its update leaves files a total would
        miss, and the next build writes them again. Called in the build's transaction: a
        write of its own costs a commit (fsyncs).
        """
        kept = self.meta_value("site_file_sizes")
        paths = self.site_files()
        if written is None or kept is None:
            sizes = {path: file_size(root, path) for path in paths}
        else:
            had = decode_sizes(kept)
            had.update((path, file_size(root, path)) for path in written)
            sizes = {path: had[path] if path in had else file_size(root, path) for path in paths}
        size = self.jobs_bytes() + sum(sizes.values())
        self._meta({"site_bytes": str(size), "site_file_sizes": encode_json(sizes).decode()})
        return size

    def put_many(self, puts: Sequence[Put]) -> None:
        """Record logs as built now (replacing what was known of those ``known``)."""
        # One executemany per table for a chunk of logs: a full build recorded each log with
        # five statements of its own, the largest share of the main process's work.
        self.forget([p.key for p in puts if p.known])
        logs, blobs, failures, flags, executors, tables = [], [], [], [], [], []
        errors: list[tuple[str, str, str, str, int, int]] = []
        for put in puts:
            key, outcome, published = put.key, put.outcome, int(put.published)
            summary, row = outcome.summary, outcome.row
            # The map step made the row with the summary: the state computes no column itself.
            assert (summary is None) == (row is None), "a job's outcome comes with its row"
            logs.append(_log_row(put))
            kept = msgspec.structs.replace(outcome, summary=None, row=None, tables=b"", uploaded={})
            blob = encode(kept)
            blobs.append((key, encode(summary) if summary else None, blob))
            if outcome.tables or put.known:  # a known log may have had rows: they go
                tables.append((key, outcome.tables or None, outcome.task_rows))
            if summary is None or row is None:
                continue
            failures += [(key, *failed, published) for failed in row.failures]
            job_id, start = summary.job_id, summary.start_time
            named = {f.executor_id for f in summary.findings if f.executor_id is not None}
            flags += [(key, job_id, start, e, published) for e in sorted(named)]
            hour = row.hour
            evidence, none = summary.evidence, ExecutorEvidence()
            executors += [
                (
                    key,
                    e,
                    job_id,
                    start,
                    published,
                    s.tasks,
                    s.failed,
                    s.busy_ms,
                    hour,
                    *_evidence_columns(evidence.get(e, none)),
                )
                for e, s in summary.executors.items()
            ]
            errors += [
                (key, e, p.pattern, p.example, p.count, published)
                for e, patterns in summary.executor_errors.items()
                for p in patterns
            ]
        self.db.executemany("INSERT INTO log VALUES (" + ",".join("?" * 31) + ")", logs)
        self.db.executemany("INSERT INTO blob VALUES (?,?,?)", blobs)
        if failures:
            self.db.executemany(
                "INSERT INTO failure (key, job_id, job_name, start_time, pattern, example, "
                "failed_job, tasks, published) VALUES (?,?,?,?,?,?,?,?,?)",
                failures,
            )
            self._failures_changed()
        self.db.executemany("INSERT INTO flag VALUES (?,?,?,?,?)", flags)
        self.put_executors(executors)
        if errors:
            self.db.executemany("INSERT INTO executor_error VALUES (?,?,?,?,?,?)", errors)
        # A job mapped again keeps its segment (its files are rewritten: stale), so that an
        # incremental build lays the files out as a full build of the same logs does.
        self.db.executemany(
            "INSERT INTO data_row VALUES (?,?,?,NULL,1) ON CONFLICT (key) DO UPDATE SET "
            "rows = excluded.rows, task_rows = excluded.task_rows, stale = 1",
            tables,
        )

    def put_executors(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert ``executor`` rows, and add the published ones to their totals in one go.

        The totals (executor_total, executor_hour) are summed per executor (and hour) first:
        one upsert each, where a trigger a row ran twice a row. Rows going and flipping keep
        their triggers.
        """
        self.db.executemany("INSERT INTO executor VALUES (" + ",".join("?" * 14) + ")", rows)
        totals: dict[str, list[int]] = {}
        hours: dict[tuple[str, int], list[int]] = {}
        for _, executor, _, _, published, tasks, failed, busy, hour, *evidence in rows:
            if not published:
                continue
            total = totals.get(executor)
            if total is None:
                totals[executor] = [tasks, failed, busy, 1]
            else:
                total[0] += tasks
                total[1] += failed
                total[2] += busy
                total[3] += 1
            compared, z_sum, log_sum, excess, own = evidence
            cell = hours.get((executor, hour))
            if cell is None:
                hours[executor, hour] = [1, tasks, failed, *evidence, int(own > 0)]
                continue
            cell[0] += 1
            cell[1] += tasks
            cell[2] += failed
            cell[3] += compared
            cell[4] += z_sum
            cell[5] += log_sum
            cell[6] += excess
            cell[7] += own
            cell[8] += own > 0
        self.db.executemany(
            "INSERT INTO executor_total VALUES (?,?,?,?,?) ON CONFLICT (executor_id) DO UPDATE "
            "SET tasks = tasks + excluded.tasks, failed = failed + excluded.failed, "
            "busy_ms = busy_ms + excluded.busy_ms, jobs = jobs + excluded.jobs",
            ((executor, *sums) for executor, sums in totals.items()),
        )
        self.db.executemany(
            "INSERT INTO executor_hour VALUES (?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (executor_id, hour) DO UPDATE SET jobs = jobs + excluded.jobs, "
            "tasks = tasks + excluded.tasks, failed = failed + excluded.failed, "
            "compared = compared + excluded.compared, z_sum = z_sum + excluded.z_sum, "
            "log_sum = log_sum + excluded.log_sum, excess_ms = excess_ms + excluded.excess_ms, "
            "own_failed = own_failed + excluded.own_failed, "
            "failing_jobs = failing_jobs + excluded.failing_jobs",
            ((executor, hour, *sums) for (executor, hour), sums in hours.items()),
        )

    def forget(self, keys: Iterable[str]) -> None:
        """Remove logs that are gone (or about to be recorded afresh)."""
        rows = [(k,) for k in keys]
        self.db.executemany("DELETE FROM log WHERE key = ?", rows)
        for table in ("blob", "executor", "executor_error", "failure", "flag"):
            cursor = self.db.executemany(f"DELETE FROM {table} WHERE key = ?", rows)
            if table == "failure" and cursor.rowcount > 0:
                self._failures_changed()

    def set_renamed(self, renamed: Iterable[str], gone: Iterable[str]) -> None:
        """Record the finished logs seen as ``.running`` before; forget those of gone logs."""
        self.db.executemany("DELETE FROM renamed WHERE key = ?", [(k,) for k in gone])
        self.db.executemany("INSERT OR IGNORE INTO renamed VALUES (?)", [(k,) for k in renamed])

    def set_published(self, changes: Iterable[tuple[str, bool]]) -> None:
        """Record which reused logs are on the site now."""
        rows = [(int(p), k) for k, p in changes]
        for table in ("log", "executor", "executor_error", "failure", "flag"):
            cursor = self.db.executemany(f"UPDATE {table} SET published = ? WHERE key = ?", rows)
            if table == "failure" and cursor.rowcount > 0:
                self._failures_changed()

    def touch(self, times: Iterable[tuple[str, int]]) -> None:
        """Record new modification times of logs whose bytes did not change."""
        self.db.executemany("UPDATE log SET mtime_ns = ? WHERE key = ?", [(t, k) for k, t in times])

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

    def set_site_files(self, paths: set[str]) -> None:
        """Record the site-wide files the site holds now (the rows that changed)."""
        had = self.site_files()
        self.db.executemany("DELETE FROM site_file WHERE path = ?", [(p,) for p in had - paths])
        self.db.executemany("INSERT INTO site_file VALUES (?)", [(p,) for p in paths - had])

    def set_list_day(self, day: int, data: bytes | None) -> None:
        """Record a day's pages and parts (None: the day lists no job now)."""
        if data is None:
            self.db.execute("DELETE FROM list_day WHERE day = ?", (day,))
        else:
            self.db.execute("INSERT OR REPLACE INTO list_day VALUES (?, ?)", (day, data))

    def set_scheduler_day(self, scheduler: str, day: int, data: bytes | None) -> None:
        """Record a day of a scheduler's list (None: it lists none of its jobs now)."""
        if data is None:
            query = "DELETE FROM scheduler_day WHERE scheduler = ? AND day = ?"
            self.db.execute(query, (scheduler, day))
        else:
            query = "INSERT OR REPLACE INTO scheduler_day VALUES (?, ?, ?)"
            self.db.execute(query, (scheduler, day, data))

    def keep_scheduler_days(self, schedulers: Sequence[str]) -> None:
        """Forget the days of every scheduler but these (gone, or the site's only one)."""
        kept = sorted(schedulers)
        self.db.execute(
            f"DELETE FROM scheduler_day WHERE scheduler NOT IN ({','.join('?' * len(kept))})",
            kept,
        )

    def set_list_parts(self, begin: int, end: int, parts: Sequence[tuple[str, int, bytes]]) -> None:
        """Replace the find parts of a span: name, newest job's start, joined elements each."""
        _, first, last = within(begin, end)
        self.db.execute("DELETE FROM list_part WHERE newest BETWEEN ? AND ?", (first, last))
        self.db.executemany(
            "INSERT INTO list_part VALUES (?, ?, ?, ?)",
            [(name, start, seq, api) for seq, (name, start, api) in enumerate(parts)],
        )

    def set_list_pages(self, pages: dict[str, str], before: Mapping[str, str]) -> None:
        """Record the listing pages and their signatures (``before``: as recorded till now)."""
        gone = [(name,) for name in before.keys() - pages.keys()]
        self.db.executemany("DELETE FROM list_page WHERE name = ?", gone)
        changed = [(n, s) for n, s in pages.items() if before.get(n) != s]
        self.db.executemany("INSERT OR REPLACE INTO list_page VALUES (?, ?)", changed)
