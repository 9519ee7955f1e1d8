"""``sitegen build --watch``: a real process publishing each change of the log dirs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.plan.events import Hint
from sitegen.model import RunningJob
from tests.helpers.logs import job_lines, write


class Watching:
    """A ``sitegen build --watch --format json`` process and the publishes it printed."""

    def __init__(self, logs: Path, site: Path, *extra: str, output_flag: bool = True) -> None:
        self.logs, self.site = logs, site
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        args = ["--event-log-dir", str(logs), "--workers", "1"]
        if output_flag:  # else sitegen.toml names it
            args += ["--output", str(site)]
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sitegen",
                "build",
                *args,
                "--watch",
                "--format",
                "json",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=logs.parent,
            text=True,
        )
        self.seen: list[dict[str, object]] = []

    def publishes(self, count: int, timeout: float = 60) -> list[dict[str, object]]:
        """Wait until ``count`` publishes were printed; return them all."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while len(self.seen) < count:
            assert time.monotonic() < deadline, f"only {len(self.seen)} publishes: {self.seen}"
            line = self.process.stdout.readline()
            assert line, (
                f"the watcher ended: {self.process.stderr.read() if self.process.stderr else ''}"
            )
            self.seen.append(json.loads(line))
        return self.seen

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send ``sig`` and return the exit status (within ``timeout`` seconds)."""
        self.process.send_signal(sig)
        return self.process.wait(timeout)


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[Callable[..., Watching]]:
    started: list[Watching] = []

    def start(*extra: str, output_flag: bool = True) -> Watching:
        logs = tmp_path / "logs"
        logs.mkdir(exist_ok=True)
        w = Watching(logs, tmp_path / "site", *extra, output_flag=output_flag)
        started.append(w)
        return w

    yield start
    for w in started:
        if w.process.poll() is None:
            w.process.kill()
            w.process.wait()


def api_job(site: Path, job_id: str) -> Path:
    return site / "api" / "job" / job_id / "index.json"


def published(site: Path) -> set[str]:
    jobs = json.loads((site / "api" / "jobs").read_text())
    return {j["job_id"] for j in jobs}


def no_staging_left(site: Path) -> None:
    leftovers = [p.name for p in site.parent.iterdir() if p.name.startswith(".site")]
    assert leftovers == []


@pytest.mark.slow
def test_a_new_log_a_removal_and_a_running_log_renamed(watching: Callable[..., Watching]) -> None:
    w = watching()
    write(w.logs / "first01.eventlog", job_lines("first01"))
    first = w.publishes(1)[0]
    assert first["reason"] == "first build" and first["error"] is None
    assert first["listed_from_events"] is False  # the first build lists the dir
    assert published(w.site) == {"first01"}

    write(w.logs / "second2.eventlog", job_lines("second2"))
    seen = w.publishes(2)
    assert seen[-1]["reason"] == "changed"
    # The build took the new name from the event, not from listing the dir again.
    assert seen[-1]["listed_from_events"] is True
    assert published(w.site) == {"first01", "second2"}

    # Ballista writes <id>.eventlog.running and renames it when the job ends.
    lines = job_lines("third03")
    write(w.logs / "third03.eventlog.running", lines[:-1])
    time.sleep(0.3)
    os.rename(w.logs / "third03.eventlog.running", w.logs / "third03.eventlog")
    (w.logs / "third03.eventlog").write_bytes(b"".join(lines))
    deadline = time.monotonic() + 30
    while not api_job(w.site, "third03").is_file():
        assert time.monotonic() < deadline, w.seen
        w.publishes(len(w.seen) + 1)
    assert published(w.site) == {"first01", "second2", "third03"}

    count = len(w.seen)
    (w.logs / "second2.eventlog").unlink()
    assert w.publishes(count + 1)[-1]["listed_from_events"] is True
    assert published(w.site) == {"first01", "third03"}
    assert not api_job(w.site, "second2").exists()
    assert w.stop() == 0
    no_staging_left(w.site)


@pytest.mark.slow
def test_a_burst_of_logs_is_one_publish(watching: Callable[..., Watching]) -> None:
    w = watching()
    w.publishes(1)
    burst = w.logs.parent / "burst"
    burst.mkdir()
    for n in range(100):
        write(burst / f"burst{n:03d}.eventlog", job_lines(f"burst{n:03d}"))
    began = time.monotonic()
    for path in sorted(burst.iterdir()):  # 100 logs arrive within a second
        os.rename(path, w.logs / path.name)
    assert time.monotonic() - began < 1
    seen = w.publishes(2)
    assert seen[1]["changes"] == 100
    assert len(published(w.site)) == 100
    assert w.stop() == 0


@pytest.mark.slow
def test_sigterm_mid_publish_leaves_a_whole_site(watching: Callable[..., Watching]) -> None:
    w = watching()
    write(w.logs / "keep001.eventlog", job_lines("keep001"))
    w.publishes(1)
    before = published(w.site)
    for n in range(60):
        write(w.logs / f"more{n:03d}.eventlog", job_lines(f"more{n:03d}", stages=4))
    time.sleep(0.4)  # the watcher has begun publishing them
    assert w.stop() == 0
    no_staging_left(w.site)
    now = published(w.site)
    # Either as it was or with every new job whole: each listed job has its files.
    assert now == before or now >= before
    for job_id in now:
        assert api_job(w.site, job_id).is_file()
        assert (w.site / "jobs" / job_id / "index.html").is_file()


@pytest.mark.slow
def test_a_log_dir_removed_and_restored(watching: Callable[..., Watching]) -> None:
    w = watching()
    write(w.logs / "early01.eventlog", job_lines("early01"))
    w.publishes(1)
    saved = w.logs.parent / "saved"
    shutil.move(w.logs, saved)
    time.sleep(1.5)
    assert w.process.poll() is None  # still watching
    shutil.move(saved, w.logs)
    write(w.logs / "late002.eventlog", job_lines("late002"))
    deadline = time.monotonic() + 30
    while not api_job(w.site, "late002").is_file():
        assert time.monotonic() < deadline, w.seen
        w.publishes(len(w.seen) + 1)
    assert published(w.site) == {"early01", "late002"}
    assert w.stop(signal.SIGINT) == 0


@pytest.mark.slow
def test_sighup_reads_the_config_again_and_keeps_it_when_broken(
    watching: Callable[..., Watching], tmp_path: Path
) -> None:
    config = tmp_path / "sitegen.toml"  # the watcher runs in tmp_path: its ./sitegen.toml
    config.write_text('title = "Before"\noutput = "site"\n')
    w = watching(output_flag=False)
    write(w.logs / "titled1.eventlog", job_lines("titled1"))
    w.publishes(1)
    assert "Before" in (w.site / "index.html").read_text()

    config.write_text('title = "After"\noutput = "site"\n')
    w.process.send_signal(signal.SIGHUP)
    seen = w.publishes(2)
    assert seen[1]["reason"] == "settings reloaded"
    assert "After" in (w.site / "index.html").read_text()

    config.write_text("title = \n")  # not TOML
    w.process.send_signal(signal.SIGHUP)
    seen = w.publishes(3)
    assert seen[2]["reason"] == "settings" and "not valid TOML" in str(seen[2]["error"])

    config.write_text('title = "After"\noutput = "elsewhere"\n')
    w.process.send_signal(signal.SIGHUP)
    seen = w.publishes(4)
    assert "restart" in str(seen[3]["error"])
    assert w.process.poll() is None
    assert w.stop() == 0


@pytest.mark.slow
def test_polling_sees_a_new_log(watching: Callable[..., Watching]) -> None:
    w = watching("--poll", "0.2")
    w.publishes(1)
    write(w.logs / "polled1.eventlog", job_lines("polled1"))
    w.publishes(2)
    assert published(w.site) == {"polled1"}
    assert w.stop() == 0


def test_watch_refuses_an_archive(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--watch", "--archive", str(tmp_path / "a.zip")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert "--archive cannot be used with --watch" in out.stderr


class FakeReport:
    """What the watcher reads of a build's report: the running jobs."""

    def __init__(self, running: list[RunningJob]) -> None:
        self.running = running
        self.listed_from_events = False


def run_watcher(logs: Path, act: Callable[[], None], seconds: float, running: bool) -> list[str]:
    """Run a Watcher in a thread over ``logs`` with a build that records only the reasons."""
    import threading

    from sitegen.builder.options import BuildOptions
    from sitegen.builder.watch import Publish, Watcher

    reasons: list[str] = []

    def fake_build(options: BuildOptions, hint: Hint) -> Any:
        return FakeReport([RunningJob("f", "job", "", 0, 0, 0, 0, 0, 0, 0)] if running else [])

    def heard(done: Publish) -> None:
        assert done.error is None, done.error
        reasons.append(done.reason)

    watcher = Watcher(
        BuildOptions(logs, logs.parent / "site"), fake_build, heard, running_interval=1.0
    )
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        while not reasons:
            time.sleep(0.05)
        act()
        time.sleep(seconds)
    finally:
        watcher.stop.set()
        thread.join(10)
    assert not thread.is_alive()
    return reasons


def grow(log: Path, seconds: float) -> None:
    """Append to ``log`` every 50 ms for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with log.open("ab") as f:
            f.write(b'{"ev":"TaskEnd","version":1,"data":{}}\n')
        time.sleep(0.05)


@pytest.mark.slow
def test_a_growing_running_log_publishes_at_most_every_interval(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = write(logs / "grows01.eventlog.running", job_lines("grows01")[:2])
    reasons = run_watcher(logs, lambda: grow(log, 3.2), 0.2, running=True)
    # 3.2 s of appends every 50 ms at a 1 s interval: about three publishes, not sixty.
    assert reasons[0] == "first build"
    assert 2 <= reasons.count("running logs") <= 4, reasons
    assert "changed" not in reasons


@pytest.mark.slow
def test_running_logs_are_judged_again_on_the_timer(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    reasons = run_watcher(logs, lambda: None, 2.6, running=True)
    assert 2 <= reasons.count("running logs") <= 3, reasons  # no file event at all
    assert run_watcher(logs, lambda: None, 1.6, running=False) == ["first build"]


def test_a_finished_log_written_publishes_at_once(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()

    def drop() -> None:
        write(logs / "done001.eventlog", job_lines("done001"))

    reasons = run_watcher(logs, drop, 0.5, running=False)
    assert reasons == ["first build", "changed"]


def test_a_reload_gives_each_setting_as_a_parse_does(tmp_path: Path) -> None:
    from sitegen.cli import cli
    from sitegen.commands.watch import reloaded

    config = tmp_path / "sitegen.toml"
    config.write_text('title = "Before"\nmax_log_size = "1MiB"\n')
    build = cli.commands["build"]
    with build.make_context(
        "build", ["--config", str(config), "--event-log-dir", str(tmp_path)]
    ) as ctx:
        given = dict(ctx.params)
        assert given["max_log_size"] == 2**20
        config.write_text('title = "After"\n')  # the size is the file's no more: its default
        fresh = reloaded(ctx, given)
    assert fresh["title"] == "After"
    assert fresh["max_log_size"] == 4 * 2**30 and fresh["max_line_size"] == 256 * 2**20
    assert fresh["log_dirs"] == given["log_dirs"] == (tmp_path,)
