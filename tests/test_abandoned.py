"""A ``.running`` log its scheduler left behind is an abandoned run, judged by the build's clock."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from sitegen.model import ProblemKind
from tests.helpers.logs import job_lines, write

NOW = 1_767_225_600  # the tests' SOURCE_DATE_EPOCH
HOUR = 3600


def running_log(logs: Path, job_id: str, age_s: int) -> Path:
    """Write a .running log last written ``age_s`` seconds before NOW."""
    log = write(logs / f"{job_id}.eventlog.running", job_lines(job_id)[:4])
    os.utime(log, (NOW - age_s, NOW - age_s))
    return log


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(NOW))
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "done001.eventlog", job_lines("done001"))
    running_log(logs, "fresh01", HOUR)
    running_log(logs, "left001", 3 * 24 * HOUR)
    return logs


def test_a_running_log_past_stale_after_is_abandoned(logs: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site))
    assert report.classifications["abandoned"] == 1
    assert report.classifications["incomplete"] == 1
    (problem,) = [p for p in report.problems if p.kind is ProblemKind.ABANDONED]
    assert problem.file == "left001.eventlog.running"
    assert problem.message == (
        "last written 3 days ago; the scheduler stopped before the job ended"
    )
    assert str(problem.severity) == "warning" and problem.skipped
    assert {r.job_id: r.abandoned is not None for r in report.running} == {
        "fresh01": False,
        "left001": True,
    }
    running = (site / "running" / "index.html").read_text()
    assert running.count(">abandoned</span>") == 1
    assert "last written 3 days ago" in running
    problems = (site / "problems" / "index.html").read_text()
    assert "left001.eventlog.running" in problems and "abandoned" in problems


def test_check_warns_and_passes_but_build_strict_fails(logs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert out.exit_code == 0, out.output
    assert (
        "left001.eventlog.running: warning: abandoned: last written 3 days ago; "
        "the scheduler stopped before the job ended"
    ) in out.output
    report = json.loads(
        runner.invoke(cli, ["check", "--event-log-dir", str(logs), "--format", "json"]).output
    )
    assert report["classifications"]["abandoned"] == 1
    assert report["problems_by_kind"]["abandoned"] == 1
    assert report["ok"] is True
    site = tmp_path / "site"
    args = ["build", "--event-log-dir", str(logs), "--output", str(site)]
    assert runner.invoke(cli, args).exit_code == 0
    strict = runner.invoke(cli, [*args, "--strict"])
    assert strict.exit_code == 1
    built = json.loads(runner.invoke(cli, [*args, "--format", "json"]).output)
    assert built["classifications"]["abandoned"] == 1


def test_stale_after_sets_the_age_and_zero_turns_it_off(logs: Path, tmp_path: Path) -> None:
    never = build(BuildOptions(logs, tmp_path / "never", stale_after="0"))
    assert never.classifications["abandoned"] == 0
    assert never.classifications["incomplete"] == 2
    soon = build(BuildOptions(logs, tmp_path / "soon", stale_after="30m"))
    assert soon.classifications["abandoned"] == 2


def test_a_build_with_nothing_changed_judges_running_logs_again(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    first = build(BuildOptions(logs, site))
    assert first.classifications["abandoned"] == 1
    assert build(BuildOptions(logs, site)).up_to_date
    # Two days later no file changed, but the clock says fresh01 was left behind too.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(NOW + 2 * 24 * HOUR))
    later = build(BuildOptions(logs, site))
    assert later.classifications["abandoned"] == 2
    assert later.rebuilt == 1
    # Written to again: running once more.
    fresh = logs / "fresh01.eventlog.running"
    with fresh.open("ab") as f:
        f.write(job_lines("fresh01")[4])
    os.utime(fresh, (NOW + 2 * 24 * HOUR, NOW + 2 * 24 * HOUR))
    again = build(BuildOptions(logs, site))
    assert again.classifications["abandoned"] == 1


def test_a_bad_stale_after_is_a_usage_error(logs: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs), "--stale-after", "soon"])
    assert out.exit_code == 2
    assert "is not a number followed by s, m, h, d or w" in out.output
