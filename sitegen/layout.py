"""The one table of which file answers which URL path.

Every ``/api/P`` endpoint is a directory ``api/P/`` holding the exact body as
``index.json`` (or ``index.txt`` for DOT and Prometheus text), plus an
``index.html`` copy that zero-config hosts serve after their trailing-slash
redirect. The API renderer, the host configs and the dev server all read this
module, so the three can never disagree.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote


class Body(enum.Enum):
    """How an endpoint's body is typed: the file extension decides the content type."""

    JSON = "index.json"
    TEXT = "index.txt"

    @property
    def content_type(self) -> str:
        """Return the Content-Type a configured host sends for this body."""
        return CONTENT_TYPES[self.value.rsplit(".", 1)[1]]


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
}
HTML_COPY = "index.html"
API_ROOT = PurePosixPath("api")
MANIFEST_NAME = ".sitegen-manifest.json"


@dataclass(frozen=True)
class Endpoint:
    """One REST path template under ``/api`` and the kind of body it answers with."""

    template: str
    body: Body


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
# URL paths whose body is text, as patterns for host configs (nginx regex, Netlify splats).
TEXT_PATTERNS = ("metrics", "job/*/dot", "job/*/stage/*/dot")


def endpoint_dir(template: str, **segments: str) -> PurePosixPath:
    """Return the site directory of an endpoint, with raw (unencoded) path segments."""
    parts = [segments[p[1:-1]] if p.startswith("{") else p for p in template.split("/")]
    return API_ROOT.joinpath(*parts)


def api_url_path(template: str, **segments: str) -> str:
    """Return the URL path a client requests for an endpoint, segments percent-encoded."""
    parts = [
        quote(segments[p[1:-1]], safe="") if p.startswith("{") else p for p in template.split("/")
    ]
    return "/api/" + "/".join(parts)


def files_for(url_path: str) -> list[PurePosixPath]:
    """Return the candidate files for a decoded URL path, in the order hosts try them."""
    rel = PurePosixPath(url_path.strip("/"))
    if rel.parts[:1] == ("api",):
        return [rel / Body.JSON.value, rel / Body.TEXT.value]
    return [rel, rel / HTML_COPY]
