"""What the planner asks the state: which logs it knows, as they were, and what they made."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from sitegen.builder.state.base import Base
from sitegen.builder.state.records import Chosen, Identities, Known, LogOutcome
from sitegen.builder.state.schema import (
    KNOWN_COLUMNS,
    chunks,
    decode_chosen,
    decode_outcome,
    decode_summary,
    marks,
)
from sitegen.model import Classification


class PlanQueries(Base):
    """The planner's reads: identities, what is known of some logs, their outcomes."""

    def known(self, keys: Iterable[str]) -> dict[str, Known]:
        """Return the identity and listing columns of the logs of ``keys`` it holds."""
        make = Known._make
        return {
            row[0]: make(row)
            for chunk in chunks(sorted(keys))
            for row in self.db.execute(
                f"SELECT {KNOWN_COLUMNS} FROM log WHERE key IN ({marks(chunk)})", chunk
            )
        }

    def identities(self) -> Identities:
        """Return every log's key, size and modification time, in key order."""
        # Three strings made in SQLite (its index holds them in key order): a row apiece cost
        # 0.2-0.4 s at 100,000 logs. One scan makes all three, so they line up.
        keys, sizes, times = self.db.execute(
            "SELECT group_concat(key, char(0)), group_concat(size), group_concat(mtime_ns) "
            "FROM (SELECT key, size, mtime_ns FROM log INDEXED BY log_identity ORDER BY key)"
        ).fetchone()
        if keys is None:
            return Identities([], "", "")
        return Identities(keys.split("\0"), sizes, times)  # no key holds a NUL

    def unfinished(self) -> dict[str, tuple[int, int]]:
        """Return the size and modification time of every log not read as a completed job."""
        # By the classification index: the few logs still running, damaged, or unreadable.
        others = [str(c) for c in Classification if c is not Classification.COMPLETED]
        rows = self.db.execute(
            "SELECT key, size, mtime_ns FROM log INDEXED BY log_class "
            f"WHERE classification IN ({marks(others)})",
            others,
        )
        return {key: (size, mtime_ns) for key, size, mtime_ns in rows}

    def running_logs(
        self, classification: Classification = Classification.INCOMPLETE
    ) -> dict[str, int]:
        """Return the modification time of every log read as a job still running.

        ``classification``: of the logs of another class (those that ended unrecorded).
        """
        rows = self.db.execute(
            "SELECT key, mtime_ns FROM log INDEXED BY log_class WHERE classification = ?",
            (str(classification),),
        )
        return dict(rows.fetchall())

    def renamed_in(self, label: str, gone: set[str]) -> bool:
        """Tell whether a finished log of the dir of key prefix ``label`` was once ``.running``.

        Logs in ``gone`` do not count (the build forgets them).
        """
        # A range of the primary key, read until a key not gone: nearly always the first.
        if label:
            rows = self.db.execute(
                "SELECT key FROM renamed WHERE key >= ? AND key < ? ORDER BY key",
                (label, f"{label[:-1]}0"),
            )
        else:
            rows = self.db.execute("SELECT key FROM renamed WHERE instr(key, '/') = 0")
        return any(key not in gone for (key,) in rows)

    def note_digests(self) -> dict[str, str]:
        """Return the digest of the note each published job was rendered with, if it had one."""
        rows = self.db.execute(
            "SELECT job_id, note_sha256 FROM log INDEXED BY log_noted "
            "WHERE published AND note_sha256 <> ''"
        )
        return dict(rows.fetchall())

    def published_ids(self, job_ids: Sequence[str]) -> set[str]:
        """Return which of ``job_ids`` are published."""
        return {job_id for job_id, _, _ in self._published(job_ids)}

    def published_keys(self, job_ids: Sequence[str]) -> set[str]:
        """Return the keys of the published logs of ``job_ids``."""
        return {key for _, key, _ in self._published(job_ids)}

    def published_roots(self, job_ids: Sequence[str]) -> set[str]:
        """Return the job directories the published logs of ``job_ids`` hold."""
        rows = self._published(job_ids)
        return {root for *_, roots in rows if roots for root in roots.split("\n")}

    def _published(self, job_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]:
        """Yield (job id, key, roots) of the published logs of ``job_ids``."""
        for chunk in chunks(sorted(job_ids)):
            yield from self.db.execute(
                "SELECT job_id, key, roots FROM log INDEXED BY log_job "
                f"WHERE published AND job_id IN ({marks(chunk)})",
                chunk,
            )

    def chosen(self) -> Chosen | None:
        """Return what the last build's selection decided (None when not recorded)."""
        row = self.db.execute("SELECT value FROM meta WHERE name = 'chosen'").fetchone()
        return decode_chosen(row[0]) if row else None

    def site_bytes_as_built(self, root: Path) -> int:
        """Return the site's bytes as the last build measured them, or measure them now."""
        # A no-op build reports the size: stat-ing 7,000 site-wide files cost it 0.04 s.
        row = self.db.execute("SELECT value FROM meta WHERE name = 'site_bytes'").fetchone()
        return int(row[0]) if row is not None else self.site_bytes(root)

    def outcome(self, key: str) -> LogOutcome:
        """Return one log's whole outcome, summary included."""
        outcome, summary = self.page_inputs(key)
        if summary is not None:
            outcome.summary = decode_summary(summary)
        return outcome

    def page_inputs(self, key: str) -> tuple[LogOutcome, bytes | None]:
        """Return one log's outcome (no summary) and its summary as stored, still encoded."""
        blob, summary = self.db.execute(
            "SELECT outcome, summary FROM blob WHERE key = ?", (key,)
        ).fetchone()
        return decode_outcome(blob), summary

    def flagged(self) -> Iterator[LogOutcome]:
        """Yield the outcomes with problems or a running job, in log order."""
        query = "SELECT outcome FROM log JOIN blob USING (key) WHERE flagged ORDER BY key"
        for (blob,) in self.db.execute(query):
            yield decode_outcome(blob)

    def classifications(self) -> dict[str, int]:
        """Count the logs by classification."""
        rows = self.db.execute("SELECT classification, count(*) FROM log GROUP BY classification")
        return dict(rows.fetchall())
