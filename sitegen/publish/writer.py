"""The only code that writes the site: safe paths, temp-then-rename, atomic publish."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

from sitegen.errors import UsageError, WriteError
from sitegen.layout import LEGACY_MANIFEST_NAME, PARTS_DIR, STATE_NAME
from sitegen.publish.mounts import is_mount_point
from sitegen.publish.removal import remove_tree


class SiteWriter:
    """Write files below one root; refuse paths outside it and targets written twice.

    ``fresh`` says the root is a directory this build created and nothing else
    writes into: no symlink can lead out of it, so parents are made directly
    without resolving each one (metadata calls dominate a build's cost).
    """

    def __init__(self, root: Path, fresh: bool = False, existing: Iterable[str] = ()) -> None:
        self.root = root
        self.fresh = fresh
        self._root_text = str(root)
        # Relative paths as "a/b/c" text: a job writes a dozen files, and building a
        # PurePosixPath for each check cost more than the checks.
        self._written: set[str] = set()
        # Directories known to exist (``existing``: made by the caller, with their parents).
        self._dirs: set[str] = {""}
        for directory in existing:
            parts = directory.split("/")
            self._dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        self.bytes_written = 0
        if fresh:
            root.mkdir(parents=True, exist_ok=True)

    @functools.cached_property
    def _real_root(self) -> str:
        """Return the root's real path (only a writer into an existing tree checks against it)."""
        return os.path.realpath(self.root)

    @property
    def files_written(self) -> int:
        """Return how many files this writer wrote."""
        return len(self._written)

    @property
    def written(self) -> frozenset[PurePosixPath]:
        """Return the relative paths this writer wrote."""
        return frozenset(map(PurePosixPath, self._written))

    def written_names(self) -> list[str]:
        """Return the relative paths this writer wrote, as sorted ``a/b/c`` text."""
        return sorted(self._written)

    def _relative(self, rel: PurePosixPath | str) -> str:
        """Return ``rel`` as normalised ``a/b/c`` text, refusing anything that escapes the root."""
        text = rel if isinstance(rel, str) else str(rel)
        for part in text.split("/"):
            if part in ("..", ".", "") or "\x00" in part or "\\" in part:
                break
        else:
            return text
        # Something to normalise or refuse: PurePosixPath decides, as it always did.
        path = PurePosixPath(rel)
        if path.is_absolute() or not path.parts:
            raise WriteError(f"refusing to write {str(path)!r}: not a relative path", self.root)
        for part in path.parts:
            if part in ("..", ".", "") or "\x00" in part or "\\" in part:
                raise WriteError(f"refusing to write {str(path)!r}: unsafe path segment", self.root)
        return str(path)

    def target(self, rel: PurePosixPath | str) -> Path:
        """Return the absolute path for ``rel``, refusing anything that escapes the root."""
        return Path(f"{self._root_text}/{self._relative(rel)}")

    def ensure_parent(self, rel: PurePosixPath | str) -> None:
        """Create the directories above ``rel`` that do not exist yet."""
        self._ensure_parent(self._relative(rel))

    def _ensure_parent(self, rel: str) -> None:
        """Create the directories above the normalised ``rel`` that do not exist yet."""
        parent = rel.rpartition("/")[0]
        if parent in self._dirs:
            return
        if not self.fresh:
            directory = Path(f"{self._root_text}/{parent}")
            directory.mkdir(parents=True, exist_ok=True)
            real = os.path.realpath(directory)
            if not real.startswith(self._real_root + os.sep):
                raise WriteError(f"refusing to write into {directory}: it leads outside the output")
            self._dirs.add(parent)
            return
        missing = []
        while parent not in self._dirs:
            missing.append(parent)
            parent = parent.rpartition("/")[0]
        for rel_dir in reversed(missing):
            # Exists already when a directory was moved in whole (adopt).
            with contextlib.suppress(FileExistsError):
                os.mkdir(f"{self._root_text}/{rel_dir}")
            self._dirs.add(rel_dir)

    def _claim(self, rel: PurePosixPath | str) -> str:
        """Reserve ``rel`` as a target and return its absolute path as text."""
        key = self._relative(rel)
        if key in self._written:
            raise WriteError(f"two outputs target the same file {key!r}", self.root)
        self._written.add(key)
        self._ensure_parent(key)
        return f"{self._root_text}/{key}"

    def write(self, rel: PurePosixPath | str, data: bytes) -> None:
        """Write ``data`` to ``rel`` through a temporary name and a rename."""
        self.write_chunks(rel, (data,))

    def write_chunks(self, rel: PurePosixPath | str, chunks: Iterable[bytes]) -> int:
        """Write a stream of chunks to ``rel`` (temporary name, then rename); return its size."""
        path = self._claim(rel)
        fd = self._create(path)
        if fd is None:
            head, _, name = path.rpartition("/")
            tmp = f"{head}/.{name}.tmp{os.getpid()}"
            with open(tmp, "wb") as out:
                size = _write_all(out, chunks)
            os.replace(tmp, path)
        else:
            size = _write_fd(fd, chunks)
        self.bytes_written += size
        return size

    def _create(self, path: str) -> int | None:
        """Return a new file at ``path`` to write in place, or None to write through a rename.

        A fresh root is itself the temporary name: nobody reads it before the whole of it is
        published (renamed into place or moved in a directory at a time), so its files need
        no rename of their own, a metadata update per file fewer. A file already there (a
        page written again) is still replaced by a rename: it may be another name's link.
        """
        if not self.fresh:
            return None
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            return None

    def write_copy(
        self, rel: PurePosixPath | str, source: PurePosixPath | str, data: bytes
    ) -> None:
        """Write ``data``, the very bytes this writer wrote to ``source``, to ``rel`` too.

        Under a fresh root the copy is a hard link (no second file to create and fill);
        where links are refused (some network file systems), and elsewhere, a file.
        """
        source_key = self._relative(source)
        if self.fresh and source_key in self._written:
            path = self._claim(rel)
            try:
                os.link(f"{self._root_text}/{source_key}", path)
            except OSError:
                self._written.discard(self._relative(rel))  # claimed again by write()
            else:
                self.bytes_written += len(data)
                return
        self.write(rel, data)

    def adopt(self, rel: PurePosixPath | str, source: Path) -> None:
        """Move a directory another writer filled (a worker's part) into place."""
        key = self._relative(rel)
        path = Path(f"{self._root_text}/{key}")
        if path.exists():
            raise WriteError(f"two outputs target the same path {key!r}", self.root)
        self._ensure_parent(key)
        os.rename(source, path)


def _write_fd(fd: int, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to a new file's descriptor, close it; return how many bytes."""
    if isinstance(chunks, tuple) and len(chunks) == 1:
        # One buffer (a page): written as it is, without a file object's stat, ioctl and
        # seek (three system calls a file, a dozen files a job).
        view = memoryview(chunks[0])
        try:
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return len(chunks[0])
    with open(fd, "wb") as out:
        return _write_all(out, chunks)


def _write_all(out: BinaryIO, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to ``out`` and return how many bytes they were."""
    size = 0
    for chunk in chunks:
        out.write(chunk)
        size += len(chunk)
    return size


def _same_bytes(new: Path, old: Path) -> bool:
    """Tell whether the published file ``old`` already holds exactly ``new``'s bytes."""
    try:
        if old.is_symlink() or new.stat().st_size != old.stat().st_size:
            return False
        return new.read_bytes() == old.read_bytes()
    except OSError:  # not there (or not readable): replace it
        return False


def _prune_empty(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and its parents while they are empty, up to ``stop``."""
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _alive(pid: int) -> bool:
    """Tell whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """Return libc's renameat2, looked up once per process; None where libc has none."""
    import ctypes  # here: only publishing needs it, and a no-op build never publishes
    import ctypes.util

    # find_library runs ldconfig (about 4 ms): once per process, not once per changed job.
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    renameat2: Callable[..., int] | None = getattr(
        ctypes.CDLL(libc_name, use_errno=True), "renameat2", None
    )
    return renameat2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically with renameat2(RENAME_EXCHANGE); False if unsupported."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(rc == 0)


def published_dir(output: Path) -> Path:
    """Return the directory a build replaces: the output, or the one it links to."""
    # Swapping a symlink (``/var/www/history -> /srv/history``) for the new site would turn
    # the link into a directory and leave the old site behind where it pointed.
    if output.is_symlink():
        return output.resolve()
    if output.name in ("", ".."):  # "." or "..": staging goes beside the directory they name
        return Path(os.path.abspath(output))
    return output


# The first line of the .htaccess every build writes: it tells a sitegen site whose state
# database was lost (which costs a full build) from a directory sitegen did not make.
SITE_MARK = b"# Written by sitegen"


def _is_site(directory: Path) -> bool:
    """Tell whether ``directory`` holds a site sitegen built."""
    if (directory / STATE_NAME).is_file() or (directory / LEGACY_MANIFEST_NAME).is_file():
        return True
    try:
        with open(directory / ".htaccess", "rb") as f:
            return f.read(len(SITE_MARK)) == SITE_MARK
    except OSError:
        return False


def _holds_cwd(directory: Path) -> bool:
    """Tell whether this process works inside ``directory`` (``--output .``, say)."""
    try:
        return Path.cwd().resolve().is_relative_to(directory.resolve())
    except OSError:
        return False


class Updated(NamedTuple):
    """What an in-place update did (``Publication.update``)."""

    # The listing files replaced (those whose bytes changed), and their bytes.
    replaced: int
    replaced_bytes: int
    # The site paths it changed: job directories, listing files, removed paths.
    changed: list[str]


class Publication:
    """Build into a staging directory beside the output, then swap it in atomically.

    An output that is a mount point (a volume) cannot be renamed, and nothing can be
    renamed into it from beside it: there, the staging directory goes inside the output
    and the new site is swapped in one top-level entry at a time. So it is for the
    directory the build runs in, which swapping would leave the shell outside of.
    """

    def __init__(self, output: Path) -> None:
        self.output = published_dir(output)
        self.inside = is_mount_point(self.output) or _holds_cwd(self.output)
        if self.inside:
            self.prefix = ".sitegen-staging-"
            home = self.output
        else:
            self.prefix = f".{self.output.name}.staging-"
            home = self.output.parent
        self.staging = home / f"{self.prefix}{os.getpid()}-{secrets.token_hex(4)}"

    def check(self) -> None:
        """Refuse outputs that are files, or directories that are not sitegen sites."""
        if self.output.exists() or self.output.is_symlink():
            if not self.output.is_dir():
                raise UsageError("output path exists and is not a directory", self.output)
            entries = (e for e in self.output.iterdir() if not e.name.startswith(self.prefix))
            if any(entries) and not _is_site(self.output):
                raise UsageError(
                    "output dir is not empty and is not a sitegen site "
                    f"(no {STATE_NAME}); refusing to replace it",
                    self.output,
                )

    def open(self) -> Path:
        """Create the staging directory and return it."""
        self.check()
        self.staging.parent.mkdir(parents=True, exist_ok=True)
        self.sweep()
        self.staging.mkdir()
        return self.staging

    def sweep(self) -> None:
        """Remove staging directories left by killed builds (their process is gone)."""
        for entry in self.staging.parent.glob(self.prefix + "*"):
            pid = entry.name[len(self.prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)

    def make_dirs(self, parents: Iterable[str]) -> None:
        """Create directories in the staging dir that the map step's workers write into."""
        for parent in parents:
            os.makedirs(self.staging / parent, exist_ok=True)

    def arrange(self, moves: Iterable[tuple[Path, str]], unpublished: list[str]) -> None:
        """Full build: put each job in place and leave out the unpublished ones.

        ``moves``: the jobs a worker wrote into a part directory (a second log with the same
        id), which move into place; jobs written in place that are not published after all
        move out; then the part directories go. Failing to remove them fails the build:
        published, they would be served.
        """
        writer = SiteWriter(self.staging, fresh=True)
        trash = self.staging / PARTS_DIR / "unpublished"
        trash.mkdir(parents=True, exist_ok=True)
        for n, root in enumerate(unpublished):
            os.rename(self.staging / root, trash / str(n))
        for source, root in moves:
            writer.adopt(root, source)
        shutil.rmtree(self.staging / PARTS_DIR)

    def discard(self) -> None:
        """Remove the staging directory after a failed build; the published site stays."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def update(
        self,
        jobs: Iterable[tuple[Path, str]],
        listing: list[str],
        remove: list[str],
        finish: Callable[[], None],
    ) -> Updated:
        """Update the published site in place from the staging directory.

        Each step is atomic and the order keeps the site consistent: job directories
        appear (or are exchanged) before any listing names them, listings are replaced
        file by file, and removed jobs go only once nothing lists them. ``finish`` (the
        state's commit) runs last, so a killed update is redone by the next build.
        A listing file whose bytes did not change is left as it is (its time too, for
        caches); returns how many listing files were replaced, their bytes, and every site
        path the update changed.
        """
        out = SiteWriter(self.output)
        trash = self.staging / ".trash"
        trash.mkdir()
        changed: list[str] = []
        for n, (source, rel) in enumerate(jobs):
            changed.append(rel)
            target = out.target(rel)
            out.ensure_parent(rel)
            if not target.exists():
                os.rename(source, target)
            elif not _exchange(source, target):
                os.rename(target, trash / f"job{n}")
                os.rename(source, target)
        replaced = replaced_bytes = 0
        for rel in listing:
            source, target = self.staging / rel, out.target(rel)
            if _same_bytes(source, target):
                continue
            out.ensure_parent(rel)
            changed.append(rel)
            replaced += 1
            replaced_bytes += source.stat().st_size
            os.replace(source, target)
        for n, rel in enumerate(remove):
            changed.append(rel)
            target = out.target(rel)
            if target.exists() or target.is_symlink():
                os.rename(target, trash / f"gone{n}")
                _prune_empty(target.parent, self.output)
        finish()
        shutil.rmtree(self.staging)
        return Updated(replaced, replaced_bytes, changed)

    def publish(self) -> None:
        """Make the staging directory the output; a reader sees the old or the new site."""
        if self.inside:
            self._publish_inside()
            return
        if not self.output.exists():
            os.rename(self.staging, self.output)
            return
        if _exchange(self.staging, self.output):
            remove_tree(self.staging)  # the site it replaced
            return
        # No atomic exchange (not Linux): the output is missing for two renames.
        old = self.output.parent / f".{self.output.name}.old-{secrets.token_hex(4)}"
        os.rename(self.output, old)
        os.rename(self.staging, self.output)
        remove_tree(old)

    def _publish_inside(self) -> None:
        """Swap the staged site into a mount point entry by entry, the manifest last."""
        staged = {entry.name for entry in self.staging.iterdir()}
        trash = self.staging / f"{self.prefix}trash"
        trash.mkdir()
        # Job data first, then the pages that list it, then what only the old site had; the
        # manifest goes last, so that a build killed half-way is redone by the next one.
        for name in sorted(staged - {STATE_NAME}, key=lambda n: (n not in ("api", "jobs"), n)):
            source, target = self.staging / name, self.output / name
            if not (target.exists() or target.is_symlink()):
                os.rename(source, target)
            elif not _exchange(source, target):  # else the old entry is now in the staging dir
                os.rename(target, trash / name)
                os.rename(source, target)
        for entry in self.output.iterdir():
            if entry.name not in staged and not entry.name.startswith(self.prefix):
                os.rename(entry, trash / entry.name)
        os.replace(self.staging / STATE_NAME, self.output / STATE_NAME)
        shutil.rmtree(self.staging)
