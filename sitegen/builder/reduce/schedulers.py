"""The schedulers' part of the reduce: each one's jobs list, and ``fleet.json``.

A site built from several schedulers' logs (several ``--event-log-dir``s, or logs whose
JobStart names its ``scheduler_id``) lists each scheduler's jobs on pages of their own, the
filter of the jobs list: its newest jobs, then archive pages cut by UTC day and span as the
whole list's are (``reduce/days.py``), so a page's name depends only on the jobs in its span.

Cost follows the change: the state counts each scheduler's jobs and the changes to them
(``scheduler_total``); a scheduler none of whose jobs changed (nor the regressions of its
jobs, nor the set of schedulers) keeps its pages and its time range as recorded, with no
query of its jobs. A changed one cuts again only the spans its changed jobs started in (it
keeps what each of its days was cut into) and renders only the pages whose signature changed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import NamedTuple

import msgspec

from sitegen.builder.reduce.days import Days, SchedulerScope
from sitegen.builder.state.store import State
from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.listing import PAGE_CAPACITY, Listed, signature
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


class Changes(NamedTuple):
    """What the reduce knows of this build's changes, for the schedulers' pages."""

    # The reduce step's findings (regressions) by job id.
    extra: Mapping[str, Finding]
    # What each page was made of when last written (the state's list_page rows).
    before: Mapping[str, str]
    # The start times of the jobs that came, went or changed (None: any may have).
    moments: Collection[int] | None


class Schedulers(NamedTuple):
    """The site's schedulers (``every``), those its pages name (``named``), and their files."""

    every: list[SchedulerRow]
    named: list[SchedulerRow]
    files: set[str]


def reduce_schedulers(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    changes: Changes,
    after: dict[str, str],
) -> Schedulers:
    """Write the schedulers' jobs lists that changed and ``fleet.json``; return the schedulers.

    The pages name the schedulers only when there are several: with one, none is written.
    """
    extra, before = changes.extra, changes.before
    totals = state.schedulers()
    names = [name for name, *_ in totals]
    several = len(totals) > 1
    state.keep_scheduler_days(names if several else [])
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
            made = _write_pages(state, writer, pages, name, named, changes, after)
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
    changes: Changes,
    after: dict[str, str],
) -> list[str]:
    """Write one scheduler's jobs list pages that changed; return all its files.

    Its days are cut again where ``changes.moments`` fall (every day the first time), as the
    whole list's are (``reduce/days.py``): a new log costs a few queries at any size.
    """
    days = Days(SchedulerScope(state, name), changes.extra)
    newest = state.scheduler_newest(name, PAGE_CAPACITY + 1)
    archived = len(newest) > PAGE_CAPACITY
    if not archived:
        days.forget_all()  # one page holds every job of it
    elif not days.stored or changes.moments is None:
        for day in state.scheduler_published_days(name):
            days.refresh(day)
    else:
        days.follow(changes.moments)
    archive = days.pages()
    spans = [p.name for p in archive]
    # Its newest page's "older" is the archive page of the next job, as the front page's.
    older = days.page_of(newest[PAGE_CAPACITY][0], newest[PAGE_CAPACITY][1]) if archived else None
    filter_made_of = [r.name for r in named]
    files = [str(urls.scheduler_page(name))]
    key = _PAGE + files[0]
    front = newest[:PAGE_CAPACITY]
    flagged = [changes.extra[j[0]] for j in front if j[0] in changes.extra]
    after[key] = signature(files[0], None, older, front, flagged, filter_made_of)
    if changes.before.get(key) != after[key]:
        jobs = _summaries(state, front)
        pages.scheduler_page(writer, name, None, jobs, None, older, named, changes.extra)
    for n, record in enumerate(archive):
        newer = spans[n - 1] if n else None
        older_name = spans[n + 1] if n + 1 < len(spans) else None
        rel = str(urls.scheduler_page(name, record.name))
        files.append(rel)
        key = _PAGE + rel
        made_of = (record.label, record.jobs, record.flagged)
        after[key] = signature(rel, newer, older_name, made_of, filter_made_of)
        if changes.before.get(key) != after[key]:
            page = days.jobs_of(record, PAGE_CAPACITY)
            jobs = _summaries(state, page.jobs)
            pages.scheduler_page(writer, name, page, jobs, newer, older_name, named, changes.extra)
    return files


def _summaries(state: State, jobs: list[Listed]) -> list[JobSummary]:
    """Return the summaries of the listed jobs, in their order."""
    found = state.summaries([j[0] for j in jobs])
    return [found[j[0]] for j in jobs]
