"""SQL tables (``data/``) for the query page's tests, until a build writes its own.

Written as the build's writer does (render/parquet.py): zstd, delta-encoded integers,
dictionary text, times in UTC milliseconds, no Arrow schema; tasks in two files of several
row groups, so a view reads a list of files and a query skips row groups. Deterministic.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
STRING, INT64, DOUBLE, TIMESTAMP = "string", "int64", "double", "timestamp[ms, tz=UTC]"
T0 = 1_767_225_600_000  # 2026-01-01 UTC, in ms
NAMES = ["nightly-etl"] * 9 + ["tpch-q1", "tpch-q3", "tpch-q5", 'daily revenue <report> & "']
EXECUTORS = [f"executor-{n}" for n in range(1, 6)]
ERRORS = [
    "Arrow error: Divide by zero error",
    "Execution error: Failed to fetch partition from executor: connection reset by peer",
    "Resources exhausted: Failed to allocate additional 512.0 MB for HashJoinInput",
]

# fmt: off
COLUMNS: dict[str, list[tuple[str, str]]] = {
    "jobs": [
        ("job_id", STRING), ("job_name", STRING), ("status", STRING), ("queued_at", TIMESTAMP),
        ("started_at", TIMESTAMP), ("ended_at", TIMESTAMP), ("duration_ms", INT64),
        ("stages", INT64), ("task_attempts", INT64), ("failed_attempts", INT64),
        ("input_rows", INT64), ("output_rows", INT64), ("failure", STRING),
    ],
    "stages": [
        ("job_id", STRING), ("stage_id", INT64), ("status", STRING), ("tasks", INT64),
        ("started_at", TIMESTAMP), ("ended_at", TIMESTAMP), ("duration_ms", INT64),
        ("input_rows", INT64),
    ],
    "tasks": [
        ("job_id", STRING), ("stage_id", INT64), ("task_id", INT64), ("attempt", INT64),
        ("executor_id", STRING), ("status", STRING), ("error", STRING),
        ("started_at", TIMESTAMP), ("ended_at", TIMESTAMP), ("duration_ms", INT64),
        ("input_rows", INT64),
    ],
    "findings": [
        ("job_id", STRING), ("kind", STRING), ("severity", STRING), ("impact_ms", INT64),
        ("stage_id", INT64), ("value", DOUBLE), ("message", STRING),
    ],
    "executors": [
        ("job_id", STRING), ("executor_id", STRING), ("task_attempts", INT64),
        ("failed_attempts", INT64), ("busy_ms", INT64),
    ],
}
# fmt: on
ROW_GROUP_ROWS = 700


def _rows() -> dict[str, list[dict[str, Any]]]:
    """Return every table's rows, made from one seed."""
    rng = random.Random(39)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in COLUMNS}
    for n in range(40):
        job_id, name = f"job-{n:03d}", NAMES[n % len(NAMES)]
        start = T0 + n * 3_600_000
        failed_job = n % 7 == 3
        attempts = failed = 0
        input_rows = 0
        busy: dict[str, list[int]] = {}
        end = start
        for stage in range(1, 4):
            stage_start = start + (stage - 1) * 60_000
            stage_rows = 0
            for task in range(rng.randint(10, 60)):
                executor = rng.choice(EXECUTORS)
                # The third executor fails more; some durations are unknown (null).
                fails = rng.random() < (0.15 if executor == "executor-3" else 0.03)
                began = stage_start + rng.randint(0, 20_000)
                took = None if rng.random() < 0.02 else rng.randint(50, 40_000)
                rows_read = rng.randint(1_000, 90_000)
                stage_rows += rows_read
                rows["tasks"].append(
                    {
                        "job_id": job_id, "stage_id": stage, "task_id": task, "attempt": 0,
                        "executor_id": executor, "status": "Failed" if fails else "Successful",
                        "error": rng.choice(ERRORS) if fails else None,
                        "started_at": began, "ended_at": None if took is None else began + took,
                        "duration_ms": took, "input_rows": rows_read,
                    }
                )  # fmt: skip
                attempts += 1
                failed += fails
                busy.setdefault(executor, [0, 0, 0])
                busy[executor][0] += 1
                busy[executor][1] += fails
                busy[executor][2] += took or 0
                end = max(end, began + (took or 0))
            input_rows += stage_rows
            rows["stages"].append(
                {
                    "job_id": job_id, "stage_id": stage,
                    "status": "Failed" if failed_job and stage == 3 else "Completed",
                    "tasks": sum(1 for t in rows["tasks"] if t["job_id"] == job_id and t["stage_id"] == stage),
                    "started_at": stage_start, "ended_at": end, "duration_ms": end - stage_start,
                    "input_rows": stage_rows,
                }
            )  # fmt: skip
        rows["jobs"].append(
            {
                "job_id": job_id, "job_name": name, "status": "Failed" if failed_job else "Completed",
                "queued_at": start - 500, "started_at": start, "ended_at": end,
                "duration_ms": end - start, "stages": 3, "task_attempts": attempts,
                "failed_attempts": failed, "input_rows": input_rows * (30 if n % 5 == 0 else 1),
                "output_rows": input_rows // 10,
                "failure": "Job failed due to stage 3 failed: Arrow error: Divide by zero error"
                if failed_job else None,
            }
        )  # fmt: skip
        for executor, (ran, lost, ms) in sorted(busy.items()):
            rows["executors"].append(
                {"job_id": job_id, "executor_id": executor, "task_attempts": ran,
                 "failed_attempts": lost, "busy_ms": ms}
            )  # fmt: skip
        if failed:
            rows["findings"].append(
                {"job_id": job_id, "kind": "failed-attempts", "severity": "warning",
                 "impact_ms": failed * 1000, "stage_id": None, "value": float(failed),
                 "message": f"{failed} task attempts failed"}
            )  # fmt: skip
    return rows


def write(data_dir: Path) -> dict[str, Any]:
    """Write the tables and ``manifest.json`` into ``data_dir``; return the manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {
        STRING: pa.string(), INT64: pa.int64(), DOUBLE: pa.float64(),
        TIMESTAMP: pa.timestamp("ms", tz="UTC"),
    }  # fmt: skip
    manifest: dict[str, Any] = {"format": 1, "tables": {}}
    for name, rows in _rows().items():
        columns = COLUMNS[name]
        schema = pa.schema([(c, types[t]) for c, t in columns])
        table = pa.Table.from_pylist(rows, schema=schema)
        parts = [table] if name != "tasks" else [table.slice(0, 1000), table.slice(1000)]
        files = []
        for n, part in enumerate(parts):
            path = data_dir / name / f"{n:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(
                part,
                path,
                row_group_size=ROW_GROUP_ROWS,
                compression="zstd",
                use_dictionary=[c for c, t in columns if t == STRING],
                column_encoding={
                    c: "DELTA_BINARY_PACKED" for c, t in columns if t in (INT64, TIMESTAMP)
                },
                store_schema=False,
            )
            files.append(
                {
                    "path": f"{name}/{n:05d}.parquet",
                    "rows": part.num_rows,
                    "bytes": path.stat().st_size,
                }
            )
        manifest["tables"][name] = {
            "columns": [
                {"name": c, "type": t, "doc": f"The {c.replace('_', ' ')}."} for c, t in columns
            ],
            "files": files,
        }
    (data_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def read(site: Path, table: str) -> Any:
    """Return one table of a site's ``data/`` as a pyarrow Table, its files read in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = site / "data"
    manifest = json.loads((data / MANIFEST).read_text())
    parts = [pq.read_table(data / f["path"]) for f in manifest["tables"][table]["files"]]
    return pa.concat_tables(parts)
