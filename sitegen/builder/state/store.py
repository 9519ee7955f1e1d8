"""The state of a site: created by a full build, opened by the next one if it is of its kind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sitegen.builder.state.data import DataRows
from sitegen.builder.state.known import PlanQueries
from sitegen.builder.state.peeked_runs import Peeks
from sitegen.builder.state.queries import ReduceQueries
from sitegen.builder.state.schema import FORMAT, SCHEMA
from sitegen.builder.state.writes import Writes
from sitegen.layout import STATE_NAME
from sitegen.version import __version__


class State(PlanQueries, Writes, ReduceQueries, DataRows, Peeks):
    """An open state database: what the planner, the build's writes and the reduce use."""

    @classmethod
    def create(cls, path: Path, fingerprint: str) -> State:
        """Create an empty state at ``path`` (in a staging directory) for this build."""
        db = sqlite3.connect(path, isolation_level=None)
        # No rollback journal: a full build writes its state once, in its staging directory,
        # and any failure discards that directory whole, so a journal would protect nothing.
        # Keeping one cost more than half of recording a log: 0.12 ms of 0.21 ms at 1,000 logs.
        # The mode lasts as long as this connection: the next build opens the published
        # state with a journal, and its changes in place stay atomic.
        db.execute("PRAGMA journal_mode = OFF")
        db.executescript(SCHEMA)  # before BEGIN: executescript commits what is pending
        db.execute("BEGIN")
        state = cls(path, db)
        state._meta({"format": str(FORMAT), "sitegen": __version__, "fingerprint": fingerprint})
        return state


def open_published(output: Path) -> State | None:
    """Open the published site's state read-only, or None when there is no usable one."""
    return open_state(output / STATE_NAME, readonly=True)


def open_state(path: Path, readonly: bool = False, any_version: bool = False) -> State | None:
    """Open a state file if it is one of this layout and undamaged; else None.

    ``any_version`` accepts a state of another layout or sitegen version too.
    """
    if not path.is_file():
        return None
    try:
        uri = path.resolve().as_uri() + ("?mode=ro" if readonly else "?mode=rw")
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        # Damage to the file's header or schema fails here; damage further in fails the query
        # that reads it, and the pipeline then builds afresh (DAMAGE). Checking every page
        # up front (quick_check) would read the whole file on every build: 0.7 s at 100,000.
        meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
        ours = meta.get("format") == str(FORMAT) and meta.get("sitegen") == __version__
        if not (ours or any_version):
            db.close()
            return None
    except sqlite3.Error:
        db.close()
        return None
    state = State(path, db)
    state.fingerprint = meta.get("fingerprint", "")
    return state


def load(output: Path, fingerprint: str) -> State | None:
    """Return the published site's state if it was built with ``fingerprint``, else None."""
    state = open_state(output / STATE_NAME)
    if state is None:
        return None
    if state.fingerprint != fingerprint:
        state.close()
        return None
    return state
