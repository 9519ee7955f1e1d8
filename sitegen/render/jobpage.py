"""Everything one job's pages show, computed in the map step from its log."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markupsafe import Markup

from sitegen.diagnose.analysis import JobAnalysis
from sitegen.diagnose.counting import shared
from sitegen.diagnose.diagnosis import Diagnosis
from sitegen.diagnose.failed_attempts import root_cause_sentence
from sitegen.diagnose.recurring import RunContext
from sitegen.diagnose.replanned import DROPPED, DROPPED_NOTE
from sitegen.diagnose.statuses import NO_CHANGE, EndedStatuses, Shown
from sitegen.diagnose.tasks import executor_index
from sitegen.eventlog import dotgraph, payload
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import FindingKind
from sitegen.model import JobSummary, is_failed
from sitegen.render import urls
from sitegen.render.api import job_endpoints
from sitegen.render.cells import status_badge
from sitegen.render.finding_links import Places, ShownFinding, shown, task_anchor
from sitegen.render.fragments import Fragment
from sitegen.render.links import Linker
from sitegen.render.runs import StageChange, compare
from sitegen.svg import dag, histogram, timeline
from sitegen.text.formatting import (
    DURATIONS,
    MILLIS,
    NONE,
    SECONDS,
    Memo,
)
from sitegen.text.htmlsafe import esc

# A timeline of 800,000 bars is a 90 MB picture no browser shows: beyond this many task
# attempts, the job page draws the failed ones, then the longest (as Spark caps its own).
TIMELINE_BARS = 2000
# A stage page lists at most this many failed attempts (a bad UDF fails every task).
FAILURES_SHOWN = 1000

_EMPTY_CELL = f"<td>{NONE}</td>"
# A task table's duration cells, by duration: they repeat within and across jobs.
_TOOK_CELLS = Memo(lambda took: f'<td data-v="{took}">{DURATIONS[took]}</td>')


@dataclass
class StageInfo:
    """One stage as the job and stage pages show it, with every task status read once."""

    stage: payload.Stage
    segment: str
    colour: int
    graph: dotgraph.StageGraph | None
    task_ends: list[TaskEnd] = field(default_factory=list)
    # What the job's end makes of the payload's Running words (diagnose.statuses).
    statuses: EndedStatuses = NO_CHANGE
    # A stage a replan dropped (diagnose.replanned): its rows are its TaskEnd records.
    dropped: bool = False

    # The stage's status as pages show it, with the note when it is not the payload's word.
    shown: Shown = field(init=False)
    # One status per entry of ``stage.task_list``, in order, as pages show it.
    states: list[payload.TaskStatus] = field(init=False)
    # Tasks the payload lists as Running in a job that ended: cut short (see diagnose.statuses).
    cut_short: int = field(init=False)
    # Failed TaskEnd attempts with their status (usually a handful).
    failed_ends: list[tuple[TaskEnd, payload.TaskStatus]] = field(init=False)
    failed_tasks: int = field(init=False)

    def __post_init__(self) -> None:
        """Read the statuses once; count failed attempts (TaskEnd records, else the summary)."""
        ended = self.statuses
        if self.dropped:
            self.shown = Shown(DROPPED, DROPPED_NOTE)
        else:
            self.shown = ended.stage(self.stage.stage_id, self.stage.stage_status)
        self.states = payload.task_statuses([t.status for t in self.stage.task_list])
        self.cut_short = 0
        if ended.task is not None:
            shown = [ended.task_state(state) for state in self.states]
            self.cut_short = sum(1 for a, b in zip(shown, self.states, strict=True) if a is not b)
            self.states = shown
        failed = []
        for end in self.task_ends:
            if end.status != "Successful":
                status = payload.task_status(end.status)
                if status.failed:
                    failed.append((end, status))
        self.failed_ends = failed
        self.failed_tasks = len(failed) or sum(1 for s in self.states if s.failed)


@dataclass(frozen=True)
class ApiLink:
    """One JSON/text endpoint of the job: its REST path and the file that holds it."""

    rest_path: str
    template: str
    segments: tuple[tuple[str, str], ...]
    content_type: str

    @property
    def href(self) -> str:
        """Return that file's path from the site root, percent-encoded (prefix it with root)."""
        return urls.api_href(self.template, **dict(self.segments))


def api_links(job_id: str, job_dot: str) -> list[ApiLink]:
    """List every ``/api`` endpoint the build wrote for this job (as ``api.job_files`` does)."""
    return [
        ApiLink(
            "/api/" + endpoint.template.format(**segments),
            endpoint.template,
            tuple(segments.items()),
            endpoint.body.value.split(";")[0],
        )
        for endpoint, segments, _ in job_endpoints(job_id, job_dot)
    ]


class TaskTable:
    """A stage's task table, rendered one page of rows at a time.

    A stage may have 800,000 tasks: its table is split into pages of
    ``urls.TASKS_PER_PAGE`` rows, so no page (nor the build's memory) holds them all.
    """

    def __init__(self, stage: StageInfo, flags: dict[int, FindingKind] | None = None) -> None:
        self.stage = stage
        # Rows (positions in the stage's task list) that a finding is about.
        self.flags = flags or {}
        # Read once per stage, not once per page.
        self._executors = executor_index(stage.task_ends, esc)
        self.pages = max(1, math.ceil(len(stage.stage.task_list) / urls.TASKS_PER_PAGE))

    def page(self, number: int) -> TasksPage:
        """Describe page ``number`` (1-based) of the table."""
        first = (number - 1) * urls.TASKS_PER_PAGE
        total = len(self.stage.stage.task_list)
        return TasksPage(number, self.pages, first, min(first + urls.TASKS_PER_PAGE, total), total)

    def rows(self, number: int = 1) -> Fragment:
        """Return the ``<tr>`` rows of page ``number``, built as one string (fast).

        Cells carry no classes: the stylesheet right-aligns the numeric columns of
        ``table.tasks`` by position, which keeps 800-task pages small. Row counts are exact
        (``12,345``: skew between tasks shows in the last digits), so they need no title.
        The executor is the one of the TaskEnd with the same task id and times, else the
        same times, else the only TaskEnd of that task id.
        """
        page = self.page(number)
        exact, by_time, by_id = self._executors
        badges: dict[str, str] = {}
        # The clock format (UTC time of day, ``00:05:12.345Z``): the one place it is made,
        # from the formatting module's memos, inlined (three per row).
        sec, milli = SECONDS, MILLIS
        out = []
        tasks = self.stage.stage.task_list[page.first : page.last]
        states = self.stage.states[page.first : page.last]
        flags = self.flags
        anchored: set[int] = set()  # a task id listed twice anchors its first row only
        for position, (task, state) in enumerate(zip(tasks, states, strict=True), page.first):
            tid = task.id
            launch, start, stop = task.launch_time, task.start_exec_time, task.end_exec_time
            executor = exact.get((tid, start, stop))
            if executor is None:
                executor = by_time.get((start, stop))
                if executor is None:
                    executor = by_id.get(tid)
                    if executor is None:
                        executor = NONE
            word = state.word
            badge = badges.get(word)
            if badge is None:
                badge = badges[word] = status_badge(word)
            took = payload.task_duration(task)
            took_cell = _EMPTY_CELL if took is None else _TOOK_CELLS[took]
            # The partition display: the one place it is made. Digits and commas only:
            # nothing to escape; an empty list shows as no partition at all.
            parts = task.partition_id
            if parts.__class__ is list:
                shown = str(parts[0]) if len(parts) == 1 else ", ".join(map(str, parts)) or NONE
            else:
                shown = NONE if parts is None else str(parts)
            n_in, n_out = task.input_rows, task.output_rows
            launched = sec[launch // 1000] + milli[launch % 1000] if launch and launch > 0 else NONE
            started = sec[start // 1000] + milli[start % 1000] if start and start > 0 else NONE
            ended = sec[stop // 1000] + milli[stop % 1000] if stop and stop > 0 else NONE
            row = "<tr"
            if tid is not None and tid not in anchored:
                anchored.add(tid)
                row = f"<tr id={task_anchor(tid)}"  # unquoted, as HTML allows: 800,000 rows
            kind = flags.get(position) if flags else None
            if kind is not None:
                # Words, not only a colour: the marker says which finding flagged the row.
                row += " class=flagged"
                badge += f' <span class="badge flag">&#9873; {kind}</span>'
            elif word == "Failed":
                row += " class=failed"
            out.append(
                f"{row}>"
                f"<td>{NONE if tid is None else tid}</td><td>{badge}</td><td>{shown}</td>"
                f"<td>{executor}</td><td>{launched}</td><td>{started}</td><td>{ended}</td>"
                f"{took_cell}<td>{NONE if n_in is None else f'{n_in:,}'}</td>"
                f"<td>{NONE if n_out is None else f'{n_out:,}'}</td></tr>"
            )
        return Fragment("\n".join(out))


@dataclass(frozen=True)
class TasksPage:
    """Which rows one page of a stage's task table shows: ``first`` to ``last`` (exclusive)."""

    number: int
    count: int
    first: int
    last: int
    total: int


@dataclass(frozen=True)
class Failure:
    """One failed task attempt with its reason and error text."""

    task_id: int | None
    executor: str
    start: int | None
    reason: str
    error: str


def failures(stage: StageInfo) -> list[Failure]:
    """List failed attempts: every failed TaskEnd, plus failed summaries without one."""
    found = [
        Failure(t.task_id, t.executor_id, t.start_exec_time, status.reason, status.error)
        for t, status in stage.failed_ends
    ]
    seen = {(t.start_exec_time, t.end_exec_time) for t, _ in stage.failed_ends}
    for s, state in zip(stage.stage.task_list, stage.states, strict=True):
        if state.failed and (s.start_exec_time, s.end_exec_time) not in seen:
            found.append(Failure(s.id, "", s.start_exec_time, state.reason, state.error))
    return found


def build_stages(analysis: JobAnalysis) -> list[StageInfo]:
    """Join the stages payload, the DOT clusters and the TaskEnd records per stage."""
    by_cluster = {g.stage_id: g for g in analysis.graph.stages}
    # The payload's stages come first: a dropped stage takes a name none of theirs has.
    segments = urls.stage_segments([s.stage_id for s, _ in analysis.stages])
    found = []
    for n, ((stage, ends), segment) in enumerate(zip(analysis.stages, segments, strict=True)):
        dropped = bool(analysis.dropped) and payload.as_int(stage.stage_id) in analysis.dropped
        found.append(
            StageInfo(
                stage=stage,
                segment=segment,
                colour=n,
                # The DOT is the final plan's: a cluster of that id is another stage.
                graph=None if dropped else by_cluster.get(stage.stage_id),
                task_ends=ends,
                statuses=analysis.statuses,
                dropped=dropped,
            )
        )
    return found


def dag_words(graph: dotgraph.JobGraph, statuses: EndedStatuses) -> dict[str, tuple[str, str]]:
    """Return the DAG's stages whose DOT word the job's end reads otherwise: (word, note)."""
    found = {}
    for stage in graph.stages:
        shown = statuses.stage(stage.stage_id, stage.status)
        if shown.note:
            found[stage.stage_id] = (shown.word, shown.note)
    return found


def colour_map(infos: list[StageInfo], tasks: list[TaskEnd]) -> dict[int, int]:
    """Give each stage id a colour slot: the payload's stages in stage order, then any others."""
    colours: dict[int, int] = {}
    for info in infos:
        sid = payload.as_int(info.stage.stage_id)
        if sid is not None and sid not in colours:
            colours[sid] = len(colours)
    for sid in sorted({t.stage_id for t in tasks}):
        colours.setdefault(sid, len(colours))
    return colours


@dataclass
class JobPage:
    """What the job page template receives."""

    summary: JobSummary
    stages: list[StageInfo]
    dag_svg: Markup
    # Spliced into the page as bytes: it is most of the page.
    timeline_svg: Fragment
    legend: list[tuple[str, int]]
    plans: list[tuple[str, str]]
    config: dict[str, str]
    api: list[ApiLink]
    note: Markup | None
    executors: int
    # Task attempts drawn on the timeline, of how many (see TIMELINE_BARS).
    timeline_bars: int
    timeline_total: int
    diagnosis: Diagnosis
    findings: list[ShownFinding]
    places: Places
    # The failed job's first failed attempt, and the link to its stage's failures.
    root_cause: str | None
    root_cause_href: str | None
    critical_path: str | None
    # The ids of the stages a replan dropped, in order (not on the critical path).
    dropped: list[int] = field(default_factory=list)
    # The other runs of its name (None: the only run), and this run against the baseline.
    context: RunContext | None = None
    comparison: list[StageChange] = field(default_factory=list)
    # Whether this run and the baseline count rows alike (Ballista #2435 changed it).
    rows_comparable: bool = True


def timeline_tasks(tasks: list[TaskEnd]) -> list[TaskEnd]:
    """Return the attempts the timeline draws: all, or the failed and then the longest ones."""
    if len(tasks) <= TIMELINE_BARS:
        return tasks
    return heapq.nsmallest(
        TIMELINE_BARS,
        tasks,
        key=lambda t: (not is_failed(t.status), t.start_exec_time - t.end_exec_time),
    )


def job_page(
    read: LogRead,
    analysis: JobAnalysis,
    page: PurePosixPath,
    note: Markup | None,
    context: RunContext | None = None,
) -> JobPage:
    """Compute the job page's content from the job's analysis (which it leaves as it is)."""
    assert read.job_end is not None
    end = read.job_end
    summary = analysis.summary
    graph = analysis.graph
    infos = build_stages(analysis)
    link = Linker(page)
    stage_links: dict[str, str] = {}
    for info in infos:  # a repeated stage id links to its first stage page
        stage_links.setdefault(info.stage.stage_id, link.stage(summary.job_id, info.segment))
    colours = colour_map(infos, read.tasks)
    found = analysis.diagnosis
    path = found.critical_path
    dag_svg = (
        dag.stage_dag(
            graph,
            stage_links,
            f"Stage DAG of job {summary.job_id}",
            critical=path.stages if path else (),
            shown=dag_words(graph, analysis.statuses),
        )
        if graph.stages
        else ""
    )
    drawn = timeline_tasks(read.tasks)
    timeline_svg = timeline.timeline(
        drawn,
        lambda sid: colours.get(sid, 0),
        urls.lane_anchor,
        f"Task timeline of job {summary.job_id}",
        # Some attempts left out: the axis still spans the whole job.
        window=timeline.extent(read.tasks) if drawn is not read.tasks else None,
        marked=found.straggler_attempts,
        dropped=analysis.dropped,
    )
    segments: dict[int, str] = {}
    for info in infos:
        sid = payload.as_int(info.stage.stage_id)
        if sid is not None:
            segments.setdefault(sid, info.segment)
    places = Places(summary.job_id, segments, found.task_rows)
    cause = found.root_cause
    cause_segment = segments.get(cause.stage_id) if cause and cause.stage_id is not None else None
    run_ms = end.completed_at - end.started_at
    for info in infos:
        sid = payload.as_int(info.stage.stage_id)
        info.colour = colours.get(sid, info.colour) if sid is not None else info.colour
    legend = [
        (f"{sid} ({DROPPED})" if sid in analysis.dropped else str(sid), c % timeline.COLOURS)
        for sid, c in sorted(colours.items())
    ]
    plans = payload.plans(end.job)
    start = read.job_start
    plan_list = [
        ("Logical plan", plans.logical or (start.logical_plan if start else None)),
        ("Physical plan", plans.physical or (start.physical_plan if start else None)),
        ("Stage plans", plans.stage),
    ]
    return JobPage(
        summary=summary,
        stages=infos,
        dag_svg=Markup(dag_svg),
        timeline_svg=Fragment(timeline_svg),
        legend=legend,
        plans=[(title, text) for title, text in plan_list if text],
        config=read.config,
        api=api_links(summary.job_id, end.dot),
        note=note,
        executors=len(summary.executors),
        timeline_bars=len(drawn),
        timeline_total=len(read.tasks),
        context=context,
        comparison=compare(summary.stages, context.baseline_stages) if context else [],
        rows_comparable=context is None or shared(summary.counting, context.baseline_counting),
        diagnosis=found,
        findings=shown(found.findings, places, link),
        places=places,
        root_cause=root_cause_sentence(cause) if cause else None,
        root_cause_href=(
            link.stage(summary.job_id, cause_segment) + "#failed" if cause_segment else None
        ),
        critical_path=path.sentence(run_ms) if path and run_ms > 0 else None,
        dropped=sorted(analysis.dropped),
    )


def stage_pictures(info: StageInfo, job_id: str) -> tuple[Markup, Markup]:
    """Return a stage's operator graph and duration histogram."""
    graph = ""
    if info.graph is not None and info.graph.operators:
        graph = dag.operator_graph(info.graph, f"Operators of stage {info.stage.stage_id}")
    durations = []
    for t in info.stage.task_list:
        took = payload.task_duration(t)
        if took is not None and took >= 0:
            durations.append(took)
    if not durations:
        durations = [max(0, t.end_exec_time - t.start_exec_time) for t in info.task_ends]
    hist = histogram.histogram(
        durations, f"Task durations of stage {info.stage.stage_id} of job {job_id}"
    )
    return Markup(graph), Markup(hist)
