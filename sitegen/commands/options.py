"""What the options become: ``sitegen.toml``'s defaults, the log dirs, the build's options."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sitegen import config
from sitegen.errors import SitegenError
from sitegen.examples import EXAMPLE_LOG_DIR

if TYPE_CHECKING:
    from sitegen.builder.options import BuildOptions
    from sitegen.eventlog.sources import LogSource

# Where ``ctx.meta`` keeps the --config given (None: ./sitegen.toml if present), for SIGHUP.
CONFIG_PATH = "sitegen.config"


def _commands(ctx: click.Context) -> Iterable[click.Command]:
    """Return every command of the program ``ctx`` belongs to."""
    root = ctx.find_root().command
    return root.commands.values() if isinstance(root, click.Group) else [root]


def known_keys(ctx: click.Context) -> set[str]:
    """Return the keys a ``sitegen.toml`` may set: the options of every command."""
    return {config.key_of(p) for c in _commands(ctx) for p in c.params if p.opts}


def load_config(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Load ``sitegen.toml`` (or --config) into the command's defaults, before other options."""
    ctx.meta[CONFIG_PATH] = value
    path = config.find(value)
    if path is None or ctx.command is None:
        return
    try:
        defaults = config.load(path, ctx.command, known_keys(ctx))
    except SitegenError as exc:
        raise click.UsageError(str(exc), ctx) from exc
    ctx.default_map = {**(ctx.default_map or {}), **defaults}


def log_dirs_of(
    given: tuple[Path | str, ...], storage_options: dict[str, Any] | None = None
) -> tuple[LogSource, ...]:
    """Return the log dirs to read (the bundled example logs when none was given), each once."""
    from sitegen.eventlog.discover import as_log_dir, distinct_dirs

    dirs = [as_log_dir(d, storage_options) for d in given or (EXAMPLE_LOG_DIR,)]
    kept, dropped = distinct_dirs(dirs)
    for again, first in dropped:
        same = "is named twice" if again == first else f"is the same directory as {first}"
        click.echo(f"Warning: event-log dir {again} {same}: read once.", err=True)
    return tuple(kept)


def build_options(
    log_dirs: tuple[Path | str, ...],
    output: Path | str,
    storage_options: tuple[tuple[str, Any], ...] = (),
    cache_dir: Path | None = None,
    state_url: str | None = None,
    **rest: Any,
) -> BuildOptions:
    """Turn a command's option values into the core's options object.

    An ``--output`` in object storage becomes a local copy of the site (in ``--cache-dir``)
    and the URL it is published to; ``--state`` goes only with such an output.
    """
    # The one place the commands turn option values into BuildOptions (it was cli._options).
    # Where the site goes already comes from the composing module (compose.site_output, as for
    # sitegen.build); the lead routes the rest of it (log dirs, storage options) through there.
    from sitegen.builder.compose import site_output
    from sitegen.builder.options import BuildOptions

    # A list from the config file, a tuple from flags; SIGHUP's re-read default may be neither.
    given = dict(storage_options) if isinstance(storage_options, tuple | list) else {}
    dirs = log_dirs_of(log_dirs, given or None)
    where = site_output(output, cache_dir, state_url)
    return BuildOptions(log_dirs=dirs, storage_options=given, **where, **rest)
