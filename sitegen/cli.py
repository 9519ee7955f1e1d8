"""Command-line wiring only: options in, core calls, messages and exit codes out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.examples import EXAMPLE_LOG_DIR

if TYPE_CHECKING:
    from sitegen.pipeline import BuildOptions

LOG_DIR_HELP = (
    "Directory of Ballista event logs (as the scheduler's --event-log-dir). "
    "[default: the bundled example logs]"
)
OUTPUT_HELP = "Directory to publish the site into (replaced atomically)."
SITE_TITLE = "Ballista job history"  # the same default as sitegen.pages (kept import-light)
_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
PAGES_HELP = "Directory of Markdown pages (*.md) to render into the site and its navigation."
TEMPLATES_HELP = (
    "Directory whose templates (and static/ files) replace the shipped ones of the same name."
)
ROBOTS_HELP = "Let search engines index the pages. [default: --no-robots, every page says noindex]"
FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Print text lines for people, or one JSON object for scripts.",
)


@click.group()
@click.version_option(__version__, prog_name="sitegen")
def cli() -> None:
    """Build a static Ballista history server from event logs."""


def log_options(f: Callable[..., None]) -> Callable[..., None]:
    """Add the options that choose what is built and where (shared by build and serve)."""
    f = click.option("--robots/--no-robots", default=False, help=ROBOTS_HELP)(f)
    f = click.option(
        "--title", default=SITE_TITLE, show_default=True, help="Site title in every header."
    )(f)
    f = click.option("--templates", "templates_dir", type=_DIR, default=None, help=TEMPLATES_HELP)(
        f
    )
    f = click.option("--pages", "pages_dir", type=_DIR, default=None, help=PAGES_HELP)(f)
    f = click.option(
        "--clean", is_flag=True, help="Rebuild every job, ignoring what the last build left."
    )(f)
    f = click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        help="Processes that read logs. [default: CPU count]",
    )(f)
    f = click.option(
        "--output",
        type=click.Path(path_type=Path),
        default=Path("site"),
        show_default=True,
        help=OUTPUT_HELP,
    )(f)
    f = click.option(
        "--event-log-dir", type=click.Path(path_type=Path), default=None, help=LOG_DIR_HELP
    )(f)
    return f


def _options(event_log_dir: Path | None, output: Path, **rest: Any) -> BuildOptions:
    """Turn CLI values into the core's options object."""
    from sitegen.pipeline import BuildOptions

    return BuildOptions(log_dir=event_log_dir or EXAMPLE_LOG_DIR, output=output, **rest)


@cli.command("build")
@log_options
@click.option("--strict", is_flag=True, help="Exit 1 if any log was skipped.")
@click.option(
    "--archive",
    type=click.Path(path_type=Path),
    default=None,
    help="Also pack the published site into this .tar.gz, .tgz or .zip "
    "(not inside the output or the log dir).",
)
@FORMAT_OPTION
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("-v", "--verbose", is_flag=True, help="List every problem, not just the first few.")
def build_command(
    event_log_dir: Path | None,
    output: Path,
    fmt: str,
    quiet: bool,
    verbose: bool,
    **rest: Any,
) -> None:
    """Build the site: every completed job's /api/* files and HTML pages.

    Only logs that changed since the last build are read again.

    \b
    Example:
        sitegen build --event-log-dir /var/log/ballista --output site
        sitegen build --event-log-dir logs --output site --archive site.tar.gz
        sitegen build --pages runbooks/ --templates my-theme/ --title "Prod history"
    """
    from sitegen.pipeline import build
    from sitegen.progress import ProgressBar
    from sitegen.report import summary_json, summary_lines

    options = _options(event_log_dir, output, **rest)
    bar = ProgressBar(click.get_text_stream("stderr"))
    bar.enabled = bar.enabled and not quiet
    try:
        report = build(options, progress=bar)
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        bar.finish()
    if not quiet:
        lines = [summary_json(report)] if fmt == "json" else summary_lines(report, verbose)
        for line in lines:
            click.echo(line)
    if options.strict and report.skipped:
        raise SystemExit(1)


@cli.command("serve")
@log_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def serve_command(
    event_log_dir: Path | None, output: Path, host: str, port: int, **rest: Any
) -> None:
    """Build, serve the site with live reload, and rebuild when logs or templates change.

    The site is served at the exact /api/* paths, as the generated nginx config does.

    \b
    Example:
        sitegen serve --event-log-dir /var/log/ballista --port 8000
    """
    from sitegen.pipeline import BuildReport, build
    from sitegen.report import summary_lines
    from sitegen.serve import serve

    options = _options(event_log_dir, output, **rest)

    def on_build(report: object | None, error: str | None) -> None:
        if error is not None:
            click.echo(f"Rebuild failed (still serving the last good site): {error}", err=True)
        elif isinstance(report, BuildReport):
            click.echo(summary_lines(report)[0])

    try:
        serve(
            options,
            lambda: build(options),
            output,
            host,
            port,
            on_build,
            ready=lambda url: click.echo(f"Serving {output} at {url} (Ctrl+C to stop)"),
        )
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc


@cli.command("check")
@click.option("--event-log-dir", type=click.Path(path_type=Path), default=None, help=LOG_DIR_HELP)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that read logs. [default: CPU count]",
)
@FORMAT_OPTION
def check_command(event_log_dir: Path | None, workers: int | None, fmt: str) -> None:
    """Read every log as a build would, publish nothing, report each problem.

    Exit 0 when no log has an error (running logs are only noted), 1 when any
    log is damaged, newer than this sitegen, unsafe or a duplicate, 2 on usage
    errors such as a missing directory.

    \b
    Example:
        sitegen check --event-log-dir /var/log/ballista --format json
    """
    from sitegen.check import check
    from sitegen.report import check_json, check_lines

    try:
        report = check(event_log_dir or EXAMPLE_LOG_DIR, workers)
    except SitegenError as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from exc
    for line in [check_json(report)] if fmt == "json" else check_lines(report):
        click.echo(line)
    raise SystemExit(0 if report.ok else 1)


@cli.command("host-config")
@click.argument("server", type=click.Choice(["nginx", "caddy"]))
@click.option(
    "--root", type=click.Path(path_type=Path), required=True, help="The built site directory."
)
@click.option(
    "--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to listen on."
)
def host_config_command(server: str, root: Path, listen: str) -> None:
    """Print a server config that serves every /api/* path exactly.

    \b
    Example:
        sitegen host-config nginx --root /srv/history > /etc/nginx/conf.d/history.conf
    """
    from sitegen import hosting

    render = hosting.nginx if server == "nginx" else hosting.caddy
    click.echo(render(root.resolve(), listen), nl=False)
