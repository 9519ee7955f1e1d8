from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.builder.select.retention import parse_age
from sitegen.errors import UsageError
from sitegen.examples.generator import BASE_TIME_MS
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


def listed(site: Path) -> list[str]:
    return [j["job_id"] for j in json.loads((site / "api/jobs").read_bytes())]


@pytest.fixture
def dated_logs(tmp_path: Path) -> Path:
    """Ten jobs, one a day, the newest ending on the build's date (SOURCE_DATE_EPOCH)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for day in range(10):
        start = BASE_TIME_MS - day * 86_400_000 - 3_600_000
        write(logs / f"day{day}.eventlog", job_lines(f"day{day}", start_ms=start))
    return logs


def test_max_jobs_keeps_the_newest(tmp_path: Path, dated_logs: Path) -> None:
    report = build(BuildOptions(dated_logs, tmp_path / "site", max_jobs=3))
    assert listed(tmp_path / "site") == ["day0", "day1", "day2"]
    assert report.published == 3 and report.retention_dropped == 7
    assert sorted(p.name for p in (tmp_path / "site/api/job").iterdir()) == ["day0", "day1", "day2"]
    assert sorted(p.name for p in (tmp_path / "site/jobs").iterdir()) == ["day0", "day1", "day2"]
    assert "day3" not in (tmp_path / "site/index.html").read_text()


def test_max_age_drops_jobs_that_ended_before(tmp_path: Path, dated_logs: Path) -> None:
    # SOURCE_DATE_EPOCH is BASE_TIME_MS (see conftest): day N ended about N days earlier.
    report = build(BuildOptions(dated_logs, tmp_path / "site", max_age="4d"))
    assert listed(tmp_path / "site") == ["day0", "day1", "day2", "day3"]
    assert report.retention_dropped == 6
    both = build(BuildOptions(dated_logs, tmp_path / "both", max_age="4d", max_jobs=2))
    assert listed(tmp_path / "both") == ["day0", "day1"] and both.retention_dropped == 8


@pytest.mark.slow  # builds compared with clean builds
def test_retention_changes_are_incremental_and_equal_clean(
    tmp_path: Path, dated_logs: Path
) -> None:
    site = tmp_path / "site"
    build(BuildOptions(dated_logs, site, max_jobs=3))
    for n, limit in enumerate([6, 2, None, 4]):
        report = build(BuildOptions(dated_logs, site, max_jobs=limit))
        assert report.rebuilt < 10  # only jobs coming back onto the site are rendered
        clean = tmp_path / f"clean{n}"
        build(BuildOptions(dated_logs, clean, max_jobs=limit))
        assert tree(site) == tree(clean)


def test_age_moves_on_without_log_changes(
    tmp_path: Path, dated_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    build(BuildOptions(dated_logs, site, max_age="4d"))
    assert build(BuildOptions(dated_logs, site, max_age="4d")).up_to_date
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(BASE_TIME_MS // 1000 + 2 * 86_400))
    report = build(BuildOptions(dated_logs, site, max_age="4d"))
    assert not report.up_to_date
    assert listed(site) == ["day0", "day1"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("45s", 45),
        ("90m", 5400),
        ("12h", 43200),
        ("30d", 2592000),
        ("2w", 1209600),
        (" 1.5 d ", 129600),
    ],
)
def test_parse_age(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "-1d", "30days", "1e3s"])
def test_parse_age_refuses(text: str) -> None:
    with pytest.raises(UsageError, match="is not a number followed by s, m, h, d or w"):
        parse_age(text)


def test_logs_from_several_dirs(tmp_path: Path) -> None:
    current, archive = tmp_path / "current", tmp_path / "archive"
    current.mkdir()
    archive.mkdir()
    write(current / "a.eventlog", job_lines("a", start_ms=3_000_000))
    write(archive / "b.eventlog", job_lines("b", start_ms=2_000_000))
    # The same job in both: the copy that completed later wins, the other is reported.
    write(current / "c.eventlog", job_lines("c", start_ms=1_000_000))
    write(archive / "c.eventlog", job_lines("c", start_ms=500_000))
    report = build(BuildOptions((current, archive), tmp_path / "site"))
    assert listed(tmp_path / "site") == ["a", "b", "c"]
    assert [(p.file, str(p.kind)) for p in report.problems] == [
        ("archive/c.eventlog", "duplicate-id")
    ]
    assert "current/c.eventlog, which completed later" in report.problems[0].message
    # Incremental across directories: removing the archive copy changes nothing published.
    (archive / "c.eventlog").unlink()
    again = build(BuildOptions((current, archive), tmp_path / "site"))
    assert again.problems == [] and listed(tmp_path / "site") == ["a", "b", "c"]


def test_raw_logs_are_published_gzip_compressed(
    tmp_path: Path, example_logs: Path, example_site: tuple[Path, BuildReport]
) -> None:
    site, report = example_site  # built from the same logs as example_logs holds
    for job in report.jobs:
        packed = site / "jobs" / job.job_id / "eventlog.gz"
        assert gzip.decompress(packed.read_bytes()) == (example_logs / job.file).read_bytes()
        assert job.raw_log_bytes == packed.stat().st_size < job.log_bytes
        page = (site / "jobs" / job.job_id / "index.html").read_text()
        assert f'{job.job_id}/eventlog.gz" download="{job.job_id}.eventlog.gz"' in page
    # A .gz log is published as it is.
    first = report.jobs[0]
    gz = tmp_path / "gzlogs"
    gz.mkdir()
    original = gzip.compress((example_logs / first.file).read_bytes(), mtime=0)
    (gz / f"{first.file}.gz").write_bytes(original)
    build(BuildOptions(gz, tmp_path / "gzsite"))
    assert (tmp_path / "gzsite/jobs" / first.job_id / "eventlog.gz").read_bytes() == original
    # --no-raw-logs: no copies, no links.
    build(BuildOptions(example_logs, tmp_path / "bare", raw_logs=False))
    assert not list((tmp_path / "bare/jobs").rglob("eventlog.gz"))
    assert "eventlog.gz" not in (tmp_path / "bare/jobs" / first.job_id / "index.html").read_text()
