"""Each row of the exit-code tables in docs/configuration.md and docs/checking.md, run."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli import cli
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.publish.writer import SiteWriter

ROOT = Path(__file__).resolve().parent.parent
TABLE_TITLE = "exit codes (`tests/test_exit_codes.py` runs each row):"


def table(doc: str, command: str) -> list[tuple[str, int]]:
    """Return the rows ``(case, exit)`` of the exit-code table of ``command`` in ``doc``."""
    text = (ROOT / "docs" / doc).read_text()
    start = text.index(f"`sitegen {command}` {TABLE_TITLE}")
    rows = []
    for line in text[start:].splitlines()[4:]:
        if not line.startswith("|"):
            break
        case, code = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((case, int(code)))
    return rows


Scenario = Callable[[Path, pytest.MonkeyPatch], list[str]]


def _logs(tmp: Path, damaged: bool = False, errors: bool = False) -> Path:
    logs = tmp / "logs"
    shutil.copytree(EXAMPLE_LOG_DIR, logs)
    if not errors:
        (logs / "0d9TH4Q.eventlog").unlink()  # the damaged example: an error
    if not damaged:
        (logs / "GHZbKoX.eventlog.running").unlink()  # running: a note, a skipped log
    return logs


def _unreadable(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make ``path`` fail as a dir under a parent without search permission does."""
    real = os.stat

    def stat(target: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(target) in (str(path), f"{path}/"):  # type: ignore[call-overload]
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))  # type: ignore[call-overload]
        return real(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", stat)


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self: SiteWriter, rel: object, chunks: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SiteWriter, "write_chunks", full)


def _build(logs: Path, out: Path, *extra: str) -> list[str]:
    return ["build", "-q", "--event-log-dir", str(logs), "--output", str(out), *extra]


def _not_a_site(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    (tmp / "out").mkdir()
    (tmp / "out/mine.txt").write_text("not a site")
    return _build(_logs(tmp), tmp / "out")


def _output_file(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    (tmp / "out").write_text("a file")
    return _build(_logs(tmp), tmp / "out")


def _unreadable_build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    logs = _logs(tmp)
    _unreadable(mp, logs)
    return _build(logs, tmp / "out")


def _unreadable_check(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    logs = _logs(tmp)
    _unreadable(mp, logs)
    return ["check", "--event-log-dir", str(logs)]


def _full_disk_build(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    _full_disk(mp)
    return _build(_logs(tmp), tmp / "out")


def _unknown_key(tmp: Path, mp: pytest.MonkeyPatch) -> list[str]:
    (tmp / "sitegen.toml").write_text("colour = 'blue'\n")
    return ["build", "--config", str(tmp / "sitegen.toml"), "--output", str(tmp / "out")]


BUILD: dict[str, Scenario] = {
    "the site was written": lambda t, mp: _build(_logs(t), t / "out"),
    "the site was written, some logs were skipped": lambda t, mp: _build(
        _logs(t, damaged=True, errors=True), t / "out"
    ),
    "`--strict`, and a log was skipped": lambda t, mp: _build(
        _logs(t, damaged=True), t / "out", "--strict"
    ),
    "the log dir does not exist": lambda t, mp: _build(t / "nope", t / "out"),
    "the log dir is not a directory": lambda t, mp: _build(
        Path(shutil.copy(EXAMPLE_LOG_DIR / "Ca05RFR.eventlog", t)), t / "out"
    ),
    "the log dir cannot be read": _unreadable_build,
    "the output path is a file": _output_file,
    "the output is the log dir or inside it": lambda t, mp: _build(_logs(t), t / "logs/site"),
    "the output is a non-empty directory that is not a sitegen site": _not_a_site,
    "the system stopped the build (a full disk)": _full_disk_build,
    "an unknown option, or an option's value is not valid (`--base-url //host/`)": lambda t, mp: (
        _build(_logs(t), t / "out", "--base-url", "//evil.example/")
    ),
    "an unknown key in `sitegen.toml`": _unknown_key,
}

CHECK: dict[str, Scenario] = {
    "no log has an error": lambda t, mp: ["check", "--event-log-dir", str(_logs(t))],
    "only warnings and notes": lambda t, mp: [
        "check",
        "--event-log-dir",
        str(_logs(t, damaged=True)),
    ],
    "a log has an error": lambda t, mp: ["check", "--event-log-dir", str(_logs(t, errors=True))],
    "`--fail-on`, and the newest run of a job name has such a finding": lambda t, mp: [
        "check",
        "--event-log-dir",
        str(_logs(t)),
        "--fail-on",
        "failed",
    ],
    "the log dir does not exist": lambda t, mp: ["check", "--event-log-dir", str(t / "nope")],
    "the log dir is not a directory": lambda t, mp: [
        "check",
        "--event-log-dir",
        shutil.copy(EXAMPLE_LOG_DIR / "Ca05RFR.eventlog", t),
    ],
    "the log dir cannot be read": _unreadable_check,
    "an unknown option": lambda t, mp: ["check", "--colour"],
}


def test_every_row_has_a_scenario() -> None:
    assert [case for case, _ in table("configuration.md", "build")] == list(BUILD)
    assert [case for case, _ in table("checking.md", "check")] == list(CHECK)


@pytest.mark.parametrize(
    ("command", "case", "code"),
    [("build", *row) for row in table("configuration.md", "build")]
    + [("check", *row) for row in table("checking.md", "check")],
)
def test_exit_code_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, case: str, code: int
) -> None:
    monkeypatch.chdir(tmp_path)
    args = (BUILD if command == "build" else CHECK)[case](tmp_path, monkeypatch)
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, (result.output, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    assert "Traceback" not in result.output
