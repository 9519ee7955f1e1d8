"""The SQL tables (issue 39): one job's rows, their Parquet files, and a query over HTTP.

Every figure is checked against the log itself (read here with ``json``) and the job's own
published files (its ``/api/job/<id>`` bodies and ``findings.json``).
"""

from __future__ import annotations

import importlib
import io
import json
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.map.jobs import read_and_analyse
from sitegen.diagnose.analysis import JobAnalysis
from sitegen.diagnose.diagnosis import findings_json
from sitegen.errors import UsageError
from sitegen.eventlog.discover import discover
from sitegen.eventlog.limits import DEFAULT_LIMITS
from sitegen.eventlog.reader import LogRead, read_log
from sitegen.eventlog.taskmetrics import MISSING, task_extras
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.examples.generator import JobSpec, write_log
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.render import api, parquet
from sitegen.render.tableblob import SHUFFLE_FROM, decode_tables, encode_tables
from sitegen.render.tables import (
    TABLES,
    TIMESTAMP,
    JobTables,
    job_tables,
)
from tests.conftest import require_module
from tests.helpers.servers import http_server


@dataclass(frozen=True)
class Job:
    """One bundled example job: what sitegen made of it, and its log read plainly."""

    key: str
    read: LogRead
    analysis: JobAnalysis
    tables: JobTables
    # The log's TaskEnd records' data and its JobEnd's, as json reads them.
    task_ends: list[dict[str, Any]]
    job_end: dict[str, Any]


def plain_records(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return a completed log's TaskEnd data and its JobEnd data, read with ``json``."""
    ends = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        if record["ev"] == "JobEnd":
            return ends, record["data"]
        if record["ev"] == "TaskEnd":
            ends.append(record["data"])
    raise AssertionError(f"{path} has no JobEnd")


def analysed(path: Path) -> tuple[str, LogRead, JobAnalysis]:
    """Read and analyse one log as the map step does."""
    (log,) = [log for log in discover(path.parent) if log.path == path]
    outcome, read, analysis = read_and_analyse(log, DEFAULT_LIMITS)
    assert read is not None and analysis is not None, outcome.problems
    return log.key, read, analysis


@pytest.fixture(scope="module")
def jobs() -> list[Job]:
    """Every bundled example log with a job, and its tables."""
    found = []
    for log in discover(EXAMPLE_LOG_DIR):
        _, read, analysis = read_and_analyse(log, DEFAULT_LIMITS)
        if read is None or analysis is None:
            continue  # running, ended unrecorded or damaged: no job to tabulate
        ends, end = plain_records(Path(str(log.path)))
        found.append(Job(log.key, read, analysis, job_tables(read, analysis, log.key), ends, end))
    assert len(found) >= 20
    return found


def parquet_rows(table: str, tables: list[JobTables]) -> dict[str, list[Any]]:
    """Write ``table`` of ``tables`` with ``table_parquet`` and read it back as columns."""
    pq = require_module("pyarrow.parquet", "sql")
    read = pq.read_table(io.BytesIO(parquet.table_parquet(table, tables)))
    assert read.schema.names == [c.name for c in TABLES[table]]
    return {name: read.column(name).to_pylist() for name in read.schema.names}


def failure_of(status: Any) -> Any:
    """Return what a ``{"Failed": …}`` status holds, None for any other status."""
    return status["Failed"] if isinstance(status, dict) else None


def ms(value: Any) -> int | None:
    """Return a timestamp read back from Parquet as epoch milliseconds."""
    return None if value is None else round(value.timestamp() * 1000)


def test_task_attempts_are_the_logs_taskend_records(jobs: list[Job]) -> None:
    for job in jobs:
        tasks = parquet_rows("tasks", [job.tables])
        ends = job.task_ends
        assert len(tasks["job_id"]) == len(ends), job.key
        assert set(tasks["job_id"]) <= {job.job_end["index"]["job_id"]}
        assert tasks["stage_id"] == [e["stage_id"] for e in ends]
        assert tasks["task_id"] == [e["task_id"] for e in ends]
        assert tasks["executor_id"] == [e["executor_id"] for e in ends]
        assert [ms(v) for v in tasks["launched_at"]] == [e["launch_time"] for e in ends]
        assert [ms(v) for v in tasks["started_at"]] == [e["start_exec_time"] for e in ends]
        assert [ms(v) for v in tasks["ended_at"]] == [e["end_exec_time"] for e in ends]
        took = [e["end_exec_time"] - e["start_exec_time"] for e in ends]
        assert tasks["duration_ms"] == took
        assert tasks["input_rows"] == [e["metrics"]["input_rows"] for e in ends]
        assert tasks["output_rows"] == [e["metrics"]["output_rows"] for e in ends]
        assert tasks["compute_ns"] == [e["metrics"]["elapsed_compute_nanos"] for e in ends]
        failed = [failure_of(e["status"]) for e in ends]
        words = ["Failed" if f else e["status"] for f, e in zip(failed, ends, strict=True)]
        assert tasks["status"] == words
        assert tasks["error"] == [f["error"] if f else None for f in failed]
        assert tasks["error_reason"] == [f["reason"] if f else None for f in failed]
        # attempt: 0-based, in log order among the same stage and task id.
        seen: dict[tuple[int, int], int] = {}
        for e, attempt in zip(ends, tasks["attempt"], strict=True):
            key = (e["stage_id"], e["task_id"])
            assert attempt == seen.get(key, 0)
            seen[key] = attempt + 1
        # The payload names the partition of every successful attempt (a failed one's is its
        # retry's, where that retry has a TaskEnd: test_partitions_are_the_payloads), but not
        # of a stage a replan dropped, which it does not list (tests/test_replanned.py).
        listed = {int(s["stage_id"]) for s in job.job_end["stages"]["stages"]}
        for e, partition in zip(ends, tasks["partition_id"], strict=True):
            named = e["stage_id"] in listed
            assert (partition is not None) is named or "Failed" in e["status"], job.key


def test_partitions_are_the_payloads(jobs: list[Job]) -> None:
    job = next(j for j in jobs if j.key == "planted-failed-attempts.eventlog")
    tasks = parquet_rows("tasks", [job.tables])
    listed = job.job_end["stages"]["stages"]
    by_times = {
        (int(s["stage_id"]), t["start_exec_time"], t["end_exec_time"]): t["partition_id"]
        for s in listed
        for t in s["tasks"]
    }
    ends = job.task_ends
    matched = 0
    for e, partition in zip(ends, tasks["partition_id"], strict=True):
        named = by_times.get((e["stage_id"], e["start_exec_time"], e["end_exec_time"]))
        if named is not None:
            assert [partition] == named
            matched += 1
    # The failed attempts have no row of their own: they ran their retry's partition.
    assert matched == len(ends) - sum(1 for e in ends if "Failed" in e["status"])
    retried = {
        (e["stage_id"], e["task_id"]): p
        for e, p in zip(ends, tasks["partition_id"], strict=True)
        if "Failed" not in e["status"]
    }
    for e, partition in zip(ends, tasks["partition_id"], strict=True):
        if "Failed" in e["status"]:
            assert partition == retried[(e["stage_id"], e["task_id"])]


def test_jobs_rows_match_the_api_and_the_log(jobs: list[Job]) -> None:
    rows = parquet_rows("jobs", [job.tables for job in jobs])
    assert rows["job_id"] == [job.job_end["index"]["job_id"] for job in jobs]
    for n, job in enumerate(jobs):
        body = dict(api_bodies(job))[f"api/job/{job.tables.job_id}/index.json"]
        listed = json.loads(body)
        end = job.job_end
        assert rows["job_name"][n] == listed["job_name"]
        assert rows["status"][n] == listed["status"]
        assert ms(rows["started_at"][n]) == listed["start_time"]
        ended = listed["end_time"] or end["completed_at"]
        assert ms(rows["ended_at"][n]) == ended
        assert rows["duration_ms"][n] == ended - listed["start_time"]
        assert ms(rows["queued_at"][n]) == (end["queued_at"] or None)
        assert rows["stages"][n] == listed["num_stages"]
        assert rows["completed_stages"][n] == listed["completed_stages"]
        assert rows["task_attempts"][n] == len(job.task_ends)
        failed = sum(1 for e in job.task_ends if "Failed" in e["status"])
        assert rows["failed_attempts"][n] == failed
        assert rows["executors"][n] == len({e["executor_id"] for e in job.task_ends})
        summary = job.analysis.summary
        assert (rows["input_rows"][n], rows["output_rows"][n]) == (
            summary.input_rows,
            summary.output_rows,
        )
        failure = failure_of(end["status"])
        assert rows["failure"][n] == failure
        listed_findings = json.loads(job_findings_json(job))["findings"]
        assert rows["findings"][n] == len(listed_findings)
        worst = {f["severity"] for f in listed_findings}
        expected = next((s for s in ("critical", "warning", "info") if s in worst), None)
        assert rows["worst_severity"][n] == expected
        assert rows["log_file"][n] == job.key
        assert rows["log_bytes"][n] == (EXAMPLE_LOG_DIR / job.key).stat().st_size


def api_bodies(job: Job) -> list[tuple[str, bytes]]:
    """Return the job's ``/api/job/<id>`` files as the map step writes them."""
    assert job.read.job_end is not None
    return [(str(rel), data) for rel, data, _ in api.job_files(job.tables.job_id, job.read.job_end)]


def job_findings_json(job: Job) -> bytes:
    """Return the job's findings.json as its page writes it (no run context)."""
    summary = job.analysis.summary
    return findings_json(summary.job_id, summary.findings, summary.what_if)


def test_a_cancelled_job_ends_at_its_cancel(jobs: list[Job]) -> None:
    job = next(j for j in jobs if j.job_end["status"] == "Cancelled")
    assert job.job_end["index"]["end_time"] == 0  # the index says 0: the cancel time is elsewhere
    rows = parquet_rows("jobs", [job.tables])
    assert ms(rows["ended_at"][0]) == job.job_end["completed_at"]
    assert rows["duration_ms"][0] == job.job_end["completed_at"] - job.job_end["started_at"]
    assert rows["queued_at"] == [None]  # not recorded: 0 in the log
    assert rows["status"] == ["Cancelled"]


def test_stages_match_the_stages_payload(jobs: list[Job]) -> None:
    for job in jobs:
        body = dict(api_bodies(job))[f"api/job/{job.tables.job_id}/stages"]
        listed = sorted(json.loads(body)["stages"], key=lambda s: int(s["stage_id"]))
        rows = parquet_rows("stages", [job.tables])
        assert rows["stage_id"] == [int(s["stage_id"]) for s in listed], job.key
        assert rows["tasks"] == [len(s["tasks"]) for s in listed]
        assert rows["input_rows"] == [s["input_rows"] for s in listed]
        assert rows["output_rows"] == [s["output_rows"] for s in listed]
        for key in ("min", "p25", "median", "p75", "max"):
            # A stage that never ran (the payload lists it) has no percentiles.
            durations = [s.get("task_duration_percentiles", {}).get(key) for s in listed]
            assert rows[f"task_duration_{key}_ms"] == durations
            inputs = [s.get("task_input_percentiles", {}).get(key) for s in listed]
            assert rows[f"task_input_rows_{key}"] == inputs
        per_stage = [
            sum(1 for e in job.task_ends if e["stage_id"] == sid) for sid in rows["stage_id"]
        ]
        assert rows["task_attempts"] == per_stage
        # Every attempt but those of a stage a replan dropped (no row: tests/test_replanned.py).
        assert sum(rows["task_attempts"]) == sum(
            1 for e in job.task_ends if e["stage_id"] in rows["stage_id"]
        )
        for n, stage in enumerate(listed):
            timed = [t for t in stage["tasks"] if t["end_exec_time"] >= t["start_exec_time"]]
            if timed:
                first = min(t["start_exec_time"] for t in timed)
                last = max(t["end_exec_time"] for t in timed)
                assert (ms(rows["started_at"][n]), ms(rows["ended_at"][n])) == (first, last)
                assert rows["duration_ms"][n] == last - first
        shown = [
            s.word
            for s in (job.analysis.statuses.stage(s["stage_id"], s["stage_status"]) for s in listed)
        ]
        assert rows["status"] == shown


def test_a_failed_jobs_stage_shows_as_the_pages_show_it(tmp_path: Path) -> None:
    # Today's scheduler leaves the stage a job failed in Running in its payload.
    spec = JobSpec(job_id="upstream-failed", job_name="q", outcome="failed", upstream=True)
    key, read, analysis = analysed(write_log(tmp_path, spec, 3))
    rows = parquet_rows("stages", [job_tables(read, analysis, key)])
    payload_words = {s.stage_status for s, _ in analysis.stages}
    assert "Running" in payload_words and "Running" not in rows["status"]
    assert "Failed" in rows["status"]


def test_findings_are_the_findings_json(jobs: list[Job]) -> None:
    kinds = set()
    for job in jobs:
        listed = json.loads(job_findings_json(job))["findings"]
        rows = parquet_rows("findings", [job.tables])
        assert rows["kind"] == [f["kind"] for f in listed], job.key
        assert rows["severity"] == [f["severity"] for f in listed]
        assert rows["impact_ms"] == [f["impact_ms"] for f in listed]
        assert rows["stage_id"] == [f["stage_id"] for f in listed]
        assert rows["task_id"] == [f["task_id"] for f in listed]
        assert rows["executor_id"] == [f["executor_id"] for f in listed]
        assert rows["value"] == [f["value"] for f in listed]
        assert rows["message"] == [f["message"] for f in listed]
        kinds |= set(rows["kind"])
    # The planted examples give every kind a job's own log can show.
    assert kinds == {k.value for k in FindingKind} - {"regression"}


def test_extra_findings_are_listed_with_the_jobs_own(jobs: list[Job]) -> None:
    job = next(j for j in jobs if j.analysis.summary.findings)
    regression = Finding(
        FindingKind.REGRESSION, FindingSeverity.CRITICAL, None, None, None, 2.5, "slower"
    )
    tables = job_tables(job.read, job.analysis, job.key, [regression])
    summary = job.analysis.summary
    listed = json.loads(findings_json(summary.job_id, summary.findings, None, regression))
    rows = parquet_rows("findings", [tables])
    assert rows["kind"] == [f["kind"] for f in listed["findings"]]
    assert rows["kind"][0] == "regression"
    jobs_row = parquet_rows("jobs", [tables])
    assert jobs_row["findings"] == [len(listed["findings"])]
    assert jobs_row["worst_severity"] == ["critical"]


def test_executors_match_the_summary(jobs: list[Job]) -> None:
    for job in jobs:
        rows = parquet_rows("executors", [job.tables])
        executors = job.analysis.summary.executors
        assert rows["executor_id"] == sorted(executors)
        assert rows["task_attempts"] == [executors[e].tasks for e in rows["executor_id"]]
        assert rows["failed_attempts"] == [executors[e].failed for e in rows["executor_id"]]
        assert rows["busy_ms"] == [executors[e].busy_ms for e in rows["executor_id"]]
        for n, executor in enumerate(rows["executor_id"]):
            mine = [e for e in job.task_ends if e["executor_id"] == executor]
            assert ms(rows["first_started_at"][n]) == min(e["start_exec_time"] for e in mine)
            assert ms(rows["last_ended_at"][n]) == max(e["end_exec_time"] for e in mine)
            assert rows["input_rows"][n] == sum(e["metrics"]["input_rows"] for e in mine)


def test_columns_have_their_schemas_types(jobs: list[Job]) -> None:
    pa = require_module("pyarrow", "sql")
    pq = require_module("pyarrow.parquet", "sql")
    for table, columns in TABLES.items():
        read = pq.read_table(io.BytesIO(parquet.table_parquet(table, [j.tables for j in jobs])))
        for column in columns:
            field = read.schema.field(column.name)
            assert str(field.type) == column.type, (table, column.name)
            if column.type == TIMESTAMP:
                assert field.type == pa.timestamp("ms", tz="UTC")
        assert read.schema.metadata is None  # no pandas (nor Arrow) metadata
    stored = pq.ParquetFile(io.BytesIO(parquet.table_parquet("tasks", [jobs[0].tables])))
    assert stored.metadata.row_group(0).column(0).compression == "ZSTD"
    assert stored.metadata.row_group(0).column(0).statistics.has_min_max


def test_the_same_rows_give_the_same_bytes(jobs: list[Job]) -> None:
    require_module("pyarrow", "sql")
    tables = [job.tables for job in jobs]
    again = [job_tables(job.read, job.analysis, job.key) for job in jobs]
    kept = [decode_tables(encode_tables(t)) for t in tables]
    for name in TABLES:
        first = parquet.table_parquet(name, tables)
        assert parquet.table_parquet(name, again) == first
        assert parquet.table_parquet(name, kept) == first
    assert [encode_tables(t) for t in again] == [encode_tables(t) for t in tables]


def test_many_row_groups_read_back_whole(jobs: list[Job], monkeypatch: pytest.MonkeyPatch) -> None:
    pq = require_module("pyarrow.parquet", "sql")
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 100)
    data = parquet.table_parquet("tasks", [j.tables for j in jobs])
    file = pq.ParquetFile(io.BytesIO(data))
    assert file.metadata.num_row_groups > 10
    assert file.read().num_rows == sum(len(j.task_ends) for j in jobs)


def test_a_file_of_no_rows_has_the_schema() -> None:
    pq = require_module("pyarrow.parquet", "sql")
    for table, columns in TABLES.items():
        read = pq.read_table(io.BytesIO(parquet.table_parquet(table, [])))
        assert read.num_rows == 0
        assert [(f.name, str(f.type)) for f in read.schema] == [(c.name, c.type) for c in columns]


def test_hostile_text_survives_as_is(tmp_path: Path) -> None:
    name = "daily \"revenue\"\n<script>alert('x')</script> & \u2028 \\ end"
    error = "</td><script>alert(1)</script>\n\"quoted\" & 'single' \x7f {stage}"
    spec = JobSpec(job_id="hostile", job_name=name, retries=1, errors=(error,))
    key, read, analysis = analysed(write_log(tmp_path, spec, 5))
    tables = decode_tables(encode_tables(job_tables(read, analysis, key)))
    assert parquet_rows("jobs", [tables])["job_name"] == [name]
    errors = {e for e in parquet_rows("tasks", [tables])["error"] if e is not None}
    assert errors and all(e.startswith('</td><script>alert(1)</script>\n"quoted"') for e in errors)
    messages = parquet_rows("findings", [tables])["message"]
    assert any("<script>" in m for m in messages)


def test_a_blob_is_small_and_only_its_own_decodes(jobs: list[Job]) -> None:
    for job in jobs:
        blob = encode_tables(job.tables)
        assert len(blob) < (EXAMPLE_LOG_DIR / job.key).stat().st_size / 10
        back = decode_tables(blob)
        assert all(back.as_lists(t) == job.tables.as_lists(t) for t in TABLES)
    with pytest.raises(ValueError):
        decode_tables(b"not a blob")
    import msgspec
    import zstandard

    other = zstandard.ZstdCompressor().compress(msgspec.msgpack.encode([99, "x", []]))
    with pytest.raises(ValueError):
        decode_tables(other)


def test_extras_skip_a_taskend_the_reader_refused(tmp_path: Path) -> None:
    # A TaskEnd whose executor is a number: the reader drops it as damage; the second reading
    # decodes it, and must not give its metrics to the attempt after it.
    spec = JobSpec(job_id="odd", job_name="q")
    path = write_log(tmp_path, spec, 1)
    lines = path.read_bytes().splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if b'"TaskEnd"' in line)
    odd = json.loads(lines[n])
    odd["data"]["executor_id"] = 7
    odd["data"]["launch_time"] = 1
    odd["data"]["metrics"] = {"input_rows": 12345, "output_rows": 1, "elapsed_compute_nanos": 1}
    lines.insert(n + 1, json.dumps(odd, separators=(",", ":")).encode() + b"\n")
    path.write_bytes(b"".join(lines))
    read = read_log(path)
    ends, _ = plain_records(path)
    kept = [e for e in ends if isinstance(e["executor_id"], str)]
    assert len(read.tasks) == len(kept) == len(ends) - 1
    extras = task_extras(read)
    assert list(extras.launch_time) == [e["launch_time"] for e in kept]
    assert list(extras.input_rows) == [e["metrics"]["input_rows"] for e in kept]
    held = task_extras(read, path.read_bytes())
    assert held == extras


def test_extras_are_missing_where_a_record_lacks_them(tmp_path: Path) -> None:
    spec = JobSpec(job_id="bare", job_name="q")
    path = write_log(tmp_path, spec, 1)
    text = path.read_bytes()
    text = text.replace(b'"launch_time":', b'"launched":', 1)
    text = text.replace(b'"metrics":{"input_rows":', b'"metrics":{"rows_in":', 1)
    text = text.replace(b'"elapsed_compute_nanos":', b'"elapsed_compute_nanos":"x","e":', 1)
    path.write_bytes(text)
    key, read, analysis = analysed(path)
    extras = task_extras(read)
    assert extras.launch_time[0] == MISSING and extras.input_rows[0] == MISSING
    assert extras.output_rows[0] != MISSING and extras.compute_ns[0] == MISSING
    assert MISSING not in extras.launch_time[1:]
    rows = parquet_rows("tasks", [job_tables(read, analysis, key)])
    assert rows["launched_at"][0] is None and rows["input_rows"][0] is None
    assert rows["compute_ns"][0] is None and rows["output_rows"][0] is not None
    path.unlink()  # gone before it is read again: its extras are missing, nothing fails
    gone = task_extras(read)
    assert list(gone.launch_time) == [MISSING] * len(read.tasks)


def test_without_pyarrow_the_message_says_what_to_install(
    jobs: list[Job], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.import_module

    def no_pyarrow(name: str, package: str | None = None) -> Any:
        if name.split(".")[0] == "pyarrow":
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_pyarrow)
    with pytest.raises(UsageError, match=r"pip install 'sitegen\[sql\]'"):
        parquet.table_parquet("jobs", [jobs[0].tables])


def test_the_manifest_describes_every_column() -> None:
    manifest = parquet.schema_json()
    assert manifest["format"] == 1
    assert list(manifest["tables"]) == ["jobs", "stages", "tasks", "findings", "executors"]
    for name, table in manifest["tables"].items():
        assert table["files"] == []
        assert [c["name"] for c in table["columns"]] == [c.name for c in TABLES[name]]
        assert table["columns"][0]["name"] == "job_id"
        for column in table["columns"]:
            assert column["type"] in {"string", "int64", "double", "timestamp[ms, tz=UTC]"}
            assert column["doc"] and "\n" not in column["doc"]
    json.dumps(manifest)


def test_docs_list_every_column() -> None:
    text = (Path(__file__).parent.parent / "docs" / "data.md").read_text()
    for name, columns in TABLES.items():
        assert f"### `{name}`" in text
        for column in columns:
            assert f"| `{column.name}` | {column.type} |" in text, (name, column.name)


@pytest.mark.slow  # a real server
def test_duckdb_queries_the_published_files_over_http(jobs: list[Job], tmp_path: Path) -> None:
    duckdb = require_module("duckdb", "test")
    require_module("duckdb_extension_httpfs", "test")
    from importlib.resources import files

    site = tmp_path / "site"
    manifest = parquet.schema_json()
    halves = [jobs[: len(jobs) // 2], jobs[len(jobs) // 2 :]]
    for name in TABLES:
        for n, part in enumerate(halves):
            data = parquet.table_parquet(name, [job.tables for job in part])
            path = f"{name}/{n:05d}.parquet"
            (site / "data" / name).mkdir(parents=True, exist_ok=True)
            (site / "data" / path).write_bytes(data)
            rows = sum(job.tables.rows(name) for job in part)
            manifest["tables"][name]["files"].append(
                {"path": path, "rows": rows, "bytes": len(data)}
            )
    (site / "data" / "manifest.json").write_text(json.dumps(manifest))
    # The extension from its package: DuckDB's own server is not reachable from a test.
    extension = (
        files("duckdb_extension_httpfs")
        / "extensions"
        / f"v{duckdb.__version__}"
        / "httpfs.duckdb_extension"
    )
    with http_server(site) as port:
        base = f"http://127.0.0.1:{port}/data/"
        con = duckdb.connect(config={"autoinstall_known_extensions": False})
        con.sql(f"LOAD '{extension}'")
        # docs/data.md's DuckDB query: the manifest names the files, HTTP cannot list them.
        con.sql(
            f"SET VARIABLE files = (SELECT list('{base}' || f.path) FROM "
            f"(SELECT unnest(tables.tasks.files) AS f FROM read_json('{base}manifest.json')))"
        )
        found = con.sql(
            "SELECT status, count(*) FROM read_parquet(getvariable('files')) GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        kinds = con.sql(
            f"SELECT typeof(started_at), typeof(duration_ms) FROM '{base}jobs/00000.parquet' LIMIT 1"
        ).fetchall()
    words = [
        ("Failed" if "Failed" in e["status"] else e["status"]) for j in jobs for e in j.task_ends
    ]
    assert found == sorted((w, words.count(w)) for w in set(words))
    assert kinds == [("TIMESTAMP WITH TIME ZONE", "BIGINT")]


@pytest.mark.parametrize("count", [0, 1, SHUFFLE_FROM - 1, SHUFFLE_FROM, SHUFFLE_FROM + 1, 1000])
def test_number_columns_of_any_length_decode_as_they_were(jobs: list[Job], count: int) -> None:
    """Short columns go plain, long ones byte-shuffled: both come back exactly."""
    job = jobs[0].tables
    tables = {
        name: [list(c) if isinstance(c, list) else c for c in cols]
        for name, cols in job.tables.items()
    }
    numbers = array("q", [(-1) ** n * (n * 7_919_000_001) for n in range(count)])
    index = [c.name for c in TABLES["tasks"][1:]].index("duration_ms")
    width = len(numbers)
    tasks = [
        numbers
        if n == index
        else (array(c.typecode, [0] * width) if isinstance(c, array) else [None] * width)
        for n, c in enumerate(tables["tasks"])
    ]
    mixed = JobTables(job.job_id, {**tables, "tasks": tasks})
    assert decode_tables(encode_tables(mixed)).tables["tasks"][index] == numbers
