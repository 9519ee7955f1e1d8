"""The schedulers' part of the reduce: each one's jobs list, and ``fleet.json``.

A site built from several schedulers' logs (several ``--event-log-dir``s, or logs whose
JobStart names its ``scheduler_id``) lists each scheduler's jobs on pages of their own, the
filter of the jobs list: its newest jobs, then archive pages cut by UTC span as the whole
list's are (``listing.archive_pages``), so a page's name depends only on the jobs in its span.

Cost follows the change: the state counts each scheduler's jobs and the changes to them
(``scheduler_total``); a scheduler none of whose jobs changed (nor the regressions of its
jobs, nor the set of schedulers) keeps its pages and its time range as recorded, with no
query of its jobs. A changed one reads its jobs' ``(id, start, digest)`` rows by index and
renders only the pages whose signature changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import msgspec

from sitegen.builder.state.store import State
from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.listing import PAGE_CAPACITY, Listed, ListPage, archive_pages, signature
from sitegen.render.pages import PageRenderer
from sitegen.render.schedulers import SchedulerRow

# The state's list_page rows of this part: a scheduler's record, and its pages' signatures.
_RECORD = "schedulers:"
_PAGE = "scheduler:"


class _Kept(msgspec.Struct, array_like=True):
    """What the state keeps of a scheduler between builds: what it was made of, and made."""

    made_of: str
    first: int
    last: int
    files: list[str]


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Kept).decode


class Schedulers(NamedTuple):
    """The site's schedulers (``every``), those its pages name (``named``), and their files."""

    every: list[SchedulerRow]
    named: list[SchedulerRow]
    files: set[str]


def reduce_schedulers(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    extra: Mapping[str, Finding],
    before: Mapping[str, str],
    after: dict[str, str],
) -> Schedulers:
    """Write the schedulers' jobs lists that changed and ``fleet.json``; return the schedulers.

    The pages name the schedulers only when there are several: with one, none is written.
    """
    totals = state.schedulers()
    names = [name for name, *_ in totals]
    several = len(totals) > 1
    by_scheduler: dict[str, list[Finding]] = {}
    if several and extra:
        for job_id, name in sorted(state.schedulers_of(sorted(extra)).items()):
            by_scheduler.setdefault(name, []).append(extra[job_id])
    kept_pages: dict[str, list[tuple[str, str]]] = {}
    for key, value in before.items():
        if key.startswith(_PAGE):
            kept_pages.setdefault(key[len(_PAGE) :].split("/", 2)[1], []).append((key, value))
    every: list[SchedulerRow] = []
    files: set[str] = set()
    fresh: list[tuple[str, int, int, int, int]] = []
    for name, jobs, failed, version in totals:
        made_of = signature(version, names if several else [], by_scheduler.get(name, []))
        record = before.get(_RECORD + name)
        kept = _decode(record) if record is not None else None
        if record is not None and kept is not None and kept.made_of == made_of:
            every.append(SchedulerRow(name, jobs, failed, kept.first, kept.last))
            files.update(kept.files)
            for key, value in kept_pages.get(urls.scheduler_dir(name).split("/")[1], []):
                after[key] = value
            after[_RECORD + name] = record
            continue
        fresh.append((name, jobs, failed, version, len(every)))
        every.append(SchedulerRow(name, jobs, failed, 0, 0))
    named = every if several else []
    for name, jobs, failed, version, at in fresh:
        first, last = state.scheduler_span(name)
        every[at] = SchedulerRow(name, jobs, failed, first, last)
        made = []
        if several:
            made = _write_pages(state, writer, pages, name, named, extra, before, after)
        files.update(made)
        made_of = signature(version, names if several else [], by_scheduler.get(name, []))
        after[_RECORD + name] = _encode(_Kept(made_of, first, last, made)).decode()
    return Schedulers(every, named, files)


def _write_pages(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    name: str,
    named: list[SchedulerRow],
    extra: Mapping[str, Finding],
    before: Mapping[str, str],
    after: dict[str, str],
) -> list[str]:
    """Write one scheduler's jobs list pages that changed; return all its files."""
    listed = state.scheduler_listed(name)
    archive = archive_pages(listed)
    spans = [p.name for p in archive]
    # Its newest page's "older" is the archive page of the next job, as the front page's.
    older = _page_holding(archive, listed[PAGE_CAPACITY]) if archive else None
    plan: list[tuple[ListPage | None, list[Listed], str | None, str | None]] = [
        (None, listed[:PAGE_CAPACITY], None, older)
    ]
    for n, page in enumerate(archive):
        newer = spans[n - 1] if n else None
        plan.append((page, page.jobs, newer, spans[n + 1] if n + 1 < len(spans) else None))
    filter_made_of = [r.name for r in named]
    files = []
    for archived, jobs, newer, older_name in plan:
        rel = str(urls.scheduler_page(name, archived.name if archived else None))
        files.append(rel)
        flagged = [extra[j[0]] for j in jobs if j[0] in extra]
        key = _PAGE + rel
        after[key] = signature(rel, newer, older_name, jobs, flagged, filter_made_of)
        if before.get(key) != after[key]:
            summaries = _summaries(state, jobs)
            pages.scheduler_page(writer, name, archived, summaries, newer, older_name, named, extra)
    return files


def _page_holding(archive: list[ListPage], job: Listed) -> str:
    """Return the name of the archive page that lists ``job``."""
    return next(p.name for p in archive if any(j[0] == job[0] for j in p.jobs))


def _summaries(state: State, jobs: list[Listed]) -> list[JobSummary]:
    """Return the summaries of the listed jobs, in their order."""
    found = state.summaries([j[0] for j in jobs])
    return [found[j[0]] for j in jobs]
