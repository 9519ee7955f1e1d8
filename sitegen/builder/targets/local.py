"""Where the site goes: a publish target opens the staging area and puts the new site in place.

The build calls its target, never the other way round (``pipeline.build``): ``open`` takes
the lock and gives the build one ``Publishing``, its turn at the site. Through it the build
opens a staging directory, and, once it has made the site there, has the target replace the
published site with it (a full build) or update the published site in place (an incremental
one); ``finish`` then publishes further what the local publish changed (a bucket target
uploads it) and attaches the target's report. The local target owns the build lock, the
staging dir and the swap (``sitegen.publish.writer.Publication``); the bucket target
(``builder.targets.bucket``) wraps it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sitegen.builder.options import BuildOptions
from sitegen.builder.report import BuildReport, PublishReport
from sitegen.errors import PublishError
from sitegen.publish.buildlock import exclusive
from sitegen.publish.writer import Publication

if TYPE_CHECKING:
    from sitegen.builder.map.mapper import Uploads

# A job's move into the site: the directory the build wrote it in, and its site path.
Move = tuple[Path, str]


class Publishing(Protocol):
    """One build's turn at its target, from the lock to the site in place."""

    @property
    def options(self) -> BuildOptions:
        """Return what to build: a target may have what it cannot trust built afresh.

        (A bucket's local copy that is not the one the bucket was published from.)
        """

    @property
    def uploads(self) -> Uploads | None:
        """Return what the map step's workers may put straight where the site goes, if any."""

    def stage(self) -> Path:
        """Open a new staging directory and return it (the build writes the site there)."""

    def make_dirs(self, parents: Iterable[str]) -> None:
        """Create directories in the staging dir that the map step's workers write into."""

    def discard(self) -> None:
        """Remove the staging directory after a failed build; the published site stays."""

    def replace(
        self, jobs: Iterable[Move], unpublished: list[str], commit: Callable[[], None]
    ) -> None:
        """Full build: arrange the staged site, ``commit`` its state, swap it in whole."""

    def update(
        self,
        jobs: Iterable[Move],
        listing: list[str],
        remove: list[str],
        commit: Callable[[], None],
    ) -> tuple[int, int]:
        """Incremental build: update the published site in place, ``commit`` last.

        Returns how many listing files were replaced, and their bytes.
        """

    def finish(self, report: BuildReport) -> None:
        """Publish further what the build changed, if the target does; attach its report."""


class PublishTarget(Protocol):
    """Where the site goes: a local directory, or a bucket through a local copy."""

    def open(
        self, options: BuildOptions, on_wait: Callable[[], None] | None = None
    ) -> AbstractContextManager[Publishing]:
        """Take the target's lock (``on_wait``: called when another build holds it)."""


@contextlib.contextmanager
def stopped(output: Path) -> Iterator[None]:
    """Say what stopped a build (a full disk, permissions) and where, not with a traceback."""
    try:
        yield
    except OSError as exc:
        # The staging dir is gone by now; the published site is as it was, or (failing
        # half-way through an in-place update) consistent, and redone by the next build.
        where = exc.filename or output
        raise PublishError(f"the build stopped: {exc.strerror or exc}", where) from exc
    except sqlite3.Error as exc:
        # Writing the state failed the same ways (SQLITE_FULL is a full disk): say it alike.
        full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        reason = os.strerror(errno.ENOSPC) if full else str(exc)
        raise PublishError(f"the build stopped: {reason}", output) from exc


class LocalTarget:
    """A site in a local directory: staged beside it, then swapped in or updated in place."""

    @contextlib.contextmanager
    def open(
        self, options: BuildOptions, on_wait: Callable[[], None] | None = None
    ) -> Iterator[LocalPublishing]:
        """Take the build lock of ``options.output`` (builds into one output take turns)."""
        with contextlib.ExitStack() as held:
            with stopped(options.output):
                held.enter_context(exclusive(options.output, on_wait))
            yield LocalPublishing(options)


class LocalPublishing:
    """One build's turn at a local directory: its staging dir, and the swap or the update."""

    uploads: Uploads | None = None  # the workers write the staging dir, nothing else

    def __init__(self, options: BuildOptions) -> None:
        self.options = options
        self.publication: Publication | None = None
        # What the last publish changed: None after a whole-site swap (or before any publish).
        self.published: PublishReport | None = None

    def stage(self) -> Path:
        """Open a new staging directory beside the output (or inside it: a mount point)."""
        self.publication = Publication(self.options.output)
        return self.publication.open()

    def _open(self) -> Publication:
        """Return the staging area opened last."""
        assert self.publication is not None, "stage() first"
        return self.publication

    def make_dirs(self, parents: Iterable[str]) -> None:
        """Create directories in the staging dir that the map step's workers write into."""
        self._open().make_dirs(parents)

    def discard(self) -> None:
        """Remove the staging directory after a failed build; the published site stays."""
        self._open().discard()

    def replace(
        self, jobs: Iterable[Move], unpublished: list[str], commit: Callable[[], None]
    ) -> None:
        """Put the staged jobs in place, ``commit`` the state, swap the new site in whole."""
        publication = self._open()
        publication.arrange(jobs, unpublished)
        commit()
        publication.publish()
        self.published = PublishReport(changed=None)

    def update(
        self,
        jobs: Iterable[Move],
        listing: list[str],
        remove: list[str],
        commit: Callable[[], None],
    ) -> tuple[int, int]:
        """Update the published site in place, job directory by job directory, ``commit`` last."""
        updated = self._open().update(jobs, listing, remove, finish=commit)
        self.published = PublishReport(changed=updated.changed)
        return updated.replaced, updated.replaced_bytes

    def finish(self, report: BuildReport) -> None:
        """Attach what the publish changed (nothing is attached to a build with nothing to do)."""
        report.publish = self.published
