"""The reduce step's hooks for recurring jobs: which job pages need their run context.

A job page shows the other runs of its name (previous and next run, a regression, the
comparison with the previous successful run). The map step renders a page before the
other runs are known; the reduce step then updates exactly the pages whose run context
differs from the one they were rendered with (its digest is in the state, as a note's
is): a new run changes its predecessor's "next run" link, and nothing else's. A page this
build wrote gets the new section spliced in between its markers (no second reading of the
log: in a clean build every recurring run needs it); a page already published is rendered
again. The runs themselves come from the state's summaries, not from summaries held.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder.manifest import State
from sitegen.diagnose.finding import Finding
from sitegen.diagnose.recurring import NameTrend, RunContext, run_contexts
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.pages import PageRenderer

if TYPE_CHECKING:
    from sitegen.builder.pipeline import Fresh
    from sitegen.eventlog.discover import LogFile

BEGIN = b"<!--sitegen:runs-->"
END = b"<!--/sitegen:runs-->"


def contexts_by_log(
    found: Iterable[NameTrend], job_ids: Mapping[int, str]
) -> dict[int, RunContext]:
    """Return the run context of each published log that has one, by log index.

    ``job_ids`` holds the job id of every published log, by log index.
    """
    by_job = run_contexts(found)
    contexts = {}
    for n, job_id in job_ids.items():
        context = by_job.get(job_id)
        if context is not None:
            contexts[n] = context
    return contexts


def stale_contexts(rendered: Mapping[int, str], contexts: Mapping[int, RunContext]) -> set[int]:
    """Return the published logs whose page was rendered with another run context.

    ``rendered`` holds, of every published log, the digest of the context its page has.
    """
    stale = set()
    for n, sha256 in rendered.items():
        context = contexts.get(n)
        if sha256 != (context.sha256 if context else ""):
            stale.add(n)
    return stale


def splice(page: bytes, section: bytes) -> bytes | None:
    """Return ``page`` with ``section`` between its run markers; None when it has none.

    Text from logs is escaped on the page, so the first marker is the template's own.
    """
    start = page.find(BEGIN)
    end = page.find(END, start)
    if start < 0 or end < 0:
        return None  # a page from --templates without the markers: render it again
    return page[: start + len(BEGIN)] + section + page[end:]


def patch_pages(
    pages: PageRenderer,
    staging: Path,
    state: State,
    logs: Sequence[LogFile],
    written: Iterable[int],
    fresh: dict[int, Fresh],
    contexts: Mapping[int, RunContext],
) -> set[int]:
    """Splice the run context into pages this build wrote; return those that had no markers.

    Each patched log's outcome is recorded in the state again, with the new context's
    digest and its bytes, and ``fresh`` follows.
    """
    from sitegen.builder.mapstep import part_dir

    unpatched = set()
    for n in sorted(written):
        done = fresh[n]
        log = logs[n]
        outcome = state.outcome(log.key)
        summary = outcome.summary
        assert summary is not None
        root = part_dir(staging, n) if done.parted else staging
        rel = urls.job_page(summary.job_id)
        old = (root / rel).read_bytes()
        context = contexts.get(n)
        new = splice(old, pages.runs_section(summary, context))
        if new is None:
            unpatched.add(n)
            continue
        writer = SiteWriter(root, fresh=True, existing=outcome.roots)
        writer.write(rel, new)
        outcome.context_sha256 = context.sha256 if context else ""
        outcome.bytes += len(new) - len(old)
        state.put(log.key, log.size, log.mtime_ns, outcome, published=False)
        fresh[n] = done._replace(bytes=outcome.bytes, context_sha256=outcome.context_sha256)
    return unpatched


def discard_renders(staging: Path, logs: Iterable[int], fresh: dict[int, Fresh]) -> None:
    """Remove what this build's map step wrote for ``logs``, to render them again."""
    from sitegen.builder.mapstep import part_dir

    for n in logs:
        done = fresh.pop(n)
        if done.parted:
            shutil.rmtree(part_dir(staging, n))
        else:
            for root in done.roots:
                shutil.rmtree(staging / root)


def regressed(found: Iterable[NameTrend]) -> dict[str, Finding]:
    """Return every regression finding, by job id."""
    return {job_id: f for trend in found for job_id, f in trend.regressions.items()}
