"""Helpers the HTML tests share: collect links from built pages and resolve them on disk."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


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
