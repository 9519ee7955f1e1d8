"""Publish a built site to object storage: each changed object, in an order readers survive.

S3 and its kin have no atomic write across objects. The rule instead: at every moment of a
publish, every link and every ``/api/jobs`` entry a reader can reach resolves. Objects go up
in tiers: the static assets pages link to, then each job's objects, then the site-wide
files (listings, ``/api/jobs``, ``/api/state``...) that name the jobs, and only then are the
objects of dropped jobs deleted. An object whose content hash the state's manifest already
holds is not uploaded again. The manifest (``objects.json`` under the state URL) names every
object a publish may have written: it is rewritten before the uploads with the keys to come
(their hashes unknown), so that a publish killed half-way is finished, or its leftovers
deleted, by the next one. One writer per prefix: a lock object created with a conditional
put (``If-None-Match: *``) where the store has one (S3), with an owner and an expiry.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitegen.errors import PublishError, UsageError
from sitegen.eventlog.storage import filesystem, store_errors
from sitegen.layout import API_JOBS_DIR, content_type, object_key
from sitegen.publish.hosting import HIDDEN, cache_control
from sitegen.text.storage_url import as_prefix, redact

MANIFEST = "objects.json"
LOCK = "lock"
# Under the state URL while workers may upload jobs straight to their keys (``Uploader``):
# a publish that finds it left by a build that died deletes the job objects no manifest names.
DIRECT = "direct-uploads"
# A lock not refreshed for this long belongs to a build that died: it is taken over.
LOCK_EXPIRY = 3600.0
LOCK_POLL = 2.0
# Uploads in flight at once (each a PUT of one small object).
UPLOADS = 16
# Objects read into memory and uploaded at a time.
BATCH = 256
# Where job objects live (``api/job/<id>…``, ``jobs/<id>/…``): a job's tier.
JOB_PREFIXES = (f"{API_JOBS_DIR}/", "jobs/")


def default_state_url(site_url: str) -> str:
    """Return the state's default place: beside the site's prefix, ``<prefix>.sitegen-state/``.

    A site at a bucket's root keeps it in ``.sitegen-state/`` inside the bucket: the docs'
    bucket policy keeps that prefix private.
    """
    scheme, _, rest = as_prefix(site_url).partition("://")
    bucket, _, prefix = rest.partition("/")
    if not prefix.strip("/"):
        return f"{scheme}://{bucket}/.sitegen-state/"
    return f"{scheme}://{bucket}/{prefix.rstrip('/')}.sitegen-state/"


class Store:
    """A prefix in object storage, keys below it read and written by name."""

    def __init__(self, url: str, options: Mapping[str, Any]) -> None:
        self.url = as_prefix(url)
        self.fs, self.root = filesystem(self.url, options)

    def __str__(self) -> str:
        return redact(self.url)

    def path(self, key: str) -> str:
        """Return the store path of ``key``."""
        return f"{self.root}/{key}"

    def get(self, key: str) -> bytes | None:
        """Return an object's bytes, or None when there is none."""
        try:
            with store_errors():
                return bytes(self.fs.cat_file(self.path(key)))
        except FileNotFoundError:
            return None

    def put(self, key: str, data: bytes, **headers: Any) -> None:
        """Write one object (``ContentType``, ``CacheControl`` where the store takes them)."""
        with named(key), store_errors():
            self.fs.pipe_file(self.path(key), data, **headers)

    def headers(self, content_type: str, cache_control: str) -> dict[str, Any]:
        """Return the write arguments that set an object's Content-Type and Cache-Control."""
        protocol = self.url.partition("://")[0]
        if protocol in ("gs", "gcs"):  # gcsfs
            return {
                "content_type": content_type,
                "fixed_key_metadata": {"cache_control": cache_control},
            }
        if protocol in ("az", "abfs", "abfss"):  # adlfs hands these to upload_blob
            from azure.storage.blob import ContentSettings

            settings = ContentSettings(content_type=content_type, cache_control=cache_control)
            return {"content_settings": settings}
        return {"ContentType": content_type, "CacheControl": cache_control}  # s3fs (boto)

    def put_files(self, objects: Iterable[tuple[str, Path]]) -> dict[str, bytes]:
        """Upload files as objects with the headers a static host sends; return their bytes."""
        sent: dict[str, bytes] = {}
        items = []
        for key, path in objects:
            data = sent[key] = path.read_bytes()
            items.append((key, data, self.headers(content_type(key), cache_control(f"/{key}"))))
        self.put_many(items)
        return sent

    def put_many(self, items: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        """Write objects ``(key, bytes, headers)``, ``UPLOADS`` of them in flight at once."""
        if getattr(self.fs, "async_impl", False):  # s3fs, gcsfs, adlfs: on their event loop
            import asyncio

            from fsspec.asyn import sync as run_on_loop

            async def all_of_them() -> None:
                slots = asyncio.Semaphore(UPLOADS)

                async def one(key: str, data: bytes, headers: dict[str, Any]) -> None:
                    async with slots:
                        with named(key), store_errors():
                            await self.fs._pipe_file(self.path(key), data, **headers)

                await asyncio.gather(*(one(*item) for item in items))

            with store_errors():
                run_on_loop(self.fs.loop, all_of_them)
            return
        with ThreadPoolExecutor(UPLOADS) as threads:
            list(threads.map(lambda item: self.put(item[0], item[1], **item[2]), items))

    def create(self, key: str, data: bytes) -> bool:
        """Write an object only if there is none (a conditional put); False if there is."""
        try:
            with store_errors():
                self.fs.pipe_file(self.path(key), data, mode="create")
        except FileExistsError:
            return False
        except TypeError:  # a store without conditional puts: check, then write
            with store_errors():
                if self.fs.exists(self.path(key)):
                    return False
                self.fs.pipe_file(self.path(key), data)
        return True

    def delete(self, keys: list[str]) -> None:
        """Delete objects (in batches where the store has a bulk delete)."""
        if keys:
            with store_errors():
                self.fs.rm([self.path(k) for k in keys])

    def keys_below(self, prefix: str) -> list[str]:
        """Return every key that starts with ``prefix`` (a LIST of that prefix)."""
        try:
            with store_errors():
                found = self.fs.find(f"{self.root}/{prefix}", maxdepth=None, withdirs=False)
        except FileNotFoundError:
            return []
        return [str(path)[len(self.root) + 1 :] for path in found]

    def any_key(self, ignore: str = "") -> str | None:
        """Return some key below the prefix (not starting with ``ignore``), or None."""
        try:
            with store_errors():
                found = self.fs.find(self.root, maxdepth=None, withdirs=False)
        except FileNotFoundError:
            return None
        for path in found:
            key = str(path)[len(self.root) + 1 :]
            if key and not (ignore and key.startswith(ignore)):
                return key
        return None


@contextlib.contextmanager
def named(key: str) -> Iterator[None]:
    """Name the object a failed write was of: the build's error says which one failed."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, FileExistsError):
            raise  # a conditional put's answer, not a failure
        raise OSError(f"writing {key!r}: {exc.strerror or exc}") from exc


@dataclass
class Manifest:
    """Every object a publish wrote, with its content hash ("" while an upload is pending)."""

    objects: dict[str, str] = field(default_factory=dict)
    generation: str = ""

    @classmethod
    def load(cls, state: Store) -> Manifest | None:
        """Return the manifest under the state URL, or None when there is none yet."""
        data = state.get(MANIFEST)
        if data is None:
            return None
        try:
            loaded = json.loads(data)
            return cls(dict(loaded["objects"]), str(loaded["generation"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise PublishError(f"the state's {MANIFEST} is damaged: {exc}", str(state)) from exc

    def save(self, state: Store) -> None:
        """Write the manifest under the state URL."""
        body = {"generation": self.generation, "objects": dict(sorted(self.objects.items()))}
        state.put(MANIFEST, json.dumps(body, separators=(",", ":")).encode())


def site_objects(site: Path, under: str = "") -> dict[str, Path]:
    """Return each object key of a built site (below ``under`` only) with its file."""
    found: dict[str, Path] = {}
    for directory, dirs, files in os.walk(site / under if under else site):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # staging, trash: never the site's
        rel_dir = os.path.relpath(directory, site)
        for name in files:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if rel in HIDDEN or name.startswith("."):
                continue  # the state, host configs and .nojekyll: not the site's
            key = object_key(rel)
            if key is not None:
                found[key] = Path(directory) / name
    return found


def tier(key: str) -> int:
    """Return when an object goes up: static assets, then jobs, then what lists them."""
    if key.startswith("static/"):
        return 0
    if key.startswith(JOB_PREFIXES):
        return 1
    return 2


@dataclass
class SyncReport:
    """What one publish to object storage did."""

    uploaded: int = 0
    uploaded_bytes: int = 0
    deleted: int = 0
    objects: int = 0
    # The bytes of the local copy read to hash them.
    hashed_bytes: int = 0


def _hashes(files: Mapping[str, Path], report: SyncReport) -> Iterator[tuple[str, str]]:
    """Yield each key with the SHA-256 of its file's bytes (counted in ``report``)."""
    for key, path in files.items():
        data = path.read_bytes()
        report.hashed_bytes += len(data)
        yield key, hashlib.sha256(data).hexdigest()


def changed_objects(site: Path, paths: Iterable[str]) -> tuple[dict[str, Path], set[str]]:
    """Return the objects at or below the site paths a build changed, and those paths' keys.

    A path is a job directory (its objects are the keys below it, and the key of its own
    ``index.json``), a site-wide file, or a path the build removed.
    """
    found: dict[str, Path] = {}
    scope: set[str] = set()
    for rel in paths:
        path = site / rel
        if path.is_dir():
            found.update(site_objects(site, rel))
        elif path.is_file() and (key := object_key(rel)) is not None:
            found[key] = path
        scope.add(object_key(rel) or rel)
        scope.add(rel)
    return found, scope


def _in_scope(key: str, scope: set[str]) -> bool:
    """Tell whether a key is one of the changed paths' or lies below one."""
    parts = key.split("/")
    return any("/".join(parts[:n]) in scope for n in range(1, len(parts) + 1))


def sync(
    site: Path,
    store: Store,
    state: Store,
    before: Manifest | None,
    changed_paths: list[str] | None = None,
    uploaded: Mapping[str, str] | None = None,
    suspects: Iterable[str] = (),
) -> tuple[Manifest, SyncReport]:
    """Upload what changed of ``site`` to ``store`` in the safe order; delete what went.

    ``before``: the manifest of the last publish (None: upload every object). Returns the new
    manifest, already saved under ``state``. ``changed_paths``: the site paths the build
    changed since that publish (what its local publish changed), when ``site`` is the very
    copy it came from: only the objects there are read, hashed and compared; else the whole
    site is.
    ``uploaded``: the objects workers put at their keys during this build (key: hash), not
    uploaded again; those of jobs the site does not keep are deleted, as is any object below
    ``suspects`` (prefixes a worker may have written to before it died) the site does not hold.
    """
    report = SyncReport()
    uploaded = uploaded or {}
    old = {**(before.objects if before is not None else {}), **uploaded}
    if before is None or changed_paths is None:
        files = site_objects(site)
        hashes = dict(_hashes(files, report))
        gone = sorted(set(old) - set(hashes))
        kept = hashes
    else:
        files, scope = changed_objects(site, changed_paths)
        hashes = dict(_hashes(files, report))
        gone = sorted(k for k in old if k not in hashes and _in_scope(k, scope))
        kept = {**{k: h for k, h in old.items() if k not in gone}, **hashes}
    # Objects workers put up for a job the site does not keep, or left below a suspect prefix.
    stray = {k for k in uploaded if k not in hashes}
    stray |= {k for prefix in suspects for k in store.keys_below(prefix) if k not in kept}
    gone = sorted(set(gone) | stray)
    kept = {k: h for k, h in kept.items() if k not in stray}
    changed = sorted((k for k, h in hashes.items() if old.get(k) != h), key=lambda k: (tier(k), k))
    report.objects = len(kept)
    # Before any upload: the keys to come are known to the state (hash unknown), so a killed
    # publish leaves nothing the next one does not finish or delete.
    pending = Manifest({**old, **dict.fromkeys(changed, "")}, before.generation if before else "")
    if changed:
        pending.save(state)

    for level in (0, 1, 2):
        keys = [k for k in changed if tier(k) == level]
        # A tier is whole before the next starts: nothing links to what is not there yet.
        for start in range(0, len(keys), BATCH):
            sent = store.put_files((key, files[key]) for key in keys[start : start + BATCH])
            report.uploaded_bytes += sum(len(data) for data in sent.values())
            report.uploaded += len(sent)
    for start in range(0, len(gone), 1000):
        batch = gone[start : start + 1000]
        store.delete(batch)
        report.deleted += len(batch)
    after = Manifest(kept, secrets.token_hex(8))
    after.save(state)
    return after, report


def job_root(key: str) -> str | None:
    """Return the job directory an object key is below (``api/job/<id>``, ``jobs/<id>``)."""
    for prefix in JOB_PREFIXES:
        if key.startswith(prefix):
            return prefix + key[len(prefix) :].partition("/")[0]
    return None


@dataclass(frozen=True)
class Uploader:
    """Put a new job's objects straight at their keys, from the worker that wrote the job.

    A job none of whose directories a publish holds yet (``published``: the manifest's) is not
    listed anywhere until the listings go up after it, so no reader can see it half there; a
    job already published goes through the local copy and the sync, as every object does.
    Before any worker uploads, ``begin`` leaves a mark under the state URL: a build that dies
    leaves it, and the next publish deletes the job objects no manifest names.
    """

    url: str
    options: Mapping[str, Any]
    published: frozenset[str]

    def begin(self, state: Store) -> None:
        """Mark the state: workers may put objects up that no manifest names yet."""
        state.put(DIRECT, b"workers upload new jobs straight to their keys\n")

    @staticmethod
    def end(state: Store) -> None:
        """Remove the mark: every object workers put up is in the manifest now, or gone."""
        with contextlib.suppress(FileNotFoundError):
            state.delete([DIRECT])

    def is_new(self, roots: Iterable[str]) -> bool:
        """Tell whether no publish holds any of a job's directories."""
        return not any(root in self.published for root in roots)

    def upload(self, site: Path, roots: Iterable[str]) -> dict[str, str]:
        """Upload a job's objects from ``site`` (a worker's staging dir); return key: hash."""
        return self._put(sorted(kv for root in roots for kv in site_objects(site, root).items()))

    def upload_files(self, site: Path, rels: Iterable[str]) -> dict[str, str]:
        """Upload some of a job's files again (its page once its run context went in)."""
        return self._put(
            [(key, site / rel) for rel in rels if (key := object_key(rel)) is not None]
        )

    def _put(self, objects: Iterable[tuple[str, Path]]) -> dict[str, str]:
        """Upload files as objects (``Store.put_files``); return each key's hash."""
        sent = _store(self.url, self.options).put_files(objects)
        return {key: hashlib.sha256(data).hexdigest() for key, data in sent.items()}


def published_roots(manifest: Manifest | None) -> frozenset[str]:
    """Return the job directories a publish holds (the manifest's), for ``Uploader``."""
    if manifest is None:
        return frozenset()
    return frozenset(root for key in manifest.objects if (root := job_root(key)) is not None)


def leftover_uploads(state: Store) -> bool:
    """Tell whether a build that let workers upload died before its publish ended."""
    return state.get(DIRECT) is not None


# A worker's stores, one per prefix and options: each opens its own connections once.
_stores: dict[str, Store] = {}


def _store(url: str, options: Mapping[str, Any]) -> Store:
    """Return this process's store of ``url``."""
    key = f"{url}\0{sorted(options.items())!r}"
    if key not in _stores:
        _stores[key] = Store(url, options)
    return _stores[key]


@dataclass
class Lock:
    """A build's lock object on a prefix: who holds it, until when."""

    state: Store
    owner: str
    expires: float

    def refresh(self) -> None:
        """Push the expiry out again (a long build keeps its lock)."""
        self.expires = time.time() + LOCK_EXPIRY
        self.state.put(LOCK, _lock_body(self.owner, self.expires))

    def release(self) -> None:
        """Delete the lock object, if it is still this build's."""
        held = _lock_owner(self.state.get(LOCK))
        if held is None or held[0] == self.owner:
            with contextlib.suppress(FileNotFoundError):
                self.state.delete([LOCK])


def _lock_body(owner: str, expires: float) -> bytes:
    """Return the lock object's bytes: its owner and expiry (no credential, no path)."""
    return json.dumps({"owner": owner, "expires": expires}).encode()


def _lock_owner(data: bytes | None) -> tuple[str, float] | None:
    """Return a lock object's (owner, expiry), or None when there is none or it is damaged."""
    if data is None:
        return None
    try:
        body = json.loads(data)
        return str(body["owner"]), float(body["expires"])
    except (ValueError, KeyError, TypeError):
        return None


def _dead_here(owner: str) -> bool:
    """Tell whether a lock's owner was a process of this machine that is gone (killed)."""
    who, _, rest = owner.rpartition("@")
    host, _, pid_token = rest.partition(":")
    pid = pid_token.partition(":")[0]
    if not who or host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def acquire(state: Store, on_wait: Callable[[str], None] | None = None) -> Lock:
    """Take the prefix's lock: wait while another live build holds it, take over an expired one."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # a container's uid with no name
        user = str(os.getuid())
    owner = f"{user}@{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    waited = False
    while True:
        expires = time.time() + LOCK_EXPIRY
        if state.create(LOCK, _lock_body(owner, expires)):
            return Lock(state, owner, expires)
        held = _lock_owner(state.get(LOCK))
        if held is not None and held[0] == owner:
            # Our own create, whose answer was lost (a reset): botocore sent it again and the
            # store said 412. The owner's random token is in the body: the lock is this build's.
            return Lock(state, owner, held[1])
        if held is None or held[1] < time.time() or _dead_here(held[0]):
            # Expired, its build died on this machine, or damaged: remove it and race again.
            state.delete([LOCK])
            continue
        if not waited and on_wait is not None:
            on_wait(held[0])
        waited = True
        time.sleep(LOCK_POLL)


def check_new_prefix(store: Store, state_url: str) -> None:
    """Refuse a non-empty prefix with no state: a site sitegen did not publish, or lost."""
    inside = ""
    if state_url.startswith(store.url):
        inside = state_url[len(store.url) :]
    key = store.any_key(ignore=inside)
    if key is not None:
        raise UsageError(
            f"output prefix is not empty (it holds {key!r}) and has no sitegen state at "
            f"{redact(state_url)}; refusing to replace it",
            str(store),
        )
