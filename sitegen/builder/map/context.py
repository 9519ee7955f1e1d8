"""What the map step needs beside each log: its options and the page renderer.

It is what travels to the workers, once a map (pickled to the local pool's processes, or a
task's result the Dask workers share), so that the renderer only renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits

if TYPE_CHECKING:
    from sitegen.builder.options import BuildOptions
    from sitegen.render.pages import PageRenderer


@dataclass(frozen=True)
class MapContext:
    """One build's map step: how to read each log, what to write of it, and the renderer."""

    pages: PageRenderer
    # The most one log and one line may hold (see eventlog/limits.py).
    limits: LogLimits = DEFAULT_LIMITS
    # Whether each job's log is copied into the site (gzipped), and its SQL rows kept (data/).
    raw_logs: bool = True
    data: bool = False
    # Where operator notes are; notes linked out of those dirs are read only with
    # ``follow_links`` (see eventlog/notes.py).
    notes_dirs: tuple[Path, ...] = ()
    follow_links: bool = False


def for_build(
    options: BuildOptions, limits: LogLimits, notes_dirs: tuple[Path, ...], cache_key: str
) -> MapContext:
    """Return a build's map step context, its renderer's per-job templates compiled."""
    from sitegen.render.pages import PageRenderer  # Jinja, Markdown, SVG: when there is work

    pages = PageRenderer(
        options.templates_dir,
        title=options.title,
        robots=options.robots,
        base_url=options.base_url,
        pages_dir=options.pages_dir,
        cache_key=cache_key,
        sql_engine=options.sql_engine,
        data=bool(options.data),
    )
    pages.warm()
    return MapContext(
        pages,
        limits=limits,
        raw_logs=options.raw_logs,
        data=bool(options.data),
        notes_dirs=notes_dirs,
        follow_links=options.follow_links,
    )
