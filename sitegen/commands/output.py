"""What the commands print: a build's summary, each publish of ``--watch``, why a build waits.

Summaries are text lines for people or one JSON object for scripts (``sitegen check`` prints
its own verdict the same ways: ``commands.check``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sitegen.model import Problem
from sitegen.text.formatting import plural

if TYPE_CHECKING:
    # Only for annotations: the build module pulls in the page templates.
    from sitegen.builder.report import BuildReport
    from sitegen.builder.watch import Publish


def where(p: Problem) -> str:
    """Return ``file:line``, or the file alone when the problem has no line."""
    return f"{p.file}:{p.line}" if p.line else p.file


def problem_json(p: Problem, **extra: Any) -> dict[str, Any]:
    """Return one problem as a JSON-ready object."""
    return {
        "file": p.file,
        "line": p.line,
        "kind": str(p.kind),
        "message": p.message,
        "job_id": p.job_id,
        **extra,
    }


def dump(obj: dict[str, Any]) -> str:
    """Encode one JSON object on one line (non-ASCII kept readable)."""
    return json.dumps(obj, ensure_ascii=False)


SHOWN_PROBLEMS = 10


def _megabytes(size: int) -> str:
    """Return a size in MB with one decimal, as the summary prints it."""
    return f"{size / 1e6:,.1f} MB"


def summary_lines(report: BuildReport, verbose: bool = False) -> list[str]:
    """Return the human summary: jobs published, logs skipped by reason, time taken."""
    jobs = plural(report.published, "job")
    left_out = report.retention_dropped + report.size_dropped
    if left_out:
        jobs = f"{report.published:,} of {plural(report.published + left_out, 'job')}"
    logs = plural(report.logs, "log")
    target = _where(report) or report.output
    if report.up_to_date:
        lines = [
            f"{target} is up to date: {jobs} from {logs}, "
            f"nothing changed; site {_megabytes(report.site_bytes)} ({report.seconds:.2f} s)."
        ]
    else:
        detail = f"{report.files_written:,} files; site {_megabytes(report.site_bytes)}"
        if report.rebuilt < report.logs:
            read = "log" if report.rebuilt == 1 else "logs"
            detail += f"; {report.rebuilt} {read} read, {report.logs - report.rebuilt} unchanged"
        synced = report.publish.counts() if report.publish is not None else {}
        if synced:  # published to object storage: what the sync did
            detail += (
                f"; {plural(synced['objects_uploaded'], 'object')} uploaded "
                f"({_megabytes(synced['objects_uploaded_bytes'])}), "
                f"{synced['objects_deleted']:,} deleted"
            )
        lines = [f"Published {jobs} from {logs} to {target} ({detail}) in {report.seconds:.2f} s."]
    if report.retention_dropped:
        lines.append(f"{report.retention_dropped:,} completed jobs are outside the retention.")
    if report.size_dropped:
        lines.append(
            f"{report.size_dropped:,} more completed jobs left out: the site would exceed "
            "--max-site-size."
        )
    if report.raw_logs_dropped:
        lines.append("Raw logs left out to fit --max-site-size: that lets more jobs fit.")
    if report.unread:
        lines.append(
            f"Could not read {plural(len(report.unread), 'log')} from their store (left out; "
            "the next build reads them again):"
        )
        lines.extend(f"  {why}" for why in report.unread.values())
    if report.archive is not None:
        a = report.archive
        lines.append(f"Archived the site to {a.path} ({a.files} files, {a.bytes} bytes).")
    skipped = report.skipped
    if skipped:
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))
        lines.append(f"Skipped {sum(skipped.values())} logs: {reasons}.")
    shown = report.problems if verbose else report.problems[:SHOWN_PROBLEMS]
    for p in shown:
        lines.append(f"  {p.kind}: {where(p)}: {p.message}")
    if len(shown) < len(report.problems):
        lines.append(f"  … and {len(report.problems) - len(shown)} more (--verbose lists them all)")
    return lines


def _archive(report: BuildReport) -> dict[str, Any] | None:
    """Return the archive a build wrote as a JSON-ready object, or None."""
    a = report.archive
    if a is None:
        return None
    return {"path": str(a.path), "format": a.format, "files": a.files, "bytes": a.bytes}


def summary_json(report: BuildReport) -> str:
    """Return the build summary as one JSON object, for scripts and CI."""
    return dump(_summary(report))


def _summary(report: BuildReport) -> dict[str, Any]:
    """Return the build summary as a JSON-ready object."""
    return {
        "output": _where(report) or str(report.output),
        "logs": report.logs,
        "jobs_published": report.published,
        "jobs_outside_retention": report.retention_dropped,
        "jobs_over_size_limit": report.size_dropped,
        "raw_logs_left_out": report.raw_logs_dropped,
        "site_bytes": report.site_bytes,
        "classifications": report.classifications,
        "skipped": dict(sorted(report.skipped.items())),
        "files_written": report.files_written,
        "bytes_written": report.bytes_written,
        "seconds": round(report.seconds, 3),
        "phases": {name: round(took, 3) for name, took in report.phases.items()},
        "phases_cpu": {name: round(took, 3) for name, took in report.phases_cpu.items()},
        "archive": _archive(report),
        "problems": [problem_json(p, skipped=p.skipped) for p in report.problems],
        # Published to object storage: what the sync did (a local output has no such keys).
        **(report.publish.counts() if report.publish is not None else {}),
        # Logs whose store failed to hand them over (only then): left out, read again next build.
        **({"unread": _unread(report)} if report.unread else {}),
    }


def _unread(report: BuildReport) -> list[dict[str, str]]:
    """Return the logs a build could not fetch, each with why, as JSON-ready objects."""
    return [{"file": key, "message": why} for key, why in report.unread.items()]


def _where(report: BuildReport) -> str | None:
    """Return where the site went when it is not the build's output (a bucket's URL)."""
    return report.publish.where() if report.publish is not None else None


def publish_line(done: Publish) -> str:
    """Return the watcher's line for one publish: why, how long, what it published."""
    head = f"[{done.number}] {done.reason}"
    if done.changes:
        head += f" ({plural(done.changes, 'file')} changed)"
    if done.error is not None:
        return f"{head}: failed after {done.seconds:.2f} s: {done.error}"
    assert done.report is not None
    return f"{head}: {summary_lines(done.report)[0]}"


def publish_json(done: Publish) -> str:
    """Return one publish of the watcher as one JSON object (the build summary inside)."""
    return dump(
        {
            "publish": done.number,
            "reason": done.reason,
            "changes": done.changes,
            "seconds": round(done.seconds, 3),
            "error": done.error,
            # Whether the build took the log dirs' names from the events (builder/plan/events.py).
            "listed_from_events": done.report.listed_from_events if done.report else False,
            "build": _summary(done.report) if done.report else None,
        }
    )


def waiting(output: Path) -> Callable[[], None]:
    """Return what tells the user why a build into ``output`` is not starting yet."""
    from sitegen.publish.buildlock import holders

    def say() -> None:
        pids = holders(output)
        by = f" (process {', '.join(map(str, pids))})" if pids else ""
        click.echo(
            f"Waiting for another sitegen build into the same directory{by} to finish...",
            err=True,
        )

    return say
