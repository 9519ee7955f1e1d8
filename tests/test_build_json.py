from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli import cli
from sitegen.layout import STATE_NAME


@pytest.mark.slow  # full builds through the CLI
def test_build_format_json_prints_one_object(tmp_path: Path, example_logs: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(
        cli,
        ["build", "--event-log-dir", str(example_logs), "--output", str(out), "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 1
    summary = json.loads(result.output)
    seconds = summary.pop("seconds")
    assert isinstance(seconds, float) and 0 < seconds < 60
    # Each step's wall time, in order, within the build's.
    phases = summary.pop("phases")
    assert list(phases) == ["map", "select", "run_contexts", "reduce", "publish"]
    assert all(t >= 0 for t in phases.values()) and sum(phases.values()) <= seconds
    # The command's CPU in each step: the same steps; the map and the reduce use some.
    cpu = summary.pop("phases_cpu")
    assert list(cpu) == list(phases) and all(t >= 0 for t in cpu.values())
    assert cpu["map"] > 0 and cpu["reduce"] > 0
    problems = summary.pop("problems")
    # Every file of the site; the build's state aside (not served, not counted).
    files = [p for p in out.rglob("*") if p.is_file() and p.name != STATE_NAME]
    assert summary == {
        "output": str(out),
        "logs": 28,
        "jobs_published": 25,
        "jobs_outside_retention": 0,
        "jobs_over_size_limit": 0,
        "raw_logs_left_out": False,
        "site_bytes": sum(p.stat().st_size for p in files),
        "classifications": {
            "completed": 25,
            "incomplete": 1,
            "newer-version": 0,
            "malformed": 1,
            "unreadable": 0,
            "not-a-log": 0,
            "abandoned": 0,  # every classification is counted, none or not
            "ended-unrecorded": 1,
        },
        "skipped": {"ended-unrecorded": 1, "incomplete": 1, "malformed": 1},
        "files_written": len(files),
        "bytes_written": sum(p.stat().st_size for p in files),
        "archive": None,
    }
    assert problems == [
        {
            "file": "0382W2C5NR000.eventlog",
            "line": None,
            "kind": "ended-unrecorded",
            "message": "no JobEnd record, and its dir's scheduler names a log .eventlog only"
            " once its job ended (Ballista #2405): the job ended unrecorded",
            "job_id": "0382W2C5NR000",
            "skipped": True,
        },
        {
            "file": "0d9TH4Q.eventlog",
            "line": 14,
            "kind": "malformed",
            "message": "malformed JobEnd: Expected `int`, got `str` - at `$.index.num_stages`",
            "job_id": "0d9TH4Q",
            "skipped": True,
        },
        {
            "file": "GHZbKoX.eventlog.running",
            "line": None,
            "kind": "incomplete",
            "message": "still running (.eventlog.running): no JobEnd record yet",
            "job_id": "GHZbKoX",
            "skipped": True,
        },
    ]


@pytest.mark.slow  # full builds through the CLI
def test_build_json_keeps_strict_exit_code(tmp_path: Path, example_logs: Path) -> None:
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, [*args, "--format", "json", "--strict"])
    assert result.exit_code == 1
    assert json.loads(result.output)["jobs_published"] == 25


def test_build_json_errors_go_to_stderr(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["build", "--event-log-dir", str(tmp_path / "missing"), "--format", "json"]
    )
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: {tmp_path / 'missing'}: event-log dir does not exist\n"
