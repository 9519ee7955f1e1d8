"""One log never takes a build down: bombs, huge and blank lines, crashes, killed workers."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.check import check
from sitegen.cli import cli
from sitegen.eventlog.compression import open_compressed
from sitegen.eventlog.limits import LogLimits
from sitegen.eventlog.reader import read_log
from sitegen.model import Classification, ProblemKind
from tests.helpers.logs import job_lines, write

MiB = 1 << 20


def gzip_stream(path: Path, pieces: Iterator[bytes]) -> Path:
    """Write ``pieces`` gzip-compressed, streaming (a bomb is never held)."""
    with gzip.open(path, "wb", compresslevel=9) as out:
        for piece in pieces:
            out.write(piece)
    return path


def zstd_stream(path: Path, pieces: Iterator[bytes]) -> Path:
    """Write ``pieces`` zstd-compressed, streaming, with a checksum (as the zstd command)."""
    compressor = zstandard.ZstdCompressor(level=19, write_checksum=True)
    with path.open("wb") as raw, compressor.stream_writer(raw) as out:
        for piece in pieces:
            out.write(piece)
    return path


def repeated(byte: bytes, size: int) -> Iterator[bytes]:
    """Yield ``size`` bytes of ``byte`` a MiB at a time."""
    block = byte * MiB
    for _ in range(size // MiB):
        yield block


def logs_beside(tmp_path: Path, count: int = 3) -> Path:
    """Return a log dir holding ``count`` good small logs."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(count):
        write(logs / f"good{n}.eventlog", job_lines(f"good{n}"))
    return logs


def problem_of(report: Any, file: str) -> Any:
    (found,) = [p for p in report.problems if p.file == file and p.severity == "error"]
    return found


# ---------------------------------------------------------------- 1. decompression bombs


def test_one_zstd_step_never_inflates_a_bomb_at_once(tmp_path: Path) -> None:
    bomb = zstd_stream(tmp_path / "b.eventlog.zst", repeated(b"\0", 256 * MiB))
    assert bomb.stat().st_size < 64 * 1024  # one 64 KiB read of it is the whole bomb
    stream = open_compressed(bomb, "zstd")
    tracemalloc.start()
    try:
        stream.read(MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        stream.close()
    assert peak < 64 * MiB, f"{peak / MiB:.0f} MiB inflated for one read"


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_bomb_past_the_log_limit_is_a_problem_and_the_others_publish(
    tmp_path: Path, kind: str
) -> None:
    logs = logs_beside(tmp_path)
    # Valid lines, far more of them than the limit lets through: only the limit stops it.
    lines = job_lines("bomb")
    task = next(line for line in lines if line.startswith(b'{"ev":"TaskEnd"'))
    body = iter([lines[0], *([task * (MiB // len(task))] * 48), lines[-1]])
    name = "bomb.eventlog.gz" if kind == "gzip" else "bomb.eventlog.zst"
    (gzip_stream if kind == "gzip" else zstd_stream)(logs / name, body)
    options = BuildOptions(logs, tmp_path / "site", workers=1, max_log_size=8 * MiB)
    report = build(options)
    assert report.published == 3
    problem = problem_of(report, name)
    assert problem.kind is ProblemKind.UNREADABLE
    assert "holds more than 8 MiB once decompressed" in problem.message
    assert not (tmp_path / "site/jobs/bomb").exists()
    checked = check(logs, workers=1, limits=LogLimits(max_log_bytes=8 * MiB))
    assert checked.publishable == 3
    assert [p.message for p in checked.problems] == [problem.message]


def test_a_plain_log_past_the_log_limit_is_not_read(tmp_path: Path) -> None:
    logs = logs_beside(tmp_path, 1)
    write(logs / "big.eventlog", job_lines("big", stages=4, tasks_per_stage=200))
    size = (logs / "big.eventlog").stat().st_size
    report = build(BuildOptions(logs, tmp_path / "site", workers=1, max_log_size=size - 1))
    assert "holds more than" in problem_of(report, "big.eventlog").message
    assert report.published == 1


# ---------------------------------------------------------------- 2. one enormous line


@pytest.mark.parametrize("kind", ["gzip", "zstd", "plain"])
def test_a_line_past_the_line_limit_is_a_problem_found_without_holding_it(
    tmp_path: Path, kind: str
) -> None:
    logs = logs_beside(tmp_path)
    lines = job_lines("huge")
    body = iter([lines[0], b'{"ev":"TaskEnd","version":1,"data":"', *repeated(b"x", 32 * MiB)])
    name = {"gzip": "huge.eventlog.gz", "zstd": "huge.eventlog.zst", "plain": "huge.eventlog"}
    path = logs / name[kind]
    if kind == "plain":
        with path.open("wb") as out:
            out.writelines(body)
    else:
        (gzip_stream if kind == "gzip" else zstd_stream)(path, body)
    limits = LogLimits(max_line_bytes=MiB)
    tracemalloc.start()
    try:
        read = read_log(path, limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert read.classification is Classification.UNREADABLE
    assert read.message.startswith("line 2 is longer than 1 MiB (the limit, --max-line-size)")
    assert read.line == 2
    assert peak < 16 * MiB, f"{peak / MiB:.0f} MiB held for a line limited to 1 MiB"
    report = build(BuildOptions(logs, tmp_path / "site", workers=1, max_line_size=MiB))
    assert report.published == 3
    assert problem_of(report, name[kind]).message == read.message


# ---------------------------------------------------------------- 3. blank lines cost nothing


def test_runs_of_blank_lines_are_skipped_at_c_speed_and_lines_still_counted(
    tmp_path: Path,
) -> None:
    lines = job_lines("blank")
    # 64 MiB of empty lines before JobEnd (28 million lines: minutes at a step per line),
    # blank lines of spaces and tabs, and a damaged JobEnd to report its true line number.
    body = [*lines[:-1], *repeated(b"\n", 64 * MiB), b"  \t\n\r\n", lines[-1][:-3] + b"NaN\n"]
    path = gzip_stream(tmp_path / "blank.eventlog.gz", iter(body))
    started = time.process_time()
    read = read_log(path)
    seconds = time.process_time() - started
    assert read.classification is Classification.MALFORMED
    assert read.line == len(lines) - 1 + 64 * MiB + 2 + 1
    assert seconds < 10, f"{seconds:.1f} s of CPU for 64 MiB of blank lines"


def test_blank_lines_between_records_change_nothing(tmp_path: Path) -> None:
    lines = job_lines("gaps")
    spaced = [part for line in lines for part in (line, b"\n", b" \n", b"\r\n")]
    plain = read_log(write(tmp_path / "a.eventlog", lines))
    gaps = read_log(write(tmp_path / "b.eventlog", spaced))
    assert gaps.classification is plain.classification is Classification.COMPLETED
    assert gaps.tasks == plain.tasks and gaps.line == 4 * len(lines) - 3
    assert not gaps.damaged_counts


# ---------------------------------------------------------------- a log's failure is its own


def _fail_on(monkeypatch: pytest.MonkeyPatch, job_id: str, fail: Any) -> None:
    """Make rendering the pages of ``job_id`` call ``fail`` (in this process and its forks)."""
    from sitegen.render.pages import PageRenderer

    original = PageRenderer.job_pages

    def job_pages(self: PageRenderer, writer: Any, read: Any, analysis: Any, *rest: Any) -> None:
        if analysis.summary.job_id == job_id:
            writer.write(f"jobs/{job_id}/half-written.html", b"<p>")
            fail()
        original(self, writer, read, analysis, *rest)

    monkeypatch.setattr(PageRenderer, "job_pages", job_pages)


def _raise(exc: BaseException) -> Any:
    def fail() -> None:
        raise exc

    return fail


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (MemoryError(), "ran out of memory"),
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (KeyError("stage"), "sitegen failed on this log (KeyError: 'stage')"),
    ],
)
def test_an_exception_on_one_log_is_its_problem_row(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception, said: str
) -> None:
    _fail_on(monkeypatch, "Ca05RFR", _raise(exc))
    report = build(BuildOptions(example_logs, tmp_path / "site", workers=1))
    assert report.published == 24
    problem = problem_of(report, "Ca05RFR.eventlog")
    assert problem.kind is ProblemKind.UNREADABLE and said in problem.message
    assert not (tmp_path / "site/jobs/Ca05RFR").exists()
    assert not (tmp_path / "site/api/job/Ca05RFR").exists()
    problems_page = (tmp_path / "site/problems/index.html").read_text()
    assert "Ca05RFR.eventlog" in problems_page


def test_check_reports_an_exception_on_one_log_as_its_problem(
    example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.builder.map import jobs as map_jobs
    from sitegen.diagnose.analysis import analyse as original

    def analyse(read: Any, file: str, log_bytes: int = 0) -> Any:
        if file == "Ca05RFR.eventlog":
            raise MemoryError
        return original(read, file, log_bytes)

    monkeypatch.setattr(map_jobs, "analyse", analyse)  # check runs the map step's own
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(example_logs)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "Ca05RFR.eventlog: error: unreadable: sitegen ran out of memory" in result.output


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_by_a_signal_makes_its_log_a_problem_row(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on(monkeypatch, "Ca05RFR", _die)
    report = build(BuildOptions(example_logs, tmp_path / "site", workers=2))
    assert report.published == 24
    problem = problem_of(report, "Ca05RFR.eventlog")
    assert "killed by signal 9 (SIGKILL)" in problem.message
    assert not (tmp_path / "site/jobs/Ca05RFR").exists()
    # The next build of a new log works, though a worker of the first one died.
    write(example_logs / "later.eventlog", job_lines("later"))
    again = build(BuildOptions(example_logs, tmp_path / "site", workers=2))
    assert again.published == 25


def test_a_worker_killed_between_making_a_jobs_directories_and_claiming_them_leaves_none(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's directories made, the claims line not yet written: they go with the log."""
    from sitegen.builder.map import jobs as map_jobs

    original = map_jobs._mark_claim

    def mark_claim(part: Path, roots: list[str]) -> None:
        if roots[0].endswith("/Ca05RFR"):
            _die()  # in a worker, and again in the process the log is mapped alone in
        original(part, roots)

    monkeypatch.setattr(map_jobs, "_mark_claim", mark_claim)
    report = build(BuildOptions(example_logs, tmp_path / "site", workers=2))
    assert report.published == 24
    assert "killed by signal 9" in problem_of(report, "Ca05RFR.eventlog").message
    assert not (tmp_path / "site/jobs/Ca05RFR").exists()
    assert not (tmp_path / "site/api/job/Ca05RFR").exists()


def test_check_survives_a_killed_worker(
    example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.builder.map import jobs as map_jobs

    original = map_jobs.read_and_analyse  # what check runs on each log

    def read_and_analyse(log: Any, limits: Any) -> Any:
        if log.name == "Ca05RFR.eventlog":
            _die()
        return original(log, limits)

    monkeypatch.setattr(map_jobs, "read_and_analyse", read_and_analyse)
    report = check(example_logs, workers=2)
    (problem,) = [p for p in report.problems if p.file == "Ca05RFR.eventlog"]
    assert "killed by signal 9" in problem.message
    assert report.publishable == 24


# ---------------------------------------------------------------- 6. damaged lines counted


def damaged_log(path: Path) -> Path:
    """Write a job of 36 TaskEnd lines, three of which do not decode (lines 12, 13, 15)."""
    lines = job_lines("dmg1", tasks_per_stage=18)
    tasks = [n for n, line in enumerate(lines) if line.startswith(b'{"ev":"TaskEnd"')]
    assert len(tasks) == 36
    for n in tasks[:2]:
        lines[n] = lines[n].replace(b'"launch_time":', b'"launch_time":NaN,"x":', 1)
    lines[tasks[3]] = lines[tasks[3]][:40] + b"\xff\xfe" + lines[tasks[3]][40:]
    return write(path, lines)


def test_damaged_lines_are_a_warning_on_every_report(tmp_path: Path) -> None:
    logs = logs_beside(tmp_path, 1)
    damaged_log(logs / "dmg1.eventlog")
    said = "3 of 36 TaskEnd lines unreadable: lines 3, 4, 6"
    report = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert report.published == 2
    (problem,) = report.problems
    assert (problem.kind, problem.severity, problem.message) == ("damaged-lines", "warning", said)
    assert said in (tmp_path / "site/jobs/dmg1/index.html").read_text()
    assert said in (tmp_path / "site/problems/index.html").read_text()
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs), "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["problems_by_kind"]["damaged-lines"] == 1
    assert out["problems"][0]["message"] == said


def test_unknown_kinds_and_a_cut_off_last_line_are_no_damage(tmp_path: Path) -> None:
    lines = job_lines("run1")
    future = b'{"ev":"AnEventKindFromTheFuture","version":1,"data":{}}\n'
    running = write(tmp_path / "run1.eventlog.running", [*lines[:4], future, lines[4][:30]])
    read = read_log(running)
    assert read.classification is Classification.INCOMPLETE
    assert read.damage_message() is None


# ---------------------------------------------------------------- 7. duplicate "ev", empty


@pytest.mark.parametrize(
    "damage",
    [
        lambda line: line[:-2] + b',"ev":"Foo"}\n',  # the last "ev" wins: listed as running
        lambda line: line[:-2] + b',"ev":"JobEnd"}\n',
        lambda line: b'{"ev":"TaskEnd",' + line[1:],
    ],
)
def test_a_job_end_with_a_duplicate_ev_key_is_malformed(tmp_path: Path, damage: Any) -> None:
    lines = job_lines("dup1")
    read = read_log(write(tmp_path / "dup1.eventlog", [*lines[:-1], damage(lines[-1])]))
    assert read.classification is Classification.MALFORMED
    assert 'duplicate "ev" key' in read.message and read.line == len(lines)


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_valid_but_empty_compressed_log_is_unreadable(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty.eventlog{suffix}"
    (gzip_stream if suffix == ".gz" else zstd_stream)(path, iter([]))
    read = read_log(path)
    assert read.classification is Classification.UNREADABLE
    assert (
        read.message
        == f"the {'gzip' if suffix == '.gz' else 'zstd'} data holds nothing (an empty log)"
    )


def test_no_log_is_modified(tmp_path: Path) -> None:
    logs = logs_beside(tmp_path, 1)
    damaged_log(logs / "dmg1.eventlog")
    before = {p.name: p.read_bytes() for p in logs.iterdir()}
    build(BuildOptions(logs, tmp_path / "site", workers=1, max_line_size=MiB))
    assert {p.name: p.read_bytes() for p in logs.iterdir()} == before
    shutil.rmtree(tmp_path / "site")


def test_a_log_forgets_only_what_it_claimed_since_it_was_last_forgotten(tmp_path: Path) -> None:
    from sitegen.builder.map.jobs import _claims, _mark_claim, forget_claim

    staging = tmp_path / "staging"
    part, other = staging / "parts" / "7", staging / "parts" / "8"
    for root in ("jobs/a", "api/job/a", "jobs/b"):
        (staging / root).mkdir(parents=True)
    _mark_claim(part, ["api/job/a", "jobs/a"])
    _mark_claim(other, ["jobs/b"])
    assert _claims(part) == (["api/job/a", "jobs/a"], [])
    forget_claim((None, staging, part))  # type: ignore[arg-type]
    assert not (staging / "jobs/a").exists() and (staging / "jobs/b").is_dir()
    # Another log takes the directories; forgetting log 7 again must leave them be.
    (staging / "jobs/a").mkdir()
    assert _claims(part) == ([], [])
    forget_claim((None, staging, part))  # type: ignore[arg-type]
    assert (staging / "jobs/a").is_dir() and _claims(other) == (["jobs/b"], [])
