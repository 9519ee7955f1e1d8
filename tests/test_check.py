from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.check import check
from sitegen.cli import cli
from sitegen.model import SEVERITY, ProblemKind
from tests.helpers.logs import job_lines, record, write


def every_problem(logs: Path) -> Path:
    """Write a log dir with one log of every classification and problem kind."""
    logs.mkdir()
    write(logs / "good.eventlog", job_lines("good"))
    write(logs / "run.eventlog.running", job_lines("run")[:4])
    left = write(logs / "left.eventlog.running", job_lines("left")[:4])
    # Not written to for 3 days before the tests' SOURCE_DATE_EPOCH: abandoned.
    os.utime(left, (1_767_225_600 - 3 * 86_400,) * 2)
    # No JobEnd, in a dir that lists .running logs (Ballista #2405 naming): it ended.
    write(logs / "dead.eventlog", job_lines("dead")[:3])
    newer = job_lines("newer")
    newer[-1] = newer[-1].replace(b'"version":1', b'"version":3', 1)
    write(logs / "newer.eventlog", newer)
    bad = job_lines("bad")
    bad[-1] = bad[-1].replace(b'"completed_at":', b'"completed_at":"soon","x":', 1)
    write(logs / "bad.eventlog", bad)
    (logs / "bin.eventlog").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (logs / "cut.eventlog.gz").write_bytes(gzip.compress(b"".join(job_lines("cut")))[:-6])
    (logs / "prose.eventlog").write_text("hello\nthis is not a log\n")
    write(logs / "evil.eventlog", job_lines("a/b"))
    write(logs / "dup.eventlog", job_lines("dup", start_ms=2_000_000))
    write(logs / "dup-old.eventlog", job_lines("dup", start_ms=1_000_000))
    write(logs / "renamed.eventlog", job_lines("real-id"))
    write(logs / "gOOd.eventlog", job_lines("gOOd"))  # "good" once case-folded
    write(logs / "pct%41.eventlog", job_lines("pct%41"))  # the TUI would ask for "pctA"
    torn = job_lines("torn")
    n = next(n for n, line in enumerate(torn) if line.startswith(b'{"ev":"TaskEnd"'))
    torn[n] = torn[n].replace(b'"launch_time":', b'"launch_time":NaN,"x":', 1)
    write(logs / "torn.eventlog", torn)
    return logs


def test_check_text_lists_every_problem_and_exits_1(tmp_path: Path) -> None:
    logs = every_problem(tmp_path / "logs")
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "bad.eventlog:12: error: malformed: malformed JobEnd: Expected `int`, got `str`"
        " - at `$.completed_at`",
        "bin.eventlog:1: error: unreadable: not UTF-8 text (binary data)",
        "cut.eventlog.gz:13: error: unreadable: gzip data is truncated (the file ends mid-stream)",
        "dead.eventlog: warning: ended-unrecorded: no JobEnd record, and its dir's scheduler"
        " names a log .eventlog only once its job ended (Ballista #2405): the job ended"
        " unrecorded",
        "dup-old.eventlog:12: warning: id-mismatch: file name says 'dup-old' but JobEnd.index"
        " says 'dup'; published under the JobEnd id",
        "dup-old.eventlog: error: duplicate-id: job id 'dup' is also in dup.eventlog,"
        " which completed later; this log was not published",
        "evil.eventlog:12: error: unsafe-id: job id 'a/b' contains a path separator",
        "left.eventlog.running: warning: abandoned: last written 3 days ago; the scheduler"
        " stopped before the job ended",
        "newer.eventlog:12: error: newer-version: JobEnd written with schema version 3 by a newer"
        " Ballista (this sitegen reads up to 1); upgrade sitegen",
        "prose.eventlog: error: not-a-log: no event-log records in the file",
        "renamed.eventlog:12: warning: id-mismatch: file name says 'renamed' but JobEnd.index"
        " says 'real-id'; published under the JobEnd id",
        "run.eventlog.running: note: incomplete: still running (.eventlog.running):"
        " no JobEnd record yet",
        "torn.eventlog: warning: damaged-lines: 1 of 6 TaskEnd lines unreadable: line 3",
        "good.eventlog: warning: id-collision: job id 'good' equals 'gOOd' (of gOOd.eventlog)"
        " once case-folded: both are published, but where the site or its archive is unpacked"
        " on a case-insensitive or normalising file system (macOS, Windows) one job overwrites"
        " the other (see docs/safety.md)",
        "pct%41.eventlog: warning: tui-unreachable: job id 'pct%41' holds '%', which the"
        " Ballista TUI sends as it is (it escapes ids with the URL path set): the host decodes"
        " it, so the TUI asks for another id or is refused; the job is published, and browsers"
        " and curl reach it percent-encoded",
        f"Checked 16 logs in {logs}: 8 completed, 1 incomplete, 1 newer-version, 1 malformed,"
        " 2 unreadable, 1 not-a-log, 1 abandoned, 1 ended-unrecorded.",
        "6 jobs can be published; 7 errors, 7 warnings, 1 note: check failed.",
    ]


def test_check_json_is_one_object(tmp_path: Path) -> None:
    logs = every_problem(tmp_path / "logs")
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs), "--format", "json"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    out = json.loads(result.output)
    problems = out.pop("problems")
    jobs = out.pop("jobs")
    assert len(jobs) == 6 and all(
        set(j) == {"job_id", "job_name", "status", "findings"} for j in jobs
    )
    assert (out.pop("fail_on"), out.pop("fail_on_reasons")) == ([], [])
    assert out == {
        "log_dirs": [str(logs)],
        "ok": False,
        "logs": 16,
        "publishable": 6,
        "classifications": {
            "completed": 8,
            "incomplete": 1,
            "newer-version": 1,
            "malformed": 1,
            "unreadable": 2,
            "not-a-log": 1,
            "abandoned": 1,
            "ended-unrecorded": 1,
        },
        "problems_by_kind": {
            "incomplete": 1,
            "newer-version": 1,
            "malformed": 1,
            "unreadable": 2,
            "not-a-log": 1,
            "unsafe-id": 1,
            "duplicate-id": 1,
            "id-mismatch": 2,
            "unreadable-note": 0,  # a build's warning: check reads no notes
            "damaged-lines": 1,
            "id-collision": 1,
            "abandoned": 1,
            "ended-unrecorded": 1,
            "tui-unreachable": 1,
        },
        "errors": 7,
        "warnings": 7,
        "notes": 1,
    }
    assert problems[0] == {
        "file": "bad.eventlog",
        "line": 12,
        "kind": "malformed",
        "message": "malformed JobEnd: Expected `int`, got `str` - at `$.completed_at`",
        "job_id": "bad",
        "severity": "error",
    }
    assert problems[2]["file"] == "cut.eventlog.gz" and problems[2]["kind"] == "unreadable"
    assert [p["severity"] for p in problems].count("error") == 7
    assert {p["kind"] for p in problems} == {str(k) for k in ProblemKind} - {"unreadable-note"}


def test_check_finds_what_build_finds(tmp_path: Path) -> None:
    # One classification, shared: the check predicts the build's problems exactly.
    logs = every_problem(tmp_path / "logs")
    checked = check(logs, workers=1)
    built = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert checked.problems == built.problems
    assert checked.publishable == built.published == 6
    assert checked.classifications == built.classifications


def test_check_in_parallel_gives_the_same_report(tmp_path: Path) -> None:
    logs = every_problem(tmp_path / "logs")
    assert check(logs, workers=4) == check(logs, workers=1)


def test_running_logs_are_notes_and_pass(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "good.eventlog", job_lines("good"))
    write(logs / "run.eventlog.running", job_lines("run")[:4])
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == "1 job can be published; 1 note: check passed."


def test_clean_dir_passes_without_problems(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "good.eventlog", job_lines("good"))
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 0
    assert result.output == (
        f"Checked 1 log in {logs}: 1 completed.\n"
        "1 job can be published; no problems: check passed.\n"
    )


@pytest.mark.parametrize(
    "name", ["bad.eventlog", "bin.eventlog", "cut.eventlog.gz", "prose.eventlog", "evil.eventlog"]
)
def test_each_damage_alone_fails(tmp_path: Path, name: str) -> None:
    every = every_problem(tmp_path / "every")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / name).write_bytes((every / name).read_bytes())
    write(logs / "good.eventlog", job_lines("good"))
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(name)


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["--event-log-dir", "{tmp}/missing"],
            "Error: {tmp}/missing: event-log dir does not exist",
        ),
        (["--event-log-dir", "{tmp}/file"], "Error: {tmp}/file: event-log dir is not a directory"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], stderr: str) -> None:
    (tmp_path / "file").write_text("x")
    args = [a.format(tmp=tmp_path) for a in args]
    result = CliRunner().invoke(cli, ["check", *args, "--format", "json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == stderr.format(tmp=tmp_path) + "\n"


def test_bad_option_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--format", "xml"])
    assert result.exit_code == 2
    assert "Invalid value for '--format'" in result.stderr


def test_check_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = every_problem(tmp_path / "logs")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in logs.iterdir()}
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 1
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "logs"]
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in logs.iterdir()} == before


def test_every_problem_kind_has_a_severity() -> None:
    assert set(SEVERITY) == set(ProblemKind)


def test_bundled_examples_fail_on_their_damaged_log() -> None:
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "25 jobs can be published; 1 error, 1 warning, 1 note: check failed."
    )


def test_forward_compatible_records_are_no_problem(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = job_lines("fut")
    lines.insert(1, record("AnEventKindFromTheFuture", {"x": 1}))
    write(logs / "fut.eventlog", lines)
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert result.exit_code == 0


def test_check_sees_every_finding_the_pages_show(
    example_site: tuple[Path, object], tmp_path: Path
) -> None:
    # check runs the build's analysis: each job's findings are those of its findings.json
    # (its run's regression included).
    site, _ = example_site
    from sitegen.examples import EXAMPLE_LOG_DIR

    out = CliRunner().invoke(
        cli, ["check", "--event-log-dir", str(EXAMPLE_LOG_DIR), "--format", "json"]
    )
    jobs = json.loads(out.stdout)["jobs"]
    with_findings = 0
    for job in jobs:
        page = json.loads((site / "jobs" / job["job_id"] / "findings.json").read_text())
        assert job["findings"] == page["findings"]
        with_findings += bool(page["findings"])
    assert with_findings >= 6  # one example job per kind of finding, at the least


@pytest.mark.parametrize(
    "kind", ["straggler", "data-skew", "slow-executor", "failed-attempts", "queued", "idle"]
)
def test_fail_on_sees_every_kind_of_finding(kind: str) -> None:
    from sitegen.examples import EXAMPLE_LOG_DIR

    out = CliRunner().invoke(
        cli, ["check", "--event-log-dir", str(EXAMPLE_LOG_DIR), "--fail-on", kind]
    )
    assert out.exit_code == 1
    reasons = [line for line in out.stdout.splitlines() if line.startswith("fail-on: ")]
    assert reasons and all(f": {kind}: " in line for line in reasons)
    assert out.stdout.splitlines()[-1].endswith(": failed.")
