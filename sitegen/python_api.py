"""The Python API for scripts: ``sitegen.build(...)`` and ``sitegen.read_log(...)``."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from sitegen.builder.compose import site_output
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build as build_site
from sitegen.builder.report import BuildReport
from sitegen.errors import UsageError
from sitegen.eventlog.discover import LogDirs, as_log_dirs

# Options given as paths or sizes in text, as on the command line.
_PATHS = ("archive", "pages_dir", "templates_dir", "sql_engine")


def build(
    log_dirs: LogDirs,
    output: str | os.PathLike[str] = "site",
    **options: Any,
) -> BuildReport:
    """Build from ``log_dirs`` (one directory or several) into ``output``, as ``sitegen build``.

    ``options``: any field of ``BuildOptions`` by name (``max_jobs=1000``, ``allow_empty=True``,
    ``max_site_size="1GB"``, ``archive="dist/site.tar.gz"``). ``log_dirs`` and ``output`` may
    be storage URLs (``s3://bucket/site/``; ``storage_options={...}`` for fsspec).
    """
    fields = {f.name for f in dataclasses.fields(BuildOptions)} - {"log_dirs", "output"}
    fields.add("cache_dir")
    unknown = sorted(options.keys() - fields)
    if unknown:
        raise UsageError(f"sitegen.build() has no option {unknown[0]!r}; it has {sorted(fields)}")
    for name in _PATHS:
        if options.get(name) is not None:
            options[name] = Path(options[name])
    if isinstance(options.get("max_site_size"), str):
        from sitegen.builder.select.sitesize import parse_size

        options["max_site_size"] = parse_size(options["max_site_size"])
    dirs = as_log_dirs(log_dirs, options.get("storage_options"))
    where = site_output(output, options.pop("cache_dir", None), options.pop("state_url", None))
    return build_site(BuildOptions(log_dirs=dirs, **where, **options))
