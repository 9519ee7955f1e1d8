"""The options more than one command takes: declared once, put on each command in ``cli.py``."""

from __future__ import annotations

from pathlib import Path

import click

from sitegen import config
from sitegen.commands.options import load_config
from sitegen.commands.params import PathOrUrl, Size, StorageOption

PATH_OR_URL = PathOrUrl()

CONFIG = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path, exists=True),
    default=None,
    is_eager=True,
    expose_value=False,
    callback=load_config,
    help=f"Read options from this TOML file. [default: ./{config.CONFIG_NAME} if present]",
)
LOG_DIRS = click.option(
    "--event-log-dir",
    "log_dirs",
    type=PATH_OR_URL,
    multiple=True,
    help="Directory of Ballista event logs (the scheduler's --event-log-dir), or a prefix in "
    "object storage (s3://bucket/logs/, gs://, az://: any fsspec URL); repeat it to read "
    "several. [default: the bundled example logs]",
)
STORAGE_OPTIONS = click.option(
    "--storage-options",
    "storage_options",
    type=StorageOption(),
    multiple=True,
    default=(),
    help="An fsspec storage option for every storage URL, KEY=VALUE (endpoint_url=..., "
    "profile=...); repeat it for several, or give a [storage_options] table in sitegen.toml. "
    "Credentials come from the standard chains (environment, profile, instance role).",
)
DASK_SCHEDULER = click.option(
    "--dask-scheduler",
    default=None,
    metavar="ADDRESS",
    help="Send each log's map step to this Dask scheduler (tcp://host:8786; needs "
    "'sitegen[dask]'); the reduce and the publish stay here. The workers must reach the logs "
    "(a shared directory, or object storage). [default: this machine's processes]",
)
# The default is builder.options.DASK_TIMEOUT's (not imported: the CLI starts without the builder).
DASK_TIMEOUT = click.option(
    "--dask-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=1800.0,
    metavar="SECONDS",
    help="With --dask-scheduler: the longest the build waits for one chunk of logs or one "
    "answer of the cluster; past it (a worker that hangs) the build stops and the "
    "published site stays as it was. [default: 1800]",
)
FOLLOW_LINKS = click.option(
    "--follow-links",
    is_flag=True,
    help="Read logs and notes that are symbolic links to files outside the event-log dirs "
    "(by default they are skipped and reported).",
)
WORKERS = click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that read logs. [default: CPU count]",
)
MAX_LOG_SIZE = click.option(
    "--max-log-size",
    type=Size(),
    default="4GiB",
    help="The most one log may hold once decompressed; a log past it is reported, not read.",
)
MAX_LINE_SIZE = click.option(
    "--max-line-size",
    type=Size(),
    default="256MiB",
    help="The most one line of a log may hold; a log with a longer line is reported.",
)
STALE_AFTER = click.option(
    "--stale-after",
    default="24h",  # retention.STALE_AFTER: this module imports no core module up front
    metavar="AGE",
    help="A .running log not written to for longer than this is an abandoned run (its "
    "scheduler stopped before the job ended), a .eventlog without JobEnd a job that ended "
    "unrecorded: 30m, 12h, 3d; 0 never.",
)
FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    help="Print text lines for people, or one JSON object for scripts.",
)
