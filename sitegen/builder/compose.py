"""What varies in a build, chosen in one place: where the map runs and where the site goes.

Every way into a build (``sitegen build``, ``--watch``, ``sitegen serve``, ``sitegen.build``)
makes its options with ``site_output`` and builds through ``pipeline.build``, which asks
``compose`` for the parts: a ``Mapper`` (this machine's workers, or a Dask cluster) and a
``PublishTarget`` (``builder.targets.local``: a local directory, or a bucket through a local copy).
Where the logs come from is the log dirs' own part (``eventlog.sources``). No other module
asks which part it has.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen.builder.map.mapper import LocalMapper, Mapper
from sitegen.builder.options import BuildOptions
from sitegen.builder.targets.local import LocalTarget, PublishTarget
from sitegen.errors import SitegenError, UsageError
from sitegen.text.storage_url import is_url


@dataclass(frozen=True)
class Parts:
    """One build's parts."""

    mapper: Mapper
    target: PublishTarget


def compose(options: BuildOptions) -> Parts:
    """Return the parts the options ask for."""
    mapper: Mapper
    if options.dask_scheduler is not None:
        from sitegen.builder.map.dask_mapper import DaskMapper  # distributed: only when asked

        mapper = DaskMapper(options.dask_scheduler, options.dask_timeout)
    else:
        mapper = LocalMapper(options.workers)
    target: PublishTarget = LocalTarget()
    if options.publish_url is not None:
        from sitegen.builder.targets.bucket import BucketTarget

        target = BucketTarget(options.publish_url)
    return Parts(mapper, target)


def site_output(
    output: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str] | None = None,
    state_url: str | None = None,
) -> dict[str, Any]:
    """Return the options that say where the site goes: a directory, or a bucket's local copy.

    An ``s3://`` (any storage URL) output is built into a local copy kept between builds
    (under ``cache_dir``), then published to the bucket; ``state_url`` is for such an output.
    """
    if is_url(output):
        from sitegen.builder.targets.bucket import local_copy

        url = str(output)
        local = local_copy(url, Path(cache_dir) if cache_dir is not None else None)
        return {"output": local, "publish_url": url, "state_url": state_url}
    if state_url is not None:
        raise SitegenError("--state is for an --output in object storage")
    return {"output": Path(output)}


def local_site(options: BuildOptions, command: str) -> None:
    """Refuse a bucket output for a command that serves or watches a local directory."""
    if options.publish_url is not None:
        raise UsageError(f"{command} builds into a local directory: --output cannot be a URL")
