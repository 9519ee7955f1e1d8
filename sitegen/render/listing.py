"""The jobs list: which page each job is listed on, and its rows built as one string.

Pages do not shift. The front page shows the newest jobs; every job is also listed on an
archive page named by the UTC time span its start falls in: its day, or, when a day holds
more jobs than a page, its hour, minute or second, and past that numbered overflow pages
of that second. A page's name and content depend only on the jobs started in its span, so
a new job rewrites its own page (and the neighbours' links when its page is new), a
removed one only its own, and a clean build names every page as an incremental one does.
A change is cut again only in the span it touches (``recut_span``): the spans above it are
cut as before, so no other page of its day needs its jobs read.

Rendering each row through Jinja cost most of a listing page; ``job_rows`` builds the very
bytes the template loop did (``tests/test_listing.py`` holds that loop and compares).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgspec
import orjson

from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.render.cells import status_badge
from sitegen.render.fragments import Fragment
from sitegen.render.links import Linker
from sitegen.text.formatting import DURATIONS, number, timestamps
from sitegen.text.htmlsafe import esc

_NO_DURATION = '<td class="num">—</td>'
_NO_FINDINGS = '<td data-v="0"></td>'
_NONE: Mapping[str, Finding] = {}
# Jobs on the front page, and the most an archive page holds before its span is split.
PAGE_CAPACITY = 50
# The most rows one part of the find index holds (about 60 bytes each) before its span splits.
FIND_PART_CAPACITY = 2000
# The spans an archive page may cover, widest first: a UTC day, then spans that divide it
# evenly, each at most five times the next, so a page holds a fair share of PAGE_CAPACITY.
SPANS = (
    (86_400_000, "1d"),
    (43_200_000, "12h"),
    (21_600_000, "6h"),
    (10_800_000, "3h"),
    (3_600_000, "1h"),
    (1_800_000, "30m"),
    (900_000, "15m"),
    (300_000, "5m"),
    (60_000, "1m"),
    (30_000, "30s"),
    (10_000, "10s"),
    (5_000, "5s"),
    (1_000, "1s"),
)

# A listed job: its id, start time (ms), and what its row is made from (changes with it).
Listed = tuple[str, int, str]


@dataclass(frozen=True)
class ListPage:
    """One archive page of the jobs list: its name, what it is titled, its jobs newest first."""

    name: str
    label: str
    jobs: list[Listed]
    # Its span: SPANS[level], from ``begin`` (ms). Numbered pages of one second share it.
    begin: int
    level: int


def _span_name(start_ms: int, level: int) -> tuple[str, str]:
    """Return the file name and the title of the span at ``level`` holding ``start_ms``."""
    span, code = SPANS[level]
    begin = start_ms // span * span
    try:
        first, after = time.gmtime(begin // 1000), time.gmtime((begin + span) // 1000)
    except (OverflowError, OSError, ValueError):  # a start time no calendar holds
        return f"t{code}-{begin}", f"in the {code} from {begin} ms"
    day = time.strftime("%Y-%m-%d", first)
    if level == 0:
        return day, f"on {day}"
    clock = "%H%M%S" if span < 60_000 else "%H%M"
    shown = "%H:%M:%S" if span < 60_000 else "%H:%M"
    name = f"{day}T{time.strftime(clock, first)}-{code}"
    return name, f"on {day}, {time.strftime(shown, first)} to {time.strftime(shown, after)}"


def _split(jobs: list[Listed], level: int, capacity: int, out: list[ListPage]) -> None:
    """Append the spans of ``jobs`` (newest first, within one span of ``level - 1``) to ``out``.

    A span holding more than ``capacity`` jobs is split into the next finer spans; past the
    finest, into numbered chunks of ``capacity``, newest first.
    """
    span = SPANS[level][0]
    start = 0
    while start < len(jobs):
        bucket = jobs[start][1] // span
        end = start
        while end < len(jobs) and jobs[end][1] // span == bucket:
            end += 1
        group = jobs[start:end]
        name, label = _span_name(group[0][1], level)
        if len(group) <= capacity:
            out.append(ListPage(name, label, group, bucket * span, level))
        elif level + 1 < len(SPANS):
            _split(group, level + 1, capacity, out)
        else:
            for n in range(0, len(group), capacity):
                suffix = f".{n // capacity + 1}" if n else ""
                out.append(
                    ListPage(name + suffix, label, group[n : n + capacity], bucket * span, level)
                )
        start = end


def cut_span(jobs: list[Listed], level: int, capacity: int) -> list[ListPage]:
    """Return the pages of ``jobs`` (newest first, within one span of ``level - 1``)."""
    out: list[ListPage] = []
    _split(jobs, level, capacity, out)
    return out


def archive_pages(jobs: list[Listed]) -> list[ListPage]:
    """Return the archive pages of the jobs list, newest first; none when one page holds all."""
    return cut_span(jobs, 0, PAGE_CAPACITY) if len(jobs) > PAGE_CAPACITY else []


def find_spans(jobs: list[Listed]) -> list[ListPage]:
    """Return the parts of the find index, newest first: spans as pages, of a larger capacity."""
    # One part per day would grow with the day (1.4 MB at 23,000 jobs a day); spans split as
    # the pages are keep a part under FIND_PART_CAPACITY rows, and their count moderate.
    return cut_span(jobs, 0, FIND_PART_CAPACITY)


class SpanRecord(msgspec.Struct, array_like=True, gc=False):
    """What the state keeps of an archive page or a find-index part: name, span, digests."""

    name: str
    label: str
    # The start of its newest job, and its span's level: the span starts at ``begin``. (A
    # span's start may lie past the 64 bits a start time fits in, which MessagePack and
    # SQLite hold.)
    newest: int
    level: int
    # Of its jobs (ids, start times, what each row is made from), and of the reduce step's
    # findings about them (regressions; none for a part): with its neighbours' names, all a
    # page depends on.
    jobs: str
    flagged: str

    @property
    def begin(self) -> int:
        """Return where its span starts (ms)."""
        span = SPANS[self.level][0]
        return self.newest // span * span


class DayListing(msgspec.Struct, array_like=True, gc=False):
    """One UTC day of the jobs list: its archive pages and find-index parts, newest first."""

    pages: list[SpanRecord]
    parts: list[SpanRecord]


encode_day = msgspec.msgpack.Encoder().encode
decode_day = msgspec.msgpack.Decoder(DayListing).decode


def span_records(pages: Sequence[ListPage], extra: Mapping[str, Finding]) -> list[SpanRecord]:
    """Return what the state keeps of ``pages`` (``extra``: regressions by job id)."""
    return [
        SpanRecord(
            p.name,
            p.label,
            p.jobs[0][1],
            p.level,
            signature(p.jobs),
            signature([extra[j[0]] for j in p.jobs if j[0] in extra]) if extra else "",
        )
        for p in pages
    ]


def day_listing(
    jobs: list[Listed], extra: Mapping[str, Finding]
) -> tuple[DayListing, list[ListPage]]:
    """Return one day's listing record and its find parts (``jobs``: newest first)."""
    # A day's pages are the spans of the jobs started in it, split as archive_pages splits:
    # the whole list's pages are the days' pages, newest day first.
    parts = find_spans(jobs)
    return DayListing(
        span_records(cut_span(jobs, 0, PAGE_CAPACITY), extra), span_records(parts, {})
    ), parts


def span_end(record: SpanRecord | ListPage) -> int:
    """Return where a page's span ends (ms, exclusive)."""
    return record.begin + SPANS[record.level][0]


def recut_span(
    records: Sequence[SpanRecord], moment: int, capacity: int, count: Callable[[int, int], int]
) -> tuple[int, int, int]:
    """Return the span ``(level, begin, end)`` whose pages a job started at ``moment`` recuts.

    ``records``: the day's pages as cut before the change; ``count(begin, end)``: how many
    jobs start in a span now. Walking from the day down, a span is cut the same as before
    until the first one that was a page then (its records are replaced) or holds at most
    ``capacity`` jobs now (it is one page): the pages of that span are cut again from its
    jobs, and no other page of the day changes. ``tests/test_listing.py`` checks this
    against cutting the whole day again.
    """
    for level, (span, _) in enumerate(SPANS):
        begin = moment // span * span
        was_page = any(r.level == level and r.begin == begin for r in records)
        if was_page or level + 1 == len(SPANS) or count(begin, begin + span) <= capacity:
            return level, begin, begin + span
    raise AssertionError("unreachable: the finest span ends the walk")


def replace_span(
    records: list[SpanRecord], begin: int, end: int, fresh: list[SpanRecord]
) -> list[SpanRecord]:
    """Return ``records`` with those of the span ``[begin, end)`` replaced by ``fresh``."""
    # Records are newest first, so the span's lie between the newer and the older ones.
    return [r for r in records if r.begin >= end] + fresh + [r for r in records if r.begin < begin]


def signature(*parts: object) -> str:
    """Return a short digest of what a page is rendered from, to tell whether it changed."""
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def findings_cell(findings: Sequence[Finding]) -> str:
    """Return the findings column's cell: how many, and the worst severity (sorts by cost).

    The sort key is the largest cost (impact_ms) of its findings, then the worst severity.
    """
    if not findings:
        return _NO_FINDINGS
    worst = max(f.severity.rank for f in findings)
    word = next(f.severity for f in findings if f.severity.rank == worst)
    cost = max((f.impact_ms or 0 for f in findings), default=0)
    return (
        f'<td data-v="{cost * 10 + worst + 1}">'
        f'<span class="severity {word}">{len(findings)} {word}</span></td>'
    )


def job_rows(
    jobs: Sequence[JobSummary],
    link: Linker,
    extra: Mapping[str, Finding] = _NONE,
    scheduler: bool = False,
) -> Fragment:
    """Return the ``<tr>`` rows of one listing page, linking from its page with ``link``.

    ``extra`` holds findings of the reduce step (a regression) by job id; ``scheduler``: the
    site holds several schedulers' jobs, and each row names its own.
    """
    badges: dict[str, str] = {}
    out = []
    # Text made from integers (counts, times, durations) has nothing to escape; text from
    # the log (ids, names, statuses, failures) always goes through esc().
    for job in jobs:
        # A cancelled job's index says end_time 0: its duration runs to the cancel.
        job_id, status, start, end = job.job_id, job.status, job.start_time, job.ended_at
        badge = badges.get(status)
        if badge is None:
            badge = badges[status] = f'<td data-v="{esc(status)}">{status_badge(status)}</td>'
        failure = f'<p class="failure">{esc(job.failure)}</p>' if job.failure else ""
        took = (
            f'<td class="num" data-v="{end - start}">{DURATIONS[end - start]}</td>'
            if end >= start
            else _NO_DURATION
        )
        at_ms, at = timestamps(start)
        href = esc(link.job(job_id))
        more = extra.get(job_id)
        found = [*job.findings, more] if more is not None else job.findings
        findings = findings_cell(found) if found else _NO_FINDINGS
        ran = f"<td>{esc(job.scheduler)}</td>\n" if scheduler else ""
        out.append(
            f'<tr>\n<td><a href="{href}"><code>{esc(job_id)}</code></a></td>\n'
            f"<td>{esc(job.job_name)}{failure}</td>\n{ran}{badge}\n"
            f'<td class="num" data-v="{job.completed_stages}">'
            f"{job.completed_stages}/{job.num_stages}</td>\n"
            f'<td class="num" data-v="{job.tasks}">{number(job.tasks)}</td>\n{findings}\n'
            f'<td data-v="{start}"><time datetime="{at_ms}">{at}</time></td>\n{took}</tr>'
        )
    return Fragment("\n".join(out))


def find_index(jobs: Sequence[JobSummary]) -> bytes:
    """Return one part of the find box's index: ``[id, name, status, start ms]`` rows."""
    # A script, not JSON to fetch: a page opened from file:// may load a script beside it,
    # but not fetch a file. JSON is a JavaScript expression, and the file is never HTML.
    # The browser formats the times: at 100,000 jobs formatting them here cost 150 ms.
    # One part per span (find_spans): a new job rewrites its span's part, not every job's row.
    rows = [(j.job_id, j.job_name, j.status, j.start_time) for j in jobs]
    return b"sitegenJobPart(" + orjson.dumps(rows) + b");\n"


def find_parts(names: Sequence[str]) -> bytes:
    """Return the script naming the find index's parts (their spans), newest first."""
    return b"window.sitegenJobParts = " + orjson.dumps(list(names)) + b";\n"
