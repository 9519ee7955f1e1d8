"""The SQL tables under data/ as a real build writes them: full, incremental, retention."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.reduce import datafiles
from sitegen.examples.generator import BASE_TIME_MS
from tests.conftest import require_module
from tests.helpers import sqldata
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree

TABLES = ("jobs", "stages", "tasks", "findings", "executors")


@pytest.fixture(autouse=True)
def _pyarrow() -> None:
    require_module("pyarrow", "sql")


def manifest(site: Path) -> dict[str, Any]:
    return json.loads((site / "data/manifest.json").read_bytes())


def job_ids(site: Path) -> list[str]:
    return sorted(r["job_id"] for r in sqldata.rows(site, "jobs"))


def listed(site: Path) -> list[str]:
    return sorted(j["job_id"] for j in json.loads((site / "api/jobs").read_bytes()))


def data_tree(site: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(site).items() if k.startswith("data/")}


def dated_logs(logs: Path, count: int, first: int = 0) -> None:
    """Write ``count`` small jobs an hour apart, the newest last."""
    logs.mkdir(exist_ok=True)
    for n in range(first, first + count):
        start = BASE_TIME_MS - (100 - n) * 3_600_000
        write(logs / f"job{n:03}.eventlog", job_lines(f"job{n:03}", start_ms=start))


def test_a_build_publishes_every_table_of_the_published_jobs(
    example_site: tuple[Path, Any],
) -> None:
    site, report = example_site
    found = manifest(site)
    assert found["format"] == 1 and list(found["tables"]) == list(TABLES)
    for table in TABLES:
        files = found["tables"][table]["files"]
        assert files, table
        for f in files:  # the manifest's figures are the files'
            import pyarrow.parquet as pq

            path = site / "data" / f["path"]
            assert path.stat().st_size == f["bytes"]
            assert pq.ParquetFile(path).metadata.num_rows == f["rows"]
    # Exactly the jobs the site lists: no incomplete, malformed or unrecorded log's.
    assert job_ids(site) == listed(site) and len(listed(site)) == report.published
    # Each job's rows agree with its API files and findings.json.
    tasks = sqldata.rows(site, "tasks")
    stages = sqldata.rows(site, "stages")
    findings = sqldata.rows(site, "findings")
    for job in sqldata.rows(site, "jobs"):
        job_id = job["job_id"]
        api = json.loads((site / f"api/job/{job_id}/index.json").read_bytes())
        assert job["status"].lower() == str(api["status"]).lower()
        assert job["job_name"] == api["job_name"]
        mine = [t for t in tasks if t["job_id"] == job_id]
        assert job["task_attempts"] == len(mine)
        assert job["failed_attempts"] == sum(1 for t in mine if t["status"] != "Successful")
        assert job["stages"] == len([s for s in stages if s["job_id"] == job_id])
        listed_findings = json.loads((site / f"jobs/{job_id}/findings.json").read_bytes())
        rows = [f for f in findings if f["job_id"] == job_id]
        assert job["findings"] == len(rows) == len(listed_findings["findings"])
        assert [r["kind"] for r in rows] == [f["kind"] for f in listed_findings["findings"]]


@pytest.fixture
def segmented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Ten jobs built into segments of four; return the log dir and the site."""
    monkeypatch.setattr(datafiles, "SEGMENT_JOBS", 4)
    logs, site = tmp_path / "logs", tmp_path / "site"
    dated_logs(logs, 10)
    build(BuildOptions(logs, site, workers=1))
    return logs, site


def test_a_new_log_rewrites_only_the_newest_segment(segmented: tuple[Path, Path]) -> None:
    logs, site = segmented
    files = manifest(site)["tables"]["jobs"]["files"]
    assert [f["rows"] for f in files] == [4, 4, 2]  # oldest first, 4 a segment
    before = data_tree(site)
    dated_logs(logs, 1, first=10)
    report = build(BuildOptions(logs, site, workers=1))
    after = data_tree(site)
    changed = {k for k in after if before.get(k) != after[k]}
    # The newest segment's files and the manifest; nothing else of data/ (its findings file
    # holds none before and after: the same bytes).
    newest = {f"data/{t}/00002.parquet" for t in TABLES} | {"data/manifest.json"}
    assert {"data/jobs/00002.parquet", "data/tasks/00002.parquet"} < changed <= newest
    assert report.publish is not None and report.publish.changed is not None
    assert changed <= set(report.publish.changed)
    assert job_ids(site) == listed(site) and len(job_ids(site)) == 11


def test_a_removed_log_leaves_its_segment_and_an_emptied_one_goes(
    segmented: tuple[Path, Path],
) -> None:
    logs, site = segmented
    before = data_tree(site)
    (logs / "job001.eventlog").unlink()
    build(BuildOptions(logs, site, workers=1))
    after = data_tree(site)
    changed = {k for k in after if before.get(k) != after[k]}
    oldest = {f"data/{t}/00000.parquet" for t in TABLES} | {"data/manifest.json"}
    assert {"data/jobs/00000.parquet", "data/tasks/00000.parquet"} < changed <= oldest
    assert "job001" not in {r["job_id"] for t in TABLES for r in sqldata.rows(site, t)}
    for n in (8, 9):  # segment 2 emptied: its files are gone, and the manifest says so
        (logs / f"job{n:03}.eventlog").unlink()
    build(BuildOptions(logs, site, workers=1))
    assert not any(k.startswith("data/jobs/00002") for k in data_tree(site))
    assert [f["path"] for f in manifest(site)["tables"]["jobs"]["files"]] == [
        "jobs/00000.parquet",
        "jobs/00001.parquet",
    ]
    assert job_ids(site) == listed(site)


@pytest.mark.parametrize("limit", [3, None])
def test_retention_applies_to_the_tables_as_to_the_pages(tmp_path: Path, limit: int | None) -> None:
    logs, site, clean = tmp_path / "logs", tmp_path / "site", tmp_path / "clean"
    dated_logs(logs, 6)
    build(BuildOptions(logs, site, max_jobs=5, workers=1))
    assert job_ids(site) == listed(site) == [f"job{n:03}" for n in range(1, 6)]
    build(BuildOptions(logs, site, max_jobs=limit, workers=1))
    assert job_ids(site) == listed(site)
    assert {r["job_id"] for r in sqldata.rows(site, "tasks")} == set(listed(site))
    # In place or afresh, the same files (a segment's rows in start order either way).
    build(BuildOptions(logs, clean, max_jobs=limit, workers=1))
    assert data_tree(site) == data_tree(clean)


def test_no_data_publishes_no_tables(tmp_path: Path) -> None:
    logs, site = tmp_path / "logs", tmp_path / "site"
    dated_logs(logs, 2)
    build(BuildOptions(logs, site, data=False, workers=1))
    assert not (site / "data").exists()
    # Turning it on later builds the site afresh once (the options' fingerprint changed).
    report = build(BuildOptions(logs, site, data=True, workers=1))
    assert report.rebuilt == 2 and job_ids(site) == ["job000", "job001"]


def test_rows_of_another_layout_make_a_full_build_not_wrong_numbers(tmp_path: Path) -> None:
    """A state whose row blobs another sitegen wrote is taken for damaged: built afresh."""
    import sqlite3

    import msgspec
    import zstandard

    from sitegen.layout import STATE_NAME

    logs, site = tmp_path / "logs", tmp_path / "site"
    dated_logs(logs, 3)
    build(BuildOptions(logs, site, workers=1))
    before = sqldata.rows(site, "tasks")
    db = sqlite3.connect(site / STATE_NAME)
    other = zstandard.ZstdCompressor().compress(msgspec.msgpack.encode([1, "job000", []]))
    db.execute("UPDATE data_row SET rows = ?", (other,))
    db.commit()
    db.close()
    dated_logs(logs, 1, first=3)
    report = build(BuildOptions(logs, site, workers=1))
    assert report.rebuilt == 4  # every log read again
    assert sqldata.rows(site, "tasks")[: len(before)] == before
    assert job_ids(site) == listed(site)
