"""Run the CLI as ``python -m sitegen``."""

from __future__ import annotations

from sitegen.cli import cli

cli()
