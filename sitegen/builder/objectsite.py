"""A build published to object storage (``--output s3://bucket/site/``).

The site is built as always, into a local copy of it kept between builds (``--cache-dir``):
full or incremental, through the one writer, the state beside it. Then what changed is
synced to the bucket (``publish.objectstore``: content hashes against the state's manifest,
jobs before the listings naming them, deletions last). The local copy is trusted only when
it is the one the bucket's last publish came from (the manifest's generation): else it is
built afresh, which maps every log but still uploads only the objects whose bytes changed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder.options import BuildOptions
from sitegen.builder.report import BuildReport
from sitegen.errors import PublishError, SitegenError
from sitegen.text.storage_url import as_prefix, redact, split_credentials

if TYPE_CHECKING:
    from sitegen.builder.mappers import Mapper
    from sitegen.publish.objectstore import SyncReport

# Beside the local copy of the site: the generation of the publish it matches.
PUBLISHED_MARK = "published-generation"


def cache_home() -> Path:
    """Return sitegen's cache directory (``$XDG_CACHE_HOME/sitegen``, ``~/.cache/sitegen``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sitegen"


def local_copy(url: str, cache_dir: Path | None = None) -> Path:
    """Return where the local copy of the site published at ``url`` is built."""
    bare = as_prefix(split_credentials(url)[0])
    digest = hashlib.sha256(bare.encode()).hexdigest()[:20]
    return (cache_dir or cache_home()) / "sites" / digest / "site"


class BucketTarget:
    """A site published to object storage (the ``PublishTarget`` of an ``s3://`` output).

    Its ``mapper``'s workers may put new jobs in the bucket themselves (``Mapper.upload_to``).
    """

    def __init__(self, url: str, mapper: Mapper | None = None) -> None:
        self.url = url
        self.mapper = mapper

    def publish(
        self,
        options: BuildOptions,
        build_here: Callable[[BuildOptions], BuildReport],
        on_wait: Callable[[], None] | None = None,
    ) -> BuildReport:
        """Build the local copy with ``build_here``, then sync what changed to the bucket."""
        waiting = None if on_wait is None else (lambda owner: on_wait())
        return build_to_objects(self.url, options, build_here, waiting, self.mapper)


def build_to_objects(
    publish_url: str,
    options: BuildOptions,
    local_build: Callable[[BuildOptions], BuildReport],
    on_wait: Callable[[str], None] | None = None,
    mapper: Mapper | None = None,
) -> BuildReport:
    """Build the site locally with ``local_build``, then publish what changed to the bucket.

    When ``mapper``'s workers can, they put each new job's objects at their keys as they map
    it (``objectstore.Uploader``): the sync then uploads the rest (listings, site-wide files,
    jobs published before), and deletes what the workers put up that the site does not keep.
    """
    from sitegen.publish import objectstore

    started = time.perf_counter()
    url = as_prefix(publish_url)
    state_url = as_prefix(options.state_url or objectstore.default_state_url(url))
    if as_prefix(split_credentials(state_url)[0]) == as_prefix(split_credentials(url)[0]):
        raise SitegenError("--state must not be the site's own prefix (it would be served)")
    store = objectstore.Store(url, options.storage_options)
    state = objectstore.Store(state_url, options.storage_options)
    try:
        lock = objectstore.acquire(state, on_wait)
    except OSError as exc:
        raise PublishError(f"cannot take the lock: {_reason(exc)}", redact(state_url)) from exc
    try:
        before = objectstore.Manifest.load(state)
        # A build that died after its workers put objects up left its mark: every job object
        # the manifest does not name is looked for (a LIST of the job prefixes) and deleted.
        leftovers = objectstore.leftover_uploads(state)
        if before is None and not leftovers:  # (with them: the objects are a first publish's)
            objectstore.check_new_prefix(store, state_url)
        mark = options.output.parent / PUBLISHED_MARK
        known = mark.read_text().strip() if mark.is_file() else None
        fresh = before is None or known != before.generation or options.clean
        if fresh:
            # Not the copy the bucket was published from: build it afresh (the sync still
            # uploads only what differs from the manifest).
            shutil.rmtree(options.output.parent, ignore_errors=True)
        options.output.parent.mkdir(parents=True, exist_ok=True)
        suspects = set(objectstore.JOB_PREFIXES) if leftovers else set()
        uploader = None
        if mapper is not None:
            uploader = mapper.upload_to(
                lambda: objectstore.Uploader(
                    url, dict(options.storage_options), objectstore.published_roots(before)
                )
            )
        if uploader is not None:
            uploader.begin(state)
        report = local_build(dataclasses.replace(options, clean=options.clean or fresh))
        lock.refresh()
        if report.up_to_date and not fresh and not suspects:
            if uploader is not None:  # no worker ran: none was put up
                objectstore.Uploader.end(state)
            synced = objectstore.SyncReport()  # nothing changed: nothing to compare
            return _published(report, url, synced, started)
        mark.unlink(missing_ok=True)  # the copy is ahead of the bucket until the sync ends
        try:
            # The local copy is the bucket's last publish: what the build changed is all
            # that can differ (a full build changed everything: compare the whole site).
            changed = None if fresh else report.changed
            suspects |= mapper.suspects if mapper is not None else set()
            after, synced = objectstore.sync(
                options.output,
                store,
                state,
                None if options.clean else before,
                changed,
                report.worker_uploads,
                sorted(suspects),
            )
            if uploader is not None or leftovers:
                objectstore.Uploader.end(state)
        except OSError as exc:
            raise PublishError(
                f"publishing to object storage stopped: {_reason(exc)} (the next build "
                "finishes it)",
                redact(url),
            ) from exc
        mark.write_text(after.generation)
    finally:
        with contextlib.suppress(OSError):  # else it expires
            lock.release()
    return _published(report, url, synced, started)


def _published(report: BuildReport, url: str, synced: SyncReport, started: float) -> BuildReport:
    """Add where the site went and what the sync did to the local build's report."""
    report.seconds = time.perf_counter() - started  # the lock, the build and the sync
    report.published_to = redact(url)
    report.uploaded = synced.uploaded
    report.uploaded_bytes = synced.uploaded_bytes
    report.deleted = synced.deleted
    report.hashed_bytes = synced.hashed_bytes
    return report


def _reason(exc: OSError) -> str:
    """Say what went wrong with the store, never with a credential in it."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return redact(text) if "://" in text else text
