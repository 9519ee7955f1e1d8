from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from sitegen import __version__
from sitegen.builder.report import BuildReport
from sitegen.cli import cli
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.layout import STATE_NAME

ROOT = Path(__file__).resolve().parent.parent


def _normalise(output: str) -> str:
    return re.sub(r"in \d+\.\d\d s", "in X s", output)


@pytest.mark.slow  # a full build through the CLI
def test_build_prints_summary(tmp_path: Path, example_logs: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(
        cli, ["build", "--event-log-dir", str(example_logs), "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = _normalise(result.output).splitlines()
    files = sum(1 for p in out.rglob("*") if p.is_file() and p.name != STATE_NAME)
    site_mb = (
        sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        - (out / STATE_NAME).stat().st_size
    )
    assert lines[0] == (
        f"Published 25 jobs from 28 logs to {out} ({files} files; site {site_mb / 1e6:.1f} MB) "
        "in X s."
    )
    assert lines[1] == "Skipped 3 logs: 1 ended-unrecorded, 1 incomplete, 1 malformed."
    assert lines[2] == (
        "  ended-unrecorded: 0382W2C5NR000.eventlog: no JobEnd record, and its dir's scheduler"
        " names a log .eventlog only once its job ended (Ballista #2405): the job ended"
        " unrecorded"
    )
    assert lines[3] == (
        "  malformed: 0d9TH4Q.eventlog:14: malformed JobEnd: Expected `int`, got `str`"
        " - at `$.index.num_stages`"
    )
    assert lines[4] == (
        "  incomplete: GHZbKoX.eventlog.running: "
        "still running (.eventlog.running): no JobEnd record yet"
    )
    assert len(lines) == 5


@pytest.mark.slow  # two full builds through the CLI
def test_strict_exits_1_when_a_log_was_skipped(tmp_path: Path, example_logs: Path) -> None:
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, [*args, "--strict"])
    assert result.exit_code == 1
    assert (tmp_path / "s/api/jobs").is_file()
    (example_logs / "0d9TH4Q.eventlog").unlink()
    (example_logs / "GHZbKoX.eventlog.running").unlink()
    (example_logs / "0382W2C5NR000.eventlog").unlink()
    result = CliRunner().invoke(cli, [*args, "--strict"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--event-log-dir", "{tmp}/missing"],
            "Error: {tmp}/missing: event-log dir does not exist",
        ),
        (
            ["--event-log-dir", "{logs}", "--output", "{logs}"],
            "Error: {logs}: output dir must not be the event-log dir or inside it",
        ),
        (
            ["--event-log-dir", "{logs}", "--output", "{tmp}/file"],
            "Error: {tmp}/file: output path exists and is not a directory",
        ),
    ],
)
def test_build_errors_are_one_line(
    tmp_path: Path, example_logs: Path, args: list[str], message: str
) -> None:
    (tmp_path / "file").write_text("keep me")
    args = [a.format(tmp=tmp_path, logs=example_logs) for a in args]
    result = CliRunner().invoke(cli, ["build", *args])
    assert result.exit_code == 1
    assert result.output == message.format(tmp=tmp_path, logs=example_logs) + "\n"
    assert (tmp_path / "file").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "logs"]


def test_unreadable_log_dir(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["build", "--event-log-dir", str(tmp_path / "f")])
    assert result.exit_code == 1
    (tmp_path / "f").write_text("")
    result = CliRunner().invoke(cli, ["build", "--event-log-dir", str(tmp_path / "f")])
    assert result.output == f"Error: {tmp_path / 'f'}: event-log dir is not a directory\n"


@pytest.mark.slow  # a full build through the CLI
def test_build_defaults_to_bundled_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["build"])
    assert result.exit_code == 0
    assert result.output.startswith("Published 25 jobs from 28 logs to site ")
    assert (tmp_path / "site/index.html").is_file()


def test_state_version_executors_metrics(example_site: tuple[Path, BuildReport]) -> None:
    site, report = example_site
    state = json.loads((site / "api/state").read_bytes())
    assert list(state)[:10] == [
        "started",
        # As upstream's history server answers (Ballista #2413).
        "scheduler_id",
        "version",
        "datafusion_version",
        "substrait_support",
        "keda_support",
        "prometheus_support",
        "graphviz_support",
        "spark_support",
        "scheduling_policy",
    ]
    assert state["started"] == 0 and "history" in state["scheduling_policy"]
    assert state["scheduler_id"] == "history-server"
    assert "no live cluster" in state["scheduling_policy"]
    version = json.loads((site / "api/version").read_bytes())
    assert version == {"version": f"sitegen-{__version__}", "datafusion_version": "unknown"}
    assert (site / "api/executors").read_bytes() == b"[]"
    families = {
        f.name: f for f in text_string_to_metric_families((site / "api/metrics").read_text())
    }
    jobs = {s.labels["status"]: s.value for s in families["ballista_history_jobs"].samples}
    assert jobs == {"Completed": 22, "Failed": 2, "Cancelled": 1}
    tasks = {s.labels["outcome"]: s.value for s in families["ballista_history_tasks"].samples}
    assert tasks["all"] == sum(j.tasks for j in report.jobs) > 100
    assert 0 < tasks["failed"] < tasks["all"]
    skipped = {
        s.labels["reason"]: s.value for s in families["ballista_history_logs_skipped"].samples
    }
    assert skipped == {"ended-unrecorded": 1, "incomplete": 1, "malformed": 1}
    (stamp,) = families["ballista_history_build_timestamp_seconds"].samples
    assert stamp.value == float(os.environ["SOURCE_DATE_EPOCH"])


def test_python_dash_m_and_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sitegen", "--version"], capture_output=True, text=True
    )
    assert out.stdout == f"sitegen, version {__version__}\n"


@pytest.mark.slow  # a new venv and a pip install: about 10 s
def test_non_editable_install_builds_a_working_site(tmp_path: Path) -> None:
    # A wheel install must carry the templates and the example logs.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    py = env_dir / "bin/python"
    subprocess.run([py, "-m", "pip", "install", "-q", str(ROOT)], check=True, cwd=tmp_path)
    run = subprocess.run(
        [env_dir / "bin/sitegen", "build"], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Published 25 jobs from 28 logs to site ")
    installed = subprocess.run(
        [py, "-c", "import sitegen.render.templates as t; print(t.default_template_dir())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert "site-packages" in installed
    index = (tmp_path / "site/index.html").read_text()
    assert "tpch-q1" in index
    assert (tmp_path / "site/404.html").is_file()


def test_base_url_makes_the_404_page_link_absolutely(tmp_path: Path, example_logs: Path) -> None:
    args = ["build", "--event-log-dir", str(example_logs)]
    result = CliRunner().invoke(cli, [*args, "--output", str(tmp_path / "a"), "--base-url", "/h"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "a/404.html").read_text()
    hrefs = re.findall(r'href="([^"#][^"]*)"', page)  # all but the skip link to #main
    assert hrefs and all(h.startswith("/h/") for h in hrefs), hrefs
    assert '"/h/static/style.css"' in page and "--base-url" not in page
    # Only the 404 page: every other page keeps relative links (file://, any sub-path).
    assert 'href="static/style.css"' in (tmp_path / "a/index.html").read_text()

    bad = CliRunner().invoke(cli, [*args, "--output", str(tmp_path / "b"), "--base-url", "x y"])
    assert bad.exit_code == 2
    assert bad.output.splitlines()[-1] == (
        "Error: Invalid value for '--base-url' (env var: 'SITEGEN_BASE_URL'): base URL 'x y' "
        "must be a path starting with a single / (/history/) or an http(s) URL, without spaces, "
        "backslashes, query or fragment"
    )
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    "url", ["//evil.example/", "//evil.example", "/\\evil.example/", "https://a\\b/", "x/"]
)
def test_a_base_url_that_would_lead_to_another_host_is_refused(tmp_path: Path, url: str) -> None:
    args = ["build", "--event-log-dir", str(EXAMPLE_LOG_DIR), "--output", str(tmp_path / "b")]
    bad = CliRunner().invoke(cli, [*args, "--base-url", url])
    assert bad.exit_code == 2 and "must be a path starting with a single /" in bad.output
    assert not (tmp_path / "b").exists()
