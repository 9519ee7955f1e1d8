"""Text from a log shown on a page is capped, so that no text amplifies into megabytes.

A 10 MiB job name turned a 31 MB log into a 391 MB site: the name on every page of the job,
on the front page and on its name's page. Every text a page shows (names, ids, errors,
config values, executor ids, statuses) is cut after ``MAX_SHOWN_TEXT`` characters with a
"shortened" mark; the ``/api`` files and the raw log keep it whole. Plans have their own,
larger cap (``MAX_PAGE_TEXT``), and are marked ``Whole`` to keep it.
"""

from __future__ import annotations

MAX_SHOWN_TEXT = 2_000


class Whole(str):
    """Text a page shows as it is (a plan, already cut at its own limit)."""

    __slots__ = ()


def shorten(text: str) -> str:
    """Return ``text`` cut after ``MAX_SHOWN_TEXT`` characters, saying so (else itself)."""
    if len(text) <= MAX_SHOWN_TEXT:
        return text
    rest = len(text) - MAX_SHOWN_TEXT
    return (
        f"{text[:MAX_SHOWN_TEXT]}… (shortened: {rest:,} more characters in the API and the raw log)"
    )
