"""Hostile and broken logs (issue 16): each is a problem row with file and line, never a crash.

Every case is checked the way an operator meets it: ``check`` and ``build`` agree on the
problem, and the good job beside the bad log is still published.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sitegen.builder.pipeline import BuildOptions, build
from sitegen.check import check
from sitegen.eventlog.reader import read_log
from sitegen.model import Classification, ProblemKind
from sitegen.render import formatting
from tests.logs import job_lines, record, write

DEEP = b'{"ev":"X","version":1,"data":' + b"[" * 1000 + b"]" * 1000 + b"}\n"


def _job_end(lines: list[bytes]) -> dict[str, object]:
    """Decode a log's JobEnd line into plain data (to damage one field of it)."""
    return msgspec.json.decode(lines[-1])  # type: ignore[no-any-return]


def _encode(data: object) -> bytes:
    return msgspec.json.encode(data) + b"\n"


def huge_start_time() -> list[bytes]:
    lines = job_lines("bad")
    end = _job_end(lines)
    end["data"]["index"]["start_time"] = 2**64  # type: ignore[index]
    return [*lines[:-1], _encode(end)]


def huge_elapsed_compute() -> list[bytes]:
    lines = job_lines("bad")
    end = _job_end(lines)
    stages = msgspec.json.decode(msgspec.json.encode(end["data"]["stages"]))  # type: ignore[index]
    stages["stages"][0]["elapsed_compute"] = "1" + "0" * 309 + "ms"
    end["data"]["stages"] = stages  # type: ignore[index]
    return [*lines[:-1], _encode(end)]


def damaged_job_end(damage: bytes) -> list[bytes]:
    """A JobEnd line with one bad token, followed by more records (which are fine)."""
    lines = job_lines("bad")
    lines[-1] = lines[-1].replace(b'"completed_at":', b'"completed_at":' + damage + b',"x":', 1)
    return [*lines, record("AnotherKind", {})]


def _build_and_check(
    tmp_path: Path, name: str, lines: list[bytes], published: tuple[str, ...] = ("good",)
) -> tuple[object, object]:
    """Write the bad log beside a good one; return (check report, build report)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / name, lines)
    write(logs / "good.eventlog", job_lines("good"))
    checked = check(logs, workers=1)
    built = build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    assert tuple(j.job_id for j in built.jobs) == published
    assert checked.problems == built.problems
    assert (tmp_path / "site/api/job/good").is_dir()
    return checked, built


def test_deep_nesting_is_malformed_with_its_line(tmp_path: Path) -> None:
    lines = [*job_lines("bad")[:2], DEEP, *job_lines("bad")[2:]]
    _, built = _build_and_check(tmp_path, "bad.eventlog", lines)
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert (problem.kind, problem.file, problem.line) == (ProblemKind.MALFORMED, "bad.eventlog", 3)
    assert "nested too deeply" in problem.message


def test_deep_nesting_alone_reads_as_malformed(tmp_path: Path) -> None:
    read = read_log(write(tmp_path / "deep.eventlog", [DEEP]))
    assert (read.classification, read.line) == (Classification.MALFORMED, 1)


def test_job_end_number_beyond_64_bits_is_malformed(tmp_path: Path) -> None:
    _, built = _build_and_check(tmp_path, "bad.eventlog", huge_start_time())
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert problem.kind is ProblemKind.MALFORMED
    assert problem.line == len(job_lines("bad"))
    assert "start_time" in problem.message


def test_310_digit_elapsed_compute_builds(tmp_path: Path) -> None:
    _, built = _build_and_check(
        tmp_path, "bad.eventlog", huge_elapsed_compute(), published=("bad", "good")
    )
    assert built.problems == []  # type: ignore[attr-defined]
    page = (tmp_path / "site/jobs/bad/index.html").read_text()
    assert "1" + "0" * 309 + "ms" in page  # shown as the log gave it


@pytest.mark.parametrize("damage", [b"NaN", b'"\\ud800"x', b"1\x01"])
def test_damaged_job_end_line_is_malformed(tmp_path: Path, damage: bytes) -> None:
    lines = damaged_job_end(damage)
    _, built = _build_and_check(tmp_path, "bad.eventlog", lines)
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert (problem.kind, problem.line) == (ProblemKind.MALFORMED, len(lines) - 1)
    assert "damaged JobEnd" in problem.message


def test_job_end_cut_off_mid_write_is_still_running(tmp_path: Path) -> None:
    lines = job_lines("bad")
    lines[-1] = lines[-1][:200]  # no newline: the scheduler is writing it
    read = read_log(write(tmp_path / "bad.eventlog", lines))
    assert read.classification is Classification.INCOMPLETE


@pytest.mark.parametrize(
    ("ms", "shown"),
    [(float("inf"), formatting.NONE), (float("nan"), formatting.NONE), (1e300, None)],
)
def test_duration_copes_with_any_float(ms: float, shown: str | None) -> None:
    text = formatting.duration(ms)
    assert text == shown if shown is not None else text.endswith(" min")


def test_unparseable_compute_time_is_shown_as_given() -> None:
    text = "1" + "0" * 309 + "ms"
    assert formatting.compute_ms(text) is None
    assert formatting.compute_time(text) == text
