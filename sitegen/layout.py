"""The one table of which file answers which URL path.

Every ``/api/P`` endpoint is the extensionless file ``api/P`` holding the exact body,
so plain file servers (GitHub Pages, ``python -m http.server``) answer it with no
redirect at all. The one endpoint that is also a path prefix, ``/api/job/{id}``, is a
directory: its body is ``index.json`` (configured hosts map to it) with an escaped
``index.html`` copy that zero-config hosts serve after one trailing-slash redirect.
Directories are few on purpose: creating one costs more than writing a file.

The API renderer, the host configs and the dev server all read this module, so the
three can never disagree.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote


class Body(enum.Enum):
    """How an endpoint's body is typed on a configured host."""

    JSON = "application/json"
    TEXT = "text/plain; charset=utf-8"


CONTENT_TYPES = {
    "json": "application/json",
    "txt": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "svg": "image/svg+xml",
    "css": "text/css; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "png": "image/png",
    "ico": "image/x-icon",
    "gz": "application/gzip",
    "zst": "application/zstd",
    # The query page's engine: a browser compiles wasm as it streams in only with this type.
    "wasm": "application/wasm",
}
INDEX_JSON = "index.json"
INDEX_HTML = "index.html"
API_ROOT = PurePosixPath("api")
# The directory of every job's API directory: made once, before the map step fills it.
API_JOBS_DIR = API_ROOT / "job"
# The build's state (SQLite), in the site's root: never served, archived or deployed.
STATE_NAME = ".sitegen-state.sqlite"
# SQLite's companions of it while a transaction is open (rollback journal, WAL).
STATE_COMPANIONS = tuple(STATE_NAME + s for s in ("-journal", "-wal", "-shm"))
# What sitegen before the state database wrote: a site that has it is still a sitegen site.
LEGACY_MANIFEST_NAME = ".sitegen-manifest.json"
# Files in the site's root that are the build's, not the site's.
BOOKKEEPING = (STATE_NAME, *STATE_COMPANIONS, LEGACY_MANIFEST_NAME)
PARTS_DIR = ".parts"  # in the staging dir: one subdirectory per log the map step renders
DEFAULT_TITLE = "Ballista job history"


@dataclass(frozen=True)
class Endpoint:
    """One REST path template under ``/api`` and the kind of body it answers with."""

    template: str
    body: Body

    @functools.cached_property
    def is_prefix(self) -> bool:
        """Tell whether other endpoints live below this one (so it must be a directory)."""
        return any(other.template.startswith(self.template + "/") for other in ALL_ENDPOINTS)

    @property
    def pattern(self) -> str:
        """Return a regex for the decoded URL path (segments are anything but ``/``)."""
        parts = ["[^/]+" if p.startswith("{") else re.escape(p) for p in self.template.split("/")]
        return "/api/" + "/".join(parts)


SITE_ENDPOINTS = (
    Endpoint("jobs", Body.JSON),
    Endpoint("state", Body.JSON),
    Endpoint("version", Body.JSON),
    Endpoint("executors", Body.JSON),
    Endpoint("metrics", Body.TEXT),
)
JOB_ENDPOINTS = (
    Endpoint("job/{job_id}", Body.JSON),
    Endpoint("job/{job_id}/stages", Body.JSON),
    Endpoint("job/{job_id}/config", Body.JSON),
    Endpoint("job/{job_id}/dot", Body.TEXT),
    Endpoint("job/{job_id}/stage/{stage_id}/dot", Body.TEXT),
)
ALL_ENDPOINTS = SITE_ENDPOINTS + JOB_ENDPOINTS
BY_TEMPLATE = {e.template: e for e in ALL_ENDPOINTS}
_MATCHERS = [(re.compile(e.pattern + "/?"), e) for e in ALL_ENDPOINTS]


def _path(template: str, values: dict[str, str]) -> list[str]:
    """Fill a template's ``{name}`` segments with ``values``."""
    return [values[p[1:-1]] if p.startswith("{") else p for p in template.split("/")]


def endpoint_parts(endpoint: Endpoint, **segments: str) -> list[str]:
    """Return the segments, below ``api/``, of the file holding an endpoint's exact body."""
    parts = _path(endpoint.template, segments)
    # A prefix endpoint is a directory (others live below it): its body is index.json.
    return [*parts, INDEX_JSON] if endpoint.is_prefix else parts


def endpoint_file(endpoint: Endpoint, **segments: str) -> PurePosixPath:
    """Return the site file holding an endpoint's exact body (raw, unencoded segments)."""
    return API_ROOT.joinpath(*endpoint_parts(endpoint, **segments))


def html_copy(endpoint: Endpoint, **segments: str) -> PurePosixPath | None:
    """Return where a zero-config host looks for a prefix endpoint's body, else None."""
    return endpoint_file(endpoint, **segments).with_name(INDEX_HTML) if endpoint.is_prefix else None


def api_job_dir(job_id: str) -> str:
    """Return the API directory of one job: every ``/api/job/{id}/…`` file (not its pages)."""
    return f"{API_JOBS_DIR}/{job_id}"


def api_url_path(endpoint: Endpoint, **segments: str) -> str:
    """Return the URL path a client requests for an endpoint, segments percent-encoded."""
    encoded = {k: quote(v, safe="") for k, v in segments.items()}
    return "/api/" + "/".join(_path(endpoint.template, encoded))


def match(url_path: str) -> Endpoint | None:
    """Return the endpoint a decoded URL path asks for, if any."""
    for regex, endpoint in _MATCHERS:
        if regex.fullmatch(url_path):
            return endpoint
    return None


def files_for(url_path: str) -> list[PurePosixPath]:
    """Return the candidate files for a decoded ``/api`` path, in the order hosts try them."""
    rel = PurePosixPath(url_path.strip("/"))
    return [rel, rel / INDEX_JSON]


def object_key(rel: str) -> str | None:
    """Return the object key a site file is published as in object storage; None: it is not.

    Keys are flat, so ``api/job/{id}`` and ``api/job/{id}/stages`` can both be objects: a
    prefix endpoint's ``index.json`` is the object named by its URL path, and the escaped
    ``index.html`` copy that zero-config file hosts need is left out.
    """
    if rel.startswith(f"{API_ROOT}/"):
        head, _, name = rel.rpartition("/")
        if name == INDEX_JSON:
            return head
        if name == INDEX_HTML:
            return None
    return rel


def content_type(key: str) -> str:
    """Return the Content-Type a static host must send for an object key (or site file)."""
    if key.startswith(f"{API_ROOT}/"):
        endpoint = match(f"/{key}")
        if endpoint is not None:
            return endpoint.body.value
    name = key.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    if dot and stem and ext in CONTENT_TYPES:
        return CONTENT_TYPES[ext]
    return Body.JSON.value if key.startswith(f"{API_ROOT}/") else "application/octet-stream"
