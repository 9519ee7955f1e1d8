"""Job ids that differ only by case or Unicode normalisation: both published, and named.

Ballista's ids are case-sensitive, and so is every server the site is generated for, so
``AbC1234`` and ``abc1234`` are two jobs and both are published. Unpacked on a
case-insensitive file system (macOS, Windows) or one that normalises names (macOS), one
job's directory would overwrite the other's: such ids are an ``id-collision`` warning.

An id holding ``%`` is published and served percent-encoded, but the Ballista TUI escapes
ids with the URL *path* set, which leaves ``%`` as it is: the host decodes what follows
(``a%41b`` asks for ``aAb``; ``%zz`` is refused), so the TUI cannot open that job. Such ids
are a ``tui-unreachable`` warning.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from sitegen.model import Problem, ProblemKind


def folded(job_id: str) -> str:
    """Return the id as a case-insensitive, normalising file system compares it."""
    if job_id.isascii():
        return job_id.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", job_id).casefold())


def _how(a: str, b: str) -> str:
    """Say what makes two different ids equal."""
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return "once NFC-normalised"
    if a.casefold() == b.casefold():
        return "once case-folded"
    return "once case-folded and NFC-normalised"


def id_collisions(published: Iterable[tuple[str, str]]) -> list[Problem]:
    """Return a warning for each published job whose id collides with an earlier one's.

    ``published``: ``(job id, log key)`` of every published job; a warning names both logs
    and goes to the later log by key.
    """
    groups: dict[str, list[tuple[str, str]]] = {}
    for job_id, key in published:
        groups.setdefault(folded(job_id), []).append((key, job_id))
    problems = []
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort()
        first_key, first_id = group[0]
        for key, job_id in group[1:]:
            how = _how(job_id, first_id)
            problems.append(
                Problem(
                    ProblemKind.ID_COLLISION,
                    key,
                    f"job id {job_id!r} equals {first_id!r} (of {first_key}) {how}: "
                    "both are published, but where the site or its archive is unpacked on a "
                    "case-insensitive or normalising file system (macOS, Windows) one job "
                    "overwrites the other (see docs/safety.md)",
                    job_id=job_id,
                )
            )
    problems.sort(key=lambda p: p.file)
    return problems


def tui_unreachable(published: Iterable[tuple[str, str]]) -> list[Problem]:
    """Return a warning for each published job whose id the Ballista TUI cannot ask for.

    ``published``: ``(job id, log key)`` of every published job; a warning goes to its log.
    """
    problems = [
        Problem(
            ProblemKind.TUI_UNREACHABLE,
            key,
            f"job id {job_id!r} holds '%', which the Ballista TUI sends as it is (it escapes "
            "ids with the URL path set): the host decodes it, so the TUI asks for another id "
            "or is refused; the job is published, and browsers and curl reach it "
            "percent-encoded",
            job_id=job_id,
        )
        for job_id, key in published
        if "%" in job_id
    ]
    problems.sort(key=lambda p: p.file)
    return problems
