"""The links between the pages of a long table (a stage's task table)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from markupsafe import Markup

from sitegen.text.htmlsafe import esc

NEWEST_FIRST = ("Newest", "Newer", "Older", "Oldest")


def pager_nav(
    page_number: int,
    page_count: int,
    href: Callable[[int], str],
    words: Sequence[str] = NEWEST_FIRST,
    label: str = "Pages",
    place: str = "",
) -> Markup:
    """Return a pager's ``<nav>`` (nothing for a table of one page).

    ``href(n)`` links page n; ``words`` name the first, previous, next and last pages;
    ``place`` tells two pagers on one page apart ("top", "bottom"): landmarks need unique
    names. Built as one string: a stage of 800 tasks has 16 pages, each with two pagers,
    and the macro call that printed them cost more than the rest of such a page's frame.
    """
    if page_count <= 1:
        return Markup("")
    first, previous, following, last = (esc(word) for word in words)
    name = f"{esc(label)}, {esc(place)}" if place else esc(label)
    out = [f'<nav class="pager" aria-label="{name}">\n']
    if page_number > 1:
        out.append(
            f'<a href="{esc(href(1))}">« {first}</a> '
            f'<a rel="prev" href="{esc(href(page_number - 1))}">‹ {previous}</a>'
        )
    out.append(f"<span>Page {page_number} of {page_count}</span>\n")
    if page_number < page_count:
        out.append(
            f'<a rel="next" href="{esc(href(page_number + 1))}">{following} ›</a> '
            f'<a href="{esc(href(page_count))}">{last} »</a>'
        )
    out.append("</nav>\n")
    return Markup("".join(out))
