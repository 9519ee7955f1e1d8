"""What the state records of a log and of a build, as the map step and the planner hand it."""

from __future__ import annotations

import builtins
from typing import NamedTuple

import msgspec

from sitegen.model import Classification, JobSummary, Problem, RunningJob


class LogOutcome(msgspec.Struct, gc=False, omit_defaults=True):
    """What the map step returns for one log: small, picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem] = msgspec.field(default_factory=list)
    summary: JobSummary | None = None
    running: RunningJob | None = None
    roots: list[str] = msgspec.field(default_factory=list)
    files: int = 0
    bytes: int = 0
    # SHA-256 of the log, taken by the worker that read it (hashing is parallel too).
    sha256: str = ""
    # SHA-256 of the operator note the job page was rendered with ("" for none).
    note_sha256: str = ""
    # SHA-256 of the run context (other runs of its name) the job page was rendered with.
    context_sha256: str = ""
    # The columns the state keeps of the job beside its summary (not kept in the blob).
    row: LogRow | None = None
    # The job's rows of the SQL tables (render.tableblob.encode_tables; not kept in the blob),
    # with how many rows of ``tasks`` it has; empty when the site publishes no data/.
    tables: builtins.bytes = b""  # (``bytes`` above is a field's name)
    task_rows: int = 0
    # The objects a worker put straight at their keys in a bucket (key: SHA-256; not kept in
    # the blob): the sync does not upload them again (publish.bucket.Uploader).
    uploaded: dict[str, str] = msgspec.field(default_factory=dict)
    # The log could not be fetched (its store erred, retries spent): the build leaves it out,
    # names it, and does not put it in the state, so the next build reads it again.
    retry: bool = False


class LogRow(msgspec.Struct, array_like=True, gc=False):
    """What the state's columns hold of a job that only its analysis and rendering know."""

    # As the trend of its name counts the run (diagnose/recurring.py).
    failed: bool
    succeeded: bool
    # Its own findings and the rank of the worst (-1: none), as Insights ranks summaries.
    findings: int
    worst_rank: int
    # What its costliest own finding cost it (ms), as Insights ranks jobs of one severity.
    cost_ms: int
    # Its ``/api/jobs`` element, serde_json bytes.
    listed: bytes
    # Its failure rows for the Failures page (diagnose.failures.FailureRow's fields).
    failures: list[tuple[str, str, int, str, str, int, int]]
    # The hour its executors' evidence pools in (diagnose.fleet.hour_of).
    hour: int = 0


class Chosen(msgspec.Struct, array_like=True, gc=False):
    """What a build's selection decided, kept so that a build with nothing to do reports it."""

    # The options it depends on besides the logs (see pipeline._selection_options).
    options: list[int | None]
    # Logs that lost their job id to another log, by key, and why.
    losers: dict[str, Problem]
    published: int
    retention_dropped: int
    size_dropped: int
    # Digest of the logs it was made from (identity_digest): equal now, nothing changed.
    identities: str = ""
    # Digest of the log dirs' listings it was made from (listing_digest), for a build that
    # trusts finished logs: equal now, and no unfinished log changed, nothing changed.
    listing: str = ""
    # Each log dir's (device, inode, modification time) when that listing was made, if they
    # were settled then (identity.dir_stamps): the same now, the dirs need not be listed.
    stamps: list[list[int]] | None = None


class Identities(NamedTuple):
    """Every log the state holds: keys in order, sizes and times as comma-separated text."""

    keys: list[str]
    sizes: str
    times: str


class Known(NamedTuple):
    """One log as last built, from the state's columns alone (no blob decoded)."""

    # A tuple straight from the row: at 100,000 logs building objects field by field
    # cost most of a no-op build.
    key: str
    size: int
    mtime_ns: int
    sha256: str
    note_sha256: str
    context_sha256: str
    published: int
    classification: str
    job_id: str | None
    job_name: str | None
    start_time: int
    end_time: int
    completed_at: int
    roots_text: str
    files: int
    bytes: int
    raw_bytes: int

    @property
    def roots(self) -> list[str]:
        """Return the job directories this log published (or would publish)."""
        return self.roots_text.split("\n") if self.roots_text else []
