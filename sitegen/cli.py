"""Command-line wiring only: options in, core calls, messages and exit codes out."""

from __future__ import annotations

from pathlib import Path

import click

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.examples import EXAMPLE_LOG_DIR

LOG_DIR_HELP = (
    "Directory of Ballista event logs (as the scheduler's --event-log-dir). "
    "[default: the bundled example logs]"
)
OUTPUT_HELP = "Directory to publish the site into (replaced atomically)."
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


@cli.command("build")
@click.option("--event-log-dir", type=click.Path(path_type=Path), default=None, help=LOG_DIR_HELP)
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    default=Path("site"),
    show_default=True,
    help=OUTPUT_HELP,
)
@click.option("--strict", is_flag=True, help="Exit 1 if any log was skipped.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for reading logs. [default: CPU count]",
)
@click.option(
    "--archive",
    type=click.Path(path_type=Path),
    default=None,
    help="Also pack the published site into this .tar.gz, .tgz or .zip "
    "(not inside the output or the log dir).",
)
@FORMAT_OPTION
def build_command(
    event_log_dir: Path | None,
    output: Path,
    strict: bool,
    workers: int | None,
    archive: Path | None,
    fmt: str,
) -> None:
    """Build the site: every completed job's /api/* files and HTML pages.

    \b
    Example:
        sitegen build --event-log-dir /var/log/ballista --output site
        sitegen build --event-log-dir logs --output site --archive site.tar.gz
    """
    from sitegen.build import BuildOptions, build
    from sitegen.report import summary_json, summary_lines

    options = BuildOptions(
        log_dir=event_log_dir or EXAMPLE_LOG_DIR,
        output=output,
        strict=strict,
        workers=workers,
        archive=archive,
    )
    try:
        report = build(options)
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc
    for line in [summary_json(report)] if fmt == "json" else summary_lines(report):
        click.echo(line)
    if strict and report.skipped:
        raise SystemExit(1)


@cli.command("check")
@click.option("--event-log-dir", type=click.Path(path_type=Path), default=None, help=LOG_DIR_HELP)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for reading logs. [default: CPU count]",
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
