"""The Python API for scripts: ``sitegen.build(...)`` and ``sitegen.read_log(...)``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sitegen.builder.pipeline import BuildOptions, BuildReport
from sitegen.builder.pipeline import build as build_site


def build(
    event_log_dir: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str] = "site",
    *,
    workers: int | None = None,
    archive: str | os.PathLike[str] | None = None,
) -> BuildReport:
    """Build from ``event_log_dir`` (one or several) into ``output``, as ``sitegen build``."""
    return build_site(
        BuildOptions(
            log_dirs=_dirs(event_log_dir),
            output=Path(output),
            workers=workers,
            archive=None if archive is None else Path(archive),
        )
    )


def _dirs(value: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """Accept one directory or several."""
    if isinstance(value, (str, os.PathLike)):
        return (Path(value),)
    return tuple(Path(v) for v in value)
