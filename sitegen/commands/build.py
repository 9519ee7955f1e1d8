"""``sitegen build``: build the site once and print its summary (``--watch``: ``watch``)."""

from __future__ import annotations

import sys
from typing import Any

import click

from sitegen.commands.options import build_options
from sitegen.errors import SitegenError


def build_command(
    fmt: str,
    quiet: bool,
    verbose: bool,
    watch: bool,
    poll: float | None,
    running_interval: float,
    **given: Any,
) -> None:
    """Build with the options' values (``given``); exit 1 on --strict and a skipped log.

    With ``watch``, keep publishing each change until stopped (``commands.watch``).
    """
    if watch:
        from sitegen.commands.watch import watch_command

        watch_command(fmt, quiet, poll, running_interval, given)
        return
    from sitegen.builder.pipeline import build
    from sitegen.builder.progress import ProgressBar
    from sitegen.commands.output import summary_json, summary_lines, waiting

    try:
        options = build_options(**given)
        bar = ProgressBar(sys.stderr)
        bar.enabled = bar.enabled and not quiet and fmt == "text"
        try:
            report = build(
                options, progress=bar, on_wait=None if quiet else waiting(options.output)
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
