"""Event logs in object storage (``s3://``, ``gs://``, ``az://``, any fsspec URL).

A prefix is listed as a directory is: each object's size, and as its "modification time"
the object's last-modified second with a hash of its ETag in the nanoseconds (stores keep
whole seconds), so that a log's identity changes when its key, size or ETag does, and an
abandoned ``.running`` log is still told by its age. Logs are streamed (a small one is one
GET). ``fsspec`` and the protocol's package (``s3fs``, ``gcsfs``, ``adlfs``) are imported
only when a URL is given. Credentials come from the protocol's standard chain (environment,
profile, instance role); a ``user:secret@`` in a URL is taken out of it and never shown.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sitegen.errors import UsageError
from sitegen.eventlog.sources import SourceReadError
from sitegen.text.storage_url import as_prefix, redact, split_credentials

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from sitegen.eventlog.sources import LogSink

# The package each protocol needs, as named in the docs (``pip install 'sitegen[s3]'``).
PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
}
# Read ahead this much of a log streamed from a store (one ranged GET each).
STREAM_BLOCK = 8 << 20
# What botocore is told for every S3 request (s3fs hands ``config_kwargs`` to its Config):
# retry a throttled (503 SlowDown), failed (500) or cut-off request, or one that timed out,
# up to 5 attempts in all with exponential backoff and jitter ("standard" mode: at most 20 s
# a wait); give up a connection not made within 5 s and an answer silent for 15 s (a stalled
# response), which then counts as one failed attempt. A user's own ``config_kwargs`` (in
# ``[storage_options]``) win key by key. s3fs retries a read cut off mid-body itself (5 tries).
S3_CONFIG: dict[str, Any] = {
    "retries": {"mode": "standard", "max_attempts": 5},
    "connect_timeout": 5,
    "read_timeout": 15,
}


def filesystem(url: str, options: Mapping[str, Any]) -> tuple[AbstractFileSystem, str]:
    """Return the fsspec file system of ``url`` and the path in it, or say what is missing."""
    bare, user, secret = split_credentials(url)
    given = dict(options)
    if user is not None:
        protocol = bare.partition("://")[0]
        if protocol in ("s3", "s3a"):
            given.setdefault("key", user)
            if secret is not None:
                given.setdefault("secret", secret)
        else:
            given.setdefault("username", user)
            if secret is not None:
                given.setdefault("password", secret)
    if bare.partition("://")[0] in ("s3", "s3a"):
        given["config_kwargs"] = {**S3_CONFIG, **dict(given.get("config_kwargs") or {})}
    try:
        import fsspec.core
    except ImportError:
        raise UsageError(
            "object storage needs fsspec: pip install 'sitegen[s3]' (or [gcs], [azure])",
            redact(url),
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(bare, **given)
    except ImportError as exc:
        package = PACKAGES.get(bare.partition("://")[0], "the protocol's fsspec package")
        raise UsageError(f"{redact(url)} needs {package} installed ({exc})") from None
    except ValueError as exc:
        raise UsageError(f"not a storage URL: {exc}", redact(url)) from None
    return fs, path.rstrip("/")


# The packages whose errors a store's client raises besides OSError (a read timeout, a
# connection closed mid-answer, once the retries are spent).
CLIENT_PACKAGES = ("botocore", "aiobotocore", "aiohttp", "google", "azure")


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """Turn a store client's own errors (botocore's are no OSErrors) into an OSError."""
    try:
        yield
    except OSError:
        raise
    except Exception as exc:
        if type(exc).__module__.partition(".")[0] not in CLIENT_PACKAGES:
            raise
        why = str(exc) or type(exc).__name__
        raise OSError(f"{type(exc).__name__}: {redact(why) if '://' in why else why}") from exc


def object_time(entry: Mapping[str, Any]) -> int:
    """Return an object's identity time: its last-modified second, its ETag in the ns."""
    stamp = None
    for name in ("LastModified", "last_modified", "updated", "mtime", "created"):
        value = entry.get(name)
        if value is not None:
            stamp = value
            break
    if isinstance(stamp, datetime):
        seconds = int(stamp.timestamp())
    elif isinstance(stamp, int | float):
        seconds = int(stamp)
    elif isinstance(stamp, str):
        seconds = int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
    else:
        seconds = 0
    tag = ""
    for name in ("ETag", "etag", "md5Hash", "content_md5"):
        if entry.get(name):
            tag = str(entry[name])
            break
    folded = int.from_bytes(hashlib.sha256(tag.encode()).digest()[:8], "big") % 1_000_000_000
    return seconds * 1_000_000_000 + folded


class RemoteDir:
    """A prefix of event-log objects, read as an event-log directory is (``LogSource``)."""

    # Its listing carries each object's size and ETag: comparing them all costs no request
    # more than the names, and sees a log rewritten in place.
    trust_names = False
    local: Path | None = None  # no directory on this machine: no notes, no links, no inotify

    def __init__(self, url: str, options: Mapping[str, Any] | None = None) -> None:
        self.url = as_prefix(url)
        self.options = dict(options or {})
        # Each listed log's (size, identity time), as the last ``list`` saw them.
        self.entries: dict[str, tuple[int, int]] = {}

    def __repr__(self) -> str:
        # In reports and the options' fingerprint: never a credential, never an option's value.
        return f"RemoteDir({redact(self.url)!r})"

    def __str__(self) -> str:
        return redact(self.url)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RemoteDir):
            return NotImplemented
        return self.url == other.url and self.options == other.options

    def __hash__(self) -> int:
        return hash(self.url)

    def __getstate__(self) -> dict[str, Any]:
        # Sent to workers without the listing (a 100,000-entry dict per task).
        return {"url": self.url, "options": self.options, "entries": {}}

    @property
    def name(self) -> str:
        """Return the prefix's last segment (``logs`` of ``s3://b/logs/``)."""
        return self.url.rstrip("/").rpartition("/")[2]

    def event_dirs(self) -> list[Path]:
        """Return none: a store raises no file events, a watcher lists it every --poll seconds."""
        return []

    def log_named(self, path: str) -> str | None:
        """Return None: a watcher's polls name objects, but the build compares every listing."""
        return None

    def holds(self, path: Path) -> bool:
        """Return False: no path on this machine is in a prefix of object storage."""
        return False

    def within(self, path: Path) -> bool:
        """Return False: a prefix of object storage is inside no path on this machine."""
        return False

    def resolve(self) -> RemoteDir:
        """Return itself: a URL has no links to resolve."""
        return self

    def verified(self) -> RemoteDir:
        """Return itself: a listing's sizes and ETags are compared on every build already."""
        return self

    def with_options(self, storage_options: dict[str, Any] | None) -> RemoteDir:
        """Return this prefix with ``storage_options`` if it was given none."""
        if storage_options and not self.options:
            return RemoteDir(self.url, storage_options)
        return self

    def place(self) -> str:
        """Return the prefix's URL: two URLs of one prefix are one place."""
        return self.url

    def check(self) -> None:
        """Do nothing: listing it says what is wrong (a prefix holds no "directory" to check)."""

    def stamp(self) -> None:
        """Return None: an object store's listing is its only stamp."""
        return None

    def listing_id(self) -> bytes:
        """Return the URL and each object's size and identity time, as last listed."""
        # The names alone tell nothing of an object rewritten in place: its ETag does.
        return self.url.encode() + b"\0\0" + repr(sorted(self.entries.items())).encode()

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """List the prefix afresh (not this listing, the build's): each object's numbers."""
        probe = RemoteDir(self.url, self.options)
        probe.list()
        return probe.entries

    def add_listed(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> None:
        """Add each listed object of ``names`` to ``found`` (no request: listed already)."""
        self.add_named(found, names, label, roots, follow_links)

    def add_named(
        self,
        found: LogSink,
        names: Sequence[str],
        label: str,
        roots: Sequence[str],
        follow_links: bool,
    ) -> bool:
        """Add each named object to ``found``; False when one is gone."""
        for name in names:
            numbers = self.stat(name)
            if numbers is None:
                return False
            found.add_plain(name, f"{label}{name}" if label else name, *numbers)
        return True

    def __truediv__(self, name: str) -> RemotePath:
        return RemotePath(self, name)

    def fs(self) -> tuple[AbstractFileSystem, str]:
        """Return the file system and this prefix's path in it."""
        return filesystem(self.url, self.options)

    def list(self) -> list[str]:
        """List the prefix's object names (and note their sizes and identity times)."""
        fs, root = self.fs()
        try:
            with store_errors():
                fs.invalidate_cache(root)  # a watcher lists again: see what changed since
                found = fs.ls(root, detail=True)
        except FileNotFoundError:
            bucket = root.partition("/")[0]
            if not fs.exists(bucket):
                raise UsageError("event-log bucket does not exist", str(self)) from None
            found = []  # a prefix with no object yet: an empty directory
        except PermissionError as exc:
            raise UsageError(f"event-log prefix cannot be listed: {exc}", str(self)) from None
        except OSError as exc:
            raise UsageError(f"cannot list event-log prefix: {exc}", str(self)) from None
        entries = {}
        for entry in found:
            if entry.get("type") != "file":
                continue  # a "directory": a common prefix below this one
            name = str(entry["name"]).rstrip("/").rpartition("/")[2]
            entries[name] = (int(entry.get("size") or 0), object_time(entry))
        self.entries = entries
        return list(entries)

    def stat(self, name: str) -> tuple[int, int] | None:
        """Return a listed log's (size, identity time), asking the store if not listed."""
        known = self.entries.get(name)
        if known is not None:
            return known
        fs, root = self.fs()
        try:
            with store_errors():
                info = fs.info(f"{root}/{name}")
        except OSError:
            return None
        return int(info.get("size") or 0), object_time(info)


class RemotePath:
    """One object of a ``RemoteDir``, as much of a ``Path`` as reading a log needs."""

    def __init__(self, directory: RemoteDir, name: str) -> None:
        self.directory = directory
        self.name = name

    def __str__(self) -> str:
        return f"{self.directory}{self.name}"

    def __repr__(self) -> str:
        return f"RemotePath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RemotePath):
            return NotImplemented
        return (self.directory, self.name) == (other.directory, other.name)

    def __hash__(self) -> int:
        return hash((self.directory.url, self.name))

    @property
    def suffix(self) -> str:
        """Return the name's last suffix (``.gz``), as ``Path.suffix``."""
        stem, dot, ext = self.name.rpartition(".")
        return f".{ext}" if dot and stem else ""

    def size(self) -> int:
        """Return the object's size in bytes (from the listing when it has it)."""
        found = self.directory.stat(self.name)
        if found is None:
            raise FileNotFoundError(2, "no such object", str(self))
        return found[0]

    def open(self) -> IO[bytes]:
        """Open the object for streaming (ranged reads, read ahead)."""
        fs, root = self.directory.fs()
        try:
            opened = fs.open(
                f"{root}/{self.name}", "rb", block_size=STREAM_BLOCK, cache_type="readahead"
            )
        except Exception as exc:
            raise fetch_failed(self, exc) from exc
        # fsspec's file reads ahead already: the buffer is only what IO[bytes] asks for.
        return io.BufferedReader(_Fetched(self, opened))

    def read_bytes(self) -> bytes:
        """Return the whole object (one GET)."""
        fs, root = self.directory.fs()
        try:
            return bytes(fs.cat_file(f"{root}/{self.name}"))
        except Exception as exc:
            raise fetch_failed(self, exc) from exc


def fetch_failed(path: RemotePath, exc: Exception) -> SourceReadError:
    """Return the error of an object whose fetch failed once the retries were spent."""
    if isinstance(exc, SourceReadError):
        return exc
    # botocore's errors (a read timeout, a closed connection) are not OSErrors: name the type.
    why = (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__
    return SourceReadError(f"could not fetch {path}: {redact(why) if '://' in why else why}")


class _Fetched(io.RawIOBase):
    """An object's stream whose every failed read is a ``SourceReadError``."""

    def __init__(self, path: RemotePath, stream: IO[bytes]) -> None:
        self.path = path
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.stream.read(len(buffer))
        except Exception as exc:
            raise fetch_failed(self.path, exc) from exc
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.stream.close()
        super().close()
