"""Pack a published site into one ``.tar.gz`` or ``.zip``: relative paths, deterministic bytes."""

from __future__ import annotations

import gzip
import os
import secrets
import shutil
import stat
import tarfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sitegen.errors import SitegenError, UsageError
from sitegen.eventlog.sources import LogSource
from sitegen.layout import BOOKKEEPING

# Archive file-name endings -> format.
FORMATS = {".tar.gz": "tar.gz", ".tgz": "tar.gz", ".zip": "zip"}
DIR_MODE = 0o755
FILE_MODE = 0o644
COMPRESS_LEVEL = 6
# Zip timestamps cannot say anything earlier.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class ArchiveResult:
    """What was written: where, in which format, how many entries and bytes."""

    path: Path
    format: str
    files: int
    bytes: int


@dataclass(frozen=True)
class _Entry:
    """One archive member: its relative POSIX name, its source, and whether it is a directory."""

    name: str
    source: Path
    is_dir: bool


def archive_format(archive: Path) -> str:
    """Return "tar.gz" or "zip" from the archive's name, refusing anything else."""
    for ending, fmt in FORMATS.items():
        if archive.name.endswith(ending) and len(archive.name) > len(ending):
            return fmt
    raise UsageError("archive name must end in .tar.gz, .tgz or .zip", archive)


def check_archive_path(archive: Path, output: Path, log_dirs: Iterable[LogSource]) -> None:
    """Refuse an archive path inside the output or a log dir, or one that is a directory."""
    archive_format(archive)
    target = archive.resolve()
    out = output.resolve()
    if target == out or target.is_relative_to(out):
        # Publishing replaces the output: an archive inside it would vanish or pack itself.
        raise UsageError("archive must not be inside the output dir", archive)
    for log_dir in log_dirs:
        if log_dir.holds(target):
            raise UsageError("archive must not be inside the event-log dir", archive)
    if archive.is_dir():
        raise UsageError("archive path is a directory", archive)


def write_archive(site: Path, archive: Path, mtime: int) -> ArchiveResult:
    """Pack ``site`` into ``archive`` through a temporary name and a rename."""
    fmt = archive_format(archive)
    # The state database is the build's, not the site's: it holds every log's path.
    entries = [e for e in _walk(site, "") if e.name not in BOOKKEEPING]
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        if fmt == "zip":
            _write_zip(tmp, entries, mtime)
        else:
            _write_tar_gz(tmp, entries, mtime)
        os.replace(tmp, archive)
    except OSError as exc:
        raise SitegenError(f"cannot write the archive: {exc.strerror or exc}", archive) from exc
    finally:
        tmp.unlink(missing_ok=True)
    files = sum(1 for e in entries if not e.is_dir)
    return ArchiveResult(archive, fmt, files, archive.stat().st_size)


def _walk(directory: Path, prefix: str) -> Iterator[_Entry]:
    """Yield every directory and file below ``directory``, parents first, names sorted."""
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        name = prefix + entry.name
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            yield _Entry(name, Path(entry.path), True)
            yield from _walk(Path(entry.path), name + "/")
        elif stat.S_ISREG(mode):
            yield _Entry(name, Path(entry.path), False)
        else:
            # The writer only makes files and directories; anything else is not ours to pack.
            raise SitegenError("refusing to archive something that is not a file", entry.path)


def _write_tar_gz(path: Path, entries: list[_Entry], mtime: int) -> None:
    """Write a gzip-compressed PAX tar whose bytes depend only on the entries and ``mtime``."""
    with (
        open(path, "wb") as raw,
        # filename="" keeps the temporary name out of the gzip header.
        gzip.GzipFile("", "wb", COMPRESS_LEVEL, raw, mtime=mtime) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if entry.is_dir:
                info.type = tarfile.DIRTYPE
                info.mode = DIR_MODE
                tar.addfile(info)
                continue
            info.mode = FILE_MODE
            with open(entry.source, "rb") as src:
                info.size = os.fstat(src.fileno()).st_size
                tar.addfile(info, src)


def _write_zip(path: Path, entries: list[_Entry], mtime: int) -> None:
    """Write a deflated zip whose bytes depend only on the entries and ``mtime``."""
    stamp = max(ZIP_EPOCH, time.gmtime(mtime)[:6])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as zf:
        for entry in entries:
            info = zipfile.ZipInfo(entry.name + "/" if entry.is_dir else entry.name, stamp)
            info.create_system = 3  # Unix, so unzip honours the permission bits below
            if entry.is_dir:
                info.external_attr = (stat.S_IFDIR | DIR_MODE) << 16 | 0x10
                zf.writestr(info, b"")
                continue
            info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(entry.source, "rb") as src:
                info.file_size = os.fstat(src.fileno()).st_size
                with zf.open(info, "w") as dst:
                    shutil.copyfileobj(src, dst)
