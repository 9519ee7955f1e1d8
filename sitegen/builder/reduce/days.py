"""A jobs list cut by UTC day: the whole site's, or one scheduler's (its filter).

A list's archive pages are its days' pages, each day cut into spans as ``listing.cut_span``
cuts (so a page's name depends only on the jobs in its span). The state keeps what each day
was cut into (``listing.DayListing``): a change cuts again only the span of its day that
holds it (``listing.recut_span``), so one new log costs a few queries whatever the size of
the history. Where the list comes from is a ``Scope``: the site's published jobs (with the
find index's parts and their ``/api/jobs`` elements), or one scheduler's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from sitegen.builder.state.schema import DAY_MS
from sitegen.builder.state.store import State
from sitegen.finding import Finding
from sitegen.render.listing import (
    FIND_PART_CAPACITY,
    PAGE_CAPACITY,
    DayListing,
    Listed,
    ListPage,
    SpanRecord,
    cut_span,
    day_listing,
    decode_day,
    encode_day,
    recut_span,
    replace_span,
    span_end,
    span_records,
)

# A day with more changed jobs than this is cut again whole: each recut costs a few queries.
RECUT_LIMIT = 20


class Scope(Protocol):
    """The jobs a list holds, and where its days are kept."""

    def listed(self, begin: int, end: int) -> list[Listed]:
        """Return ``(job_id, start, digest)`` of its jobs started in a span, newest first."""

    def count(self, begin: int, end: int) -> int:
        """Return how many of its jobs started in a span."""

    def stored(self) -> dict[int, bytes]:
        """Return each of its days as recorded."""

    def store(self, day: int, data: bytes | None) -> None:
        """Record a day (None: it lists no job now)."""

    def index_parts(self, begin: int, end: int, parts: list[ListPage]) -> bool:
        """Record the find index's parts of a span; tell whether the list has a find index."""


class SiteScope:
    """The site's published jobs: the jobs list, with its find index."""

    def __init__(self, state: State) -> None:
        self.state = state

    def listed(self, begin: int, end: int) -> list[Listed]:
        """Return the published jobs started in a span."""
        return self.state.listed_span(begin, end)

    def count(self, begin: int, end: int) -> int:
        """Return how many published jobs started in a span."""
        return self.state.count_span(begin, end)

    def stored(self) -> dict[int, bytes]:
        """Return the jobs list's days as recorded."""
        return self.state.list_days()

    def store(self, day: int, data: bytes | None) -> None:
        """Record one of the jobs list's days."""
        self.state.set_list_day(day, data)

    def index_parts(self, begin: int, end: int, parts: list[ListPage]) -> bool:
        """Record the ``/api/jobs`` elements of the find parts of a span, in their order."""
        api = self.state.listed_api(begin, end) if parts else []
        rows, at = [], 0
        for part in parts:
            rows.append((part.name, part.jobs[0][1], b",".join(api[at : at + len(part.jobs)])))
            at += len(part.jobs)
        self.state.set_list_parts(begin, end, rows)
        return True


class SchedulerScope:
    """One scheduler's published jobs: its filter of the jobs list (no find index)."""

    def __init__(self, state: State, scheduler: str) -> None:
        self.state = state
        self.scheduler = scheduler

    def listed(self, begin: int, end: int) -> list[Listed]:
        """Return the scheduler's published jobs started in a span."""
        return self.state.scheduler_listed(self.scheduler, begin, end)

    def count(self, begin: int, end: int) -> int:
        """Return how many of the scheduler's published jobs started in a span."""
        return self.state.scheduler_count(self.scheduler, begin, end)

    def stored(self) -> dict[int, bytes]:
        """Return the scheduler's days as recorded."""
        return self.state.scheduler_days(self.scheduler)

    def store(self, day: int, data: bytes | None) -> None:
        """Record one of the scheduler's days."""
        self.state.set_scheduler_day(self.scheduler, day, data)

    def index_parts(self, begin: int, end: int, parts: list[ListPage]) -> bool:
        """Record nothing: a scheduler's pages have no find box (it would leave the filter)."""
        return False


class Days:
    """A list by UTC day: what the state keeps of each, and the pages cut now."""

    def __init__(self, scope: Scope, extra: Mapping[str, Finding]) -> None:
        self.scope = scope
        self.extra = extra
        self.stored = {day: decode_day(data) for day, data in scope.stored().items()}
        # The spans cut again in this build, with their jobs, by capacity and name (a page
        # and a part may share a name).
        self.cut: dict[tuple[int, str], ListPage] = {}

    def refresh(self, day: int, moments: list[int] | None = None) -> None:
        """Cut a day's pages and parts again and record them (or that it has none).

        ``moments``: the start times of its jobs that changed; only the spans holding them
        are cut again (None: the whole day).
        """
        before = self.stored.get(day)
        if before is None or moments is None or len(moments) > RECUT_LIMIT:
            record = self._whole(day)
        else:
            record = DayListing(list(before.pages), list(before.parts))
            for moment in sorted(moments):
                record.pages = self._recut(record.pages, moment, PAGE_CAPACITY, self.extra)
                if record.parts:
                    record.parts = self._recut(record.parts, moment, FIND_PART_CAPACITY, {})
        if not record.pages:
            self.stored.pop(day, None)
            self.scope.store(day, None)
        elif record != before:
            self.stored[day] = record
            self.scope.store(day, encode_day(record))

    def follow(self, moments: Iterable[int]) -> None:
        """Cut again the spans holding ``moments`` (start times of jobs that changed), by day."""
        by_day: dict[int, list[int]] = {}
        for moment in moments:
            by_day.setdefault(moment // DAY_MS, []).append(moment)
        for day, changed in sorted(by_day.items()):
            self.refresh(day, changed)

    def _whole(self, day: int) -> DayListing:
        """Cut a whole day from its jobs; record its parts, where the list has a find index."""
        begin = day * DAY_MS
        record, parts = day_listing(self.scope.listed(begin, begin + DAY_MS), self.extra)
        if not self.scope.index_parts(begin, begin + DAY_MS, parts):
            record.parts = []
        # Not kept: a full build cuts every day before writing any, and holding every job's
        # row until then was a large part of its memory. Each page changed reads its span.
        return record

    def _recut(
        self,
        records: list[SpanRecord],
        moment: int,
        capacity: int,
        extra: Mapping[str, Finding],
    ) -> list[SpanRecord]:
        """Cut again the span of ``records`` a change at ``moment`` touched; return them all."""
        level, begin, end = recut_span(records, moment, capacity, self.scope.count)
        fresh = cut_span(self.scope.listed(begin, end), level, capacity)
        if capacity == FIND_PART_CAPACITY:
            self.scope.index_parts(begin, end, fresh)
        for page in fresh:
            self.cut[capacity, page.name] = page
        return replace_span(records, begin, end, span_records(fresh, extra))

    def jobs_of(self, record: SpanRecord, capacity: int) -> ListPage:
        """Return a page or part with its jobs: as cut now, or cut again from its span."""
        cut = self.cut.get((capacity, record.name))
        if cut is None:
            jobs = self.scope.listed(record.begin, span_end(record))
            cut = next(p for p in cut_span(jobs, record.level, capacity) if p.name == record.name)
        return cut

    def page_of(self, job_id: str, start: int) -> str:
        """Return the name of the archive page that lists a job."""
        holding = [r for r in self.stored[start // DAY_MS].pages if r.begin <= start < span_end(r)]
        if len(holding) == 1:
            return holding[0].name
        # Numbered pages of one second: the job's is the one that lists it.
        return next(
            r.name
            for r in holding
            if any(j[0] == job_id for j in self.jobs_of(r, PAGE_CAPACITY).jobs)
        )

    def forget_all(self) -> None:
        """Drop every day and its find parts (the list has one page of jobs: no archive)."""
        for day in list(self.stored):
            self.scope.store(day, None)
            self.scope.index_parts(day * DAY_MS, (day + 1) * DAY_MS, [])
        self.stored.clear()

    def pages(self) -> list[SpanRecord]:
        """Return every archive page, newest first."""
        newest_first = sorted(self.stored, reverse=True)
        return [page for day in newest_first for page in self.stored[day].pages]
