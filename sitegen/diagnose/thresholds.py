"""Every threshold the job findings use, in one place, each with the reason for its value.

Ratios are graded with Dr. Elephant's bands (powers of ten to the 1/8, 1/4, 1/2 and 1):
a ratio under ``MODERATE`` is never reported, whatever the kind, because at that size a
difference is noise in a busy cluster (and tasks within ±15% of each other, 1.35x at
most, must stay silent). The absolute floors keep a tiny job's tiny differences quiet:
twice 20 ms is a ratio of 2 and costs nobody anything.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

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
# ... and lie far out on the log scale, where task times' noise is symmetric (they are
# roughly log-normal): its z, (ln d - centre) / sigma, at least far_out_z(n, m, k) for a
# stage of n successful attempts whose sigma has m degrees of freedom, in a job of k judged
# stages. That alone makes it a straggler; what it cost the job (see weighed) then grades
# it. A fence on raw durations (Tukey's, p75 + 3 IQR) sits near 3.5x the median for
# log-normal times of sigma 0.5, which a 200-task stage crosses by chance.
# The centre and sigma are the mean and standard deviation of the stage's log durations but
# its slowest (and any other beyond OUTLIER_Z robust sigmas of the median), corrected by
# trimmed_sigma, pooled over the job's stages, and each stage's own shrunk toward the pooled
# one as if the job had lent SHRINK_TASKS degrees of freedom (seven tasks say little about a
# spread: their MAD alone was often twice the true sigma or half of it), never under
# SIGMA_FLOOR (10%: the noise of a quiet cluster). Calibrated by benchmarks/stragglers.py.
SHRINK_TASKS = 20
# Tasks beyond this many robust sigmas (the MAD's) of their stage's median are left out of
# the spread a straggler is measured against, as the slowest is: two slow tasks must not
# hide each other.
OUTLIER_Z = 4.0
# The slow-executor rule shrinks its stages' robust sigmas (the MAD's) toward the median of
# the job's as if the job had lent this many tasks.
MAD_SHRINK_TASKS = 10
SIGMA_FLOOR = 0.1
# At most this many straggler findings per stage, the slowest first: a stage with more
# slow tasks than that has a wider problem, which the worst few already show.
STRAGGLERS_PER_STAGE = 3
# far_out_z(n, m, k) is where the slowest of n healthy log-normal tasks lies in FAR_OUT_ALPHA
# of jobs (the normal quantile of the maximum of n at FAR_OUT_ALPHA / k: the job's k judged
# stages share it), widened by FAR_OUT_FEW_TASKS / m for a sigma of m degrees of freedom,
# and never under FAR_OUT_Z, the usual robust z fence. Measured on seeded healthy jobs of
# 2-5 stages (sigma 0.2-0.6, 4-200 tasks a stage): 0.4-1.2% get a straggler warning.
FAR_OUT_Z = 3.0
FAR_OUT_ALPHA = 0.01
FAR_OUT_FEW_TASKS = 3.0
# Data skew (SKEW_ROWS_RATIO) is judged alike on the task's input rows against the stage's
# spread of input rows: its rows are what make it a finding, its time follows them.
# Rows are judged on the stage's robust sigma of log input rows alone (the MAD's): the
# slowest of n rows lies in 2% of stages, widened by 8 / n (the rule of issue 37).
ROWS_FAR_OUT_ALPHA = 0.02
ROWS_FAR_OUT_FEW_TASKS = 8.0

# A slow task whose input rows are at least this many times the stage's median input
# is skewed data (data-skew), not a slow task (straggler)...
SKEW_ROWS_RATIO = MODERATE
# Its rows are a second, independent sign: its time need only be beyond chance (SKEW_Z
# sigmas more than the slowest of that many healthy tasks).
SKEW_Z = 0.0
# ... when its time follows its rows: its time ratio is at most this many times its rows
# ratio (joins and sorts grow faster than their input, but not by an order of magnitude).
# In a noisy stage a task's time strays from its rows as much as any task's: the slack is
# at least SKEW_SLACK_SIGMAS of the stage's sigmas (e^(2.5 x 0.6) = 4.5x at sigma 0.6).
SKEW_TIME_SLACK = MODERATE
SKEW_SLACK_SIGMAS = 2.5

# A slow executor is judged per task: each of its successful attempts against the median of
# the other executors' attempts of the same stage, on the log scale. It is slow when its
# median attempt is at least MODERATE times theirs and the evidence is far out: its median
# log ratio is at least EXECUTOR_Z standard errors (the stages' robust sigmas over the root
# of its attempts) above zero. An executor that ran more tasks at normal speed has a median
# ratio near 1, however many slow tasks landed on it. The evidence of many tasks is strong,
# so a node only LOW times slower (info) is reported: it costs every wave it runs.
EXECUTOR_Z = 4.5
EXECUTOR_MIN_RATIO = LOW
# It needs this many successful attempts in stages shared with other executors: one or two
# tasks are a straggler's evidence, not a node's (the median of two is their mean).
EXECUTOR_MIN_TASKS = 3
# ... and its median task must be at least this much slower than its peers' (the same
# reasoning as STRAGGLER_MIN_EXCESS_MS).
EXECUTOR_MIN_EXCESS_MS = 500

# The fleet verdict (diagnose/fleet.py) pools each executor's evidence across jobs. Per job
# it keeps the sum of its attempts' standardised log ratios, each clipped at FLEET_CLIP_Z
# (a straggler on a healthy node must not weigh as ten slow attempts), and a stage weighs
# at most FLEET_STAGE_ATTEMPTS attempts: all of a stage's attempts are measured against one
# peers' median, whose own noise no number of attempts averages away.
FLEET_CLIP_Z = 3.0
FLEET_STAGE_ATTEMPTS = 8
# Its slow stretch is the run of hours whose ratios, less FLEET_DRIFT sigmas an attempt,
# add up most (a 1.5x node at sigma 0.6 is 0.68 sigmas an attempt out): a healthy node's
# stretches are short. The stretch makes it slow when, pooled, its mean standardised log
# ratio is at least FLEET_Z standard errors above zero (above EXECUTOR_Z: the best of many
# stretches is searched), its attempts ran at least FLEET_MIN_RATIO times their peers'
# (between LOW and 1: the evidence of many jobs is strong, and a 1.5x node costs every job),
# over at least FLEET_MIN_JOBS jobs and FLEET_MIN_ATTEMPTS attempts (fewer: a job's finding).
FLEET_DRIFT = 0.3
FLEET_Z = 5.5
FLEET_MIN_RATIO = 1.25
FLEET_MIN_JOBS = 3
FLEET_MIN_ATTEMPTS = 12
# Failing: its own failed attempts (in stages where no other executor failed) are more than
# FLEET_FAILED_SHARE of its attempts over a stretch of hours holding at least
# FLEET_MIN_FAILING_JOBS jobs with such failures and FLEET_MIN_FAILED of them.
FLEET_FAILED_SHARE = 0.05
FLEET_MIN_FAILING_JOBS = 3
FLEET_MIN_FAILED = 5
# The picture over time has a column an hour for a history of at most this span, else a day.
FLEET_HOURS_SPAN_MS = 4 * 86_400_000

# A job's wait in the queue counts when it lasted at least this long and was at least
# QUEUED_MIN_SHARE of the time from submission to end (under MODERATE times the run, info).
QUEUED_MIN_MS = 1_000
QUEUED_MIN_SHARE = 0.1

# Idle stretches shorter than this are scheduling between stages, not idling...
IDLE_MIN_GAP_MS = 1_000
# ... and the longer ones count when together they are at least this share of the run.
IDLE_MIN_SHARE = 0.1

# An attempt recorded as starting further than this outside the job's run (started to
# completed, the scheduler's clock) is not replayed: the executors' clocks disagree with
# the scheduler's by milliseconds, so such a time is a damaged record. Replayed, one
# attempt stamped near 2**63 stretched the run every cost is weighed against to millennia.
CLOCK_SKEW_MS = 1_000

# What a finding cost (its impact_ms: how much earlier the job would have ended without it,
# from a replay of its tasks) weighs in its severity: one that cost under this share of the
# job's run time and under IMPACT_MATTERS_MS is info at most, whatever its ratio...
IMPACT_MATTERS_SHARE = 0.05
IMPACT_MATTERS_MS = 1_000
# ... one that cost at least this share of it (and IMPACT_MATTERS_MS) is a warning at least,
# whatever its ratio (a queue that added a quarter to the job's time matters)...
IMPACT_WARNING_SHARE = 0.2
# ... and one that cost under this share of the run is a warning at most.
IMPACT_CRITICAL_SHARE = 0.25

# Error texts are quoted in messages up to this many characters (they can be pages long).
ERROR_CHARS = 160
# A failed-attempts message quotes at most this many distinct errors.
ERRORS_QUOTED = 3


def weighed(grade: FindingSeverity, impact_ms: int | None, run_ms: int) -> FindingSeverity:
    """Cap a ratio's grade by what the finding cost the job (unchanged when it has no cost)."""
    if impact_ms is None:
        return grade
    if impact_ms < IMPACT_MATTERS_SHARE * run_ms and impact_ms < IMPACT_MATTERS_MS:
        return FindingSeverity.INFO
    if grade is FindingSeverity.CRITICAL and impact_ms < IMPACT_CRITICAL_SHARE * run_ms:
        return FindingSeverity.WARNING
    if impact_ms >= max(IMPACT_WARNING_SHARE * run_ms, IMPACT_MATTERS_MS):
        return max(grade, FindingSeverity.WARNING, key=lambda s: s.rank)
    return grade


# The standard deviation of the fastest n - 1 of n normal draws (the slowest left out) is
# short of their sigma: by these factors for n = 4 to 30, measured on a million seeded
# samples of each n (`python benchmarks/stragglers.py --trim-table` measures them again, on
# fewer); beyond 30, 1 + 0.65 ln(n) / n is within 1.5% of the measure.
TRIMMED_SIGMA = (
    1.258, 1.224, 1.201, 1.183, 1.167, 1.156, 1.146, 1.136, 1.129, 1.122, 1.116, 1.112, 1.107,
    1.103, 1.099, 1.095, 1.092, 1.089, 1.086, 1.084, 1.082, 1.079, 1.077, 1.075, 1.073, 1.071,
    1.07,
)  # fmt: skip


def trimmed_sigma(tasks: int) -> float:
    """Return the factor that makes the fastest ``tasks`` - 1 draws' deviation a sigma."""
    if tasks < 4:
        return 1.0
    if tasks - 4 < len(TRIMMED_SIGMA):
        return TRIMMED_SIGMA[tasks - 4]
    return 1 + 0.65 * math.log(tasks) / tasks


@functools.cache
def far_out_z(tasks: int, support: int | None = None, stages: int = 1) -> float:
    """Return the z the slowest of ``tasks`` attempts must reach to be a straggler.

    ``support``: the degrees of freedom of the sigma it is measured against (``tasks`` when
    unknown); ``stages``: how many stages of the job are judged, which share FAR_OUT_ALPHA.
    """
    return _slowest_z(tasks, FAR_OUT_ALPHA / max(stages, 1), FAR_OUT_FEW_TASKS, support)


@functools.cache
def rows_far_out_z(tasks: int) -> float:
    """Return the robust z a stage's largest input of ``tasks`` must reach to be far out."""
    return _slowest_z(tasks, ROWS_FAR_OUT_ALPHA, ROWS_FAR_OUT_FEW_TASKS, None)


def _slowest_z(tasks: int, alpha: float, few: float, support: int | None) -> float:
    """Return where the largest of ``tasks`` normal draws lies in ``alpha`` of samples, widened."""
    tasks = max(tasks, 1)
    slowest = NormalDist().inv_cdf((1 - alpha) ** (1 / tasks))
    return max(FAR_OUT_Z, slowest * (1 + few / max(support or tasks, 1)))


def at_least_info(ratio: float) -> FindingSeverity:
    """Grade a ratio with the bands, info below MODERATE (for kinds judged by other means)."""
    return severity(ratio) or FindingSeverity.INFO


def severity(ratio: float) -> FindingSeverity | None:
    """Grade a ratio with the bands: None below MODERATE (not reported)."""
    if ratio >= CRITICAL:
        return FindingSeverity.CRITICAL
    if ratio >= SEVERE:
        return FindingSeverity.WARNING
    if ratio >= MODERATE:
        return FindingSeverity.INFO
    return None
