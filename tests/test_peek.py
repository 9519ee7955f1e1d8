"""A log's run peeked at from its JobEnd record agrees with what the map step makes of it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from sitegen.builder.contexts.foresight import forecast
from sitegen.builder.contexts.peek import peek
from sitegen.builder.map.jobs import read_and_analyse
from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.schema import run_source
from sitegen.diagnose.recurring import Run
from sitegen.eventlog.discover import discover
from sitegen.eventlog.limits import DEFAULT_LIMITS
from sitegen.eventlog.logfiles import LogFile
from sitegen.examples import EXAMPLE_LOG_DIR
from tests.helpers.logs import failed_task_end, job_lines, write


def mapped(log: LogFile) -> tuple[Run, int] | None:
    """Return the run and forecast the map step's own summary gives (None: no summary)."""
    outcome, _, analysis = read_and_analyse(log, DEFAULT_LIMITS)
    if analysis is None:
        return None
    summary = analysis.summary
    run = Run.of(summary, run_source(log_digest(log.path), outcome.file))
    return run, forecast(run, summary)


def test_every_bundled_log_is_peeked_as_the_map_step_reads_it() -> None:
    logs = discover(EXAMPLE_LOG_DIR)
    told = 0
    for log in logs:
        found = peek(DEFAULT_LIMITS, log)
        want = mapped(log)
        if want is None:
            assert found is None, log.key  # no JobEnd: nothing to foresee
            continue
        assert found is not None, log.key
        run, summary = found
        assert (run, forecast(run, summary)) == want, log.key
        told += 1
    assert told >= 20  # the examples' completed jobs, recurring runs among them


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_peek_reads_plain_and_compressed_logs(tmp_path: Path, suffix: str) -> None:
    lines = job_lines("j1", "nightly", start_ms=1_767_000_000_000, tasks_per_stage=5)
    data = b"".join(lines)
    path = tmp_path / f"j1.eventlog{suffix}"
    path.write_bytes(gzip.compress(data, mtime=0) if suffix else data)
    (log,) = discover(tmp_path)
    found = peek(DEFAULT_LIMITS, log)
    assert found is not None
    assert (found[0], forecast(*found)) == mapped(log)
    assert found[1].tasks == sum(1 for line in lines if b'"ev":"TaskEnd"' in line) == 10


@pytest.mark.parametrize("ending", [b"\r\n", b"\n\n\n", b"\r\n\r\n", b""])
def test_the_jobend_is_found_behind_any_line_ends(tmp_path: Path, ending: bytes) -> None:
    lines = job_lines("j1", "nightly", start_ms=1_767_000_000_000, tasks_per_stage=5)
    write(tmp_path / "j1.eventlog", [*lines[:-1], lines[-1].rstrip(b"\n") + ending])
    (log,) = discover(tmp_path)
    found = peek(DEFAULT_LIMITS, log)
    assert found is not None
    assert found[1].job_id == "j1"
    assert (found[0], forecast(*found)) == mapped(log)


def test_a_log_without_a_whole_jobend_is_not_peeked(tmp_path: Path) -> None:
    lines = job_lines("j1", start_ms=1_767_000_000_000)
    write(tmp_path / "cut.eventlog", [*lines[:-1], lines[-1][:-40]])
    write(tmp_path / "garbage.eventlog", [*lines, b"\x00\x01 not json\n"])
    gz = tmp_path / "truncated.eventlog.gz"
    gz.write_bytes(gzip.compress(b"".join(lines), mtime=0)[:-30])
    for log in discover(tmp_path):
        assert peek(DEFAULT_LIMITS, log) is None, log.key


def test_a_peek_never_changes_the_log(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    source = write(tmp_path / "logs" / "j1.eventlog", job_lines("j1"))
    kept = tmp_path / "kept"
    shutil.copy(source, kept)
    (log,) = discover(tmp_path / "logs")
    assert peek(DEFAULT_LIMITS, log) is not None
    assert source.read_bytes() == kept.read_bytes()


def test_a_peek_counts_failed_attempts_by_stage_as_the_map_step_does(tmp_path: Path) -> None:
    # A job named Failed (its lines hold the bytes the peek looks for), and a task of stage
    # 2 that failed twice before it succeeded: the payload lists only its last attempt.
    lines = job_lines("j1", "Failed", start_ms=1_767_000_000_000, tasks_per_stage=3)
    retries = [
        failed_task_end(2, 0, "executor-1", "fetch failed", (1_767_000_000_100, 101, 102 + n))
        for n in range(2)
    ]
    path = write(tmp_path / "j1.eventlog", [*lines[:-1], *retries, lines[-1]])
    (log,) = discover(tmp_path)
    found = peek(DEFAULT_LIMITS, log)
    assert found is not None
    assert {f.stage_id: f.failed for f in found[1].stages} == {"1": 0, "2": 2}
    assert (found[0], forecast(*found)) == mapped(log)
    assert path.read_bytes().count(b'"Failed"') > 2  # the name's bytes were not counted
