"""The reduce step: the site-wide files, rendered from the state by query.

Nothing here holds every job's summary. ``/api/jobs`` joins the stored elements, counts and
the executors page come from SQL, the front page decodes the newest few jobs, and an
archive page of the jobs list (or a part of the find index) is rendered only when
what it is made from changed since the state last recorded it.
"""

from __future__ import annotations

from collections.abc import Mapping

from sitegen.builder.manifest import State
from sitegen.builder.trend_hooks import regressed, stored_records
from sitegen.diagnose import failures, insights
from sitegen.diagnose.finding import Finding
from sitegen.diagnose.recurring import NameTrend
from sitegen.model import JobSummary, Problem, RunningJob
from sitegen.publish import hosting
from sitegen.publish.writer import SiteWriter
from sitegen.render import api, trend_pages, urls
from sitegen.render.listing import (
    PAGE_CAPACITY,
    Listed,
    ListPage,
    archive_pages,
    find_index,
    find_parts,
    find_spans,
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
    touched: list[NameTrend],
) -> set[str]:
    """Write the site-wide files that changed; return every site-wide file the site holds.

    ``touched`` holds the trends of the job names whose runs this build changed.
    """
    listed = state.listed()
    archive = archive_pages(listed)
    records = stored_records(state)
    extra = regressed(records)
    signatures: dict[str, str] = {}
    held = _listing(state, writer, pages, listed, archive, extra, signatures)
    by_status, tasks, failed = state.totals()
    older = _page_of(archive, listed[PAGE_CAPACITY][0]) if archive else None
    newest = list(state.newest(PAGE_CAPACITY))
    pages.front_page(writer, newest, by_status, len(running), len(problems), older, extra)
    for rel, data in api.site_files(state.jobs_json(), by_status, tasks, failed, problems, stamp):
        writer.write(rel, data)
    pages.executors_page(writer, _executors(state))
    pages.site_pages(writer, running, problems)
    held |= _trends(state, writer, pages, touched, records, extra, signatures)
    for name, text in hosting.site_files().items():
        writer.write(name, text.encode())
    state.set_list_pages(signatures)
    files = held | set(writer.written_names())
    state.set_site_files(files)
    return files


def _trends(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    touched: list[NameTrend],
    records: list[trend_pages.NameRecord],
    extra: Mapping[str, Finding],
    signatures: dict[str, str],
) -> set[str]:
    """Write the pages across jobs that changed; return all their files.

    Names whose runs did not change keep their pages; Failures and Insights are rendered
    again only when a job worth a look (or a regression) came, went or changed.
    """
    trend_pages.write_names(pages, writer, records)
    for trend in touched:
        shown = [r.job_id for r in trend_pages.newest_runs(trend)]
        trend_pages.write_name_page(pages, writer, trend, state.summaries(shown))
    files = {str(urls.name_page(r.entry.name)) for r in records}
    files.update(str(p) for p in (urls.FAILURES, urls.FAILURES_JSON, urls.INSIGHTS))
    # Each is rendered again only when what it is made from changed: failure rows came or
    # went; the worst jobs, a regression or a flagged executor's newest jobs changed.
    version = signature(state.failure_version())
    if state.list_pages().get("failures") != version:
        groups = failures.groups_of(state.failure_rows())
        shown = sorted({i for g in groups for i in trend_pages.newest_of_group(g)})
        trend_pages.write_failures(pages, writer, groups, state.summaries(shown))
    signatures["failures"] = version
    worst = state.worst(insights.TOP_JOBS)
    nodes = [
        (executor, count, state.flagged_jobs(executor, insights.JOBS_PER_NODE))
        for executor, count in state.flagged_executors(insights.MIN_JOBS_PER_NODE)
    ]
    made_of = signature(worst, sorted(extra.items()), nodes)
    if state.list_pages().get("insights") != made_of:
        ids = {i for i, _ in worst} | extra.keys() | {i for *_, jobs in nodes for i, _ in jobs}
        jobs = state.summaries(sorted(ids))
        candidates = [jobs[i] for i, _ in worst] + [jobs[i] for i in extra if i in jobs]
        trend_pages.write_insights(
            pages,
            writer,
            insights.worst_jobs(list({j.job_id: j for j in candidates}.values()), extra),
            [
                insights.NodeInsight(
                    executor, count, [insights.about_executor(jobs[i], executor) for i, _ in ids_]
                )
                for executor, count, ids_ in nodes
            ],
        )
    signatures["insights"] = made_of
    return files


def _page_of(archive: list[ListPage], job_id: str) -> str:
    """Return the name of the archive page listing ``job_id``."""
    return next(p.name for p in archive if any(j[0] == job_id for j in p.jobs))


def _listing(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    listed: list[Listed],
    archive: list[ListPage],
    extra: Mapping[str, Finding],
    after: dict[str, str],
) -> set[str]:
    """Write the archive pages and find-index parts that changed; return all their files.

    ``after`` receives the signature of what each was made from.
    """
    before = state.list_pages()
    files: set[str] = set()
    for n, page in enumerate(archive):
        newer = archive[n - 1].name if n else None
        older = archive[n + 1].name if n + 1 < len(archive) else None
        key = f"page:{page.name}"
        # A regression shows in its job's row: what the page is made from includes them.
        flagged = [extra[j[0]] for j in page.jobs if j[0] in extra]
        after[key] = signature(page.name, page.label, newer, older, page.jobs, flagged)
        files.add(str(urls.list_page(page.name)))
        if before.get(key) != after[key]:
            summaries = _summaries(state, page.jobs)
            pages.archive_page(writer, page, summaries, newer, older, extra)
    parts = find_spans(listed) if archive else []
    for part in parts:
        key = f"find:{part.name}"
        after[key] = signature(part.name, part.jobs)
        files.add(str(urls.find_part(part.name)))
        if before.get(key) != after[key]:
            writer.write(urls.find_part(part.name), find_index(_summaries(state, part.jobs)))
    if archive:
        names = [part.name for part in parts]
        after["parts"] = signature(names)
        files.add(str(urls.FIND_INDEX))
        if before.get("parts") != after["parts"]:
            writer.write(urls.FIND_INDEX, find_parts(names))
    return files


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
