"""Render the ``/api/*`` mirror: a job's files (map) and the site-wide files (reduce)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

import msgspec

from sitegen.eventlog import schema
from sitegen.layout import JOB_ENDPOINTS, SITE_ENDPOINTS, Body, Endpoint, endpoint_file, html_copy
from sitegen.model import JobSummary, Problem
from sitegen.render import dot
from sitegen.text.htmlsafe import json_for_html, text_for_html
from sitegen.version import __version__

ApiFile = tuple[PurePosixPath, bytes]
_encode = msgspec.json.Encoder().encode


def endpoint_files(endpoint: Endpoint, content: bytes, **segments: str) -> Iterator[ApiFile]:
    """Yield an endpoint's exact body and, for a prefix endpoint, its HTML-safe copy."""
    yield endpoint_file(endpoint, **segments), content
    copy = html_copy(endpoint, **segments)
    if copy is not None:
        escape = json_for_html if endpoint.body is Body.JSON else text_for_html
        yield copy, escape(content)


def job_endpoints(
    job_id: str, job_dot: str
) -> Iterator[tuple[Endpoint, dict[str, str], dot.Cluster | None]]:
    """Yield each endpoint of one job with its path segments; one per stage for a stage DOT."""
    for endpoint in JOB_ENDPOINTS:
        if "{stage_id}" not in endpoint.template:
            yield endpoint, {"job_id": job_id}, None
            continue
        for cluster in dot.clusters(job_dot):
            yield endpoint, {"job_id": job_id, "stage_id": cluster.stage_id}, cluster


def job_files(
    job_id: str, job_end: schema.JobEnd
) -> Iterator[tuple[PurePosixPath, bytes, PurePosixPath | None]]:
    """Yield every ``/api/job/{id}/…`` file of one completed job, payloads byte for byte.

    Each comes with the file before it when both hold the same bytes (an HTML-safe copy
    with nothing to escape, nearly always), else None: the writer may link the two.
    """
    bodies = {
        "job/{job_id}": bytes(job_end.job),
        "job/{job_id}/stages": bytes(job_end.stages),
        "job/{job_id}/config": bytes(job_end.config),
        "job/{job_id}/dot": job_end.dot.encode(),
    }
    for endpoint, segments, cluster in job_endpoints(job_id, job_end.dot):
        body = bodies[endpoint.template] if cluster is None else dot.stage_dot(cluster).encode()
        before: ApiFile | None = None
        for rel, data in endpoint_files(endpoint, body, **segments):
            yield rel, data, before[0] if before is not None and before[1] == data else None
            before = rel, data


def list_entry(job: JobSummary) -> bytes:
    """Encode one job's ``/api/jobs`` element, serde_json bytes (the build joins them)."""
    return _encode(
        schema.JobListEntry(
            job_id=job.job_id,
            job_name=job.job_name,
            job_status=job.job_status,
            status=job.status,
            num_stages=job.num_stages,
            completed_stages=job.completed_stages,
            percent_complete=job.percent_complete,
            start_time=job.start_time,
            end_time=job.end_time,
        )
    )


# A history site has no live scheduler: version fields say what built it, and
# the policy says why nothing is running. Key order is the live response's.
STATE = {
    "started": 0,
    # Upstream's history server names itself so (Ballista #2413); a live scheduler its id.
    "scheduler_id": "history-server",
    "version": f"sitegen-{__version__}",
    "datafusion_version": "unknown",
    "substrait_support": False,
    "keda_support": False,
    "prometheus_support": True,
    "graphviz_support": False,
    "spark_support": False,
    "scheduling_policy": "history-server (static site built by sitegen; no live cluster)",
    "enable_embedded_flight_proxy": False,
}
VERSION = {"version": STATE["version"], "datafusion_version": STATE["datafusion_version"]}


def _label(value: str) -> str:
    """Escape a Prometheus label value."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metrics_text(
    by_status: dict[str, int],
    tasks: int,
    failed_tasks: int,
    problems: Iterable[Problem],
    build_timestamp: float,
) -> bytes:
    """Render Prometheus text about the history: jobs by status, tasks, logs skipped."""
    skipped = Counter(str(p.kind) for p in problems if p.skipped)
    lines = [
        "# HELP ballista_history_jobs Completed jobs published on this site, by status.",
        "# TYPE ballista_history_jobs gauge",
    ]
    lines += [
        f'ballista_history_jobs{{status="{_label(s)}"}} {n}' for s, n in sorted(by_status.items())
    ]
    lines += [
        "# HELP ballista_history_tasks Task attempts recorded in published jobs.",
        "# TYPE ballista_history_tasks gauge",
        f'ballista_history_tasks{{outcome="all"}} {tasks}',
        f'ballista_history_tasks{{outcome="failed"}} {failed_tasks}',
        "# HELP ballista_history_logs_skipped Event logs not published, by reason.",
        "# TYPE ballista_history_logs_skipped gauge",
    ]
    lines += [
        f'ballista_history_logs_skipped{{reason="{r}"}} {n}' for r, n in sorted(skipped.items())
    ]
    lines += [
        "# HELP ballista_history_build_timestamp_seconds When this site was built (Unix time).",
        "# TYPE ballista_history_build_timestamp_seconds gauge",
        f"ballista_history_build_timestamp_seconds {build_timestamp:.3f}",
    ]
    return ("\n".join(lines) + "\n").encode()


def site_files(
    jobs_json: Iterable[bytes],
    by_status: dict[str, int],
    tasks: int,
    failed_tasks: int,
    problems: list[Problem],
    build_timestamp: float,
) -> Iterator[tuple[PurePosixPath, Iterable[bytes]]]:
    """Yield the site-wide ``/api/*`` files in pieces (``jobs_json``: ``/api/jobs``'s)."""
    bodies = {
        "state": _encode(STATE),
        "version": _encode(VERSION),
        "executors": b"[]",
        "metrics": metrics_text(by_status, tasks, failed_tasks, problems, build_timestamp),
    }
    for endpoint in SITE_ENDPOINTS:
        if endpoint.template == "jobs":
            # Streamed from the state as written (27 MB at 100,000 jobs); it has no HTML copy.
            assert not endpoint.is_prefix
            yield endpoint_file(endpoint), jobs_json
            continue
        for rel, data in endpoint_files(endpoint, bodies[endpoint.template]):
            yield rel, (data,)
