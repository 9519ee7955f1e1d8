"""Mask the variable parts of an error text, so that errors with one cause group together."""

from __future__ import annotations

import functools
import re

# Error texts can be whole stack traces: only this much of one is masked and kept.
MAX_ERROR_CHARS = 2000

# In this order: a part masked early (a path) is not masked again piecewise (its numbers).
_RULES: list[tuple[re.Pattern[str], str]] = [
    # UUIDs (task and job ids of other systems, temp file names).
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    # URLs (s3://bucket/key, http://host:port/…).
    (re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+"), "<url>"),
    # File paths: at least two segments, absolute or relative (/tmp/a.arrow, data/x.parquet).
    (
        re.compile(r"(?:(?<=\s)|(?<=^)|(?<=[(\['\"=:]))(?:[A-Za-z]:)?[\w.~-]*(?:/[\w.~=-]+){2,}/?"),
        "<path>",
    ),
    # IPv4 addresses, with a port if any.
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    # Quoted strings: column names, values, file names.
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "<str>"),
    # Sizes with a unit (512.0 MB, 64KiB).
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes|B)\b"), "<size>"),
    # Hexadecimal: 0x-prefixed, or runs of 8+ hex digits holding a digit (hashes, addresses).
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b"), "<hex>"),
    # Ids: words mixing letters and digits (job ids like Ca05RFR, executor-3 is a number below).
    (re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9_]{5,}\b"), "<id>"),
    # Ballista job ids without a digit (about 29% of them): seven letters with a capital after
    # a small letter or a small letter after two capitals (GZWmFqx, aBcDeFg), which words in
    # error texts never are; and whatever word follows "job".
    (
        re.compile(r"\b(?=[A-Za-z]{7}\b)(?=[A-Za-z]*(?:[a-z][A-Z]|[A-Z]{2}[a-z]))[A-Za-z]{7}\b"),
        "<id>",
    ),
    (re.compile(r"(?<=\b[Jj]ob )(?!<)[A-Za-z0-9_-]+"), "<id>"),
    # Numbers: counts, ids, ports, times, decimals.
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
]
_SPACE = re.compile(r"\s+")


def clip(text: str) -> str:
    """Return at most ``MAX_ERROR_CHARS`` of an error text (the example a page shows)."""
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…"


# A job's failure that wraps the error of the task that failed it.
_WRAPPED = re.compile(r"^Job failed due to stage \d+ failed: (?=\S)", re.DOTALL)


def cause(text: str) -> str:
    """Return the task error a job's "Job failed due to stage N failed: …" wraps, else ``text``."""
    return _WRAPPED.sub("", text, count=1)


def mask(text: str, job_id: str = "") -> str:
    """Return ``text`` with numbers, ids, sizes, paths, hex, UUIDs and quoted strings masked.

    ``job_id``, the id of the job whose error it is, is masked wherever it appears (an id
    of any shape, digits or not).
    """
    masked = text[:MAX_ERROR_CHARS]
    if len(job_id) >= 3 and job_id in masked:
        masked = masked.replace(job_id, "<id>")
    return _masked(masked)


# Texts recur across jobs (that is what failure groups count): a worker masks each once.
@functools.lru_cache(maxsize=1024)
def _masked(text: str) -> str:
    """Return ``text`` (clipped, its job's id masked) with every rule applied, spaces joined."""
    for regex, placeholder in _RULES:
        text = regex.sub(placeholder, text)
    return _SPACE.sub(" ", text).strip()
