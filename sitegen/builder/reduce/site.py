"""The reduce step: the site-wide files, rendered from the state by query.

Nothing here holds every job's summary. ``/api/jobs`` joins the stored elements, counts and
the executors page come from SQL, the front page decodes the newest few jobs, and an
archive page of the jobs list (or a part of the find index) is rendered only when
what it is made from changed since the state last recorded it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from sitegen.builder.contexts.foresight import regressed, stored_records
from sitegen.builder.reduce.datafiles import write_data
from sitegen.builder.reduce.schedulers import reduce_schedulers
from sitegen.builder.state.schema import DAY_MS
from sitegen.builder.state.store import State
from sitegen.diagnose import failures, insights
from sitegen.diagnose.failures import ExecutorError
from sitegen.diagnose.fleet import FleetExecutor, judge
from sitegen.finding import Finding
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.publish import hosting
from sitegen.publish.writer import SiteWriter
from sitegen.render import api, trend_pages, urls
from sitegen.render.fleet import fleet_json
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
    find_index,
    find_parts,
    recut_span,
    replace_span,
    signature,
    span_end,
    span_records,
)
from sitegen.render.pages import (
    ERRORS_PER_EXECUTOR,
    JOBS_PER_EXECUTOR,
    ExecutorRow,
    PageRenderer,
)
from sitegen.render.schedulers import SchedulerRow, fleet_schedulers


class DataChange(NamedTuple):
    """What a build changed of the SQL tables: the logs it mapped, removed or (un)published."""

    # Their keys; None: every log (a full build).
    keys: Iterable[str] | None


def reduce(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    running: list[RunningJob],
    problems: list[Problem],
    stamp: float,
    moments: set[int],
    data: DataChange | None = None,
) -> set[str]:
    """Write the site-wide files that changed; return every site-wide file the site holds.

    ``moments`` holds the start times of the jobs that came, went or changed, or whose
    regressions did. The pages of the names whose runs changed are written already
    (contexts/foresight.py). ``data``: what changed of the SQL tables (None: the site has none).
    """
    records = stored_records(state)
    extra = regressed(records)
    held = set() if data is None else write_data(state, writer, data.keys, extra)
    # What each listing and trend page was made of last time (read once), and now.
    before = state.list_pages()
    signatures: dict[str, str] = {}
    by_status, tasks, failed = state.totals()
    published = sum(by_status.values())
    ran = reduce_schedulers(state, writer, pages, extra, before, signatures)
    named = ran.named
    held |= ran.files
    listed, older = _listing(
        state, writer, pages, extra, published, moments, before, signatures, named
    )
    held |= listed
    newest = list(state.newest(PAGE_CAPACITY))
    # A job that ended unrecorded is listed beside the running ones, but is not running.
    still = sum(1 for r in running if r.ended is None)
    pages.front_page(writer, newest, by_status, still, len(problems), older, extra, named)
    # With an archive, every published job is in one find part: the array is theirs.
    jobs = state.jobs_json_by_part() if older is not None else state.jobs_json()
    for rel, chunks in api.site_files(jobs, by_status, tasks, failed, problems, stamp):
        writer.write_chunks(rel, chunks)
    fleet = judge_fleet(state)
    errors = state.executor_errors(ERRORS_PER_EXECUTOR)
    pages.executors_page(writer, _executors(state, errors), fleet)
    writer.write(urls.FLEET_JSON, fleet_json(fleet, fleet_schedulers(ran.every), errors))
    held |= pages.site_pages(writer, running, problems, state.site_files())
    held |= _trends(state, writer, pages, records, extra, before, signatures)
    for name, text in hosting.site_files().items():
        writer.write(name, text.encode())
    state.set_list_pages(signatures, before)
    files = held | set(writer.written_names())
    state.set_site_files(files)
    return files


def _trends(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    records: list[trend_pages.NameRecord],
    extra: Mapping[str, Finding],
    before: Mapping[str, str],
    signatures: dict[str, str],
) -> set[str]:
    """Write the pages across jobs that changed; return all their files.

    Names whose runs did not change keep their pages; Failures and Insights are rendered
    again only when a job worth a look (or a regression) came, went or changed.
    """
    trend_pages.write_names(pages, writer, records)
    files = {str(urls.name_page(r.entry.name)) for r in records}
    files.update(str(p) for p in (urls.FAILURES, urls.FAILURES_JSON, urls.INSIGHTS))
    # Each is rendered again only when what it is made from changed: failure rows came or
    # went; the worst jobs, a regression or a flagged executor's newest jobs changed.
    version = signature(state.failure_version())
    if before.get("failures") != version:
        groups = failures.groups_of(map(failures.FailureRow._make, state.failure_rows()))
        shown = sorted({i for g in groups for i in trend_pages.newest_of_group(g)})
        trend_pages.write_failures(pages, writer, groups, state.summaries(shown))
    signatures["failures"] = version
    # The worst jobs: of those worst by their own findings and those a regression adds one to
    # (no other can overtake them), ranked by the state's figures; only those listed decoded.
    figures = state.ranked([i for i, _ in state.worst(insights.TOP_JOBS)] + list(extra))
    worst = [
        (i, figures[i][1], extra.get(i))
        for i in insights.worst_ids((insights.Ranked(*f) for f, _ in figures.values()), extra)
    ]
    flagged = state.flagged_executors(insights.MIN_JOBS_PER_NODE)
    nodes = [
        (executor, count, state.flagged_jobs(executor, insights.JOBS_PER_NODE))
        for executor, count in flagged[: insights.NODES_DETAILED]
    ]
    made_of = signature(worst, flagged, nodes)
    if before.get("insights") != made_of:
        ids = {i for i, *_ in worst} | {i for *_, jobs in nodes for i, _ in jobs}
        jobs = state.summaries(sorted(ids))
        trend_pages.write_insights(
            pages,
            writer,
            insights.worst_jobs([jobs[i] for i, *_ in worst], extra),
            [
                insights.NodeInsight(
                    executor, count, [insights.about_executor(jobs[i], executor) for i, _ in ids_]
                )
                for executor, count, ids_ in nodes
            ],
            flagged,
        )
    signatures["insights"] = made_of
    return files


# A day with more changed jobs than this is cut again whole: each recut costs a few queries.
RECUT_LIMIT = 20


class _Days:
    """The jobs list by UTC day: what the state keeps of each, and the pages cut now."""

    def __init__(self, state: State, extra: Mapping[str, Finding]) -> None:
        self.state = state
        self.extra = extra
        self.stored = {day: decode_day(data) for day, data in state.list_days().items()}
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
                record.parts = self._recut(record.parts, moment, FIND_PART_CAPACITY, {})
        if not record.pages:
            self.stored.pop(day, None)
            self.state.set_list_day(day, None)
        elif record != before:
            self.stored[day] = record
            self.state.set_list_day(day, encode_day(record))

    def _whole(self, day: int) -> DayListing:
        """Cut a whole day from its jobs; record its parts' ``/api/jobs`` elements."""
        begin = day * DAY_MS
        jobs = self.state.listed_span(begin, begin + DAY_MS)
        record, parts = day_listing(jobs, self.extra)
        api = self.state.listed_api(begin, begin + DAY_MS)
        self._record_parts(begin, begin + DAY_MS, parts, api)
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
        level, begin, end = recut_span(records, moment, capacity, self.state.count_span)
        fresh = cut_span(self.state.listed_span(begin, end), level, capacity)
        if capacity == FIND_PART_CAPACITY:
            self._record_parts(begin, end, fresh, self.state.listed_api(begin, end))
        for page in fresh:
            self.cut[capacity, page.name] = page
        return replace_span(records, begin, end, span_records(fresh, extra))

    def _record_parts(self, begin: int, end: int, parts: list[ListPage], api: list[bytes]) -> None:
        """Record the ``/api/jobs`` elements of the parts of a span (``api``: its jobs')."""
        rows, at = [], 0
        for part in parts:
            rows.append((part.name, part.jobs[0][1], b",".join(api[at : at + len(part.jobs)])))
            at += len(part.jobs)
        self.state.set_list_parts(begin, end, rows)

    def jobs_of(self, record: SpanRecord, capacity: int) -> ListPage:
        """Return a page or part with its jobs: as cut now, or cut again from its span."""
        cut = self.cut.get((capacity, record.name))
        if cut is None:
            jobs = self.state.listed_span(record.begin, span_end(record))
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
        """Drop every day (the site has one page of jobs: no archive)."""
        for day in list(self.stored):
            self.state.set_list_day(day, None)
            self.state.set_list_parts(day * DAY_MS, (day + 1) * DAY_MS, [])
        self.stored.clear()


def _listing(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    extra: Mapping[str, Finding],
    published: int,
    moments: set[int],
    before: Mapping[str, str],
    after: dict[str, str],
    named: list[SchedulerRow],
) -> tuple[set[str], str | None]:
    """Write the archive pages and find-index parts that changed; return all their files.

    Also return the archive page the front page's "older" link points at (None: no archive).
    Only the spans holding ``moments`` are cut again (every day when the site first needs
    an archive); ``before`` holds the digest of what each page was made of last time,
    ``after`` receives what it is made of now.
    """
    listing = _Days(state, extra)
    if published <= PAGE_CAPACITY:
        listing.forget_all()  # one page holds every job
        return set(), None
    if before.get("archived") != "1":
        for day in sorted(set(state.published_days()) | listing.stored.keys()):
            listing.refresh(day)
    else:
        by_day: dict[int, list[int]] = {}
        for moment in moments:
            by_day.setdefault(moment // DAY_MS, []).append(moment)
        for day, changed in sorted(by_day.items()):
            listing.refresh(day, changed)
    after["archived"] = "1"
    order = sorted(listing.stored, reverse=True)
    flat = [page.name for day in order for page in listing.stored[day].pages]
    position = {name: n for n, name in enumerate(flat)}
    files: set[str] = set()
    names: list[str] = []
    for day in order:
        stored = listing.stored[day]
        for page in stored.pages:
            n = position[page.name]
            newer = flat[n - 1] if n else None
            older = flat[n + 1] if n + 1 < len(flat) else None
            key = f"page:{page.name}"
            after[key] = signature(page.name, page.label, newer, older, page.jobs, page.flagged)
            if named:  # the filter's links and the scheduler column: the schedulers' names
                after[key] = signature(after[key], [r.name for r in named])
            files.add(urls.list_page_file(page.name))
            if before.get(key) != after[key]:
                shown = listing.jobs_of(page, PAGE_CAPACITY)
                jobs = _summaries(state, shown.jobs)
                pages.archive_page(writer, shown, jobs, newer, older, extra, named)
        for part in stored.parts:
            key = f"find:{part.name}"
            after[key] = signature(part.name, part.jobs)
            files.add(urls.find_part_file(part.name))
            names.append(part.name)
            if before.get(key) != after[key]:
                cut = listing.jobs_of(part, FIND_PART_CAPACITY)
                writer.write(urls.find_part(part.name), find_index(_summaries(state, cut.jobs)))
    after["parts"] = signature(names)
    files.add(str(urls.FIND_INDEX))
    if before.get("parts") != after["parts"]:
        writer.write(urls.FIND_INDEX, find_parts(names))
    # The front page shows the newest PAGE_CAPACITY jobs; "older" is the page of the next one.
    next_job = state.nth_newest(PAGE_CAPACITY)
    assert next_job is not None
    return files, listing.page_of(*next_job)


def _summaries(state: State, jobs: list[Listed]) -> list[JobSummary]:
    """Return the summaries of the listed jobs, in their order."""
    found = state.summaries([j[0] for j in jobs])
    return [found[j[0]] for j in jobs]


def _executors(state: State, errors: Mapping[str, list[ExecutorError]]) -> list[ExecutorRow]:
    """Return the executors page's rows: totals by SQL, each executor's newest jobs decoded."""
    rows = [
        ExecutorRow(executor, tasks, failed, busy, count, errors=errors.get(executor, []))
        for executor, tasks, failed, busy, count in state.executors()
    ]
    newest = {
        row.executor_id: state.executor_jobs(row.executor_id, JOBS_PER_EXECUTOR) for row in rows
    }
    summaries = state.summaries(sorted({job[0] for jobs in newest.values() for job in jobs}))
    for row in rows:
        row.jobs = [
            (summaries[job_id], tasks, failed, busy)
            for job_id, tasks, failed, busy in newest[row.executor_id]
        ]
    return rows


def judge_fleet(state: State) -> list[FleetExecutor]:
    """Judge every executor of the published jobs from the state's hourly sums (fleet.py)."""
    return [
        judge(executor_id, *state.executor_seen(executor_id), cells)
        for executor_id, cells in state.executor_cells().items()
    ]
