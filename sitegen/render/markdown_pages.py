"""Operator-written Markdown: site pages from ``--pages DIR`` and per-job notes.

Markdown passes raw HTML through, so its output is sanitised with nh3 against an
explicit allow-list: no scripts, no event handlers, no ``style`` (the pages' CSP
forbids inline styles anyway), links limited to http(s), mailto and relative URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from sitegen.eventlog.discover import unsafe_id_reason

ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "dl", "dt",
        "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p",
        "pre", "s", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead",
        "tr", "ul",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"align"},
    "td": {"align"},
    "code": {"class"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def render(text: str) -> Markup:
    """Render Markdown to sanitised HTML."""
    # Imported here: most builds render no Markdown, and importing it costs 20 ms.
    import markdown
    import nh3
    from markdown.extensions.tables import TableExtension

    # use_align_attribute: the default inline style="text-align…" would break the CSP.
    raw = markdown.markdown(
        text, extensions=[TableExtension(use_align_attribute=True), "fenced_code", "sane_lists"]
    )
    clean = nh3.clean(
        raw, tags=set(ALLOWED_TAGS), attributes=ALLOWED_ATTRIBUTES, url_schemes=set(URL_SCHEMES)
    )
    # A wide table scrolls in its own box, never the page; the box takes keyboard focus so
    # it can be scrolled without a mouse. (Sanitised: a table tag carries no attributes.)
    wrapped = clean.replace("<table>", '<div class="table-wrap" tabindex="0"><table>').replace(
        "</table>", "</table></div>"
    )
    return Markup(wrapped)


@dataclass(frozen=True)
class OperatorPage:
    """One page from ``--pages``: its URL slug, nav title and source file."""

    slug: str
    title: str
    source: Path


def discover_pages(directory: Path | None) -> list[OperatorPage]:
    """List ``*.md`` in ``directory`` (sorted by file name) with titles from their ``# heading``."""
    if directory is None:
        return []
    pages = []
    for path in sorted(directory.glob("*.md")):
        slug = path.stem
        if slug.startswith(".") or unsafe_id_reason(slug) is not None or not path.is_file():
            continue
        heading = _HEADING.search(path.read_text(encoding="utf-8", errors="replace"))
        pages.append(OperatorPage(slug, heading.group(1) if heading else slug, path))
    return pages
