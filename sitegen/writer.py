"""The only code that writes the site: safe paths, temp-then-rename, atomic publish."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import shutil
from pathlib import Path, PurePosixPath

from sitegen.errors import UsageError, WriteError
from sitegen.layout import MANIFEST_NAME


class SiteWriter:
    """Write files below one root; refuse paths outside it and targets written twice."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real_root = os.path.realpath(root)
        self._written: set[PurePosixPath] = set()
        self._dirs: set[str] = set()
        self.bytes_written = 0

    @property
    def files_written(self) -> int:
        """Return how many files this writer wrote."""
        return len(self._written)

    def target(self, rel: PurePosixPath | str) -> Path:
        """Return the absolute path for ``rel``, refusing anything that escapes the root."""
        rel = PurePosixPath(rel)
        if rel.is_absolute() or not rel.parts:
            raise WriteError(f"refusing to write {str(rel)!r}: not a relative path", self.root)
        for part in rel.parts:
            if part in ("..", ".", "") or "\x00" in part or "\\" in part:
                raise WriteError(f"refusing to write {str(rel)!r}: unsafe path segment", self.root)
        return self.root.joinpath(*rel.parts)

    def _ensure_dir(self, directory: Path) -> None:
        """Create ``directory`` and check that it still resolves inside the root."""
        key = str(directory)
        if key in self._dirs:
            return
        directory.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(directory)
        if real != self._real_root and not real.startswith(self._real_root + os.sep):
            raise WriteError(f"refusing to write into {directory}: it leads outside the output")
        self._dirs.add(key)

    def claim(self, rel: PurePosixPath | str) -> Path:
        """Reserve ``rel`` as a target, failing if something already wrote it."""
        rel = PurePosixPath(rel)
        path = self.target(rel)
        if rel in self._written:
            raise WriteError(f"two outputs target the same file {str(rel)!r}", self.root)
        self._written.add(rel)
        self._ensure_dir(path.parent)
        return path

    def write(self, rel: PurePosixPath | str, data: bytes) -> None:
        """Write ``data`` to ``rel`` through a temporary name and a rename."""
        path = self.claim(rel)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        self.bytes_written += len(data)

    def link(self, rel: PurePosixPath | str, source: Path) -> None:
        """Publish an unchanged file from an earlier build (hard link, else copy)."""
        path = self.claim(rel)
        try:
            os.link(source, path)
        except OSError:
            tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
            shutil.copyfile(source, tmp)
            os.replace(tmp, path)

    def adopt(self, rel: PurePosixPath | str, source: Path) -> None:
        """Move a directory another writer filled (a worker's part) into place."""
        path = self.target(rel)
        if path.exists():
            raise WriteError(f"two outputs target the same path {str(rel)!r}", self.root)
        self._ensure_dir(path.parent)
        os.rename(source, path)


def _alive(pid: int) -> bool:
    """Tell whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically with renameat2(RENAME_EXCHANGE); False if unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(rc == 0)


class Publication:
    """Build into a staging directory beside the output, then swap it in atomically."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.prefix = f".{output.name}.staging-"
        self.staging = output.parent / f"{self.prefix}{os.getpid()}-{secrets.token_hex(4)}"

    def check(self) -> None:
        """Refuse outputs that are files, or directories that are not sitegen sites."""
        if self.output.exists() or self.output.is_symlink():
            if not self.output.is_dir():
                raise UsageError("output path exists and is not a directory", self.output)
            if any(self.output.iterdir()) and not (self.output / MANIFEST_NAME).is_file():
                raise UsageError(
                    "output dir is not empty and is not a sitegen site "
                    f"(no {MANIFEST_NAME}); refusing to replace it",
                    self.output,
                )

    def open(self) -> Path:
        """Create the staging directory and return it."""
        self.check()
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self.sweep()
        self.staging.mkdir()
        return self.staging

    def sweep(self) -> None:
        """Remove staging directories left by killed builds (their process is gone)."""
        for entry in self.output.parent.glob(self.prefix + "*"):
            pid = entry.name[len(self.prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)

    def discard(self) -> None:
        """Remove the staging directory after a failed build; the published site stays."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def publish(self) -> None:
        """Make the staging directory the output; a reader sees the old or the new site."""
        if not self.output.exists():
            os.rename(self.staging, self.output)
            return
        if _exchange(self.staging, self.output):
            shutil.rmtree(self.staging)
            return
        # No atomic exchange (not Linux): the output is missing for two renames.
        old = self.output.parent / f".{self.output.name}.old-{secrets.token_hex(4)}"
        os.rename(self.output, old)
        os.rename(self.staging, self.output)
        shutil.rmtree(old)
