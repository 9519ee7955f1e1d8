"""Every threshold the job findings use, in one place, each with the reason for its value.

Ratios are graded with Dr. Elephant's bands (powers of ten to the 1/8, 1/4, 1/2 and 1):
a ratio under ``MODERATE`` is never reported, whatever the kind, because at that size a
difference is noise in a busy cluster (and tasks within ±15% of each other, 1.35x at
most, must stay silent). The absolute floors keep a tiny job's tiny differences quiet:
twice 20 ms is a ratio of 2 and costs nobody anything.
"""

from __future__ import annotations

from sitegen.finding import FindingSeverity

# Dr. Elephant's severity bands for "how many times the expected value".
LOW = 1.33  # 10 ** (1/8): noticeable, never reported on its own
MODERATE = 1.78  # 10 ** (1/4): reported as info
SEVERE = 3.16  # 10 ** (1/2): reported as a warning
CRITICAL = 10.0  # 10 ** 1: an order of magnitude, critical

# A stage needs this many successful task attempts before its median means anything:
# with three tasks, "the median" is one of the two others.
STAGE_MIN_TASKS = 4

# A straggler (or a skewed task) must run at least this much longer than its stage's
# median: a task less than a second slower than its peers cannot keep a job waiting
# long enough to be worth a person's attention.
STRAGGLER_MIN_EXCESS_MS = 1_000
# ... and lie beyond Tukey's "far out" fence, p75 + 3 x (p75 - p25): in a stage whose
# durations already spread widely (a heavy tail), only the truly separate ones count.
FAR_OUT_IQR = 3.0
# At most this many straggler findings per stage, the slowest first: a stage with more
# slow tasks than that has a wider problem, which the worst few already show.
STRAGGLERS_PER_STAGE = 3

# A slow task whose input rows are at least this many times the stage's median input
# is skewed data (data-skew), not a slow task (straggler)...
SKEW_ROWS_RATIO = MODERATE
# ... when its time follows its rows: its time ratio is at most this many times its rows
# ratio (joins and sorts grow faster than their input, but not by an order of magnitude).
SKEW_TIME_SLACK = MODERATE

# Failed attempts in a job that succeeded are a warning when at least this share of a
# stage's attempts failed (a flaky node or input), else info (a retry now and then).
FAILED_SHARE_WARNING = 0.1

# A slow executor needs this many successful attempts in stages it shares with other
# executors: one or two tasks are a straggler's evidence, not a node's.
EXECUTOR_MIN_TASKS = 3
# ... and its median task must be at least this much slower than its peers' in every
# such stage (the same reasoning as STRAGGLER_MIN_EXCESS_MS).
EXECUTOR_MIN_EXCESS_MS = 500
# When at least this many slow tasks of a stage all ran on one executor, that is one
# slow-executor finding, not that many stragglers.
SAME_EXECUTOR_MIN_TASKS = 2

# A job's wait in the queue counts when it lasted at least this long (and the time from
# queued to completed is at least MODERATE times its run).
QUEUED_MIN_MS = 5_000

# Idle stretches shorter than this are scheduling between stages, not idling.
IDLE_MIN_GAP_MS = 1_000

# Error texts are quoted in messages up to this many characters (they can be pages long).
ERROR_CHARS = 160
# A failed-attempts message quotes at most this many distinct errors.
ERRORS_QUOTED = 3


def severity(ratio: float) -> FindingSeverity | None:
    """Grade a ratio with the bands: None below MODERATE (not reported)."""
    if ratio >= CRITICAL:
        return FindingSeverity.CRITICAL
    if ratio >= SEVERE:
        return FindingSeverity.WARNING
    if ratio >= MODERATE:
        return FindingSeverity.INFO
    return None
