"""The query page's options (--sql-engine, --data/--no-data) from flags, variables, sitegen.toml
and sitegen.build(...), and the page and engine files they make (no browser: test_sql_page)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import sitegen
from sitegen.builder.options import BuildOptions
from sitegen.cli import cli
from sitegen.errors import SitegenError, UsageError
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.publish.writer import SiteWriter
from sitegen.render import sqlpage, urls
from sitegen.render.pages import PageRenderer


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    """A directory holding the engine's files (their bytes do not matter here)."""
    directory = tmp_path / "sql-engine"
    directory.mkdir()
    for name in (*sqlpage.ENGINE_FILES, "engine.json"):
        (directory / name).write_bytes(name.encode())
    return directory


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[BuildOptions]:
    """The options each build is called with; the build itself stops there."""
    seen: list[BuildOptions] = []

    def build(options: BuildOptions, **_: Any) -> None:
        seen.append(options)
        raise SitegenError("stopped by the test")

    monkeypatch.setattr("sitegen.builder.pipeline.build", build)
    return seen


def invoke(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run ``sitegen build`` in ``cwd`` up to the build; return its output."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["build", *args], env=env or {})
    finally:
        os.chdir(old)
    return result.output


def test_flags_reach_the_build_options(
    tmp_path: Path, engine: Path, captured: list[BuildOptions]
) -> None:
    out = invoke(["--sql-engine", str(engine), "--no-data"], tmp_path)
    assert "stopped by the test" in out
    assert captured[-1].sql_engine == engine and captured[-1].data is False
    invoke([], tmp_path)
    assert captured[-1].sql_engine is None
    assert captured[-1].data is sqlpage.pyarrow_installed()


def test_sitegen_toml_keys_and_variables(
    tmp_path: Path, engine: Path, captured: list[BuildOptions]
) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    # A path in the file is relative to the file.
    (conf / "sitegen.toml").write_text('sql_engine = "../sql-engine"\ndata = false\n')
    invoke([], conf)
    assert captured[-1].sql_engine is not None
    assert (conf / captured[-1].sql_engine).resolve() == engine.resolve()
    assert captured[-1].data is False
    invoke([], tmp_path, env={"SITEGEN_SQL_ENGINE": str(engine), "SITEGEN_DATA": "false"})
    assert captured[-1].sql_engine == engine and captured[-1].data is False


def test_serve_takes_the_options_too() -> None:
    out = CliRunner().invoke(cli, ["serve", "--help"]).output
    assert "--sql-engine DIR" in out and "--data / --no-data" in out


def test_an_engine_dir_without_the_engine_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = invoke(["--sql-engine", str(empty)], tmp_path)
    assert f"Error: {empty}: --sql-engine: no {', '.join(sqlpage.ENGINE_FILES)} here" in out
    assert sqlpage.MAKE_ENGINE in out


def test_data_is_settled_by_pyarrow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sqlpage, "pyarrow_installed", lambda: False)
    assert BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=tmp_path / "site").data is False
    with pytest.raises(UsageError, match=r"pip install 'sitegen\[sql\]'"):
        BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=tmp_path / "site", data=True)
    monkeypatch.setattr(sqlpage, "pyarrow_installed", lambda: True)
    assert BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=tmp_path / "site").data is True


def test_the_python_api_takes_them_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, engine: Path
) -> None:
    seen: list[BuildOptions] = []
    monkeypatch.setattr("sitegen.python_api.build_site", seen.append)
    sitegen.build(EXAMPLE_LOG_DIR, tmp_path / "site", sql_engine=str(engine), data=False)
    assert seen[0].sql_engine == engine and seen[0].data is False


def written(tmp_path: Path, **options: Any) -> tuple[Path, str]:
    """Render the query page (and its engine's files) alone; return the root and the page."""
    root = tmp_path / "site"
    PageRenderer(**options).sql_page(SiteWriter(root))
    return root, (root / urls.SQL).read_text()


def test_the_page_loads_the_sites_own_engine(tmp_path: Path, engine: Path) -> None:
    root, html = written(tmp_path, sql_engine=engine, data=True)
    for name in (*sqlpage.ENGINE_FILES, "engine.json"):
        assert (root / urls.sql_engine_file(name)).read_bytes() == name.encode()
    assert 'data-engine="local"' in html and 'data-module="../sql/engine/duckdb.js"' in html
    assert sqlpage.CDN_ORIGIN not in html
    assert "script-src &#39;self&#39;; worker-src &#39;self&#39;" in html
    assert '<div id="sql-app">' in html and '<div class="note" id="sql-off" hidden>' in html


def test_by_default_the_page_loads_the_engine_from_the_cdn(tmp_path: Path) -> None:
    root, html = written(tmp_path, data=True)
    assert not (root / urls.SQL_ENGINE_DIR).exists()
    assert f'data-module="{sqlpage.CDN}/+esm"' in html
    assert f"@duckdb/duckdb-wasm@{sqlpage.DUCKDB_WASM_VERSION}/dist/duckdb-eh.wasm" in html
    assert f"script-src &#39;self&#39; &#39;wasm-unsafe-eval&#39; {sqlpage.CDN_ORIGIN}" in html


def test_without_tables_the_page_says_how_to_publish_them(tmp_path: Path) -> None:
    _, html = written(tmp_path, data=False)
    assert '<div class="note" id="sql-off">' in html and "pip install 'sitegen[sql]'" in html
    assert '<div id="sql-app" hidden>' in html


def test_the_pinned_version_is_the_lock_files() -> None:
    import json

    root = Path(__file__).resolve().parent.parent
    package = json.loads((root / "package.json").read_text())
    lock = json.loads((root / "package-lock.json").read_text())
    pinned = sqlpage.DUCKDB_WASM_VERSION
    assert package["devDependencies"]["@duckdb/duckdb-wasm"] == pinned
    assert lock["packages"]["node_modules/@duckdb/duckdb-wasm"]["version"] == pinned


@pytest.mark.slow  # three builds
def test_an_incremental_build_keeps_the_engine_and_a_new_one_is_copied(
    tmp_path: Path, engine: Path, example_logs: Path
) -> None:
    from sitegen.builder.pipeline import build
    from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log

    site = tmp_path / "site"
    wasm = site / urls.sql_engine_file(sqlpage.WASM)
    options = BuildOptions(log_dirs=example_logs, output=site, workers=1, sql_engine=engine)
    build(options)
    first = wasm.stat()
    write_log(
        example_logs, JobSpec(job_id="one-more", job_name="more", start_ms=BASE_TIME_MS), seed=1
    )
    report = build(options)
    assert report.published == 26
    # Left as published: neither copied nor compared again.
    assert wasm.stat().st_ino == first.st_ino and wasm.read_bytes() == sqlpage.WASM.encode()
    assert report.publish is not None and report.publish.changed is not None
    assert str(urls.sql_engine_file(sqlpage.WASM)) not in report.publish.changed
    # Another engine changes the build's fingerprint: a full build copies it.
    (engine / sqlpage.WASM).write_bytes(b"another engine")
    build(options)
    assert wasm.read_bytes() == b"another engine"
