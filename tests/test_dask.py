"""The map step on a Dask cluster: a real ``distributed.LocalCluster`` of two worker processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from tests.conftest import require_module
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree
from tests.test_object_storage import s3  # noqa: F401 (the moto server fixture, by name)

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_client_left() -> Iterator[None]:
    """Close the clients a test's builds made: their threads would stop later tests' forks."""
    yield
    from sitegen.builder.map import dask_mapper

    dask_mapper.close_clients()


@dataclass
class Local:
    proc: subprocess.Popen[str]
    address: str


@pytest.fixture()
def cluster() -> Iterator[Local]:
    """Two worker processes of one thread each, on loopback, run by a process of their own."""
    yield from _local_cluster()


def _local_cluster() -> Iterator[Local]:
    require_module("distributed", "dask")
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "helpers" / "dask_cluster.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), address
        yield Local(proc, address)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _sitegen(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "sitegen", "build", "-q", *args], check=True)


def test_a_site_mapped_on_two_dask_workers_is_the_local_build_byte_for_byte(
    cluster: Local, example_logs: Path, tmp_path: Path
) -> None:
    address = cluster.address
    # A second log of one job id goes to its part directory, as with the local pool.
    (example_logs / "zz-again.eventlog").write_bytes(
        (example_logs / "1UXXFWX.eventlog").read_bytes()
    )
    local, dask = tmp_path / "local", tmp_path / "dask"
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    _sitegen(
        "--event-log-dir", str(example_logs), "--output", str(dask), "--dask-scheduler", address
    )
    assert tree(dask) == tree(local)
    # An incremental build on the cluster: a new log.
    write(example_logs / "new1.eventlog", job_lines("new1", start_ms=1_767_300_000_000))
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    _sitegen(
        "--event-log-dir", str(example_logs), "--output", str(dask), "--dask-scheduler", address
    )
    assert tree(dask) == tree(local)
    assert (dask / "api/job/new1/index.json").is_file()
    # The workers did the reading: each ran map tasks.
    assert cluster.proc.stdin is not None and cluster.proc.stdout is not None
    cluster.proc.stdin.close()
    done = json.loads(cluster.proc.stdout.readline())
    assert len(done) == 2 and all(count > 0 for count in done.values()), done


def test_without_the_option_nothing_of_dask_is_imported(example_logs: Path, tmp_path: Path) -> None:
    code = (
        "import sys; from sitegen.cli import cli\n"
        "try:\n"
        "    cli(['build', '--event-log-dir', sys.argv[1], '--output', sys.argv[2], '-q'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask', 'fsspec', 's3fs')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(example_logs), str(tmp_path / "site")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def _start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def _wait_for_workers(address: str, count: int) -> Any:
    from sitegen.builder.map.dask_mapper import client

    dask = client(address)
    dask.wait_for_workers(count, timeout=60)
    return dask


@dataclass
class Separate:
    address: str
    scheduler_file: Path
    procs: list[subprocess.Popen[str]]

    def add_worker(
        self, *wrapper: str, poison: str | None = None, hang_while: Path | None = None
    ) -> None:
        """Start a worker; with ``poison``, one that a nanny restarts and that dies on that log.

        With ``hang_while`` too, it hangs on that log instead, while that file exists.
        """
        args = [sys.executable, "-m", "distributed.cli.dask_worker", "--nthreads", "1"]
        args += ["--no-dashboard", "--scheduler-file", str(self.scheduler_file)]
        env = None
        if poison is None:
            args.append("--no-nanny")
        else:
            args += ["--preload", str(Path(__file__).parent / "helpers" / "dask_poison.py")]
            env = {"SITEGEN_TEST_POISON": poison, "PYTHONPATH": str(Path(__file__).parent.parent)}
            if hang_while is not None:
                env["SITEGEN_TEST_HANG_WHILE"] = str(hang_while)
        self.procs.append(_start([*wrapper, *args], env))


def scheduler_address(scheduler_file: Path, timeout: float = 60) -> str:
    """Return the address the scheduler writes to its file, once the file is whole."""
    # The scheduler creates the file before it writes it: an empty read is a file not yet whole.
    deadline = time.monotonic() + timeout
    while True:
        try:
            return str(json.loads(scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture()
def separate_cluster(tmp_path: Path) -> Iterator[Separate]:
    """A scheduler (`dask scheduler`) and, by test, workers (`dask worker`): separate processes."""
    require_module("distributed", "dask")
    scheduler_file = tmp_path / "scheduler.json"
    procs = [
        _start(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ]
        )
    ]
    address = scheduler_address(scheduler_file)
    try:
        yield Separate(address, scheduler_file, procs)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_separate_dask_processes_write_the_jobs_themselves_byte_for_byte(
    separate_cluster: Separate, example_logs: Path, tmp_path: Path
) -> None:
    from sitegen.builder.map.dask_mapper import shares_output

    address = separate_cluster.address
    separate_cluster.add_worker()
    separate_cluster.add_worker()
    dask = _wait_for_workers(address, 2)
    probe_dir = tmp_path / "probe"
    assert shares_output(dask, probe_dir) is True
    assert list((probe_dir / ".parts").iterdir()) == []  # the probe's markers are gone
    (example_logs / "zz-again.eventlog").write_bytes(
        (example_logs / "1UXXFWX.eventlog").read_bytes()
    )
    local, remote = tmp_path / "local", tmp_path / "dask"
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    build(BuildOptions(log_dirs=example_logs, output=remote, dask_scheduler=address))
    assert tree(remote) == tree(local)
    write(example_logs / "new1.eventlog", job_lines("new1", start_ms=1_767_300_000_000))
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    build(BuildOptions(log_dirs=example_logs, output=remote, dask_scheduler=address))
    assert tree(remote) == tree(local)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root's unshare"
)
def test_a_worker_that_sees_another_output_dir_sends_bytes_and_the_site_is_the_same(
    separate_cluster: Separate, example_logs: Path, tmp_path: Path
) -> None:
    """The worker's mount namespace hides the output's parent behind an empty tmpfs."""
    from sitegen.builder.map.dask_mapper import shares_output

    address = separate_cluster.address
    hidden = tmp_path / "out"
    hidden.mkdir()
    script = 'mount -t tmpfs none "$0" && exec "$@"'
    separate_cluster.add_worker(
        "unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(hidden)
    )
    dask = _wait_for_workers(address, 1)
    assert shares_output(dask, hidden / "probe") is False
    assert shares_output(dask, tmp_path / "seen") is True  # the logs' side is shared
    local = tmp_path / "local"
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    build(BuildOptions(log_dirs=example_logs, output=hidden / "site", dask_scheduler=address))
    assert tree(hidden / "site") == tree(local)


def test_a_dask_worker_killed_mid_map_leaves_nothing_behind(cluster: Local, tmp_path: Path) -> None:
    """SIGKILL a worker while it maps: its chunk runs again elsewhere, the site is the local one."""
    address = cluster.address
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(240):
        write(
            logs / f"job{i:03}.eventlog",
            job_lines(
                f"job{i:03}", start_ms=1_767_000_000_000 + i * 60_000, stages=3, tasks_per_stage=20
            ),
        )
    local, remote = tmp_path / "local", tmp_path / "dask"
    build(BuildOptions(log_dirs=logs, output=local, workers=2))
    dask = _wait_for_workers(address, 2)
    pids = dask.run(os.getpid)
    done: list[Any] = []
    builder = threading.Thread(
        target=lambda: done.append(
            build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
        )
    )
    builder.start()
    deadline = time.monotonic() + 120
    claims: list[Path] = []
    while time.monotonic() < deadline and builder.is_alive():
        claims = list(tmp_path.glob(".dask.staging-*/.parts/.claims"))
        if claims and claims[0].read_bytes().count(b"\n") >= 40:
            break
        time.sleep(0.01)
    assert claims, "the map had not begun"
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    builder.join(300)
    assert done and done[0].published == 240
    assert tree(remote) == tree(local)


@pytest.mark.parametrize("sees_output", [True, False], ids=["writes", "sends-bytes"])
def test_a_log_that_kills_every_worker_that_maps_it_is_a_problem_row_of_its_own(
    separate_cluster: Separate, example_logs: Path, tmp_path: Path, sees_output: bool
) -> None:
    """Its chunk is run again until the scheduler gives up; then each log of it runs alone."""
    address = separate_cluster.address
    hidden = tmp_path / "out"
    hidden.mkdir()
    wrapper: list[str] = []
    if not sees_output:  # it returns bytes: the same problem row (jobs.died_outcome's)
        script = 'mount -t tmpfs none "$0" && exec "$@"'
        wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]
        wrapper.append(str(hidden))
    for _ in range(2):
        separate_cluster.add_worker(*wrapper, poison="Ca05RFR.eventlog")
    _wait_for_workers(address, 2)
    site = hidden / "dask"
    report = build(BuildOptions(log_dirs=example_logs, output=site, dask_scheduler=address))
    (problem,) = [p for p in report.problems if p.file == "Ca05RFR.eventlog"]
    assert problem.message == (
        "the process reading this log was killed on every Dask worker that ran it"
    )
    # Every other job of its chunk is published, and nothing of the poisoned one is left.
    assert report.published == 24
    assert not (site / "jobs" / "Ca05RFR").exists()
    assert not (site / "api" / "job" / "Ca05RFR").exists()
    assert [p.name for p in hidden.iterdir() if p.name.startswith(".")] == []


@pytest.mark.usefixtures("s3")
def test_workers_put_new_jobs_in_the_bucket_and_the_command_the_listings(tmp_path: Path) -> None:
    """A Dask build to s3://: the workers upload the new jobs, the command the rest."""
    from sitegen.publish import bucket as objects
    from tests.test_object_storage import bucket, expected_objects, fs, run_cli, site_keys

    b = bucket("")
    logs = tmp_path / "logs"
    logs.mkdir()
    # Runs of one name: each page gets its run context after the map, and goes up again
    # from the worker that splices it.
    for n in range(6):
        lines = job_lines(f"job{n}", name="etl", start_ms=1_767_000_000_000 + n * 60_000)
        write(logs / f"job{n}.eventlog", lines)
    cache, local = tmp_path / "cache", tmp_path / "local"
    # Started after the S3 server: its workers reach it as this process does (the env vars).
    clusters = _local_cluster()
    running = next(clusters)
    args = ["build", "--event-log-dir", str(logs), "--output", f"s3://{b}/site/"]
    args += ["--dask-scheduler", running.address, "--format", "json"]
    try:

        def publish() -> dict[str, Any]:
            code, out = run_cli(args, cache)
            assert code == 0, out
            summary: dict[str, Any] = json.loads(out)
            return summary

        first = publish()
        build(BuildOptions(log_dirs=logs, output=local, workers=2))
        expected = expected_objects(local)
        job_objects = {k for k in expected if k.startswith(objects.JOB_PREFIXES)}
        assert len(job_objects) > 6 * 4
        # Every job from the workers, every listing and site-wide file from the command.
        assert first["objects_uploaded_by_workers"] == len(job_objects)
        assert all(fs().cat_file(f"{b}/site/{k}") == expected[k] for k in job_objects)
        assert first["objects_uploaded"] == len(expected) - len(job_objects)
        assert site_keys(b) == set(expected)
        assert {k: fs().cat_file(f"{b}/site/{k}") for k in expected} == expected
        assert not fs().exists(f"{b}/site.sitegen-state/{objects.DIRECT}")

        write(logs / "job9.eventlog", job_lines("job9", name="etl", start_ms=1_767_000_900_000))
        second = publish()
        build(BuildOptions(log_dirs=logs, output=local, workers=2))
        expected = expected_objects(local)
        new = {k for k in expected if "job9" in k}
        assert second["objects_uploaded_by_workers"] == len(new)
        # The command put up the listings and the site-wide files: a new run changes no page
        # published before (a page names only the runs before it).
        assert 0 < second["objects_uploaded"] < 40
        assert site_keys(b) == set(expected)
        assert fs().cat_file(f"{b}/site/api/jobs") == expected["api/jobs"]

        # A build that died after its workers uploaded left its mark and a job no listing
        # names: the next publish deletes it.
        fs().pipe_file(f"{b}/site/jobs/ghost/index.html", b"<p>half a job</p>")
        fs().pipe_file(f"{b}/site.sitegen-state/{objects.DIRECT}", b"")
        publish()
        assert site_keys(b) == set(expected)
        assert not fs().exists(f"{b}/site.sitegen-state/{objects.DIRECT}")
    finally:
        clusters.close()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 20 << 20), max_size=400),
    st.integers(1, 16),
)
def test_chunks_hold_every_log_once_in_order_and_shrink_to_one_at_the_end(
    sizes: list[int], threads: int
) -> None:
    from sitegen.builder.map.dask_mapper import CHUNK, CHUNK_BYTES, _chunks

    numbers = list(range(len(sizes)))
    chunks = _chunks(numbers, threads, sizes)
    assert [n for chunk in chunks for n in chunk] == numbers
    for chunk in chunks:
        assert 1 <= len(chunk) <= CHUNK
        assert len(chunk) == 1 or sum(sizes[n] for n in chunk) <= CHUNK_BYTES
    if chunks:
        assert len(chunks[-1]) == 1  # no worker maps a long last chunk while the others wait


def test_chunks_of_many_small_logs_are_full_until_the_end() -> None:
    from sitegen.builder.map.dask_mapper import _chunks

    lengths = [len(chunk) for chunk in _chunks(list(range(1000)), 2, [15_000] * 1000)]
    assert lengths[:12] == [64] * 12 and lengths[-4:] == [1] * 4
    assert lengths == sorted(lengths, reverse=True)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(1, 16))
def test_peeks_go_in_a_few_even_chunks_a_worker_thread(count: int, threads: int) -> None:
    from sitegen.builder.map.dask_mapper import EACH_CHUNK, GUIDE, _even_chunks

    chunks = _even_chunks(count, threads)
    assert [n for chunk in chunks for n in chunk] == list(range(count))
    assert all(1 <= len(chunk) <= EACH_CHUNK for chunk in chunks)
    # As few tasks as keep each thread busy: GUIDE a thread unless a chunk would be too long.
    assert len(chunks) <= max(GUIDE * threads, -(-count // EACH_CHUNK))
    assert len({len(chunk) for chunk in chunks[:-1]}) <= 1


def _logs(where: Path, first: int, count: int) -> None:
    """Write ``count`` logs of three stages of 20 tasks, ``job<first>`` on."""
    where.mkdir(exist_ok=True)
    for i in range(first, first + count):
        lines = job_lines(
            f"job{i:03}", start_ms=1_767_000_000_000 + i * 60_000, stages=3, tasks_per_stage=20
        )
        write(where / f"job{i:03}.eventlog", lines)


def _mid_map(tmp_path: Path, builder: threading.Thread, logs: int) -> None:
    """Return once the build in ``builder`` has claimed ``logs`` logs' jobs (its map is under way)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and builder.is_alive():
        claims = list(tmp_path.glob("**/.parts/.claims"))
        if claims and claims[0].read_bytes().count(b"\n") >= logs:
            return
        time.sleep(0.01)
    raise AssertionError("the map had not begun")


def _build_in_thread(options: BuildOptions) -> tuple[threading.Thread, list[Any]]:
    """Start a build in a thread; its report, or the exception it raised, lands in the list."""
    ended: list[Any] = []

    def run() -> None:
        try:
            ended.append(build(options))
        except Exception as exc:
            ended.append(exc)

    builder = threading.Thread(target=run)
    builder.start()
    return builder, ended


def test_a_dask_worker_that_hangs_mid_map_ends_the_build_within_its_timeout(
    cluster: Local, tmp_path: Path
) -> None:
    """SIGSTOP a worker mid-map: the build stops past --dask-timeout, the old site whole."""
    from sitegen.errors import ClusterError
    from tests.test_watch_faults import whole

    address, logs = cluster.address, tmp_path / "logs"
    local, remote = tmp_path / "local", tmp_path / "dask"
    _logs(logs, 0, 20)
    build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    old = tree(remote)
    _logs(logs, 20, 160)
    pids = _wait_for_workers(address, 2).run(os.getpid)
    hung = next(iter(pids.values()))
    timeout = 4.0
    options = BuildOptions(
        log_dirs=logs, output=remote, dask_scheduler=address, dask_timeout=timeout
    )
    builder, ended = _build_in_thread(options)
    try:
        _mid_map(tmp_path, builder, 20)
        os.kill(hung, signal.SIGSTOP)
        stopped = time.monotonic()
        builder.join(120)
        took = time.monotonic() - stopped
    finally:
        os.kill(hung, signal.SIGCONT)
    assert ended and isinstance(ended[0], ClusterError), ended
    assert f"returned nothing for {timeout:g} s (--dask-timeout)" in str(ended[0])
    # Within the timeout, the last chunk's wait, and the reduce's unwinding.
    assert took < 3 * timeout, took
    print(f"hung worker: the build stopped {took:.1f} s after SIGSTOP")
    assert tree(remote) == old
    assert len(whole(remote)) == 20
    # The worker goes on: the next build is complete, and the local build's.
    started = time.monotonic()
    report = build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    print(f"hung worker: the next build took {time.monotonic() - started:.1f} s")
    build(BuildOptions(log_dirs=logs, output=local, workers=2))
    assert report.published == 180
    assert tree(remote) == tree(local)
    assert len(whole(remote)) == 180


def _scheduler_at(scheduler_file: Path, port: int) -> subprocess.Popen[str]:
    """Start ``dask scheduler`` on loopback at ``port`` (0: any), writing ``scheduler_file``."""
    args = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--no-dashboard", "--scheduler-file", str(scheduler_file)]
    return _start(args)


def test_a_dask_scheduler_killed_mid_build_keeps_the_old_site_and_the_next_build_is_whole(
    separate_cluster: Separate, tmp_path: Path
) -> None:
    """SIGKILL the scheduler mid-map, start it again at its address: the next build is whole."""
    from sitegen.errors import ClusterError
    from tests.test_watch_faults import whole

    address, logs = separate_cluster.address, tmp_path / "logs"
    local, remote = tmp_path / "local", tmp_path / "dask"
    separate_cluster.add_worker()
    separate_cluster.add_worker()
    _wait_for_workers(address, 2)
    _logs(logs, 0, 20)
    build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    old = tree(remote)
    _logs(logs, 20, 160)
    builder, ended = _build_in_thread(
        BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address)
    )
    _mid_map(tmp_path, builder, 20)
    separate_cluster.procs[0].kill()
    killed = time.monotonic()
    builder.join(120)
    took = time.monotonic() - killed
    assert ended and isinstance(ended[0], ClusterError), ended
    assert str(ended[0]).startswith(f"lost the Dask scheduler at {address} mid-build")
    assert took < 30, took
    print(f"scheduler killed: the build stopped {took:.1f} s after SIGKILL")
    assert tree(remote) == old
    assert len(whole(remote)) == 20
    # The scheduler starts again at its address; the workers are started again as a
    # scheduler's restart leaves them (on their own they retire without their scheduler).
    restarted = tmp_path / "restarted.json"
    port = int(address.rsplit(":", 1)[1])
    separate_cluster.procs.append(_scheduler_at(restarted, port))
    assert scheduler_address(restarted) == address
    separate_cluster.scheduler_file = restarted
    separate_cluster.add_worker()
    separate_cluster.add_worker()
    _wait_for_workers(address, 2)
    started = time.monotonic()
    report = build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    print(f"scheduler killed: the next build took {time.monotonic() - started:.1f} s")
    build(BuildOptions(log_dirs=logs, output=local, workers=2))
    assert report.published == 180
    assert tree(remote) == tree(local)
    assert len(whole(remote)) == 180


def test_a_dask_worker_stuck_in_one_log_ends_the_build_within_its_timeout(
    separate_cluster: Separate, tmp_path: Path
) -> None:
    """A worker thread stuck on one log while its process answers: no heartbeat sees it."""
    from sitegen.errors import ClusterError
    from tests.test_watch_faults import whole

    address, logs = separate_cluster.address, tmp_path / "logs"
    local, remote = tmp_path / "local", tmp_path / "dask"
    stuck = tmp_path / "stuck"
    stuck.touch()
    for _ in range(2):
        separate_cluster.add_worker(poison="job050.eventlog", hang_while=stuck)
    _wait_for_workers(address, 2)
    _logs(logs, 0, 20)
    build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    old = tree(remote)
    _logs(logs, 20, 60)
    timeout = 4.0
    started = time.monotonic()
    with pytest.raises(ClusterError, match=r"returned nothing for 4 s \(--dask-timeout\)"):
        build(
            BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address, dask_timeout=timeout)
        )
    took = time.monotonic() - started
    print(f"stuck worker: the build stopped after {took:.1f} s")
    assert took < 30, took
    assert tree(remote) == old
    assert len(whole(remote)) == 20
    stuck.unlink()  # the hang ends: the next build is whole
    started = time.monotonic()
    report = build(BuildOptions(log_dirs=logs, output=remote, dask_scheduler=address))
    print(f"stuck worker: the next build took {time.monotonic() - started:.1f} s")
    build(BuildOptions(log_dirs=logs, output=local, workers=2))
    assert report.published == 80
    assert tree(remote) == tree(local)
    assert len(whole(remote)) == 80


def test_the_dask_timeout_option_defaults_to_the_builders_and_refuses_zero(tmp_path: Path) -> None:
    import click
    from click.testing import CliRunner

    from sitegen.builder.options import DASK_TIMEOUT, BuildOptions
    from sitegen.cli import cli
    from sitegen.commands.shared_options import DASK_TIMEOUT as OPTION
    from sitegen.errors import UsageError

    @OPTION
    def command(dask_timeout: float) -> None:
        assert dask_timeout == DASK_TIMEOUT

    assert CliRunner().invoke(click.command()(command), []).exit_code == 0
    refused = CliRunner().invoke(cli, ["build", "--dask-timeout", "0", "-q"])
    assert refused.exit_code == 2 and "--dask-timeout" in refused.output
    with pytest.raises(UsageError, match="--dask-timeout must be more than 0 seconds"):
        BuildOptions(log_dirs=tmp_path, output=tmp_path / "site", dask_timeout=-1)
