"""Discovery in two processes lists exactly what one process lists, and falls back safely."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from sitegen.eventlog import localdir as discovery
from sitegen.eventlog.discover import discover
from sitegen.eventlog.logfiles import LogFile

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the parallel stat is Linux-only")


def _mixed_dir(tmp_path: Path) -> Path:
    """Make a log dir with every kind of entry discovery tells apart."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(9):
        (logs / f"job{n}.eventlog").write_bytes(b"x" * (n + 1))
    (logs / "run.eventlog.running").write_bytes(b"partial")
    (logs / "old.eventlog.gz").write_bytes(b"\x1f\x8b")
    (logs / "notes.txt").write_text("not a log")
    (logs / "dir.eventlog").mkdir()
    os.mkfifo(logs / "fifo.eventlog")
    (logs / "dangling.eventlog").symlink_to(logs / "missing")
    (logs / "inside.eventlog").symlink_to(logs / "job1.eventlog")
    outside = tmp_path / "outside.eventlog"
    outside.write_bytes(b"y")
    (logs / "outside.eventlog").symlink_to(outside)
    return logs


def _serial(logs: Path, monkeypatch: pytest.MonkeyPatch) -> list[LogFile]:
    with monkeypatch.context() as m:
        m.setattr(discovery, "PARALLEL_STAT", 10**9)
        return discover(logs)


def test_parallel_stat_lists_what_one_process_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = _mixed_dir(tmp_path)
    serial = _serial(logs, monkeypatch)
    forked: list[int] = []
    start = discovery._StatChild.start

    def spy(fd: int, names: list[str]) -> discovery._StatChild | None:
        forked.append(len(names))
        return start(fd, names)

    monkeypatch.setattr(discovery, "PARALLEL_STAT", 2)
    monkeypatch.setattr(discovery._StatChild, "start", staticmethod(spy))
    parallel = discover(logs)
    assert forked == [len(serial) - len(serial) // 2]  # the child took the second half
    assert parallel == serial
    by_name = {log.name: log for log in parallel}
    assert by_name["job8.eventlog"].size == 9
    assert by_name["fifo.eventlog"].skip and by_name["outside.eventlog"].skip
    assert by_name["inside.eventlog"].size == 2 and not by_name["inside.eventlog"].skip
    assert "notes.txt" not in by_name


def test_a_failed_child_leaves_the_stat_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = _mixed_dir(tmp_path)
    serial = _serial(logs, monkeypatch)

    def broken(fd: int, names: list[str]) -> object:
        raise OverflowError("a time past 2262")  # what the child meets on such a file

    monkeypatch.setattr(discovery, "PARALLEL_STAT", 2)
    monkeypatch.setattr(discovery, "_lstat_numbers", broken)
    assert discover(logs) == serial


def test_no_fork_when_it_is_refused_or_other_threads_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = _mixed_dir(tmp_path)
    serial = _serial(logs, monkeypatch)
    monkeypatch.setattr(discovery, "PARALLEL_STAT", 2)

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    with monkeypatch.context() as m:
        m.setattr(os, "fork", refuse)
        assert discover(logs) == serial
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not discovery._may_fork(10**6)
    finally:
        stop.set()
        other.join()
    assert discovery._may_fork(10**6)


def test_a_file_name_that_is_not_utf8_is_reported_not_a_crash(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sitegen.cli import cli
    from tests.helpers.logs import job_lines, write

    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "good.eventlog", job_lines("good"))
    raw = os.path.join(os.fsencode(logs), b"bad\xff.eventlog")
    with open(raw, "wb") as f:
        f.write(b"".join(job_lines("bad")))
    by_key = {log.key: log for log in discover(logs)}
    assert by_key["bad\\xff.eventlog"].skip.startswith("its file name is not valid UTF-8")
    assert by_key["bad\\xff.eventlog"].path.exists()  # still opened by its real name
    site = tmp_path / "site"
    result = CliRunner().invoke(cli, ["build", "--event-log-dir", str(logs), "--output", str(site)])
    assert result.exit_code == 0, result.output
    assert "Published 1 job from 2 logs" in result.output
    assert "unreadable: bad\\xff.eventlog: its file name is not valid UTF-8" in result.output
    assert "bad\\xff.eventlog" in (site / "problems" / "index.html").read_text()
    assert os.path.exists(raw)  # never touched


def test_a_log_touched_past_2262_builds_and_then_is_a_no_op(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.builder.options import BuildOptions
    from sitegen.builder.pipeline import build
    from tests.helpers.logs import job_lines, write

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a", "b", "c"):
        write(logs / f"{name}.eventlog", job_lines(name))
    future = 10_413_792_000 * 10**9  # 2300-01-01: more nanoseconds than 64 bits hold
    os.utime(logs / "b.eventlog", ns=(future, future))
    serial = _serial(logs, monkeypatch)
    assert [log.mtime_ns for log in serial][1] == discovery.MAX_NS
    monkeypatch.setattr(discovery, "PARALLEL_STAT", 2)
    assert discover(logs) == serial  # the child clamps it alike
    monkeypatch.undo()
    site = tmp_path / "site"
    assert build(BuildOptions(logs, site)).published == 3
    assert build(BuildOptions(logs, site)).up_to_date


def test_read_regular_returns_every_byte_and_refuses_a_fifo(tmp_path: Path) -> None:
    from sitegen.eventlog.filekind import read_regular

    for size in (0, 1, 15_000, 3_000_000):
        path = tmp_path / f"log{size}"
        data = os.urandom(size)
        path.write_bytes(data)
        assert read_regular(path) == data
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        read_regular(tmp_path / "fifo")  # at once: a FIFO with no writer never blocks it
