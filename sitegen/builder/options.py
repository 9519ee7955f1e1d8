"""What a build is asked to do (``BuildOptions``) and what it did (``BuildReport``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.builder.select.retention import STALE_AFTER, parse_age, parse_stale_after
from sitegen.errors import UsageError
from sitegen.eventlog.discover import as_log_dirs
from sitegen.eventlog.limits import MAX_LINE_BYTES, MAX_LOG_BYTES, LogLimits
from sitegen.eventlog.sources import LogSource
from sitegen.layout import DEFAULT_TITLE
from sitegen.render import sqlpage, urls

# ``--dask-timeout``'s default, seconds: far above one chunk's map (a chunk is at most 64 logs
# and 8 MiB of them, or one bigger log), far below waiting for ever on a worker that hangs.
DASK_TIMEOUT = 1800.0

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class BuildOptions:
    """Everything a build depends on."""

    # Current + archive, several schedulers: one or more directories (or storage prefixes).
    log_dirs: tuple[LogSource, ...]
    # The directory the site is built into. Publishing to object storage (``publish_url``),
    # it is the local copy of the site the bucket is synced from (see builder/targets/bucket.py).
    output: Path
    strict: bool = False
    workers: int | None = None
    clean: bool = False
    pages_dir: Path | None = None
    templates_dir: Path | None = None
    robots: bool = False
    title: str = DEFAULT_TITLE
    # Where the site is served from (``/``, ``/history/``, ``https://…/``): the 404 page,
    # which hosts show at any missing address, links absolutely from it. None: relative.
    base_url: str | None = None
    # After publishing, also pack the site into this .tar.gz / .zip (outside output and logs).
    archive: Path | None = None
    # Retention of the site (logs are never touched): the newest N, those ended recently,
    # the newest that fit in this many bytes.
    max_jobs: int | None = None
    max_age: str | None = None
    max_site_size: int | None = None
    # Publish each job's original log, gzip-compressed, beside its pages.
    raw_logs: bool = True
    # Let log dirs without any log replace a site that has jobs (see builder/guard.py).
    allow_empty: bool = False
    # Read logs and notes linked to files outside the log dirs (see eventlog/filekind.py).
    follow_links: bool = False
    # Trust a log read as a completed job never to change in place (Ballista renames a log to
    # its final name when the job ends, and never writes it again): when the log dirs list the
    # same names as last time and no unfinished log changed, nothing did (no stat of each).
    # It makes the sources (``LogSource.trust_names``); the build asks them, not this.
    trust_finished_logs: bool = True
    # The most one log may hold once decompressed, and one of its lines (eventlog/limits.py).
    max_log_size: int = MAX_LOG_BYTES
    max_line_size: int = MAX_LINE_BYTES
    # A .running log not written to for this long is an abandoned run, a .eventlog without
    # JobEnd a job that ended unrecorded (``--max-age`` syntax; ``0``: never).
    stale_after: str = STALE_AFTER
    # fsspec storage options for every storage URL (``endpoint_url``, ``profile``...): from
    # sitegen.toml; credentials are best left to the standard chains.
    storage_options: dict[str, Any] = field(default_factory=dict)
    # Publish the site to this object-storage prefix (``s3://bucket/site/``), its state at
    # ``state_url`` (default: beside it, see publish.bucket.default_state_url).
    publish_url: str | None = None
    state_url: str | None = None
    # Send each log's map step to this Dask scheduler (``tcp://host:8786``); None: here.
    dask_scheduler: str | None = None
    # The longest a Dask build waits for one chunk's result or one answer of the cluster
    # (seconds): past it the build stops, the site as it was (a hung worker, a lost scheduler).
    dask_timeout: float = DASK_TIMEOUT
    # Publish the SQL tables (data/: Parquet files and their manifest) the query page reads.
    # None: when pyarrow can be imported (pip install 'sitegen[sql]'); settled to a bool here.
    data: bool | None = None
    # The query page's engine (what ``npm run engine`` makes in sql-engine/), copied into the
    # site (sql/engine/) so the page needs no network; None: the page loads it from a CDN.
    sql_engine: Path | None = None

    def __post_init__(self) -> None:
        """Normalise the log dirs to a tuple of paths (one path is accepted); check options."""
        object.__setattr__(
            self,
            "log_dirs",
            as_log_dirs(
                self.log_dirs, self.storage_options or None, trusted=self.trust_finished_logs
            ),
        )
        if not self.dask_timeout > 0:
            raise UsageError(f"--dask-timeout must be more than 0 seconds, not {self.dask_timeout}")
        if self.max_age is not None:
            parse_age(self.max_age)  # fail before any work
        parse_stale_after(self.stale_after)
        if self.base_url is not None:
            try:
                object.__setattr__(self, "base_url", urls.base_url(self.base_url))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        # Settled once: the build's fingerprint then says whether the tables were published.
        if self.data is None:
            object.__setattr__(self, "data", sqlpage.pyarrow_installed())
        elif self.data and not sqlpage.pyarrow_installed():
            raise UsageError("--data: the SQL tables need pyarrow: pip install 'sitegen[sql]'")
        if self.sql_engine is not None:
            sqlpage.check_engine(self.sql_engine)


# Options that change how a build runs, or which jobs are listed, but not a byte of
# any job's own files: changing them does not force every job to be rebuilt.
RUN_OPTIONS = frozenset(
    {
        "log_dirs",
        "output",
        "strict",
        "workers",
        "clean",
        "archive",
        "max_jobs",
        "max_age",
        "max_site_size",
        "allow_empty",
        "trust_finished_logs",
        "storage_options",
        "publish_url",
        "state_url",
        "dask_scheduler",
        "dask_timeout",
    }
)


def log_limits(
    options: BuildOptions, now: float, renaming: frozenset[str] = frozenset()
) -> LogLimits:
    """Return the limits a build reads and judges its logs by, ``now`` its clock (seconds).

    ``renaming``: the dirs that name logs the Ballista #2405 way (builder/plan/renaming.py).
    """
    limits = limits_of(options.max_log_size, options.max_line_size, options.stale_after, now)
    return dataclasses.replace(limits, renaming=renaming) if renaming else limits


def limits_of(max_log_size: int, max_line_size: int, stale_after: str, now: float) -> LogLimits:
    """Return the limits logs are read and judged by (``stale_after`` as ``--stale-after``)."""
    stale = parse_stale_after(stale_after)
    return LogLimits(max_log_size, max_line_size, stale, int(now * 1e9))
