"""A build published to object storage (``--output s3://bucket/site/``).

The site is built as always, into a local copy of it kept between builds (``--cache-dir``):
full or incremental, through the one writer, the state beside it, published there by the
local target this one wraps (``builder.targets.local``). Then what that changed is synced to the
bucket (``publish.bucket``: content hashes against the state's manifest, jobs before
the listings naming them, deletions last). The local copy is trusted only when it is the
one the bucket's last publish came from (the manifest's generation): else it is built
afresh, which maps every log but still uploads only the objects whose bytes changed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.builder.options import BuildOptions
from sitegen.builder.report import BuildReport, PublishReport
from sitegen.builder.targets.local import LocalPublishing, LocalTarget, Move
from sitegen.errors import PublishError, SitegenError
from sitegen.text.storage_url import as_prefix, redact, split_credentials

if TYPE_CHECKING:
    from sitegen.publish import bucket as objects
    from sitegen.publish.bucket import Manifest, SyncReport, Uploader

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

    It wraps the local target, whose directory is the local copy: the build publishes there
    as always, then ``finish`` uploads what that changed. The map step's workers may put new
    jobs in the bucket themselves (``BucketUploads``, handed to the mapper by the build).
    """

    def __init__(self, url: str, local: LocalTarget | None = None) -> None:
        self.url = url
        self.local = local if local is not None else LocalTarget()

    @contextlib.contextmanager
    def open(
        self, options: BuildOptions, on_wait: Callable[[], None] | None = None
    ) -> Iterator[BucketPublishing]:
        """Take the bucket's lock, then the local copy's; build that copy afresh if not trusted.

        The local copy is trusted only when it is the one the bucket's last publish came from.
        """
        from sitegen.publish import bucket as objects

        started = time.perf_counter()
        url = as_prefix(self.url)
        state_url = as_prefix(options.state_url or objects.default_state_url(url))
        if as_prefix(split_credentials(state_url)[0]) == as_prefix(split_credentials(url)[0]):
            raise SitegenError("--state must not be the site's own prefix (it would be served)")
        store = objects.Store(url, options.storage_options)
        state = objects.Store(state_url, options.storage_options)
        waiting = None if on_wait is None else (lambda owner: on_wait())
        try:
            lock = objects.acquire(state, waiting)
        except OSError as exc:
            raise PublishError(f"cannot take the lock: {_reason(exc)}", redact(state_url)) from exc
        try:
            try:
                before = objects.Manifest.load(state)
                # A build that died after its workers put objects up left its mark: every job
                # object the manifest does not name is looked for (a LIST of the job prefixes)
                # and deleted.
                leftovers = objects.leftover_uploads(state)
                if before is None and not leftovers:  # (with them: a first publish's objects)
                    objects.check_new_prefix(store, state_url)
            except OSError as exc:
                why = f"cannot read the published state: {_reason(exc)}"
                raise PublishError(why, redact(state_url)) from exc
            mark = options.output.parent / PUBLISHED_MARK
            known = mark.read_text().strip() if mark.is_file() else None
            fresh = before is None or known != before.generation or options.clean
            if fresh:
                # Not the copy the bucket was published from: build it afresh (the sync still
                # uploads only what differs from the manifest).
                shutil.rmtree(options.output.parent, ignore_errors=True)
            options.output.parent.mkdir(parents=True, exist_ok=True)
            given = dataclasses.replace(options, clean=options.clean or fresh)
            with self.local.open(given, on_wait) as local:
                uploads = BucketUploads(url, options.storage_options, before, state)
                yield BucketPublishing(
                    local,
                    _Bucket(url, store, state, lock, before, leftovers, started),
                    uploads,
                    fresh=bool(fresh),
                    clean=options.clean,
                    mark=mark,
                )
        finally:
            with contextlib.suppress(OSError):  # else it expires
                lock.release()


class BucketUploads:
    """What a bucket target lets the map step's workers do: put new jobs at their keys.

    The uploader (``objects.Uploader``) is made when a mapper first asks for it: it reads
    the whole manifest, and a mapper whose workers do not upload never asks. What the workers
    put up, and the job directories of those that died, are noted here for the sync.
    """

    def __init__(
        self,
        url: str,
        storage_options: Mapping[str, Any],
        before: Manifest | None,
        state: objects.Store,
    ) -> None:
        self.url = url
        self.storage_options = storage_options
        self.before = before
        self.state = state
        self.made: Uploader | None = None
        # The objects workers put straight at their keys (key: SHA-256; new jobs only).
        self.uploaded: dict[str, str] = {}
        # The job directories of logs whose workers died: objects they may have put up.
        self.suspects: set[str] = set()

    def uploader(self) -> Uploader:
        """Return the workers' uploader, made (and the bucket's state marked) on first ask."""
        if self.made is None:
            from sitegen.publish import bucket as objects

            roots = objects.published_roots(self.before)
            self.made = objects.Uploader(self.url, dict(self.storage_options), roots)
            self.made.begin(self.state)
        return self.made

    def note(self, uploaded: Mapping[str, str]) -> None:
        """Note the objects a worker put at their keys (key: SHA-256)."""
        self.uploaded.update(uploaded)

    def suspect(self, roots: Iterable[str]) -> None:
        """Note job directories a worker may have put objects in before it died."""
        self.suspects.update(roots)


@dataclass(frozen=True)
class _Bucket:
    """The bucket a build publishes to, as its target opened it."""

    url: str
    store: objects.Store
    state: objects.Store
    lock: objects.Lock
    # The manifest of the last publish, and whether a dead build's workers left objects.
    before: Manifest | None
    leftovers: bool
    started: float


class BucketPublishing:
    """One build's turn at a bucket: the local copy's publish, then the sync of what changed."""

    def __init__(
        self,
        local: LocalPublishing,
        bucket: _Bucket,
        uploads: BucketUploads,
        *,
        fresh: bool,
        clean: bool,
        mark: Path,
    ) -> None:
        self.local = local
        self.bucket = bucket
        self.uploads = uploads
        self.options = local.options
        # Whether the local copy is built afresh, and whether every object is to be uploaded.
        self.fresh = fresh
        self.clean = clean
        self.mark = mark

    def stage(self) -> Path:
        """Open a staging directory beside the local copy."""
        return self.local.stage()

    def make_dirs(self, parents: Iterable[str]) -> None:
        """Create directories in the staging dir that the map step's workers write into."""
        self.local.make_dirs(parents)

    def discard(self) -> None:
        """Remove the staging directory after a failed build."""
        self.local.discard()

    def replace(
        self, jobs: Iterable[Move], unpublished: list[str], commit: Callable[[], None]
    ) -> None:
        """Swap the new local copy in whole (the sync compares the whole site)."""
        self.local.replace(jobs, unpublished, commit)

    def update(
        self,
        jobs: Iterable[Move],
        listing: list[str],
        remove: list[str],
        commit: Callable[[], None],
    ) -> tuple[int, int]:
        """Update the local copy in place (the sync uploads what that changed)."""
        return self.local.update(jobs, listing, remove, commit)

    def finish(self, report: BuildReport) -> None:
        """Sync what the build changed to the bucket; attach what the sync did.

        When workers put each new job's objects at their keys as they mapped it, the sync
        uploads the rest (listings, site-wide files, jobs published before), and deletes what
        the workers put up that the site does not keep.
        """
        from sitegen.publish import bucket as objects

        self.local.finish(report)
        bucket, uploads = self.bucket, self.uploads
        suspects = set(objects.JOB_PREFIXES) if bucket.leftovers else set()
        unchanged = report.up_to_date and not self.fresh and not suspects
        if not unchanged:
            self.mark.unlink(missing_ok=True)  # the copy is ahead of the bucket until synced
        try:
            bucket.lock.refresh()
        except OSError as exc:
            why = f"cannot refresh the lock: {_reason(exc)} (the next build publishes this one)"
            raise PublishError(why, redact(bucket.url)) from exc
        if unchanged:
            if uploads.made is not None:  # no worker ran: none was put up
                objects.Uploader.end(bucket.state)
            self._published(report, objects.SyncReport())  # nothing changed: nothing to compare
            return
        try:
            # The local copy is the bucket's last publish: what the build changed is all
            # that can differ (a full build changed everything: compare the whole site).
            local = self.local.published
            changed = None if self.fresh or local is None else local.changed
            suspects |= uploads.suspects
            after, synced = objects.sync(
                self.options.output,
                bucket.store,
                bucket.state,
                None if self.clean else bucket.before,
                changed,
                uploads.uploaded,
                sorted(suspects),
            )
            if uploads.made is not None or bucket.leftovers:
                objects.Uploader.end(bucket.state)
        except OSError as exc:
            raise PublishError(
                f"publishing to object storage stopped: {_reason(exc)} (the next build "
                "finishes it)",
                redact(bucket.url),
            ) from exc
        self.mark.write_text(after.generation)
        self._published(report, synced)

    def _published(self, report: BuildReport, synced: SyncReport) -> None:
        """Attach where the site went and what the sync did to the build's report."""
        bucket = self.bucket
        report.seconds = time.perf_counter() - bucket.started  # the lock, the build, the sync
        local = self.local.published
        report.publish = BucketReport(
            changed=local.changed if local is not None else None,
            url=redact(bucket.url),
            uploaded=synced.uploaded,
            uploaded_bytes=synced.uploaded_bytes,
            deleted=synced.deleted,
            hashed_bytes=synced.hashed_bytes,
            by_workers=len(self.uploads.uploaded),
        )


@dataclass
class BucketReport(PublishReport):
    """What a publish to object storage did: where (credentials hidden), and its sync."""

    url: str = ""
    uploaded: int = 0
    uploaded_bytes: int = 0
    deleted: int = 0
    # The bytes of the local copy read to hash them for that sync.
    hashed_bytes: int = 0
    # The objects Dask workers put straight at their keys (new jobs only).
    by_workers: int = 0

    def where(self) -> str:
        """Return the bucket's URL, credentials hidden."""
        return self.url

    def counts(self) -> dict[str, int]:
        """Return what the sync did, by the JSON keys ``sitegen build --format json`` prints."""
        return {
            "objects_uploaded": self.uploaded,
            "objects_uploaded_bytes": self.uploaded_bytes,
            "objects_deleted": self.deleted,
            "objects_hashed_bytes": self.hashed_bytes,
            # Of a Dask build whose workers put new jobs in the bucket themselves.
            "objects_uploaded_by_workers": self.by_workers,
        }


def _reason(exc: OSError) -> str:
    """Say what went wrong with the store, never with a credential in it."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return redact(text) if "://" in text else text
