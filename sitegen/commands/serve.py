"""``sitegen serve``: build, serve the site with live reload, rebuild on change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from sitegen.commands.options import build_options
from sitegen.commands.output import waiting
from sitegen.errors import SitegenError

if TYPE_CHECKING:
    from sitegen.builder.report import BuildReport


def say_build(report: BuildReport | None, error: str | None) -> None:
    """Print what one build of the server did: its summary's first line, or why it failed."""
    from sitegen.commands.output import summary_lines

    if error is not None:
        click.echo(f"Rebuild failed (still serving the last good site): {error}", err=True)
    elif report is not None:
        click.echo(summary_lines(report)[0])


def serve_command(host: str, port: int, **given: Any) -> None:
    """Serve on ``host:port`` with the build options' values (``given``) until Ctrl+C."""
    from sitegen.builder.compose import local_site
    from sitegen.builder.pipeline import build
    from sitegen.serve.server import serve

    try:
        options = build_options(**given)
        local_site(options, "serve")
        serve(
            options,
            lambda hint: build(options, on_wait=waiting(options.output), hint=hint),
            options.output,
            host,
            port,
            say_build,
            ready=lambda url: click.echo(f"Serving {options.output} at {url} (Ctrl+C to stop)"),
            # Previewed where it will be published: the 404 page's links then work too.
            base_path=urlsplit(options.base_url).path if options.base_url else "/",
        )
    except SitegenError as exc:
        raise click.ClickException(str(exc)) from exc
