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
from sitegen.builder.reduce.days import Days, SiteScope
from sitegen.builder.reduce.schedulers import Changes, reduce_schedulers
from sitegen.builder.state.store import State
from sitegen.diagnose import failures, insights
from sitegen.diagnose.failures import ExecutorError
from sitegen.diagnose.fleet import Cell, FleetExecutor, judge
from sitegen.finding import Finding
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.publish import hosting
from sitegen.publish.writer import SiteWriter
from sitegen.render import api, trend_pages, urls
from sitegen.render.fleet import fleet_json
from sitegen.render.listing import (
    FIND_PART_CAPACITY,
    PAGE_CAPACITY,
    Listed,
    find_index,
    find_parts,
    signature,
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
    ran = reduce_schedulers(state, writer, pages, Changes(extra, before, moments), signatures)
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
    errors = {
        executor: [ExecutorError(*row) for row in rows]
        for executor, rows in state.executor_errors(ERRORS_PER_EXECUTOR).items()
    }
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
    listing = Days(SiteScope(state), extra)
    if published <= PAGE_CAPACITY:
        listing.forget_all()  # one page holds every job
        return set(), None
    if before.get("archived") != "1":
        for day in sorted(set(state.published_days()) | listing.stored.keys()):
            listing.refresh(day)
    else:
        listing.follow(moments)
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
        judge(executor_id, *state.executor_seen(executor_id), [Cell(*row) for row in rows])
        for executor_id, rows in state.executor_cells().items()
    ]
