"""The reduce step's pages across jobs: recurring jobs, failure groups, insights, their JSON.

Each is written from what the state keeps (a name's figures, the jobs worth a look), not from
every published job: at 100,000 jobs that would be most of an incremental build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec
from markupsafe import Markup

from sitegen.diagnose import failures, insights, recurring
from sitegen.diagnose.recurring import NameTrend
from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.links import Linker
from sitegen.render.pages import PageRenderer
from sitegen.svg import trend as trend_svg

# The Failures page links at most this many jobs per group (the newest); failures.json more.
JOBS_PER_GROUP = 50
# A name's page lists its newest runs, at most this many; its chart draws up to MAX_POINTS.
# Every change to a name rewrites its page: at 500 rows it was 300 kB, most of what removing
# one job rewrote at 100,000 jobs, and a table no phone scrolls through.
RUNS_SHOWN = 100


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


class NameRecord(msgspec.Struct, array_like=True, gc=False):
    """What the state keeps of one job name: its ``names.json`` entry and what its rows show."""

    entry: NameEntry
    failures: int
    latest_status: str
    regressions: dict[str, Finding]


def name_record(trend: NameTrend) -> NameRecord:
    """Return what the state keeps of a name's trend."""
    return NameRecord(name_entry(trend), trend.failures, trend.latest.status, trend.regressions)


encode_record = msgspec.msgpack.Encoder().encode
decode_record = msgspec.msgpack.Decoder(NameRecord).decode


def names_json(entries: Sequence[NameEntry]) -> bytes:
    """Encode ``names.json``: ``{"names": [...]}``, most runs first."""
    return msgspec.json.encode({"names": entries}) + b"\n"


@dataclass(frozen=True)
class RunRow:
    """One run in a name's runs table."""

    job: JobSummary
    duration_ms: int | None
    regression: Finding | None
    # Whether it failed (recurring.failed: an Invalid run too, with no failure message).
    failed: bool = False


def write_names(pages: PageRenderer, writer: SiteWriter, records: list[NameRecord]) -> None:
    """Write ``names.json`` and the Recurring jobs page, every name in its stored figures."""
    writer.write(urls.NAMES_JSON, names_json([r.entry for r in records]))
    writer.write(
        urls.RECURRING,
        pages.render(
            "recurring.html",
            urls.RECURRING,
            names=records,
            ratio=recurring.REGRESSION_RATIO,
            min_runs=recurring.MIN_EARLIER_RUNS,
        ),
    )


def write_name_page(
    pages: PageRenderer, writer: SiteWriter, trend: NameTrend, shown: Mapping[str, JobSummary]
) -> None:
    """Write one name's page; ``shown`` holds the summaries of its newest runs, by job id."""
    entry = name_entry(trend)
    page = urls.name_page(trend.name)
    link = Linker(page)
    points = [
        trend_svg.Point(j.job_id, j.start_time, took, j.failed, j.job_id in trend.regressions)
        for j in trend.runs
        if (took := recurring.duration_ms(j)) is not None
    ]
    # Built from escaped text only (sitegen.svg.trend escapes every label and link).
    chart = Markup(trend_svg.chart(points, f"Duration per run of {trend.name}", link.job))
    rows = [
        RunRow(shown[j.job_id], recurring.duration_ms(j), trend.regressions.get(j.job_id), j.failed)
        for j in reversed(newest_runs(trend))
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


def newest_runs(trend: NameTrend) -> list[recurring.Run]:
    """Return the runs a name's page lists, oldest first."""
    return trend.runs[-RUNS_SHOWN:]


def write_failures(
    pages: PageRenderer,
    writer: SiteWriter,
    groups: list[failures.GroupView],
    newest: Mapping[str, JobSummary],
) -> None:
    """Write the Failures page and ``failures.json``.

    ``newest`` holds the summaries of each group's newest JOBS_PER_GROUP jobs, by job id.
    """
    writer.write(urls.FAILURES_JSON, failures.failures_json(groups))
    writer.write(
        urls.FAILURES,
        pages.render(
            "failures.html",
            urls.FAILURES,
            groups=[(g, [newest[i] for i in newest_of_group(g)]) for g in groups],
            per_group=JOBS_PER_GROUP,
        ),
    )


def newest_of_group(group: failures.GroupView) -> list[str]:
    """Return the ids of the jobs the Failures page lists for a group, newest first."""
    return list(reversed(group.group.jobs[-JOBS_PER_GROUP:]))


def write_insights(
    pages: PageRenderer,
    writer: SiteWriter,
    worst: list[insights.JobInsight],
    nodes: list[insights.NodeInsight],
    flagged: list[tuple[str, int]],
) -> None:
    """Write the Insights page: the worst jobs, and executors flagged in several jobs.

    ``flagged`` holds every flagged executor with its count, most jobs first; ``nodes`` the
    first NODES_DETAILED of them with their newest jobs.
    """
    writer.write(
        urls.INSIGHTS,
        pages.render(
            "insights.html",
            urls.INSIGHTS,
            worst=worst,
            top=insights.TOP_JOBS,
            nodes=nodes,
            flagged=flagged,
            min_jobs=insights.MIN_JOBS_PER_NODE,
        ),
    )
