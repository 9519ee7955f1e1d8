"""The ``id-collision`` warnings of a build, from the published jobs its state holds."""

from __future__ import annotations

import msgspec

from sitegen.builder.manifest import State
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
        row = state.db.execute("SELECT value FROM meta WHERE name = ?", (META,)).fetchone()
        if row is not None:
            return msgspec.json.decode(row[0], type=list[Problem])
    problems = id_collisions(state.db.execute("SELECT job_id, key FROM log WHERE published"))
    if changed:
        value = msgspec.json.encode(problems).decode()
        state.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (META, value))
    return problems
