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

from sitegen.builder.pipeline import BuildOptions, BuildReport, build


@contextlib.contextmanager
def held(directory: Path) -> Iterator[None]:
    """Hold the build lock of outputs inside ``directory``, as a running build does."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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


def test_builds_into_other_directories_do_not_wait(tmp_path: Path, example_logs: Path) -> None:
    (tmp_path / "a").mkdir()
    waited: list[bool] = []
    with held(tmp_path / "a"):
        options = BuildOptions(log_dirs=(example_logs,), output=tmp_path / "b" / "site")
        report = build(options, on_wait=lambda: waited.append(True))
    assert waited == []
    assert report.published == 25


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
        assert line == "Waiting for another sitegen build into the same directory to finish...\n"
        assert proc.poll() is None
        assert not out.exists()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout.startswith(f"Published 25 jobs from 27 logs to {out} ")
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
