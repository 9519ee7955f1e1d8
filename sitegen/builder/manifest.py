"""What was built from what: the record in the output that makes builds incremental."""

from __future__ import annotations

import hashlib
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec

from sitegen import __version__
from sitegen.eventlog.filekind import open_regular
from sitegen.layout import MANIFEST_NAME
from sitegen.model import Classification, JobSummary, Problem, RunningJob


class LogOutcome(msgspec.Struct, gc=False, omit_defaults=True):
    """What the map step returns for one log: small, picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem] = msgspec.field(default_factory=list)
    summary: JobSummary | None = None
    running: RunningJob | None = None
    roots: list[str] = msgspec.field(default_factory=list)
    files: int = 0
    bytes: int = 0
    # SHA-256 of the log, taken by the worker that read it (hashing is parallel too).
    sha256: str = ""
    # SHA-256 of the operator note the job page was rendered with ("" for none).
    note_sha256: str = ""
    # SHA-256 of the run context (other runs of its name) the job page was rendered with.
    context_sha256: str = ""


class LogEntry(msgspec.Struct, gc=False, omit_defaults=True):
    """One log as last built: how to tell it is unchanged (``outcome.sha256``), what it made."""

    size: int
    mtime_ns: int
    outcome: LogOutcome
    published: bool = False


# The manifest's own layout: a manifest of another layout (or none) means a full build.
FORMAT = 3


class Manifest(msgspec.Struct):
    """Everything the next build needs to decide what to rebuild."""

    # Required, so that a manifest written before the field existed fails to decode.
    format: int
    sitegen: str
    fingerprint: str
    logs: dict[str, LogEntry] = msgspec.field(default_factory=dict)
    site_files: list[str] = msgspec.field(default_factory=list)


def log_digest(path: Path, held: bytes | None = None) -> str:
    """Return a log's SHA-256, from its bytes if held; empty when it cannot be read."""
    if held is not None:
        return hashlib.sha256(held).hexdigest()
    try:
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:  # a dangling symlink, or a log removed since it was listed: the reader
        return ""  # says why, and a log that can be read again no longer matches ""


def _hash_tree(h: Any, root: Path) -> None:
    """Feed every file name and content below ``root`` into ``h``, in a stable order."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")


def fingerprint(options: Any, template_dirs: list[Path], ignore: frozenset[str]) -> str:
    """Hash what every page depends on: sitegen version, templates, output-shaping options."""
    h = hashlib.sha256(__version__.encode())
    for directory in template_dirs:
        _hash_tree(h, directory)
    for f in fields(options):
        if f.name in ignore:
            continue
        value = getattr(options, f.name)
        h.update(f"{f.name}={value!r}\0".encode())
        if isinstance(value, Path) and value.is_dir():
            _hash_tree(h, value)
    return h.hexdigest()


class _BuiltLog(msgspec.Struct):
    """Of a log entry, only whether it published a job (any manifest format has that)."""

    published: bool = False


class _BuiltSite(msgspec.Struct):
    """Of a manifest, only which logs the site was built from."""

    logs: dict[str, _BuiltLog] = msgspec.field(default_factory=dict)


def built_from(output: Path) -> dict[str, bool] | None:
    """Return the logs the site at ``output`` was built from (key: published?); None: no site."""
    # Read loosely: a site written by another sitegen version still names its logs.
    try:
        site = msgspec.json.decode((output / MANIFEST_NAME).read_bytes(), type=_BuiltSite)
    except (OSError, msgspec.DecodeError):
        return None
    return {key: entry.published for key, entry in site.logs.items()}


def load(output: Path) -> Manifest | None:
    """Return the manifest of the site at ``output``, or None if there is no usable one."""
    try:
        data = (output / MANIFEST_NAME).read_bytes()
        manifest = msgspec.json.decode(data, type=Manifest)
    except (OSError, msgspec.DecodeError):
        return None
    return manifest if (manifest.format, manifest.sitegen) == (FORMAT, __version__) else None


def encode(manifest: Manifest) -> bytes:
    """Encode a manifest for writing into the site."""
    return msgspec.json.encode(manifest)
