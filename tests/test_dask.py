"""The map step on a Dask cluster: a real ``distributed.LocalCluster`` of two worker processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from tests.conftest import require_module
from tests.logs import job_lines, write
from tests.sitetree import tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes of one thread each, on loopback."""
    distributed = require_module("distributed", "dask")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as running:
        yield running


def test_a_site_mapped_on_two_dask_workers_is_the_local_build_byte_for_byte(
    cluster: Any, example_logs: Path, tmp_path: Path
) -> None:
    # A second log of one job id goes to its part directory, as with the local pool.
    (example_logs / "zz-again.eventlog").write_bytes(
        (example_logs / "1UXXFWX.eventlog").read_bytes()
    )
    local = tmp_path / "local"
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    result = CliRunner().invoke(
        cli,
        [
            "build",
            "--event-log-dir",
            str(example_logs),
            "--output",
            str(tmp_path / "dask"),
            "--dask-scheduler",
            cluster.scheduler_address,
        ],
    )
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "dask") == tree(local)
    # The workers did the reading: each ran map tasks.
    client = require_module("distributed", "dask").Client(cluster.scheduler_address)
    try:
        done = client.run(
            lambda dask_worker: len(dask_worker.data) + dask_worker.state.executed_count
        )
    finally:
        client.close()
    assert len(done) == 2 and all(count > 0 for count in done.values()), done
    # An incremental build on the cluster: a new log and a changed one.
    write(example_logs / "new1.eventlog", job_lines("new1", start_ms=1_767_300_000_000))
    build(BuildOptions(log_dirs=example_logs, output=local, workers=2))
    build(
        BuildOptions(
            log_dirs=example_logs,
            output=tmp_path / "dask",
            dask_scheduler=cluster.scheduler_address,
        )
    )
    assert tree(tmp_path / "dask") == tree(local)


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
