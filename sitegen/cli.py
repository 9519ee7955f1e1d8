"""Command-line wiring only: options in, core calls, messages and exit codes out."""

from __future__ import annotations

from pathlib import Path

import click

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.examples import EXAMPLE_LOG_DIR

SITE_TITLE = "Ballista job history"  # the same default as sitegen.pages (kept import-light)
_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
LOG_DIR_HELP = (
    "Directory of Ballista event logs (as the scheduler's --event-log-dir). "
    "[default: the bundled example logs]"
)
OUTPUT_HELP = "Directory to publish the site into (replaced atomically)."
PAGES_HELP = "Directory of Markdown pages (*.md) to render into the site and its navigation."
TEMPLATES_HELP = (
    "Directory whose templates (and static/ files) replace the shipped ones of the same name."
)
ROBOTS_HELP = "Let search engines index the pages. [default: --no-robots, every page says noindex]"


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
@click.option("--pages", "pages_dir", type=_DIR, default=None, help=PAGES_HELP)
@click.option("--templates", "templates_dir", type=_DIR, default=None, help=TEMPLATES_HELP)
@click.option("--title", default=SITE_TITLE, show_default=True, help="Site title in every header.")
@click.option("--robots/--no-robots", default=False, help=ROBOTS_HELP)
def build_command(
    event_log_dir: Path | None,
    output: Path,
    strict: bool,
    workers: int | None,
    pages_dir: Path | None,
    templates_dir: Path | None,
    title: str,
    robots: bool,
) -> None:
    """Build the site: every completed job's /api/* files and HTML pages.

    \b
    Example:
        sitegen build --event-log-dir /var/log/ballista --output site
        sitegen build --pages runbooks/ --templates my-theme/ --title "Prod history"
    """
    from sitegen.build import BuildOptions, build
    from sitegen.report import summary_lines

    options = BuildOptions(
        log_dir=event_log_dir or EXAMPLE_LOG_DIR,
        output=output,
        strict=strict,
        workers=workers,
        pages_dir=pages_dir,
        templates_dir=templates_dir,
        robots=robots,
        title=title,
    )
    try:
        report = build(options)
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc
    for line in summary_lines(report):
        click.echo(line)
    if strict and report.skipped:
        raise SystemExit(1)


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
