"""Builds into one output take turns: a second build waits for the first, then runs."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport


@contextlib.contextmanager
def held(directory: Path) -> Iterator[None]:
    """Hold the build lock of outputs inside ``directory``, as a running build does."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@pytest.mark.slow  # waits on a held lock
def test_a_second_build_waits_for_the_first(tmp_path: Path, example_logs: Path) -> None:
    out = tmp_path / "site"
    waiting = threading.Event()
    reports: list[BuildReport] = []
    options = BuildOptions(log_dirs=(example_logs,), output=out)
    with held(tmp_path):
        builder = threading.Thread(
            target=lambda: reports.append(build(options, on_wait=waiting.set))
        )
        builder.start()
        assert waiting.wait(10), "the build did not notice the lock"
        builder.join(0.5)
        assert builder.is_alive()
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir()] == [example_logs.name]  # no staging dir yet
    builder.join(60)
    assert not builder.is_alive()
    assert reports[0].published == 25
    assert len(json.loads((out / "api/jobs").read_bytes())) == 25


@pytest.mark.slow  # a full build beside a held lock
def test_builds_into_other_directories_do_not_wait(tmp_path: Path, example_logs: Path) -> None:
    (tmp_path / "a").mkdir()
    waited: list[bool] = []
    with held(tmp_path / "a"):
        options = BuildOptions(log_dirs=(example_logs,), output=tmp_path / "b" / "site")
        report = build(options, on_wait=lambda: waited.append(True))
    assert waited == []
    assert report.published == 25


@pytest.mark.slow  # a CLI build that waits on a held lock
def test_cli_says_it_waits_then_builds(tmp_path: Path, example_logs: Path) -> None:
    out = tmp_path / "site"
    command = [sys.executable, "-m", "sitegen", "build", "--event-log-dir", str(example_logs)]
    with held(tmp_path):
        proc = subprocess.Popen(
            [*command, "--output", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        line = proc.stderr.readline()  # blocks until the build prints why it waits
        assert line == (
            "Waiting for another sitegen build into the same directory "
            f"(process {os.getpid()}) to finish...\n"
        )
        assert proc.poll() is None
        assert not out.exists()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout.startswith(f"Published 25 jobs from 28 logs to {out} ")
    with held(tmp_path):
        quiet = subprocess.Popen(
            [*command, "--output", str(out), "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for_blocked_lock(quiet.pid)
    stdout, stderr = quiet.communicate(timeout=60)
    assert (quiet.returncode, stdout, stderr) == (0, "", "")


def wait_for_blocked_lock(pid: int) -> None:
    """Return once ``pid`` waits for a flock (Linux lists waiters in /proc/locks with ->)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields and "FLOCK" in fields and str(pid) in fields:
                return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never waited for the lock")


def _children(pid: int) -> list[int]:
    """Return the ids of ``pid``'s child processes (Linux /proc)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def _alive(pid: int) -> bool:
    """Tell whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow  # a killed build
def test_workers_die_with_a_killed_build_and_do_not_hold_its_lock(tmp_path: Path) -> None:
    """kill -9 of the build alone (not its group): its workers go too; the next build runs."""
    from tests.helpers.logs import job_lines, write

    logs = tmp_path / "logs"
    logs.mkdir()
    # Enough logs for a pool; forked workers wait on it for work, alive, whatever their load.
    for n in range(24):
        write(logs / f"job{n:03d}.eventlog", job_lines(f"job{n:03d}"))
    out = tmp_path / "site"
    command = [sys.executable, "-m", "sitegen", "build", "-q", "--event-log-dir", str(logs)]
    proc = subprocess.Popen([*command, "--output", str(out), "--workers", "2"])
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    assert len(workers) == 2, "the build finished before its workers could be seen"
    proc.kill()  # SIGKILL to the main process only
    proc.wait(10)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
    # The next build neither waits nor leaves the killed build's staging directory behind.
    done = subprocess.run(
        [*command, "--output", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Waiting" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "site"]
