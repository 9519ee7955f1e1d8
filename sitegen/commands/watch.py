"""``sitegen build --watch``: publish each change until stopped; SIGHUP re-reads sitegen.toml."""

from __future__ import annotations

import contextlib
import signal
from typing import TYPE_CHECKING, Any

import click

from sitegen import config
from sitegen.commands.options import CONFIG_PATH, build_options, known_keys
from sitegen.commands.output import waiting
from sitegen.errors import SitegenError

if TYPE_CHECKING:
    from sitegen.builder.watch import Publish


def watch_command(
    fmt: str, quiet: bool, poll: float | None, running_interval: float, given: dict[str, Any]
) -> None:
    """Run ``sitegen build --watch``: publish each change until SIGTERM or Ctrl-C."""
    from sitegen.builder.pipeline import build
    from sitegen.builder.watch import Watcher

    if given.get("archive") is not None:
        raise click.UsageError("--archive cannot be used with --watch")
    ctx = click.get_current_context()
    try:
        options = build_options(**given)
        watcher = Watcher(
            options,
            lambda o, hint: build(o, on_wait=None if quiet else waiting(o.output), hint=hint),
            lambda done: say_publish(done, fmt, quiet),
            poll=poll,
            running_interval=running_interval,
            reload=lambda: build_options(**reloaded(ctx, given)),
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


def say_publish(done: Publish, fmt: str, quiet: bool) -> None:
    """Print one publish: a JSON object on stdout, failed or not; text failures on stderr.

    A failure that repeats the last one (a disk still full) is not printed again: each episode
    is said once, and the publish that goes through ends it.
    """
    from sitegen.commands.output import publish_json, publish_line

    if done.repeated:
        return
    if fmt == "json":
        if not quiet or done.error is not None:
            click.echo(publish_json(done))
    elif done.error is not None:
        click.echo(publish_line(done), err=True)
    elif not quiet:
        click.echo(publish_line(done))


def reloaded(ctx: click.Context, given: dict[str, Any]) -> dict[str, Any]:
    """Return the build options with those set by ``sitegen.toml`` read from it again."""
    from click.core import ParameterSource

    path = config.find(ctx.meta.get(CONFIG_PATH))
    if path is None:
        return given
    assert ctx.command is not None
    defaults = config.load(path, ctx.command, known_keys(ctx))
    fresh = dict(given)
    for name in given:
        source = ctx.get_parameter_source(name)
        if name in defaults and source in (ParameterSource.DEFAULT_MAP, ParameterSource.DEFAULT):
            fresh[name] = defaults[name]
        elif source is ParameterSource.DEFAULT_MAP:  # set by the old file only: back to default
            param = next(p for p in ctx.command.params if p.name == name)
            fresh[name] = default_of(ctx, param)
    return fresh


def default_of(ctx: click.Context, param: click.Parameter) -> Any:
    """Return an option's value when neither a flag nor the config file sets it, as parsed."""
    # click's get_default reads the old file's value first and hands back text unconverted (a
    # size "4GiB"): a reload once set it so, and the peek's size check compared an int with it.
    saved, ctx.default_map = ctx.default_map, None
    try:
        value, _ = param.consume_value(ctx, {})
        return param.process_value(ctx, value)
    finally:
        ctx.default_map = saved
