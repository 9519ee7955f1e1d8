"""Command-line wiring only: options in, core calls, messages and exit codes out."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sitegen import config
from sitegen.errors import SitegenError
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.layout import DEFAULT_TITLE
from sitegen.text.storage_url import is_url
from sitegen.version import __version__

if TYPE_CHECKING:
    from sitegen.builder.options import BuildOptions
    from sitegen.eventlog.storage import LogDir

Decorator = Callable[[Callable[..., None]], Callable[..., None]]
_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_PATH = click.Path(path_type=Path)


class PathOrUrl(click.Path):
    """A local path, or an object-storage URL (``s3://bucket/prefix/``) kept as text."""

    name = "path or url"

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path | str:
        """Keep a URL as it is; make anything else a path."""
        if is_url(value):
            return str(value)
        return Path(os.fsdecode(super().convert(value, param, ctx)))


class StorageOption(click.ParamType):  # type: ignore[type-arg]
    """One fsspec storage option, ``KEY=VALUE`` (a JSON value, else text)."""

    name = "key=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, Any]:
        """Split the option into its key and value."""
        if isinstance(value, tuple):
            return value
        key, eq, text = str(value).partition("=")
        if not eq or not key.strip():
            self.fail(f"{value!r} is not KEY=VALUE", param, ctx)
        import json

        try:
            return key.strip(), json.loads(text)
        except ValueError:
            return key.strip(), text


_PATH_OR_URL = PathOrUrl()


# Not ParamType[str]: click 8.1, which pyproject allows, is not generic at run time.
class BaseUrl(click.ParamType):  # type: ignore[type-arg]
    """A site base URL: an absolute path or an http(s) URL, given a trailing slash."""

    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """Check and normalise the value (bad values are usage errors, exit 2)."""
        from sitegen.render.urls import base_url

        try:
            return base_url(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Size(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes: ``500MB``, ``1GB``, ``1.5GiB``."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """Turn the text into bytes (bad values are usage errors, exit 2)."""
        from sitegen.builder.sitesize import parse_size
        from sitegen.errors import UsageError

        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except UsageError as exc:
            self.fail(exc.message, param, ctx)


# Where ``ctx.meta`` keeps the --config given (None: ./sitegen.toml if present), for SIGHUP.
_CONFIG_PATH = "sitegen.config"


def _config_callback(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Load ``sitegen.toml`` (or --config) into the command's defaults, before other options."""
    ctx.meta[_CONFIG_PATH] = value
    path = config.find(value)
    if path is None or ctx.command is None:
        return
    known = {config.key_of(p) for c in cli.commands.values() for p in c.params if p.opts}
    try:
        defaults = config.load(path, ctx.command, known)
    except SitegenError as exc:
        raise click.UsageError(str(exc), ctx) from exc
    ctx.default_map = {**(ctx.default_map or {}), **defaults}


CONFIG = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path, exists=True),
    default=None,
    is_eager=True,
    expose_value=False,
    callback=_config_callback,
    help=f"Read options from this TOML file. [default: ./{config.CONFIG_NAME} if present]",
)
LOG_DIRS = click.option(
    "--event-log-dir",
    "log_dirs",
    type=_PATH_OR_URL,
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
            type=_PATH_OR_URL,
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


def _log_dirs(
    given: tuple[Path | str, ...], storage_options: dict[str, Any] | None = None
) -> tuple[LogDir, ...]:
    """Return the log dirs to read (the bundled example logs when none was given), each once."""
    from sitegen.eventlog.discover import as_log_dir, distinct_dirs

    dirs = [as_log_dir(d, storage_options) for d in given or (EXAMPLE_LOG_DIR,)]
    kept, dropped = distinct_dirs(dirs)
    for again, first in dropped:
        same = "is named twice" if again == first else f"is the same directory as {first}"
        click.echo(f"Warning: event-log dir {again} {same}: read once.", err=True)
    return tuple(kept)


def _options(
    log_dirs: tuple[Path | str, ...],
    output: Path | str,
    storage_options: tuple[tuple[str, Any], ...] = (),
    cache_dir: Path | None = None,
    **rest: Any,
) -> BuildOptions:
    """Turn CLI values into the core's options object."""
    from sitegen.builder.options import BuildOptions

    # A list from the config file, a tuple from flags; SIGHUP's re-read default may be neither.
    given = dict(storage_options) if isinstance(storage_options, tuple | list) else {}
    dirs = _log_dirs(log_dirs, given or None)
    if is_url(output):
        from sitegen.builder.objectsite import local_copy

        url = str(output)
        return BuildOptions(
            log_dirs=dirs,
            output=local_copy(url, cache_dir),
            storage_options=given,
            publish_url=url,
            **rest,
        )
    if rest.get("state_url") is not None:
        raise SitegenError("--state is for an --output in object storage")
    return BuildOptions(log_dirs=dirs, output=Path(output), storage_options=given, **rest)


@click.group()
@click.version_option(__version__, prog_name="sitegen")
def cli() -> None:
    """Build a static Ballista history server from event logs."""


def _waiting(output: Path) -> Callable[[], None]:
    """Return what tells the user why a build into ``output`` is not starting yet."""
    from sitegen.publish.buildlock import holders

    def say() -> None:
        pids = holders(output)
        by = f" (process {', '.join(map(str, pids))})" if pids else ""
        click.echo(
            f"Waiting for another sitegen build into the same directory{by} to finish...",
            err=True,
        )

    return say


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
def build_command(
    fmt: str,
    quiet: bool,
    verbose: bool,
    watch: bool,
    poll: float | None,
    running_interval: float,
    **rest: Any,
) -> None:
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
    from sitegen.builder.pipeline import build
    from sitegen.builder.progress import ProgressBar
    from sitegen.builder.report import summary_json, summary_lines

    if watch:
        if rest.get("archive") is not None:
            raise click.UsageError("--archive cannot be used with --watch")
        _watch(fmt, quiet, poll, running_interval, rest)
        return
    try:
        options = _options(**rest)
        bar = ProgressBar(sys.stderr)
        bar.enabled = bar.enabled and not quiet and fmt == "text"
        try:
            report = build(
                options, progress=bar, on_wait=None if quiet else _waiting(options.output)
            )
        finally:
            bar.finish()
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc
    if not quiet:
        lines = [summary_json(report)] if fmt == "json" else summary_lines(report, verbose)
        for line in lines:
            click.echo(line)
    if options.strict and report.skipped:
        raise SystemExit(1)


def _watch(
    fmt: str, quiet: bool, poll: float | None, running_interval: float, given: dict[str, Any]
) -> None:
    """Run ``sitegen build --watch``: publish each change until SIGTERM or Ctrl-C."""
    import signal

    from sitegen.builder.pipeline import build
    from sitegen.builder.report import publish_json, publish_line
    from sitegen.builder.watch import Publish, Watcher

    ctx = click.get_current_context()

    def on_publish(done: Publish) -> None:
        # One JSON object per publish on stdout, failed or not; text failures on stderr.
        if fmt == "json":
            if not quiet or done.error is not None:
                click.echo(publish_json(done))
        elif done.error is not None:
            click.echo(publish_line(done), err=True)
        elif not quiet:
            click.echo(publish_line(done))

    try:
        options = _options(**given)
        watcher = Watcher(
            options,
            lambda o: build(o, on_wait=None if quiet else _waiting(o.output)),
            on_publish,
            poll=poll,
            running_interval=running_interval,
            reload=lambda: _options(**_reloaded(ctx, given)),
        )
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc

    def stop(signum: int, frame: object) -> None:
        watcher.stop.set()
        if watcher.busy:
            # End the build now: it leaves the published site as it was, or updated whole.
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, lambda signum, frame: watcher.reload_asked.set())
    with contextlib.suppress(KeyboardInterrupt):  # a stop signal during a build
        watcher.run()
    if not quiet and fmt == "text":
        click.echo("Stopped.", err=True)


def _reloaded(ctx: click.Context, given: dict[str, Any]) -> dict[str, Any]:
    """Return the build options with those set by ``sitegen.toml`` read from it again."""
    from click.core import ParameterSource

    path = config.find(ctx.meta.get(_CONFIG_PATH))
    if path is None:
        return given
    known = {config.key_of(p) for c in cli.commands.values() for p in c.params if p.opts}
    assert ctx.command is not None
    defaults = config.load(path, ctx.command, known)
    fresh = dict(given)
    for name in given:
        source = ctx.get_parameter_source(name)
        if source in (ParameterSource.DEFAULT_MAP, ParameterSource.DEFAULT):
            param = next(p for p in ctx.command.params if p.name == name)
            fresh[name] = defaults.get(name, param.get_default(ctx))
    return fresh


@cli.command("serve")
@site_options
@click.option("--host", default="127.0.0.1", help="Address to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, help="Port to listen on.")
def serve_command(host: str, port: int, **rest: Any) -> None:
    """Build, serve the site with live reload, and rebuild when logs or templates change.

    The site is served at the exact /api/* paths, as the generated nginx config does.

    \b
    Example:
        sitegen serve --event-log-dir /var/log/ballista --port 8000
    """
    from urllib.parse import urlsplit

    from sitegen.builder.options import BuildReport
    from sitegen.builder.pipeline import build
    from sitegen.builder.report import summary_lines
    from sitegen.serve.server import serve

    def on_build(report: BuildReport | None, error: str | None) -> None:
        if error is not None:
            click.echo(f"Rebuild failed (still serving the last good site): {error}", err=True)
        elif report is not None:
            click.echo(summary_lines(report)[0])

    try:
        options = _options(**rest)
        if options.publish_url is not None:
            raise SitegenError("serve builds into a local directory: --output cannot be a URL")
        serve(
            options,
            lambda: build(options, on_wait=_waiting(options.output)),
            options.output,
            host,
            port,
            on_build,
            ready=lambda url: click.echo(f"Serving {options.output} at {url} (Ctrl+C to stop)"),
            # Previewed where it will be published: the 404 page's links then work too.
            base_path=urlsplit(options.base_url).path if options.base_url else "/",
        )
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc


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
def check_command(
    log_dirs: tuple[Path | str, ...],
    storage_options: tuple[tuple[str, Any], ...],
    follow_links: bool,
    max_log_size: int,
    max_line_size: int,
    stale_after: str,
    workers: int | None,
    fmt: str,
    fail_on: str | None,
) -> None:
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
    from sitegen.check import check, check_json, check_limits, check_lines
    from sitegen.diagnose.gate import parse_kinds

    try:
        kinds = parse_kinds(fail_on) if fail_on is not None else frozenset()
        limits = check_limits(max_log_size, max_line_size, stale_after)
        dirs = _log_dirs(log_dirs, dict(storage_options) or None)
        report = check(dirs, workers, follow_links, kinds, limits)
    except SitegenError as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from exc
    for line in [check_json(report)] if fmt == "json" else check_lines(report):
        click.echo(line)
    raise SystemExit(0 if report.passed else 1)


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
    from sitegen.publish import hosting

    render = hosting.nginx if server == "nginx" else hosting.caddy
    click.echo(render(root.resolve(), listen), nl=False)


def _wire_environment() -> None:
    """Give every option its ``SITEGEN_<KEY>`` variable and show defaults in --help."""
    for command in cli.commands.values():
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                param.envvar = config.ENV_PREFIX + config.key_of(param).upper()
                param.show_envvar = True
                param.show_default = not param.is_flag or param.secondary_opts != []


_wire_environment()
