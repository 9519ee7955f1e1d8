"""The query page (``sql/``): its engine's files and URLs, its example queries, its policy.

The page runs SQL in the browser with DuckDB-Wasm over the Parquet tables in ``data/``
(``data/manifest.json`` names them). The engine comes from a pinned CDN URL, or from a
local copy (``--sql-engine DIR``: what ``npm run engine`` makes) copied into ``sql/engine/``,
so that a site served from a machine without internet still answers. docs/query-page.md
says why this version.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from sitegen.errors import UsageError
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.links import Linker

# The last release whose wasm holds the Parquet reader: from 1.29.0 on it is an extension
# fetched from extensions.duckdb.org at the first read_parquet (an offline copy cannot
# answer), and 1.30-1.32 download each file whole (duckdb-wasm #2228). Kept in step with
# package.json.
DUCKDB_WASM_VERSION = "1.28.0"
CDN_ORIGIN = "https://cdn.jsdelivr.net"
CDN = f"{CDN_ORIGIN}/npm/@duckdb/duckdb-wasm@{DUCKDB_WASM_VERSION}"
# What the page loads: the module (DuckDB-Wasm with the Arrow it imports, one ES module),
# the non-threaded worker and its wasm (no COOP/COEP headers needed: GitHub Pages sends none).
MODULE, WORKER, WASM = "duckdb.js", "duckdb-browser-eh.worker.js", "duckdb-eh.wasm"
ENGINE_FILES = (MODULE, WORKER, WASM)
# Copied beside them when the engine directory has them (scripts/sql_engine.mjs writes them).
ENGINE_EXTRAS = ("engine.json", "LICENSE-apache-arrow.txt", "NOTICE-apache-arrow.txt")
MAKE_ENGINE = "npm ci && npm run engine"


@dataclass(frozen=True)
class Example:
    """One example query: what it answers, and its SQL."""

    title: str
    sql: str


EXAMPLES = (
    Example(
        "The newest jobs",
        "SELECT job_id, job_name, status, started_at, duration_ms, task_attempts, failed_attempts\n"
        "FROM jobs\n"
        "ORDER BY started_at DESC, job_id\n"
        "LIMIT 20",
    ),
    Example(
        "Executors that failed the most task attempts",
        "SELECT executor_id,\n"
        "       sum(failed_attempts) AS failed_attempts,\n"
        "       sum(task_attempts) AS task_attempts,\n"
        "       count(*) AS jobs\n"
        "FROM executors\n"
        "GROUP BY executor_id\n"
        "HAVING sum(failed_attempts) > 0\n"
        "ORDER BY failed_attempts DESC, executor_id\n"
        "LIMIT 20",
    ),
    Example(
        "The 95th percentile task duration per stage of one job name",
        "-- The name with the most runs; or write yours: SELECT 'nightly-etl' AS job_name\n"
        "WITH chosen AS (\n"
        "  SELECT job_name FROM jobs GROUP BY job_name ORDER BY count(*) DESC, job_name LIMIT 1\n"
        ")\n"
        "SELECT t.stage_id,\n"
        "       count(DISTINCT t.job_id) AS runs,\n"
        "       count(*) AS task_attempts,\n"
        "       quantile_cont(t.duration_ms, 0.95) AS p95_duration_ms\n"
        "FROM tasks AS t JOIN jobs AS j ON j.job_id = t.job_id\n"
        "WHERE j.job_name = (SELECT job_name FROM chosen)\n"
        "GROUP BY t.stage_id\n"
        "ORDER BY t.stage_id",
    ),
    Example(
        "Jobs that read more than 30 million rows",
        "SELECT job_id, job_name, status, input_rows, started_at\n"
        "FROM jobs\n"
        "WHERE input_rows > 30000000\n"
        "ORDER BY input_rows DESC, job_id",
    ),
    Example(
        "Every job whose failure or task errors contain a text",
        "-- ILIKE ignores case; % stands for any text.\n"
        "SELECT job_id, job_name, status, started_at, failure\n"
        "FROM jobs\n"
        "WHERE failure ILIKE '%divide by zero%'\n"
        "   OR job_id IN (SELECT job_id FROM tasks WHERE error ILIKE '%divide by zero%')\n"
        "ORDER BY started_at DESC, job_id",
    ),
)


@dataclass(frozen=True)
class Engine:
    """Where the page loads the engine from: links from the page, or CDN URLs."""

    module: str
    worker: str
    wasm: str
    local: bool


def engine(link: Linker, local: bool) -> Engine:
    """Return the engine's URLs for the page: the copy in ``sql/engine/``, or the CDN's."""
    if local:
        module, worker, wasm = (link(urls.sql_engine_file(name)) for name in ENGINE_FILES)
        return Engine(module, worker, wasm, local=True)
    # jsdelivr's +esm build resolves the module's bare apache-arrow import to its own URL.
    return Engine(f"{CDN}/+esm", f"{CDN}/dist/{WORKER}", f"{CDN}/dist/{WASM}", local=False)


def policy(local: bool) -> str:
    """Return the page's Content-Security-Policy: the site's, plus what the engine needs."""
    # The page itself compiles no wasm: the worker does. A worker loaded from the site has no
    # policy of its own (none is sent with it); one made from a blob (the CDN's worker cannot
    # be started cross-origin) inherits this one, so it must allow the CDN and compiling wasm.
    if local:
        scripts, workers, connect = "'self'", "'self'", "'self'"
    else:
        scripts = f"'self' 'wasm-unsafe-eval' {CDN_ORIGIN}"
        workers, connect = "blob:", f"'self' {CDN_ORIGIN}"
    return (
        "default-src 'none'; img-src 'self' data:; style-src 'self'; "
        f"script-src {scripts}; worker-src {workers}; connect-src {connect}; "
        "base-uri 'none'; form-action 'none'"
    )


def pyarrow_installed() -> bool:
    """Tell whether pyarrow can be imported (without importing it): data/ needs it."""
    return importlib.util.find_spec("pyarrow") is not None


def check_engine(directory: Path) -> None:
    """Raise a UsageError unless ``directory`` holds the engine's files."""
    missing = [name for name in ENGINE_FILES if not (directory / name).is_file()]
    if missing:
        raise UsageError(
            f"--sql-engine: no {', '.join(missing)} here (make the engine with "
            f"`{MAKE_ENGINE}`, which writes sql-engine/)",
            directory,
        )


def write_engine(
    writer: SiteWriter, directory: Path, published: AbstractSet[str] = frozenset()
) -> set[str]:
    """Copy the engine's files from ``directory`` into ``sql/engine/``; return those kept.

    A site that holds them already (``published``: its site-wide files) keeps them: the
    engine directory is part of the build's fingerprint, so only a full build (a new state)
    can need others. An incremental build so neither copies nor compares 18 MB each time.
    """
    check_engine(directory)
    names = [n for n in (*ENGINE_FILES, *ENGINE_EXTRAS) if (directory / n).is_file()]
    files = {str(urls.sql_engine_file(name)): directory / name for name in names}
    if files.keys() <= published:
        return set(files)
    for rel, source in files.items():
        with source.open("rb") as f:
            writer.write_chunks(rel, iter(lambda: f.read(1 << 20), b""))
    return set()
