"""Job ids equal once case-folded or NFC-normalised: both published, an id-collision warning."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.check import check
from sitegen.cli import cli
from tests.helpers.logs import job_lines, write

NFC = unicodedata.normalize("NFC", "café1")
NFD = unicodedata.normalize("NFD", "café1")


def colliding(logs: Path) -> Path:
    logs.mkdir()
    for job_id in ("AbC1234", "abc1234", NFC, NFD, "other"):
        write(logs / f"{job_id}.eventlog", job_lines(job_id))
    return logs


def test_colliding_ids_are_published_and_named_everywhere(tmp_path: Path) -> None:
    logs = colliding(tmp_path / "logs")
    report = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert report.published == 5
    collisions = [p for p in report.problems if p.kind == "id-collision"]
    assert [(p.file, p.severity) for p in collisions] == [
        ("abc1234.eventlog", "warning"),
        (f"{NFC}.eventlog", "warning"),
    ]
    assert "equals 'AbC1234' (of AbC1234.eventlog) once case-folded" in collisions[0].message
    assert f"equals {NFD!r} (of {NFD}.eventlog) once NFC-normalised" in collisions[1].message
    assert "(macOS, Windows) one job overwrites the other" in collisions[0].message
    for job_id in ("AbC1234", "abc1234", NFC, NFD):
        assert (tmp_path / "site/jobs" / job_id / "index.html").is_file()
    page = (tmp_path / "site/problems/index.html").read_text()
    assert page.count("id-collision") >= 2
    # check agrees, and a build with nothing to do still says it.
    assert check(logs, workers=1).problems == report.problems
    again = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert again.up_to_date and again.problems == report.problems
    result = CliRunner().invoke(
        cli,
        [
            "build",
            "--event-log-dir",
            str(logs),
            "--output",
            str(tmp_path / "s2"),
            "--format",
            "json",
        ],
    )
    kinds = [p["kind"] for p in json.loads(result.output)["problems"]]
    assert kinds.count("id-collision") == 2 and result.exit_code == 0
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 0
    assert "abc1234.eventlog: warning: id-collision: job id 'abc1234' equals" in result.output


def test_a_collision_goes_when_one_of_the_logs_does(tmp_path: Path) -> None:
    logs = colliding(tmp_path / "logs")
    build(BuildOptions(logs, tmp_path / "site", workers=1))
    (logs / "abc1234.eventlog").unlink()
    report = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert [p.file for p in report.problems if p.kind == "id-collision"] == [f"{NFC}.eventlog"]
