"""The runs of the logs to map, peeked at (``builder.contexts.peek``), for this build only.

A temporary table of the state's connection: never written to the state file, gone with the
build. A full build of 100,000 logs held every peeked run and its figures in memory, 14 MB
at 10,000 (``docs/scale.md``); here the build holds one name's runs at a time, as the trends
after the map do (``ReduceQueries.runs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sitegen.builder.state.base import Base
from sitegen.builder.state.queries import RunRow
from sitegen.builder.state.schema import decode_summary, encode
from sitegen.model import JobSummary

# A peeked log: its place in the build's list, its key, its run's columns (``RunRow``'s) and
# its summary's figures.
PeekRow = tuple[int, str, RunRow, JobSummary]

_PEEK = """
CREATE TEMP TABLE IF NOT EXISTS peek (
  n INTEGER PRIMARY KEY, key TEXT NOT NULL, job_id TEXT NOT NULL, job_name TEXT NOT NULL,
  start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, status TEXT NOT NULL,
  failed INTEGER NOT NULL, succeeded INTEGER NOT NULL, source TEXT NOT NULL,
  input_rows INTEGER, counting TEXT NOT NULL, figures BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS temp.peek_name ON peek (job_name, start_time, job_id);
DELETE FROM peek;
"""


class Peeks(Base):
    """The peeked runs of this build's logs to map."""

    def put_peeks(self, rows: Iterable[PeekRow]) -> None:
        """Hold the peeked runs of this build as they come (an earlier map's are dropped)."""
        # executescript would commit the build's open transaction: one statement at a time.
        for statement in filter(None, (s.strip() for s in _PEEK.split(";"))):
            self.db.execute(statement)
        self.db.executemany(
            "INSERT INTO peek VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((n, key, *run, encode(summary)) for n, key, run, summary in rows),
        )

    def peeked_run(self, n: int) -> tuple[str, str] | None:
        """Return the job id and name the ``n``-th log was peeked at for (None: not peeked)."""
        row = self.db.execute("SELECT job_id, job_name FROM peek WHERE n = ?", (n,)).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def peeked_in_name_order(self) -> list[int]:
        """Return the peeked logs with a job name, a name's runs together, oldest first."""
        query = "SELECT n FROM peek WHERE job_name <> '' ORDER BY job_name, start_time, job_id"
        return [n for (n,) in self.db.execute(query)]

    def peeked_names(self) -> list[str]:
        """Return the job names of the peeked runs, sorted."""
        query = "SELECT DISTINCT job_name FROM peek WHERE job_name <> '' ORDER BY job_name"
        return [name for (name,) in self.db.execute(query)]

    def peeked_name(self, n: int) -> str | None:
        """Return the job name the ``n``-th log was peeked at for (None: not peeked)."""
        row = self.db.execute("SELECT job_name FROM peek WHERE n = ?", (n,)).fetchone()
        return None if row is None else str(row[0])

    def peeked_runs(self, name: str) -> Iterator[tuple[int, RunRow, JobSummary]]:
        """Yield the peeked runs of a name: their log's place, columns and figures."""
        rows = self.db.execute(
            "SELECT n, job_id, job_name, start_time, end_time, status, failed, succeeded, "
            "source, input_rows, counting, figures FROM peek WHERE job_name = ?",
            (name,),
        )
        for (
            n,
            job_id,
            job_name,
            start,
            end,
            status,
            failed,
            ok,
            source,
            rows_in,
            how,
            figures,
        ) in rows:
            run = (
                job_id,
                job_name,
                start,
                end,
                status,
                bool(failed),
                bool(ok),
                source,
                rows_in,
                how,
            )
            yield n, run, decode_summary(figures)
