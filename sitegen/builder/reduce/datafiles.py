"""The SQL tables under ``data/``: Parquet files cut into segments, and their manifest.

Each job's rows of every table (``render.tables``) come from the map step and are kept in the
state. The jobs are put in segments in the order they are first published (a full build: by
start time), each segment holding at most ``SEGMENT_JOBS`` jobs and ``SEGMENT_TASK_ROWS``
rows of ``tasks``; a segment is one Parquet file per table, ``data/<table>/<segment>.parquet``.
A build writes again only the segments a job of which came, went or changed (new jobs fill
the newest segment), so one new log rewrites one file per table however long the history:
cost follows the change. A segment emptied by retention or removed logs loses its files;
segments are not merged (a partly emptied one stays so). ``data/manifest.json`` lists every
file with its rows and bytes (HTTP cannot list a directory; the query page and the docs'
one-liners read it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from sitegen.builder.state.data import DataFile
from sitegen.builder.state.store import State
from sitegen.finding import Finding, FindingSeverity
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.parquet import schema_json, table_parquet
from sitegen.render.tableblob import decode_tables
from sitegen.render.tables import (
    INT64,
    NULL,
    TABLES,
    TIMESTAMP,
    JobTables,
    findings_columns,
    table_part,
)

# A segment's bounds: the newest one fills up to these, then a new one starts. A new log
# rewrites at most this much of each table; a query of all of tasks fetches its files.
SEGMENT_JOBS = 1000
SEGMENT_TASK_ROWS = 250_000
DATA_DIR = "data"


def data_path(table: str, segment: int) -> str:
    """Return the site path of one table's file of one segment."""
    return f"{DATA_DIR}/{table}/{segment:05d}.parquet"


def write_data(
    state: State,
    writer: SiteWriter,
    changed: Iterable[str] | None,
    regressions: Mapping[str, Finding],
) -> set[str]:
    """Write the data files the build changed; return every data file the site holds.

    ``changed``: the keys of the logs mapped, removed, or published or left out anew (None:
    a full build, every log). ``regressions``: each run's regression finding, by job id,
    listed in ``findings`` as findings.json lists it.
    """
    dirty, to_place = state.data_changes(changed)
    dirty |= _place(state, to_place)
    for segment in sorted(dirty):
        _write_segment(state, writer, segment, regressions)
    files = state.data_files()
    if dirty or changed is None:
        writer.write(urls.DATA_MANIFEST, manifest(files))
    state.data_written()
    return {f.path for f in files} | {str(urls.DATA_MANIFEST)}


def _place(state: State, jobs: list[tuple[str, int]]) -> set[int]:
    """Put published jobs in no segment yet into the newest one, then new ones; say which."""
    if not jobs:
        return set()
    last = state.last_segment()
    if last is None:
        # No segment has a job (any emptied now is written again): start at 0, as a full build.
        segment, count, rows = 0, 0, 0
    else:
        segment, count, rows = last
    placed: list[tuple[int, str]] = []
    for key, task_rows in jobs:
        if count and (count >= SEGMENT_JOBS or rows + task_rows > SEGMENT_TASK_ROWS):
            segment, count, rows = segment + 1, 0, 0
        placed.append((segment, key))
        count += 1
        rows += task_rows
    state.place(placed)
    return {segment for segment, _ in placed}


def _write_segment(
    state: State, writer: SiteWriter, segment: int, regressions: Mapping[str, Finding]
) -> None:
    """Write one segment's file of every table (none when it has no job now)."""
    jobs = [decode_tables(blob) for blob in state.segment_rows(segment)]
    jobs = [
        with_findings(job, [regressions[job.job_id]]) if job.job_id in regressions else job
        for job in jobs
    ]
    files = []
    for table in TABLES if jobs else ():
        path = data_path(table, segment)
        data = table_parquet(table, jobs)
        writer.write(path, data)
        files.append(DataFile(path, table, segment, sum(j.rows(table) for j in jobs), len(data)))
    state.set_data_files(segment, files)


def manifest(files: Iterable[DataFile]) -> bytes:
    """Return ``data/manifest.json``: every table's columns and files (paths from ``data/``)."""
    found = schema_json()
    for f in files:
        entry = {"path": f.path.removeprefix(f"{DATA_DIR}/"), "rows": f.rows, "bytes": f.bytes}
        found["tables"][f.table]["files"].append(entry)
    return orjson.dumps(found, option=orjson.OPT_INDENT_2) + b"\n"


def with_findings(tables: JobTables, extra: Sequence[Finding]) -> JobTables:
    """Return a job's rows with ``extra`` findings listed too, in findings.json's order.

    The build adds the run's regression (found from the other runs of its name, after the map
    step made the rows) as findings.json lists it: the job's count and worst severity follow.
    """
    names = [c.name for c in TABLES["findings"][1:]]
    own = tables.as_lists("findings")
    added = JobTables(
        tables.job_id, parts={"findings": table_part("findings", findings_columns(extra))}
    )
    more = added.as_lists("findings")
    rows = list(zip(*(own[n] + more[n] for n in names), strict=True))

    def order(row: tuple[Any, ...]) -> tuple[Any, ...]:
        # most_severe_first's key, on a row's values.
        kind, severity, _, stage, task, executor = row[:6]
        rank = FindingSeverity(severity).rank
        return (
            -rank,
            kind,
            -1 if stage is None else stage,
            -1 if task is None else task,
            executor or "",
        )

    rows.sort(key=order)
    columns: dict[str, list[Any]] = {}
    for n, column in enumerate(TABLES["findings"][1:]):
        values = [row[n] for row in rows]
        if column.type in (INT64, TIMESTAMP):
            values = [NULL if v is None else v for v in values]
        columns[column.name] = values
    severities = [FindingSeverity(row[1]) for row in rows]
    worst = max(severities, key=lambda s: s.rank).value if severities else None
    jobs = {**tables.columns("jobs"), "findings": [len(rows)], "worst_severity": [worst]}
    parts = {"jobs": table_part("jobs", jobs), "findings": table_part("findings", columns)}
    return JobTables(tables.job_id, parts={**tables.parts, **parts})
