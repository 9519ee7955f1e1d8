"""The reduce step: the site-wide files, rendered from the state by query.

Nothing here holds every job's summary. ``/api/jobs`` joins the stored elements, counts and
the executors page come from SQL, the front page decodes the newest few jobs, and an
archive page of the jobs list (or a part of the find index) is rendered only when
what it is made from changed since the state last recorded it.
"""

from __future__ import annotations

from collections.abc import Mapping

from sitegen.builder.state.store import State
from sitegen.builder.trend_hooks import regressed, stored_records
from sitegen.diagnose import failures, insights
from sitegen.finding import Finding
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.publish import hosting
from sitegen.publish.writer import SiteWriter
from sitegen.render import api, trend_pages, urls
from sitegen.render.listing import (
    PAGE_CAPACITY,
    Listed,
    ListPage,
    day_listing,
    decode_day,
    encode_day,
    find_index,
    find_parts,
    signature,
)
from sitegen.render.pages import JOBS_PER_EXECUTOR, ExecutorRow, PageRenderer


def reduce(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    running: list[RunningJob],
    problems: list[Problem],
    stamp: float,
    days: set[int],
) -> set[str]:
    """Write the site-wide files that changed; return every site-wide file the site holds.

    ``days`` holds the UTC days (``start_time // DAY_MS``) whose jobs or their regressions
    changed. The pages of the names whose runs changed are written already (trend_hooks).
    """
    records = stored_records(state)
    extra = regressed(records)
    # What each listing and trend page was made of last time (read once), and now.
    before = state.list_pages()
    signatures: dict[str, str] = {}
    held, older = _listing(state, writer, pages, extra, days, before, signatures)
    by_status, tasks, failed = state.totals()
    newest = list(state.newest(PAGE_CAPACITY))
    pages.front_page(writer, newest, by_status, len(running), len(problems), older, extra)
    # With an archive, every published job is in one day's record: the array is theirs.
    jobs = state.jobs_json_by_day() if older is not None else state.jobs_json()
    for rel, chunks in api.site_files(jobs, by_status, tasks, failed, problems, stamp):
        writer.write_chunks(rel, chunks)
    pages.executors_page(writer, _executors(state))
    pages.site_pages(writer, running, problems)
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


class _Days:
    """The jobs list by UTC day: what the state keeps of each, and the days computed now."""

    def __init__(self, state: State, extra: Mapping[str, Finding]) -> None:
        self.state = state
        self.extra = extra
        self.stored = {day: decode_day(data) for day, data in state.list_days().items()}
        self.computed: dict[int, tuple[list[ListPage], list[ListPage]]] = {}

    def refresh(self, day: int) -> None:
        """Compute a day's pages and parts from its jobs and record them (or that it has none)."""
        jobs = self.state.listed_day(day)
        if not jobs:
            self.stored.pop(day, None)
            self.state.set_list_day(day, None)
            return
        record, pages, parts = day_listing(jobs, self.extra)
        before = self.stored.get(day)
        # Read again for a neighbour's sake, or for a regression that moved: record only what
        # changed. The parts' digests cover every job of the day (id, start, log): the same,
        # and its /api/jobs elements are too (0.1 s a day of 23,000 jobs to join again).
        if before != record:
            jobs_changed = before is None or before.parts != record.parts
            self.state.set_list_day(day, encode_day(record), jobs_changed)
        self.stored[day] = record
        self.computed[day] = (pages, parts)

    def pages(self, day: int) -> list[ListPage]:
        """Return a day's archive pages with their jobs (computed when first asked)."""
        if day not in self.computed:
            self.refresh(day)
        return self.computed[day][0]

    def parts(self, day: int) -> list[ListPage]:
        """Return a day's find-index parts with their jobs."""
        if day not in self.computed:
            self.refresh(day)
        return self.computed[day][1]

    def forget_all(self) -> None:
        """Drop every day (the site has one page of jobs: no archive)."""
        for day in list(self.stored):
            self.state.set_list_day(day, None)
        self.stored.clear()


def _listing(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    extra: Mapping[str, Finding],
    days: set[int],
    before: Mapping[str, str],
    after: dict[str, str],
) -> tuple[set[str], str | None]:
    """Write the archive pages and find-index parts that changed; return all their files.

    Also return the archive page the front page's "older" link points at (None: no archive).
    Only the ``days`` whose jobs changed are read from the state (and every day when the
    site first needs an archive); ``before`` holds the digest of what each page was made of
    last time, ``after`` receives what it is made of now.
    """
    listing = _Days(state, extra)
    if state.published_count() <= PAGE_CAPACITY:
        listing.forget_all()  # one page holds every job
        return set(), None
    if before.get("archived") != "1":
        days = set(state.published_days()) | listing.stored.keys()
    after["archived"] = "1"
    for day in sorted(days):
        listing.refresh(day)
    order = sorted(listing.stored, reverse=True)
    flat = [page.name for day in order for page in listing.stored[day].pages]
    position = {name: n for n, name in enumerate(flat)}
    files: set[str] = set()
    names: list[str] = []
    # The front page shows the newest PAGE_CAPACITY jobs; "older" is the page of the next one.
    next_job = state.nth_newest(PAGE_CAPACITY)
    assert next_job is not None
    older_id, older_day = next_job
    # A day at a time, its computed pages dropped when done: a full build computes every
    # day, and holding them all (each job's row) was a large part of its memory.
    for day in order:
        stored = listing.stored[day]
        for page in stored.pages:
            n = position[page.name]
            newer = flat[n - 1] if n else None
            older = flat[n + 1] if n + 1 < len(flat) else None
            key = f"page:{page.name}"
            after[key] = signature(page.name, page.label, newer, older, page.jobs, page.flagged)
            files.add(urls.list_page_file(page.name))
            if before.get(key) != after[key]:
                shown = next(p for p in listing.pages(day) if p.name == page.name)
                jobs = _summaries(state, shown.jobs)
                pages.archive_page(writer, shown, jobs, newer, older, extra)
        for name, digest in stored.parts:
            key = f"find:{name}"
            after[key] = signature(name, digest)
            files.add(urls.find_part_file(name))
            names.append(name)
            if before.get(key) != after[key]:
                part = next(p for p in listing.parts(day) if p.name == name)
                writer.write(urls.find_part(name), find_index(_summaries(state, part.jobs)))
        if day != older_day:
            listing.computed.pop(day, None)
    after["parts"] = signature(names)
    files.add(str(urls.FIND_INDEX))
    if before.get("parts") != after["parts"]:
        writer.write(urls.FIND_INDEX, find_parts(names))
    pages_of_day = listing.pages(older_day)
    older_page = next(p.name for p in pages_of_day if any(j[0] == older_id for j in p.jobs))
    return files, older_page


def _summaries(state: State, jobs: list[Listed]) -> list[JobSummary]:
    """Return the summaries of the listed jobs, in their order."""
    found = state.summaries([j[0] for j in jobs])
    return [found[j[0]] for j in jobs]


def _executors(state: State) -> list[ExecutorRow]:
    """Return the executors page's rows: totals by SQL, each executor's newest jobs decoded."""
    rows = [
        ExecutorRow(executor, tasks, failed, busy, count)
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
