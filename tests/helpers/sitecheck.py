"""Helpers the HTML tests share: collect links from built pages and resolve them on disk."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sitegen.layout import object_key


class _Links(HTMLParser):
    """Collect every href/src and every id of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def html_pages(site: Path) -> list[Path]:
    """Every HTML page of the site except the API's HTML copies."""
    return sorted(p for p in site.rglob("*.html") if "api" not in p.relative_to(site).parts[:1])


def broken_links(site: Path) -> list[str]:
    """Return 'page: link (reason)' for every href/src that does not resolve to a file."""
    problems = []
    ids: dict[Path, set[str]] = {}
    for page in html_pages(site):
        found = parse(page)
        ids[page] = found.ids
        for link in found.links:
            parts = urlsplit(link)
            # The 404 page is shown at any depth: it links from the host's root, where the
            # generated host configs serve the site. Every other page links relatively.
            rooted = page == site / "404.html" and link.startswith("/") and not parts.netloc
            if parts.scheme or parts.netloc or (link.startswith("/") and not rooted):
                problems.append(f"{page}: {link} (not relative)")
                continue
            if not parts.path:
                continue  # same-page fragment, checked below
            base = site if rooted else page.parent
            target = (base / unquote(parts.path).lstrip("/")).resolve()
            if not target.is_relative_to(site.resolve()):
                problems.append(f"{page}: {link} (leaves the site)")
            elif not target.is_file():
                problems.append(f"{page}: {link} (no such file)")
            elif (
                parts.fragment
                and target.suffix == ".html"
                and unquote(parts.fragment) not in (ids.get(target) or parse(target).ids)
            ):
                problems.append(f"{page}: {link} (no such anchor)")
    return problems


def broken_object_links(objects: Mapping[str, bytes]) -> list[str]:
    """Return 'key: link' for every href/src of a site's objects (by key) naming no object.

    A site in object storage, as a bucket serves it: ``api/jobs`` is an object, a link to
    ``jobs/x/`` is served ``jobs/x/index.html``; anchors are not checked.
    """
    problems = []
    for key, data in objects.items():
        if not key.endswith(".html") or key.startswith("api/"):
            continue
        parser = _Links()
        parser.feed(data.decode("utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:
                continue  # another site's (the 404 page's links are rooted: checked below)
            path = unquote(parts.path)
            rooted = path.startswith("/")
            target = posixpath.normpath(
                path.lstrip("/") if rooted else posixpath.join(posixpath.dirname(key), path)
            )
            if path.endswith("/"):
                target = f"{target}/index.html" if target != "." else "index.html"
            # A job page's link to its own ``api/job/<id>/index.json`` file names the object
            # ``api/job/<id>`` (layout.object_key): resolved as the publish keyed it. (A bucket
            # serving the site as is answers that link 404: the page's link, not the publish.)
            target = object_key(target) or target
            if target.startswith("..") or (rooted and key != "404.html"):
                problems.append(f"{key}: {link} (leaves the site or not relative)")
            elif target not in objects:
                problems.append(f"{key}: {link} (no such object)")
    return problems
