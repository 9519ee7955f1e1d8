"""The SQL tables' rows of each job and the data files they are in (builder/reduce/datafiles.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sitegen.builder.state.base import Base
from sitegen.builder.state.schema import chunks, marks


class DataFile(NamedTuple):
    """One Parquet file of ``data/``: its path, table, segment, rows and bytes."""

    path: str
    table: str
    segment: int
    rows: int
    bytes: int


class DataChanges(NamedTuple):
    """What a build changed of the data files: segments to write again, jobs to place."""

    dirty: set[int]
    # Published jobs in no segment yet, oldest first: (key, rows of ``tasks``).
    to_place: list[tuple[str, int]]


class DataRows(Base):
    """The jobs' rows of the SQL tables and the data files' segments."""

    def data_changes(self, keys: Iterable[str] | None) -> DataChanges:
        """Return the segments whose jobs ``keys`` changed, and the published jobs to place.

        ``keys`` None: every log (a full build, whose new state has no segment yet). A job
        gone, left out or with no job now leaves its segment (written again); one mapped
        again stays in it (written again).
        """
        select = (
            "SELECT d.key, d.segment, d.stale, d.rows IS NULL, l.key IS NULL, "
            "coalesce(l.published, 0), d.task_rows, l.start_time, l.job_id "
            "FROM data_row d LEFT JOIN log l USING (key)"
        )
        if keys is None:
            found = self.db.execute(select).fetchall()
        else:
            wanted = sorted(set(keys))
            found = []
            for chunk in chunks(wanted):
                found += self.db.execute(f"{select} WHERE d.key IN ({marks(chunk)})", chunk)
        dirty: set[int] = set()
        place: list[tuple[int, str, str, int]] = []
        out: list[tuple[str]] = []
        drop: list[tuple[str]] = []
        for key, segment, stale, empty, gone, published, task_rows, start, job_id in found:
            if gone or empty:
                drop.append((key,))
            if segment is not None:
                if gone or empty or not published:
                    dirty.add(segment)
                    out.append((key,))
                elif stale:
                    dirty.add(segment)
            elif published and not empty:
                place.append((start, job_id, key, task_rows))
        self.db.executemany("UPDATE data_row SET segment = NULL WHERE key = ?", out)
        self.db.executemany("DELETE FROM data_row WHERE key = ?", drop)
        place.sort()
        return DataChanges(dirty, [(key, rows) for _, _, key, rows in place])

    def last_segment(self) -> tuple[int, int, int] | None:
        """Return the newest segment with its jobs and ``tasks`` rows; None: there is none."""
        row = self.db.execute(
            "SELECT segment, count(*), sum(task_rows) FROM data_row "
            "WHERE segment = (SELECT max(segment) FROM data_row WHERE segment IS NOT NULL)"
        ).fetchone()
        return None if row is None or row[0] is None else (row[0], row[1], row[2])

    def place(self, placed: Sequence[tuple[int, str]]) -> None:
        """Put jobs (by key) in segments."""
        self.db.executemany("UPDATE data_row SET segment = ? WHERE key = ?", placed)

    def segment_rows(self, segment: int) -> list[bytes]:
        """Return the rows of the jobs of one segment, oldest first."""
        return [
            blob
            for (blob,) in self.db.execute(
                "SELECT d.rows FROM data_row d JOIN log l USING (key) "
                "WHERE d.segment = ? ORDER BY l.start_time, l.job_id",
                (segment,),
            )
        ]

    def set_data_files(self, segment: int, files: Iterable[DataFile]) -> None:
        """Record the files of one segment (none: it was emptied)."""
        self.db.execute("DELETE FROM data_file WHERE segment = ?", (segment,))
        self.db.executemany("INSERT INTO data_file VALUES (?,?,?,?,?)", files)

    def data_files(self) -> list[DataFile]:
        """Return every data file, by table and segment."""
        rows = self.db.execute(
            "SELECT path, tbl, segment, rows, bytes FROM data_file ORDER BY tbl, segment"
        )
        return [DataFile(*row) for row in rows]

    def data_written(self) -> None:
        """Note that every job's rows are in the files as they are now."""
        self.db.execute("UPDATE data_row SET stale = 0 WHERE stale")
