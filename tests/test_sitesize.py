"""--max-site-size: the newest jobs that fit, raw logs first to go, sizes parsed and reported."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.builder.select.sitesize import (
    LISTING_BYTES_PER_JOB,
    SITE_RESERVE_BYTES,
    parse_size,
)
from sitegen.cli import cli
from sitegen.errors import UsageError
from sitegen.layout import STATE_NAME
from tests.helpers.sitetree import tree


def test_sizes_parse_in_decimal_and_binary_units() -> None:
    assert parse_size("500MB") == 500_000_000
    assert parse_size("1GB") == parse_size("1 gb") == 10**9
    assert parse_size("1.5GiB") == 3 * 2**29
    assert parse_size("123456") == parse_size("123456B") == 123_456
    for bad in ("", "MB", "1TB", "-1MB", "1 MB extra"):
        with pytest.raises(UsageError):
            parse_size(bad)


def _site_size(site: Path) -> int:
    return sum(len(data) for data in tree(site).values())


@pytest.mark.slow  # three builds of the examples
def test_max_site_size_keeps_the_newest_jobs_that_fit(
    tmp_path: Path, example_logs: Path, example_site: tuple[Path, BuildReport]
) -> None:
    _, whole = example_site  # the examples with no limit
    limit = whole.site_bytes // 2
    site = tmp_path / "site"
    report = build(BuildOptions(example_logs, site, max_site_size=limit, raw_logs=False))
    assert 0 < report.published < whole.published
    assert report.size_dropped == whole.published - report.published
    assert report.site_bytes == _site_size(site) <= limit
    newest = [j.job_id for j in whole.jobs][: report.published]
    assert [j.job_id for j in report.jobs] == newest
    # The limit is a run option: the next build is a no-op, and equals a clean one.
    again = build(BuildOptions(example_logs, site, max_site_size=limit, raw_logs=False))
    assert again.up_to_date and again.site_bytes == report.site_bytes
    build(BuildOptions(example_logs, tmp_path / "clean", max_site_size=limit, raw_logs=False))
    assert tree(site) == tree(tmp_path / "clean")


@pytest.mark.slow  # four builds of the examples
def test_raw_logs_go_first_when_that_lets_more_jobs_fit(
    tmp_path: Path, example_logs: Path, example_site: tuple[Path, BuildReport]
) -> None:
    _, whole = example_site  # the examples with no limit
    lean = build(BuildOptions(example_logs, tmp_path / "lean", raw_logs=False))
    files = tree(tmp_path / "lean")
    jobs = sum(len(d) for name, d in files.items() if name.startswith(("jobs/", "api/job/")))
    # Each job's rows of the SQL tables count as their blob in the state.
    state = sqlite3.connect(tmp_path / "lean" / STATE_NAME)
    (rows,) = state.execute("SELECT sum(length(rows)) FROM data_row").fetchone()
    state.close()
    # What the size model counts for every job without its raw log: exactly that fits.
    limit = SITE_RESERVE_BYTES + jobs + rows + lean.published * LISTING_BYTES_PER_JOB
    site = tmp_path / "site"
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(site)]
    result = CliRunner().invoke(cli, [*args, "--max-site-size", str(limit), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["raw_logs_left_out"] is True
    assert summary["jobs_published"] == whole.published
    assert summary["jobs_over_size_limit"] == 0
    assert summary["site_bytes"] == _site_size(site) <= limit
    assert not list(site.rglob("eventlog.gz"))
    assert tree(site) == tree(tmp_path / "lean")
    # The next build keeps going without them, and says so: no rebuild on every run.
    text = CliRunner().invoke(cli, [*args, "--max-site-size", str(limit)]).output
    assert "is up to date" in text
    assert "Raw logs left out to fit --max-site-size" in text


def test_max_site_size_from_the_environment(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(site)]
    env = {"SITEGEN_MAX_SITE_SIZE": "300kB"}
    result = CliRunner().invoke(cli, [*args, "--no-raw-logs", "--format", "json"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["jobs_over_size_limit"] > 0
    assert summary["site_bytes"] <= 300_000
    bad = CliRunner().invoke(cli, args, env={"SITEGEN_MAX_SITE_SIZE": "lots"})
    assert bad.exit_code == 2 and "lots" in bad.output
