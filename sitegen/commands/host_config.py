"""``sitegen host-config``: print an nginx or Caddy config that serves every /api/* path."""

from __future__ import annotations

from pathlib import Path

import click


def host_config_command(server: str, root: Path, listen: str) -> None:
    """Print the config of ``server`` (nginx or caddy) for the site in ``root``."""
    from sitegen.publish import hosting

    render = hosting.nginx if server == "nginx" else hosting.caddy
    click.echo(render(root.resolve(), listen), nl=False)
