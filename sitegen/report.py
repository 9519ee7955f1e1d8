"""Turn a build report into the summary lines the CLI prints."""

from __future__ import annotations

from sitegen.build import BuildReport

SHOWN_PROBLEMS = 10


def summary_lines(report: BuildReport, verbose: bool = False) -> list[str]:
    """Return the human summary: jobs published, logs skipped by reason, time taken."""
    if report.up_to_date:
        lines = [
            f"{report.output} is up to date: {report.published} jobs from {report.logs} logs, "
            f"nothing changed ({report.seconds:.2f} s)."
        ]
    else:
        detail = f"{report.files_written} files"
        if report.rebuilt < report.logs:
            read = "log" if report.rebuilt == 1 else "logs"
            detail += f"; {report.rebuilt} {read} read, {report.logs - report.rebuilt} unchanged"
        lines = [
            f"Published {report.published} jobs from {report.logs} logs to {report.output} "
            f"({detail}) in {report.seconds:.2f} s."
        ]
    skipped = report.skipped
    if skipped:
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))
        lines.append(f"Skipped {sum(skipped.values())} logs: {reasons}.")
    shown = report.problems if verbose else report.problems[:SHOWN_PROBLEMS]
    for p in shown:
        where = f"{p.file}:{p.line}" if p.line else p.file
        lines.append(f"  {p.kind}: {where}: {p.message}")
    if len(shown) < len(report.problems):
        lines.append(f"  … and {len(report.problems) - len(shown)} more (--verbose lists them all)")
    return lines
