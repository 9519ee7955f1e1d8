"""The Python API for scripts: ``sitegen.build(...)`` and ``sitegen.read_log(...)``."""

from __future__ import annotations

import os
from pathlib import Path

from sitegen.pipeline import BuildOptions, BuildReport
from sitegen.pipeline import build as build_site


def build(
    event_log_dir: str | os.PathLike[str],
    output: str | os.PathLike[str] = "site",
    *,
    workers: int | None = None,
    archive: str | os.PathLike[str] | None = None,
) -> BuildReport:
    """Build the site from ``event_log_dir`` into ``output``, exactly as ``sitegen build`` does."""
    return build_site(
        BuildOptions(
            log_dir=Path(event_log_dir),
            output=Path(output),
            workers=workers,
            archive=None if archive is None else Path(archive),
        )
    )
