"""The click parameter types of the options: what the text of each option becomes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from sitegen.text.storage_url import is_url


class PathOrUrl(click.Path):
    """A local path, or an object-storage URL (``s3://bucket/prefix/``) kept as text."""

    name = "path or url"

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path | str:
        """Keep a URL as it is; make anything else a path."""
        if is_url(value):
            return str(value)
        return Path(os.fsdecode(super().convert(value, param, ctx)))


# Not ParamType[str]: click 8.1, which pyproject allows, is not generic at run time.
class StorageOption(click.ParamType):  # type: ignore[type-arg]
    """One fsspec storage option, ``KEY=VALUE`` (a JSON value, else text)."""

    name = "key=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, Any]:
        """Split the option into its key and value."""
        if isinstance(value, tuple):
            return value
        key, eq, text = str(value).partition("=")
        if not eq or not key.strip():
            self.fail(f"{value!r} is not KEY=VALUE", param, ctx)
        try:
            return key.strip(), json.loads(text)
        except ValueError:
            return key.strip(), text


class BaseUrl(click.ParamType):  # type: ignore[type-arg]
    """A site base URL: an absolute path or an http(s) URL, given a trailing slash."""

    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """Check and normalise the value (bad values are usage errors, exit 2)."""
        from sitegen.render.urls import base_url

        try:
            return base_url(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Size(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes: ``500MB``, ``1GB``, ``1.5GiB``."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """Turn the text into bytes (bad values are usage errors, exit 2)."""
        from sitegen.builder.select.sitesize import parse_size
        from sitegen.errors import UsageError

        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except UsageError as exc:
            self.fail(exc.message, param, ctx)
