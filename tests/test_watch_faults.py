"""``sitegen build --watch`` under faults: an inotify queue that overflows, a full disk, SIGKILL.

Each is a real watcher process on a real file system; the figures are in docs/robustness.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.logs import job_lines, write
from tests.helpers.namespaces import q, require_mounts
from tests.helpers.sitecheck import broken_links
from tests.test_watch import Watching, api_job, no_staging_left, published, watching

__all__ = ["watching"]  # the fixture, used by name

# The burst, and how long after SIGCONT every job of it must be on the site: the first publish
# after it, one build that lists the dir and maps all of them (about 50 s of CPU on 2 cores;
# 110 s here with the cores shared), with room for a busy CI.
BURST = 10_000
BURST_BOUND = 240.0
# What the tmpfs holds: the site of a few jobs and its state, with room for one build's writes.
DISK = "4000k"


def whole(site: Path) -> set[str]:
    """Return the published jobs, after checking that each has its files and no link breaks."""
    jobs = published(site)
    for job_id in jobs:
        assert api_job(site, job_id).is_file(), job_id
        assert (site / "jobs" / job_id / "index.html").is_file(), job_id
    assert broken_links(site) == []
    return jobs


def copied(site: Path, to: Path) -> Path:
    """Copy a site seen through ``/proc/<pid>/root`` (whose links resolve outside it) to ``to``."""
    shutil.copytree(site, to, symlinks=True)
    return to


def children(pid: int) -> list[str]:
    """Return the ids of a process's children (its forked map workers, during a build)."""
    try:
        return (Path(f"/proc/{pid}/task/{pid}/children").read_text()).split()
    except OSError:
        return []


@pytest.mark.slow
def test_a_burst_that_overflows_inotify_is_published_whole(
    watching: Callable[..., Watching],
) -> None:
    """Running logs fill the stopped watcher's queue, then 10,000 logs end: their events drop."""
    queue = Path("/proc/sys/fs/inotify/max_queued_events")
    if not queue.is_file():
        pytest.skip("no inotify here")
    w = watching("--workers", "2")
    write(w.logs / "before1.eventlog", job_lines("before1"))
    growing = [w.logs / f"grow{n}.eventlog.running" for n in range(2)]
    for path in growing:
        write(path, job_lines(path.name[:5])[:-1])
    w.publishes(1)
    before = published(w.site)
    lines = job_lines("burst00000")
    os.kill(w.process.pid, signal.SIGSTOP)  # it cannot drain its queue: the kernel drops events
    try:
        # Two running logs grow (blank lines) until the queue is full, whatever its size (a
        # global setting): each write one event, the two files taking turns so that none merge.
        with growing[0].open("ab", buffering=0) as one, growing[1].open("ab", buffering=0) as two:
            for _ in range(int(queue.read_text()) // 2 + 1):
                one.write(b"\n")
                two.write(b"\n")
        # Then 10,000 jobs end, as Ballista ends them: <id>.eventlog.running written, renamed
        # to <id>.eventlog. The kernel drops every one of these events.
        ids = {f"burst{n:05d}" for n in range(BURST)}
        for job_id in sorted(ids):
            running = w.logs / f"{job_id}.eventlog.running"
            write(running, [line.replace(b"burst00000", job_id.encode()) for line in lines])
            os.rename(running, w.logs / f"{job_id}.eventlog")
    finally:
        os.kill(w.process.pid, signal.SIGCONT)
    resumed = time.monotonic()
    # What the events tell is the running logs' growth alone (a publish on the running timer,
    # which would splice in those two names): the overflow makes the next publish list the dir.
    after = w.publishes(2, timeout=BURST_BOUND)[1]
    took = time.monotonic() - resumed
    assert (after["reason"], after["error"], after["listed_from_events"]) == (
        "events lost",
        None,
        False,
    )
    assert published(w.site) == before | ids
    print(f"{BURST} logs published {took:.1f} s after SIGCONT, {after['seconds']} s the build")
    assert w.stop() == 0
    no_staging_left(w.site)
    jobs = json.loads((w.site / "api" / "jobs").read_text())
    assert all(api_job(w.site, job["job_id"]).is_file() for job in jobs)


class Namespaced(Watching):
    """A watcher whose output is a tmpfs of ``DISK`` mounted in a mount namespace of its own.

    The test reaches the tmpfs through ``/proc/<pid>/root``, the watcher's view of the files.
    """

    def __init__(self, logs: Path, disk: Path) -> None:
        unshare = shutil.which("unshare")
        assert unshare is not None  # require_mounts skipped without it
        self.logs, self.disk = logs, disk
        command = f"{q(sys.executable)} -m sitegen build --event-log-dir {q(logs)} "
        command += f"--output {q(disk / 'site')} --workers 1 --watch --format json"
        self.process = subprocess.Popen(
            [
                unshare,
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                # exec: the watcher is the process the test signals, and its pid names the view.
                f"mount -t tmpfs -o size={DISK} tmpfs {q(disk)} && exec {command}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            text=True,
        )
        self.seen = []
        self.site = Path(f"/proc/{self.process.pid}/root") / disk.relative_to("/") / "site"


@pytest.mark.slow  # a tmpfs in a mount namespace
def test_a_disk_that_fills_under_the_watcher(tmp_path: Path) -> None:
    logs, disk = tmp_path / "logs", tmp_path / "disk"
    logs.mkdir()
    disk.mkdir()
    require_mounts(disk)
    for n in range(3):
        write(logs / f"early{n:02d}.eventlog", job_lines(f"early{n:02d}"))
    w = Namespaced(logs, disk)
    try:
        first = w.publishes(1)[0]
        assert first["error"] is None, first
        before = whole(copied(w.site, tmp_path / "before"))
        assert before == {"early00", "early01", "early02"}
        # Fill the disk: every block the site does not hold.
        filler = w.site.parent / "filler"
        with filler.open("wb") as out:
            try:
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
            except OSError as exc:
                assert exc.errno == 28  # ENOSPC
        # Jobs keep ending: each publish fails, and the site stays whole and as it was.
        for n in range(3):
            write(logs / f"late{n:02d}.eventlog", job_lines(f"late{n:02d}", stages=4))
            time.sleep(1.5)  # a publish each (50 ms of quiet ends a group)
        failed = w.publishes(2)[1]
        assert failed["error"] is not None and "No space left on device" in str(failed["error"])
        assert whole(copied(w.site, tmp_path / "full")) == before
        assert [p.name for p in w.site.parent.iterdir()] in (
            ["site", "filler"],
            ["filler", "site"],
        )
        # Space comes back (no file event tells of it): the retry publishes every job.
        filler.unlink()
        freed = time.monotonic()
        again = w.publishes(3, timeout=60)[2]
        took = time.monotonic() - freed
        assert again["error"] is None, again
        assert again["reason"] == "retry"
        assert whole(copied(w.site, tmp_path / "after")) == before | {"late00", "late01", "late02"}
        print(f"publish {again['publish']} went through {took:.1f} s after the space came back")
        print(f"the failure said once: {failed['error']}")
        assert w.stop() == 0
        stdout, stderr = w.process.communicate(timeout=10)
        # Said once: the repeated failures printed nothing, nothing else was published.
        assert stdout == "" and "Traceback" not in stderr
    finally:
        if w.process.poll() is None:
            w.process.kill()
            w.process.wait()


@pytest.mark.slow
def test_a_watcher_killed_mid_publish_then_started_again(
    watching: Callable[..., Watching],
) -> None:
    """SIGKILL while the forked workers map: the next watcher's first build completes the site."""
    expected = set()
    for rounds in range(3):
        w = watching("--workers", "2")
        if rounds == 0:
            write(w.logs / "keep001.eventlog", job_lines("keep001"))
            expected.add("keep001")
        w.publishes(1)
        before = published(w.site)
        for n in range(40):
            job_id = f"r{rounds}n{n:03d}"
            write(w.logs / f"{job_id}.eventlog", job_lines(job_id, stages=4))
            expected.add(job_id)
        deadline = time.monotonic() + 30
        while not children(w.process.pid):  # its map workers: the publish is under way
            assert time.monotonic() < deadline and w.process.poll() is None
            time.sleep(0.01)
        assert w.stop(signal.SIGKILL) == -signal.SIGKILL
        assert w.process.stdout is not None
        assert w.process.stdout.read() == ""  # killed before it published the new logs
        # What a client reads now is the site as it was, or updated whole.
        assert whole(w.site) >= before
    w = watching()
    first = w.publishes(1)[0]
    assert first["error"] is None, first
    assert whole(w.site) == expected
    print(f"the site complete after the restart's first build, {first['seconds']} s")
    assert w.stop() == 0
    no_staging_left(w.site)


def test_the_overflow_alarm_hears_a_queue_that_overflowed(tmp_path: Path) -> None:
    from sitegen.builder.overflow import open_alarm

    queue = Path("/proc/sys/fs/inotify/max_queued_events")
    alarm = open_alarm([tmp_path])
    if alarm is None or not queue.is_file():
        pytest.skip("no inotify here")
    try:
        (tmp_path / "sub").mkdir()  # a dir made below is watched too (as watchfiles does)
        assert alarm.overflowed() is False
        b = tmp_path / "sub" / "b"
        with (tmp_path / "a").open("ab", buffering=0) as one, b.open("ab", buffering=0) as two:
            for _ in range(int(queue.read_text()) // 2 - 10):
                one.write(b"\n")  # one event each: the two files take turns, none merge
                two.write(b"\n")
        assert alarm.overflowed() is False  # a full queue, but nothing dropped
        with (tmp_path / "a").open("ab", buffering=0) as one, b.open("ab", buffering=0) as two:
            for _ in range(int(queue.read_text()) // 2 + 1):
                one.write(b"\n")  # one event each: the two files take turns, none merge
                two.write(b"\n")
        assert alarm.overflowed() is True
        assert alarm.overflowed() is False  # heard once
    finally:
        alarm.close()


def test_a_failure_that_repeats_is_said_once(tmp_path: Path) -> None:
    from sitegen.builder.options import BuildOptions
    from sitegen.builder.plan.events import Hint
    from sitegen.builder.watch import Publish, Watcher
    from sitegen.errors import PublishError

    outcomes: list[str | None] = ["full", "full", "full", None, "full", "other"]

    def build(options: BuildOptions, hint: Hint) -> object:
        error = outcomes.pop(0)
        if error is not None:
            raise PublishError(error)
        return type("Report", (), {"running": [], "listed_from_events": False})()

    heard: list[Publish] = []
    watcher = Watcher(BuildOptions(tmp_path, tmp_path / "site"), build, heard.append)  # type: ignore[arg-type]
    for _ in range(6):
        watcher.publish("changed")
    assert [(p.error, p.repeated) for p in heard] == [
        ("full", False),
        ("full", True),
        ("full", True),
        (None, False),
        ("full", False),
        ("other", False),
    ]
