"""The map step on a Dask cluster: a real ``distributed.LocalCluster`` of two worker processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from tests.conftest import require_module
from tests.logs import job_lines, write
from tests.sitetree import tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[subprocess.Popen[str]]:
    """Two worker processes of one thread each, on loopback, run by a process of their own."""
    require_module("distributed", "dask")
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "dask_cluster.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _sitegen(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "sitegen", "build", "-q", *args], check=True)


def test_a_site_mapped_on_two_dask_workers_is_the_local_build_byte_for_byte(
    cluster: subprocess.Popen[str], example_logs: Path, tmp_path: Path
) -> None:
    assert cluster.stdout is not None and cluster.stdin is not None
    address = cluster.stdout.readline().strip()
    assert address.startswith("tcp://127.0.0.1:"), address
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
    cluster.stdin.close()
    done = json.loads(cluster.stdout.readline())
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
