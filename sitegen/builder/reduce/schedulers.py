"""The schedulers' part of the reduce: each one's jobs list, and ``fleet.json``.

A site built from several schedulers' logs (several ``--event-log-dir``s, or logs whose
JobStart names its ``scheduler_id``) lists each scheduler's jobs on pages of their own, the
filter of the jobs list: its newest jobs, then archive pages cut by UTC span as the whole
list's are (``listing.cut_span``), so a page's name depends only on the jobs in its span.
A page is rendered again only when what it is made of changed (its signature, kept with the
list's in the state).
"""

from __future__ import annotations

from collections.abc import Mapping

from sitegen.builder.state.store import State
from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.listing import PAGE_CAPACITY, Listed, ListPage, archive_pages, signature
from sitegen.render.pages import PageRenderer
from sitegen.render.schedulers import SchedulerRow, fleet_json, fleet_schedulers, scheduler_rows


def site_schedulers(state: State) -> list[SchedulerRow]:
    """Return every scheduler of the published jobs, by name (one query, grouped by index)."""
    return scheduler_rows(state.schedulers())


def shown(rows: list[SchedulerRow]) -> list[SchedulerRow]:
    """Return the schedulers the pages name: all of them when there are several, else none."""
    return rows if len(rows) > 1 else []


def write_fleet(writer: SiteWriter, rows: list[SchedulerRow]) -> None:
    """Write ``fleet.json`` at the site's root (its executors are another part's, empty here)."""
    writer.write(urls.FLEET_JSON, fleet_json([], fleet_schedulers(rows)))


def write_scheduler_pages(
    state: State,
    writer: SiteWriter,
    pages: PageRenderer,
    rows: list[SchedulerRow],
    extra: Mapping[str, Finding],
    before: Mapping[str, str],
    after: dict[str, str],
) -> set[str]:
    """Write the schedulers' jobs lists that changed; return all their files (none: one scheduler).

    Each scheduler's jobs are read as ``(id, start, digest)`` rows by index (a query of its
    jobs each build); only the pages whose signature changed decode their summaries.
    """
    files: set[str] = set()
    filter_made_of = [r.name for r in rows]
    for row in rows:
        listed = state.scheduler_listed(row.name)
        archive = archive_pages(listed)
        names = [p.name for p in archive]
        newest = listed[:PAGE_CAPACITY]
        # The newest page's "older" is the archive page of the next job, as the front page's.
        older = _page_holding(archive, listed[PAGE_CAPACITY]) if archive else None
        plan: list[tuple[str | None, list[Listed], str | None, str | None]] = [
            (None, newest, None, older)
        ]
        for n, page in enumerate(archive):
            newer = names[n - 1] if n else None
            plan.append((page.name, page.jobs, newer, names[n + 1] if n + 1 < len(names) else None))
        by_name = {p.name: p for p in archive}
        for name, jobs, newer, older_name in plan:
            rel = str(urls.scheduler_page(row.name, name))
            files.add(rel)
            flagged = [extra[j[0]] for j in jobs if j[0] in extra]
            key = f"scheduler:{rel}"
            after[key] = signature(rel, newer, older_name, jobs, flagged, filter_made_of)
            if before.get(key) == after[key]:
                continue
            summaries = _summaries(state, jobs)
            archived = by_name[name] if name is not None else None
            pages.scheduler_page(
                writer, row.name, archived, summaries, newer, older_name, rows, extra
            )
    return files


def _page_holding(archive: list[ListPage], job: Listed) -> str:
    """Return the name of the archive page that lists ``job``."""
    return next(p.name for p in archive if any(j[0] == job[0] for j in p.jobs))


def _summaries(state: State, jobs: list[Listed]) -> list[JobSummary]:
    """Return the summaries of the listed jobs, in their order."""
    found = state.summaries([j[0] for j in jobs])
    return [found[j[0]] for j in jobs]
