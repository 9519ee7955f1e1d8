"""The reduce step's hooks for recurring jobs: which job pages need their run context.

A job page shows the other runs of its name (previous and next run, a regression, the
comparison with the previous successful run). The map step renders a page before the
other runs are known; the reduce step then updates exactly the pages whose run context
differs from the one they were rendered with (its digest is in the manifest): a new run
changes its predecessor's "next run" link, and nothing else's. A page this build wrote
gets the new section spliced in between its markers (no second reading of the log: in a
clean build every recurring run needs it); a page already published is rendered again.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from sitegen.builder.manifest import LogOutcome
from sitegen.diagnose.finding import Finding
from sitegen.diagnose.recurring import NameTrend, RunContext, run_contexts
from sitegen.layout import PARTS_DIR
from sitegen.publish.writer import SiteWriter
from sitegen.render import urls
from sitegen.render.pages import PageRenderer

BEGIN = b"<!--sitegen:runs-->"
END = b"<!--/sitegen:runs-->"


def contexts_by_log(
    found: Iterable[NameTrend], outcomes: Sequence[LogOutcome], published: Iterable[int]
) -> dict[int, RunContext]:
    """Return the run context of each published log that has one, by log index."""
    by_job = run_contexts(found)
    contexts = {}
    for n in published:
        summary = outcomes[n].summary
        context = by_job.get(summary.job_id) if summary else None
        if context is not None:
            contexts[n] = context
    return contexts


def forget_unpublished(outcomes: Sequence[LogOutcome], published: set[int]) -> None:
    """Clear the context of logs off the site: one coming back is rendered afresh.

    An update keeps what such a log's page held when it was last published, a clean build
    what its first render held: recording neither (no context, no bytes on the site)
    keeps their manifests equal.
    """
    for n, outcome in enumerate(outcomes):
        if n not in published:
            outcome.context_sha256 = ""
            outcome.bytes = 0


def stale_contexts(
    outcomes: Sequence[LogOutcome], published: Iterable[int], contexts: dict[int, RunContext]
) -> set[int]:
    """Return the published logs whose page was rendered with another run context."""
    stale = set()
    for n in published:
        context = contexts.get(n)
        if outcomes[n].context_sha256 != (context.sha256 if context else ""):
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
    logs: Iterable[int],
    outcomes: Sequence[LogOutcome],
    in_parts: set[int],
    contexts: dict[int, RunContext],
) -> set[int]:
    """Splice the run context into pages this build wrote; return those that had no markers."""
    unpatched = set()
    for n in logs:
        outcome = outcomes[n]
        summary = outcome.summary
        assert summary is not None
        root = staging / PARTS_DIR / str(n) if n in in_parts else staging
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
    return unpatched


def discard_renders(
    staging: Path, logs: Iterable[int], outcomes: Sequence[LogOutcome], in_parts: set[int]
) -> None:
    """Remove what this build's map step wrote for ``logs``, to render them again."""
    for n in logs:
        if n in in_parts:
            shutil.rmtree(staging / PARTS_DIR / str(n))
            in_parts.discard(n)
        else:
            for root in outcomes[n].roots:
                shutil.rmtree(staging / root)


def regressed(found: Iterable[NameTrend]) -> dict[str, Finding]:
    """Return every regression finding, by job id."""
    return {job_id: f for trend in found for job_id, f in trend.regressions.items()}
