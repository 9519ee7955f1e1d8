"""The rows of the jobs list, built as one string: the listing is rendered for every job.

A 100,000-job site has 2,000 listing pages, and every build that adds a job shifts them
all. Rendering each row through Jinja cost most of a listing page; this builds the very
bytes the template loop did (``tests/test_listing.py`` holds that loop and compares).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from sitegen.model import JobSummary
from sitegen.render.formatting import DURATIONS, number, timestamps
from sitegen.render.fragments import Fragment
from sitegen.render.htmlsafe import visible_controls
from sitegen.render.links import Linker
from sitegen.svg.text import status_class

_NO_DURATION = '<td class="num">—</td>'


def esc(text: str) -> str:
    """Escape text for HTML content and quoted attributes, byte for byte as Jinja does."""
    # markupsafe's entities (&#34; &#39;), not html.escape's: the Jinja loop this replaces
    # printed those, and the pages must not change.
    text = visible_controls(text)
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&#34;")
    if "'" in text:
        text = text.replace("'", "&#39;")
    return text


def job_rows(jobs: Sequence[JobSummary], link: Linker) -> Fragment:
    """Return the ``<tr>`` rows of one listing page, linking from its page with ``link``."""
    badges: dict[str, str] = {}
    out = []
    # Text made from integers (counts, times, durations) has nothing to escape; text from
    # the log (ids, names, statuses, failures) always goes through esc().
    for job in jobs:
        job_id, status, start, end = job.job_id, job.status, job.start_time, job.end_time
        badge = badges.get(status)
        if badge is None:
            word = esc(status)
            badge = badges[status] = (
                f'<td data-v="{word}"><span class="badge {esc(status_class(status))}">'
                f"{word}</span></td>"
            )
        failure = f'<p class="failure">{esc(job.failure)}</p>' if job.failure else ""
        took = (
            f'<td class="num" data-v="{end - start}">{DURATIONS[end - start]}</td>'
            if end >= start
            else _NO_DURATION
        )
        at_ms, at = timestamps(start)
        href = esc(link.job(job_id))
        out.append(
            f'<tr>\n<td><a href="{href}"><code>{esc(job_id)}</code></a></td>\n'
            f"<td>{esc(job.job_name)}{failure}</td>\n{badge}\n"
            f'<td class="num" data-v="{job.completed_stages}">'
            f"{job.completed_stages}/{job.num_stages}</td>\n"
            f'<td class="num" data-v="{job.tasks}">{number(job.tasks)}</td>\n'
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
