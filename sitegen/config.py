"""``sitegen.toml``: every build/serve/check option as a key; flags and env vars win over it.

Precedence, highest first: command-line flag, ``SITEGEN_<KEY>`` environment variable,
the config file, the built-in default. Keys are the long option names with ``_`` for
``-`` (``event_log_dir``, ``max_jobs``); relative paths in the file are relative to
the file itself, so a config works from any working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sitegen.errors import UsageError
from sitegen.text.storage_url import is_url

CONFIG_NAME = "sitegen.toml"
ENV_PREFIX = "SITEGEN_"


def key_of(param: click.Parameter) -> str:
    """Return the config key (and env var suffix) of an option: ``--max-jobs`` → ``max_jobs``."""
    longest = max(param.opts, key=len)
    return longest.lstrip("-").replace("-", "_")


def find(explicit: Path | None) -> Path | None:
    """Return the config file to use: the one given, else ``./sitegen.toml`` if present."""
    if explicit is not None:
        return explicit
    default = Path(CONFIG_NAME)
    return default if default.is_file() else None


def load(path: Path, command: click.Command, known: set[str]) -> dict[str, Any]:
    """Read ``path`` into click defaults for ``command``; other commands' keys are skipped."""
    import tomllib  # here: most runs have no config file, and every run starts by importing

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read config: {exc.strerror}", path) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"not valid TOML: {exc}", path) from exc
    params = {key_of(p): p for p in command.params if isinstance(p, click.Option)}
    defaults: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise UsageError(f"unknown key {key!r} (see `sitegen {command.name} --help`)", path)
        param = params.get(key)
        if param is None or param.name is None:
            continue  # an option of another command (port is serve's): fine in a shared file
        defaults[param.name] = _convert(param, key, value, path)
    return defaults


def _convert(param: click.Option, key: str, value: Any, path: Path) -> Any:
    """Check one value's TOML type against the option and make paths file-relative."""
    if param.is_flag or param.is_bool_flag:
        if not isinstance(value, bool):
            raise UsageError(f"key {key!r} must be true or false, not {value!r}", path)
        return value
    if param.name == "storage_options" and isinstance(value, dict):
        # A table of fsspec options ([storage_options] endpoint_url = "..."), kept as typed.
        return [(str(k), v) for k, v in value.items()]
    values = value if param.multiple and isinstance(value, list) else [value]
    converted = []
    for item in values:
        wants_int = isinstance(param.type, click.types._NumberParamTypeBase)
        if wants_int and (isinstance(item, bool) or not isinstance(item, int)):
            raise UsageError(f"key {key!r} must be a whole number, not {item!r}", path)
        if not wants_int and not isinstance(item, str):
            raise UsageError(f"key {key!r} must be a string, not {item!r}", path)
        if isinstance(param.type, click.Path) and not is_url(item):
            item = str(path.parent / item)
        try:
            converted.append(param.type.convert(item, param, None))
        except click.BadParameter as exc:
            raise UsageError(f"key {key!r}: {exc.message}", path) from exc
    return converted if param.multiple else converted[0]
