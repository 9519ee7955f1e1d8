"""The rows of the jobs list, built as one string: the listing is rendered for every job.

A 100,000-job site has 2,000 listing pages, and every build that adds a job shifts them
all. Rendering each row through Jinja cost most of a listing page; this builds the very
bytes the template loop did (``tests/test_listing.py`` holds that loop and compares).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from sitegen.diagnose.finding import Finding
from sitegen.model import JobSummary
from sitegen.render.cells import status_badge
from sitegen.render.formatting import DURATIONS, number, timestamps
from sitegen.render.fragments import Fragment
from sitegen.render.htmlsafe import esc
from sitegen.render.links import Linker

_NO_DURATION = '<td class="num">—</td>'
_NO_FINDINGS = '<td data-v="0"></td>'
_NONE: Mapping[str, Finding] = {}


def findings_cell(findings: Sequence[Finding]) -> str:
    """Return the findings column's cell: how many, and the worst severity (sorts by both)."""
    if not findings:
        return _NO_FINDINGS
    worst = max(f.severity.rank for f in findings)
    word = next(f.severity for f in findings if f.severity.rank == worst)
    return (
        f'<td data-v="{(worst + 1) * 1_000_000 + len(findings)}">'
        f'<span class="severity {word}">{len(findings)} {word}</span></td>'
    )


def job_rows(
    jobs: Sequence[JobSummary], link: Linker, extra: Mapping[str, Finding] = _NONE
) -> Fragment:
    """Return the ``<tr>`` rows of one listing page, linking from its page with ``link``.

    ``extra`` holds findings of the reduce step (a regression) by job id.
    """
    badges: dict[str, str] = {}
    out = []
    # Text made from integers (counts, times, durations) has nothing to escape; text from
    # the log (ids, names, statuses, failures) always goes through esc().
    for job in jobs:
        job_id, status, start, end = job.job_id, job.status, job.start_time, job.end_time
        badge = badges.get(status)
        if badge is None:
            badge = badges[status] = f'<td data-v="{esc(status)}">{status_badge(status)}</td>'
        failure = f'<p class="failure">{esc(job.failure)}</p>' if job.failure else ""
        took = (
            f'<td class="num" data-v="{end - start}">{DURATIONS[end - start]}</td>'
            if end >= start
            else _NO_DURATION
        )
        at_ms, at = timestamps(start)
        href = esc(link.job(job_id))
        more = extra.get(job_id)
        found = [*job.findings, more] if more is not None else job.findings
        findings = findings_cell(found) if found else _NO_FINDINGS
        out.append(
            f'<tr>\n<td><a href="{href}"><code>{esc(job_id)}</code></a></td>\n'
            f"<td>{esc(job.job_name)}{failure}</td>\n{badge}\n"
            f'<td class="num" data-v="{job.completed_stages}">'
            f"{job.completed_stages}/{job.num_stages}</td>\n"
            f'<td class="num" data-v="{job.tasks}">{number(job.tasks)}</td>\n{findings}\n'
            f'<td data-v="{start}"><time datetime="{at_ms}">{at}</time></td>\n{took}</tr>'
        )
    return Fragment("\n".join(out))


def find_index(jobs: Sequence[JobSummary]) -> bytes:
    """Return the script the jobs list's find box loads: ``[id, name, status, start ms]`` rows."""
    # A script, not JSON to fetch: a page opened from file:// may load a script beside it,
    # but not fetch a file. JSON is a JavaScript expression, and the file is never HTML.
    # The browser formats the times: at 100,000 jobs formatting them here cost 150 ms.
    rows = [(j.job_id, j.job_name, j.status, j.start_time) for j in jobs]
    return b"window.sitegenJobIndex = " + orjson.dumps(rows) + b";\n"
