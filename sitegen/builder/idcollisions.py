"""The ``id-collision`` warnings of a build, from the published jobs its state holds."""

from __future__ import annotations

import msgspec

from sitegen.builder.state.store import State
from sitegen.eventlog.collisions import id_collisions
from sitegen.model import Problem

# The state's meta row that keeps the last build's warnings for builds with nothing to do.
META = "id_collisions"


def published_collisions(state: State, changed: bool) -> list[Problem]:
    """Return the warnings of the published ids that collide; ``changed``: the site did.

    A build that changed the site finds them (one pass over the published ids) and keeps
    them in the state, inside its transaction; one with nothing to do reads them back.
    """
    if not changed:
        kept = state.meta_value(META)
        if kept is not None:
            return msgspec.json.decode(kept, type=list[Problem])
    problems = id_collisions(state.published_id_keys())
    if changed:
        state.set_meta(META, msgspec.json.encode(problems).decode())
    return problems
