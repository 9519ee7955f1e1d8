"""The reduce step's pages across jobs: recurring jobs, failure groups, insights, their JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
from markupsafe import Markup

from sitegen.diagnose import failures, insights, recurring
from sitegen.diagnose.finding import Finding
from sitegen.diagnose.recurring import NameTrend
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.links import Linker
from sitegen.render.pages import PageRenderer
from sitegen.svg import trend as trend_svg

# The Failures page links at most this many jobs per group (the newest); the JSON has all.
JOBS_PER_GROUP = 50
# A name's page lists its newest runs, at most this many (a nightly job runs 365 times a
# year, and each row costs a template loop); the chart draws as many.
RUNS_SHOWN = trend_svg.MAX_POINTS


class NameEntry(msgspec.Struct):
    """One job name as ``names.json`` lists it."""

    name: str
    page: str
    runs: int
    median_ms: int | None
    p90_ms: int | None
    failure_rate: float
    latest_job_id: str
    latest_regressed: bool


def name_entry(trend: NameTrend) -> NameEntry:
    """Return a name's ``names.json`` entry."""
    return NameEntry(
        name=trend.name,
        page=str(urls.name_page(trend.name)),
        runs=len(trend.runs),
        median_ms=trend.median_ms,
        p90_ms=trend.p90_ms,
        failure_rate=round(trend.failure_rate, 4),
        latest_job_id=trend.latest.job_id,
        latest_regressed=trend.latest_regressed,
    )


def names_json(entries: Sequence[NameEntry]) -> bytes:
    """Encode ``names.json``: ``{"names": [...]}``, most runs first."""
    return msgspec.json.encode({"names": entries}) + b"\n"


@dataclass(frozen=True)
class RunRow:
    """One run in a name's runs table."""

    job: JobSummary
    duration_ms: int | None
    regression: Finding | None


def write(
    pages: PageRenderer, writer: SiteWriter, jobs: list[JobSummary], found: list[NameTrend]
) -> None:
    """Write the Recurring jobs, per-name, Failures and Insights pages and the two JSON files."""
    entries = [name_entry(t) for t in found]
    writer.write(urls.NAMES_JSON, names_json(entries))
    writer.write(
        urls.RECURRING,
        pages.render(
            "recurring.html",
            urls.RECURRING,
            names=list(zip(found, entries, strict=True)),
            ratio=recurring.REGRESSION_RATIO,
            min_runs=recurring.MIN_EARLIER_RUNS,
        ),
    )
    for trend, entry in zip(found, entries, strict=True):
        page = urls.name_page(trend.name)
        link = Linker(page)
        points = [
            trend_svg.Point(
                j.job_id,
                j.start_time,
                took,
                recurring.failed(j),
                j.job_id in trend.regressions,
            )
            for j in trend.runs
            if (took := recurring.duration_ms(j)) is not None
        ]
        # Built from escaped text only (sitegen.svg.trend escapes every label and link).
        chart = Markup(trend_svg.chart(points, f"Duration per run of {trend.name}", link.job))
        rows = [
            RunRow(j, recurring.duration_ms(j), trend.regressions.get(j.job_id))
            for j in reversed(trend.runs[-RUNS_SHOWN:])
        ]
        writer.write(
            page,
            pages.render(
                "name.html",
                page,
                trend=trend,
                entry=entry,
                chart=chart,
                drawn=min(len(points), trend_svg.MAX_POINTS),
                rows=rows,
            ),
        )
    groups = failures.failure_groups(jobs)
    writer.write(urls.FAILURES_JSON, failures.failures_json(groups))
    by_id = {j.job_id: j for j in jobs}
    writer.write(
        urls.FAILURES,
        pages.render(
            "failures.html",
            urls.FAILURES,
            groups=[
                (g, [by_id[i] for i in reversed(g.group.jobs[-JOBS_PER_GROUP:])]) for g in groups
            ],
            per_group=JOBS_PER_GROUP,
        ),
    )
    extra = {job_id: f for t in found for job_id, f in t.regressions.items()}
    writer.write(
        urls.INSIGHTS,
        pages.render(
            "insights.html",
            urls.INSIGHTS,
            worst=insights.worst_jobs(jobs, extra),
            top=insights.TOP_JOBS,
            nodes=insights.flagged_executors(jobs),
            min_jobs=insights.MIN_JOBS_PER_NODE,
        ),
    )
