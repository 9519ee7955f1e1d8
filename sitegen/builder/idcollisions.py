"""The ``id-collision`` and ``tui-unreachable`` warnings of a build, from its published jobs."""

from __future__ import annotations

from collections import Counter

import msgspec

from sitegen.builder.state.store import State
from sitegen.eventlog.collisions import folded, id_collisions, tui_unreachable
from sitegen.model import Problem

# The state's meta row that keeps the last build's warnings for builds with nothing to do.
META = "id_collisions"


def published_collisions(state: State, changed: bool) -> list[Problem]:
    """Return the warnings of the published ids that collide or the TUI cannot ask for.

    ``changed``: the site did. A build that changed the site finds them (one pass over the
    published ids) and keeps them in the state, inside its transaction; one with nothing to
    do reads them back.
    """
    if not changed:
        kept = state.meta_value(META)
        if kept is not None:
            return msgspec.json.decode(kept, type=list[Problem])
    text = state.published_ids_text()
    colliding = _colliding(text)
    problems = id_collisions(state.published_id_keys(colliding)) if colliding else []
    if "%" in text:  # the TUI sends a % as it is (eventlog.collisions)
        odd = [job_id for job_id in text.split("\n") if "%" in job_id]
        problems += tui_unreachable(state.published_id_keys(odd))
    if changed:
        state.set_meta(META, msgspec.json.encode(problems).decode())
    return problems


def _colliding(text: str) -> list[str]:
    """Return the ids, of those one a line in ``text``, that fold to another's form."""
    if not text:
        return []
    ids = text.split("\n")
    if text.isascii():
        # ASCII ids fold by case alone: one lower() and a set, in C (0.03 s at 100,000).
        forms = text.lower().split("\n")
        if len(set(forms)) == len(forms):
            return []
    else:
        forms = [folded(job_id) for job_id in ids]
    counts = Counter(forms)
    return [job_id for job_id, form in zip(ids, forms, strict=True) if counts[form] > 1]
