"""Guards before a build replaces a site: stale staging swept, empty or example logs refused."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from sitegen.errors import UsageError
from sitegen.examples import EXAMPLE_LOG_DIR
from tests.helpers.logs import job_lines, write


def _dead_pid() -> int:
    """Return the id of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def test_no_op_build_sweeps_a_killed_builds_staging_dir(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "a.eventlog", job_lines("a"))
    options = BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1)
    build(options)
    stale = tmp_path / f".site.staging-{_dead_pid()}-0badf00d"
    (stale / "api").mkdir(parents=True)
    (stale / "api/jobs").write_text("[]")
    live = tmp_path / f".site.staging-{1}-0badf00d"  # pid 1 is alive: not a leftover
    live.mkdir()
    report = build(options)
    assert report.up_to_date
    assert not stale.exists()
    assert live.is_dir()


def _site_with_jobs(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "a.eventlog", job_lines("a"))
    build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    return logs, tmp_path / "site"


def test_empty_log_dir_over_a_site_with_jobs_is_refused(tmp_path: Path) -> None:
    logs, site = _site_with_jobs(tmp_path)
    (logs / "a.eventlog").unlink()
    before = (site / "api/jobs").read_bytes()
    result = CliRunner().invoke(cli, ["build", "--event-log-dir", str(logs), "--output", str(site)])
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith(
        f"Error: {site}: no event logs in {logs}, but the published site has 1 job"
    )
    assert line.endswith("pass --allow-empty to publish an empty site")
    assert (site / "api/jobs").read_bytes() == before
    allowed = CliRunner().invoke(
        cli, ["build", "--event-log-dir", str(logs), "--output", str(site), "--allow-empty"]
    )
    assert allowed.exit_code == 0, allowed.output
    assert (site / "api/jobs").read_bytes() == b"[]"


def test_allow_empty_from_the_environment(tmp_path: Path) -> None:
    logs, site = _site_with_jobs(tmp_path)
    (logs / "a.eventlog").unlink()
    args = ["build", "--event-log-dir", str(logs), "--output", str(site)]
    result = CliRunner().invoke(cli, args, env={"SITEGEN_ALLOW_EMPTY": "1"})
    assert result.exit_code == 0, result.output


def test_empty_log_dir_over_an_empty_or_new_site_builds(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    options = BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1)
    assert build(options).published == 0  # a new output
    assert build(BuildOptions(log_dirs=logs, output=options.output, clean=True)).published == 0


def test_examples_never_replace_a_site_built_from_other_logs(tmp_path: Path) -> None:
    _, site = _site_with_jobs(tmp_path)
    before = (site / "api/jobs").read_bytes()
    result = CliRunner().invoke(cli, ["build", "--output", str(site)])
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert "built from other logs (a.eventlog, …)" in line
    assert "pass --event-log-dir DIR, or another --output" in line
    assert (site / "api/jobs").read_bytes() == before
    with pytest.raises(UsageError):  # --clean does not get round it either
        build(BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=site, clean=True))


def test_examples_build_a_new_output_and_rebuild_their_own(tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = CliRunner().invoke(cli, ["build", "--output", str(site)])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(cli, ["build", "--output", str(site), "--clean"])
    assert again.exit_code == 0, again.output
    # A copy of the examples elsewhere counts as other logs' site only by name: same names.
    copy = tmp_path / "copy"
    shutil.copytree(EXAMPLE_LOG_DIR, copy)
    assert build(BuildOptions(log_dirs=copy, output=site)).published == 25
    assert CliRunner().invoke(cli, ["build", "--output", str(site)]).exit_code == 0


def test_serve_refuses_the_examples_over_a_site_from_other_logs(tmp_path: Path) -> None:
    _, site = _site_with_jobs(tmp_path)
    result = CliRunner().invoke(cli, ["serve", "--output", str(site), "--port", "0"])
    assert result.exit_code == 1
    assert "refusing to replace it with the bundled examples" in result.output
    assert (site / "api/job/a").is_dir()
