"""`sitegen serve` as a user runs it: a real process, real HTTP, real files dropped in."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.plan.events import Hint
from sitegen.builder.report import BuildReport
from sitegen.serve.server import serve
from tests.helpers.logs import job_lines, write
from tests.helpers.servers import free_port, get, wait_for_port


def serve_command(logs: Path, output: Path, port: int) -> list[str]:
    """Return the `sitegen serve` command line a user would type."""
    return [sys.executable, "-m", "sitegen", "serve", "--event-log-dir", str(logs),
            "--output", str(output), "--port", str(port)]  # fmt: skip


@pytest.fixture
def served(tmp_path: Path, example_logs: Path) -> Iterator[tuple[int, Path, subprocess.Popen[str]]]:
    write(
        example_logs / "tricky.eventlog",
        job_lines("tricky", name="</head></body><script>x</script>"),
    )
    port = free_port()
    proc = subprocess.Popen(
        serve_command(example_logs, tmp_path / "site", port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        wait_for_port(port, proc)
        wait_until(lambda: get(port, "/__sitegen/poll").status == 200)
        yield port, tmp_path / "site", proc
    finally:
        proc.terminate()
        proc.wait(10)


def wait_until(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


@contextlib.contextmanager
def serving_in_process(
    options: BuildOptions,
    build: Callable[[], BuildReport],
    on_build: Callable[[BuildReport | None, str | None], None],
    **kwargs: Any,
) -> Iterator[None]:
    """Run ``serve()`` in a thread on a free port; stop it, and check it stopped, after."""
    stop = threading.Event()
    args = (options, build, options.output, "127.0.0.1", 0, on_build)
    server = threading.Thread(target=serve, args=args, kwargs={"stop": stop, **kwargs})
    server.start()
    try:
        yield
    finally:
        stop.set()
        server.join(10)
    assert not server.is_alive()


def job_ids(port: int) -> list[str]:
    return [j["job_id"] for j in json.loads(get(port, "/api/jobs").body)]


def generation(port: int) -> dict[str, object]:
    state: dict[str, object] = json.loads(get(port, "/__sitegen/poll").body)
    return state


@pytest.mark.slow  # a sitegen serve process
def test_serves_exact_api_bytes_and_injects_only_html(
    served: tuple[int, Path, subprocess.Popen[str]],
) -> None:
    port, site, _ = served
    resp = get(port, "/api/jobs?page=2")
    assert resp.status == 200
    assert resp.body == (site / "api/jobs").read_bytes()
    assert resp.headers["content-type"] == "application/json"
    assert resp.headers["access-control-allow-origin"] == "*"
    tricky = get(port, "/api/job/tricky")
    assert tricky.body == (site / "api/job/tricky/index.json").read_bytes()
    assert b"</head></body><script>x</script>" in tricky.body
    assert b"__sitegen" not in tricky.body
    dot = get(port, "/api/job/tricky/dot")
    assert dot.headers["content-type"] == "text/plain; charset=utf-8"
    assert b"__sitegen" not in dot.body
    page = get(port, "/")
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.body.count(b'<script src="/__sitegen/livereload.js"></script>') == 1
    assert get(port, "/api/job/missing").status == 404
    assert (site / ".sitegen-state.sqlite").is_file()
    assert get(port, "/.sitegen-state.sqlite").status == 404
    assert get(port, "/__sitegen/livereload.js").status == 200


@pytest.mark.slow  # a server that rebuilds as logs change
def test_rebuilds_on_new_log_and_survives_bad_input(
    served: tuple[int, Path, subprocess.Popen[str]], example_logs: Path, tmp_path: Path
) -> None:
    port, _, proc = served
    start = generation(port)["generation"]
    assert isinstance(start, int)
    write(example_logs / "fresh.eventlog", job_lines("fresh", start_ms=4_000_000_000_000))
    wait_until(lambda: generation(port)["generation"] == start + 1)
    assert job_ids(port)[0] == "fresh"
    assert generation(port)["error"] is None

    # A corrupt log is skipped; the rest is still served.
    (example_logs / "corrupt.eventlog").write_bytes(b"\x00\xff garbage")
    wait_until(lambda: generation(port)["generation"] == start + 2)
    assert job_ids(port)[0] == "fresh"

    # A burst of changes is one rebuild.
    for n in range(5):
        write(example_logs / f"burst-{n}.eventlog", job_lines(f"burst-{n}"))
    wait_until(lambda: "burst-4" in job_ids(port))
    time.sleep(1.5)
    assert generation(port)["generation"] == start + 3

    # A failed rebuild keeps the last good site and reports the error.
    moved = tmp_path / "moved-logs"
    example_logs.rename(moved)
    wait_until(lambda: generation(port)["error"] is not None)
    assert "event-log dir does not exist" in str(generation(port)["error"])
    assert "burst-4" in job_ids(port)
    moved.rename(example_logs)
    wait_until(lambda: generation(port)["error"] is None)
    assert generation(port)["generation"] == start + 4

    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    assert out.count("Published") == 4, out  # initial build, new log, corrupt log, burst
    assert out.count("is up to date") == 1, out  # the recovery: nothing changed meanwhile
    assert out.count("Rebuild failed (still serving the last good site)") == 1, out


@pytest.mark.slow  # a server that rebuilds as logs change
def test_log_written_during_the_first_build_triggers_a_rebuild(
    tmp_path: Path, example_logs: Path
) -> None:
    # The watcher's baseline predates the first build: a log that lands while it runs
    # (or before the watcher thread is first scheduled) is not mistaken for the baseline.
    options = BuildOptions(example_logs, tmp_path / "site")
    reports: list[BuildReport | None] = []

    def build_then_drop_a_log(hint: Hint | None) -> BuildReport:
        report = build(options)
        if not reports:
            write(example_logs / "late.eventlog", job_lines("late"))
        return report

    def on_build(report: BuildReport | None, error: str | None) -> None:
        assert error is None
        reports.append(report)

    with serving_in_process(options, build_then_drop_a_log, on_build):
        wait_until(lambda: len(reports) == 2)
        assert (options.output / "api/job/late/index.json").is_file()


def test_port_in_use_is_a_clear_error(tmp_path: Path, example_logs: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        run = subprocess.run(
            serve_command(example_logs, tmp_path / "site", port),
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert run.returncode == 1
    assert (
        run.stderr
        == f"Error: port {port} on 127.0.0.1 is already in use; choose another with --port\n"
    )
    assert not (tmp_path / "site").exists()


@pytest.mark.slow  # a real Chromium
def test_browser_reloads_after_a_good_rebuild(
    browser: Any, served: tuple[int, Path, subprocess.Popen[str]], example_logs: Path
) -> None:
    port, _, _ = served
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_timeout(300)
        with page.expect_navigation(timeout=15_000):
            write(example_logs / "reload-me.eventlog", job_lines("reload-me"))
        assert "reload-me" in page.content()
        assert errors == []
    finally:
        context.close()


@pytest.mark.slow  # a server that builds the examples
def test_serves_under_the_base_url_path_as_the_host_will(
    tmp_path: Path, example_logs: Path
) -> None:
    options = BuildOptions(example_logs, tmp_path / "site", base_url="https://example.org/history")
    urls: list[str] = []
    ready = {"ready": urls.append, "base_path": "/history/"}
    with serving_in_process(
        options, lambda hint: build(options, hint=hint), lambda r, e: None, **ready
    ):
        wait_until(lambda: bool(urls))
        port = int(urls[0].split(":")[-1].split("/")[0])
        assert urls[0] == f"http://127.0.0.1:{port}/history/"
        assert get(port, "/history/api/jobs").body == (options.output / "api/jobs").read_bytes()
        assert get(port, "/history/").status == 200
        moved = get(port, "/history")
        assert (moved.status, moved.headers["location"]) == (301, "/history/")
        assert get(port, "/api/jobs").status == 404  # only under the base path
        # The 404 page deep in the site links back, as on the published host.
        missing = get(port, "/history/jobs/nope/deeper/x.html")
        assert missing.status == 404
        hrefs = re.findall(r'href="([^"#][^"]*)"', missing.body.decode())  # not #main
        assert hrefs and {get(port, h).status for h in hrefs} == {200}


def test_cli_serves_at_the_path_of_base_url(tmp_path: Path, example_logs: Path) -> None:
    port = free_port()
    command = [*serve_command(example_logs, tmp_path / "site", port), "--base-url", "/h"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(port, proc)
        wait_until(lambda: get(port, "/h/api/jobs").status == 200)
        assert get(port, "/api/jobs").status == 404
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"at http://127.0.0.1:{port}/h/ (Ctrl+C to stop)" in out, out


def test_serve_keeps_the_site_when_the_log_dir_empties(tmp_path: Path) -> None:
    """An emptied log dir (an unmounted volume) is refused; serve says why and keeps serving."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "kept.eventlog", job_lines("kept"))
    options = BuildOptions(logs, tmp_path / "site", workers=1)
    urls: list[str] = []
    errors: list[str] = []

    def on_build(report: object | None, error: str | None) -> None:
        if error is not None:
            errors.append(error)

    with serving_in_process(
        options, lambda hint: build(options, hint=hint), on_build, ready=urls.append
    ):
        wait_until(lambda: bool(urls))
        port = int(urls[0].split(":")[-1].split("/")[0])
        (logs / "kept.eventlog").unlink()
        wait_until(lambda: bool(errors))
        assert "pass --allow-empty to publish an empty site" in errors[0]
        assert "--allow-empty" in str(generation(port)["error"])
        assert job_ids(port) == ["kept"]


def test_serve_refuses_an_output_in_object_storage(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sitegen.cli import cli

    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, ["serve", "--output", "s3://bucket/site/"], env=env)
    assert result.exit_code == 1
    assert result.output == (
        "Error: serve builds into a local directory: --output cannot be a URL\n"
    )
    assert not (tmp_path / "cache").exists()  # nothing was built
