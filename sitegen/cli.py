"""Command-line wiring only: the options each command takes, and the call into ``commands``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from sitegen import config
from sitegen.commands.params import BaseUrl, Size
from sitegen.commands.shared_options import (
    CONFIG,
    DASK_SCHEDULER,
    DASK_TIMEOUT,
    FOLLOW_LINKS,
    FORMAT,
    LOG_DIRS,
    MAX_LINE_SIZE,
    MAX_LOG_SIZE,
    PATH_OR_URL,
    STALE_AFTER,
    STORAGE_OPTIONS,
    WORKERS,
)
from sitegen.layout import DEFAULT_TITLE
from sitegen.version import __version__

Decorator = Callable[[Callable[..., None]], Callable[..., None]]
_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_PATH = click.Path(path_type=Path)


def site_options(f: Callable[..., None]) -> Callable[..., None]:
    """Add the options that shape the site (shared by build and serve)."""
    options: list[Decorator] = [
        CONFIG,
        LOG_DIRS,
        STORAGE_OPTIONS,
        FOLLOW_LINKS,
        MAX_LOG_SIZE,
        MAX_LINE_SIZE,
        STALE_AFTER,
        click.option(
            "--output",
            type=PATH_OR_URL,
            default=Path("site"),
            help="Directory to publish the site into (replaced atomically), or a prefix in "
            "object storage (s3://bucket/site/: each changed object uploaded, jobs before the "
            "listings that name them, see docs/publishing.md).",
        ),
        click.option(
            "--state",
            "state_url",
            default=None,
            metavar="URL",
            help="With --output in object storage: where the build state lives. [default: "
            "the prefix's name with .sitegen-state/ appended, beside it]",
        ),
        click.option(
            "--cache-dir",
            type=_PATH,
            default=None,
            help="With --output in object storage: where the local copy of the site is kept "
            "between builds (an incremental build needs it). [default: ~/.cache/sitegen]",
        ),
        DASK_SCHEDULER,
        DASK_TIMEOUT,
        click.option(
            "--clean", is_flag=True, help="Rebuild every job, ignoring what the last build left."
        ),
        click.option(
            "--trust-finished-logs/--verify-logs",
            default=True,
            help="Trust a log read as a completed job never to change in place (Ballista never "
            "rewrites one): learn what changed from the dirs' listings and stat only the "
            "unfinished logs. --verify-logs stats every log, to see one rewritten in place.",
        ),
        WORKERS,
        click.option(
            "--max-jobs",
            type=click.IntRange(min=0),
            default=None,
            help="Keep only the N newest completed jobs on the site. [default: all]",
        ),
        click.option(
            "--max-age",
            default=None,
            help="Drop jobs that ended longer ago than this: 30d, 12h, 90m, 2w. [default: none]",
        ),
        click.option(
            "--allow-empty",
            is_flag=True,
            help="Publish an empty site when the log dirs hold no logs, even over a site "
            "with jobs (refused by default: an unmounted volume or a wrong path).",
        ),
        click.option(
            "--max-site-size",
            type=Size(),
            default=None,
            help="Keep only the newest completed jobs that fit in this size (500MB, 1GB); "
            "raw logs are left out first when that lets more jobs fit. [default: no limit]",
        ),
        click.option(
            "--raw-logs/--no-raw-logs",
            default=True,
            help="Publish each job's original event log, gzip-compressed, on its page.",
        ),
        click.option(
            "--data/--no-data",
            default=None,
            help="Publish every job, stage, task attempt, finding and executor as SQL tables "
            "(Parquet in data/) for the query page, sql/. [default: when pyarrow is installed, "
            "pip install 'sitegen[sql]']",
        ),
        click.option(
            "--sql-engine",
            type=_DIR,
            default=None,
            metavar="DIR",
            help="Copy the query page's engine from DIR (`npm ci && npm run engine` makes "
            "sql-engine/) into the site, so the page needs no network. [default: from a CDN]",
        ),
        click.option(
            "--pages",
            "pages_dir",
            type=_DIR,
            default=None,
            help="Directory of Markdown pages (*.md) to render into the site and its navigation.",
        ),
        click.option(
            "--templates",
            "templates_dir",
            type=_DIR,
            default=None,
            help="Directory whose templates (and static/ files) replace the shipped ones.",
        ),
        click.option("--title", default=DEFAULT_TITLE, help="Site title in every header."),
        click.option(
            "--base-url",
            type=BaseUrl(),
            default=None,
            help="Where the site is served from (/ or /history/ or https://…/): lets the 404 "
            "page, shown at any missing address, link back. [default: relative links]",
        ),
        click.option(
            "--robots/--no-robots",
            default=False,
            help="Let search engines index the pages (by default every page says noindex).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@click.group()
@click.version_option(__version__, prog_name="sitegen")
def cli() -> None:
    """Build a static Ballista history server from event logs."""


@cli.command("build")
@site_options
@click.option("--strict", is_flag=True, help="Exit 1 if any log was skipped.")
@click.option(
    "--archive",
    type=_PATH,
    default=None,
    help="Also pack the published site into this .tar.gz, .tgz or .zip "
    "(not inside the output or the log dir).",
)
@FORMAT
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("-v", "--verbose", is_flag=True, help="List every problem, not just the first few.")
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: after the first build, publish each change of the log dirs as it "
    "comes (one line, or one JSON object, per publish). Stop with Ctrl-C or SIGTERM; "
    "SIGHUP reads sitegen.toml again.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.05),
    default=None,
    metavar="SECONDS",
    help="With --watch: look for changes this often instead of waiting for file-system "
    "events (for NFS and other shared volumes). [default: events]",
)
@click.option(
    "--running-interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    metavar="SECONDS",
    help="With --watch: refresh the site for growing .running logs at most this often, and "
    "judge running logs again on this timer.",
)
def build_command(**given: Any) -> None:
    """Build the site: every completed job's /api/* files and HTML pages.

    Only logs that changed since the last build are read again. With --watch, keep
    publishing each change until stopped.

    \b
    Example:
        sitegen build --event-log-dir /var/log/ballista --output site
        sitegen build --event-log-dir logs --output site --archive site.tar.gz
        sitegen build --pages runbooks/ --templates my-theme/ --title "Prod history"
        sitegen build --event-log-dir /var/log/ballista --output /srv/history --watch
    """
    from sitegen.commands.build import build_command as build

    build(**given)


@cli.command("serve")
@site_options
@click.option("--host", default="127.0.0.1", help="Address to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, help="Port to listen on.")
def serve_command(**given: Any) -> None:
    """Build, serve the site with live reload, and rebuild when logs or templates change.

    The site is served at the exact /api/* paths, as the generated nginx config does.

    \b
    Example:
        sitegen serve --event-log-dir /var/log/ballista --port 8000
    """
    from sitegen.commands.serve import serve_command as serve

    serve(**given)


@cli.command("check")
@CONFIG
@LOG_DIRS
@STORAGE_OPTIONS
@FOLLOW_LINKS
@MAX_LOG_SIZE
@MAX_LINE_SIZE
@STALE_AFTER
@WORKERS
@FORMAT
@click.option(
    "--fail-on",
    "fail_on",
    metavar="KINDS",
    default=None,
    help="Also fail when the newest run of any job name has a finding of these kinds "
    "(comma-separated: regression, failed, straggler, …). [default: none]",
)
def check_command(**given: Any) -> None:
    """Read every log as a build would, publish nothing, report each problem.

    Exit 0 when no log has an error (running logs are only noted), 1 when any
    log is damaged, newer than this sitegen, unsafe or a duplicate, or (with
    --fail-on) when the newest run of a job name has a finding of those kinds,
    2 on usage errors such as a missing directory.

    \b
    Examples:
        sitegen check --event-log-dir /var/log/ballista --format json
        sitegen check --event-log-dir /var/log/ballista --fail-on regression,failed
    """
    from sitegen.commands.check import check_command as check

    check(**given)


@cli.command("host-config")
@click.argument("server", type=click.Choice(["nginx", "caddy"]))
@click.option("--root", type=_PATH, required=True, help="The built site directory.")
@click.option("--listen", default="127.0.0.1:8080", help="HOST:PORT to listen on.")
def host_config_command(server: str, root: Path, listen: str) -> None:
    """Print a server config that serves every /api/* path exactly.

    \b
    Example:
        sitegen host-config nginx --root /srv/history > /etc/nginx/conf.d/history.conf
    """
    from sitegen.commands.host_config import host_config_command as host_config

    host_config(server, root, listen)


def _wire_environment() -> None:
    """Give every option its ``SITEGEN_<KEY>`` variable and show defaults in --help."""
    for command in cli.commands.values():
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                param.envvar = config.ENV_PREFIX + config.key_of(param).upper()
                param.show_envvar = True
                param.show_default = not param.is_flag or param.secondary_opts != []


_wire_environment()
