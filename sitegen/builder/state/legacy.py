"""Which logs a published site was built from, read loosely from any version's state."""

from __future__ import annotations

from pathlib import Path

import msgspec

from sitegen.builder.state.schema import DAMAGE
from sitegen.builder.state.store import open_state
from sitegen.layout import LEGACY_MANIFEST_NAME, STATE_NAME


class _BuiltLog(msgspec.Struct):
    """Of a legacy JSON manifest's log entry, only whether it published a job."""

    published: bool = False


class _BuiltSite(msgspec.Struct):
    """Of a legacy JSON manifest, only which logs the site was built from."""

    logs: dict[str, _BuiltLog] = msgspec.field(default_factory=dict)


def built_from(output: Path) -> dict[str, bool] | None:
    """Return the logs the site at ``output`` was built from (key: published?); None: no site.

    For guards that compare a build's inputs with the site it would replace: one read of a
    read-only connection, no blob decoded. A site of an older sitegen (a JSON manifest) is
    read loosely: it still names its logs.
    """
    state = open_state(output / STATE_NAME, readonly=True, any_version=True)
    if state is not None:
        try:
            rows = state.db.execute("SELECT key, published FROM log").fetchall()
        except DAMAGE:
            return None
        finally:
            state.close()
        return {key: bool(published) for key, published in rows}
    try:
        data = (output / LEGACY_MANIFEST_NAME).read_bytes()
        site = msgspec.json.decode(data, type=_BuiltSite)
    except (OSError, msgspec.DecodeError):
        return None
    return {key: entry.published for key, entry in site.logs.items()}
