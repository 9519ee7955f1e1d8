"""``sitegen check``: check every log, print the verdict, exit 0, 1 (a problem) or 2 (usage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec

from sitegen.check import CheckReport, check, check_limits
from sitegen.commands.options import log_dirs_of
from sitegen.commands.output import dump, problem_json, where
from sitegen.diagnose import gate
from sitegen.diagnose.insights import all_findings
from sitegen.diagnose.recurring import all_regressions
from sitegen.errors import SitegenError
from sitegen.model import ProblemKind, ProblemSeverity, newest_first
from sitegen.text.formatting import plural


def check_command(
    log_dirs: tuple[Path | str, ...],
    storage_options: tuple[tuple[str, Any], ...],
    follow_links: bool,
    max_log_size: int,
    max_line_size: int,
    stale_after: str,
    workers: int | None,
    fmt: str,
    fail_on: str | None,
) -> None:
    """Run ``sitegen check`` with its options' values; exit with its verdict."""
    try:
        kinds = gate.parse_kinds(fail_on) if fail_on is not None else frozenset()
        limits = check_limits(max_log_size, max_line_size, stale_after)
        dirs = log_dirs_of(log_dirs, dict(storage_options) or None)
        report = check(dirs, workers, follow_links, kinds, limits)
    except SitegenError as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from exc
    for line in [check_json(report)] if fmt == "json" else check_lines(report):
        click.echo(line)
    raise SystemExit(0 if report.passed else 1)


def check_lines(report: CheckReport) -> list[str]:
    """Return one line per problem (``file:line: severity: kind: message``) and a summary."""
    lines = [f"{where(p)}: {p.severity}: {p.kind}: {p.message}" for p in report.problems]
    classes = ", ".join(f"{n} {name}" for name, n in report.classifications.items() if n)
    lines.append(
        f"Checked {plural(report.logs, 'log')} in {', '.join(map(str, report.log_dirs))}"
        + (f": {classes}." if classes else ".")
    )
    found = [plural(report.count(s), s) for s in ProblemSeverity if report.count(s)]
    verdict = "check passed" if report.ok else "check failed"
    lines.append(
        f"{plural(report.publishable, 'job')} can be published; "
        f"{', '.join(found) if found else 'no problems'}: {verdict}."
    )
    if report.fail_on:
        lines += [gate.reason_line(r) for r in report.reasons]
        lines.append(gate.verdict_line(report.fail_on, report.reasons))
    return lines


def check_json(report: CheckReport) -> str:
    """Return the check result as one JSON object, for scripts and CI.

    It holds every publishable job with its findings, and why ``--fail-on`` failed.
    """
    regressed = all_regressions(report.jobs)
    by_kind = {str(kind): 0 for kind in ProblemKind}
    for p in report.problems:
        by_kind[str(p.kind)] += 1
    return dump(
        {
            "log_dirs": [str(d) for d in report.log_dirs],
            "ok": report.ok,
            "logs": report.logs,
            "publishable": report.publishable,
            "classifications": report.classifications,
            "problems_by_kind": by_kind,
            **{f"{s}s": report.count(s) for s in ProblemSeverity},
            "problems": [problem_json(p, severity=p.severity) for p in report.problems],
            "jobs": [
                {
                    "job_id": j.job_id,
                    "job_name": j.job_name,
                    "status": j.status,
                    "findings": msgspec.to_builtins(all_findings(j, regressed)),
                }
                for j in newest_first(report.jobs)
            ],
            "fail_on": sorted(report.fail_on),
            "fail_on_reasons": [
                {"job_id": r.job.job_id, "job_name": r.job.job_name, "kind": r.kind, "why": r.why}
                for r in report.reasons
            ],
        }
    )
